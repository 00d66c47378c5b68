//! `patch-upstreamed`'s verdicts on source patches, remembered in the cache by their inputs.
//!
//! Checking a source patch reads the upstream source tree: the archive from the download
//! cache, unpacked and hashed, then every section applied to it. On a warm cache that was
//! most of `check --offline` (0.18 s and 100 MB on the multus package, against 0.03 s with
//! an empty cache, which skips the check; issue 23). The verdict depends only on the tree
//! (the lock's tree hash), the patch's bytes and its `strip`, so it is kept under
//! `<cache>/verdict/<sha256 of those>` and a later run with the same inputs reads it back
//! instead of the tree.
//!
//! The entry lists the upstreamed sections' indexes, one a line (none: empty). Like every
//! cache entry, a lost or unreadable one costs only the work it saved; one that does not
//! parse is ignored.

use std::path::{Path, PathBuf};

use crate::image::Digest;
use crate::net::write_atomic;

/// The verdicts under a cache directory.
pub(super) struct Verdicts {
    dir: PathBuf,
}

/// What a verdict is about: one source patch against one locked tree.
pub(super) struct Key(String);

impl Key {
    /// The key of `patch` (its bytes, read with `strip`) against the tree `tree_sha256`.
    pub(super) fn new(tree_sha256: &str, strip: usize, patch: &[u8]) -> Key {
        let mut inputs = format!("patch-upstreamed 1\n{tree_sha256}\n{strip}\n").into_bytes();
        inputs.extend_from_slice(patch);
        Key(Digest::of(&inputs).hex().to_owned())
    }
}

impl Verdicts {
    /// The verdicts kept under `<cache_dir>/verdict`.
    pub(super) fn new(cache_dir: &Path) -> Verdicts {
        Verdicts {
            dir: cache_dir.join("verdict"),
        }
    }

    /// The upstreamed sections remembered for `key`, if any were.
    pub(super) fn get(&self, key: &Key) -> Option<Vec<usize>> {
        let text = std::fs::read_to_string(self.dir.join(&key.0)).ok()?;
        text.lines().map(|l| l.parse().ok()).collect()
    }

    /// Remembers `upstreamed` for `key`. A failure to write only costs the work again.
    pub(super) fn put(&self, key: &Key, upstreamed: &[usize]) {
        let text: String = upstreamed.iter().map(|i| format!("{i}\n")).collect();
        let _ = write_atomic(&self.dir.join(&key.0), text.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_is_read_back_by_the_same_inputs_only() {
        let dir = tempfile::tempdir().unwrap();
        let verdicts = Verdicts::new(dir.path());
        let key = Key::new("aa", 1, b"patch");
        assert_eq!(verdicts.get(&key), None);
        verdicts.put(&key, &[0, 2]);
        assert_eq!(verdicts.get(&key), Some(vec![0, 2]));
        assert_eq!(verdicts.get(&Key::new("aa", 1, b"patch2")), None);
        assert_eq!(verdicts.get(&Key::new("ab", 1, b"patch")), None);
        assert_eq!(verdicts.get(&Key::new("aa", 0, b"patch")), None);
        let none = Key::new("aa", 0, b"patch");
        verdicts.put(&none, &[]);
        assert_eq!(verdicts.get(&none), Some(vec![]));
        std::fs::write(dir.path().join("verdict").join(&none.0), "x\n").unwrap();
        assert_eq!(verdicts.get(&none), None);
    }
}
