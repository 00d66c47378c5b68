//! `buildah`: build every platform into a local manifest list, push the list
//! with all its images, then drop the local list.
//!
//! `buildah build --manifest NAME` adds to NAME when it already exists, so a
//! list left by an earlier run would end up in the pushed index with twice
//! the platforms. The list is therefore removed first (and after a push);
//! those removals may fail when there is nothing to remove.

use super::{Build, Step, pair};
use crate::net::is_loopback;

/// The steps of a buildah build.
pub(super) fn plan(build: &Build) -> Vec<Step> {
    let local = local_name(build);
    let mut steps = vec![Step::optional(["buildah", "manifest", "rm", &local])];

    let mut argv: Vec<String> = vec!["buildah".into(), "build".into()];
    argv.extend(["--platform".into(), build.platforms.join(",")]);
    argv.extend(["--manifest".into(), local.clone()]);
    for arg in &build.build_args {
        argv.extend(["--build-arg".into(), pair(arg)]);
    }
    for label in &build.labels {
        argv.extend(["--label".into(), pair(label)]);
    }
    if let Some(dockerfile) = &build.dockerfile {
        argv.extend(["--file".into(), dockerfile.clone()]);
    }
    argv.push(build.context.clone());
    steps.push(Step::new(argv));

    if build.push {
        let mut argv: Vec<String> = vec!["buildah".into(), "manifest".into(), "push".into()];
        argv.push("--all".into());
        if is_loopback(build.reference.registry()) {
            argv.push("--tls-verify=false".into());
        }
        argv.extend([
            "--digestfile".into(),
            build.digest_file.display().to_string(),
            local.clone(),
            format!("docker://{}", build.reference),
        ]);
        steps.push(Step::new(argv));
        steps.push(Step::optional(["buildah", "manifest", "rm", &local]));
    }
    steps
}

/// The local manifest list: `localhost/revendor-build/<image name>:<tag>`.
fn local_name(build: &Build) -> String {
    let repository = build.reference.repository();
    let name = repository.rsplit('/').next().unwrap_or(repository);
    let tag = build.reference.tag().unwrap_or("latest");
    format!("localhost/revendor-build/{name}:{tag}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::Reference;

    fn build(reference: &str) -> Build {
        Build {
            context: "images/hello".into(),
            dockerfile: None,
            platforms: vec!["linux/amd64".into(), "linux/arm64".into()],
            build_args: vec![("VERSION".into(), "v1.0.0".into())],
            labels: vec![("org.revendor.content-hash".into(), "sha256:00".into())],
            reference: Reference::parse(reference).unwrap(),
            push: true,
            provenance: false,
            digest_file: "/cache/digest".into(),
        }
    }

    #[test]
    fn build_then_push_all_then_clean_up() {
        let steps = plan(&build("ghcr.io/org/hello:v1"));
        let lines: Vec<(String, bool)> =
            steps.iter().map(|s| (s.to_string(), s.may_fail)).collect();
        assert_eq!(
            lines,
            [
                (
                    "buildah manifest rm localhost/revendor-build/hello:v1".to_owned(),
                    true
                ),
                (
                    "buildah build --platform linux/amd64,linux/arm64 \
                     --manifest localhost/revendor-build/hello:v1 --build-arg VERSION=v1.0.0 \
                     --label org.revendor.content-hash=sha256:00 images/hello"
                        .to_owned(),
                    false
                ),
                (
                    "buildah manifest push --all --digestfile /cache/digest \
                     localhost/revendor-build/hello:v1 docker://ghcr.io/org/hello:v1"
                        .to_owned(),
                    false
                ),
                (
                    "buildah manifest rm localhost/revendor-build/hello:v1".to_owned(),
                    true
                ),
            ]
        );
    }

    #[test]
    fn loopback_registries_are_pushed_over_plain_http_and_no_push_keeps_the_list() {
        for registry in [
            "127.0.0.1:5000",
            "LOCALHOST:5000",
            "[::1]:5000",
            "127.1.2.3",
        ] {
            let steps = plan(&build(&format!("{registry}/org/hello:v1")));
            assert!(
                steps[2].argv.contains(&"--tls-verify=false".to_owned()),
                "{registry}"
            );
        }
        let mut b = build("ghcr.io/org/hello:v1");
        b.push = false;
        let steps = plan(&b);
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[1].argv[1], "build");
    }
}
