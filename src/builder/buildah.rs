//! `buildah`: build every platform into a local manifest list, push the list
//! with all its images, then drop the local list.
//!
//! `buildah build --manifest NAME` adds to NAME when it already exists, so a
//! list left by an earlier run would end up in the pushed index with twice
//! the platforms. The list is therefore removed first (and after a push);
//! those removals may fail when there is nothing to remove.
//!
//! A cache is a registry repository to buildah (`--cache-from R`, used only
//! with `--layers`), so buildx's `type=registry,ref=R` is passed as `R`, a
//! bare value as it is, and any other cache type is refused. Each extra tag
//! is one more push of the same list; only the first records its digest.
//! Pass-through arguments go before the context, which buildah wants last.

use super::{Build, Error, Kind, Step, pair};
use crate::image::Reference;
use crate::net::is_loopback;

/// The steps of a buildah build.
pub(super) fn plan(build: &Build) -> Result<Vec<Step>, Error> {
    let local = local_name(build);
    let mut steps = vec![Step::optional(["buildah", "manifest", "rm", &local])];

    let mut argv: Vec<String> = vec!["buildah".into(), "build".into()];
    argv.extend(["--platform".into(), build.platforms.join(",")]);
    argv.extend(["--manifest".into(), local.clone()]);
    if !build.cache_from.is_empty() || !build.cache_to.is_empty() {
        argv.push("--layers".into());
    }
    for (flag, values) in [
        ("--cache-from", &build.cache_from),
        ("--cache-to", &build.cache_to),
    ] {
        for value in values {
            argv.extend([flag.into(), cache_repository(flag, value)?]);
        }
    }
    for arg in &build.build_args {
        argv.extend(["--build-arg".into(), pair(arg)]);
    }
    for label in &build.labels {
        argv.extend(["--label".into(), pair(label)]);
    }
    if let Some(dockerfile) = &build.dockerfile {
        argv.extend(["--file".into(), dockerfile.clone()]);
    }
    argv.extend(build.extra_args.iter().cloned());
    argv.push(build.context.clone());
    steps.push(Step::new(argv));

    if build.push {
        steps.push(push(&local, &build.reference, Some(build)));
        for tag in &build.extra_tags {
            steps.push(push(&local, tag, None));
        }
        steps.push(Step::optional(["buildah", "manifest", "rm", &local]));
    }
    Ok(steps)
}

/// `buildah manifest push --all` of the local list to `to`; with `digest_of`,
/// writing that build's digest file.
fn push(local: &str, to: &Reference, digest_of: Option<&Build>) -> Step {
    let mut argv: Vec<String> = vec!["buildah".into(), "manifest".into(), "push".into()];
    argv.push("--all".into());
    if is_loopback(to.registry()) {
        argv.push("--tls-verify=false".into());
    }
    if let Some(build) = digest_of {
        argv.extend([
            "--digestfile".into(),
            build.digest_file.display().to_string(),
        ]);
    }
    argv.extend([local.to_owned(), format!("docker://{to}")]);
    Step::new(argv)
}

/// The repository buildah caches in for a `--cache-from`/`--cache-to`
/// value: `ref` of `type=registry,ref=…`, or the value when it is no
/// buildx cache spec.
fn cache_repository(flag: &str, value: &str) -> Result<String, Error> {
    if !value.contains('=') {
        return Ok(value.to_owned());
    }
    let mut kind = None;
    let mut reference = None;
    for part in value.split(',') {
        match part.split_once('=') {
            Some(("type", v)) => kind = Some(v),
            Some(("ref", v)) => reference = Some(v),
            _ => {}
        }
    }
    match (kind, reference) {
        (Some("registry") | None, Some(reference)) => Ok(reference.to_owned()),
        _ => Err(Error::Unsupported {
            builder: Kind::Buildah,
            what: format!("use the cache `{flag} {value}`: only a registry repository"),
        }),
    }
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
            extra_tags: Vec::new(),
            cache_from: Vec::new(),
            cache_to: Vec::new(),
            extra_args: Vec::new(),
            push: true,
            provenance: false,
            digest_file: "/cache/digest".into(),
        }
    }

    #[test]
    fn build_then_push_all_then_clean_up() {
        let steps = plan(&build("ghcr.io/org/hello:v1")).unwrap();
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
            let steps = plan(&build(&format!("{registry}/org/hello:v1"))).unwrap();
            assert!(
                steps[2].argv.contains(&"--tls-verify=false".to_owned()),
                "{registry}"
            );
        }
        let mut b = build("ghcr.io/org/hello:v1");
        b.push = false;
        let steps = plan(&b).unwrap();
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[1].argv[1], "build");
    }

    #[test]
    fn caches_are_repositories_and_extra_tags_more_pushes() {
        let mut b = build("127.0.0.1:5000/org/hello:pr-1-abc");
        b.extra_tags = vec![Reference::parse("127.0.0.1:5000/org/hello:latest").unwrap()];
        b.cache_from = vec!["type=registry,ref=127.0.0.1:5000/org/hello-cache".into()];
        b.cache_to = vec!["127.0.0.1:5000/org/hello-cache".into()];
        b.extra_args = vec!["--jobs".into(), "2".into()];
        let lines: Vec<String> = plan(&b).unwrap().iter().map(Step::to_string).collect();
        let local = "localhost/revendor-build/hello:pr-1-abc";
        assert_eq!(
            lines[1],
            format!(
                "buildah build --platform linux/amd64,linux/arm64 --manifest {local} --layers \
                 --cache-from 127.0.0.1:5000/org/hello-cache --cache-to 127.0.0.1:5000/org/hello-cache \
                 --build-arg VERSION=v1.0.0 --label org.revendor.content-hash=sha256:00 \
                 --jobs 2 images/hello"
            )
        );
        assert_eq!(
            lines[3],
            format!(
                "buildah manifest push --all --tls-verify=false {local} \
                 docker://127.0.0.1:5000/org/hello:latest"
            )
        );
        assert_eq!(lines.len(), 5);

        b.cache_to = vec!["type=inline".into()];
        let err = plan(&b).unwrap_err();
        assert_eq!(
            err.to_string(),
            "buildah cannot use the cache `--cache-to type=inline`: only a registry repository"
        );
        assert!(err.hint().unwrap().contains("type=registry,ref="));
    }
}
