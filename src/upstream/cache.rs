//! The content-addressed download cache: `<cache>/sha256/<hex>`.
//!
//! An entry's name is the sha256 of its bytes, and every read re-hashes them,
//! so a corrupted or tampered entry is never used: it is dropped and fetched
//! again. `<cache>/tree/<tree hash>` names the archive entry that holds a
//! source tree, because the lock records the tree's hash, not the archive's
//! (see `upstream::tree_hash`); whoever reads it unpacks the archive and
//! compares the hash again.

use std::path::{Path, PathBuf};

use crate::image::Digest;
use crate::net::write_atomic;

/// A content-addressed store under a directory.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
    trees: PathBuf,
}

impl Cache {
    /// The store under `<cache_dir>/sha256`.
    pub fn new(cache_dir: &Path) -> Cache {
        Cache {
            dir: cache_dir.join("sha256"),
            trees: cache_dir.join("tree"),
        }
    }

    /// The bytes stored under `sha256`, if present and intact.
    pub fn get(&self, sha256: &str) -> Option<Vec<u8>> {
        let path = self.dir.join(sha256);
        let bytes = std::fs::read(&path).ok()?;
        if Digest::of(&bytes).hex() == sha256 {
            Some(bytes)
        } else {
            let _ = std::fs::remove_file(&path);
            None
        }
    }

    /// Stores `bytes`, returning their sha256. A failure to write only
    /// costs a later download, so it is not an error.
    pub fn put(&self, bytes: &[u8]) -> String {
        let sha = Digest::of(bytes).hex().to_owned();
        let path = self.dir.join(&sha);
        if !path.exists() {
            let _ = write_atomic(&path, bytes);
        }
        sha
    }

    /// Remembers that the entry `archive_sha256` is an archive of the source
    /// tree `tree_sha256`. Like [`Cache::put`], a failure only costs a later
    /// download.
    pub fn put_tree(&self, tree_sha256: &str, archive_sha256: &str) {
        if Digest::from_hex(tree_sha256).is_ok() {
            let _ = write_atomic(&self.trees.join(tree_sha256), archive_sha256.as_bytes());
        }
    }

    /// The archive remembered for `tree_sha256`, with its sha256, if it is
    /// still stored intact. That it holds the tree is for the caller to
    /// verify: this file names it, nothing proves it.
    pub fn tree_archive(&self, tree_sha256: &str) -> Option<(String, Vec<u8>)> {
        Digest::from_hex(tree_sha256).ok()?;
        let named = std::fs::read_to_string(self.trees.join(tree_sha256)).ok()?;
        let sha = Digest::from_hex(named.trim()).ok()?.hex().to_owned();
        self.get(&sha).map(|bytes| (sha, bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_and_verifies() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let sha = cache.put(b"hello");
        assert_eq!(cache.get(&sha).unwrap(), b"hello");
        std::fs::write(dir.path().join("sha256").join(&sha), b"tampered").unwrap();
        assert_eq!(cache.get(&sha), None);
    }

    #[test]
    fn finds_an_archive_by_its_tree() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let tree = "a".repeat(64);
        assert_eq!(cache.tree_archive(&tree), None);
        let sha = cache.put(b"archive");
        cache.put_tree(&tree, &sha);
        assert_eq!(cache.tree_archive(&tree), Some((sha, b"archive".to_vec())));
        cache.put_tree("../escape", &"b".repeat(64));
        assert_eq!(cache.tree_archive("../escape"), None);
        assert!(!dir.path().join("escape").exists());
    }
}
