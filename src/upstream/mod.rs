//! Where upstream releases and files come from.
//!
//! 1. [`open`] picks the [`Source`] for an `[upstream]`: [`github::GitHub`]
//!    (releases API, raw files, archives) or [`git::Git`] (any repository,
//!    through git2).
//! 2. [`choose`] picks the version `update` moves to, by the upstream's
//!    [`Selection`]: `--to TAG`, or the highest release inside `track`
//!    ([`resolve`]); a branch's head commit; a commit stays.
//! 3. [`fetch_file`] downloads one file at a tag through the
//!    content-addressed [`cache::Cache`], verified against the sha256 the lock
//!    recorded when there is one; [`fetch_tree`] reads the whole source tree,
//!    verified against the lock's [`tree_hash`] at the locked version, and
//!    [`locked_tree`] reads that tree from the cache when it is there.
//! 4. A vendored directory is [`Source::list`]ed at a rev: its files, each
//!    with its git blob id, then [`fetch_listed`] one by one: from the cache
//!    by blob id when a release before had the same file, else downloaded
//!    and checked against that id. A source that serves whole archives (the
//!    next ones: Helm chart repositories, release assets) lists the archive's
//!    files with the blob ids of their bytes and caches them as it lists.
//!
//! Every method of [`Source`] that takes a `rev` takes a tag or a full
//! commit sha ([`is_commit`]): a branch is read at the commit the lock
//! records, never at its moving head.

pub mod archive;
pub mod cache;
pub mod git;
pub mod github;
pub mod helm;
mod pristine;
mod suggest;
pub mod tree_hash;

pub use pristine::Pristine;

use std::collections::BTreeMap;

use crate::config::lock::LockedUpstream;
use crate::config::version::in_track;
use crate::config::{Selection, Upstream, UpstreamSource, is_commit};
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

/// Read access to an upstream. A `rev` is a tag or a full commit sha.
pub trait Source {
    /// Every published release or tag (drafts excluded).
    fn releases(&self) -> Result<Vec<Release>>;
    /// One file at a rev.
    fn file(&self, rev: &str, path: &str) -> Result<Vec<u8>>;
    /// The commit a rev points to, when the source says.
    fn commit(&self, rev: &str) -> Result<Option<String>>;
    /// The whole source tree at a rev.
    fn tree(&self, rev: &str) -> Result<SourceTree>;
    /// The commit at the head of a branch now.
    fn branch(&self, name: &str) -> Result<String>;
    /// Every regular file under `dir` (a path ending with `/`, or empty for
    /// the root) at a rev, recursively, sorted by path; symlinks and
    /// submodules are left out, as an archive leaves them. A directory that
    /// does not exist there is [`Error::NotFound`]. A source that had to
    /// read whole files to list them keeps them in `cache` by blob id.
    fn list(&self, rev: &str, dir: &str, cache: &cache::Cache) -> Result<Vec<Listed>>;
    /// The archive a version is read from, when the kind serves one per
    /// version; `None` for a kind whose files come from git.
    fn artifact(&self, _rev: &str) -> Result<Option<Artifact>> {
        Ok(None)
    }
    /// The source tree at `locked`'s version from what this machine kept,
    /// never from the network; `None` when it is not kept.
    fn kept_tree(
        &self,
        _locked: &LockedUpstream,
        _cache: &cache::Cache,
    ) -> Result<Option<SourceTree>> {
        Ok(None)
    }
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
    if let Some(bytes) = cache.get_blob(&listed.blob) {
        return Ok(bytes);
    }
    let bytes = source.file(tag, &listed.path)?;
    let actual = cache::blob_id(&bytes);
    if actual != listed.blob {
        return Err(Error::Checksum {
            what: format!("{} at {tag} (git blob id)", listed.path),
            expected: listed.blob.clone(),
            actual,
        });
    }
    cache.put_blob(&bytes);
    Ok(bytes)
}

/// The source of an upstream.
pub fn open<'a>(upstream: &Upstream, env: &'a Env, client: &'a Client) -> Box<dyn Source + 'a> {
    open_source(&upstream.source, env, client)
}

