//! Where upstream versions and files come from: one [`Source`] per kind of
//! upstream, and what every kind shares.
//!
//! 1. [`open`] picks the [`Source`] for an `[upstream]`: [`github::GitHub`]
//!    (releases API, trees API, raw files, archives), [`git::Git`] (any
//!    repository, through git2, its http(s) sent by [`net`](crate::net)),
//!    or a Helm chart ([`helm::Repo`] from an HTTP chart repository,
//!    [`helm::Oci`] from an OCI registry through
//!    [`registry`](crate::registry)).
//! 2. [`choose`] picks the version `update` moves to, by the upstream's
//!    [`Selection`](crate::config::Selection): `--to TAG`, or the highest
//!    release inside `track` ([`resolve`]); a branch's head commit; a commit
//!    stays. [`Source::newer`] is what `check --online` calls newer, and
//!    [`Source::moved`] a version whose content changed (a re-pushed OCI
//!    tag).
//! 3. [`fetch_file`] downloads one file at a tag through the
//!    content-addressed [`cache::Cache`], verified against the sha256 the lock
//!    recorded when there is one; [`fetch_tree`] reads the whole source tree,
//!    verified against the lock's [`tree_hash`] at the locked version, and
//!    [`locked_tree`] reads that tree from what [`Source::kept_tree`] kept
//!    on this machine, downloading only when allowed.
//!    A `[[vendor]]` with `asset` is such a file too: [`open`] gives its
//!    upstream a [`release_asset::ReleaseAssets`], which serves the name from
//!    the release.
//! 4. A vendored directory is [`Source::list`]ed at a rev: its files, each
//!    with its git blob id, then [`fetch_listed`] one by one: from the cache
//!    by blob id when a release before had the same file, else downloaded
//!    and checked against that id.
//! 5. No vendored file is larger than [`MAX_FILE`]: a larger one is
//!    [`Error::TooLarge`], refused as it downloads (issue 21).
//!
//! # A new kind of upstream
//!
//! A kind (a Helm chart repository, an OCI chart, release assets) is one
//! file here implementing [`Source`], one arm in [`open_source`], and its
//! keys in `config::UpstreamSource`. It answers:
//! - its versions: [`releases`](Source::releases) (and
//!   [`branch`](Source::branch) if it has branches); [`newer`](Source::newer)
//!   only when "newer" is more than a higher version (a re-pushed tag);
//! - the files of a version: [`file`](Source::file), and
//!   [`list`](Source::list) for a directory; a kind that serves one archive
//!   reads it whole, lists its files with `listed_from` (which caches them
//!   by blob id), and fails `file` only for what the archive lacks;
//! - a source tree: [`tree`](Source::tree) (for source patches), and
//!   [`kept_tree`](Source::kept_tree): that tree from this machine only;
//! - what the lock records: [`describe`](Source::describe) is its `source`,
//!   [`commit`](Source::commit) what pins a version beside its name (`None`
//!   when the kind has no such thing); the tree's hash and every file's
//!   sha256 are recorded by `update` whatever the kind;
//! - what a pull request links: [`pages`](Source::pages).
//!
//! Every method that takes a `rev` takes a version as [`releases`] names
//! it or a full commit sha ([`is_commit`](crate::config::is_commit)): a
//! branch is read at the commit the lock records, never at its moving head.
//!
//! [`releases`]: Source::releases

pub mod archive;
pub mod cache;
pub mod git;
mod git_http;
pub mod github;
pub mod helm;
mod known;
mod pristine;
pub mod release_asset;
mod select;
mod suggest;
pub mod tree_hash;

pub use known::SETTLED;
pub use pristine::Pristine;
pub use select::{Newer, Resolved, choose, nearest, newer_release, resolve};

use std::collections::BTreeMap;

use crate::config::lock::LockedUpstream;
use crate::config::{Upstream, UpstreamSource};
use crate::env::Env;
use crate::error::{Error, Result};
use crate::net::Client;

/// One release (or tag) of the upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    /// The tag, exactly as upstream spells it.
    pub tag: String,
    /// Marked as a prerelease by the release page.
    pub prerelease: bool,
}

