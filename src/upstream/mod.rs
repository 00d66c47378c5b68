//! Where upstream releases and files come from.
//!
//! 1. [`open`] picks the [`Source`] for an `[upstream]`: [`github::GitHub`]
//!    (releases API, raw files, archives) or [`git::Git`] (any repository,
//!    through git2).
//! 2. [`choose`] picks the version `update` moves to, by the upstream's
//!    [`Selection`]: `--to TAG`, or the highest release inside `track`
//!    ([`resolve`]); a branch's head commit; a commit stays.
//!
//! Every method of [`Source`] that takes a `rev` takes a tag or a full
//! commit sha ([`is_commit`]): a branch is read at the commit the lock
//! records, never at its moving head.
//! 3. [`fetch_file`] downloads one file at a tag through the
//!    content-addressed [`cache::Cache`], verified against the sha256 the lock
//!    recorded when there is one; [`locked_tree`] reads the source tree at the
//!    locked version from the cache when it is there.

pub mod archive;
pub mod cache;
pub mod git;
pub mod github;
mod pristine;
mod suggest;

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
    /// Path (relative, `/`-separated) → contents.
    pub files: BTreeMap<String, Vec<u8>>,
    /// sha256 of the archive it came from, when it came from one.
    pub archive_sha256: Option<String>,
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
    }
}

/// The source tree at the locked version, for a check that downloads only
/// when allowed: a GitHub archive comes from the download cache by the
/// sha256 the lock records ([`github::GitHub`] puts every archive it fetches
/// there), a git upstream from its mirror in the cache; with `online`, it is
/// fetched when neither has it. `None` when it is not at hand offline.
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
            if let Some(sha) = &locked.source_sha256
                && let Some(bytes) = cache.get(sha)
            {
                let files =
                    archive::unpack_tar_gz(&bytes, true).map_err(|detail| Error::Malformed {
                        what: "a usable tar.gz archive".into(),
                        url: format!("the download cache entry {sha}"),
                        detail,
                    })?;
                return Ok(Some(SourceTree {
                    files,
                    archive_sha256: Some(sha.clone()),
                }));
            }
            if !online {
                return Ok(None);
            }
            open(upstream, env, client).tree(version).map(Some)
        }
        UpstreamSource::Git { url } => {
            match git::Git::new(url, &env.cache_dir, !online).tree(version) {
                Ok(tree) => Ok(Some(tree)),
                Err(_) if !online => Ok(None),
                Err(e) => Err(e),
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use std::path::Path;

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
