//! `revendor update --continue` (issue 9, item 1): after `--keep-conflicts`
//! and a hand resolution, the resolved files become the patched result at the
//! new release, the patches are rebased onto them, and the update finishes.
//!
//! The multus case runs on the real manifests (REVENDOR_REALWORLD): the next
//! release changes hunk 5's context `terminationGracePeriodSeconds: 10` to
//! `30`. The synthetic cases run everywhere.

use crate::support;

use std::path::Path;
use std::process::Command;

use support::daemonset::VendorToml;
use support::realworld::cozystack_vendor_toml;
use support::{GitHub, Realworld, Revendor, TempPackage};

const TEMPLATE: &str = "templates/multus-daemonset-thick.yml";
const PATCH: &str = "patches/customize-deployment.patch";
const GO_PATCH: &str = "images/multus-cni/patches/fix-del-without-cache.diff";
const LOCK: &str = "upstream/lock.toml";

/// `text` with its one conflict region replaced by `pick(ours, theirs)`.
fn resolve(text: &str, pick: impl Fn(&str, &str) -> String) -> String {
    let start = text.find("<<<<<<< ours").expect("a conflict");
    let ours_at = start + text[start..].find('\n').unwrap() + 1;
    let base = text.find("||||||| base").unwrap();
    let sep = text.find("=======\n").unwrap();
    let end_marker = text.find(">>>>>>> theirs").unwrap();
    let end = end_marker + text[end_marker..].find('\n').unwrap() + 1;
    let ours = &text[ours_at..base];
    let theirs = &text[sep + "=======\n".len()..end_marker];
    format!("{}{}{}", &text[..start], pick(ours, theirs), &text[end..])
}

fn assert_exact_with_gnu_patch(target: &Path, patch: &Path, strip: usize) {
    let out = Command::new("patch")
        .args(["--dry-run", "-F0", &format!("-p{strip}")])
        .arg(target)
        .arg(patch)
        .output()
        .expect("GNU patch");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(!text.contains("offset") && !text.contains("fuzz"), "{text}");
}

