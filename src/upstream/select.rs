//! Which version of an upstream: the one `update` moves to ([`choose`],
//! [`resolve`]) and what `check --online` calls newer ([`Newer`]).
//!
//! Both read the upstream's [`Selection`]: release tags ordered by the
//! version the tag pattern reads out of them and bounded by `track`, a
//! branch's head, or a commit that never moves. A kind of upstream whose
//! versions move in another way (an OCI tag re-pushed with new content)
//! answers [`Source::newer`] itself; every other kind takes
//! [`newer_release`] through the trait's provided method.

use super::{Release, Source, suggest};
use crate::config::version::in_track;
use crate::config::{Selection, Upstream, is_commit};
use crate::error::{Error, Result};

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

/// The releases nearest `version` inside `track`, at most `per_side` below
/// and as many above, nearest first (the one below before the one above at
/// each distance); `version` itself is left out. Empty when `version` is not
/// a version the tag pattern reads. For `update`'s question "which release
/// do the committed files match" (issue 20), asked of a bounded few.
pub fn nearest(up: &Upstream, releases: &[Release], version: &str, per_side: usize) -> Vec<String> {
    let Some(at) = up.semver(version) else {
        return Vec::new();
    };
    let mut known: Vec<(semver::Version, &str)> = releases
        .iter()
        .filter(|r| r.tag != version && (!r.prerelease || up.allow_prerelease))
        .filter_map(|r| up.semver(&r.tag).map(|v| (v, r.tag.as_str())))
        .filter(|(v, _)| *v != at && in_track(v, up.track.as_ref(), up.allow_prerelease))
        .collect();
    known.sort();
    let split = known.partition_point(|(v, _)| *v < at);
    let mut below = known[..split].iter().rev().take(per_side);
    let mut above = known[split..].iter().take(per_side);
    let mut out = Vec::new();
    loop {
        let (b, a) = (below.next(), above.next());
        if b.is_none() && a.is_none() {
            return out;
        }
        out.extend(b.into_iter().chain(a).map(|(_, tag)| (*tag).to_owned()));
    }
}

/// What is newer upstream than the locked version, as `check --online`'s
/// `upstream-newer` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Newer {
    /// Release tags: the highest release above the locked one that `update`
    /// would move to (inside `track`), and the highest stable one outside.
    Releases {
        /// Inside `track` (prereleases only with `allow-prerelease`).
        inside: Option<Release>,
        /// Outside `track`, never a prerelease.
        outside: Option<Release>,
    },
    /// A branch whose head is no longer the locked commit.
    Branch {
        /// The branch followed.
        branch: String,
        /// The commit at its head now.
        head: String,
    },
    /// The locked version's tag now names other content (an OCI chart's tag
    /// pushed again): what `update` would fetch at the same version.
    Moved {
        /// The version, as the lock has it.
        tag: String,
        /// The manifest digest its tag names now (`sha256:…`).
        digest: String,
    },
    /// Nothing newer: the locked version is the newest, a commit, or not a
    /// version the tag pattern reads.
    Nothing,
}

/// [`Newer`] for an upstream that versions by release tags and branches:
/// `releases` is asked only for tags, `branch` only for a branch.
pub fn newer_release<S: Source + ?Sized>(source: &S, up: &Upstream, locked: &str) -> Result<Newer> {
    match &up.selection {
        Selection::Branch(branch) => {
            let head = source.branch(branch)?;
            Ok(if head == locked {
                Newer::Nothing
            } else {
                Newer::Branch {
                    branch: branch.clone(),
                    head,
                }
            })
        }
        Selection::Commit => Ok(Newer::Nothing),
        Selection::Tags(_) => match up.semver(locked) {
            Some(current) => Ok(newer_among(up, &source.releases()?, &current)),
            None => Ok(Newer::Nothing),
        },
    }
}

/// The highest of `releases` above `current`, inside and outside `track`.
fn newer_among(up: &Upstream, releases: &[Release], current: &semver::Version) -> Newer {
    let highest = |inside: bool| -> Option<Release> {
        let allowed = inside && up.allow_prerelease;
        releases
            .iter()
            .filter(|r| !r.prerelease || allowed)
            .filter_map(|r| up.semver(&r.tag).map(|v| (v, r)))
            .filter(|(v, _)| v > current)
            .filter(|(v, _)| {
                let in_track = in_track(v, up.track.as_ref(), allowed);
                if inside {
                    in_track
                } else {
                    !in_track && v.pre.is_empty()
                }
            })
            .max_by(|a, b| a.0.cmp(&b.0))
            .map(|(_, r)| r.clone())
    };
    match (highest(true), highest(false)) {
        (None, None) => Newer::Nothing,
        (inside, outside) => Newer::Releases { inside, outside },
    }
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
    fn nearest_alternates_below_and_above_inside_track() {
        let up = config(">=4.0.0, <5.0.0", false);
        let rels: Vec<Release> = [
            "v3.9.0", "v4.0.0", "v4.1.0", "v4.2.0", "v4.2.3", "v4.2.4", "v4.3.0", "v5.0.0",
        ]
        .iter()
        .map(|t| rel(t, false))
        .chain([rel("v4.2.5-rc.1", true), rel("latest", false)])
        .collect();
        assert_eq!(
            nearest(&up, &rels, "v4.2.3", 2),
            ["v4.2.0", "v4.2.4", "v4.1.0", "v4.3.0"]
        );
        assert_eq!(
            nearest(&up, &rels, "v4.2.3", 9),
            ["v4.2.0", "v4.2.4", "v4.1.0", "v4.3.0", "v4.0.0"]
        );
        assert!(nearest(&up, &rels, "latest", 2).is_empty());
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

    #[test]
    fn newer_is_the_highest_above_the_lock_inside_and_outside_track() {
        let rels = [
            rel("v4.2.3", false),
            rel("v4.3.0", false),
            rel("v4.4.0", true),
            rel("v5.0.0", false),
            rel("v6.0.0-rc.1", true),
        ];
        let up = config(">=4.0.0, <5.0.0", false);
        let newer = |locked: &str| newer_among(&up, &rels, &up.semver(locked).unwrap());
        assert_eq!(
            newer("v4.2.3"),
            Newer::Releases {
                inside: Some(rel("v4.3.0", false)),
                outside: Some(rel("v5.0.0", false)),
            }
        );
        assert_eq!(newer("v5.0.0"), Newer::Nothing);
    }
}
