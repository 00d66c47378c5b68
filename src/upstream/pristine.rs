//! [`Pristine`]: the pristine copy of a vendored file, read and verified
//! against the lock, the one place that does so.
//!
//! 1. The lock names the copy's sha256; without it there is nothing to
//!    verify against. A file a vendor patch creates inside a vendored
//!    directory has no upstream copy: it is empty, and verified as such.
//! 2. The copy under `upstream/` must have that sha256.
//! 3. A copy missing from disk is taken from the download cache by that
//!    sha256, or, when the caller allows the network, downloaded at the
//!    locked version and verified.
//!
//! The answer is a state rather than an error because callers differ:
//! `check` reports each state as a finding, `update` re-fetches, `render` and
//! `patch refresh` stop ([`Pristine::verified`]).

use std::path::Path;

use super::{Source, cache::Cache, fetch_file};
use crate::config::Vendor;
use crate::config::lock::Lock;
use crate::error::{Error, Result};
use crate::image::Digest;
use crate::paths::{self, FileIdentity};

/// The state of a vendored file's pristine copy under `upstream/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pristine {
    /// Its bytes match the lock (read from disk, the download cache, or
    /// downloaded and verified).
    Verified(Vec<u8>),
    /// The lock records no sha256 for it.
    NotLocked,
    /// The copy on disk has another sha256 than the lock's.
    Edited {
        /// The lock's sha256.
        expected: String,
        /// The sha256 on disk.
        actual: String,
    },
    /// Not on disk, not in the download cache, and not to be downloaded.
    Missing,
    /// Downloaded, but upstream served other bytes than the lock's.
    Unverifiable(String),
}

impl Pristine {
    /// Reads the pristine copy of `vendor` in the package at `root`. With
    /// `download`, a copy that is neither on disk nor in `cache` is fetched
    /// from it at the locked version.
    pub fn read(
        root: &Path,
        lock: &Lock,
        vendor: &Vendor,
        cache: &Cache,
        download: Option<&dyn Source>,
    ) -> Result<Pristine> {
        Pristine::read_kept(root, lock, vendor, cache, download).map(|(state, _)| state)
    }

    /// [`Pristine::read`], and whether the copy under `upstream/` is the one
    /// read: a writer that would write the same bytes back need not, while
    /// a copy taken from the cache or downloaded is not on disk yet.
    pub fn read_kept(
        root: &Path,
        lock: &Lock,
        vendor: &Vendor,
        cache: &Cache,
        download: Option<&dyn Source>,
    ) -> Result<(Pristine, bool)> {
        if vendor.created {
            return Ok((Pristine::Verified(Vec::new()), false));
        }
        let upstream = vendor.upstream.as_deref();
        let (Some(sha), Some(version)) = (
            lock.file_sha256(upstream, &vendor.from),
            lock.version(upstream),
        ) else {
            return Ok((Pristine::NotLocked, false));
        };
        let copy = root.join(vendor.pristine());
        if let Some((bytes, identity)) = paths::read_opt_identified(&copy)? {
            let actual = sha256_of(cache, &copy, &bytes, identity.as_ref());
            return Ok(if actual == sha {
                (Pristine::Verified(bytes), true)
            } else {
                let expected = sha.to_owned();
                (Pristine::Edited { expected, actual }, false)
            });
        }
        if let Some(bytes) = cache.get(sha) {
            return Ok((Pristine::Verified(bytes), false));
        }
        let Some(source) = download else {
            return Ok((Pristine::Missing, false));
        };
        let state = match fetch_file(source, cache, version, &vendor.from, Some(sha)) {
            Ok(bytes) => Pristine::Verified(bytes),
            Err(e @ Error::Checksum { .. }) => Pristine::Unverifiable(e.to_string()),
            Err(e) => return Err(e),
        };
        Ok((state, false))
    }

    /// The verified bytes, or why a command that needs them cannot go on.
    pub fn verified(self, vendor: &Vendor) -> Result<Vec<u8>> {
        let path = vendor.pristine();
        match self {
            Pristine::Verified(bytes) => Ok(bytes),
            Pristine::NotLocked => Err(Error::usage(
                format!("the lock records no sha256 for `{}`", vendor.from),
                "run `revendor update` to vendor it",
            )),
            Pristine::Edited { expected, actual } => Err(Error::PristineEdited {
                file: path,
                expected,
                actual,
            }),
            Pristine::Missing => Err(Error::usage(
                format!("`{path}` is missing and not in the download cache"),
                "run `revendor update` to fetch the pristine copy",
            )),
            Pristine::Unverifiable(message) => Err(Error::Malformed {
                what: "the bytes the lock records".into(),
                url: vendor.from.clone(),
                detail: message,
            }),
        }
    }
}

/// The size from which a copy's sha256 is looked up in the memo (`upstream::known`) before it
/// is hashed: below it, hashing the bytes already read costs less than reading the memo's
/// entry, a file of its own. A directory package's thousands of small files are hashed; a 5 MB
/// copy is looked up (issue 23: the lookups were 58% of `check` on 10,000 files of 600 bytes).
const REMEMBERED_FROM: usize = 64 << 10;

