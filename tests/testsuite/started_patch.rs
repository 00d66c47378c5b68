//! Starting a patch from a hand edit (issue 20): cozystack's CRD packages add
//! `helm.sh/resource-policy: keep` after the download with awk. With a `[[patch]]` entry whose
//! file does not exist yet, `render --adopt-edits` and `update --adopt-edits` write that patch
//! from the edit of a vendored file no patch targets, say so, and the patch then travels with
//! the updates like any other.

use crate::support;

use support::{GitHub, Revendor, TempPackage};

const REPO: &str = "example/crds";
const CRD: &str = "templates/crd.yml";
const PATCH: &str = "patches/keep.patch";

fn crd(version: &str) -> String {
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: clusters.example.org\n  annotations:\n    example.org/owner: team\nspec:\n  group: example.org\n  names:\n    kind: Cluster\n    plural: clusters\n  scope: Namespaced\n  versions:\n    - name: {version}\n"
    )
}

fn kept(version: &str) -> String {
    crd(version).replace(
        "  annotations:\n",
        "  annotations:\n    helm.sh/resource-policy: keep\n",
    )
}

const VENDOR_TOML: &str = r#"[upstream]
github = "example/crds"
version = "v1.0.0"
track = ">=1.0.0, <2.0.0"

[[vendor]]
from = "deploy/crd.yml"
to = "templates/crd.yml"
"#;

const KEEP: &str = r#"
[[patch]]
name = "keep"
file = "patches/keep.patch"
applies-to = "vendor"
"#;

/// The package adopted at v1.0.0 (no patch), then edited as the Makefile's awk did.
fn edited(gh: &GitHub) -> (TempPackage, Revendor) {
    for tag in ["v1.0.0", "v1.1.0"] {
        gh.repo(REPO)
            .file_at(tag, "deploy/crd.yml", crd(tag))
            .release(tag, |r| r);
    }
    let pkg = TempPackage::new();
    pkg.write("vendor.toml", VENDOR_TOML);
    let rv = Revendor::new(pkg.path(), gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    assert_eq!(pkg.read_string(CRD), crd("v1.0.0"));
    pkg.write(CRD, kept("v1.0.0"));
    (pkg, rv)
}

const STARTED: &str =
    "started patch `keep` in patches/keep.patch from the hand edits (it did not exist)";

#[test]
fn render_adopt_edits_starts_the_patch_a_new_patch_entry_names() {
    let gh = GitHub::start();
    let (pkg, rv) = edited(&gh);

    // No patch targets the file: the advice says how to start one.
    let run = rv.run(&["render", "--adopt-edits"]).expect(1);
    assert!(
        run.stderr
            .contains("`templates/crd.yml` has hand edits and no patch targets it")
            && run
                .stderr
                .contains("add a [[patch]] for it whose `file` does not exist yet"),
        "{}",
        run.stderr
    );

    pkg.write("vendor.toml", format!("{VENDOR_TOML}{KEEP}"));
    let before = pkg.snapshot();
    // With the file unedited, nothing starts the patch: refused, nothing written.
    pkg.write(CRD, crd("v1.0.0"));
    let run = rv.run(&["render", "--adopt-edits"]).expect(2);
    assert!(
        run.stderr
            .contains("no hand edit of a file without a patch started it"),
        "{}",
        run.stderr
    );
    pkg.write(CRD, kept("v1.0.0"));
    assert_eq!(pkg.snapshot(), before);
    let run = rv.run(&["render"]).expect(2);
    assert!(
        run.stderr
            .contains("vendor.toml:12: patch file `patches/keep.patch` does not exist")
            && run.stderr.contains(
                "run `revendor render --adopt-edits`, which starts the patch from the edit"
            ),
        "{}",
        run.stderr
    );
    assert_eq!(pkg.snapshot(), before);

    let run = rv.run(&["render", "--adopt-edits"]).expect(0);
    assert!(
        run.stdout.contains(
            "hand edit templates/crd.yml:6 adopted into patch keep:     helm.sh/resource-policy: keep"
        ) && run.stdout.contains(STARTED),
        "{}",
        run.stdout
    );
    assert_eq!(
        pkg.read_string(PATCH),
        "--- a/templates/crd.yml\n+++ b/templates/crd.yml\n@@ -3,6 +3,7 @@\n metadata:\n   name: clusters.example.org\n   annotations:\n+    helm.sh/resource-policy: keep\n     example.org/owner: team\n spec:\n   group: example.org\n"
    );
    assert_eq!(pkg.read_string(CRD), kept("v1.0.0"));
    assert!(
        pkg.read_string("upstream/lock.toml")
            .contains("name = \"keep\"")
    );
    rv.run(&["check"]).expect(0);

    // The started patch is a patch like any other: the next update carries it.
    rv.run(&["update"]).expect(0);
    assert_eq!(pkg.read_string(CRD), kept("v1.1.0"));
}

#[test]
fn update_adopt_edits_starts_the_patch_and_moves_with_it() {
    let gh = GitHub::start();
    let (pkg, rv) = edited(&gh);
    pkg.write("vendor.toml", format!("{VENDOR_TOML}{KEEP}"));
    let run = rv.run(&["update", "--adopt-edits"]).expect(0);
    assert!(run.stdout.contains(STARTED), "{}", run.stdout);
    assert!(pkg.join(PATCH).exists());
    assert_eq!(pkg.read_string(CRD), kept("v1.1.0"));
    rv.run(&["check"]).expect(0);
}