#[test]
fn the_multus_conflict_resolved_by_hand_finishes_with_continue() {
    let Some(rw) = Realworld::from_env() else {
        eprintln!("REVENDOR_REALWORLD is not set; skipping the realworld --continue test");
        return;
    };
    let gh = GitHub::start();
    rw.register_multus(&gh);
    rw.register_multus_source(&gh);
    rw.publish_unreleased(&gh, "v4.4.0");
    let pkg = TempPackage::new();
    for f in ["Chart.yaml", "values.yaml", TEMPLATE, PATCH, GO_PATCH] {
        pkg.write(f, rw.read(&format!("cozystack-multus/{f}")));
    }
    pkg.write("vendor.toml", cozystack_vendor_toml("v4.3.0"));
    pkg.write(
        "images/multus-cni/Dockerfile",
        format!(
            "FROM golang:1.26@sha256:{} AS builder\nARG VERSION=v4.3.0\nRUN true\n",
            "0".repeat(64)
        ),
    );
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v4.3.0"]).expect(0);

    let out = rv
        .run(&["update", "--to", "v4.4.0", "--keep-conflicts"])
        .expect(1);
    assert!(
        out.stderr.contains(&format!(
            "resolve the markers in {TEMPLATE}, then run `revendor update --continue`"
        )),
        "{}",
        out.stderr
    );
    let lock = pkg.read_string(LOCK);
    assert!(
        lock.contains("version = \"v4.3.0\"") && lock.contains("[pending]\nversion = \"v4.4.0\""),
        "{lock}"
    );

    // check points at --continue, not at --adopt-edits.
    let out = rv.run(&["check", "--format", "json"]).expect(1);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let drift: Vec<&serde_json::Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "render-drift")
        .collect();
    assert_eq!(drift.len(), 1, "{drift:?}");
    assert_eq!(drift[0]["line"], 257, "{drift:?}");
    assert!(
        drift[0]["fix"]
            .as_str()
            .unwrap()
            .contains("revendor update --continue"),
        "{drift:?}"
    );

    // Leftover markers are refused with their lines; nothing is written.
    let before = pkg.snapshot();
    let out = rv.run(&["update", "--continue"]).expect(1);
    assert!(
        out.stderr
            .contains(&format!("{TEMPLATE}:257 `<<<<<<< ours (patched v4.3.0)`")),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains(&format!("{TEMPLATE}:338 `>>>>>>> theirs (v4.4.0)`")),
        "{}",
        out.stderr
    );
    assert_eq!(pkg.snapshot(), before);

    // The maintainer keeps the patch's stageCniPlugins block and takes
    // upstream's 30.
    let resolved = resolve(&pkg.read_string(TEMPLATE), |ours, theirs| {
        assert_eq!(theirs, "      terminationGracePeriodSeconds: 30\n");
        assert!(ours.contains("$stageCniPlugins"), "{ours}");
        ours.replace(
            "terminationGracePeriodSeconds: 10",
            "terminationGracePeriodSeconds: 30",
        )
    });
    pkg.write(TEMPLATE, &resolved);

    // A plain update does not take the resolution for hand edits.
    let out = rv.run(&["update", "--to", "v4.4.0"]).expect(1);
    assert!(
        out.stderr.contains("revendor update --continue"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("--adopt-edits"), "{}", out.stderr);

    let out = rv.run(&["update", "--continue"]).expect(0);
    assert!(
        out.stdout.contains("upstream: v4.3.0 -> v4.4.0"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "patch customize-deployment on templates/multus-daemonset-thick.yml: resolved by hand"
        ),
        "{}",
        out.stdout
    );
    let lock = pkg.read_string(LOCK);
    assert!(lock.contains("version = \"v4.4.0\""), "{lock}");
    assert!(!lock.contains("[pending]"), "{lock}");
    assert_eq!(
        pkg.read_string("vendor.toml"),
        cozystack_vendor_toml("v4.4.0")
    );
    assert_eq!(
        pkg.read("upstream/deployments/multus-daemonset-thick.yml"),
        rw.unreleased_manifest()
    );
    assert_eq!(pkg.read_string(TEMPLATE), resolved);
    assert!(
        resolved.contains("      - \"resource.k8s.io\"\n"),
        "upstream's new RBAC rules are upstream's, not a patch's"
    );
    assert!(
        !pkg.read_string(PATCH).contains("resource.k8s.io"),
        "{}",
        pkg.read_string(PATCH)
    );

    // render reproduces the resolved file; the package checks clean of drift.
    pkg.remove(TEMPLATE);
    rv.run(&["render"]).expect(0);
    assert_eq!(pkg.read_string(TEMPLATE), resolved);
    let out = rv.run(&["check", "--format", "json"]);
    assert!(
        !out.stdout.contains("render-drift") && !out.stdout.contains("lock-integrity"),
        "{}",
        out.stdout
    );

    // The refreshed patch applies to the new manifest with GNU patch, at
    // zero fuzz and no offset.
    let scratch = tempfile::tempdir().unwrap();
    let manifest = scratch.path().join("m.yml");
    std::fs::write(&manifest, rw.unreleased_manifest()).unwrap();
    assert_exact_with_gnu_patch(&manifest, &pkg.join(PATCH), 4);

    // And refreshing it again changes nothing.
    let before = pkg.snapshot();
    rv.run(&["patch", "refresh"]).expect(0);
    assert_eq!(pkg.snapshot(), before);
}

const REPO: &str = "example/app";
const FILE: &str = "deploy/app.yml";
const APP: &str = "templates/app.yml";

fn manifest(namespace: &str) -> String {
    format!(
        "kind: Deployment\nmetadata:\n  name: app\n  namespace: {namespace}\nspec:\n  template:\n    spec:\n\
         \x20     containers:\n        - name: app\n          image: example.org/app:snapshot\n\
         \x20         resources:\n            limits:\n              memory: 64Mi\n"
    )
}

const NAMESPACE: &str = "--- a/templates/app.yml
+++ b/templates/app.yml
@@ -1,7 +1,7 @@
 kind: Deployment
 metadata:
   name: app
-  namespace: default
+  namespace: cozy-app
 spec:
   template:
     spec:
";

const MEMORY: &str = "--- a/templates/app.yml
+++ b/templates/app.yml
@@ -10,4 +10,4 @@
           image: example.org/app:snapshot
           resources:
             limits:
-              memory: 64Mi
+              memory: 128Mi
";