/// The source `source` names (an upstream's, or the lock's old one).
pub fn open_source<'a>(
    source: &UpstreamSource,
    env: &'a Env,
    client: &'a Client,
) -> Box<dyn Source + 'a> {
    match source {
        UpstreamSource::GitHub { repo } => Box::new(github::GitHub::new(repo, env, client)),
        UpstreamSource::Git { url } => {
            Box::new(git::Git::new(url, &env.cache_dir, client.offline()))
        }
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
/// when allowed: a GitHub archive comes from the download cache
/// ([`github::GitHub`] keeps every archive it fetches there, found by its
/// tree hash), a git upstream from its mirror in the cache; with `online`,
/// it is fetched when neither has it. `None` when it is not at hand offline.
/// Whatever the route, a tree that is not the locked one is never returned.
pub fn locked_tree(
    upstream: &Upstream,
    env: &Env,
    client: &Client,
    cache: &cache::Cache,
    locked: &LockedUpstream,
    online: bool,
) -> Result<Option<SourceTree>> {
    let version = &locked.version;
    match &upstream.source {
        UpstreamSource::GitHub { .. } => {
            if let Some(tree) = cached_tree(cache, locked)? {
                return Ok(Some(tree));
            }
            if !online {
                return Ok(None);
            }
            fetch_tree(&*open(upstream, env, client), version, Some(locked)).map(Some)
        }
        UpstreamSource::Helm { .. } => {
            let source = open(upstream, env, client);
            if let Some(tree) = source.kept_tree(locked, cache)? {
                return Ok(Some(tree));
            }
            if !online {
                return Ok(None);
            }
            fetch_tree(&*source, version, Some(locked)).map(Some)
        }
        UpstreamSource::Git { url } => {
            let git = git::Git::new(url, &env.cache_dir, !online);
            match fetch_tree(&git, version, Some(locked)) {
                Ok(tree) => Ok(Some(tree)),
                Err(e @ Error::Checksum { .. }) => Err(e),
                Err(_) if !online => Ok(None),
                Err(e) => Err(e),
            }
        }
    }
}

/// The locked tree from an archive in the download cache: found by the
/// lock's tree hash and kept only if it unpacks to that tree, or, for a lock
/// written before the tree hash, by the archive's sha256 it recorded.
fn cached_tree(cache: &cache::Cache, up: &LockedUpstream) -> Result<Option<SourceTree>> {
    let found = match (&up.source_tree_sha256, &up.source_sha256) {
        (Some(tree), _) => cache.tree_archive(tree),
        (None, Some(sha)) => cache.get(sha).map(|bytes| (sha.clone(), bytes)),
        (None, None) => None,
    };
    let Some((sha, bytes)) = found else {
        return Ok(None);
    };
    let tree = archive::unpack_tar_gz(&bytes, true).map_err(|detail| Error::Malformed {
        what: "a usable tar.gz archive".into(),
        url: format!("the download cache entry {sha}"),
        detail,
    })?;
    let locked = up
        .source_tree_sha256
        .as_ref()
        .is_none_or(|expected| *expected == tree.tree_sha256);
    Ok(locked.then_some(tree))
}

/// The release `update` moves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The tag.
    pub tag: String,
    /// Set when `--to` named a tag outside `track`.
    pub warning: Option<String>,
}

/// The version `update` moves `up` to, by its [`Selection`]: for release
/// tags, [`resolve`] over the releases listed; for a branch, `to` when it
/// is a commit, else the branch's head; for a commit, `to`, else the
/// commit vendor.toml names.
pub fn choose(up: &Upstream, source: &dyn Source, to: Option<&str>) -> Result<Resolved> {
    let asked = |tag: &str| Resolved {
        tag: tag.to_owned(),
        warning: None,
    };
    match (&up.selection, to) {
        (Selection::Tags(_), _) => resolve(up, &source.releases()?, to),
        (Selection::Branch(_), Some(to)) if !is_commit(to) => Err(Error::usage(
            format!("`{to}` is not a commit: {} follows a branch", up.label()),
            "pass the full 40-hex sha of a commit to --to, or none for the branch's head",
        )),
        (Selection::Branch(branch), None) => Ok(asked(&source.branch(branch)?)),
        (_, Some(to)) => Ok(asked(to)),
        (Selection::Commit, None) => Ok(asked(up.version.as_deref().unwrap_or_default())),
    }
}

