//! `docker buildx build`: one command builds every platform, pushes the
//! index and writes its digest to `--metadata-file` (`containerimage.digest`).
//!
//! Extra tags, caches and pass-through arguments follow what vendor.toml
//! decides, the pass-through ones last, so they may add to (or, where buildx
//! takes the last value, override) anything before them.
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
    for tag in &build.extra_tags {
        argv.extend(["--tag".into(), tag.to_string()]);
    }
    for cache in &build.cache_from {
        argv.extend(["--cache-from".into(), cache.clone()]);
    }
    for cache in &build.cache_to {
        argv.extend(["--cache-to".into(), cache.clone()]);
    }
    if build.push {
        argv.push("--push".into());
    }
    argv.extend([
        "--metadata-file".into(),
        build.digest_file.display().to_string(),
    ]);
    argv.extend(build.extra_args.iter().cloned());
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
            extra_tags: Vec::new(),
            cache_from: Vec::new(),
            cache_to: Vec::new(),
            extra_args: Vec::new(),
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
    fn extra_tags_caches_and_pass_through_arguments() {
        let mut b = build();
        b.extra_tags = vec![Reference::parse("r.example/multus-cni:latest").unwrap()];
        b.cache_from = vec!["type=registry,ref=r.example/multus-cni:buildcache".into()];
        b.cache_to = vec!["type=inline".into()];
        b.extra_args = vec!["--build-arg".into(), "GOPROXY=off".into()];
        assert_eq!(
            plan(&b)[0].to_string(),
            "docker buildx build images/multus-cni --platform linux/amd64,linux/arm64 \
             --build-arg VERSION=v4.3.0 --label org.revendor.content-hash=sha256:00 \
             --provenance=false --tag ghcr.io/cozystack/cozystack/multus-cni:v1.6.0 \
             --tag r.example/multus-cni:latest \
             --cache-from type=registry,ref=r.example/multus-cni:buildcache \
             --cache-to type=inline --push --metadata-file /cache/metadata.json \
             --build-arg GOPROXY=off"
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
