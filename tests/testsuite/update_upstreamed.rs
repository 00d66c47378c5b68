//! Issue 9, item 4: a patch the new release already carries stops the update, and
//! `--drop-upstreamed` removes it. A vendor patch and a source patch each, next to ones that
//! stay; the real binary against the GitHub stand-in, and real git for `git apply --check`.

// Tests read their own switches; clippy.toml's bans are for the tool.
use crate::support;

use std::process::Command;

use support::{GitHub, Revendor, TempPackage};

const REPO: &str = "example/app";
const FILE: &str = "deploy/app.yml";
const OUT: &str = "templates/app.yml";

/// v2.0.0 took cozystack's replica count and its fix to a.go; the rest moved down a line.
fn manifest(version: &str) -> String {
    let replicas = if version == "v1.0.0" { 1 } else { 3 };
    let top = if version == "v1.0.0" { "" } else { "# v2\n" };
    format!(
        "{top}kind: Deployment\nmetadata:\n  name: app\n  namespace: default\nspec:\n  paused: false\n  minReadySeconds: 0\n  replicas: {replicas}\n  template: {{}}\n"
    )
}

fn go_file(var: &str, value: u32, version: &str) -> String {
    let top = if version == "v1.0.0" {
        ""
    } else {
        "// Copyright\n"
    };
    format!(
        "{top}package app\n\nimport \"fmt\"\n\nfunc f() {{\n\t{var} := {value}\n\tfmt.Println({var})\n}}\n"
    )
}

const NAMESPACE: &str = "\
--- a/templates/app.yml
+++ b/templates/app.yml
@@ -2,5 +2,5 @@
 metadata:
   name: app
-  namespace: default
+  namespace: cozy
 spec:
   paused: false
";

const REPLICAS: &str = "\
--- a/templates/app.yml
+++ b/templates/app.yml
@@ -6,4 +6,4 @@
   paused: false
   minReadySeconds: 0
-  replicas: 1
+  replicas: 3
   template: {}
";

fn go_patch(file: &str, var: &str) -> String {
    format!(
        "diff --git a/pkg/{file} b/pkg/{file}\nindex 1111111..2222222 100644\n--- a/pkg/{file}\n+++ b/pkg/{file}\n@@ -4,5 +4,5 @@ import \"fmt\"\n \n func f() {{\n-\t{var} := 1\n+\t{var} := 2\n \tfmt.Println({var})\n }}\n"
    )
}

/// The `[[patch]]` blocks the drop removes, exactly as written below.
const REPLICAS_BLOCK: &str = "
# cozystack runs three
[[patch]]
name = \"replicas\"
file = \"patches/replicas.patch\"
applies-to = \"vendor\"
";
const FIX_A_BLOCK: &str = "
[[patch]]
name = \"fix-a\"   # upstream PR 12
file = \"images/app/patches/fix-a.diff\"
applies-to = \"source\"
strip = 1
";

fn vendor_toml() -> String {
    format!(
        "# the app package
[upstream]
github = \"{REPO}\"   # upstream
version = \"v1.0.0\"
track = \">=1.0.0, <3.0.0\"

[[vendor]]
from = \"{FILE}\"
to = \"{OUT}\"

[[patch]]
name = \"namespace\"
file = \"patches/namespace.patch\"
applies-to = \"vendor\"
{REPLICAS_BLOCK}{FIX_A_BLOCK}
# ours for good
[[patch]]
name = \"fix-b\"
file = \"images/app/patches/fix-b.diff\"
applies-to = \"source\"
strip = 1
"
    )
}

fn world() -> (GitHub, TempPackage) {
    let gh = GitHub::start();
    for (tag, a) in [("v1.0.0", 1), ("v2.0.0", 2)] {
        gh.repo(REPO)
            .file_at(tag, FILE, manifest(tag))
            .file_at(tag, "pkg/a.go", go_file("x", a, tag))
            .file_at(tag, "pkg/b.go", go_file("y", 1, tag))
            .release(tag, |r| r);
    }
    let pkg = TempPackage::new();
    pkg.write("vendor.toml", vendor_toml())
        .write("patches/namespace.patch", NAMESPACE)
        .write("patches/replicas.patch", REPLICAS)
        .write("images/app/patches/fix-a.diff", go_patch("a.go", "x"))
        .write("images/app/patches/fix-b.diff", go_patch("b.go", "y"));
    (gh, pkg)
}

