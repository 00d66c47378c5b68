//! issue 20, item 6: a source patch that conflicts at the new release has a way through.
//! `update --keep-conflicts` writes the source file with diff3 markers to a working copy
//! under `upstream/.revendor-conflicts/<patch>/` and records it in the lock's `[pending]`;
//! `update --continue` refuses while a marker is left, then rebuilds the patch from the
//! resolution, finishes the update and removes the working copy.
//!
//! The upstream is a real git repository over file://: v1.1.0 changes the very line the
//! source patch changes (`return 1` becomes `return 3`; the patch makes it `return 2`), and
//! the vendored manifest changes too, so a rendered file moves with the pending update.

use crate::support;

use std::process::Command;

use support::{GitHub, GitRepo, Revendor, TempPackage};

const PATCH: &str = "images/app/patches/fix.diff";
const COPY: &str = "upstream/.revendor-conflicts/fix/pkg/a.go";
const LOCK: &str = "upstream/lock.toml";
const GO_V1: &str = "package a\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int {\n\treturn 0\n}\n";
const GO_V2: &str = "package a\n\nfunc A() int {\n\treturn 3\n}\n\nfunc B() int {\n\treturn 0\n}\n";
const FIX: &str = "From 1111111111111111111111111111111111111111 Mon Sep 17 00:00:00 2001
Subject: [PATCH] a returns 2

Our fix, kept across upstream releases.
---
diff --git a/pkg/a.go b/pkg/a.go
--- a/pkg/a.go
+++ b/pkg/a.go
@@ -3,3 +3,3 @@
 func A() int {
-\treturn 1
+\treturn 2
 }
";

fn vendor_toml(url: &str) -> String {
    format!(
        r#"[upstream]
git = "{url}"
version = "v1.0.0"
track = ">=1.0.0, <2.0.0"

[[vendor]]
from = "deploy/app.yml"
to = "templates/app.yml"

[[patch]]
name = "fix"
file = "{PATCH}"
applies-to = "source"
strip = 1
"#
    )
}

/// A package at v1.0.0 of an upstream whose v1.1.0 conflicts with the source patch.
fn package() -> (GitRepo, TempPackage, GitHub) {
    package_with("", &[])
}

/// [`package`] with `extra` appended to vendor.toml and `files` written beside it.
fn package_with(extra: &str, files: &[(&str, &str)]) -> (GitRepo, TempPackage, GitHub) {
    let repo = GitRepo::new();
    repo.commit(
        "v1.0.0",
        [("pkg/a.go", GO_V1), ("deploy/app.yml", "kind: ConfigMap\n")],
    );
    repo.tag("v1.0.0");
    repo.commit(
        "v1.1.0",
        [("pkg/a.go", GO_V2), ("deploy/app.yml", "kind: Secret\n")],
    );
    repo.tag("v1.1.0");
    let pkg = TempPackage::new();
    pkg.write("vendor.toml", vendor_toml(&repo.url()) + extra)
        .write(PATCH, FIX);
    for (file, text) in files {
        pkg.write(file, text);
    }
    let gh = GitHub::start();
    Revendor::new(pkg.path(), &gh)
        .run(&["update", "--to", "v1.0.0"])
        .expect(0);
    (repo, pkg, gh)
}

/// The render-drift findings of `check` (which exits 1 on them).
fn drift(rv: &Revendor) -> Vec<serde_json::Value> {
    rv.run(&["check"]).expect(1);
    rv.findings("render-drift")
}