/// Picks the target release: `to` when given (it must exist), else the
/// highest release inside `track`, by the upstream's tag pattern.
pub fn resolve(up: &Upstream, releases: &[Release], to: Option<&str>) -> Result<Resolved> {
    if let Some(to) = to {
        let Some(rel) = releases.iter().find(|r| r.tag == to) else {
            return Err(Error::usage(
                format!("`{to}` is not a release of {}", up.source.describe()),
                suggest::unknown_tag(to, releases),
            ));
        };
        let warning = match up.semver(&rel.tag) {
            Some(v) if !in_track(&v, up.track.as_ref(), true) => Some(format!(
                "{to} is outside track `{}`",
                up.track.as_ref().map(|t| t.to_string()).unwrap_or_default()
            )),
            None => Some(format!("{to} is not a semver tag; taken as asked")),
            _ => None,
        };
        return Ok(Resolved {
            tag: rel.tag.clone(),
            warning,
        });
    }
    let best = releases
        .iter()
        .filter(|r| !r.prerelease || up.allow_prerelease)
        .filter_map(|r| up.semver(&r.tag).map(|v| (v, r)))
        .filter(|(v, _)| in_track(v, up.track.as_ref(), up.allow_prerelease))
        .max_by(|a, b| a.0.cmp(&b.0));
    match best {
        Some((_, r)) => Ok(Resolved {
            tag: r.tag.clone(),
            warning: None,
        }),
        None => Err(Error::NoRelease {
            upstream: up.label(),
            track: up
                .track
                .as_ref()
                .map(|t| t.to_string())
                .unwrap_or_else(|| "*".into()),
        }),
    }
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
    if let Some(sha) = expected
        && let Some(bytes) = cache.get(sha)
    {
        return Ok(bytes);
    }
    let bytes = source.file(tag, path)?;
    let actual = cache.put(&bytes);
    if let Some(expected) = expected
        && expected != actual
    {
        return Err(Error::Checksum {
            what: format!("{path} at {tag}"),
            expected: expected.to_string(),
            actual,
        });
    }
    Ok(bytes)
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
    let tree = source.tree(tag)?;
    if let Some(expected) = locked
        .filter(|l| l.version == tag)
        .and_then(|l| l.source_tree_sha256.as_ref())
        && *expected != tree.tree_sha256
    {
        return Err(Error::Checksum {
            what: format!("the source tree at {tag}"),
            expected: expected.clone(),
            actual: tree.tree_sha256,
        });
    }
    Ok(tree)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use std::path::Path;

    /// A GitHub-style archive of one file, `go.mod`, under `r-1.0/`.
    fn archive(go_mod: &[u8]) -> Vec<u8> {
        let mut tar = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_ustar();
        h.set_mode(0o664);
        h.set_size(go_mod.len() as u64);
        tar.append_data(&mut h, "r-1.0/go.mod", go_mod).unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &tar.into_inner().unwrap()).unwrap();
        gz.finish().unwrap()
    }

    fn lock(tree: Option<&str>, archive: Option<&str>) -> LockedUpstream {
        LockedUpstream {
            source_tree_sha256: tree.map(str::to_owned),
            source_sha256: archive.map(str::to_owned),
            ..LockedUpstream::default()
        }
    }

    #[test]
    fn the_cached_tree_is_found_by_the_locked_tree_hash_and_only_if_it_is_that_tree() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache::Cache::new(dir.path());
        let (good, other) = (archive(b"module good\n"), archive(b"module other\n"));
        let good_tree = archive::unpack_tar_gz(&good, true).unwrap().tree_sha256;
        let good_sha = cache.put(&good);
        assert!(
            cached_tree(&cache, &lock(Some(&good_tree), None))
                .unwrap()
                .is_none()
        );

        cache.put_tree(&good_tree, &good_sha);
        let tree = cached_tree(&cache, &lock(Some(&good_tree), None))
            .unwrap()
            .unwrap();
        assert_eq!(tree.files["go.mod"], b"module good\n");

        // An entry naming another archive is not the locked tree.
        cache.put_tree(&good_tree, &cache.put(&other));
        assert!(
            cached_tree(&cache, &lock(Some(&good_tree), None))
                .unwrap()
                .is_none()
        );

        // A lock from before the tree hash finds the archive by its sha256.
        let old = cached_tree(&cache, &lock(None, Some(&good_sha)))
            .unwrap()
            .unwrap();
        assert_eq!(old.tree_sha256, good_tree);
    }

    fn config(track: &str, pre: bool) -> Upstream {
        let text = format!(
            "[upstream]\ngithub = \"o/r\"\nversion = \"v4.2.3\"\ntrack = \"{track}\"\nallow-prerelease = {pre}\n"
        );
        Config::parse(Path::new("."), Path::new("vendor.toml"), &text)
            .unwrap()
            .upstreams
            .remove(0)
    }

    fn rel(tag: &str, pre: bool) -> Release {
        Release {
            tag: tag.into(),
            prerelease: pre,
        }
    }

    #[test]
    fn listed_paths_must_be_plain() {
        assert!(is_clean_path("charts/a/values.yaml"));
        for bad in ["", "/etc/x", "a//b", "a/../b", "./a", "a/"] {
            assert!(!is_clean_path(bad), "{bad}");
        }
    }

    #[test]
    fn highest_in_track_wins() {
        let rels = [
            rel("v4.2.3", false),
            rel("v4.3.0", false),
            rel("v5.0.0", false),
            rel("v3.9", false),
        ];
        let r = resolve(&config(">=4.0.0, <5.0.0", false), &rels, None).unwrap();
        assert_eq!(r.tag, "v4.3.0");
    }

    #[test]
    fn prereleases_need_opt_in() {
        let rels = [rel("v4.3.0", false), rel("v4.4.0", true)];
        assert_eq!(
            resolve(&config(">=4", false), &rels, None).unwrap().tag,
            "v4.3.0"
        );
        assert_eq!(
            resolve(&config(">=4", true), &rels, None).unwrap().tag,
            "v4.4.0"
        );
    }

    #[test]
    fn explicit_to_outside_track_warns() {
        let rels = [rel("v5.0.0", false)];
        let r = resolve(&config(">=4.0.0, <5.0.0", false), &rels, Some("v5.0.0")).unwrap();
        assert!(r.warning.unwrap().contains("outside track"));
        assert!(resolve(&config(">=4", false), &rels, Some("v9")).is_err());
    }
}