#[test]
fn upstreamed_patches_stop_the_update_and_drop_upstreamed_removes_them() {
    let (gh, pkg) = world();
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    let adopted = pkg.snapshot();
    // The nightly check already says what the update will need.
    let out = rv.run(&["check", "--online"]).expect(1);
    assert!(
        out.stdout
            .contains("run `revendor update --to v2.0.0 --drop-upstreamed`"),
        "{}",
        out.stdout
    );

    let out = rv.run(&["update"]).expect(1);
    assert!(
        out.stderr.contains(
            "upstream v2.0.0 already carries patch `replicas`, `fix-a`; nothing was written; \
             rerun with --drop-upstreamed to remove them"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout.contains(
            "upstream v2.0.0 already has patch replicas's change to templates/app.yml; \
             `revendor update --drop-upstreamed` drops it"
        ) && out
            .stdout
            .contains("already has patch fix-a's change to pkg/a.go"),
        "{}",
        out.stdout
    );
    assert_eq!(pkg.snapshot(), adopted, "nothing is written");
    rv.run(&["update", "--dry-run"]).expect(1);
    assert_eq!(pkg.snapshot(), adopted);

    let out = rv.run(&["update", "--drop-upstreamed"]).expect(0);
    for line in [
        "dropped patch replicas: upstream v2.0.0 already has it; removed patches/replicas.patch and its [[patch]] from vendor.toml",
        "dropped patch fix-a: upstream v2.0.0 already has it; removed images/app/patches/fix-a.diff and its [[patch]] from vendor.toml",
    ] {
        assert!(out.stdout.contains(line), "{line}\n{}", out.stdout);
    }
    let expected = vendor_toml()
        .replace("version = \"v1.0.0\"", "version = \"v2.0.0\"")
        .replacen(REPLICAS_BLOCK, "", 1)
        .replacen(FIX_A_BLOCK, "", 1);
    assert_eq!(
        pkg.read_string("vendor.toml"),
        expected,
        "only the version and the two blocks change"
    );
    assert!(!pkg.exists("patches/replicas.patch") && !pkg.exists("images/app/patches/fix-a.diff"));
    let lock = pkg.read_string("upstream/lock.toml");
    assert!(
        lock.contains("version = \"v2.0.0\"")
            && lock.contains("name = \"namespace\"")
            && lock.contains("name = \"fix-b\"")
            && !lock.contains("replicas")
            && !lock.contains("fix-a"),
        "{lock}"
    );
    let rendered = pkg.read_string(OUT);
    assert!(
        rendered.contains("namespace: cozy\n") && rendered.contains("replicas: 3\n"),
        "{rendered}"
    );

    // What the image build does with the source patches that are left.
    let source = tempfile::tempdir().unwrap();
    for (file, var, value) in [("a.go", "x", 2), ("b.go", "y", 1)] {
        std::fs::create_dir_all(source.path().join("pkg")).unwrap();
        std::fs::write(
            source.path().join("pkg").join(file),
            go_file(var, value, "v2.0.0"),
        )
        .unwrap();
    }
    let patches: Vec<_> = std::fs::read_dir(pkg.join("images/app/patches"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(patches.len(), 1, "{patches:?}");
    let git = Command::new("git")
        .args(["apply", "--check", "-v"])
        .args(&patches)
        .current_dir(source.path())
        .output()
        .expect("run git");
    assert!(
        git.status.success(),
        "{}",
        String::from_utf8_lossy(&git.stderr)
    );

    rv.run(&["check"]).expect(0);
}

/// Before this fix, `update` locked an upstreamed source patch and `check` was clean. Such a
/// package is reported: offline when the locked source archive is in the download cache, and
/// with `--online` when it is not.
#[test]
fn check_reports_an_upstreamed_source_patch() {
    let (gh, pkg) = world();
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    rv.run(&["update", "--drop-upstreamed"]).expect(0);
    // The patch and its [[patch]] back, as the update of old left them.
    pkg.write("images/app/patches/fix-a.diff", go_patch("a.go", "x"));
    let toml = pkg.read_string("vendor.toml") + FIX_A_BLOCK;
    pkg.write("vendor.toml", toml);

    let finding = "images/app/patches/fix-a.diff:5: error: upstream v2.0.0 already contains the change \
                   source patch `fix-a` makes to `pkg/a.go`";
    let out = rv.run(&["check"]).expect(1);
    assert!(out.stdout.contains(finding), "{}", out.stdout);

    let fresh = Revendor::new(pkg.path(), &gh);
    let out = fresh.run(&["check"]);
    assert!(!out.stdout.contains(finding), "{}", out.stdout);
    let out = fresh.run(&["check", "--online"]);
    assert!(out.stdout.contains(finding), "{}", out.stdout);
}
