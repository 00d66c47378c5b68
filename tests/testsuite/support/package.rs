//! Temporary package directories: lay out a package, run the tool on it, compare bytes.
//!
//! Paths are relative to the package and use `/` on every platform, so snapshots compare
//! equal across machines. A snapshot is a plain `BTreeMap`, so `assert_eq!` on two of them
//! shows exactly which file changed, appeared or disappeared.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// A package directory that is deleted when dropped.
pub struct TempPackage {
    dir: tempfile::TempDir,
}

impl Default for TempPackage {
    fn default() -> Self {
        TempPackage::new()
    }
}

impl TempPackage {
    /// An empty directory under the system temp dir.
    pub fn new() -> TempPackage {
        TempPackage {
            dir: tempfile::Builder::new()
                .prefix("revendor-package-")
                .tempdir()
                .expect("create a temporary package directory"),
        }
    }

    /// The package directory (what `-C` receives).
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `rel` inside the package.
    pub fn join(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Writes `rel`, creating its parent directories.
    pub fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) -> &Self {
        let path = self.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)
                .unwrap_or_else(|e| panic!("create `{}`: {e}", parent.display()));
        }
        fs::write(&path, bytes).unwrap_or_else(|e| panic!("write `{}`: {e}", path.display()));
        self
    }

    /// The bytes of `rel`.
    pub fn read(&self, rel: &str) -> Vec<u8> {
        let path = self.join(rel);
        fs::read(&path).unwrap_or_else(|e| panic!("read `{}`: {e}", path.display()))
    }

    /// The text of `rel` (panics if it is not UTF-8).
    pub fn read_string(&self, rel: &str) -> String {
        String::from_utf8(self.read(rel)).unwrap_or_else(|_| panic!("`{rel}` is not UTF-8"))
    }

    /// Whether `rel` exists (file or directory).
    pub fn exists(&self, rel: &str) -> bool {
        self.join(rel).exists()
    }

    /// Removes the file `rel`.
    pub fn remove(&self, rel: &str) -> &Self {
        let path = self.join(rel);
        fs::remove_file(&path).unwrap_or_else(|e| panic!("remove `{}`: {e}", path.display()));
        self
    }

    /// Copies every file under `src` into the package under `rel` (`""` for the root).
    pub fn copy_from(&self, src: &Path, rel: &str) -> &Self {
        for (path, bytes) in read_tree(src) {
            let dest = if rel.is_empty() {
                path
            } else {
                format!("{}/{path}", rel.trim_end_matches('/'))
            };
            self.write(&dest, bytes);
        }
        self
    }

    /// Every file with its bytes, by relative path.
    pub fn snapshot(&self) -> BTreeMap<String, Vec<u8>> {
        read_tree(self.path())
    }

    /// Every file's relative path, sorted; catches leftovers such as temporary files.
    pub fn files(&self) -> Vec<String> {
        walk(self.path())
            .into_iter()
            .filter(|(_, is_dir)| !is_dir)
            .map(|(path, _)| path)
            .collect()
    }

    /// Every directory's relative path, sorted; catches leftover empty directories.
    pub fn dirs(&self) -> Vec<String> {
        walk(self.path())
            .into_iter()
            .filter(|(_, is_dir)| *is_dir)
            .map(|(path, _)| path)
            .collect()
    }
}

/// Every file under `dir` with its bytes, keyed by `/`-separated relative path. A symlink is
/// not followed: its entry is `symlink -> <target>`, so a snapshot also shows a link replaced.
pub fn read_tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    walk(dir)
        .into_iter()
        .filter(|(_, is_dir)| !is_dir)
        .map(|(rel, _)| {
            let path = dir.join(&rel);
            if let Ok(target) = fs::read_link(&path) {
                return (rel, format!("symlink -> {}", target.display()).into_bytes());
            }
            let bytes =
                fs::read(&path).unwrap_or_else(|e| panic!("read `{}`: {e}", path.display()));
            (rel, bytes)
        })
        .collect()
}

/// Every directory's relative path under `dir`, sorted.
pub fn read_dirs(dir: &Path) -> Vec<String> {
    walk(dir)
        .into_iter()
        .filter(|(_, is_dir)| *is_dir)
        .map(|(path, _)| path)
        .collect()
}

/// Relative paths under `dir` (not following symlinked directories), sorted, with whether each
/// is a directory.
fn walk(dir: &Path) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut pending = vec![(dir.to_path_buf(), String::new())];
    while let Some((path, rel)) = pending.pop() {
        let entries =
            fs::read_dir(&path).unwrap_or_else(|e| panic!("list `{}`: {e}", path.display()));
        for entry in entries {
            let entry = entry.unwrap_or_else(|e| panic!("list `{}`: {e}", path.display()));
            let name = entry.file_name().to_string_lossy().into_owned();
            let child = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if is_dir {
                pending.push((entry.path(), child.clone()));
            }
            out.push((child, is_dir));
        }
    }
    out.sort();
    out
}
