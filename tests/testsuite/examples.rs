//! The cozystack packages of `examples/cozystack/` (issue 12): each vendor.toml parses into
//! what its package means (upstream and version selection, vendored directories, patches,
//! rewrites, pins), and the real binary gets past it (`check --offline` stops only at the
//! missing lock). With the real-world data at hand, kube-ovn's example is the real package:
//! its patch paths are the package's, and it adopts the real package and updates its
//! `charts/kube-ovn/` directory from v1.14.5 to v1.14.11 through the GitHub stand-in.

use crate::support;

use std::path::Path;

use revendor::config::{AppliesTo, Config, Selection, YamlPin};
use support::{GitHub, Realworld, Revendor, TempPackage};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/cozystack");

/// A package holding the example's vendor.toml and a stand-in for every patch file it names.
fn package(name: &str) -> TempPackage {
    let text = std::fs::read_to_string(Path::new(ROOT).join(name).join("vendor.toml")).unwrap();
    let pkg = TempPackage::new();
    pkg.write("vendor.toml", &text);
    let doc: toml::Table = text.parse().unwrap();
    for patch in doc
        .get("patch")
        .and_then(|p| p.as_array())
        .into_iter()
        .flatten()
    {
        let file = patch["file"].as_str().unwrap();
        pkg.write(file, "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n");
    }
    pkg
}

fn config(pkg: &TempPackage) -> Config {
    Config::load(pkg.path()).unwrap_or_else(|e| panic!("{e}"))
}

/// The binary reads vendor.toml, validates it, and stops only because there is no lock.
fn validated_by_the_binary(pkg: &TempPackage) {
    let gh = GitHub::start();
    let run = Revendor::new(pkg.path(), &gh)
        .run(&["--offline", "check"])
        .expect(2);
    assert!(
        run.stderr
            .starts_with("error: this package has no upstream/lock.toml yet"),
        "{}",
        run.stderr
    );
}

#[test]
fn kubeovn_vendors_its_chart_directory_and_pins_one_values_key() {
    let pkg = package("kubeovn");
    let c = config(&pkg);
    let up = c.upstream(None);
    assert_eq!(up.version.as_deref(), Some("v1.15.10"));
    assert!(matches!(up.selection, Selection::Tags(Some(_))));
    assert_eq!(up.semver("v1.15.11").unwrap().to_string(), "1.15.11");
    assert_eq!(up.semver("kube-ovn-v1.15.24"), None);
    assert_eq!(
        (c.vendor[0].from.as_str(), c.vendor[0].to.as_str()),
        ("charts/kube-ovn/", "charts/kube-ovn/")
    );
    let kinds: Vec<_> = c.patches.iter().map(|p| (p.applies_to, p.strip)).collect();
    assert_eq!(kinds, [(AppliesTo::Vendor, 4), (AppliesTo::Source, 1)]);
    // ARG VERSION="1.15.10" takes {semver}, ARG TAG="v1.15.10" {version}.
    let at = up.placeholders("v1.15.11", None);
    let values: Vec<_> = c.rewrites.iter().map(|r| r.value(&at)).collect();
    assert_eq!(values, ["1.15.11", "v1.15.11"]);
    assert_eq!(
        c.pins[0].yaml,
        Some(YamlPin::Joined("global.images.kubeovn.tag".into()))
    );
    assert_eq!(c.pins[0].repository, "ghcr.io/cozystack/cozystack/kubeovn");
    validated_by_the_binary(&pkg);
}

#[test]
fn kubeovn_at_v1_14_names_the_real_packages_patch_files() {
    let Some(rw) = Realworld::from_env() else {
        return;
    };
    let before = rw.root().join("cozystack-kubeovn-before");
    let pkg = package("kubeovn");
    kubeovn_at_v1_14(&pkg);
    let doc: toml::Table = pkg.read_string("vendor.toml").parse().unwrap();
    let files: Vec<&str> = doc["patch"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["file"].as_str().unwrap())
        .collect();
    assert_eq!(files.len(), 3);
    for file in files {
        let real = before.join(file);
        assert!(real.is_file(), "{file} is not in the real package");
        pkg.write(file, std::fs::read(real).unwrap());
    }
    assert_eq!(config(&pkg).patches.len(), 3);
    validated_by_the_binary(&pkg);
}

/// kube-ovn's example at the versions of the real bump, with the patches the package had
/// then (it is written for v1.15.10, after cozystack dropped cozyconfig.diff and replaced
/// northd_probe.diff).
fn kubeovn_at_v1_14(pkg: &TempPackage) {
    const TODAY: &str = "[[patch]]
name = \"fix-keepvmip-portgroup\"
file = \"images/kubeovn/patches/fix-keepvmip-portgroup.diff\"";
    const THEN: &str = "[[patch]]
name = \"northd-probe\"
file = \"images/kubeovn/patches/northd_probe.diff\"";
    const COZYCONFIG: &str = "[[patch]]
name = \"cozyconfig\"
file = \"patches/cozyconfig.diff\"
applies-to = \"vendor\"
strip = 4

[[patch]]
name = \"mtu\"";
    let text = std::fs::read_to_string(Path::new(ROOT).join("kubeovn/vendor.toml")).unwrap();
    assert!(
        text.contains(TODAY) && text.contains("[[patch]]\nname = \"mtu\""),
        "{text}"
    );
    let text = text
        .replace("version = \"v1.15.10\"", "version = \"v1.14.5\"")
        .replace(">=1.15.0, <1.16.0", ">=1.14.0, <1.15.0")
        .replace(TODAY, THEN)
        .replace("[[patch]]\nname = \"mtu\"", COZYCONFIG);
    assert!(text.contains("version = \"v1.14.5\""), "{text}");
    pkg.write("vendor.toml", text);
}