/// An upstream source tree at one tag, in memory.
#[derive(Debug, Clone, Default)]
pub struct SourceTree {
    /// Path (relative, `/`-separated) → contents of each regular file.
    pub files: BTreeMap<String, Vec<u8>>,
    /// Symbolic and hard links, which are never followed: path → what it is
    /// ("a symlink to `…`"), so a patch aimed at one can be told why its
    /// file is missing.
    pub links: BTreeMap<String, String>,
    /// The [`tree_hash`] of the whole tree, links and execute bits included:
    /// what the lock records and verifies (never the archive's sha256, which
    /// changes when GitHub recompresses).
    pub tree_sha256: String,
}

/// One file of a directory listing ([`Source::list`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// Its path in the upstream repository (`/`-separated, relative).
    pub path: String,
    /// The git blob id of its bytes ([`cache::blob_id`]): how it is found
    /// in the cache, and what a download must hash to.
    pub blob: String,
}

/// The one archive a version is read from, for a kind that serves one
/// (a Helm chart): what the lock records beside the version, and what the
/// pull request links.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Artifact {
    /// Where it was downloaded.
    pub url: String,
    /// Its sha256, verified against what the repository lists.
    pub sha256: String,
    /// A chart's `appVersion`.
    pub app_version: Option<String>,
    /// A chart's `home`.
    pub home: Option<String>,
    /// A chart's `sources`.
    pub sources: Vec<String>,
}

/// Read access to one kind of upstream; the module doc says what a new
/// kind must answer. A `rev` is a version or a full commit sha.
pub trait Source {
    /// How the lock's `source` and messages name it: `github:owner/name`,
    /// `git:URL`.
    fn describe(&self) -> String;
    /// Every published release or tag (drafts excluded).
    fn releases(&self) -> Result<Vec<Release>>;
    /// The commit at the head of a branch now.
    fn branch(&self, name: &str) -> Result<String>;
    /// The commit a rev points to, when the source says: the lock records
    /// it beside the version.
    fn commit(&self, rev: &str) -> Result<Option<String>>;
    /// What is newer than `locked` for `up`, as `check --online` reports it.
    /// Provided: a higher release ([`newer_release`]) or a moved branch.
    fn newer(&self, up: &Upstream, locked: &LockedUpstream) -> Result<Newer> {
        newer_release(self, up, &locked.version)
    }
    /// The content id (an OCI manifest digest) the locked version names now,
    /// when it is not the lock's: the same version with new content, which
    /// `update` fetches. Provided: `None`, for kinds whose versions never
    /// change once published.
    fn moved(&self, _locked: &LockedUpstream) -> Result<Option<String>> {
        Ok(None)
    }
    /// One file at a rev.
    fn file(&self, rev: &str, path: &str) -> Result<Vec<u8>>;
    /// [`Source::file`], for a kind that knows a file's git blob id before
    /// reading it: from `cache` when it holds it. Provided:
    /// [`Source::file`].
    fn file_cached(&self, rev: &str, path: &str, _cache: &cache::Cache) -> Result<Vec<u8>> {
        self.file(rev, path)
    }
    /// One file of [`Source::list`]'s listing at a rev. Provided:
    /// [`Source::file`] of its path; a kind that can read a file by its
    /// blob id overrides it, so that a directory's files are not each found
    /// by a walk from the root (issue 23).
    fn listed_file(&self, rev: &str, listed: &Listed) -> Result<Vec<u8>> {
        self.file(rev, &listed.path)
    }
    /// Every regular file under `dir` (a path ending with `/`, or empty for
    /// the root) at a rev, recursively, sorted by path; symlinks and
    /// submodules are left out, as an archive leaves them. A directory that
    /// does not exist there is [`Error::NotFound`]. A source that had to
    /// read whole files to list them keeps them in `cache` by blob id.
    fn list(&self, rev: &str, dir: &str, cache: &cache::Cache) -> Result<Vec<Listed>>;
    /// The whole source tree at a rev.
    fn tree(&self, rev: &str) -> Result<SourceTree>;
    /// The source tree at `locked`'s version from what this machine kept
    /// (the download cache, a mirror), never from the network; `None` when
    /// it is not kept. A kept tree that is not the locked one is never
    /// returned as it.
    fn kept_tree(
        &self,
        locked: &LockedUpstream,
        cache: &cache::Cache,
    ) -> Result<Option<SourceTree>>;
    /// How an upgrade's pull request names and links a move from `from` to
    /// `to`; `release` says whether `to` is a release (a branch's commit has
    /// no release page).
    fn pages(&self, from: Option<&str>, to: &str, release: bool) -> Pages;
    /// The archive a version is read from, when the kind serves one per
    /// version (what the lock records beside the version); `None` for a
    /// kind whose files come from git.
    fn artifact(&self, _rev: &str) -> Result<Option<Artifact>> {
        Ok(None)
    }
}

