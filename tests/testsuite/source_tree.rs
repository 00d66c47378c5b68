//! The lock's source-tree hash (`source-tree-sha256`, issue 11): computed
//! from the extracted tree, so a lock written from a git tag verifies against
//! GitHub's archive of that tag, docs/reference.md's shell recipe over `git
//! archive` output gives the same value, and a tag whose files changed is
//! refused.

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use support::{GitHub, GitRepo, Revendor, TempPackage};

const REPO: &str = "example/app";
const GO: &str = "package a\n\nfunc A() int {\n\treturn 1\n}\n";
const SCRIPT: &str = "#!/bin/sh\necho build\n";
const MANIFEST: &str = "kind: ConfigMap\nmetadata:\n  name: app\n";
const PATCH: &str = "--- a/pkg/a.go
+++ b/pkg/a.go
@@ -3,3 +3,3 @@
 func A() int {
-\treturn 1
+\treturn 2
 }
";

fn vendor_toml(source: &str) -> String {
    format!(
        r#"[upstream]
{source}
version = "v1.0.0"
track = ">=1.0.0, <2.0.0"

[[vendor]]
from = "deploy/app.yml"
to = "templates/app.yml"

[[patch]]
name = "fix"
file = "patches/fix.diff"
applies-to = "source"
strip = 1
"#
    )
}

fn package(source: &str) -> TempPackage {
    let pkg = TempPackage::new();
    pkg.write("vendor.toml", vendor_toml(source))
        .write("patches/fix.diff", PATCH);
    pkg
}

/// The upstream as a real git repository at tag v1.0.0, with an executable
/// script; `link` adds a symbolic link too.
fn git_upstream(link: bool) -> GitRepo {
    let repo = GitRepo::new();
    repo.commit(
        "v1.0.0",
        [
            ("go.mod", "module example.com/app\n\ngo 1.25.0\n"),
            ("pkg/a.go", GO),
            ("hack/build.sh", SCRIPT),
            ("deploy/app.yml", MANIFEST),
        ],
    );
    let script = repo.path().join("hack/build.sh");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    if link {
        std::os::unix::fs::symlink("pkg/a.go", repo.path().join("a.go")).unwrap();
    }
    repo.commit::<&str, &str>("modes and links", []);
    repo.tag("v1.0.0");
    repo
}

fn locked_tree_hash(pkg: &TempPackage) -> String {
    let lock = pkg.read_string("upstream/lock.toml");
    assert!(!lock.contains("source-sha256"), "{lock}");
    let line = lock
        .lines()
        .find_map(|l| l.strip_prefix("source-tree-sha256 = "))
        .unwrap_or_else(|| panic!("no source-tree-sha256 in\n{lock}"));
    line.trim_matches('"').to_string()
}

/// The shell recipe of docs/reference.md, run in `dir`.
fn recipe_hash(dir: &Path) -> String {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/reference.md")).unwrap();
    let recipe = doc
        .split("```sh\n")
        .skip(1)
        .filter_map(|block| block.split_once("```").map(|(code, _)| code))
        .find(|code| code.contains("sha256sum"))
        .expect("docs/reference.md has the tree-hash recipe in a ```sh block");
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", recipe])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    text.split_whitespace().next().unwrap().to_string()
}

#[test]
fn the_recipe_over_git_archive_gives_the_hash_the_git_upstream_locks() {
    let repo = git_upstream(true);
    let pkg = package(&format!("git = \"{}\"", repo.url()));
    let gh = GitHub::start();
    Revendor::new(pkg.path(), &gh)
        .run(&["update", "--to", "v1.0.0"])
        .expect(0);
    let locked = locked_tree_hash(&pkg);

    let work = tempfile::tempdir().unwrap();
    let tar = work.path().join("app.tar");
    let tar_arg = tar.to_str().unwrap();
    repo.git(&["archive", "--prefix=app-1.0.0/", "-o", tar_arg, "v1.0.0"]);
    let status = Command::new("tar")
        .args(["-xf", tar_arg, "-C"])
        .arg(work.path())
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(recipe_hash(&work.path().join("app-1.0.0")), locked);
}