#[test]
fn kubeovn_example_adopts_the_real_package_and_updates_its_chart_directory() {
    let Some(rw) = Realworld::from_env() else {
        return;
    };
    let gh = GitHub::start();
    rw.register_kube_ovn_chart(&gh);
    let before = rw.root().join("cozystack-kubeovn-before");
    let pkg = TempPackage::new();
    pkg.copy_from(&before, "");
    kubeovn_at_v1_14(&pkg);
    // The Dockerfile as the package has it today: the ARGs quoted, VERSION without its `v`.
    const DOCKERFILE: &str = "images/kubeovn/Dockerfile";
    let dockerfile = |version: &str| {
        String::from_utf8(rw.read(&format!("cozystack-kubeovn-before/{DOCKERFILE}")))
            .unwrap()
            .replace(
                "ARG VERSION=v1.14.5\n",
                &format!("ARG VERSION=\"{}\"\n", &version[1..]),
            )
            .replace("ARG TAG=v1.14.5\n", &format!("ARG TAG=\"{version}\"\n"))
    };
    pkg.write(DOCKERFILE, dockerfile("v1.14.5"));
    let values = pkg.read_string("values.yaml");
    let rv = Revendor::new(pkg.path(), &gh);

    let out = rv.run(&["update", "--to", "v1.14.5"]).expect(0);
    assert!(
        out.stdout.contains("adopted the package at v1.14.5"),
        "{}",
        out.stdout
    );
    let lock = pkg.read_string("upstream/lock.toml");
    assert_eq!(lock.matches("[[file]]").count(), 27, "{lock}");
    assert!(
        lock.contains("reference = \"ghcr.io/cozystack/cozystack/kubeovn:v1.14.5@sha256:af10da44"),
        "the pin is read back from global.images.kubeovn.tag: {lock}"
    );
    // The real package's one finding: its builder image is not pinned by digest
    // (`image pin-base` needs the registry).
    let only_the_builder = || {
        let out = rv.run(&["check"]).expect(1);
        assert!(
            out.stdout.starts_with("builder-go\n") && out.stdout.contains(": 1 error"),
            "{}",
            out.stdout
        );
    };
    only_the_builder();

    rv.run(&["update", "--to", "v1.14.11"]).expect(0);
    let after = rw.root().join("cozystack-kubeovn-after");
    assert_eq!(
        support::package::read_tree(&pkg.join("charts")),
        support::package::read_tree(&after.join("charts")),
        "charts/ is cozystack's v1.14.11 chart byte for byte"
    );
    assert_eq!(pkg.read_string(DOCKERFILE), dockerfile("v1.14.11"));
    assert_eq!(pkg.read_string("values.yaml"), values, "the pin stays");
    only_the_builder();

    // `tag = "{version}"`: the image built from v1.14.11 is named after it (issue 20).
    let out = rv
        .run(&["--offline", "image", "build", "--dry-run"])
        .expect(0);
    assert!(
        out.stdout.contains("--build-arg VERSION=1.14.11 ")
            && out
                .stdout
                .contains("--tag ghcr.io/cozystack/cozystack/kubeovn:v1.14.11 ")
            && !out.stdout.contains("v1.14.5"),
        "{}",
        out.stdout
    );
}

#[test]
fn kamaji_vendors_both_charts_at_its_edge_tags() {
    let pkg = package("kamaji");
    let c = config(&pkg);
    let up = c.upstream(None);
    assert!(!up.allow_prerelease, "edge tags are full releases");
    assert_eq!(up.semver("26.3.6-edge").unwrap().to_string(), "26.3.6");
    assert_eq!(up.semver("v1.0.0"), None);
    assert_eq!(
        up.semver("26.3.6"),
        None,
        "only edge tags are kamaji's releases"
    );
    assert_eq!(c.vendor[0].from, "charts/");
    assert_eq!(c.patches_for(AppliesTo::Source).count(), 2);
    assert_eq!(c.patches_for(AppliesTo::Vendor).count(), 1);
    assert_eq!(
        c.rewrites[0].value(&up.placeholders("26.4.1-edge", None)),
        "26.4.1-edge"
    );
    assert_eq!(
        c.pins[0].yaml,
        Some(YamlPin::Split {
            repository: "kamaji.image.repository".into(),
            tag: "kamaji.image.tag".into(),
            digest: None,
        })
    );
    validated_by_the_binary(&pkg);
}

#[test]
fn seaweedfs_reroots_its_chart_with_eight_patches() {
    let pkg = package("seaweedfs");
    let c = config(&pkg);
    let up = c.upstream(None);
    assert_eq!(up.semver("4.31").unwrap().to_string(), "4.31.0");
    assert_eq!(up.semver("helm-4.31.0"), None, "a chart-release tag");
    assert_eq!(
        (c.vendor[0].from.as_str(), c.vendor[0].to.as_str()),
        ("k8s/charts/seaweedfs/", "charts/seaweedfs/")
    );
    let names: Vec<&str> = c
        .patches_for(AppliesTo::Vendor)
        .map(|p| p.file.as_str())
        .collect();
    assert_eq!(names.len(), 8);
    assert_eq!(names[0], "patches/resize-api-server-annotation.diff");
    assert_eq!(names[7], "patches/cluster-scoped-names-per-namespace.patch");
    assert!(c.images.is_empty() && c.pins.is_empty());
    validated_by_the_binary(&pkg);
}
