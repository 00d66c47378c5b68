//! `revendor render` and what every command must refuse before it writes
//! (issue 9, "Nothing lost, nothing false"): a hand edit, a patch cut to its
//! headers, outputs that collide or leave the package, a lock of another
//! repository, a locked pin that is no image reference. Each refusal names
//! its file and line and leaves the whole tree as it was.

// Tests print skip notes and read their own switches: clippy.toml's bans are for the tool.
use crate::support;

use serde_json::Value;
use support::daemonset::{FILE, LOCK, Manifest, PATCH, PINNED, REPO, TEMPLATE, VENDOR, VendorToml};
use support::{GitHub, Revendor, Run, TempPackage};

const FORK: &str = "someone/app";

/// The upstream's DaemonSet, with a memory limit and no labels.
const MANIFEST: Manifest = Manifest::bare().memory_limit();

fn manifest() -> String {
    MANIFEST.text()
}

/// The namespace patch against [`MANIFEST`].
fn patch_text() -> String {
    MANIFEST.namespace_patch()
}

/// The package's vendor.toml: the `[[vendor]]` tables `vendor`, the namespace patch and a pin.
fn vendor_toml(vendor: &str) -> String {
    VendorToml::new().vendors(vendor).pin().text()
}

fn rendered() -> String {
    MANIFEST.rendered(PINNED)
}

/// The upstream at v1.0.0 and the package adopted at it.
fn adopted() -> (GitHub, TempPackage, Revendor) {
    let gh = GitHub::start();
    gh.repo(REPO)
        .file_at("v1.0.0", FILE, manifest())
        .release("v1.0.0", |r| r);
    let pkg = TempPackage::new();
    pkg.write("vendor.toml", vendor_toml(VENDOR))
        .write(PATCH, patch_text())
        .write(TEMPLATE, rendered());
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    rv.run(&["render"]).expect(0);
    (gh, pkg, rv)
}

/// Runs `args`, expects exit `code` and that no byte of the package changed.
fn refused(pkg: &TempPackage, rv: &Revendor, args: &[&str], code: i32) -> Run {
    let before = pkg.snapshot();
    let run = rv.run(args).expect(code);
    assert_eq!(pkg.snapshot(), before, "{args:?} changed the tree");
    run
}

