//! `revendor update` and `render` on cozystack's real multus package, served
//! from the real upstream manifests (REVENDOR_REALWORLD).
//!
//! The multus Go source is not in realworld; `Realworld::register_multus_source`
//! serves a stand-in tree rebuilt from the old side of cozystack's Go patch.

use crate::support;

use std::process::Command;

use support::realworld::{cozystack_vendor_toml, multus_go};
use support::{GitHub, Realworld, Revendor, TempPackage};

const REPO: &str = "k8snetworkplumbingwg/multus-cni";
const TEMPLATE: &str = "templates/multus-daemonset-thick.yml";
const PATCH: &str = "patches/customize-deployment.patch";
const GO_PATCH: &str = "images/multus-cni/patches/fix-del-without-cache.diff";
const DOCKERFILE: &str = "images/multus-cni/Dockerfile";

struct World {
    rw: Realworld,
    gh: GitHub,
}

fn world() -> Option<World> {
    let Some(rw) = Realworld::from_env() else {
        eprintln!("REVENDOR_REALWORLD is not set; skipping the realworld update tests");
        return None;
    };
    let gh = GitHub::start();
    rw.register_multus(&gh);
    rw.register_multus_source(&gh);
    Some(World { rw, gh })
}

/// cozystack's package: its patches, values, Chart and template, a
/// Dockerfile of ours, and a vendor.toml at `version`; no lock.
fn cozystack_package(w: &World, version: &str) -> TempPackage {
    let pkg = TempPackage::new();
    for f in ["Chart.yaml", "values.yaml", TEMPLATE, PATCH, GO_PATCH] {
        pkg.write(f, w.rw.read(&format!("cozystack-multus/{f}")));
    }
    pkg.write("vendor.toml", cozystack_vendor_toml(version));
    pkg.write(
        DOCKERFILE,
        format!(
            "FROM golang:1.26@sha256:{} AS builder\nARG VERSION={version}\nRUN true\n",
            "0".repeat(64)
        ),
    );
    pkg
}

fn template_without_nad(w: &World) -> Vec<u8> {
    let t = String::from_utf8(w.rw.read(&format!("cozystack-multus/{TEMPLATE}"))).unwrap();
    assert!(t.contains("      - nad\n"));
    t.replacen("      - nad\n", "", 1).into_bytes()
}

#[test]
fn adopting_cozystack_at_v4_3_0_then_render_reproduces_its_template() {
    let Some(w) = world() else { return };
    let pkg = cozystack_package(&w, "v4.3.0");
    let rv = Revendor::new(pkg.path(), &w.gh);
    let out = rv.run(&["update", "--to", "v4.3.0"]).expect(0);
    assert!(
        out.stdout.contains("adopted the package at v4.3.0"),
        "{}",
        out.stdout
    );

    let lock = pkg.read_string("upstream/lock.toml");
    assert!(lock.contains("version = \"v4.3.0\""), "{lock}");
    let pinned = w.rw.fact_str(&["cozystack-multus", "pinned-image"]);
    assert!(
        lock.contains(&format!("reference = \"{pinned}\"")),
        "{lock}"
    );
    assert!(lock.contains("go-directive = \"1.25.0\""), "{lock}");

    pkg.remove(TEMPLATE);
    rv.run(&["render"]).expect(0);
    assert_eq!(
        pkg.read(TEMPLATE),
        w.rw.read(&format!("cozystack-multus/{TEMPLATE}")),
        "render must reproduce cozystack's template byte for byte"
    );
    // A second render changes nothing.
    let out = rv.run(&["render"]).expect(0);
    assert!(out.stdout.contains("no file changed"), "{}", out.stdout);
}

#[test]
fn from_v4_2_4_update_moves_to_v4_3_0_and_keeps_the_pin() {
    let Some(w) = world() else { return };
    let pkg = cozystack_package(&w, "v4.2.4");
    pkg.write(TEMPLATE, template_without_nad(&w));
    let rv = Revendor::new(pkg.path(), &w.gh);
    let out = rv.run(&["update", "--to", "v4.3.0"]).expect(0);
    assert!(
        out.stdout.contains("upstream: v4.2.4 -> v4.3.0"),
        "{}",
        out.stdout
    );

    let template = pkg.read_string(TEMPLATE);
    assert!(
        template.contains("      - nad\n"),
        "the v4.3.0 shortName arrived"
    );
    assert_eq!(
        pkg.read(TEMPLATE),
        w.rw.read(&format!("cozystack-multus/{TEMPLATE}"))
    );
    let pinned = w.rw.fact_str(&["cozystack-multus", "pinned-image"]);
    assert_eq!(
        template.matches(pinned).count(),
        3,
        "all three image lines keep the pin"
    );
    assert!(pkg.read_string(DOCKERFILE).contains("ARG VERSION=v4.3.0\n"));
    assert_eq!(
        pkg.read_string("vendor.toml"),
        cozystack_vendor_toml("v4.3.0"),
        "update moves `version` and nothing else"
    );
    let lock = pkg.read_string("upstream/lock.toml");
    assert!(lock.contains("version = \"v4.3.0\""), "{lock}");
    assert!(lock.contains(&format!(
        "commit = \"{}\"",
        w.rw.multus_commit("v4.3.0").unwrap()
    )));
    assert_eq!(
        pkg.read("upstream/deployments/multus-daemonset-thick.yml"),
        w.rw.multus_manifest("v4.3.0")
    );
    // The Go patch (made against v4.2.3) came back exact for v4.3.0.
    let go = pkg.read_string(GO_PATCH);
    assert!(go.contains("@@ -1060,33 +1060,19 @@ func CmdDel"), "{go}");
    // Its index line names v4.3.0's blobs now, not the v4.2.3 ones it was made from.
    let index = go.lines().nth(1).unwrap_or_default();
    assert!(
        go.starts_with("diff --git a/pkg/multus/multus.go b/pkg/multus/multus.go\nindex ")
            && index != "index a7941fe..eff0406 100644"
            && index.ends_with(" 100644"),
        "{go}"
    );
}