#[test]
fn issue20_a_source_conflict_is_kept_resolved_and_continued() {
    let (repo, pkg, gh) = package();
    let rv = Revendor::new(pkg.path(), &gh);
    let locked = pkg.read_string(LOCK);
    let adopted = pkg.read_string(PATCH);

    let out = rv
        .run(&["update", "--to", "v1.1.0", "--keep-conflicts"])
        .expect(1);
    assert!(
        out.stderr.contains(&format!(
            "resolve the markers in {COPY}, then run `revendor update --continue`"
        )),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout.contains(&format!("markers written to {COPY}")),
        "{}",
        out.stdout
    );
    let marked = pkg.read_string(COPY);
    assert!(
        marked.contains("<<<<<<< ours (patched v1.0.0)\n\treturn 2\n")
            && marked.contains("\treturn 3\n>>>>>>> theirs (v1.1.0)\n"),
        "{marked}"
    );
    let lock = pkg.read_string(LOCK);
    assert!(
        lock.contains("version = \"v1.0.0\"")
            && lock.contains("[pending]\nversion = \"v1.1.0\"")
            && lock.contains("[[pending.source]]\npatch = \"fix\"\nfile = \"pkg/a.go\"\n"),
        "{lock}"
    );
    assert_eq!(
        pkg.read_string(PATCH),
        adopted,
        "the patch waits for the resolution"
    );
    assert_eq!(pkg.read_string("templates/app.yml"), "kind: Secret\n");

    // check names the working copy at its first marker, and the way on.
    let found = drift(&rv);
    let at_copy: Vec<_> = found.iter().filter(|f| f["file"] == COPY).collect();
    assert_eq!(at_copy.len(), 1, "{found:?}");
    assert_eq!(at_copy[0]["line"], 4, "{found:?}");
    assert!(
        at_copy[0]["fix"]
            .as_str()
            .unwrap()
            .contains("revendor update --continue"),
        "{found:?}"
    );

    // A plain update stops while the conflict is pending; --continue refuses the markers.
    let before = pkg.snapshot();
    let out = rv.run(&["update", "--to", "v1.1.0"]).expect(1);
    assert!(
        out.stderr.contains(&format!(
            "{COPY}:4: `{COPY}` still holds the conflict markers"
        )) && out.stderr.contains("revendor update --continue"),
        "{}",
        out.stderr
    );
    let out = rv.run(&["update", "--continue"]).expect(1);
    assert!(
        out.stderr
            .contains(&format!("{COPY}:4 `<<<<<<< ours (patched v1.0.0)`")),
        "{}",
        out.stderr
    );
    assert_eq!(pkg.snapshot(), before, "nothing was written");

    // Resolved: A returns 5 now.
    let resolved = GO_V2.replace("\treturn 3\n", "\treturn 5\n");
    pkg.write(COPY, &resolved);
    assert!(drift(&rv).iter().any(|f| {
        f["file"] == COPY
            && f["message"]
                .as_str()
                .unwrap()
                .contains("holds a resolution")
    }));
    let out = rv.run(&["update", "--continue"]).expect(0);
    assert!(
        out.stdout.contains("upstream: v1.0.0 -> v1.1.0")
            && out
                .stdout
                .contains("resolved by hand, refreshed on the resolution"),
        "{}",
        out.stdout
    );
    assert!(
        !pkg.exists("upstream/.revendor-conflicts"),
        "{:?}",
        pkg.files()
    );
    let lock = pkg.read_string(LOCK);
    assert!(
        lock.contains("version = \"v1.1.0\"") && !lock.contains("pending"),
        "{lock}"
    );
    let rebuilt = pkg.read_string(PATCH);
    assert!(
        rebuilt.starts_with("From 1111111111111111111111111111111111111111")
            && rebuilt.contains("Our fix, kept across upstream releases.")
            && rebuilt.contains("-\treturn 3\n+\treturn 5\n"),
        "{rebuilt}"
    );

    // The rebuilt patch turns upstream's v1.1.0 into the resolution with `git apply`,
    // as the image build applies it.
    repo.git(&["checkout", "--quiet", "v1.1.0"]);
    let status = Command::new("git")
        .current_dir(repo.path())
        .args(["apply", "--whitespace=nowarn"])
        .arg(pkg.join(PATCH))
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(
        std::fs::read_to_string(repo.path().join("pkg/a.go")).unwrap(),
        resolved
    );

    rv.run(&["check"]).expect(0);
    assert_ne!(pkg.read_string(LOCK), locked);
}