/// What a pull request links for an upstream ([`Source::pages`]); each link
/// `None` when the kind has no such page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pages {
    /// A short name: the repository's, without its owner.
    pub name: String,
    /// The upstream's web page.
    pub url: Option<String>,
    /// The release notes of the version moved to.
    pub release_notes: Option<String>,
    /// The changes between the two versions.
    pub compare: Option<String>,
}

/// The files of a listing by their blob ids, for a source that read them
/// whole (an archive, a mirror): each put in `cache`, so that
/// [`fetch_listed`] finds it there.
pub(crate) fn listed_from<'f>(
    files: impl IntoIterator<Item = (&'f String, &'f Vec<u8>)>,
    dir: &str,
    cache: &cache::Cache,
) -> Vec<Listed> {
    files
        .into_iter()
        .filter(|(path, _)| path.starts_with(dir))
        .map(|(path, bytes)| Listed {
            path: path.clone(),
            blob: cache.put_blob(bytes),
        })
        .collect()
}

/// Whether a listed path is relative and plain: no empty, `.` or `..`
/// component, so that it names a file inside the vendored directory only.
pub(crate) fn is_clean_path(path: &str) -> bool {
    !path.is_empty()
        && !path.chars().any(char::is_control)
        && path
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
}

/// A listed file's bytes at `tag`: from the cache by its blob id when there,
/// else downloaded and checked against it.
pub fn fetch_listed(
    source: &dyn Source,
    cache: &cache::Cache,
    tag: &str,
    listed: &Listed,
) -> Result<Vec<u8>> {
    fetch_listed_hashed(source, cache, tag, listed).map(|(bytes, _)| bytes)
}

/// [`fetch_listed`], with the bytes' sha256 when it was computed on the
/// way (a download is stored by it): the caller that records the sha256
/// does not hash the file again (issue 23). From the cache, `None`: the
/// cache checked the blob id only.
pub fn fetch_listed_hashed(
    source: &dyn Source,
    cache: &cache::Cache,
    tag: &str,
    listed: &Listed,
) -> Result<(Vec<u8>, Option<String>)> {
    if let Some(bytes) = cache.get_blob(&listed.blob) {
        return Ok((bytes, None));
    }
    let bytes = within_bound(source, tag, &listed.path, source.listed_file(tag, listed)?)?;
    let actual = cache::blob_id(&bytes);
    if actual != listed.blob {
        return Err(Error::Checksum {
            what: format!("{} at {tag}", listed.path),
            digest: "git blob id",
            expected: listed.blob.clone(),
            actual,
        });
    }
    let sha256 = cache.put_blob_checked(&actual, &bytes);
    Ok((bytes, Some(sha256)))
}

/// The largest file revendor vendors (docs/reference.md, "Limits"): far
/// above the largest manifest bundle vendored today (a few MiB of CRDs).
pub const MAX_FILE: u64 = 64 << 20;

/// The error for `path` at `rev` of `upstream` being larger than
/// [`MAX_FILE`].
pub fn too_large(upstream: &str, rev: &str, path: &str) -> Error {
    Error::TooLarge {
        what: format!("`{path}` of {upstream} at {rev}"),
        limit: format!("at most {} MiB a vendored file", MAX_FILE >> 20),
        remote: true,
    }
}

