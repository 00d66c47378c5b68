//! Where a path of vendor.toml may point: inside the package, never through
//! a symlink out of it, never into revendor's own files.
//!
//! 1. [`Bounds::resolve`] walks a package-relative path one component at a
//!    time over the real directory: a component that is a symlink is
//!    followed, and must land inside the package (a dangling one is refused:
//!    what it will point at when written is unknown). What does not exist yet
//!    is created as written. The result is the path as the filesystem will see
//!    it, relative to the package, `.` and `..` gone.
//! 2. [`own`] says whether a resolved path is one of revendor's own: the
//!    staging directory of `paths::Transaction`, anything under `.git`, and
//!    for the files revendor writes also vendor.toml and `upstream/` (the
//!    lock and the pristine copies).
//! 3. [`overlaps`] says whether two resolved paths are the same file or one
//!    is under the other, which is how `validate` keeps outputs apart.
//!
//! Comparing resolved paths, not strings, is the point: `templates/./a.yml`
//! and `templates/a.yml` are one file, and a `templates` symlink to
//! `upstream` would make `templates/lock.toml` the lock.

use std::path::{Component, Path, PathBuf};

use super::lock::LOCK_PATH;

/// The staging directory `paths::Transaction` writes into (its
/// `STAGING_DIR`; `config` may not name `paths`, so the integration tests pin
/// the two together).
const STAGING_DIR: &str = ".revendor-txn";

/// A path as the filesystem will see it: package-relative components.
pub(super) type Resolved = Vec<String>;

/// Why a path cannot be used: it leaves the package through a symlink.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Escape {
    /// The package-relative component that is the symlink.
    pub via: String,
    /// Where it points, when it points anywhere.
    pub target: Option<PathBuf>,
}

impl Escape {
    /// The reason, for a `ConfigError` message.
    pub fn describe(&self) -> String {
        match &self.target {
            Some(t) => format!(
                "`{}` is a symlink to `{}`, outside the package",
                self.via,
                t.display()
            ),
            None => format!("`{}` is a symlink that points nowhere", self.via),
        }
    }
}

/// The package directory, as the filesystem names it.
#[derive(Debug)]
pub(super) struct Bounds {
    /// `None` when the directory cannot be resolved (it does not exist):
    /// then paths are compared as written.
    root: Option<PathBuf>,
}

impl Bounds {
    /// The bounds of the package at `dir`.
    pub fn new(dir: &Path) -> Bounds {
        Bounds {
            root: dir.canonicalize().ok(),
        }
    }

    /// `rel` as the filesystem will see it (see the module docs). `rel`
    /// stays inside the package as written (`validate` checked that).
    pub fn resolve(&self, rel: &str) -> Result<Resolved, Escape> {
        let Some(root) = &self.root else {
            return Ok(lexical(Path::new(rel)));
        };
        let mut at = root.clone();
        for c in Path::new(rel).components() {
            match c {
                Component::Normal(name) => at.push(name),
                Component::ParentDir => {
                    at.pop();
                }
                _ => continue,
            }
            // What does not exist yet is created as written; a later `..`
            // may lead back to what does, so the walk goes on.
            if at
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink())
            {
                let via = at
                    .strip_prefix(root)
                    .map_or_else(|_| rel.to_owned(), |p| p.display().to_string());
                match at.canonicalize() {
                    Ok(target) if target.starts_with(root) => at = target,
                    Ok(target) => {
                        return Err(Escape {
                            via,
                            target: Some(target),
                        });
                    }
                    Err(_) => return Err(Escape { via, target: None }),
                }
            }
        }
        match at.strip_prefix(root) {
            Ok(inside) => Ok(lexical(inside)),
            // `..` above a symlinked directory's real parent.
            Err(_) => Err(Escape {
                via: rel.to_owned(),
                target: Some(at),
            }),
        }
    }
}

/// `path` without `.` and with `..` applied, as components.
fn lexical(path: &Path) -> Resolved {
    let mut out: Resolved = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(name) => out.push(name.to_string_lossy().into_owned()),
            Component::ParentDir => {
                out.pop();
            }
            _ => {}
        }
    }
    out
}

