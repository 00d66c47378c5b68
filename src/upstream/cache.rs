//! The content-addressed download cache: `<cache>/sha256/<hex>`, and the
//! same bytes by git blob id, `<cache>/git-blob/<hex>`.
//!
//! An entry's name is the hash of its bytes, and every read re-hashes them,
//! so a corrupted or tampered entry is never used: it is dropped and fetched
//! again. `<cache>/tree/<tree hash>` names the archive entry that holds a
//! source tree, because the lock records the tree's hash, not the archive's
//! (see `upstream::tree_hash`); whoever reads it unpacks the archive and
//! compares the hash again.
//!
//! The blob store is how a vendored directory's files are found
//! before they are downloaded: upstream's listing names each file by its
//! git blob id ([`blob_id`]), and a file that did not change between two
//! releases has the same one.

use std::path::{Path, PathBuf};

use super::known::KnownSha256;
use crate::image::Digest;
use crate::net::write_atomic;

/// A content-addressed store under a directory.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
    trees: PathBuf,
    blobs: PathBuf,
    verdicts: PathBuf,
    known: KnownSha256,
}

/// The git blob id of `bytes`: the sha1 of `blob <len>\0` and the bytes, as
/// `git hash-object` and GitHub's trees API name a file. Hashed here, not by
/// libgit2, whose first use initialises it (and, built with TLS, loaded the
/// system's CA bundle) in every run that reads the cache (issue 23).
pub fn blob_id(bytes: &[u8]) -> String {
    use sha1::Digest as _;
    let mut sha1 = sha1::Sha1::new();
    sha1.update(format!("blob {}\0", bytes.len()).as_bytes());
    sha1.update(bytes);
    hex::encode(sha1.finalize())
}

impl Cache {
    /// The store under `<cache_dir>/sha256` and `<cache_dir>/git-blob`.
    pub fn new(cache_dir: &Path) -> Cache {
        Cache {
            dir: cache_dir.join("sha256"),
            trees: cache_dir.join("tree"),
            blobs: cache_dir.join("git-blob"),
            verdicts: cache_dir.join("verdict"),
            known: KnownSha256::new(cache_dir),
        }
    }

    /// The sha256s of package files remembered by their identity.
    pub(super) fn known_sha256(&self) -> &KnownSha256 {
        &self.known
    }

    /// What a command remembered of its own work under `<cache>/verdict/<kind>/<key>`
    /// ([`Cache::remember`]); `key` is a hex digest. The command that wrote it checks it
    /// before trusting it: a lost or damaged entry costs only the work again.
    pub fn remembered(&self, kind: &str, key: &str) -> Option<Vec<u8>> {
        if key.is_empty() || !key.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        std::fs::read(self.verdicts.join(kind).join(key)).ok()
    }

    /// Remembers `bytes` under `kind` and `key`; a failure to write only costs the work again.
    pub fn remember(&self, kind: &str, key: &str, bytes: &[u8]) {
        if !key.is_empty() && key.bytes().all(|b| b.is_ascii_hexdigit()) {
            let _ = write_atomic(&self.verdicts.join(kind).join(key), bytes);
        }
    }

    /// The bytes stored under `sha256`, if present and intact.
    pub fn get(&self, sha256: &str) -> Option<Vec<u8>> {
        read_intact(&self.dir, sha256, |b| Digest::of(b).hex().to_owned())
    }