/// `bytes`, the file `path` at `rev` of `source`, unless it is larger than
/// [`MAX_FILE`]: for the kinds whose `file` does not bound what it reads.
fn within_bound(source: &dyn Source, rev: &str, path: &str, bytes: Vec<u8>) -> Result<Vec<u8>> {
    if bytes.len() as u64 > MAX_FILE {
        return Err(too_large(&source.describe(), rev, path));
    }
    Ok(bytes)
}

/// The source of an upstream (an OCI chart's pinned version read by its
/// digest). A GitHub upstream whose `[[vendor]]`s take release assets
/// serves them ([`release_asset::ReleaseAssets`]) beside its repository's
/// files.
pub fn open<'a>(upstream: &Upstream, env: &'a Env, client: &'a Client) -> Box<dyn Source + 'a> {
    let source = source_of(&upstream.source, Some(upstream), env, client);
    match &upstream.source {
        UpstreamSource::GitHub { repo } if !upstream.assets.is_empty() => Box::new(
            release_asset::ReleaseAssets::new(source, repo, upstream.assets.clone(), env, client),
        ),
        _ => source,
    }
}

/// The source `source` names (an upstream's, or the lock's old one).
pub fn open_source<'a>(
    source: &UpstreamSource,
    env: &'a Env,
    client: &'a Client,
) -> Box<dyn Source + 'a> {
    source_of(source, None, env, client)
}

/// The source `source` names, with what `up` pins.
fn source_of<'a>(
    source: &UpstreamSource,
    up: Option<&Upstream>,
    env: &'a Env,
    client: &'a Client,
) -> Box<dyn Source + 'a> {
    match source {
        UpstreamSource::Helm { repo, chart } if source.is_oci() => {
            Box::new(helm::Oci::new(repo, chart, up, env, client.offline()))
        }
        UpstreamSource::GitHub { repo } => Box::new(github::GitHub::new(repo, env, client)),
        UpstreamSource::Git { url } => Box::new(git::Git::new(url, &env.cache_dir, client)),
        UpstreamSource::Helm { repo, chart } => Box::new(helm::Repo::new(
            repo,
            chart,
            env.helm_auth.as_deref(),
            client,
            cache::Cache::new(&env.cache_dir),
        )),
    }
}

/// The source tree at the locked version, for a check that downloads only
/// when allowed: what [`Source::kept_tree`] finds on this machine, else,
/// with `online`, fetched and verified ([`fetch_tree`]). `None` when it is
/// not at hand offline. Whatever the route, a tree that is not the locked
/// one is never returned.
pub fn locked_tree(
    source: &dyn Source,
    cache: &cache::Cache,
    locked: &LockedUpstream,
    online: bool,
) -> Result<Option<SourceTree>> {
    if let Some(tree) = source.kept_tree(locked, cache)? {
        return Ok(Some(tree));
    }
    if !online {
        return Ok(None);
    }
    fetch_tree(source, &locked.version, Some(locked)).map(Some)
}

/// A vendored file's bytes at `tag`: from the cache when its sha256 is known
/// and cached, else downloaded (and then checked against `expected`).
pub fn fetch_file(
    source: &dyn Source,
    cache: &cache::Cache,
    tag: &str,
    path: &str,
    expected: Option<&str>,
) -> Result<Vec<u8>> {
    fetch_file_hashed(source, cache, tag, path, expected).map(|(bytes, _)| bytes)
}

/// [`fetch_file`] with the sha256 of the bytes, which it knows either way
/// (the cache entry's name, or the hash of the download): a caller that
/// records it does not hash the same bytes again (issue 23).
pub fn fetch_file_hashed(
    source: &dyn Source,
    cache: &cache::Cache,
    tag: &str,
    path: &str,
    expected: Option<&str>,
) -> Result<(Vec<u8>, String)> {
    if let Some(sha) = expected
        && let Some(bytes) = cache.get(sha)
    {
        return Ok((bytes, sha.to_owned()));
    }
    let bytes = within_bound(source, tag, path, source.file_cached(tag, path, cache)?)?;
    let actual = cache.put(&bytes);
    if let Some(expected) = expected
        && expected != actual
    {
        return Err(Error::Checksum {
            what: format!("{path} at {tag}"),
            digest: "sha256",
            expected: expected.to_string(),
            actual,
        });
    }
    Ok((bytes, actual))
}