/// Which of revendor's own files `path` is or is under, if any. `written`:
/// the path is one revendor writes, which may also not be vendor.toml or
/// under `upstream/`.
pub(super) fn own(path: &Resolved, written: bool) -> Option<&'static str> {
    if path.iter().any(|c| c == ".git") {
        return Some("git's own directory (.git)");
    }
    match path.first().map(String::as_str) {
        Some(STAGING_DIR) => Some("revendor's staging directory (.revendor-txn)"),
        Some("vendor.toml") if written && path.len() == 1 => Some("vendor.toml"),
        Some("upstream") if written && is_lock(path) => Some("the lock (upstream/lock.toml)"),
        // `upstream/` holds the lock and the pristine copies (Vendor::pristine).
        Some("upstream") if written => Some("the pristine copies (upstream/)"),
        _ => None,
    }
}

/// Whether `path` is the lock.
pub(super) fn is_lock(path: &Resolved) -> bool {
    *path == lexical(Path::new(LOCK_PATH))
}

/// Whether `a` and `b` are the same path or one is under the other.
pub(super) fn overlaps(a: &Resolved, b: &Resolved) -> bool {
    let n = a.len().min(b.len());
    a[..n] == b[..n]
}

/// A resolved path as the user would write it.
pub(super) fn show(path: &Resolved) -> String {
    path.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(s: &str) -> Resolved {
        lexical(Path::new(s))
    }

    #[test]
    fn revendors_own_files_are_named() {
        assert_eq!(
            own(&r(".git/config"), false),
            Some("git's own directory (.git)")
        );
        assert_eq!(
            own(&r("charts/.git/HEAD"), false),
            Some("git's own directory (.git)")
        );
        assert!(own(&r(".revendor-txn/0"), false).is_some());
        assert_eq!(
            own(&r("upstream/lock.toml"), true),
            Some("the lock (upstream/lock.toml)")
        );
        assert!(own(&r("upstream/deploy/a.yml"), true).is_some());
        assert!(own(&r("vendor.toml"), true).is_some());
        assert_eq!(own(&r("upstream/deploy/a.yml"), false), None);
        assert_eq!(own(&r("templates/a.yml"), true), None);
        assert_eq!(own(&r("templates/vendor.toml"), true), None);
    }

    #[test]
    fn overlap_is_equal_or_under() {
        assert!(overlaps(&r("templates/a.yml"), &r("templates/./a.yml")));
        assert!(overlaps(&r("patches/p.patch/x"), &r("patches/p.patch")));
        assert!(!overlaps(&r("templates/a.yml"), &r("templates/b.yml")));
        assert!(!overlaps(&r("templates/a.yml"), &r("templates/a.yml.orig")));
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_followed_and_must_stay_inside() {
        let outside = tempfile::tempdir().unwrap();
        let pkg = tempfile::tempdir().unwrap();
        std::fs::create_dir(pkg.path().join("upstream")).unwrap();
        std::os::unix::fs::symlink(outside.path(), pkg.path().join("templates")).unwrap();
        std::os::unix::fs::symlink("upstream", pkg.path().join("charts")).unwrap();
        std::os::unix::fs::symlink("nowhere", pkg.path().join("dangling")).unwrap();
        let b = Bounds::new(pkg.path());
        let e = b.resolve("templates/a.yml").unwrap_err();
        assert_eq!(e.via, "templates");
        assert!(
            e.describe().contains("outside the package"),
            "{}",
            e.describe()
        );
        assert_eq!(
            b.resolve("charts/lock.toml").unwrap(),
            r("upstream/lock.toml")
        );
        assert_eq!(b.resolve("dangling/x").unwrap_err().target, None);
        assert_eq!(b.resolve("./new/dir/../a.yml").unwrap(), r("new/a.yml"));
        assert_eq!(
            b.resolve("new/../templates/a.yml").unwrap_err().via,
            "templates"
        );
    }
}
