//! `revendor image build`, `image pin` and `image pin-base` through the real binary.
//!
//! - the exact buildx command line for the multus package (`--dry-run`), and the checks that stop
//!   a build before it starts;
//! - buildx end to end with a fake `docker` on PATH (no engine runs here) in front of the real
//!   CNCF registry: the test pushes the image the fake claims to have built, revendor reads it
//!   back, verifies it and pins it; then the content-hash skip and a rebuild;
//! - `image pin` against the real registry (anonymous, htpasswd, token auth) and against a fake
//!   one for the faults a real registry will not produce on demand;
//! - `image pin-base` against the real registry standing in for Docker Hub as a mirror.
//!
//! Every failure must exit 3 (2 for a problem in the package) and leave every file as it was.
//! Tests that need `/usr/bin/docker-registry` print a note and pass when it is missing.

#[allow(dead_code)]
use crate::registry_support;
use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use revendor::builder::LABEL;
use revendor::config::lock::Lock;
use revendor::image::{Digest, MediaType, Reference};
use revendor::registry::Credentials;
use serde_json::json;

use registry_support::content::{self, MultiArch, multi_arch};
use registry_support::fake::{self, REPO, Routes};
use registry_support::{Auth, HT_PASSWORD, HT_USER, Registry, have_registry, token};
use support::server::{Response, Server};
use support::{GitHub, Revendor, TempPackage};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/image");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const TEMPLATE: &str = "templates/daemonset.yml";
const LOCK: &str = "upstream/lock.toml";
const PATCH: &str = "images/hello/patches/greeting.diff";
const TAG: &str = "v1.0.0-test";
const BOTH: [&str; 2] = ["linux/amd64", "linux/arm64"];
const UPSTREAM_IMAGE: &str = "ghcr.io/k8snetworkplumbingwg/multus-cni:snapshot-thick";

// ---- packages ----

/// The test package: the fixture image context (with stand-in binaries), the fixture template
/// and a lock at v1.0.0, building `repository` with `builder`.
fn package(repository: &str, builder: &str) -> TempPackage {
    let pkg = TempPackage::new();
    pkg.write(
        "vendor.toml",
        format!(
            r#"[upstream]
git = "file:///nonexistent/upstream"
version = "v1.0.0"

[[patch]]
name = "greeting"
file = "{PATCH}"
applies-to = "source"

[image]
repository = "{repository}"
tag = "{TAG}"
context = "images/hello"
platforms = ["linux/amd64", "linux/arm64"]
builder = "{builder}"

[[pin]]
file = "{TEMPLATE}"
repository = "{repository}"
replaces = ["ghcr.io/k8snetworkplumbingwg/multus-cni"]
"#
        ),
    );
    pkg.write(
        LOCK,
        "[upstream]\nsource = \"git:file:///nonexistent/upstream\"\nversion = \"v1.0.0\"\n",
    );
    pkg.write(TEMPLATE, fixture("daemonset.yml"));
    pkg.write("images/hello/Dockerfile", fixture("Dockerfile"));
    pkg.write(PATCH, fixture("patches/greeting.diff"));
    pkg.write("images/hello/bin/amd64/hello", "stand-in amd64 binary");
    pkg.write("images/hello/bin/arm64/hello", "stand-in arm64 binary");
    pkg
}

fn fixture(rel: &str) -> Vec<u8> {
    std::fs::read(Path::new(FIXTURE).join(rel)).unwrap()
}

/// A copy of the repository's own multus package (vendor.toml, images/, patches/) with a lock
/// at the Dockerfile's version.
fn multus_package() -> TempPackage {
    let pkg = TempPackage::new();
    let root = Path::new(ROOT);
    pkg.write(
        "vendor.toml",
        std::fs::read(root.join("vendor.toml")).unwrap(),
    );
    pkg.copy_from(&root.join("images"), "images");
    pkg.copy_from(&root.join("patches"), "patches");
    pkg.write(
        LOCK,
        "[upstream]\nsource = \"github:k8snetworkplumbingwg/multus-cni\"\nversion = \"v4.3.0\"\n",
    );
    pkg
}

/// The binary pointed at `pkg`, with an empty Docker config of its own.
fn revendor(pkg: &TempPackage) -> Revendor {
    let gh = GitHub::start();
    Revendor::new(pkg.path(), &gh).env("DOCKER_CONFIG", &docker_config_dir(pkg))
}

fn docker_config_dir(pkg: &TempPackage) -> String {
    pkg.join(".docker-config").display().to_string()
}

fn lock(pkg: &TempPackage) -> Lock {
    Lock::parse(Path::new(LOCK), &pkg.read_string(LOCK)).unwrap()
}

fn hash_of(pkg: &TempPackage, context: &str, version: &str) -> Digest {
    revendor::builder::content_hash(
        &pkg.join(context),
        &pkg.join(&format!("{context}/Dockerfile")),
        &[("VERSION".to_owned(), version.to_owned())],
        &BOTH.map(str::to_owned),
        &[],
    )
    .unwrap()
}

/// The fixture template with both container image fields set to `reference`; the annotation
/// and the script keep the upstream image.
fn pinned_template(reference: &str) -> String {
    let text = String::from_utf8(fixture("daemonset.yml")).unwrap();
    let field = |value: &str| format!("\n          image: {value}");
    let pinned = text
        .replace(&field(UPSTREAM_IMAGE), &field(reference))
        .replace(
            &field(&format!("\"{UPSTREAM_IMAGE}\"")),
            &field(&format!("\"{reference}\"")),
        );
    assert_eq!(pinned.matches(reference).count(), 2);
    pinned
}

fn child_digests(image: &MultiArch) -> BTreeMap<String, String> {
    BOTH.iter()
        .map(|p| (p.to_string(), image.child(p).to_string()))
        .collect()
}

// ---- the exact command line and the checks before a build ----