#[test]
fn an_unreleased_tag_names_the_failing_hunk_and_writes_nothing() {
    let Some(w) = world() else { return };
    w.rw.publish_unreleased(&w.gh, "v4.4.0");
    let pkg = cozystack_package(&w, "v4.3.0");
    let rv = Revendor::new(pkg.path(), &w.gh);
    rv.run(&["update", "--to", "v4.3.0"]).expect(0);
    let before = pkg.snapshot();

    let out = rv.run(&["update"]).expect(1);
    let all = out.all();
    assert!(all.contains("v4.3.0 -> v4.4.0"), "{all}");
    assert!(all.contains("hunk #5 `@@ -220,6 +245,81 @@`"), "{all}");
    assert!(
        all.contains("conflict (hunk 1 offset +9, hunk 2 offset +9, hunk 3 offset +9, hunk 4 offset +9, hunk 5 does not apply)"),
        "{all}"
    );
    assert!(all.contains("terminationGracePeriodSeconds: 10"), "{all}");
    assert!(all.contains("nothing was written"), "{all}");
    assert_eq!(pkg.snapshot(), before, "the tree must be byte-identical");
}

#[test]
fn keep_conflicts_writes_diff3_markers_and_keeps_the_lock() {
    let Some(w) = world() else { return };
    w.rw.publish_unreleased(&w.gh, "v4.4.0");
    let pkg = cozystack_package(&w, "v4.3.0");
    let rv = Revendor::new(pkg.path(), &w.gh);
    rv.run(&["update", "--to", "v4.3.0"]).expect(0);
    let lock = pkg.read("upstream/lock.toml");
    let patch = pkg.read(PATCH);

    let out = rv
        .run(&["update", "--to", "v4.4.0", "--keep-conflicts"])
        .expect(1);
    let template = pkg.read_string(TEMPLATE);
    for marker in [
        "<<<<<<< ours (patched v4.3.0)\n",
        "||||||| base (v4.3.0)\n",
        "=======\n",
        ">>>>>>> theirs (v4.4.0)\n",
    ] {
        assert_eq!(
            template.matches(marker).count(),
            1,
            "{marker} in\n{template}"
        );
    }
    assert!(
        out.stdout
            .contains("conflict in templates/multus-daemonset-thick.yml lines"),
        "{}",
        out.stdout
    );
    let after = pkg.read_string("upstream/lock.toml");
    let lock = String::from_utf8(lock).unwrap();
    assert!(
        after.starts_with(&lock)
            && after[lock.len()..].starts_with("\n[pending]\nversion = \"v4.4.0\"\n"),
        "the lock stays at v4.3.0 and records the pending update:\n{after}"
    );
    assert_eq!(pkg.read(PATCH), patch);
}

/// cozystack's package as it stood at v4.2.3: the manifest patch made
/// against v4.2.3 without the multusMasterCNI line, and a template that has
/// that line as a hand edit no patch carries.
fn package_at_v4_2_3_with_hand_edit(w: &World) -> TempPackage {
    let pkg = cozystack_package(w, "v4.2.3");
    let scratch = tempfile::tempdir().unwrap();
    let old = scratch.path().join("old.yml");
    let new = scratch.path().join("new.yml");
    std::fs::write(&old, w.rw.multus_manifest("v4.2.3")).unwrap();
    std::fs::write(&new, w.rw.multus_manifest("v4.2.3")).unwrap();
    let status = Command::new("patch")
        .args(["-p4", "-s", "-F0"])
        .arg(&new)
        .arg(w.rw.root().join("cozystack-multus").join(PATCH))
        .status()
        .expect("GNU patch");
    assert!(status.success());
    let edited = std::fs::read_to_string(&new).unwrap();
    let line = "        \"multusMasterCNI\": \"05-cilium.conflist\",\n";
    assert!(edited.contains(line));
    std::fs::write(&new, edited.replacen(line, "", 1)).unwrap();
    let label = "a/packages/system/multus/templates/multus-daemonset-thick.yml";
    let out = Command::new("diff")
        .args([
            "-u",
            "--label",
            label,
            "--label",
            &label.replacen("a/", "b/", 1),
        ])
        .arg(&old)
        .arg(&new)
        .output()
        .expect("GNU diff");
    assert_eq!(out.status.code(), Some(1));
    pkg.write(PATCH, out.stdout);
    pkg.write(TEMPLATE, template_without_nad(w));
    pkg
}

