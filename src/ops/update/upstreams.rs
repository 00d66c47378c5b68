//! Each upstream of an update: where it comes from, the version the lock
//! has it at, and the version it moves to.
//!
//! 1. `--to` is split by upstream: `NAME=TAG` names one, a bare `TAG` is
//!    the only upstream's ([`targets`]).
//! 2. For each upstream ([`resolve`]): its source; the lock's entry; the
//!    old source when vendor.toml now names another (a fork: the locked
//!    copies come from the old one, the release from the new one, even at
//!    the same tag); the target ([`upstream::choose`]: release tags, a
//!    branch's head, or a commit).
//! 3. The stamps: the versions at the lock (vendor.toml's when adopting)
//!    and at the targets, with the commits a `{commit}` rewrite needs.
//!
//! What each move says (its status line, a `--to` outside `track`) is kept
//! in it and said by [`announce`], once `update` knows it goes on with these
//! moves: an adoption whose target is another version is run as two updates
//! instead (`adopt_first.rs`).
//!
//! Each [`Move`] is then what the vendor loop, the source patches and the
//! lock ask about the upstream of a `[[vendor]]` or `[[patch]]`.

use crate::config::lock::{LOCK_PATH, Lock, LockedUpstream, Pending};
use crate::config::{Config, ConfigError, Placeholders, Selection, Upstream, UpstreamSource};
use crate::error::{Error, Result};
use crate::paths;
use crate::render::Stamp;
use crate::upstream::{self, Source};
use crate::workspace::Context;

use super::summary::UpstreamMove;

/// One upstream as this update moves it.
pub(super) struct Move<'a> {
    /// Its `[upstream]` or `[[upstream]]`.
    pub upstream: &'a Upstream,
    /// Where the release comes from.
    pub source: Box<dyn Source + 'a>,
    /// The source the lock vendored from, when vendor.toml names another.
    pub old_source: Option<Box<dyn Source + 'a>>,
    /// That source, as the lock describes it.
    pub moved_from: Option<String>,
    /// Its entry in the lock; `None` when it is adopted.
    pub locked: Option<&'a LockedUpstream>,
    /// The version the locked copies are at (vendor.toml's when adopting).
    pub base_version: String,
    /// The version it moves to.
    pub target: String,
    /// Its placeholders at `base_version`.
    pub base_values: Placeholders,
    /// Its placeholders at `target`; the commit may be learnt at the end.
    pub target_values: Placeholders,
    /// Nothing moves: the same version of the same source.
    pub same_release: bool,
    /// What resolving it found worth a warning, said by [`announce`].
    pub warnings: Vec<String>,
}

/// Which version each upstream of an update is asked to move to.
#[derive(Debug, Clone, Copy)]
pub(super) enum Wanted<'w> {
    /// `--to` values (`TAG`, `NAME=TAG`); none: each selection picks.
    Asked(&'w [String]),
    /// `--continue`: the versions of the update left pending.
    Pending(&'w Pending),
    /// The first step of an adoption that then moves: each upstream the
    /// lock lacks stays at vendor.toml's `version` (a branch: its head).
    Adoption,
    /// As [`Wanted::Adoption`], with the upstream of that name adopted at
    /// that release instead of its `version`.
    Probe(Option<&'w str>, &'w str),
}

impl Move<'_> {
    /// What the report says of this move.
    pub fn report(&self) -> UpstreamMove {
        UpstreamMove {
            name: self.upstream.name.clone(),
            source: self.upstream.source.describe(),
            from: self.base_version.clone(),
            to: self.target.clone(),
            moved_from: self.moved_from.clone(),
            adopted: self.locked.is_none(),
            added: Vec::new(),
            removed: Vec::new(),
            renamed: Vec::new(),
        }
    }

    /// The source the locked copies come from (the old one after a move).
    pub fn base_source(&self) -> &dyn Source {
        self.old_source.as_deref().unwrap_or(&*self.source)
    }

    /// The upstream's name (`None`: the unnamed `[upstream]`).
    pub fn name(&self) -> Option<&str> {
        self.upstream.name.as_deref()
    }

    /// How the status lines name it: its source, after its name when it
    /// has one.
    pub fn label(&self) -> String {
        let source = self.upstream.source.describe();
        match self.name() {
            Some(name) => format!("{name} ({source})"),
            None => source,
        }
    }
}

