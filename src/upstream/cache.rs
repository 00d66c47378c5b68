//! The content-addressed download cache: `<cache>/sha256/<hex>`.
//!
//! An entry's name is the sha256 of its bytes, and every read re-hashes them,
//! so a corrupted or tampered entry is never used: it is dropped and fetched
//! again.

use std::path::{Path, PathBuf};

use crate::image::Digest;
use crate::net::write_atomic;

/// A content-addressed store under a directory.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// The store under `<cache_dir>/sha256`.
    pub fn new(cache_dir: &Path) -> Cache {
        Cache {
            dir: cache_dir.join("sha256"),
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
}
