//! The cozystack packages of `examples/cozystack/` (issue 12): each vendor.toml parses into
//! what its package means (upstream and version selection, vendored directories, patches,
//! rewrites, pins), and the real binary gets past it (`check --offline` stops only at the
//! missing lock). kube-ovn's patch paths are those of the real package when the real-world
//! data is at hand.
//!
//! Rendering them waits on directory vendoring (`from`/`to` ending in `/`): until then the
//! directories parse as paths, which is all these tests ask of them.

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
    assert_eq!(
        kinds,
        [
            (AppliesTo::Vendor, 4),
            (AppliesTo::Vendor, 4),
            (AppliesTo::Source, 1)
        ]
    );
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
fn kubeovn_names_the_real_packages_patch_files() {
    let Some(rw) = Realworld::from_env() else {
        return;
    };
    let before = rw.root().join("cozystack-kubeovn-before");
    let pkg = package("kubeovn");
    for p in config(&pkg).patches {
        let real = before.join(&p.file);
        assert!(real.is_file(), "{} is not in the real package", p.file);
        pkg.write(&p.file, std::fs::read(real).unwrap());
    }
    config(&pkg);
    validated_by_the_binary(&pkg);
}

#[test]
fn kamaji_vendors_both_charts_at_edge_releases() {
    let pkg = package("kamaji");
    let c = config(&pkg);
    let up = c.upstream(None);
    assert!(up.allow_prerelease);
    assert_eq!(up.semver("edge-25.8.1").unwrap().to_string(), "25.8.1");
    assert_eq!(up.semver("v1.0.0"), None);
    assert_eq!(c.vendor[0].from, "charts/");
    assert_eq!(c.patches_for(AppliesTo::Source).count(), 2);
    assert_eq!(c.patches_for(AppliesTo::Vendor).count(), 0);
    assert_eq!(
        c.rewrites[0].value(&up.placeholders("edge-25.8.1", None)),
        "edge-25.8.1"
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
    assert_eq!(up.semver("3.97").unwrap().to_string(), "3.97.0");
    assert_eq!(
        (c.vendor[0].from.as_str(), c.vendor[0].to.as_str()),
        ("k8s/charts/seaweedfs/", "charts/seaweedfs/")
    );
    assert_eq!(c.patches_for(AppliesTo::Vendor).count(), 8);
    assert!(c.images.is_empty() && c.pins.is_empty());
    validated_by_the_binary(&pkg);
}
