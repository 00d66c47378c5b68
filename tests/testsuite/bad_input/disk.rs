//! The disk: a read-only package, a cache directory gone or a file, cache
//! entries that no longer match their hash (both caches), a full disk while
//! staging.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::support::{self, Revendor};
use super::{Case, Fixture, LOCK, RELEASES, TEMPLATE, TOKEN, catalog, tree, verdict};

/// A mount made for a test, unmounted when dropped.
struct Mount(PathBuf);

impl Mount {
    /// `dir` bound onto itself read-only; `None` when this machine refuses
    /// to mount (not root, no mount namespace).
    fn read_only(dir: &Path) -> Option<Mount> {
        let d = dir.to_str()?;
        mount(&["--bind", d, d])?;
        let guard = Mount(dir.to_path_buf());
        mount(&["-o", "remount,bind,ro", d])?;
        Some(guard)
    }

    /// A tmpfs of `size` (`mount -o size=…`) on `dir`.
    fn tmpfs(dir: &Path, size: &str) -> Option<Mount> {
        let size = format!("size={size}");
        mount(&["-t", "tmpfs", "-o", &size, "tmpfs", dir.to_str()?])?;
        Some(Mount(dir.to_path_buf()))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Runs `mount` with `args`; `None` when it fails.
fn mount(args: &[&str]) -> Option<()> {
    let status = std::process::Command::new("mount")
        .args(args)
        .stderr(std::process::Stdio::null())
        .status()
        .ok()?;
    status.success().then_some(())
}

/// Whether this machine lets a test mount (root in a namespace that allows
/// it); a test that needs a mount says it skips when not.
fn can_mount(test: &str) -> bool {
    let probe = tempfile::tempdir().expect("a temporary directory");
    let works = Mount::tmpfs(probe.path(), "64k").is_some();
    if !works {
        eprintln!("note: {test} skipped: mount is refused here (it needs root)");
    }
    works
}

/// Makes the package read-only for the rest of the row.
fn read_only(fx: &mut Fixture) {
    let mount = Mount::read_only(fx.pkg.path()).expect("a read-only bind mount");
    fx.keep.push(Box::new(mount));
}

/// Rows that need the package read-only (a bind mount).
pub(super) const READ_ONLY_CASES: &[Case] = &[
    Case {
        name: "disk: check on a read-only package",
        setup: read_only,
        args: &["check"],
        code: 0,
        words: &[],
    },
    Case {
        name: "disk: update with nothing to write on a read-only package",
        setup: read_only,
        args: &["update"],
        code: 0,
        words: &[],
    },
    Case {
        name: "disk: render with something to write on a read-only package",
        setup: |fx| {
            fx.pkg.remove(TEMPLATE);
            read_only(fx);
        },
        args: &["render"],
        code: 3,
        words: &[".revendor-txn", "Read-only file system"],
    },
];

#[test]
fn read_only_catalog() {
    if can_mount("read_only_catalog") {
        catalog(READ_ONLY_CASES);
    }
}

/// Every file of the download cache `dir` under `sub` (`sha256`, `http`).
fn cache_entries(dir: &Path, sub: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir.join(sub)) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    out.sort();
    out
}

/// Flips the last byte of every file of the cache under `sub`.
pub(super) fn corrupt_cache(fx: &Fixture, sub: &str) {
    let entries = cache_entries(fx.rv.cache(), sub);
    assert!(!entries.is_empty(), "no cache entries under {sub}");
    for path in entries {
        let mut bytes = std::fs::read(&path).unwrap();
        *bytes.last_mut().unwrap() ^= 0x55;
        std::fs::write(&path, bytes).unwrap();
    }
}

pub(super) const CACHE_CASES: &[Case] = &[
    Case {
        name: "disk: a cache directory that does not exist",
        setup: |fx| {
            let gone = fx.rv.cache().join("gone").join("cache");
            fx.env("REVENDOR_CACHE_DIR", gone.display().to_string());
        },
        args: &["update"],
        code: 0,
        words: &[],
    },
    Case {
        name: "disk: a cache directory that is a file",
        setup: |fx| {
            let file = fx.rv.cache().join("not-a-directory");
            std::fs::write(&file, "x").unwrap();
            fx.env("REVENDOR_CACHE_DIR", file.display().to_string());
        },
        args: &["update"],
        code: 0,
        words: &[],
    },
    Case {
        name: "disk: content-addressed entries whose bytes no longer match their hash",
        setup: |fx| corrupt_cache(fx, "sha256"),
        args: &["update"],
        code: 0,
        words: &[],
    },
    Case {
        name: "disk: ETag entries whose bodies no longer match their sha256",
        setup: |fx| corrupt_cache(fx, "http"),
        args: &["update"],
        code: 0,
        words: &[],
    },
];

#[test]
fn cache_catalog() {
    catalog(CACHE_CASES);
}

/// issue 13: an entry of the content-addressed cache that no longer matches
/// its hash is discarded and fetched again, and the next run uses it.
#[test]
fn a_corrupted_cache_entry_is_discarded_and_fetched_again() {
    let fx = Fixture::adopted();
    let lock = fx.pkg.read_string(LOCK);
    let tree = lock
        .lines()
        .find_map(|l| l.strip_prefix("source-tree-sha256 = \""))
        .and_then(|l| l.strip_suffix('"'))
        .expect("the lock records the tree's sha256");
    let named = std::fs::read_to_string(fx.rv.cache().join("tree").join(tree))
        .expect("the cache names the archive of the locked tree");
    let sha = named.trim();
    let entry = fx.rv.cache().join("sha256").join(sha);
    let mut bytes = std::fs::read(&entry).unwrap();
    *bytes.last_mut().unwrap() ^= 0x55;
    std::fs::write(&entry, bytes).unwrap();

    // `check` reads the archive only when it has no remembered verdict on
    // the source patches (issue 23); forget it, so this check is a read.
    let verdicts = fx.rv.cache().join("verdict");
    assert!(verdicts.is_dir(), "the adoption remembered its verdicts");
    std::fs::remove_dir_all(&verdicts).unwrap();
    fx.run(&["check"]).expect(0);
    assert!(!entry.exists(), "discarded by the first read");
    fx.gh.clear_requests();
    fx.run(&["update"]).expect(0);
    assert_eq!(
        fx.gh.requests().statuses(ARCHIVE_V1),
        [200],
        "fetched again"
    );
    let bytes = std::fs::read(&entry).unwrap();
    assert_eq!(support::github::sha256_hex(&bytes), sha, "healed");
}

const ARCHIVE_V1: &str = "/_codeload/example/app/tar.gz/refs/tags/v1.0.0";

/// The ETag entries whose bodies start with `magic`: path, ETag and body.
fn etag_entries(fx: &Fixture, magic: &[u8]) -> Vec<(PathBuf, String, Vec<u8>)> {
    let found: Vec<_> = cache_entries(fx.rv.cache(), "http")
        .into_iter()
        .filter_map(|path| {
            let bytes = std::fs::read(&path).unwrap();
            // `<etag>\nlink:<link>\nsha256:<hex>\n<body>`
            let mut parts = bytes.splitn(4, |&b| b == b'\n');
            let etag = String::from_utf8(parts.next()?.to_vec()).ok()?;
            parts.next()?;
            parts.next()?;
            let body = parts.next()?.to_vec();
            body.starts_with(magic).then_some((path, etag, body))
        })
        .collect();
    assert!(
        !found.is_empty(),
        "no ETag entry holds a body starting with {magic:?}"
    );
    found
}

/// Writes an ETag entry as revendor does, with no `Link` and the true sha256
/// of its `link:` line and body: a body that was stored bad, not one damaged
/// since.
fn forge_etag_entry(path: &Path, etag: &str, body: &[u8]) {
    let mut covered = b"link:\n".to_vec();
    covered.extend_from_slice(body);
    let sha = support::github::sha256_hex(&covered);
    let mut bytes = format!("{etag}\nlink:\nsha256:{sha}\n").into_bytes();
    bytes.extend_from_slice(body);
    std::fs::write(path, bytes).unwrap();
}

/// issue 13: a corrupted cached archive was served on every 304, so every
/// run failed with "archive is unusable" and never healed.
#[test]
fn a_corrupted_cached_archive_heals() {
    let fx = Fixture::adopted_with(|gh| gh.archive_etags(true));
    // Validators are kept apart by whether a token was sent: warm both.
    fx.run(&["update"]).expect(0);
    fx.gh.clear_requests();
    fx.run(&["update"]).expect(0);
    assert_eq!(fx.gh.requests().statuses(ARCHIVE_V1), [304]);

    // Damaged on disk: its sha256 no longer matches, the request goes unconditional.
    let archives = etag_entries(&fx, &[0x1f, 0x8b]);
    for (path, _, _) in &archives {
        let mut damaged = std::fs::read(path).unwrap();
        *damaged.last_mut().unwrap() ^= 0x55;
        std::fs::write(path, damaged).unwrap();
    }
    fx.gh.clear_requests();
    let before = tree(fx.pkg.path());
    fx.run(&["update"]).expect(0);
    assert_eq!(tree(fx.pkg.path()), before);
    let asked = fx.gh.requests();
    let archive = asked.matching(ARCHIVE_V1);
    assert_eq!(archive.len(), 1, "{:?}", asked.targets());
    assert!(!archive[0].conditional() && archive[0].status == 200);

    // Stored bad with its own sha256: the 304 body does not unpack, so it is
    // fetched again without If-None-Match, once.
    for (path, etag, body) in etag_entries(&fx, &[0x1f, 0x8b]) {
        forge_etag_entry(&path, &etag, &body[..body.len() / 2]);
    }
    fx.gh.clear_requests();
    fx.run(&["update"]).expect(0);
    let asked = fx.gh.requests();
    let archive = asked.matching(ARCHIVE_V1);
    let shape: Vec<(bool, u16)> = archive
        .iter()
        .map(|r| (r.conditional(), r.status))
        .collect();
    assert_eq!(shape, [(true, 304), (false, 200)], "{:?}", asked.targets());

    // Healed: the next run is answered 304 again.
    fx.gh.clear_requests();
    fx.run(&["update"]).expect(0);
    assert_eq!(fx.gh.requests().statuses(ARCHIVE_V1), [304]);
}

/// issue 13: a tampered cached releases list was trusted ("Updating v4.3.0
/// -> v4.9.9").
#[test]
fn a_tampered_cached_releases_list_is_not_trusted() {
    let fx = Fixture::adopted();
    fx.run(&["update"]).expect(0);
    for (path, _, body) in etag_entries(&fx, b"[") {
        let text = String::from_utf8(body).unwrap();
        assert!(text.contains("\"tag_name\":\"v1.0.0\""), "{text}");
        let tampered = std::fs::read_to_string(&path)
            .unwrap()
            .replace("\"tag_name\":\"v1.0.0\"", "\"tag_name\":\"v1.9.9\"");
        std::fs::write(&path, tampered).unwrap();
    }
    fx.gh.clear_requests();
    let run = fx.run(&["update", "--dry-run"]).expect(0);
    assert!(
        run.stderr.contains("Checking github:example/app at v1.0.0"),
        "{}",
        run.stderr
    );
    assert!(!run.all().contains("v1.9.9"), "{}", run.all());
    let releases = fx.gh.requests();
    let releases = releases.matching(RELEASES);
    assert!(!releases[0].conditional(), "the tampered entry is dropped");
}

/// A full disk while staging: the command fails with exit 3 naming the
/// disk, the tree is as it was with no `.revendor-txn` left, and once there
/// is room the same command succeeds.
#[test]
fn a_full_disk_while_staging_leaves_the_tree_as_it_was() {
    if !can_mount("a_full_disk_while_staging_leaves_the_tree_as_it_was") {
        return;
    }
    let fx = Fixture::adopted();
    let disk = tempfile::tempdir().unwrap();
    let _mount = Mount::tmpfs(disk.path(), "256k").expect("a tmpfs");
    let pkg = disk.path().join("pkg");
    for (rel, bytes) in support::package::read_tree(fx.pkg.path()) {
        if rel != TEMPLATE {
            let path = pkg.join(&rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
    }
    let filler = disk.path().join("filler");
    let mut file = std::fs::File::create(&filler).unwrap();
    while file.write_all(&[0; 4096]).is_ok() {}
    drop(file);

    let rv = Revendor::new(&pkg, &fx.gh).env("GITHUB_TOKEN", TOKEN);
    let before = tree(&pkg);
    let run = rv.run(&["-v", "render"]);
    let full = Case {
        name: "disk: render onto a full disk",
        setup: |_| {},
        args: &["render"],
        code: 3,
        words: &[".revendor-txn", "No space left on device"],
    };
    let after = tree(&pkg);
    if let Err(broken) = verdict(&full, &run, &before, &after) {
        panic!("{broken}");
    }
    std::fs::remove_file(&filler).unwrap();
    rv.run(&["render"]).expect(0);
    assert_eq!(
        std::fs::read(pkg.join(TEMPLATE)).unwrap(),
        fx.pkg.read(TEMPLATE)
    );
}