/// The sha256 of `bytes`, read from the file `path` of `identity`: remembered in `cache` when
/// that file is large enough to be worth it ([`REMEMBERED_FROM`]), was hashed before and has
/// not changed since (`upstream::known`), else hashed.
fn sha256_of(cache: &Cache, path: &Path, bytes: &[u8], identity: Option<&FileIdentity>) -> String {
    if bytes.len() < REMEMBERED_FROM {
        return Digest::of(bytes).hex().to_owned();
    }
    let known = cache.known_sha256();
    if let Some(sha) = identity.and_then(|id| known.get(path, id)) {
        return sha;
    }
    let sha = Digest::of(bytes).hex().to_owned();
    if let Some(id) = identity {
        known.put(path, id, &sha, std::time::SystemTime::now());
    }
    sha
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::config::lock::{LockedFile, LockedUpstream};

    fn vendor() -> Vendor {
        let config = Config::parse(
            Path::new("."),
            Path::new("vendor.toml"),
            "[upstream]\ngithub = \"o/r\"\nversion = \"v1\"\n[[vendor]]\nfrom = \"a.yml\"\nto = \"t/a.yml\"\n",
        )
        .unwrap();
        config.vendor[0].clone()
    }

    fn lock(sha256: &str) -> Lock {
        Lock {
            upstreams: vec![LockedUpstream {
                version: "v1".into(),
                ..LockedUpstream::default()
            }],
            files: vec![LockedFile {
                upstream: None,
                from: "a.yml".into(),
                sha256: sha256.into(),
            }],
            ..Lock::default()
        }
    }

    #[test]
    fn each_state_of_the_copy_on_disk() {
        let root = tempfile::tempdir().unwrap();
        let cache = Cache::new(&root.path().join("cache"));
        let v = vendor();
        let read = |lock: &Lock| Pristine::read(root.path(), lock, &v, &cache, None).unwrap();
        let sha = Digest::of(b"a\n").hex().to_owned();

        assert_eq!(read(&Lock::default()), Pristine::NotLocked);
        assert_eq!(read(&lock(&sha)), Pristine::Missing);

        std::fs::create_dir_all(root.path().join("upstream")).unwrap();
        std::fs::write(root.path().join("upstream/a.yml"), b"a\n").unwrap();
        assert_eq!(read(&lock(&sha)), Pristine::Verified(b"a\n".to_vec()));

        std::fs::write(root.path().join("upstream/a.yml"), b"b\n").unwrap();
        assert_eq!(
            read(&lock(&sha)),
            Pristine::Edited {
                expected: sha.clone(),
                actual: Digest::of(b"b\n").hex().to_owned(),
            }
        );
        let e = read(&lock(&sha)).verified(&v).unwrap_err();
        assert!(
            e.to_string().contains("the pristine copy was edited"),
            "{e}"
        );
    }

    #[test]
    fn a_remembered_sha256_stands_for_the_same_large_file_only() {
        let root = tempfile::tempdir().unwrap();
        let cache = Cache::new(&root.path().join("cache"));
        let v = vendor();
        let copy = root.path().join("upstream/a.yml");
        std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
        let large = vec![b'a'; REMEMBERED_FROM];
        std::fs::write(&copy, &large).unwrap();
        let sha = Digest::of(&large).hex().to_owned();
        // Remembered as if hashed long after its last change; the entry
        // names other bytes, so a read that hashed would see the real ones.
        let remember = |sha: &str| {
            let (_, identity) = paths::read_opt_identified(&copy).unwrap().unwrap();
            let later = std::time::SystemTime::now() + super::super::known::SETTLED * 2;
            cache
                .known_sha256()
                .put(&copy, &identity.unwrap(), sha, later);
        };
        let other = Digest::of(b"other").hex().to_owned();
        remember(&other);
        let read = || Pristine::read(root.path(), &lock(&sha), &v, &cache, None).unwrap();
        assert_eq!(
            read(),
            Pristine::Edited {
                expected: sha.clone(),
                actual: other.clone(),
            },
            "a large copy's sha256 is taken from the memo"
        );
        // Edited to a small file: hashed, even with a memo entry for it.
        std::fs::write(&copy, b"b2\n").unwrap();
        remember(&other);
        assert_eq!(
            read(),
            Pristine::Edited {
                expected: sha.clone(),
                actual: Digest::of(b"b2\n").hex().to_owned(),
            },
            "a small copy is hashed, whatever the memo says"
        );
    }

    #[test]
    fn a_copy_missing_from_disk_comes_from_the_cache_by_its_sha256() {
        let root = tempfile::tempdir().unwrap();
        let cache = Cache::new(&root.path().join("cache"));
        let sha = cache.put(b"cached\n");
        let v = vendor();
        let (state, on_disk) =
            Pristine::read_kept(root.path(), &lock(&sha), &v, &cache, None).unwrap();
        assert!(!on_disk, "a copy from the cache is not on disk yet");
        assert_eq!(state.verified(&v).unwrap(), b"cached\n");
        std::fs::create_dir_all(root.path().join("upstream")).unwrap();
        std::fs::write(root.path().join("upstream/a.yml"), b"cached\n").unwrap();
        let kept = Pristine::read_kept(root.path(), &lock(&sha), &v, &cache, None).unwrap();
        assert_eq!(kept, (Pristine::Verified(b"cached\n".to_vec()), true));
    }
}