    /// Stores `bytes`, returning their sha256. A failure to write only
    /// costs a later download, so it is not an error.
    pub fn put(&self, bytes: &[u8]) -> String {
        let sha = Digest::of(bytes).hex().to_owned();
        store(&self.dir, &sha, bytes);
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

    /// The bytes whose git blob id is `id`, if present and intact.
    pub fn get_blob(&self, id: &str) -> Option<Vec<u8>> {
        read_intact(&self.blobs, id, blob_id)
    }

    /// Stores `bytes` by their git blob id and by their sha256 (so that a
    /// pristine copy missing from disk is found by the lock's sha256),
    /// returning the blob id.
    pub fn put_blob(&self, bytes: &[u8]) -> String {
        let id = blob_id(bytes);
        store(&self.blobs, &id, bytes);
        self.put(bytes);
        id
    }

    /// Stores `bytes` by the git blob id `id` alone, which the caller read
    /// from a git object store that verified it: nothing is hashed here.
    pub fn put_blob_named(&self, id: &str, bytes: &[u8]) {
        if !id.is_empty() && id.bytes().all(|b| b.is_ascii_hexdigit()) {
            store(&self.blobs, id, bytes);
        }
    }

    /// Stores `bytes`, whose git blob id the caller computed and checked as
    /// `id`, by that id and by their sha256, returning the sha256: as
    /// [`Cache::put_blob`], without hashing the blob id a second time.
    pub fn put_blob_checked(&self, id: &str, bytes: &[u8]) -> String {
        self.put_blob_named(id, bytes);
        self.put(bytes)
    }

    /// Stores `bytes`, whose sha256 the caller verified as `sha256`, by
    /// their git blob id and by that sha256 (as [`Cache::put_blob`], without
    /// hashing them a second time: issue 23). Bytes stored under that sha256
    /// already are left as they are, blob id and all.
    pub fn put_blob_verified(&self, bytes: &[u8], sha256: &str) {
        if Digest::from_hex(sha256).is_err() || self.dir.join(sha256).exists() {
            return;
        }
        store(&self.blobs, &blob_id(bytes), bytes);
        store(&self.dir, sha256, bytes);
    }
}

/// The entry `name` of `dir` when `hash` of its bytes is its name; a
/// damaged entry is removed.
fn read_intact(dir: &Path, name: &str, hash: impl Fn(&[u8]) -> String) -> Option<Vec<u8>> {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let path = dir.join(name);
    let bytes = std::fs::read(&path).ok()?;
    if hash(&bytes) == name {
        Some(bytes)
    } else {
        let _ = std::fs::remove_file(&path);
        None
    }
}

fn store(dir: &Path, name: &str, bytes: &[u8]) {
    let path = dir.join(name);
    if !path.exists() {
        let _ = write_atomic(&path, bytes);
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

    #[test]
    fn blobs_are_kept_by_their_git_id_and_their_sha256() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        // `printf 'hello\n' | git hash-object --stdin`
        let id = cache.put_blob(b"hello\n");
        assert_eq!(id, "ce013625030ba8dba906f756967f9e9ca394464a");
        assert_eq!(cache.get_blob(&id).unwrap(), b"hello\n");
        assert_eq!(cache.get(Digest::of(b"hello\n").hex()).unwrap(), b"hello\n");
        std::fs::write(dir.path().join("git-blob").join(&id), b"tampered").unwrap();
        assert_eq!(cache.get_blob(&id), None);
        assert_eq!(cache.get_blob("../sha256"), None);
    }

    #[test]
    fn bytes_hashed_before_are_kept_under_the_names_given() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let sha = Digest::of(b"hello\n").hex().to_owned();
        cache.put_blob_verified(b"hello\n", &sha);
        assert_eq!(cache.get(&sha).unwrap(), b"hello\n");
        let id = "ce013625030ba8dba906f756967f9e9ca394464a";
        assert_eq!(cache.get_blob(id).unwrap(), b"hello\n");
        // A name that is no hash is not a path to write to.
        cache.put_blob_named("../escape", b"x");
        cache.put_blob_verified(b"y", "../escape");
        assert!(!dir.path().join("escape").exists());
        // Known by its sha256 already: nothing is hashed or written again.
        std::fs::remove_file(dir.path().join("git-blob").join(id)).unwrap();
        cache.put_blob_verified(b"hello\n", &sha);
        assert_eq!(cache.get_blob(id), None);
        // A wrong name is stored, and never read back as those bytes.
        cache.put_blob_named(&"0".repeat(40), b"z");
        assert_eq!(cache.get_blob(&"0".repeat(40)), None);
    }
}