#[test]
fn a_lock_written_from_a_git_tag_verifies_against_the_github_archive() {
    let repo = git_upstream(false);
    let from_git = package(&format!("git = \"{}\"", repo.url()));
    let gh = GitHub::start();
    Revendor::new(from_git.path(), &gh)
        .run(&["update", "--to", "v1.0.0"])
        .expect(0);
    let locked = locked_tree_hash(&from_git);

    gh.repo(REPO)
        .file_at("v1.0.0", "go.mod", "module example.com/app\n\ngo 1.25.0\n")
        .file_at("v1.0.0", "pkg/a.go", GO)
        .executable_at("v1.0.0", "hack/build.sh", SCRIPT)
        .file_at("v1.0.0", "deploy/app.yml", MANIFEST)
        .release("v1.0.0", |r| r);
    let pkg = package(&format!("github = \"{REPO}\""));
    let lock = from_git
        .read_string("upstream/lock.toml")
        .replace(&format!("git:{}", repo.url()), &format!("github:{REPO}"));
    pkg.write("upstream/lock.toml", &lock);
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    assert_eq!(locked_tree_hash(&pkg), locked);
    assert!(gh.requests().count(&format!("/{REPO}/archive/")) > 0);

    // The same tag serving other bytes is refused, whatever the archive's sha256.
    gh.repo(REPO)
        .file_at("v1.0.0", "pkg/a.go", GO.replace("A()", "B()"));
    let out = rv.run(&["update", "--to", "v1.0.0"]).expect(3);
    assert!(
        out.stderr.contains("the source tree at v1.0.0") && out.stderr.contains(&locked),
        "{}",
        out.stderr
    );
    assert_eq!(pkg.read_string("upstream/lock.toml"), lock);
}

/// A lock from before the tree hash still reads; the next update replaces
/// the archive's sha256 with the tree hash.
#[test]
fn a_lock_with_only_the_archive_sha256_is_read_and_upgraded() {
    let gh = GitHub::start();
    gh.repo(REPO)
        .file_at("v1.0.0", "pkg/a.go", GO)
        .file_at("v1.0.0", "deploy/app.yml", MANIFEST)
        .release("v1.0.0", |r| r);
    let pkg = package(&format!("github = \"{REPO}\""));
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    let current = pkg.read_string("upstream/lock.toml");
    let legacy = current.replace(
        &format!("source-tree-sha256 = \"{}\"", locked_tree_hash(&pkg)),
        &format!("source-sha256 = \"{}\"", "0".repeat(64)),
    );
    assert_ne!(legacy, current);
    pkg.write("upstream/lock.toml", &legacy);
    rv.run(&["check", "--offline"]).expect(0);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    assert_eq!(pkg.read_string("upstream/lock.toml"), current);
}

/// issue 23: `patch refresh` of a source patch reads the locked tree from the download cache
/// the update filled: no request, so no HTTP client and no trust store (it failed without CA
/// certificates, building the client for a conditional request).
#[test]
fn issue23_refreshing_a_source_patch_reads_the_cached_tree_without_tls() {
    let gh = GitHub::start();
    gh.repo(REPO)
        .file_at("v1.0.0", "go.mod", "module example.com/app\n\ngo 1.25.0\n")
        .file_at("v1.0.0", "pkg/a.go", GO)
        .file_at("v1.0.0", "deploy/app.yml", MANIFEST)
        .release("v1.0.0", |r| r);
    let pkg = package(&format!("github = \"{REPO}\""));
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    let sent = gh.requests().count("/");

    let missing = pkg.path().join("no-such-roots");
    let rv = rv
        .env("SSL_CERT_FILE", &missing.to_string_lossy())
        .env("SSL_CERT_DIR", &missing.to_string_lossy());
    rv.run(&["patch", "refresh"]).expect(0);
    assert_eq!(
        gh.requests().count("/"),
        sent,
        "no request: the tree was cached"
    );
}
