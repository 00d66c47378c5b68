//! The sha256 of a pristine copy remembered by the identity of its file, so that a render,
//! check or update of a package whose copies did not change does not hash each again (the
//! 5 MB copy of the render benchmark cost about 2.5 ms of its CPU time; issue 23).
//!
//! The identity is what git's index keeps for the same job ([`FileIdentity`]): device,
//! inode, size, and the modification and change times to the nanosecond, with the file's
//! path. A write through the file system moves the change time, which no program sets back,
//! so a copy edited since it was hashed has another identity and is hashed again. A file
//! changed twice within one tick of the clock that stamps it would keep its times, so a file
//! is remembered only once its last change is [`SETTLED`] in the past (git's rule for a
//! "racily clean" entry). The lock's sha256 is still what the remembered one is compared
//! with: the memo only stands in for hashing the bytes. Only a large copy is looked up: a
//! small one is hashed faster than its entry is read (`pristine.rs`, `REMEMBERED_FROM`).
//!
//! Entries live under `<cache>/verdict/file-sha256/<sha256 of path and identity>` and hold
//! the hex sha256. Like every verdict, a lost entry costs only the hash, and one that is not
//! 64 hex digits is ignored.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::image::Digest;
use crate::net::write_atomic;
use crate::paths::FileIdentity;

/// How long after its last change a file's identity is trusted to name its bytes: longer
/// than any file system's timestamp granularity (FAT's is 2 s).
pub const SETTLED: Duration = Duration::from_secs(3);

/// The remembered sha256s under a cache directory.
#[derive(Debug, Clone)]
pub struct KnownSha256 {
    dir: PathBuf,
}

impl KnownSha256 {
    /// The entries under `<cache_dir>/verdict/file-sha256`.
    pub fn new(cache_dir: &Path) -> KnownSha256 {
        KnownSha256 {
            dir: cache_dir.join("verdict").join("file-sha256"),
        }
    }

    /// The sha256 remembered for the file at `path` with identity `id`, if any.
    pub fn get(&self, path: &Path, id: &FileIdentity) -> Option<String> {
        let text = std::fs::read_to_string(self.entry(path, id)).ok()?;
        let sha = text.trim_end();
        (sha.len() == 64 && sha.bytes().all(|b| b.is_ascii_hexdigit())).then(|| sha.to_owned())
    }

    /// Remembers `sha256` for the file at `path` with identity `id`, when its last change
    /// is [`SETTLED`] before `now`. A failure to write only costs the hash again.
    pub fn put(&self, path: &Path, id: &FileIdentity, sha256: &str, now: SystemTime) {
        if id.changed_before(now, SETTLED) {
            let _ = write_atomic(&self.entry(path, id), sha256.as_bytes());
        }
    }

    fn entry(&self, path: &Path, id: &FileIdentity) -> PathBuf {
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let key = format!("file-sha256 1\n{}\n{id}\n", absolute.display());
        self.dir.join(Digest::of(key.as_bytes()).hex())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(dir: &Path, name: &str, bytes: &[u8]) -> (PathBuf, FileIdentity) {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let (_, id) = crate::paths::read_opt_identified(&path).unwrap().unwrap();
        (path, id.expect("a regular file read whole has an identity"))
    }

    #[test]
    fn a_sha256_is_remembered_for_a_settled_file_of_the_same_identity_only() {
        let cache = tempfile::tempdir().unwrap();
        let package = tempfile::tempdir().unwrap();
        let known = KnownSha256::new(cache.path());
        let (path, id) = identity(package.path(), "a", b"one");
        let sha = Digest::of(b"one").hex().to_owned();
        // Just written: not settled, so not remembered.
        known.put(&path, &id, &sha, SystemTime::now());
        assert_eq!(known.get(&path, &id), None);
        let later = SystemTime::now() + SETTLED + Duration::from_secs(1);
        known.put(&path, &id, &sha, later);
        assert_eq!(known.get(&path, &id), Some(sha.clone()));
        // Another path with the same identity, and the same path rewritten: not known.
        assert_eq!(known.get(&package.path().join("b"), &id), None);
        let (_, rewritten) = identity(package.path(), "a", b"three");
        assert_ne!(rewritten, id, "another size is another identity");
        assert_eq!(known.get(&path, &rewritten), None);
        // An entry that is not a sha256 is ignored.
        std::fs::write(known.entry(&path, &id), "not a sha\n").unwrap();
        assert_eq!(known.get(&path, &id), None);
    }
}
