//! Removing a `[[patch]]` or a `[[vendor]]` from vendor.toml (issue 9,
//! item 6): the lock remembers what each output was made from, so the next
//! `update` or `render` reverts the patch's changes or deletes the output,
//! and says so; `check` reports what is left as `render-drift`. A removed
//! source patch's file leaves the image's build context the same way
//! (issue 20), and `check` reports a patch file there that no `[[patch]]`
//! names (`patch-orphaned`).

use crate::support;

use support::{GitHub, Revendor, TempPackage};

const REPO: &str = "example/app";
const APP: &str = "templates/app.yml";
const EXTRA: &str = "templates/extra.yml";
const LOCK: &str = "upstream/lock.toml";

fn manifest(version: &str) -> String {
    format!(
        "kind: Deployment\nmetadata:\n  name: app\n  namespace: default\nspec:\n  template:\n    spec:\n\
         \x20     containers:\n        - name: app\n          image: example.org/app:{version}\n\
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
           image: example.org/app:v1.0.0
           resources:
             limits:
-              memory: 64Mi
+              memory: 128Mi
";

const UPSTREAM: &str = r#"[upstream]
github = "example/app"
version = "v1.0.0"
track = ">=1.0.0, <2.0.0"
"#;

const APP_VENDOR: &str = r#"
[[vendor]]
from = "deploy/app.yml"
to = "templates/app.yml"
"#;

const EXTRA_VENDOR: &str = r#"
[[vendor]]
from = "deploy/extra.yml"
to = "templates/extra.yml"
"#;

const NAMESPACE_PATCH: &str = r#"
[[patch]]
name = "namespace"
file = "patches/namespace.patch"
applies-to = "vendor"
"#;

const MEMORY_PATCH: &str = r#"
[[patch]]
name = "memory"
file = "patches/memory.patch"
applies-to = "vendor"
"#;

/// Two vendored files, two patches on the first; adopted at v1.0.0.
fn adopted(gh: &GitHub) -> (TempPackage, Revendor) {
    for tag in ["v1.0.0", "v1.1.0"] {
        gh.repo(REPO)
            .file_at(tag, "deploy/app.yml", manifest("v1.0.0"))
            .file_at(tag, "deploy/extra.yml", "kind: ConfigMap\n")
            .release(tag, |r| r);
    }
    let pkg = TempPackage::new();
    pkg.write(
        "vendor.toml",
        [
            UPSTREAM,
            APP_VENDOR,
            EXTRA_VENDOR,
            NAMESPACE_PATCH,
            MEMORY_PATCH,
        ]
        .concat(),
    )
    .write("patches/namespace.patch", NAMESPACE)
    .write("patches/memory.patch", MEMORY);
    let rv = Revendor::new(pkg.path(), gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    let t = pkg.read_string(APP);
    assert!(
        t.contains("namespace: cozy-app") && t.contains("memory: 128Mi"),
        "{t}"
    );
    let lock = pkg.read_string(LOCK);
    assert!(
        lock.contains("[[output]]\nfile = \"templates/app.yml\"\nfrom = \"deploy/app.yml\"\n"),
        "{lock}"
    );
    (pkg, rv)
}

fn drift(rv: &Revendor) -> Vec<serde_json::Value> {
    rv.findings("render-drift")
}

fn without_memory_patch(pkg: &TempPackage) {
    pkg.write(
        "vendor.toml",
        [UPSTREAM, APP_VENDOR, EXTRA_VENDOR, NAMESPACE_PATCH].concat(),
    )
    .remove("patches/memory.patch");
}

fn without_extra_vendor(pkg: &TempPackage) {
    pkg.write(
        "vendor.toml",
        [UPSTREAM, APP_VENDOR, NAMESPACE_PATCH, MEMORY_PATCH].concat(),
    );
}

const REVERTED: &str =
    "patch `memory` is no longer in vendor.toml: its changes to templates/app.yml were reverted";

#[test]
fn a_removed_patch_is_reverted_by_render_and_check_says_so_before() {
    let gh = GitHub::start();
    let (pkg, rv) = adopted(&gh);
    without_memory_patch(&pkg);

    let found = drift(&rv);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0]["message"],
        "`templates/app.yml` still has the changes of patch `memory`, which vendor.toml no longer has"
    );
    assert_eq!(found[0]["fix"], "run `revendor render` to revert them");

    let out = rv.run(&["render"]).expect(0);
    assert!(out.stdout.contains(REVERTED), "{}", out.stdout);
    let t = pkg.read_string(APP);
    assert!(
        t.contains("memory: 64Mi") && t.contains("namespace: cozy-app"),
        "{t}"
    );
    let lock = pkg.read_string(LOCK);
    assert!(
        !lock.contains("memory"),
        "the lock forgets the patch:\n{lock}"
    );
    assert!(drift(&rv).is_empty());
    let out = rv.run(&["render"]).expect(0);
    assert!(out.stdout.contains("no file changed") && !out.stdout.contains(REVERTED));
}

#[test]
fn a_removed_patch_is_reverted_by_update_not_taken_for_a_hand_edit() {
    let gh = GitHub::start();
    let (pkg, rv) = adopted(&gh);
    without_memory_patch(&pkg);
    let out = rv.run(&["update"]).expect(0);
    assert!(out.stdout.contains(REVERTED), "{}", out.stdout);
    assert!(
        out.stdout.contains("upstream: v1.0.0 -> v1.1.0"),
        "{}",
        out.stdout
    );
    let t = pkg.read_string(APP);
    assert!(
        t.contains("memory: 64Mi") && t.contains("namespace: cozy-app"),
        "{t}"
    );
    let lock = pkg.read_string(LOCK);
    assert!(!lock.contains("memory"), "{lock}");
    assert!(drift(&rv).is_empty());
}

#[test]
fn a_removed_patch_still_on_disk_is_read_from_there() {
    let gh = GitHub::start();
    let (pkg, rv) = adopted(&gh);
    pkg.write(
        "vendor.toml",
        [UPSTREAM, APP_VENDOR, EXTRA_VENDOR, NAMESPACE_PATCH].concat(),
    );
    // A fresh download cache: only the file on disk holds the patch.
    let fresh = Revendor::new(pkg.path(), &gh);
    let out = fresh.run(&["update", "--to", "v1.0.0"]).expect(0);
    assert!(out.stdout.contains(REVERTED), "{}", out.stdout);
    assert!(pkg.read_string(APP).contains("memory: 64Mi"));
    drop(rv);
}

#[test]
fn a_hand_edit_beside_a_removed_patch_stops_the_update() {
    let gh = GitHub::start();
    let (pkg, rv) = adopted(&gh);
    without_memory_patch(&pkg);
    pkg.write(
        APP,
        pkg.read_string(APP)
            .replace("name: app\n  namespace", "name: web\n  namespace"),
    );
    let before = pkg.snapshot();
    let out = rv.run(&["update"]).expect(1);
    assert!(
        out.stderr
            .contains("has hand edits besides the changes of patch `memory`")
            && out.stderr.contains("templates/app.yml:3 `name: web`"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains("128Mi"),
        "the patch's change is not a hand edit"
    );
    assert_eq!(pkg.snapshot(), before);

    // Without the patch anywhere, its changes cannot be told from hand edits.
    let fresh = Revendor::new(pkg.path(), &gh);
    let out = fresh.run(&["update"]).expect(1);
    assert!(
        out.stderr
            .contains("revendor cannot tell its changes to `templates/app.yml` from hand edits")
            && out
                .stderr
                .contains("git checkout HEAD -- patches/memory.patch"),
        "{}",
        out.stderr
    );
    assert_eq!(pkg.snapshot(), before);
}

#[test]
fn a_removed_vendor_is_deleted_by_render_and_reported_by_check_before() {
    let gh = GitHub::start();
    let (pkg, rv) = adopted(&gh);
    without_extra_vendor(&pkg);

    let found = drift(&rv);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["file"], EXTRA);
    assert_eq!(
        found[0]["message"],
        "`templates/extra.yml` has no source: the lock says it was rendered from `deploy/extra.yml`, \
         which no [[vendor]] vendors any more"
    );

    let out = rv.run(&["render"]).expect(0);
    assert!(
        out.stdout.contains(
            "`templates/extra.yml` is no longer vendored (no [[vendor]] renders `deploy/extra.yml`): \
             deleted it and its pristine copy"
        ),
        "{}",
        out.stdout
    );
    assert!(!pkg.exists(EXTRA) && !pkg.exists("upstream/deploy/extra.yml"));
    assert!(pkg.exists(APP) && pkg.exists("upstream/deploy/app.yml"));
    let lock = pkg.read_string(LOCK);
    assert!(!lock.contains("extra"), "{lock}");
    assert!(drift(&rv).is_empty());
}

#[test]
fn a_removed_vendor_is_deleted_by_update() {
    let gh = GitHub::start();
    let (pkg, rv) = adopted(&gh);
    without_extra_vendor(&pkg);
    let out = rv.run(&["update"]).expect(0);
    assert!(
        out.stdout
            .contains("`templates/extra.yml` is no longer vendored"),
        "{}",
        out.stdout
    );
    assert!(!pkg.exists(EXTRA) && !pkg.exists("upstream/deploy/extra.yml"));
    let lock = pkg.read_string(LOCK);
    assert!(
        !lock.contains("extra") && lock.contains("version = \"v1.1.0\""),
        "{lock}"
    );
    assert!(drift(&rv).is_empty());
}

const SOURCE_DIFF: &str = "images/app/patches/fix.diff";

const SOURCE_PATCH: &str = r#"
[[patch]]
name = "fix"
file = "images/app/patches/fix.diff"
applies-to = "source"
strip = 1
"#;

const IMAGE: &str = r#"
[image]
repository = "ghcr.io/example/app"
tag = "v1"
context = "images/app"
platforms = ["linux/amd64"]
"#;

/// The package of [`adopted`] with a source patch in its image's build context, whose
/// Dockerfile applies every `/patches/*.diff` as cozystack's do.
fn adopted_with_source_patch(gh: &GitHub) -> (TempPackage, Revendor) {
    let (pkg, rv) = adopted(gh);
    pkg.write(
        "vendor.toml",
        [UPSTREAM, APP_VENDOR, EXTRA_VENDOR, NAMESPACE_PATCH, SOURCE_PATCH, IMAGE].concat(),
    )
    .write(
        SOURCE_DIFF,
        "--- a/deploy/extra.yml\n+++ b/deploy/extra.yml\n@@ -1 +1 @@\n-kind: ConfigMap\n+kind: Secret\n",
    )
    .write(
        "images/app/Dockerfile",
        "FROM scratch\nCOPY patches /patches\nRUN git apply /patches/*.diff\n",
    );
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    assert!(pkg.read_string(LOCK).contains("name = \"fix\""));
    assert!(orphaned(&rv).is_empty());
    // The source patch is deleted from vendor.toml; its file stays in the build context.
    pkg.write(
        "vendor.toml",
        [UPSTREAM, APP_VENDOR, EXTRA_VENDOR, NAMESPACE_PATCH, IMAGE].concat(),
    );
    (pkg, rv)
}

fn orphaned(rv: &Revendor) -> Vec<serde_json::Value> {
    let out = rv.run(&["check", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).expect(&out.stdout);
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "patch-orphaned")
        .cloned()
        .collect()
}

const DELETED: &str = "patch `fix` is no longer in vendor.toml: deleted `images/app/patches/fix.diff`, which the image build would still apply";

#[test]
fn a_removed_source_patch_leaves_the_image_context_with_render_and_check_says_so_before() {
    let gh = GitHub::start();
    let (pkg, rv) = adopted_with_source_patch(&gh);
    // A patch file nobody declared is reported too, and never deleted.
    pkg.write("images/app/patches/other.diff", "--- a/x\n+++ b/x\n");

    let found = orphaned(&rv);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0]["file"], SOURCE_DIFF);
    assert_eq!(
        found[0]["message"],
        "`images/app/patches/fix.diff` is in the build context of image `ghcr.io/example/app`, and no [[patch]] names it"
    );
    assert_eq!(
        found[0]["fix"],
        "run `revendor render`, which deletes the removed patch's file"
    );
    assert_eq!(found[1]["file"], "images/app/patches/other.diff");
    assert_eq!(
        found[1]["fix"],
        "delete it, or declare it as a [[patch]] with applies-to = \"source\""
    );

    let out = rv.run(&["render"]).expect(0);
    assert!(out.stdout.contains(DELETED), "{}", out.stdout);
    assert!(!pkg.join(SOURCE_DIFF).exists());
    assert!(pkg.join("images/app/patches/other.diff").exists());
    assert!(!pkg.read_string(LOCK).contains("name = \"fix\""));
    let found = orphaned(&rv);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["file"], "images/app/patches/other.diff");
}

#[test]
fn a_removed_source_patch_leaves_the_image_context_with_update() {
    let gh = GitHub::start();
    let (pkg, rv) = adopted_with_source_patch(&gh);
    let out = rv.run(&["update"]).expect(0);
    assert!(out.stdout.contains(DELETED), "{}", out.stdout);
    assert!(!pkg.join(SOURCE_DIFF).exists());
    assert!(orphaned(&rv).is_empty());
    // An edited file is no longer the patch the lock verified: a person decides.
    let gh = GitHub::start();
    let (pkg, rv) = adopted_with_source_patch(&gh);
    pkg.write(SOURCE_DIFF, "--- a/x\n+++ b/x\n");
    let out = rv.run(&["render"]).expect(0);
    assert!(!out.stdout.contains(DELETED), "{}", out.stdout);
    assert!(pkg.join(SOURCE_DIFF).exists());
    assert_eq!(orphaned(&rv).len(), 1);
}