/// Deleting the working copy gives the pending source conflict up: the next update is a
/// plain one again, and with no other file moved it starts over.
#[test]
fn issue20_a_source_conflict_given_up_starts_over() {
    let (_repo, pkg, gh) = package();
    let rv = Revendor::new(pkg.path(), &gh);
    let locked = pkg.snapshot();
    rv.run(&["update", "--to", "v1.1.0", "--keep-conflicts"])
        .expect(1);
    pkg.remove(COPY);
    let found = drift(&rv);
    assert!(
        found
            .iter()
            .any(|f| f["file"] == COPY && f["message"].as_str().unwrap().contains("is missing")),
        "{found:?}"
    );
    let out = rv.run(&["update", "--continue"]).expect(2);
    assert!(
        out.stderr.contains(&format!("`{COPY}` is missing")),
        "{}",
        out.stderr
    );

    // Restored from git, the package is as it was; a plain update meets the conflict again
    // and writes nothing.
    for (file, bytes) in &locked {
        pkg.write(file, bytes);
    }
    let out = rv.run(&["update", "--to", "v1.1.0"]).expect(1);
    assert!(
        out.stderr
            .contains("nothing was written; rerun with --keep-conflicts to write diff3 markers"),
        "{}",
        out.stderr
    );
    assert_eq!(pkg.snapshot(), locked);
}

/// A rendered file's conflict and a source patch's in one update: `--keep-conflicts` writes
/// both and one `[pending]` holds both; `--continue` takes both resolutions.
#[test]
fn issue20_a_rendered_and_a_source_conflict_are_continued_together() {
    const KIND: &str = "patches/kind.patch";
    let extra = format!(
        "\n[[patch]]\nname = \"kind\"\nfile = \"{KIND}\"\napplies-to = \"vendor\"\nstrip = 1\n"
    );
    let kind = "--- a/templates/app.yml\n+++ b/templates/app.yml\n@@ -1 +1 @@\n-kind: ConfigMap\n+kind: List\n";
    let (_repo, pkg, gh) = package_with(&extra, &[(KIND, kind)]);
    let rv = Revendor::new(pkg.path(), &gh);
    assert_eq!(pkg.read_string("templates/app.yml"), "kind: List\n");

    let out = rv
        .run(&["update", "--to", "v1.1.0", "--keep-conflicts"])
        .expect(1);
    assert!(
        out.stderr.contains(&format!(
            "resolve the markers in templates/app.yml, {COPY}, then run `revendor update --continue`"
        )),
        "{}",
        out.stderr
    );
    let lock = pkg.read_string(LOCK);
    assert!(
        lock.contains("[[pending.conflict]]\nfile = \"templates/app.yml\"")
            && lock.contains("[[pending.source]]\npatch = \"fix\""),
        "{lock}"
    );
    assert!(
        pkg.read_string("templates/app.yml")
            .contains("<<<<<<< ours")
    );

    pkg.write("templates/app.yml", "kind: SecretList\n");
    pkg.write(COPY, GO_V2.replace("\treturn 3\n", "\treturn 5\n"));
    let out = rv.run(&["update", "--continue"]).expect(0);
    assert!(
        out.stdout.contains("upstream: v1.0.0 -> v1.1.0"),
        "{}",
        out.stdout
    );
    assert!(
        pkg.read_string(KIND)
            .contains("-kind: Secret\n+kind: SecretList\n"),
        "{}",
        pkg.read_string(KIND)
    );
    assert!(pkg.read_string(PATCH).contains("+\treturn 5\n"));
    assert!(!pkg.exists("upstream/.revendor-conflicts"));
    rv.run(&["check"]).expect(0);
}

/// `check --online` names the working copy `--keep-conflicts` will write, then, once the
/// update is pending, points at `--continue` instead of starting it again.
#[test]
fn issue20_upstream_newer_names_where_a_source_conflict_is_resolved() {
    let (_repo, pkg, gh) = package();
    let rv = Revendor::new(pkg.path(), &gh);
    let fix = |rv: &Revendor| {
        let out = rv.run(&["check", "--online", "--format", "json"]).expect(1);
        let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        let findings = report["findings"].as_array().unwrap();
        let newer: Vec<_> = findings
            .iter()
            .filter(|f| f["id"] == "upstream-newer")
            .collect();
        assert_eq!(newer.len(), 1, "{findings:?}");
        newer[0]["fix"].as_str().unwrap().to_owned()
    };
    assert_eq!(
        fix(&rv),
        format!(
            "run `revendor update --to v1.1.0 --keep-conflicts`, resolve the markers it writes in {COPY}, then run `revendor update --continue`"
        )
    );
    rv.run(&["update", "--to", "v1.1.0", "--keep-conflicts"])
        .expect(1);
    assert_eq!(
        fix(&rv),
        "the update to v1.1.0 is pending since `update --keep-conflicts`: resolve the markers it wrote, then run `revendor update --continue`"
    );
}