/// The move of the upstream `name` names (`None`: the only one).
pub(super) fn of<'m, 'a>(moves: &'m [Move<'a>], name: Option<&str>) -> &'m Move<'a> {
    moves.iter().find(|m| m.name() == name).unwrap_or(&moves[0])
}

/// The stamp at the locked versions and at the targets, with `pins`.
pub(super) fn stamps(moves: &[Move<'_>], pins: Vec<(Option<String>, String)>) -> (Stamp, Stamp) {
    let at = |target: bool| {
        let versions = moves
            .iter()
            .map(|m| {
                let values = if target {
                    &m.target_values
                } else {
                    &m.base_values
                };
                (m.upstream.name.clone(), values.clone())
            })
            .collect();
        Stamp::new(versions, pins.clone())
    };
    (at(false), at(true))
}

/// `--to` values by upstream: `NAME=TAG`, or a bare `TAG` when there is one
/// upstream.
fn targets(config: &Config, to: &[String]) -> Result<Vec<(Option<String>, String)>> {
    let mut out = Vec::new();
    for value in to {
        if let Some((name, tag)) = value.split_once('=')
            && config
                .upstreams
                .iter()
                .any(|u| u.name.as_deref() == Some(name))
        {
            out.push((Some(name.to_owned()), tag.to_owned()));
        } else if let [only] = config.upstreams.as_slice() {
            out.push((only.name.clone(), value.clone()));
        } else {
            return Err(Error::usage(
                format!("--to `{value}` does not say which upstream it moves"),
                format!(
                    "there are several upstreams: pass --to NAME=TAG, NAME one of {}",
                    config
                        .upstreams
                        .iter()
                        .filter_map(|u| u.name.as_deref())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    Ok(out)
}

/// Resolves every upstream of `config` for this update to the version
/// `wanted` asks for, or the one its selection gives. Nothing is said yet:
/// [`announce`] says it.
pub(super) fn resolve<'a>(
    ctx: &'a Context,
    config: &'a Config,
    lock: Option<&'a Lock>,
    wanted: Wanted<'_>,
) -> Result<Vec<Move<'a>>> {
    let asked = match wanted {
        Wanted::Asked(to) => targets(config, to)?,
        _ => Vec::new(),
    };
    let to = |name: Option<&str>| match wanted {
        Wanted::Pending(p) => p.version_of(name).map(str::to_owned),
        _ => asked
            .iter()
            .find(|(n, _)| n.as_deref() == name)
            .map(|(_, tag)| tag.clone()),
    };
    let mut moves = Vec::new();
    for up in &config.upstreams {
        let source = upstream::open(up, &ctx.env, &ctx.client);
        let locked = lock.and_then(|l| l.upstream(up.name.as_deref()));
        let moved_from = locked
            .filter(|l| !up.source.is(&l.source))
            .map(|l| l.source.clone());
        let old_source = match &moved_from {
            Some(described) => Some(old_upstream(ctx, up, described)?),
            None => None,
        };
        let version = match wanted {
            Wanted::Probe(name, at) if up.name.as_deref() == name => Some(at.to_owned()),
            _ => up.version.clone(),
        };
        let resolved = match (wanted, locked, &version) {
            // Adopted where vendor.toml says, as the one-step adoption's
            // base is: not looked up among the releases.
            (Wanted::Adoption | Wanted::Probe(..), None, Some(version)) => upstream::Resolved {
                tag: version.clone(),
                warning: None,
            },
            _ => {
                let _spinner = ctx.shell.spinner("resolving the release");
                upstream::choose(up, &*source, to(up.name.as_deref()).as_deref())?
            }
        };
        let mut warnings: Vec<String> = resolved.warning.into_iter().collect();
        let target = resolved.tag;
        let base_version = match (locked, &version) {
            (Some(l), _) => l.version.clone(),
            (None, Some(v)) => v.clone(),
            // A branch adopted without a lock: the copies are at its head.
            (None, None) => target.clone(),
        };
        // The same version of the same source may still name new content
        // (an OCI tag pushed again): then it is fetched, not kept.
        let moved = match locked {
            Some(l) if target == base_version && moved_from.is_none() => source.moved(l)?,
            _ => None,
        };
        if let Some(digest) = &moved {
            warnings.push(format!(
                "{target} of {} names new content: manifest {digest}, not the locked one",
                up.label()
            ));
        }
        let same_release = target == base_version && moved_from.is_none() && moved.is_none();
        let mv = Move {
            upstream: up,
            base_values: up.placeholders(&base_version, None),
            target_values: up.placeholders(&target, None),
            source,
            old_source,
            moved_from,
            locked,
            base_version,
            target,
            same_release,
            warnings,
        };
        moves.push(app_versions(commits(config, mv)?)?);
    }
    Ok(moves)
}

/// Says what resolving found: each move's warnings, then its status line.
pub(super) fn announce(ctx: &Context, moves: &[Move<'_>]) {
    for mv in moves {
        mv.warnings.iter().for_each(|w| ctx.shell.warn(w));
        status(ctx, mv);
    }
}

/// `Updating …`, `Checking …` or `Adopting …` for one upstream.
fn status(ctx: &Context, mv: &Move<'_>) {
    let (label, base_version, target) = (mv.label(), &mv.base_version, &mv.target);
    match &mv.moved_from {
        Some(old) => ctx.shell.status(
            "Updating",
            format!("{old} {base_version} -> {label} {target}"),
        ),
        None if mv.same_release => {
            let verb = if mv.locked.is_some() {
                "Checking"
            } else {
                "Adopting"
            };
            ctx.shell.status(verb, format!("{label} at {target}"));
        }
        None => ctx
            .shell
            .status("Updating", format!("{label} {base_version} -> {target}")),
    }
}

/// `mv` with the commits its placeholders know: the lock's at the locked
/// version, the version itself for a commit or a branch, and, when a
/// `{commit}` rewrite needs one that is still unknown, the source's answer.
fn commits<'a>(config: &Config, mut mv: Move<'a>) -> Result<Move<'a>> {
    let locked_commit = mv
        .locked
        .filter(|l| l.version == mv.base_version)
        .and_then(|l| l.commit.clone());
    let is_commit = !matches!(mv.upstream.selection, Selection::Tags(_));
    mv.base_values.commit = locked_commit
        .clone()
        .or_else(|| is_commit.then(|| mv.base_version.clone()));
    mv.target_values.commit = if mv.same_release {
        mv.base_values.commit.clone()
    } else {
        is_commit.then(|| mv.target.clone())
    };
    let name = mv.name().map(str::to_owned);
    let needs = config.needs_commit(name.as_deref());
    if needs && mv.base_values.commit.is_none() {
        mv.base_values.commit = mv.base_source().commit(&mv.base_version)?;
        Stamp::require_commit(config, name.as_deref(), &mv.base_values)?;
    }
    if needs && mv.target_values.commit.is_none() {
        mv.target_values.commit = mv.source.commit(&mv.target)?;
        Stamp::require_commit(config, name.as_deref(), &mv.target_values)?;
    }
    Ok(mv)
}

/// `mv` with the `{app-version}` of both sides, for a kind whose versions
/// have one (a chart): the lock's at the locked version, else the
/// archive's.
fn app_versions(mut mv: Move<'_>) -> Result<Move<'_>> {
    mv.base_values.app_version = match mv.locked.filter(|l| l.version == mv.base_version) {
        Some(l) if l.archive_sha256.is_some() => l.app_version.clone(),
        _ => mv
            .base_source()
            .artifact(&mv.base_version)?
            .and_then(|a| a.app_version),
    };
    mv.target_values.app_version = if mv.same_release {
        mv.base_values.app_version.clone()
    } else {
        mv.source.artifact(&mv.target)?.and_then(|a| a.app_version)
    };
    Ok(mv)
}

/// The upstream the lock vendored from, described as the lock's `source`
/// names it, when vendor.toml now names another.
fn old_upstream<'a>(
    ctx: &'a Context,
    up: &Upstream,
    described: &str,
) -> Result<Box<dyn Source + 'a>> {
    let Some(old) = UpstreamSource::from_described(described) else {
        let path = ctx.root.join(LOCK_PATH);
        let line = paths::read_opt(&path)?.and_then(|b| {
            Lock::line_of_key(
                &String::from_utf8_lossy(&b),
                "upstream",
                up.name.as_deref(),
                "source",
            )
        });
        return Err(ConfigError::at(
            path,
            line,
            format!("`source` = \"{described}\" is neither `github:owner/name` nor `git:URL`"),
        )
        .hint("the lock is written by revendor: restore it from git")
        .into());
    };
    Ok(upstream::open_source(&old, &ctx.env, &ctx.client))
}