#[test]
fn a_hand_edit_stops_the_update_and_is_named() {
    let Some(w) = world() else { return };
    let pkg = package_at_v4_2_3_with_hand_edit(&w);
    let before = pkg.snapshot();
    let rv = Revendor::new(pkg.path(), &w.gh);
    let out = rv.run(&["update", "--to", "v4.3.0"]).expect(1);
    let all = out.all();
    assert!(all.contains("hand edit"), "{all}");
    assert!(all.contains("multusMasterCNI"), "{all}");
    assert!(all.contains("--adopt-edits"), "{all}");
    assert_eq!(pkg.snapshot(), before);
}

#[test]
fn adopt_edits_from_v4_2_3_reproduces_cozystacks_v4_3_0_template() {
    let Some(w) = world() else { return };
    let pkg = package_at_v4_2_3_with_hand_edit(&w);
    let rv = Revendor::new(pkg.path(), &w.gh);
    let out = rv
        .run(&["update", "--to", "v4.3.0", "--adopt-edits"])
        .expect(0);
    assert!(
        out.stdout
            .contains("adopted into patch customize-deployment"),
        "{}",
        out.stdout
    );
    assert_eq!(
        pkg.read_string(TEMPLATE),
        String::from_utf8(w.rw.read(&format!("cozystack-multus/{TEMPLATE}"))).unwrap()
    );
    assert!(
        pkg.read_string("upstream/lock.toml")
            .contains("version = \"v4.3.0\"")
    );

    // Both patches apply with GNU patch at zero fuzz and no offset.
    let scratch = tempfile::tempdir().unwrap();
    let manifest = scratch.path().join("m.yml");
    std::fs::write(&manifest, w.rw.multus_manifest("v4.3.0")).unwrap();
    assert_exact_with_gnu_patch(&manifest, &pkg.join(PATCH), 4);
    let go = scratch.path().join("multus.go");
    let patch =
        w.rw.read("cozystack-multus/images/multus-cni/patches/fix-del-without-cache.diff");
    std::fs::write(&go, multus_go(&patch, 1060)).unwrap();
    assert_exact_with_gnu_patch(&go, &pkg.join(GO_PATCH), 1);
    // And `git apply`, as the image build runs it, takes it without complaint.
    let tree = scratch.path().join("src");
    std::fs::create_dir_all(tree.join("pkg/multus")).unwrap();
    std::fs::write(tree.join("pkg/multus/multus.go"), multus_go(&patch, 1060)).unwrap();
    let out = Command::new("git")
        .current_dir(&tree)
        .args(["apply", "--check", "--verbose"])
        .arg(pkg.join(GO_PATCH))
        .output()
        .expect("git apply");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !said.contains("warning"), "{said}");

    // Refresh right after an update is a no-op (idempotent).
    let before = pkg.snapshot();
    rv.run(&["patch", "refresh"]).expect(0);
    assert_eq!(pkg.snapshot(), before);
}

fn assert_exact_with_gnu_patch(target: &std::path::Path, patch: &std::path::Path, strip: usize) {
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

/// The repository root is the multus package: its own patches (written for
/// this repository) apply exactly to real multus v4.3.0.
#[test]
fn the_root_package_patches_apply_exactly_to_real_v4_3_0() {
    let Some(w) = world() else { return };
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |rel: &str| std::fs::read(root.join(rel)).unwrap();
    // The source tree at v4.3.0: CmdDel where the root's Go patch says it is.
    w.gh.repo(REPO).file_at(
        "v4.3.0",
        "pkg/multus/multus.go",
        multus_go(&read(GO_PATCH), 1060),
    );
    let pkg = TempPackage::new();
    for f in [
        "vendor.toml",
        "Chart.yaml",
        "values.yaml",
        PATCH,
        GO_PATCH,
        DOCKERFILE,
    ] {
        pkg.write(f, read(f));
    }
    let rv = Revendor::new(pkg.path(), &w.gh);
    let out = rv.run(&["update", "--to", "v4.3.0"]).expect(0);
    assert!(
        out.stdout
            .contains("patch customize-deployment on templates/multus-daemonset-thick.yml: exact"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("patch fix-del-without-cache on pkg/multus/multus.go: exact"),
        "{}",
        out.stdout
    );
    assert_eq!(
        pkg.read(PATCH),
        read(PATCH),
        "an exact patch is not rewritten"
    );
    assert_eq!(pkg.read(GO_PATCH), read(GO_PATCH));
    let t = pkg.read_string(TEMPLATE);
    assert!(t.contains("\"multusMasterCNI\": \"05-cilium.conflist\""));
    assert_eq!(
        t.matches("image: ghcr.io/k8snetworkplumbingwg/multus-cni:v4.3.0-thick")
            .count(),
        3,
        "{t}"
    );
}