fn findings(run: &Run) -> Vec<(String, String, u64)> {
    let doc: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", run.stdout, run.stderr));
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap().to_owned(),
                f["file"].as_str().unwrap().to_owned(),
                f["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

// Hand edits (issue 9, item 2).

#[test]
fn issue9_a_hand_edit_survives_render() {
    let (_gh, pkg, rv) = adopted();
    pkg.write(
        TEMPLATE,
        rendered().replace("memory: 64Mi", "memory: 128Mi"),
    );
    let run = refused(&pkg, &rv, &["render"], 1);
    assert!(
        run.stderr.contains(
            "`templates/app.yml` has 2 hand edits that no patch carries: \
             templates/app.yml:14 `(removed)               memory: 64Mi`, templates/app.yml:14 `memory: 128Mi`; \
             run `revendor render --adopt-edits` to fold them into patch `namespace`"
        ),
        "{}",
        run.stderr
    );
    assert!(!run.stdout.contains("wrote"), "{}", run.stdout);
}

#[test]
fn render_adopt_edits_folds_the_edit_into_its_patch_and_the_lock() {
    let (_gh, pkg, rv) = adopted();
    let edited = rendered().replace("memory: 64Mi", "memory: 128Mi");
    pkg.write(TEMPLATE, &edited);
    let lock = pkg.read_string(LOCK);
    let run = rv.run(&["render", "--adopt-edits"]).expect(0);
    assert!(
        run.stdout
            .contains("hand edit templates/app.yml:14 adopted into patch namespace:               memory: 128Mi"),
        "{}",
        run.stdout
    );
    assert_eq!(pkg.read_string(TEMPLATE), edited);
    let patch = pkg.read_string(PATCH);
    assert!(patch.contains("+              memory: 128Mi\n"), "{patch}");
    assert_ne!(pkg.read_string(LOCK), lock);
    // The lock vouches for the new patch: nothing drifts, nothing is left to render.
    rv.run(&["check"]).expect(0);
    let again = rv.run(&["render"]).expect(0);
    assert!(again.stdout.contains("no file changed"), "{}", again.stdout);
}

#[test]
fn an_edited_patch_is_rendered_and_the_lines_it_replaced_are_named() {
    let (_gh, pkg, rv) = adopted();
    pkg.write(PATCH, patch_text().replace("cozy-app", "cozy-other"));
    let run = rv.run(&["render"]).expect(0);
    assert!(
        run.stderr.contains(
            "patch `namespace` changed since the lock verified it, so `templates/app.yml` follows it now; \
             the lines it replaced: templates/app.yml:5 `namespace: cozy-app`"
        ),
        "{}",
        run.stderr
    );
    assert!(
        pkg.read_string(TEMPLATE)
            .contains("namespace: cozy-other\n")
    );
}

#[test]
fn render_drops_the_markers_of_an_unfinished_conflicted_update_and_says_so() {
    let (_gh, pkg, rv) = adopted();
    let marked = rendered().replace(
        "  namespace: cozy-app\n",
        "<<<<<<< ours (patched v1.0.0)\n  namespace: cozy-app\n=======\n  namespace: other\n>>>>>>> theirs (v1.1.0)\n",
    );
    pkg.write(TEMPLATE, marked);
    let run = rv.run(&["render"]).expect(0);
    assert!(
        run.stderr.contains(
            "held the conflict markers of an unfinished `update --keep-conflicts` (line 5)"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(pkg.read_string(TEMPLATE), rendered());
}

// A patch without hunks (item 9).

#[test]
fn issue9_a_patch_cut_to_its_headers_is_refused_by_every_command() {
    let (_gh, pkg, rv) = adopted();
    pkg.write(PATCH, "--- a/templates/app.yml\n+++ b/templates/app.yml\n");
    for args in [
        &["render"][..],
        &["patch", "refresh"],
        &["check", "--offline"],
        &["update", "--to", "v1.0.0"],
    ] {
        let run = refused(&pkg, &rv, args, 2);
        assert!(
            run.stderr.contains(
                "patches/namespace.patch:1: malformed patch: `--- a/templates/app.yml` opens a file section with no hunk"
            ),
            "{args:?}: {}",
            run.stderr
        );
        assert!(
            run.stderr
                .contains("help: a patch without hunks changes nothing"),
            "{}",
            run.stderr
        );
    }
    let second = format!(
        "{}--- a/templates/app.yml\n+++ b/templates/app.yml\n",
        patch_text()
    );
    pkg.write(PATCH, second);
    let run = refused(&pkg, &rv, &["render"], 2);
    assert!(
        run.stderr.contains("patches/namespace.patch:12: "),
        "{}",
        run.stderr
    );
    for (text, message) in [
        ("", "no file patch found"),
        ("this is not a diff\n", "no file patch found"),
        (
            "diff --git a/x b/x\nold mode 100644\nnew mode 100755\n",
            "no file section of the patch has a hunk",
        ),
    ] {
        pkg.write(PATCH, text);
        let run = refused(&pkg, &rv, &["render"], 2);
        assert!(
            run.stderr.contains(&format!(
                "patches/namespace.patch:1: malformed patch: {message}"
            )),
            "{text:?}: {}",
            run.stderr
        );
    }
}

// Outputs that collide or leave the package (item 10).

/// A fresh package whose vendor.toml holds `vendor`, and the tree before.
fn configured(vendor: &str) -> (GitHub, TempPackage, Revendor) {
    let gh = GitHub::start();
    gh.repo(REPO)
        .file_at("v1.0.0", FILE, manifest())
        .file_at("v1.0.0", "deploy/other.yml", manifest())
        .release("v1.0.0", |r| r);
    let pkg = TempPackage::new();
    pkg.write("vendor.toml", vendor_toml(vendor))
        .write(PATCH, patch_text())
        .write(".git/config", "[core]\n\tbare = false\n");
    let rv = Revendor::new(pkg.path(), &gh);
    (gh, pkg, rv)
}

fn assert_config_error(run: &Run, line: usize, message: &str) {
    assert!(
        run.stderr
            .contains(&format!("vendor.toml:{line}: {message}")),
        "expected vendor.toml:{line}: {message}\n{}",
        run.stderr
    );
}

#[test]
fn issue9_two_vendors_with_one_output_are_refused() {
    let two = format!(
        "{VENDOR}\n[[vendor]]\nfrom = \"deploy/other.yml\"\nto = \"templates/./app.yml\"\n"
    );
    let (_gh, pkg, rv) = configured(&two);
    for args in [&["update", "--to", "v1.0.0"][..], &["render"], &["check"]] {
        let run = refused(&pkg, &rv, args, 2);
        assert_config_error(
            &run,
            12,
            "`to` = \"templates/./app.yml\" collides with `to` = \"templates/app.yml\" of the [[vendor]] at line 8",
        );
    }
}

#[test]
fn issue9_outputs_in_revendors_and_gits_own_files_are_refused() {
    let staging = format!("{}/app.yml", revendor::paths::STAGING_DIR);
    for (to, what) in [
        (".git/config", "git's own directory (.git)"),
        ("upstream/lock.toml", "the lock (upstream/lock.toml)"),
        ("upstream/deploy/app.yml", "the pristine copies (upstream/)"),
        (
            staging.as_str(),
            "revendor's staging directory (.revendor-txn)",
        ),
        ("vendor.toml", "vendor.toml"),
    ] {
        let vendor = format!("[[vendor]]\nfrom = \"deploy/app.yml\"\nto = \"{to}\"\n");
        let (_gh, pkg, rv) = configured(&vendor);
        let run = refused(&pkg, &rv, &["update", "--to", "v1.0.0"], 2);
        assert_config_error(&run, 8, &format!("`to` = \"{to}\" is {what}"));
    }
    let onto_patch = "[[vendor]]\nfrom = \"deploy/app.yml\"\nto = \"patches/namespace.patch\"\n";
    let (_gh, pkg, rv) = configured(onto_patch);
    let run = refused(&pkg, &rv, &["update", "--to", "v1.0.0"], 2);
    assert_config_error(
        &run,
        8,
        "`to` = \"patches/namespace.patch\" collides with the file of [[patch]] `namespace` (line 12)",
    );
}

#[cfg(unix)]
#[test]
fn issue9_a_symlinked_output_folder_pointing_outside_is_refused() {
    let (_gh, pkg, rv) = adopted();
    let outside = TempPackage::new();
    outside.write("app.yml", "kept\n");
    std::fs::remove_dir_all(pkg.join("templates")).unwrap();
    std::os::unix::fs::symlink(outside.path(), pkg.join("templates")).unwrap();
    let before = outside.snapshot();
    for args in [&["render"][..], &["update", "--to", "v1.0.0"]] {
        let run = refused(&pkg, &rv, args, 2);
        assert_config_error(
            &run,
            8,
            "`to` = \"templates/app.yml\" leaves the package directory: `templates` is a symlink to",
        );
        assert_eq!(outside.snapshot(), before);
    }
    // The pristine copies' directory, too: the lock and the copies live there.
    std::fs::remove_file(pkg.join("templates")).unwrap();
    pkg.write(TEMPLATE, rendered());
    std::fs::rename(pkg.join("upstream"), outside.join("upstream")).unwrap();
    std::os::unix::fs::symlink(outside.join("upstream"), pkg.join("upstream")).unwrap();
    let run = refused(&pkg, &rv, &["render"], 2);
    assert_config_error(
        &run,
        7,
        "the pristine copy of `from` = \"deploy/app.yml\" (upstream/deploy/app.yml) would leave the package",
    );
}

// The lock (item 10).

#[test]
fn issue9_a_lock_of_another_repository_is_reported_refused_and_moved_by_update() {
    let (gh, pkg, rv) = adopted();
    let fork_manifest =
        manifest().replace("memory: 64Mi\n", "memory: 64Mi\n              cpu: 100m\n");
    gh.repo(FORK)
        .file_at("v1.0.0", FILE, fork_manifest)
        .release("v1.0.0", |r| r);
    let toml = pkg.read_string("vendor.toml");
    pkg.write(
        "vendor.toml",
        toml.replace(
            &format!("github = \"{REPO}\""),
            &format!("github = \"{FORK}\""),
        ),
    );

    let run = rv.run(&["check", "--format", "json"]).expect(1);
    assert_eq!(
        findings(&run),
        [("lock-integrity".to_owned(), "vendor.toml".to_owned(), 2)]
    );
    for args in [&["render"][..], &["patch", "refresh"]] {
        let run = refused(&pkg, &rv, args, 2);
        assert_config_error(
            &run,
            2,
            "vendor.toml names github:someone/app, but the lock vendored github:example/app",
        );
    }

    let run = rv.run(&["update"]).expect(0);
    assert!(
        run.stderr
            .contains("Updating github:example/app v1.0.0 -> github:someone/app v1.0.0"),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout
            .contains("upstream source: moved from github:example/app"),
        "{}",
        run.stdout
    );
    assert!(
        pkg.read_string(LOCK)
            .contains("source = \"github:someone/app\"")
    );
    let template = pkg.read_string(TEMPLATE);
    assert!(
        template.contains("              cpu: 100m\n")
            && template.contains("namespace: cozy-app\n"),
        "{template}"
    );
    rv.run(&["check"]).expect(0);
}

#[test]
fn issue9_an_invalid_locked_pin_is_refused_at_its_line() {
    let (_gh, pkg, rv) = adopted();
    let lock = pkg.read_string(LOCK);
    assert!(
        lock.contains(&format!("reference = \"{PINNED}\"")),
        "{lock}"
    );
    let broken = lock.replace(PINNED, "not a reference");
    let line = broken
        .lines()
        .position(|l| l.starts_with("reference = "))
        .unwrap()
        + 1;
    pkg.write(LOCK, broken);
    for args in [&["render"][..], &["update", "--to", "v1.0.0"]] {
        let run = refused(&pkg, &rv, args, 2);
        assert!(
            run.stderr.contains(&format!(
                "upstream/lock.toml:{line}: the pinned `reference` = \"not a reference\" is not an image reference pinned by digest"
            )),
            "{args:?}: {}",
            run.stderr
        );
    }
    let unpinned = pkg
        .read_string(LOCK)
        .replace("not a reference", "ghcr.io/example/app:v1");
    pkg.write(LOCK, unpinned);
    let run = refused(&pkg, &rv, &["render"], 2);
    assert!(
        run.stderr.contains("it has no `@sha256:` digest"),
        "{}",
        run.stderr
    );
}

// A refreshed patch's `index` line (issue 21, item 8).

/// `git hash-object` of the package file `rel`, cut to git's 7 digits.
fn blob_id(pkg: &TempPackage, rel: &str) -> String {
    let out = std::process::Command::new("git")
        .args(["hash-object", "--no-filters"])
        .arg(pkg.path().join(rel))
        .output()
        .expect("git hash-object runs");
    String::from_utf8(out.stdout).unwrap()[..7].to_owned()
}

#[test]
fn issue21_a_refreshed_patch_names_the_blobs_it_was_refreshed_against() {
    let (_gh, pkg, rv) = adopted();
    let stale = patch_text()
        .replacen(
            "--- a/",
            "diff --git a/templates/app.yml b/templates/app.yml\nindex 1111111..2222222 100644\n--- a/",
            1,
        )
        .replacen("@@ -2,7 +2,7 @@", "@@ -4,7 +4,7 @@", 1);
    pkg.write(PATCH, &stale);
    rv.run(&["patch", "refresh"]).expect(0);

    let refreshed = pkg.read_string(PATCH);
    let index = refreshed
        .lines()
        .find(|l| l.starts_with("index "))
        .unwrap_or_else(|| panic!("no index line:\n{refreshed}"));
    // The new side is the pristine copy with the refreshed patch applied, as git would hash it.
    let applied = pkg.path().join("applied.yml");
    let status = std::process::Command::new("patch")
        .args(["--quiet", "--force", "-o"])
        .arg(&applied)
        .arg(pkg.path().join(support::daemonset::PRISTINE))
        .stdin(std::fs::File::open(pkg.path().join(PATCH)).unwrap())
        .status()
        .expect("patch runs");
    assert!(
        status.success(),
        "the refreshed patch applies:\n{refreshed}"
    );
    let expected = format!(
        "index {}..{} 100644",
        blob_id(&pkg, support::daemonset::PRISTINE),
        blob_id(&pkg, "applied.yml")
    );
    assert_eq!(index, expected, "{refreshed}");
    assert!(refreshed.contains("@@ -2,7 +2,7 @@"), "{refreshed}");
}

// A render remembered by its inputs (issue 23).

/// Longer than the 3 s a file must be left unchanged before a render that read it is
/// remembered: what a tree a user renders again looks like.
const SETTLED: std::time::Duration = std::time::Duration::from_millis(3500);

/// The `-v` note of a render said again from its memo.
const REMEMBERED: &str = "Remembered";

#[test]
fn issue23_an_unchanged_render_is_remembered_and_every_change_is_seen() {
    let (_gh, pkg, rv) = adopted();
    std::thread::sleep(SETTLED);
    let full = rv.run(&["-v", "render"]).expect(0);
    assert!(!full.stderr.contains(REMEMBERED), "{}", full.stderr);
    let again = rv.run(&["-v", "render"]).expect(0);
    assert!(again.stderr.contains(REMEMBERED), "{}", again.stderr);
    assert_eq!(again.stdout, full.stdout);
    assert_eq!(
        again.stderr.replace(&remembered_line(&again.stderr), ""),
        full.stderr,
        "the same steps are said"
    );
    let json = rv.run(&["--format", "json", "render"]).expect(0);
    let doc: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc["patches"][0]["result"], "exact", "{}", json.stdout);

    // A hand edit made just now, of the same size, its mtime put back: still seen.
    let template = pkg.join(TEMPLATE);
    let mtime = std::fs::metadata(&template).unwrap().modified().unwrap();
    pkg.write(TEMPLATE, rendered().replace("memory: 64Mi", "memory: 65Mi"));
    let file = std::fs::File::options()
        .write(true)
        .open(&template)
        .unwrap();
    file.set_modified(mtime).unwrap();
    drop(file);
    let edited = refused(&pkg, &rv, &["-v", "render"], 1);
    assert!(edited.stderr.contains("hand edits"), "{}", edited.stderr);
    pkg.write(TEMPLATE, rendered());

    // The patch touched, vendor.toml changed, the lock rewritten, the output removed:
    // each renders again.
    let touched = std::fs::File::options()
        .write(true)
        .open(pkg.join(PATCH))
        .unwrap();
    touched.set_modified(std::time::SystemTime::now()).unwrap();
    drop(touched);
    let run = rv.run(&["-v", "render"]).expect(0);
    assert!(!run.stderr.contains(REMEMBERED), "{}", run.stderr);
    pkg.write(
        "vendor.toml",
        format!("# a comment\n{}", vendor_toml(VENDOR)),
    );
    let run = rv.run(&["-v", "render"]).expect(0);
    assert!(!run.stderr.contains(REMEMBERED), "{}", run.stderr);
    pkg.write(LOCK, pkg.read_string(LOCK));
    let run = rv.run(&["-v", "render"]).expect(0);
    assert!(!run.stderr.contains(REMEMBERED), "{}", run.stderr);
    std::fs::remove_file(&template).unwrap();
    let run = rv.run(&["-v", "render"]).expect(0);
    assert!(
        run.stdout.contains("wrote templates/app.yml"),
        "{}",
        run.stdout
    );
    assert_eq!(pkg.read_string(TEMPLATE), rendered());
}

#[test]
fn issue23_a_render_that_writes_is_not_remembered() {
    let (_gh, pkg, rv) = adopted();
    std::fs::remove_file(pkg.join(TEMPLATE)).unwrap();
    std::thread::sleep(SETTLED);
    let wrote = rv.run(&["-v", "render"]).expect(0);
    assert!(
        wrote.stdout.contains("wrote templates/app.yml"),
        "{}",
        wrote.stdout
    );
    // The file it wrote has not settled: the next render reads it again, and finds it.
    let run = rv.run(&["-v", "render"]).expect(0);
    assert!(!run.stderr.contains(REMEMBERED), "{}", run.stderr);
    assert!(run.stdout.contains("no file changed"), "{}", run.stdout);
}

/// The line of `stderr` holding the memo's note, with its line break.
fn remembered_line(stderr: &str) -> String {
    let line = stderr
        .lines()
        .find(|l| l.contains(REMEMBERED))
        .unwrap_or_else(|| panic!("no {REMEMBERED} note in:\n{stderr}"));
    format!("{line}\n")
}

/// A vendored file that is not text (a chart's icon) renders byte for byte
/// when no rewrite or pin names it; a rewrite on it still needs text and
/// says so, naming the file (issue 23: only a rewrite or a pin reads the
/// render as UTF-8).
#[test]
fn a_binary_file_renders_as_it_is_and_a_rewrite_on_it_is_refused() {
    let icon: &[u8] = b"\x89PNG\r\n\x1a\n\xff\xfe\x00\x01not text";
    let gh = GitHub::start();
    gh.repo(REPO)
        .file_at("v1.0.0", "docs/icon.png", icon)
        .release("v1.0.0", |r| r);
    let pkg = TempPackage::new();
    let toml = format!(
        "[upstream]\ngithub = \"{REPO}\"\nversion = \"v1.0.0\"\n\n\
         [[vendor]]\nfrom = \"docs/icon.png\"\nto = \"icon.png\"\n"
    );
    pkg.write("vendor.toml", &toml);
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    assert_eq!(pkg.read("icon.png"), icon);
    rv.run(&["--offline", "render"]).expect(0);
    assert_eq!(pkg.read("icon.png"), icon);

    pkg.write(
        "vendor.toml",
        toml + "\n[[rewrite]]\nfile = \"icon.png\"\nlines-containing = \"PNG\"\n\
                replace = \"PNG\"\nwith = \"{version}\"\n",
    );
    let run = refused(&pkg, &rv, &["--offline", "render"], 2);
    assert!(
        run.stderr.contains("icon.png") && run.stderr.contains("not UTF-8 text"),
        "{}",
        run.stderr
    );
}