/// The source tree at `tag`. When `locked` (the upstream as the lock has
/// it) is at `tag` and records a tree hash, the tree must have it: the same
/// tag serving other files is an [`Error::Checksum`], however the archive's
/// bytes changed or not.
pub fn fetch_tree(
    source: &dyn Source,
    tag: &str,
    locked: Option<&LockedUpstream>,
) -> Result<SourceTree> {
    verify_tree(source.tree(tag)?, tag, locked)
}

/// `tree` (at `tag`) when `locked` is at another version, records no tree
/// hash, or records this tree's; else an [`Error::Checksum`].
fn verify_tree(tree: SourceTree, tag: &str, locked: Option<&LockedUpstream>) -> Result<SourceTree> {
    if let Some(expected) = locked
        .filter(|l| l.version == tag)
        .and_then(|l| l.source_tree_sha256.as_ref())
        && *expected != tree.tree_sha256
    {
        return Err(Error::Checksum {
            what: format!("the source tree at {tag}"),
            digest: "tree hash",
            expected: expected.clone(),
            actual: tree.tree_sha256,
        });
    }
    Ok(tree)
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::image::Digest;

    /// An upstream of one file, `listed.yaml`, counting its reads.
    struct OneFile {
        bytes: Vec<u8>,
        reads: Cell<usize>,
    }

    impl Source for OneFile {
        fn describe(&self) -> String {
            "git:one-file".into()
        }
        fn releases(&self) -> Result<Vec<Release>> {
            Ok(Vec::new())
        }
        fn branch(&self, name: &str) -> Result<String> {
            Err(Error::NotFound {
                what: format!("branch {name}"),
                url: self.describe(),
            })
        }
        fn commit(&self, _rev: &str) -> Result<Option<String>> {
            Ok(None)
        }
        fn file(&self, _rev: &str, _path: &str) -> Result<Vec<u8>> {
            self.reads.set(self.reads.get() + 1);
            Ok(self.bytes.clone())
        }
        fn list(&self, _rev: &str, _dir: &str, _cache: &cache::Cache) -> Result<Vec<Listed>> {
            Ok(Vec::new())
        }
        fn tree(&self, _rev: &str) -> Result<SourceTree> {
            Ok(SourceTree::default())
        }
        fn kept_tree(&self, _: &LockedUpstream, _: &cache::Cache) -> Result<Option<SourceTree>> {
            Ok(None)
        }
        fn pages(&self, _from: Option<&str>, _to: &str, _release: bool) -> Pages {
            Pages::default()
        }
    }

    #[test]
    fn a_listed_download_is_checked_stored_and_its_sha256_handed_on() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache::Cache::new(dir.path());
        let source = OneFile {
            bytes: b"hello\n".to_vec(),
            reads: Cell::new(0),
        };
        let listed = Listed {
            path: "listed.yaml".into(),
            blob: cache::blob_id(b"hello\n"),
        };
        let sha256 = Digest::of(b"hello\n").hex().to_owned();
        let fetched = fetch_listed_hashed(&source, &cache, "v1", &listed).unwrap();
        assert_eq!(fetched, (b"hello\n".to_vec(), Some(sha256.clone())));
        assert_eq!(cache.get_blob(&listed.blob).unwrap(), b"hello\n");
        assert_eq!(cache.get(&sha256).unwrap(), b"hello\n");
        let again = fetch_listed_hashed(&source, &cache, "v1", &listed).unwrap();
        assert_eq!(
            again,
            (b"hello\n".to_vec(), None),
            "from the cache, unhashed"
        );
        assert_eq!(source.reads.get(), 1);
        let other = Listed {
            blob: cache::blob_id(b"other\n"),
            ..listed
        };
        let e = fetch_listed(&source, &cache, "v1", &other).unwrap_err();
        assert!(matches!(e, Error::Checksum { .. }), "{e}");
    }

    #[test]
    fn listed_paths_must_be_plain() {
        assert!(is_clean_path("charts/a/values.yaml"));
        for bad in ["", "/etc/x", "a//b", "a/../b", "./a", "a/"] {
            assert!(!is_clean_path(bad), "{bad}");
        }
    }
}
