//! The repository root is the complete multus package (issue 11): a fresh
//! clone of HEAD, with no network and an empty download cache, checks clean
//! and renders to exactly what is committed.
//!
//! The clone is made through `file://`, as from a remote, so only committed
//! files take part; every GitHub URL points at a loopback port nothing
//! listens on, so a request would fail rather than reach anything.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn git(dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .expect("run git")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A loopback URL nothing answers: the port was free a moment ago.
fn closed_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

struct Fresh {
    dir: tempfile::TempDir,
    cache: tempfile::TempDir,
    url: String,
}

impl Fresh {
    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn revendor(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_revendor"))
            .current_dir(self.path())
            .args(args)
            .env("REVENDOR_CACHE_DIR", self.cache.path())
            .env("GITHUB_API_URL", &self.url)
            .env("GITHUB_SERVER_URL", &self.url)
            .env("REVENDOR_RAW_URL", &self.url)
            .env("NO_COLOR", "1")
            // The package's contracts on what Helm renders (issue 19).
            .env("REVENDOR_HELM", crate::support::helm::binary())
            .env_remove("GITHUB_TOKEN")
            .env_remove("GH_TOKEN")
            .env_remove("REVENDOR_REGISTRY_MIRRORS")
            .output()
            .expect("run revendor")
    }
}

/// A clone of HEAD, or `None` (with a note) when this source tree is not a
/// git work tree; on CI it must be one.
fn clone_head() -> Option<Fresh> {
    let root = Path::new(ROOT);
    if !git(root, &["rev-parse", "--verify", "HEAD"])
        .status
        .success()
    {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{ROOT} is not a git work tree with a HEAD, and CI=true"
        );
        eprintln!("{ROOT} is not a git work tree; skipping the fresh-clone test");
        return None;
    }
    let dir = tempfile::Builder::new()
        .prefix("revendor-clone-")
        .tempdir()
        .unwrap();
    let url = format!("file://{}", root.display());
    let target = dir.path().to_str().unwrap();
    let cloned = git(
        root,
        &["clone", "--quiet", "--depth", "1", "--", &url, target],
    );
    assert!(cloned.status.success(), "{}", text(&cloned.stderr));
    Some(Fresh {
        dir,
        cache: tempfile::tempdir().unwrap(),
        url: closed_url(),
    })
}

#[test]
fn issue_11_a_fresh_clone_checks_clean_and_renders_what_is_committed_offline() {
    let Some(clone) = clone_head() else { return };

    let check = clone.revendor(&["check", "--offline", "--format", "json"]);
    assert_eq!(
        check.status.code(),
        Some(0),
        "check --offline in a fresh clone\n{}{}",
        text(&check.stdout),
        text(&check.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap();
    assert_eq!(
        report["findings"],
        serde_json::json!([]),
        "the lock and every file it vouches for verify: {report:#}"
    );

    let render = clone.revendor(&["render", "--offline"]);
    assert_eq!(
        render.status.code(),
        Some(0),
        "render --offline in a fresh clone\n{}{}",
        text(&render.stdout),
        text(&render.stderr)
    );
    let status = git(clone.path(), &["status", "--porcelain", "--ignored"]);
    assert!(status.status.success(), "{}", text(&status.stderr));
    assert_eq!(
        text(&status.stdout),
        "",
        "render changed or left files in the clone"
    );

    let lock = std::fs::read_to_string(clone.path().join("upstream/lock.toml")).unwrap();
    assert!(lock.contains("source-tree-sha256 = "), "{lock}");
    assert!(!lock.contains("source-sha256"), "{lock}");
}
