//! Which release the committed files match, when an adoption refuses them
//! (issue 20): cozystack's kamaji package says `26.3.6-edge` while its
//! charts are 26.3.5-edge's (a commit moved only the Dockerfile ARG), so the
//! adoption at `version` takes the difference for hand edits.
//!
//! 1. Only for a package with no lock refused for hand edits or stray files,
//!    and never offline: the releases are listed and fetched through each
//!    upstream's source and the cache, as any update does.
//! 2. For each upstream that versions by release tags, the releases nearest
//!    its `version` inside `track`, [`PER_SIDE`] on each side
//!    ([`upstream::nearest`]): a bounded few, nearest first.
//! 3. Each is tried as an adoption with `--dry-run` at that release
//!    (`Stage::Probe`): it matches when it renders every committed file byte
//!    for byte, so no hand edit and no stray file is left.
//! 4. The refusal then names the release that matched and what to do, or
//!    how many were checked. A release that cannot be fetched ends the
//!    search, and the refusal is said as it was.

use std::collections::HashSet;

use super::run::Run;
use super::summary::UpdateReport;
use super::{Probe, Stage, UpdateOptions};
use crate::config::lock::Lock;
use crate::config::{Config, Selection, Upstream};
use crate::error::{Error, ExitCode, Result};
use crate::upstream;
use crate::workspace::Context;

/// How many releases are tried below `version`, and as many above.
pub(super) const PER_SIDE: usize = 3;

/// `err`, when it refuses an adoption's committed files, with the release
/// they match (or how many releases near `version` were checked); any
/// other error as it is.
pub(super) fn explain(ctx: &Context, err: Error) -> Error {
    let (Error::HandEdits(message) | Error::StrayFiles(message)) = &err else {
        return err;
    };
    if ctx.client.offline() || !matches!(Lock::load(&ctx.root), Ok(None)) {
        return err;
    }
    let Ok(Some(said)) = search(ctx) else {
        return err;
    };
    let message = format!("{message}; {said}");
    match err {
        Error::StrayFiles(_) => Error::StrayFiles(message),
        _ => Error::HandEdits(message),
    }
}

/// What the releases near each upstream's `version` say of the committed
/// files: the one they match, or how many did not; `None` when there was
/// none to try.
fn search(ctx: &Context) -> Result<Option<String>> {
    let config = Config::load(&ctx.root)?;
    let mut checked = Vec::new();
    for up in &config.upstreams {
        let (Selection::Tags(_), Some(version)) = (&up.selection, &up.version) else {
            continue;
        };
        let source = upstream::open(up, &ctx.env, &ctx.client);
        for tag in upstream::nearest(up, &source.releases()?, version, PER_SIDE) {
            ctx.shell.status(
                "Comparing",
                format!("the committed files with {} {tag}", up.label()),
            );
            if renders_committed(ctx, up.name.as_deref(), &tag)? {
                return Ok(Some(found(up, version, &tag)));
            }
            checked.push(tag);
        }
    }
    Ok((!checked.is_empty()).then(|| {
        format!(
            "none of the {} releases nearest `version` ({}) renders the committed files either",
            checked.len(),
            checked.join(", ")
        )
    }))
}

/// Whether adopting the upstream `name` at `tag` renders every committed
/// file as it is; an error only when the release could not be read.
fn renders_committed(ctx: &Context, name: Option<&str>, tag: &str) -> Result<bool> {
    let opts = UpdateOptions {
        dry_run: true,
        ..UpdateOptions::default()
    };
    let probe = Probe {
        upstream: name,
        version: tag,
    };
    match super::run(ctx, &opts, Stage::Probe(probe)) {
        Ok(report) => Ok(report.changed.is_empty() && report.conflicts.is_empty()),
        // A file that release lacks is a difference like any other.
        Err(Error::NotFound { .. }) => Ok(false),
        Err(e) if e.exit_code() == ExitCode::Failure => Err(e),
        Err(_) => Ok(false),
    }
}

/// What to do when the committed files are `up`'s `tag`, not `version`.
fn found(up: &Upstream, version: &str, tag: &str) -> String {
    let to = match &up.name {
        Some(name) => format!("{name}={version}"),
        None => version.to_owned(),
    };
    format!(
        "the committed files match {} {tag} exactly, not {version}: set `version = \"{tag}\"` in vendor.toml:{}, \
         then run `revendor update --to {to}` (it adopts at {tag}, then moves to {version})",
        up.label(),
        up.version_line
    )
}

/// The end of a [`Stage::Probe`] run: its report, `changed` listing the
/// rendered files the release does not render as they are committed.
pub(super) fn unmatched(mut run: Run<'_>) -> Result<UpdateReport> {
    let rendered: HashSet<&str> = run.vendored.target.iter().map(|v| v.to.as_str()).collect();
    run.report.changed = run
        .txn
        .changed_paths()?
        .into_iter()
        .filter(|p| rendered.contains(&p.as_str()))
        .collect();
    Ok(run.report)
}