#[test]
fn dry_run_shows_the_exact_buildx_command_for_the_multus_package() {
    let pkg = multus_package();
    let before = pkg.snapshot();
    let rv = revendor(&pkg);
    let run = rv
        .run(&["--offline", "image", "build", "--push", "--dry-run"])
        .expect(0);
    let hash = hash_of(&pkg, "images/multus-cni", "v4.3.0");
    let metadata = format!(
        "{}/image-build/{}/metadata.json",
        rv.cache().display(),
        hash.hex()
    );
    assert_eq!(
        run.stdout,
        format!(
            "docker buildx build images/multus-cni --platform linux/amd64,linux/arm64 \
             --build-arg VERSION=v4.3.0 --label org.revendor.content-hash={hash} \
             --provenance=false --tag ghcr.io/cozystack/cozystack/multus-cni:v1.6.0 --push \
             --metadata-file {metadata}\n"
        )
    );

    let run = rv
        .run(&[
            "--offline",
            "--format",
            "json",
            "image",
            "build",
            "--push",
            "--dry-run",
        ])
        .expect(0);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["outcome"], "planned");
    assert_eq!(report["builder"], "buildx");
    assert_eq!(report["content_hash"], hash.to_string());
    let argv: Vec<&str> = report["steps"][0]["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        argv[..4],
        ["docker", "buildx", "build", "images/multus-cni"]
    );
    assert_eq!(argv.last(), Some(&metadata.as_str()));

    let run = rv
        .run(&[
            "--offline",
            "image",
            "build",
            "--push",
            "--dry-run",
            "--builder",
            "buildah",
        ])
        .expect(0);
    let local = "localhost/revendor-build/multus-cni:v1.6.0";
    assert_eq!(
        run.stdout,
        format!(
            "buildah manifest rm {local} || true\n\
             buildah build --platform linux/amd64,linux/arm64 --manifest {local} \
             --build-arg VERSION=v4.3.0 --label org.revendor.content-hash={hash} images/multus-cni\n\
             buildah manifest push --all --digestfile {}/image-build/{}/digest {local} \
             docker://ghcr.io/cozystack/cozystack/multus-cni:v1.6.0\n\
             buildah manifest rm {local} || true\n",
            rv.cache().display(),
            hash.hex()
        )
    );
    assert_eq!(pkg.snapshot(), before, "a dry run writes nothing");
}

#[test]
fn builds_stop_before_the_builder_runs_when_the_recipe_is_wrong() {
    const DOCKERFILE: &str = "images/multus-cni/Dockerfile";
    type Breakage = fn(&TempPackage);
    let cases: [(&str, Breakage, &[&str]); 5] = [
        (
            "unpinned builder",
            |pkg| {
                let text = pkg.read_string(DOCKERFILE);
                let at = text.find("golang:1.26@").unwrap() + "golang:1.26".len();
                let end = at + "@sha256:".len() + 64;
                pkg.write(DOCKERFILE, format!("{}{}", &text[..at], &text[end..]));
            },
            &[
                "Dockerfile:15: the builder image `golang:1.26` is not pinned",
                "revendor image pin-base",
            ],
        ),
        (
            "another Go minor",
            |pkg| {
                let text = pkg.read_string("vendor.toml");
                pkg.write(
                    "vendor.toml",
                    text.replace("go = \"1.26\"", "go = \"1.27\""),
                );
            },
            &["expected Go 1.27", "revendor image pin-base --go 1.27"],
        ),
        (
            "ARG VERSION behind the lock",
            |pkg| {
                let text = pkg.read_string(LOCK);
                pkg.write(LOCK, text.replace("v4.3.0", "v4.3.1"));
            },
            &[
                "Dockerfile:16: `ARG VERSION=v4.3.0` but the lock says v4.3.1",
                "revendor render",
            ],
        ),
        (
            "source patch outside the context",
            |pkg| {
                let from = "images/multus-cni/patches/fix-del-without-cache.diff";
                pkg.write("patches/fix-del-without-cache.diff", pkg.read(from));
                pkg.remove(from);
                let text = pkg.read_string("vendor.toml");
                pkg.write(
                    "vendor.toml",
                    text.replace(from, "patches/fix-del-without-cache.diff"),
                );
            },
            &["source patch `patches/fix-del-without-cache.diff` is outside the build context"],
        ),
        (
            "source patch reached through the context",
            |pkg| {
                let from = "images/multus-cni/patches/fix-del-without-cache.diff";
                let sneaky = "images/multus-cni/../../patches/fix-del-without-cache.diff";
                pkg.write("patches/fix-del-without-cache.diff", pkg.read(from));
                pkg.remove(from);
                let text = pkg.read_string("vendor.toml");
                pkg.write("vendor.toml", text.replace(from, sneaky));
            },
            &["is outside the build context `images/multus-cni`"],
        ),
    ];
    for (name, breakage, expected) in cases {
        let pkg = multus_package();
        breakage(&pkg);
        let before = pkg.snapshot();
        // No docker here: passing the checks would end in exit 3, not 2.
        let run = revendor(&pkg).run(&["image", "build"]);
        assert_eq!(run.code, 2, "{name}: {}", run.all());
        for e in expected {
            assert!(run.stderr.contains(e), "{name}: `{e}` in {}", run.stderr);
        }
        assert_eq!(pkg.snapshot(), before, "{name}");
    }
}

