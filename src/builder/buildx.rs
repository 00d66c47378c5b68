//! `docker buildx build`: one command builds every platform, pushes the
//! index and writes its digest to `--metadata-file` (`containerimage.digest`).
//!
//! Provenance attestations are off (`--provenance=false`) unless vendor.toml
//! sets `provenance = true`: they add `unknown/unknown` entries to the index,
//! which the read-back tolerates but nobody asked for.

use super::{Build, Step, pair};

/// The one step of a buildx build.
pub(super) fn plan(build: &Build) -> Vec<Step> {
    let mut argv: Vec<String> = vec!["docker".into(), "buildx".into(), "build".into()];
    argv.push(build.context.clone());
    if let Some(dockerfile) = &build.dockerfile {
        argv.extend(["--file".into(), dockerfile.clone()]);
    }
    argv.extend(["--platform".into(), build.platforms.join(",")]);
    for arg in &build.build_args {
        argv.extend(["--build-arg".into(), pair(arg)]);
    }
    for label in &build.labels {
        argv.extend(["--label".into(), pair(label)]);
    }
    argv.push(format!("--provenance={}", build.provenance));
    argv.extend(["--tag".into(), build.reference.to_string()]);
    if build.push {
        argv.push("--push".into());
    }
    argv.extend([
        "--metadata-file".into(),
        build.digest_file.display().to_string(),
    ]);
    vec![Step::new(argv)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::Reference;

    fn build() -> Build {
        Build {
            context: "images/multus-cni".into(),
            dockerfile: None,
            platforms: vec!["linux/amd64".into(), "linux/arm64".into()],
            build_args: vec![("VERSION".into(), "v4.3.0".into())],
            labels: vec![("org.revendor.content-hash".into(), "sha256:00".into())],
            reference: Reference::parse("ghcr.io/cozystack/cozystack/multus-cni:v1.6.0").unwrap(),
            push: true,
            provenance: false,
            digest_file: "/cache/metadata.json".into(),
        }
    }

    #[test]
    fn the_multus_command_line() {
        let steps = plan(&build());
        assert_eq!(steps.len(), 1);
        assert_eq!(
            steps[0].to_string(),
            "docker buildx build images/multus-cni --platform linux/amd64,linux/arm64 \
             --build-arg VERSION=v4.3.0 --label org.revendor.content-hash=sha256:00 \
             --provenance=false --tag ghcr.io/cozystack/cozystack/multus-cni:v1.6.0 --push \
             --metadata-file /cache/metadata.json"
        );
    }

    #[test]
    fn dockerfile_provenance_and_no_push() {
        let mut b = build();
        b.dockerfile = Some("build/Dockerfile".into());
        b.provenance = true;
        b.push = false;
        let argv = &plan(&b)[0].argv;
        assert_eq!(
            argv[3..6],
            ["images/multus-cni", "--file", "build/Dockerfile"]
        );
        assert!(argv.contains(&"--provenance=true".to_owned()));
        assert!(!argv.contains(&"--push".to_owned()));
    }
}
