//! Finding the packages under a directory: every directory holding a
//! `vendor.toml`.
//!
//! The walk skips what never holds a package of the repository's own:
//! `.git`, `target`, `node_modules` and every hidden directory (a
//! transaction's staging directory among them), and a package's `upstream/`,
//! whose pristine trees are someone else's files and may carry a vendor.toml
//! of their own. Symlinked directories are not followed, so a link cycle
//! cannot loop and no package is found twice. Other directories of a package
//! are walked: a package may hold another.

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::paths;

/// Directory names the walk never enters, besides hidden ones.
const SKIPPED: &[&str] = &["target", "node_modules"];

/// Every package under `root` (`root` itself included), as paths relative to
/// it, `/`-separated and sorted; `.` is `root`.
pub fn packages(root: &Path) -> Result<Vec<String>> {
    let mut found = Vec::new();
    walk(root, &mut Vec::new(), &mut found)?;
    found.sort();
    Ok(found)
}

fn walk(dir: &Path, rel: &mut Vec<String>, found: &mut Vec<String>) -> Result<()> {
    let is_package = dir.join("vendor.toml").is_file();
    if is_package {
        found.push(if rel.is_empty() {
            ".".to_owned()
        } else {
            rel.join("/")
        });
    }
    let mut children: Vec<(String, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(paths::io("read", dir))? {
        let entry = entry.map_err(paths::io("read", dir))?;
        let kind = entry
            .file_type()
            .map_err(paths::io("read", &entry.path()))?;
        if !kind.is_dir() {
            continue;
        }
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let skipped = name.starts_with('.')
            || SKIPPED.contains(&name.as_str())
            || (is_package && name == "upstream");
        if !skipped {
            children.push((name, entry.path()));
        }
    }
    for (name, path) in children {
        rel.push(name);
        walk(&path, rel, found)?;
        rel.pop();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(root: &Path, rel: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }

    #[test]
    fn finds_packages_and_skips_what_holds_none_of_ours() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for rel in [
            "vendor.toml",
            "packages/system/multus/vendor.toml",
            "packages/system/multus/upstream/charts/x/vendor.toml",
            "packages/system/multus/images/inner/vendor.toml",
            "packages/apps/kubeovn/vendor.toml",
            ".git/modules/vendor.toml",
            ".hidden/p/vendor.toml",
            "target/debug/vendor.toml",
            "node_modules/m/vendor.toml",
            "docs/vendor.toml.md",
        ] {
            touch(root, rel);
        }
        // A directory named upstream is skipped only inside a package.
        touch(root, "upstream/p/vendor.toml");
        assert_eq!(
            packages(root).unwrap(),
            [
                ".",
                "packages/apps/kubeovn",
                "packages/system/multus",
                "packages/system/multus/images/inner",
            ]
        );
        std::fs::remove_file(root.join("vendor.toml")).unwrap();
        assert_eq!(packages(root).unwrap()[0], "packages/apps/kubeovn");
        assert!(packages(root).unwrap().contains(&"upstream/p".to_owned()));
    }

    #[test]
    fn symlinked_directories_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "a/vendor.toml");
        std::os::unix::fs::symlink(dir.path().join("a"), dir.path().join("b")).unwrap();
        std::os::unix::fs::symlink(dir.path(), dir.path().join("a/loop")).unwrap();
        assert_eq!(packages(dir.path()).unwrap(), ["a"]);
    }

    #[test]
    fn an_unreadable_root_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("absent");
        let err = packages(&missing).unwrap_err();
        assert!(err.to_string().contains("absent"), "{err}");
    }
}