#[test]
fn a_missing_builder_is_exit_3_with_a_hint() {
    let pkg = multus_package();
    let rv = revendor(&pkg).env("PATH", "/nonexistent");
    let run = rv.run(&["image", "build"]).expect(3);
    assert!(
        run.stderr.starts_with(
            "error: buildx cannot build here: `docker` is not installed (not found on PATH)\n"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("`builder = \"buildah\"`") && run.stderr.contains("--builder buildah"),
        "{}",
        run.stderr
    );
    let run = rv
        .run(&["image", "build", "--builder", "buildah"])
        .expect(3);
    assert!(
        run.stderr
            .starts_with("error: buildah cannot build here: `buildah` is not installed"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("`builder = \"buildx\"`"),
        "{}",
        run.stderr
    );
}

// ---- buildx, with a fake docker in front of the real registry ----

/// A `docker` that answers `docker buildx version` (as a docker without the plugin does when
/// `REVENDOR_TEST_NO_BUILDX` is set), and otherwise records its arguments, then either fails or
/// writes buildx's metadata file claiming `REVENDOR_TEST_DIGEST` was pushed. With `--push` and
/// `REVENDOR_TEST_INDEX` (a file holding an index the registry has by digest) it also tags that
/// index as each `--tag` says, as a real push would.
const FAKE_DOCKER: &str = r#"#!/bin/sh
if [ "$1 $2" = "buildx version" ]; then
  if [ -n "$REVENDOR_TEST_NO_BUILDX" ]; then
    echo "docker: unknown command: docker buildx" >&2
    echo >&2
    echo "Run 'docker --help' for more information" >&2
    exit 1
  fi
  echo "github.com/docker/buildx v0.30.1 fake"
  exit 0
fi
printf '%s\n' "$@" > "$REVENDOR_TEST_ARGV"
if [ -n "$REVENDOR_TEST_INDEX" ] && grep -qx -- --push "$REVENDOR_TEST_ARGV"; then
  grep -A1 -x -- --tag "$REVENDOR_TEST_ARGV" | grep -v -x -- --tag | grep -v -x -- -- | while read -r ref; do
    host=${ref%%/*} rest=${ref#*/}
    curl -sf -X PUT -H "Content-Type: application/vnd.oci.image.index.v1+json" \
      --data-binary "@$REVENDOR_TEST_INDEX" "http://$host/v2/${rest%:*}/manifests/${rest##*:}" >/dev/null || exit 1
  done
fi
if [ -n "$REVENDOR_TEST_FAIL" ]; then
  echo "building..."
  echo "ERROR: $REVENDOR_TEST_FAIL" >&2
  exit 1
fi
while [ $# -gt 0 ]; do
  if [ "$1" = "--metadata-file" ]; then
    shift
    printf '{"buildx.build.ref":"fake/fake0","containerimage.digest":"%s"}' "$REVENDOR_TEST_DIGEST" > "$1"
  fi
  shift
done
"#;

struct FakeBuildx {
    dir: tempfile::TempDir,
}

impl FakeBuildx {
    fn new() -> FakeBuildx {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let docker = dir.path().join("docker");
        std::fs::write(&docker, FAKE_DOCKER).unwrap();
        std::fs::set_permissions(&docker, std::fs::Permissions::from_mode(0o755)).unwrap();
        FakeBuildx { dir }
    }

    fn argv_log(&self) -> PathBuf {
        self.dir.path().join("argv")
    }

    /// The binary with the fake first on PATH, claiming to push `digest`.
    fn revendor(&self, pkg: &TempPackage, digest: &Digest) -> Revendor {
        let path = std::env::var("PATH").unwrap_or_default();
        revendor(pkg)
            .env("PATH", &format!("{}:{path}", self.dir.path().display()))
            .env("REVENDOR_TEST_ARGV", &self.argv_log().display().to_string())
            .env("REVENDOR_TEST_DIGEST", &digest.to_string())
    }

    /// [`FakeBuildx::revendor`] for a fake that pushes `image`: its manifests go into
    /// `repository` of `registry` by digest now, the tags when the build pushes.
    fn pushing(
        &self,
        pkg: &TempPackage,
        registry: &Registry,
        repository: &str,
        image: &MultiArch,
    ) -> Revendor {
        registry.push_multi_arch(repository, &image.index.digest.to_string(), image);
        let index = self.dir.path().join("index.json");
        std::fs::write(&index, &image.index.bytes).unwrap();
        self.revendor(pkg, &image.index.digest)
            .env("REVENDOR_TEST_INDEX", &index.display().to_string())
    }

    fn argv(&self) -> Vec<String> {
        std::fs::read_to_string(self.argv_log())
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

#[test]
fn buildx_build_is_read_back_verified_pinned_then_skipped_until_the_patch_changes() {
    if !have_registry("buildx_build_is_read_back_verified_pinned") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    let repository = format!("{}/team/multus-cni", registry.host);
    let image = multi_arch(&BOTH, "buildx", MediaType::OciIndex);
    let pkg = package(&repository, "buildx");
    let fake = FakeBuildx::new();
    let rv = fake.pushing(&pkg, &registry, "team/multus-cni", &image);

    let run = rv.run(&["image", "build", "--push"]).expect(0);
    let hash = hash_of(&pkg, "images/hello", "v1.0.0");
    let metadata = format!(
        "{}/image-build/{}/metadata.json",
        rv.cache().display(),
        hash.hex()
    );
    let expected_argv = [
        "buildx",
        "build",
        "images/hello",
        "--platform",
        "linux/amd64,linux/arm64",
        "--build-arg",
        "VERSION=v1.0.0",
        "--label",
        &format!("org.revendor.content-hash={hash}"),
        "--provenance=false",
        "--tag",
        &format!("{repository}:{TAG}"),
        "--push",
        "--metadata-file",
        &metadata,
    ];
    assert_eq!(fake.argv(), expected_argv);
    let pinned = format!("{repository}:{TAG}@{}", image.index.digest);
    assert!(
        run.stdout.starts_with(&format!("pinned {pinned}\n")),
        "{}",
        run.stdout
    );
    assert_eq!(pkg.read_string(TEMPLATE), pinned_template(&pinned));
    let locked = lock(&pkg).image(None).cloned().unwrap();
    assert_eq!(locked.reference, pinned);
    assert_eq!(locked.platforms, child_digests(&image));
    assert_eq!(
        locked.content_hash.as_deref(),
        Some(hash.to_string().as_str())
    );

    // Nothing changed: no build (benches/image_skip.rs measures how fast).
    std::fs::remove_file(fake.argv_log()).unwrap();
    let run = rv.run(&["image", "build", "--push"]).expect(0);
    assert!(run.stdout.starts_with("up to date: "), "{}", run.stdout);
    assert!(!fake.argv_log().exists(), "the builder must not run");

    // The source patch changed: a new build, a new content hash.
    let patch = pkg.read_string(PATCH);
    pkg.write(PATCH, patch.replace("hello, patched,", "hello again,"));
    let before = pkg.snapshot();
    let run = rv.run(&["image", "build", "--push"]).expect(2);
    assert!(
        run.stderr.contains(&format!(
            "error: {repository}:{TAG} already exists in the registry as {}, built from other \
             content; pushing would move that tag, so nothing was built",
            image.index.digest
        )),
        "{}",
        run.stderr
    );
    assert!(!fake.argv_log().exists(), "the builder must not run");
    assert_eq!(pkg.snapshot(), before);
    let run = rv
        .run(&["image", "build", "--push", "--move-tag"])
        .expect(0);
    assert!(run.stderr.contains("warning: moving "), "{}", run.stderr);
    assert!(fake.argv_log().exists(), "the builder must run again");
    let rebuilt = lock(&pkg).image(None).cloned().unwrap();
    assert_ne!(rebuilt.content_hash, locked.content_hash);
    assert_eq!(
        rebuilt.content_hash.as_deref(),
        Some(hash_of(&pkg, "images/hello", "v1.0.0").to_string().as_str())
    );

    // --force builds although nothing changed.
    std::fs::remove_file(fake.argv_log()).unwrap();
    rv.run(&["image", "build", "--push", "--force", "--move-tag"])
        .expect(0);
    assert!(fake.argv_log().exists());
}

/// Issue 22: a bot's digest-only bump of a `FROM` leaves a well-formed pin
/// of an image built on the old base; `check` says so as `image-stale`, at
/// the FROM that moved, and a build puts it right.
#[test]
fn a_digest_only_from_bump_after_the_build_is_image_stale() {
    if !have_registry("a_digest_only_from_bump_after_the_build_is_image_stale") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    let repository = format!("{}/team/multus-cni", registry.host);
    let image = multi_arch(&BOTH, "stale", MediaType::OciIndex);
    let pkg = package(&repository, "buildx");
    let (old, new) = ("a".repeat(64), "b".repeat(64));
    let dockerfile = String::from_utf8(fixture("Dockerfile")).unwrap();
    let on = |digest: &str| {
        dockerfile.replace(
            "FROM scratch",
            &format!("FROM debian:stable-slim@sha256:{digest}"),
        )
    };
    pkg.write("images/hello/Dockerfile", on(&old));
    let fake = FakeBuildx::new();
    let rv = fake.pushing(&pkg, &registry, "team/multus-cni", &image);
    rv.run(&["image", "build", "--push"]).expect(0);
    let stale = |rv: &Revendor| -> Vec<(String, String, u64, String)> {
        let run = rv.run(&["check", "--format", "json"]);
        let doc: serde_json::Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}{}", run.stdout, run.stderr));
        doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["id"] == "image-stale")
            .map(|f| {
                (
                    f["severity"].as_str().unwrap().to_owned(),
                    f["file"].as_str().unwrap().to_owned(),
                    f["line"].as_u64().unwrap(),
                    f["message"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    assert_eq!(stale(&rv), [], "just built: the inputs are the image's");

    pkg.write("images/hello/Dockerfile", on(&new));
    let pinned = format!("{repository}:{TAG}@{}", image.index.digest);
    assert_eq!(
        stale(&rv),
        [(
            "error".to_owned(),
            "images/hello/Dockerfile".to_owned(),
            4,
            format!(
                "the pinned `{pinned}` was built on `debian:stable-slim@sha256:{old}`, and this FROM now names `sha256:{new}`"
            )
        )]
    );

    // The rebuild (over its own tag) records the new inputs.
    rv.run(&["image", "build", "--push", "--move-tag"])
        .expect(0);
    assert_eq!(stale(&rv), []);
}

#[test]
fn a_docker_without_buildx_is_named_before_anything_is_built() {
    let pkg = multus_package();
    let before = pkg.snapshot();
    let fake = FakeBuildx::new();
    let run = fake
        .revendor(&pkg, &Digest::of(b"never built"))
        .env("REVENDOR_TEST_NO_BUILDX", "1")
        .run(&["image", "build", "--push"])
        .expect(3);
    assert_eq!(
        run.stderr.lines().next().unwrap(),
        "error: buildx cannot build here: `docker buildx version` failed (exit status: 1): \
         docker: unknown command: docker buildx / Run 'docker --help' for more information",
    );
    assert!(
        run.stderr
            .contains("set `builder = \"buildah\"` in vendor.toml's [image]"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("unknown flag"), "{}", run.stderr);
    assert!(!fake.argv_log().exists(), "nothing may be built");
    assert_eq!(pkg.snapshot(), before);
}

#[test]
fn registry_tags_caches_and_builder_arguments_as_make_image_passes_them() {
    if !have_registry("registry_tags_caches_and_builder_arguments") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    let ci = format!("{}/ci", registry.host);
    let pushed = format!("{ci}/multus-cni");
    let image = multi_arch(&BOTH, "ci build", MediaType::OciIndex);
    registry.push_multi_arch("ci/multus-cni", "pr-7-abc", &image);
    let pkg = package("ghcr.io/cozystack/cozystack/multus-cni", "buildx");
    let fake = FakeBuildx::new();
    let rv = fake
        .revendor(&pkg, &image.index.digest)
        .env("REGISTRY", &ci)
        .env("IMAGE_TAG", "pr-7-abc")
        .env("PUBLISH_VERSIONED", "1")
        .env("PUBLISH_FLOATING", "1");
    let cache = format!("type=registry,ref={pushed}:buildcache");
    let cache_to = format!("{cache},mode=max");
    let build = [
        "image",
        "build",
        "--push",
        "--cache-from",
        &cache,
        "--cache-to",
        &cache_to,
        "--",
        "--build-arg",
        "GOFLAGS=-mod=vendor",
        "--label",
        "org.opencontainers.image.source=https://github.com/cozystack/cozystack",
    ];
    let run = rv.run(&build).expect(0);
    let hash = revendor::builder::content_hash(
        &pkg.join("images/hello"),
        &pkg.join("images/hello/Dockerfile"),
        &[("VERSION".to_owned(), "v1.0.0".to_owned())],
        &BOTH.map(str::to_owned),
        &build[8..].iter().map(|a| a.to_string()).collect::<Vec<_>>(),
    )
    .unwrap();
    assert_ne!(hash, hash_of(&pkg, "images/hello", "v1.0.0"));
    let metadata = format!(
        "{}/image-build/{}/metadata.json",
        rv.cache().display(),
        hash.hex()
    );
    let expected_argv = [
        "buildx",
        "build",
        "images/hello",
        "--platform",
        "linux/amd64,linux/arm64",
        "--build-arg",
        "VERSION=v1.0.0",
        "--label",
        &format!("org.revendor.content-hash={hash}"),
        "--provenance=false",
        "--tag",
        &format!("{pushed}:pr-7-abc"),
        "--tag",
        &format!("{pushed}:{TAG}"),
        "--tag",
        &format!("{pushed}:latest"),
        "--cache-from",
        &cache,
        "--cache-to",
        &cache_to,
        "--push",
        "--metadata-file",
        &metadata,
        "--build-arg",
        "GOFLAGS=-mod=vendor",
        "--label",
        "org.opencontainers.image.source=https://github.com/cozystack/cozystack",
    ];
    assert_eq!(fake.argv(), expected_argv);
    let pinned = format!("{pushed}:pr-7-abc@{}", image.index.digest);
    assert!(
        run.stdout.starts_with(&format!("pinned {pinned}\n")),
        "{}",
        run.stdout
    );
    assert_eq!(pkg.read_string(TEMPLATE), pinned_template(&pinned));
    assert_eq!(lock(&pkg).image(None).cloned().unwrap().reference, pinned);

    // The same build again is up to date; other builder arguments are another build.
    std::fs::remove_file(fake.argv_log()).unwrap();
    let run = rv.run(&build).expect(0);
    assert!(run.stdout.starts_with("up to date: "), "{}", run.stdout);
    assert!(!fake.argv_log().exists());
    rv.run(&build[..8]).expect(0);
    assert!(
        fake.argv_log().exists(),
        "without the arguments the content differs"
    );

    // --tag wins over IMAGE_TAG, and a tag equal to [image] tag is pushed once.
    let run = rv
        .run(&["image", "build", "--dry-run", "--tag", TAG])
        .expect(0);
    let tags: Vec<&str> = run.stdout.matches("--tag ").collect();
    assert_eq!(tags.len(), 2, "{}", run.stdout);
    assert!(
        run.stdout
            .contains(&format!("--tag {pushed}:{TAG} --tag {pushed}:latest ")),
        "{}",
        run.stdout
    );
}

#[test]
fn buildah_caches_in_a_repository_and_refuses_other_caches() {
    let pkg = multus_package();
    let rv = revendor(&pkg).env("REGISTRY", "127.0.0.1:5000/ci");
    let run = rv
        .run(&[
            "--offline",
            "image",
            "build",
            "--push",
            "--dry-run",
            "--builder",
            "buildah",
            "--cache-from",
            "type=registry,ref=127.0.0.1:5000/ci/multus-cni-cache",
            "--cache-to",
            "127.0.0.1:5000/ci/multus-cni-cache",
            "--",
            "--jobs",
            "2",
        ])
        .expect(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(
        lines[1].starts_with(
            "buildah build --platform linux/amd64,linux/arm64 \
             --manifest localhost/revendor-build/multus-cni:v1.6.0 --layers \
             --cache-from 127.0.0.1:5000/ci/multus-cni-cache \
             --cache-to 127.0.0.1:5000/ci/multus-cni-cache --build-arg VERSION=v4.3.0"
        ) && lines[1].ends_with(" --jobs 2 images/multus-cni"),
        "{}",
        run.stdout
    );
    assert!(
        lines[2].ends_with(" docker://127.0.0.1:5000/ci/multus-cni:v1.6.0"),
        "{}",
        run.stdout
    );
    let run = rv
        .run(&[
            "--offline",
            "image",
            "build",
            "--dry-run",
            "--builder",
            "buildah",
            "--cache-to",
            "type=inline",
        ])
        .expect(2);
    assert!(
        run.stderr.starts_with(
            "error: buildah cannot use the cache `--cache-to type=inline`: only a registry repository\n"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn buildx_failure_is_exit_3_with_its_stderr_and_nothing_pinned() {
    if !have_registry("buildx_failure_is_exit_3") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    let pkg = package(&format!("{}/team/multus-cni", registry.host), "buildx");
    let before = pkg.snapshot();
    let fake = FakeBuildx::new();
    let digest = Digest::of(b"never pushed");
    let run = fake
        .revendor(&pkg, &digest)
        .env("REVENDOR_TEST_FAIL", "no space left on device")
        .run(&["image", "build", "--push"])
        .expect(3);
    assert!(
        run.stderr
            .contains("error: `docker buildx build images/hello --platform"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("failed (exit status: 1):\nERROR: no space left on device\n"),
        "{}",
        run.stderr
    );
    assert_eq!(pkg.snapshot(), before);
}

#[test]
fn buildx_tag_that_moves_between_build_and_read_back_is_exit_3() {
    if !have_registry("buildx_tag_that_moves") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    let repository = format!("{}/team/multus-cni", registry.host);
    let built = multi_arch(&BOTH, "what the builder pushed", MediaType::OciIndex);
    let moved = multi_arch(&BOTH, "pushed over it", MediaType::OciIndex);
    registry.push_multi_arch("team/multus-cni", TAG, &moved);
    let pkg = package(&repository, "buildx");
    let before = pkg.snapshot();
    let fake = FakeBuildx::new();
    let run = fake
        .revendor(&pkg, &built.index.digest)
        .run(&["image", "build", "--push", "--move-tag"])
        .expect(3);
    assert!(
        run.stderr.contains(&format!(
            "`{repository}:{TAG}` resolves to {}, expected {}",
            moved.index.digest, built.index.digest
        )),
        "{}",
        run.stderr
    );
    assert_eq!(pkg.snapshot(), before);
}

#[test]
fn issue_22_a_tag_built_from_the_same_content_is_pinned_and_another_never_moved() {
    if !have_registry("issue_22_a_tag_built_from_the_same_content") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    let repository = format!("{}/team/multus-cni", registry.host);
    let pkg = package(&repository, "buildx");
    let hash = hash_of(&pkg, "images/hello", "v1.0.0");
    let released = multi_arch(&BOTH, "the release", MediaType::OciIndex);
    registry.push_multi_arch("team/multus-cni", TAG, &released);
    let fake = FakeBuildx::new();
    let nightly = multi_arch(&BOTH, "a nightly build", MediaType::OciIndex);
    let rv = fake.pushing(&pkg, &registry, "team/multus-cni", &nightly);

    // The released tag is not pushed over, not even by the dry run's plan's tag.
    let before = pkg.snapshot();
    let run = rv.run(&["image", "build", "--push"]).expect(2);
    assert!(
        run.stderr.contains(&format!(
            "{repository}:{TAG} already exists in the registry as {}",
            released.index.digest
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("IMAGE_TAG") && run.stderr.contains("--move-tag"),
        "{}",
        run.stderr
    );
    assert!(!fake.argv_log().exists());
    assert_eq!(pkg.snapshot(), before);
    let tag = Reference::parse(&format!("{repository}:{TAG}")).unwrap();
    let client = registry_support::client(Credentials::none());
    assert_eq!(client.head_manifest(&tag).unwrap(), released.index.digest);

    // The nightly's tag of its own is pushed; the dry run names it.
    let rv = rv.env("IMAGE_TAG", "nightly-abc");
    let run = rv.run(&["image", "build", "--push", "--dry-run"]).expect(0);
    assert!(
        run.stdout
            .contains(&format!("--tag {repository}:nightly-abc ")),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains(&format!(":{TAG}")), "{}", run.stdout);
    rv.run(&["image", "build", "--push"]).expect(0);
    assert_eq!(
        lock(&pkg).image(None).unwrap().reference,
        format!("{repository}:nightly-abc@{}", nightly.index.digest)
    );

    // A tag that already holds an image labelled with this content hash is pinned as it
    // is: nothing built, nothing pushed over it.
    let labelled =
        content::multi_arch_labelled(&BOTH, "built before", &[(LABEL, &hash.to_string())]);
    registry.push_multi_arch("team/multus-cni", "nightly-def", &labelled);
    std::fs::remove_file(fake.argv_log()).unwrap();
    let rv = rv.env("IMAGE_TAG", "nightly-def");
    let run = rv.run(&["image", "build", "--push"]).expect(0);
    assert!(
        run.stdout
            .starts_with(&format!("reused {repository}:nightly-def: ")),
        "{}",
        run.stdout
    );
    assert!(!fake.argv_log().exists(), "the builder must not run");
    assert_eq!(
        lock(&pkg).image(None).unwrap().reference,
        format!("{repository}:nightly-def@{}", labelled.index.digest)
    );

    // PUBLISH_VERSIONED=1 (a release build) may move the versioned tag, and says so.
    let run = rv
        .env("IMAGE_TAG", TAG)
        .env("PUBLISH_VERSIONED", "1")
        .run(&["image", "build", "--push"])
        .expect(0);
    assert_eq!(client.head_manifest(&tag).unwrap(), nightly.index.digest);
    assert!(
        run.stderr.contains(&format!(
            "warning: moving {repository}:{TAG} away from {}",
            released.index.digest
        )),
        "{}",
        run.stderr
    );
}

// ---- image pin against the real registry ----

#[test]
fn pin_resolves_verifies_and_pins_every_site_and_the_lock() {
    if !have_registry("pin_resolves_verifies_and_pins") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    let repository = format!("{}/team/multus-cni", registry.host);
    let old = multi_arch(&BOTH, "old", MediaType::DockerManifestList);
    registry.push_multi_arch("team/multus-cni", TAG, &old);
    let new = multi_arch(&BOTH, "new", MediaType::OciIndex);
    registry.push_multi_arch("team/multus-cni", TAG, &new);
    let pkg = package(&repository, "buildah");
    let rv = revendor(&pkg);

    let run = rv.run(&["image", "pin"]).expect(0);
    let pinned = format!("{repository}:{TAG}@{}", new.index.digest);
    assert!(
        run.stdout.contains(&format!("  at {TEMPLATE}:21\n")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!("  at {TEMPLATE}:28\n")),
        "{}",
        run.stdout
    );
    assert_eq!(pkg.read_string(TEMPLATE), pinned_template(&pinned));
    let locked = lock(&pkg).image(None).cloned().unwrap();
    assert_eq!(locked.reference, pinned);
    assert_eq!(locked.platforms, child_digests(&new));
    assert_eq!(locked.content_hash, None);

    // An older index by digest, although the tag has moved on.
    let digest = old.index.digest.to_string();
    rv.run(&["image", "pin", "--digest", &digest]).expect(0);
    let pinned = format!("{repository}:{TAG}@{digest}");
    assert_eq!(pkg.read_string(TEMPLATE), pinned_template(&pinned));
    assert_eq!(
        lock(&pkg).image(None).cloned().unwrap().platforms,
        child_digests(&old)
    );

    // Pinning what is pinned changes no byte.
    let before = pkg.snapshot();
    let run = rv.run(&["image", "pin", "--digest", &digest]).expect(0);
    assert!(run.stdout.ends_with("no file changed\n"), "{}", run.stdout);
    assert_eq!(pkg.snapshot(), before);
}

#[test]
fn pin_resolves_where_registry_and_image_tag_say() {
    if !have_registry("pin_resolves_where_registry_and_image_tag_say") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    let image = multi_arch(&BOTH, "ci", MediaType::OciIndex);
    registry.push_multi_arch("ci/multus-cni", "main", &image);
    let pkg = package("ghcr.io/cozystack/cozystack/multus-cni", "buildah");
    let rv = revendor(&pkg)
        .env("REGISTRY", &format!("{}/ci/", registry.host))
        .env("IMAGE_TAG", "main");
    rv.run(&["image", "pin"]).expect(0);
    let pinned = format!(
        "{}/ci/multus-cni:main@{}",
        registry.host, image.index.digest
    );
    assert_eq!(lock(&pkg).image(None).cloned().unwrap().reference, pinned);
    assert_eq!(pkg.read_string(TEMPLATE), pinned_template(&pinned));
    // Pinned once where REGISTRY put it, the sites are found again.
    let before = pkg.snapshot();
    let run = rv.run(&["image", "pin"]).expect(0);
    assert!(run.stdout.ends_with("no file changed\n"), "{}", run.stdout);
    assert_eq!(pkg.snapshot(), before);
}

#[test]
fn pin_refuses_a_single_platform_tag_and_an_index_missing_arm64() {
    if !have_registry("pin_refuses_wrong_content") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    let repository = format!("{}/team/multus-cni", registry.host);
    let single = content::image("linux/amd64", "single");
    registry.push_image("team/multus-cni", "single", &single);
    let amd64_only = multi_arch(&["linux/amd64"], "amd64 only", MediaType::OciIndex);
    registry.push_multi_arch("team/multus-cni", "amd64-only", &amd64_only);
    let pkg = package(&repository, "buildah");
    let before = pkg.snapshot();
    let rv = revendor(&pkg);

    let run = rv.run(&["image", "pin", "--tag", "single"]).expect(3);
    assert!(
        run.stderr.contains(&format!(
            "\nerror: `{repository}:single` is a single-platform application/vnd.oci.image.manifest.v1+json \
             for linux/amd64, not a multi-platform index of the configured platforms \
             [linux/amd64, linux/arm64]\n"
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("help: use an index holding every platform"),
        "{}",
        run.stderr
    );
    let arm = content::image("linux/arm64", "single arm64");
    registry.push_image("team/multus-cni", "single-arm64", &arm);
    let run = rv.run(&["image", "pin", "--tag", "single-arm64"]).expect(3);
    assert!(
        run.stderr
            .contains("manifest.v1+json for linux/arm64, not a multi-platform index"),
        "{}",
        run.stderr
    );
    let run = rv.run(&["image", "pin", "--tag", "amd64-only"]).expect(3);
    assert!(
        run.stderr.contains("missing [linux/arm64], unexpected []"),
        "{}",
        run.stderr
    );
    let run = rv.run(&["image", "pin", "--tag", "absent"]).expect(3);
    assert!(run.stderr.contains("not found"), "{}", run.stderr);
    assert_eq!(pkg.snapshot(), before);
}

#[test]
fn pin_reads_credentials_from_docker_config_for_basic_and_token_auth() {
    if !have_registry("pin_reads_credentials") {
        return;
    }
    for (auth, credentials) in [
        (
            Auth::Htpasswd,
            json!({"auth": STANDARD.encode(format!("{HT_USER}:{HT_PASSWORD}"))}),
        ),
        (
            Auth::Token,
            json!({"username": token::USER, "password": token::PASSWORD}),
        ),
    ] {
        let registry = Registry::start(auth);
        let repository = format!("{}/private/multus-cni", registry.host);
        let image = multi_arch(&BOTH, "private", MediaType::OciIndex);
        registry.push_multi_arch("private/multus-cni", TAG, &image);
        let pkg = package(&repository, "buildah");
        let rv = revendor(&pkg);

        let before = pkg.snapshot();
        let run = rv.run(&["image", "pin"]).expect(3);
        assert!(run.stderr.contains("not authorized"), "{}", run.stderr);
        assert!(run.stderr.contains("docker login"), "{}", run.stderr);
        assert_eq!(pkg.snapshot(), before);

        pkg.write(
            ".docker-config/config.json",
            json!({"auths": {registry.host.clone(): credentials}}).to_string(),
        );
        rv.run(&["image", "pin"]).expect(0);
        assert_eq!(
            lock(&pkg).image(None).cloned().unwrap().reference,
            format!("{repository}:{TAG}@{}", image.index.digest)
        );
        let all = rv.run(&["-v", "image", "pin"]).expect(0).all();
        for secret in [HT_PASSWORD, token::PASSWORD] {
            assert!(!all.contains(secret), "{all}");
        }
    }
}

// ---- image pin against a fake registry: faults on demand ----

/// A package pinning `team/app` on the fake `server`.
fn fake_package(server: &Server) -> TempPackage {
    package(&format!("{}/{REPO}", server.host()), "buildah")
}

#[test]
fn pin_fails_with_exit_3_and_pins_nothing_when_the_registry_misbehaves() {
    let good = multi_arch(&BOTH, "good", MediaType::OciIndex);
    let other = multi_arch(&BOTH, "other", MediaType::OciIndex);

    // A body that does not hash to the digest the registry announces.
    let routes = Routes::default().add_multi_arch(TAG, &good).clone();
    let (tampered, announced) = (other.index.bytes.clone(), good.index.digest.clone());
    let tampering = Server::start(move |request| {
        if request.path() == fake::path(TAG) {
            Response::new(200)
                .header("Content-Type", MediaType::OciIndex.as_str())
                .header("Docker-Content-Digest", announced.to_string())
                .body(tampered.clone())
        } else {
            routes.answer(request)
        }
    });
    // A 401 that gives no way to authenticate.
    let no_challenge = Server::start(|_| {
        Response::new(401).body(r#"{"errors":[{"code":"UNAUTHORIZED","message":"go away"}]}"#)
    });
    let cases: [(&str, &Server, String); 2] = [
        (
            "tampered body",
            &tampering,
            format!(
                "hashes to {}, but {} was announced in Docker-Content-Digest",
                other.index.digest, good.index.digest
            ),
        ),
        (
            "401 without a challenge",
            &no_challenge,
            "HTTP 401 without a WWW-Authenticate challenge".to_owned(),
        ),
    ];
    for (name, server, expected) in cases {
        let pkg = fake_package(server);
        let before = pkg.snapshot();
        let run = revendor(&pkg).run(&["image", "pin"]);
        assert_eq!(run.code, 3, "{name}: {}", run.all());
        assert!(run.stderr.contains(&expected), "{name}: {}", run.stderr);
        assert_eq!(pkg.snapshot(), before, "{name}");
    }
}

#[test]
fn pin_retries_a_500_and_then_pins() {
    let image = multi_arch(&BOTH, "flaky", MediaType::OciIndex);
    let routes = Routes::default().add_multi_arch(TAG, &image).clone();
    let count = AtomicUsize::new(0);
    let server = Server::start(move |request| {
        if count.fetch_add(1, Ordering::SeqCst) == 0 {
            Response::new(500).body("<html>upstream exploded</html>")
        } else {
            routes.answer(request)
        }
    });
    let pkg = fake_package(&server);
    revendor(&pkg).run(&["image", "pin"]).expect(0);
    assert_eq!(
        lock(&pkg).image(None).cloned().unwrap().reference,
        format!("{}/{REPO}:{TAG}@{}", server.host(), image.index.digest)
    );
    assert_eq!(server.requests()[0].method, "GET");
    assert_eq!(server.requests().len(), 4, "500, index, two children");
}

#[test]
fn pin_needs_the_network() {
    let pkg = package("127.0.0.1:9/team/multus-cni", "buildah");
    let run = revendor(&pkg).run(&["--offline", "image", "pin"]).expect(2);
    assert!(run.stderr.contains("--offline"), "{}", run.stderr);
}

// ---- image pin-base, the real registry standing in for Docker Hub ----

/// Multi-platform indexes for the multus Dockerfile's bases, pushed as Docker Hub's
/// `library/…` images into `registry`, which then mirrors docker.io.
struct Bases {
    golang_126: MultiArch,
    golang_127: MultiArch,
    debian: MultiArch,
}

fn push_bases(registry: &Registry, debian_platforms: &[&str]) -> Bases {
    let all = ["linux/amd64", "linux/arm64", "linux/s390x"];
    let bases = Bases {
        golang_126: multi_arch(&all, "golang 1.26", MediaType::OciIndex),
        golang_127: multi_arch(&all, "golang 1.27", MediaType::OciIndex),
        debian: multi_arch(debian_platforms, "debian", MediaType::DockerManifestList),
    };
    registry.push_multi_arch("library/golang", "1.26", &bases.golang_126);
    registry.push_multi_arch("library/golang", "1.27", &bases.golang_127);
    registry.push_multi_arch("library/debian", "stable-slim", &bases.debian);
    bases
}

#[test]
fn pin_base_pins_every_from_image_and_moves_go_only_when_asked() {
    if !have_registry("pin_base_pins_every_from_image") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    let bases = push_bases(&registry, &BOTH);
    let pkg = multus_package();
    pkg.write(
        LOCK,
        format!(
            "{}\n[image]\nreference = \"ghcr.io/cozystack/cozystack/multus-cni:v1.6.0@{}\"\n",
            pkg.read_string(LOCK),
            Digest::of(b"pinned")
        ),
    );
    let rv = revendor(&pkg).env(
        "REVENDOR_REGISTRY_MIRRORS",
        &format!("docker.io={}", registry.host),
    );
    let dockerfile = "images/multus-cni/Dockerfile";
    let original = pkg.read_string(dockerfile);
    let vendor_toml = pkg.read_string("vendor.toml");
    let old_golang = original
        .split("golang:1.26@")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_owned();
    let old_debian = original
        .split("debian:stable-slim@")
        .nth(1)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_owned();

    let run = rv.run(&["image", "pin-base"]).expect(0);
    let golang = bases.golang_126.index.digest.to_string();
    let debian = bases.debian.index.digest.to_string();
    assert_eq!(
        pkg.read_string(dockerfile),
        original
            .replace(&old_golang, &golang)
            .replace(&old_debian, &debian),
        "only the digests change"
    );
    assert!(
        run.stdout.contains(&format!(
            "{dockerfile}:15: golang:1.26@{old_golang} -> golang:1.26@{golang}\n"
        )),
        "{}",
        run.stdout
    );
    assert_eq!(
        lock(&pkg).image(None).cloned().unwrap().bases,
        BTreeMap::from([
            ("golang:1.26".to_owned(), golang.clone()),
            ("debian:stable-slim".to_owned(), debian.clone()),
        ])
    );
    assert_eq!(pkg.read_string("vendor.toml"), vendor_toml);

    // Again: nothing to change.
    let before = pkg.snapshot();
    let run = rv.run(&["image", "pin-base"]).expect(0);
    assert!(run.stdout.ends_with("no file changed\n"), "{}", run.stdout);
    assert_eq!(pkg.snapshot(), before);

    // A dry run of the Go move writes nothing; the move itself touches the FROM lines and `go`.
    let run = rv
        .run(&["image", "pin-base", "--go", "1.27", "--dry-run"])
        .expect(0);
    assert_eq!(pkg.snapshot(), before);
    // Issue 9: a dry run says what it would write, never "wrote".
    assert!(
        run.stdout.contains(&format!("would write {dockerfile}\n"))
            && run.stdout.contains("would write vendor.toml\n")
            && !run.stdout.contains("wrote "),
        "{}",
        run.stdout
    );
    rv.run(&["image", "pin-base", "--go", "1.27"]).expect(0);
    let golang_127 = bases.golang_127.index.digest.to_string();
    assert_eq!(
        pkg.read_string(dockerfile),
        original
            .replace(
                &format!("golang:1.26@{old_golang}"),
                &format!("golang:1.27@{golang_127}")
            )
            .replace(&old_debian, &debian)
    );
    assert_eq!(
        pkg.read_string("vendor.toml"),
        vendor_toml.replace("go = \"1.26\"", "go = \"1.27\"")
    );
    assert_eq!(
        lock(&pkg).image(None).cloned().unwrap().bases["golang:1.27"],
        golang_127
    );
    // The recipe passes the build's checks at the new Go minor.
    rv.run(&["--offline", "image", "build", "--push", "--dry-run"])
        .expect(0);
}

#[test]
fn pin_base_refuses_a_base_without_the_platforms_and_an_implicit_go_move() {
    if !have_registry("pin_base_refuses") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    push_bases(&registry, &["linux/amd64"]);
    let pkg = multus_package();
    let before = pkg.snapshot();
    let rv = revendor(&pkg).env(
        "REVENDOR_REGISTRY_MIRRORS",
        &format!("docker.io={}", registry.host),
    );
    let run = rv.run(&["image", "pin-base"]).expect(3);
    assert!(
        run.stderr
            .contains("index `debian:stable-slim` does not hold exactly the configured platforms: missing [linux/arm64]"),
        "{}",
        run.stderr
    );
    assert_eq!(pkg.snapshot(), before);

    let text = pkg.read_string("vendor.toml");
    pkg.write(
        "vendor.toml",
        text.replace("go = \"1.26\"", "go = \"1.27\""),
    );
    let before = pkg.snapshot();
    let run = rv.run(&["image", "pin-base"]).expect(2);
    assert!(
        run.stderr.contains("expected Go 1.27") && run.stderr.contains("--go 1.27"),
        "{}",
        run.stderr
    );
    assert_eq!(pkg.snapshot(), before);
}

#[test]
fn pin_base_go_needs_a_golang_stage_and_a_go_minor() {
    let pkg = package("127.0.0.1:9/team/multus-cni", "buildah");
    let before = pkg.snapshot();
    let rv = revendor(&pkg);
    let run = rv.run(&["image", "pin-base", "--go", "1.27"]).expect(2);
    assert!(
        run.stderr
            .contains("no stage builds on golang, so --go has nothing to move"),
        "{}",
        run.stderr
    );
    let run = rv.run(&["image", "pin-base", "--go", "1.27.1"]).expect(2);
    assert!(run.stderr.contains("is not a Go minor"), "{}", run.stderr);
    assert_eq!(pkg.snapshot(), before);
}

// ---- killed ----

/// Issue 13: `image pin` killed at a hundred random moments against the real registry: the
/// template and the lock are pinned to the old index or to the new one, never one of each
/// once the next command has run, and nothing is left behind.
#[test]
fn sigkill_during_image_pin_leaves_the_old_pin_or_the_new_one() {
    if !have_registry("sigkill_during_image_pin") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    let repository = format!("{}/team/multus-cni", registry.host);
    let old = multi_arch(&BOTH, "old", MediaType::OciIndex);
    registry.push_multi_arch("team/multus-cni", TAG, &old);
    let new = multi_arch(&BOTH, "new", MediaType::OciIndex);
    registry.push_multi_arch("team/multus-cni", TAG, &new);
    let pkg = package(&repository, "buildah");
    let rv = revendor(&pkg);
    let old_digest = old.index.digest.to_string();
    let new_digest = new.index.digest.to_string();
    rv.run(&["image", "pin", "--digest", &old_digest]).expect(0);
    let before = support::kill::state(pkg.path(), &[".docker-config"]);
    let pin = ["image", "pin", "--digest", new_digest.as_str()];
    let rounds = support::kill::Rounds {
        name: "image pin",
        dir: pkg.path(),
        ignore: &[".docker-config"],
        cache: Some(rv.cache()),
        min: 100,
        seed: 0xd1b5_4a32_d192_ed03,
    };
    rounds.run(
        || {
            rv.run(&pin).expect(0);
        },
        || rv.spawn(&pin),
        || {
            let run = rv.run(&["check", "--offline"]);
            assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
        },
        || support::kill::restore(pkg.path(), &before, &[".docker-config"]),
    );
}
