//! issue 12: cozystack's real kube-ovn package, which vendors the whole `charts/kube-ovn`
//! directory, adopted at v1.14.5 and updated to v1.14.11 as cozystack's commit c3f70abc9 did
//! (REVENDOR_REALWORLD; the stand-in serves the real chart at both tags).
//!
//! The package's Makefile applies its two chart patches with GNU `patch -p4` and its default
//! fuzz 2: cozyconfig.diff's values.yaml hunk lands only with fuzz there. Adoption takes that
//! because the result is the committed chart, and refreshes the patches to exact hunks.

use crate::support;

use std::path::Path;
use std::process::Command;

use support::realworld::{KUBE_OVN_GO, file_for_patch};
use support::{GitHub, Realworld, Revendor, TempPackage};

const BEFORE: &str = "cozystack-kubeovn-before";
const AFTER: &str = "cozystack-kubeovn-after";
const DOCKERFILE: &str = "images/kubeovn/Dockerfile";
const PATCHES: [&str; 2] = ["patches/cozyconfig.diff", "patches/mtu.diff"];
const GO_PATCH: &str = "images/kubeovn/patches/northd_probe.diff";

/// A vendor.toml for cozystack's kube-ovn package as its Makefile vendors it: the chart
/// directory, both chart patches with `-p4`, the Go source patch, and both Dockerfile ARGs
/// set to the chart version (`v1.14.5`, with its `v`: the Makefile writes Chart.yaml's
/// `version:` there, so `{version}` is what it means; `{semver}` is for an ARG without it).
const VENDOR_TOML: &str = r#"[upstream]
github = "kubeovn/kube-ovn"
version = "v1.14.5"
track = ">=1.14.0, <1.15.0"

[[vendor]]
from = "charts/kube-ovn/"
to = "charts/kube-ovn/"

[[patch]]
name = "cozyconfig"
file = "patches/cozyconfig.diff"
applies-to = "vendor"
strip = 4

[[patch]]
name = "mtu"
file = "patches/mtu.diff"
applies-to = "vendor"
strip = 4

[[patch]]
name = "northd-probe"
file = "images/kubeovn/patches/northd_probe.diff"
applies-to = "source"
strip = 1

[[rewrite]]
file = "images/kubeovn/Dockerfile"
dockerfile-arg = "VERSION"
with = "{version}"

[[rewrite]]
file = "images/kubeovn/Dockerfile"
dockerfile-arg = "TAG"
with = "{version}"
"#;

fn package(rw: &Realworld) -> TempPackage {
    let pkg = TempPackage::new();
    pkg.copy_from(&rw.root().join(BEFORE), "");
    pkg.write("vendor.toml", VENDOR_TOML);
    pkg
}

/// Every file under `rel` of `dir`, by path relative to `rel`.
fn files_under(dir: &Path, rel: &str) -> std::collections::BTreeMap<String, Vec<u8>> {
    support::package::read_tree(&dir.join(rel))
}

#[test]
fn cozystacks_kube_ovn_is_adopted_at_v1_14_5_and_updated_to_v1_14_11_as_cozystack_did() {
    let Some(rw) = Realworld::from_env() else {
        return;
    };
    let gh = GitHub::start();
    rw.register_kube_ovn_chart(&gh);
    let pkg = package(&rw);
    let rv = Revendor::new(pkg.path(), &gh);

    // Adoption: the fuzz-2 hunk is taken because its result is the committed chart.
    let out = rv.run(&["update", "--to", "v1.14.5"]).expect(0);
    let said = &out.stdout;
    assert!(said.contains("adopted the package at v1.14.5"), "{said}");
    assert!(
        said.contains("patch cozyconfig on charts/kube-ovn/values.yaml: hunk 1")
            && said.contains("needed fuzz 2"),
        "{said}"
    );
    assert_eq!(
        files_under(pkg.path(), "charts"),
        files_under(&rw.root().join(BEFORE), "charts"),
        "adoption renders the committed chart"
    );
    let lock = pkg.read_string("upstream/lock.toml");
    assert_eq!(lock.matches("[[file]]").count(), 27, "{lock}");
    assert_eq!(lock.matches("[[output]]").count(), 27, "{lock}");
    rv.run(&["check"]).expect(0);

    // The real bump.
    gh.clear_requests();
    let out = rv.run(&["update", "--to", "v1.14.11"]).expect(0);
    // One trees request lists the chart; only the four files that changed are downloaded.
    let requests = gh.requests();
    assert_eq!(
        requests.count("/repos/kubeovn/kube-ovn/git/trees/v1.14.11"),
        1
    );
    let raw = requests.matching(&gh.raw_url());
    assert_eq!(raw.len(), 4, "{:?}", requests.targets());
    assert!(
        out.stdout.contains("upstream: v1.14.5 -> v1.14.11"),
        "{}",
        out.stdout
    );
    let ours = files_under(pkg.path(), "charts");
    let cozystacks = files_under(&rw.root().join(AFTER), "charts");
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        cozystacks.keys().collect::<Vec<_>>()
    );
    for (path, bytes) in &cozystacks {
        assert!(
            ours[path] == *bytes,
            "charts/{path} differs from cozystack's v1.14.11 chart"
        );
    }
    let dockerfile = pkg.read_string(DOCKERFILE);
    let before = String::from_utf8(rw.read(&format!("{BEFORE}/{DOCKERFILE}"))).unwrap();
    assert_eq!(
        dockerfile,
        before
            .replace("ARG VERSION=v1.14.5\n", "ARG VERSION=v1.14.11\n")
            .replace("ARG TAG=v1.14.5\n", "ARG TAG=v1.14.11\n"),
        "both ARGs moved, nothing else"
    );
    let lock = pkg.read_string("upstream/lock.toml");
    let commit = rw.fact_str(&["kube-ovn-chart", "commits", "v1.14.11"]);
    assert!(lock.contains(&format!("commit = \"{commit}\"")), "{lock}");

    // The refreshed patches apply to v1.14.11 with real GNU patch, zero fuzz, no offset,
    // in the Makefile's order.
    let scratch = tempfile::tempdir().unwrap();
    let upstream = TempPackage::new();
    upstream.copy_from(&rw.root().join("kube-ovn/v1.14.11"), "");
    for patch in PATCHES {
        let out = Command::new("patch")
            .current_dir(upstream.path())
            .args(["-F0", "-p4", "--no-backup-if-mismatch", "-i"])
            .arg(pkg.join(patch))
            .output()
            .expect("GNU patch");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{patch}: {text}");
        assert!(
            !text.contains("offset") && !text.contains("fuzz"),
            "{patch}: {text}"
        );
    }
    assert_eq!(
        files_under(upstream.path(), "charts"),
        cozystacks,
        "GNU patch -F0 of the refreshed patches gives cozystack's chart"
    );
    // The refreshed source patch applies exactly to the (stand-in) Go source the tag serves.
    let go = scratch.path().join("ovn.go");
    let original = rw.read(&format!("{BEFORE}/{GO_PATCH}"));
    std::fs::write(&go, file_for_patch(&original)).unwrap();
    let status = Command::new("patch")
        .args(["--dry-run", "-F0", "-p1", "-s"])
        .arg(&go)
        .arg(pkg.join(GO_PATCH))
        .status()
        .expect("GNU patch");
    assert!(status.success(), "{KUBE_OVN_GO}");

    rv.run(&["check"]).expect(0);
}