/// v1.0.0, and v1.1.0 whose namespace changes under the first patch.
fn two_patch_package(gh: &GitHub) -> TempPackage {
    gh.repo(REPO)
        .file_at("v1.0.0", FILE, manifest("default"))
        .release("v1.0.0", |r| r)
        .file_at("v1.1.0", FILE, manifest("apps"))
        .release("v1.1.0", |r| r);
    let pkg = TempPackage::new();
    pkg.write(
        "vendor.toml",
        VendorToml::new().memory_patch().snapshot_rewrite().text(),
    )
    .write("patches/namespace.patch", NAMESPACE)
    .write("patches/memory.patch", MEMORY);
    pkg
}

#[test]
fn continue_gives_the_first_conflicting_patch_the_resolution_and_keeps_the_next_one() {
    let gh = GitHub::start();
    let pkg = two_patch_package(&gh);
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    rv.run(&["update", "--keep-conflicts"]).expect(1);
    let resolved = resolve(&pkg.read_string(APP), |ours, theirs| {
        assert_eq!(
            (ours, theirs),
            ("  namespace: cozy-app\n", "  namespace: apps\n")
        );
        "  namespace: cozy-apps\n".into()
    });
    assert!(
        resolved.contains("image: example.org/app:v1.1.0\n"),
        "{resolved}"
    );
    pkg.write(APP, &resolved);

    let out = rv.run(&["update", "--continue"]).expect(0);
    assert!(
        out.stdout
            .contains("patch memory on templates/app.yml: refreshed on the resolution"),
        "{}",
        out.stdout
    );
    assert_eq!(pkg.read_string(APP), resolved);
    assert_eq!(
        pkg.read_string("patches/namespace.patch"),
        NAMESPACE
            .replace("-  namespace: default", "-  namespace: apps")
            .replace("+  namespace: cozy-app", "+  namespace: cozy-apps")
    );
    assert_eq!(pkg.read_string("patches/memory.patch"), MEMORY);
    assert!(pkg.read_string(LOCK).contains("version = \"v1.1.0\""));
    pkg.remove(APP);
    rv.run(&["render"]).expect(0);
    assert_eq!(pkg.read_string(APP), resolved);
}

#[test]
fn a_resolution_without_the_next_patchs_change_is_refused() {
    let gh = GitHub::start();
    let pkg = two_patch_package(&gh);
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    rv.run(&["update", "--keep-conflicts"]).expect(1);
    let resolved = resolve(&pkg.read_string(APP), |_, _| {
        "  namespace: cozy-apps\n".into()
    })
    .replace("memory: 128Mi", "memory: 256Mi");
    pkg.write(APP, resolved);
    let before = pkg.snapshot();
    let out = rv.run(&["update", "--continue"]).expect(1);
    assert!(
        out.stderr
            .contains("patch `memory` (patches/memory.patch) does not come off the resolution"),
        "{}",
        out.stderr
    );
    assert_eq!(pkg.snapshot(), before);
}

#[test]
fn continue_with_nothing_pending_is_a_usage_error() {
    let gh = GitHub::start();
    let pkg = two_patch_package(&gh);
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    let before = pkg.snapshot();
    let out = rv.run(&["update", "--continue"]).expect(2);
    assert!(
        out.stderr
            .contains("nothing to continue: no update is pending"),
        "{}",
        out.stderr
    );
    rv.run(&["update", "--continue", "--to", "v1.1.0"])
        .expect(2);
    assert_eq!(pkg.snapshot(), before);
}

#[test]
fn a_first_update_that_conflicts_can_be_continued() {
    let gh = GitHub::start();
    let pkg = two_patch_package(&gh);
    let rv = Revendor::new(pkg.path(), &gh);
    // No lock yet: adopting at v1.0.0 and moving to v1.1.0 in one run.
    rv.run(&["update", "--keep-conflicts"]).expect(1);
    let lock = pkg.read_string(LOCK);
    assert!(
        lock.contains("version = \"v1.0.0\"") && lock.contains("[pending]\nversion = \"v1.1.0\""),
        "{lock}"
    );
    let resolved = resolve(&pkg.read_string(APP), |_, _| {
        "  namespace: cozy-apps\n".into()
    });
    pkg.write(APP, &resolved);
    rv.run(&["update", "--continue"]).expect(0);
    assert_eq!(pkg.read_string(APP), resolved);
    let lock = pkg.read_string(LOCK);
    assert!(
        lock.contains("version = \"v1.1.0\"") && !lock.contains("[pending]"),
        "{lock}"
    );
}
