//! The end of an update whose files all carried (steps 5 to 7 of
//! `update.rs`): the source patches verified at the target (a conflict
//! kept with `--keep-conflicts`, a pending one's resolution taken with
//! `--continue`), upstreamed sections settled, then the patches, the lock, the rewrites and pins of
//! files not rendered from upstream and vendor.toml staged beside the
//! rendered files, and the transaction committed and checked
//! (`closing.rs`).

use std::collections::BTreeSet;

use super::run::Run;
use super::source::{self, SourceFacts};
use super::source_conflict::{self, SourceConflict};
use super::summary::UpdateReport;
use super::upstreams::Move;
use super::{arg_digest, closing, upstreamed};
use crate::config::lock::{
    LOCK_PATH, Lock, LockedImage, LockedPatch, LockedUpstream, Pending, Schema,
};
use crate::config::{Config, Placeholders, Selection};
use crate::error::{Error, Result};
use crate::image::Digest;
use crate::ops::render::{edits, removed};
use crate::paths::{self, Transaction};
use crate::render::{self, Package, Patches, Stamp, origin};
use crate::workspace::Context;

/// Finishes `run` (see the module docs); `pins` are the pins the update
/// started with, for a lock that had none.
pub(super) fn finish(
    mut run: Run<'_>,
    package: Package<'_>,
    pins: Vec<(Option<String>, String)>,
) -> Result<UpdateReport> {
    let (ctx, config) = (run.ctx, package.config());
    let pending = run.resume.map(|r| r.pending());
    let mut facts = verify_sources(&mut run, config, pending)?;
    if !run.report.conflicts.is_empty() {
        let sources: Vec<SourceConflict> = facts
            .iter_mut()
            .flat_map(|f| std::mem::take(&mut f.conflicts))
            .collect();
        run.keep_conflicts(&package, &sources)?;
        return Ok(run.report);
    }
    if upstreamed::settle(&mut run.report, run.opts.drop_upstreamed) {
        return Ok(run.report);
    }
    edits::require_started(config, package.patches())?;
    let txn = &mut run.txn;
    let mut locked_patches = stage_patches(config, package.patches(), &mut facts, txn)?;
    let dropped =
        upstreamed::remove_sections(config, txn, &mut locked_patches, &mut run.report.upstreamed)?;
    removed::remember(ctx, config, txn);
    if let Some(pending) = pending {
        source_conflict::remove(txn, pending);
    }
    let (locked_upstreams, target_stamp) = lock_upstreams(ctx, run.moves, facts, run.target_stamp)?;
    let repinned = arg_digest::repin(ctx, config, &target_stamp, |f| {
        paths::read(&ctx.root.join(f))
    })?;
    run.report.notes.extend(repinned.notes);
    let read = |f: &str| match repinned.files.iter().find(|(r, _)| r == f) {
        Some((_, bytes)) => Ok(bytes.clone()),
        None => paths::read(&ctx.root.join(f)),
    };
    let rewritten = render::rewrite_in_place(config, &target_stamp, read)?;
    let pinned = render::pin_in_place(config, &target_stamp, &rewritten, read)?;
    for (file, bytes) in rewritten.into_iter().chain(pinned) {
        txn.stage(&file, bytes);
    }
    stage_removals(&mut run, &package);
    run.report.notes.extend(run.removed.notes());
    if let Some(lock) = package.lock() {
        for o in crate::check::removed_patch_files(config, lock, &ctx.root)? {
            run.txn.remove(&o.file);
            run.report.notes.push(o.deleted_note());
        }
    }
    run.report
        .notes
        .extend(edits::started_notes(package.patches()));
    let new_lock = Lock {
        schema: Schema::CURRENT,
        upstreams: locked_upstreams,
        files: std::mem::take(&mut run.locked_files),
        patches: locked_patches,
        images: match package.lock().map(|l| l.images.clone()) {
            Some(images) if !images.is_empty() => images,
            _ => pins
                .into_iter()
                .map(|(name, reference)| LockedImage {
                    name,
                    reference,
                    ..LockedImage::default()
                })
                .collect(),
        },
        // A patch dropped as upstreamed is gone from vendor.toml with this
        // commit: the record must not list it, or the next run would take it
        // for a removed [[patch]] to revert.
        outputs: origin::outputs(&run.vendored.target, package.patches())
            .into_iter()
            .map(|mut o| {
                o.patches.retain(|p| !dropped.contains(&p.name));
                o
            })
            .collect(),
        pending: None,
        lookup: Default::default(),
    };
    stage_vendor_toml(ctx, run.moves, &dropped, &mut run.txn)?;
    let previous_lock = paths::read_opt(&ctx.root.join(LOCK_PATH))?
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    run.txn.stage(
        LOCK_PATH,
        new_lock.to_toml(previous_lock.as_deref()).into_bytes(),
    );
    let before = run.before.as_deref();
    closing::commit(ctx, run.txn, run.opts.dry_run, before, &mut run.report)?;
    Ok(run.report)
}

/// Verifies the source patches of every upstream at its target
/// ([`source::verify`]), each result shown; `pending` is the update
/// `--continue` finishes.
fn verify_sources(
    run: &mut Run<'_>,
    config: &Config,
    pending: Option<&Pending>,
) -> Result<Vec<SourceFacts>> {
    let vendor_results = run.report.patches.len();
    let mut facts = Vec::new();
    for mv in run.moves {
        facts.push(source::verify(
            run.ctx,
            config,
            mv,
            pending,
            &mut run.report,
        )?);
    }
    run.report.patches[vendor_results..]
        .iter()
        .for_each(|r| run.ctx.shell.step("Applying", r));
    Ok(facts)
}

/// The source conflicts to keep beside a rendered file's: with
/// `--keep-conflicts` (not `--dry-run`) the source patches are verified
/// too, so that the one pending update holds every conflict and
/// `--continue` meets none it did not record.
pub(super) fn kept_sources(run: &mut Run<'_>, config: &Config) -> Result<Vec<SourceConflict>> {
    if !run.opts.keep_conflicts || run.opts.dry_run {
        return Ok(Vec::new());
    }
    let facts = verify_sources(run, config, None)?;
    Ok(facts.into_iter().flat_map(|f| f.conflicts).collect())
}

/// Stages every vendor patch (refreshed by the carry) and every refreshed
/// source patch file in `facts`; returns their lock entries in vendor.toml
/// order. A patch file of the package must still hold what the run read from
/// it, and is guarded so until the commit: an edit made to it since stops the
/// update, as one made to a rendered file does, not written over by the
/// refreshed patch ([`Transaction::read_guarded`]).
fn stage_patches(
    config: &Config,
    patches: &Patches,
    facts: &mut [SourceFacts],
    txn: &mut Transaction,
) -> Result<Vec<LockedPatch>> {
    let mut locked_patches = Vec::new();
    for p in patches.loaded() {
        let bytes = crate::patch::write(&p.set);
        let declared = config.patches.iter().any(|c| c.file == p.file);
        if declared && txn.read_guarded(&p.file)?.unwrap_or_default() != p.bytes {
            return Err(Error::ChangedDuringRun {
                path: p.file.clone().into(),
            });
        }
        locked_patches.push(LockedPatch {
            name: p.name.clone(),
            sha256: Digest::of(&bytes).hex().to_owned(),
        });
        txn.stage(&p.file, bytes);
    }
    for (file, bytes) in facts
        .iter_mut()
        .flat_map(|f| std::mem::take(&mut f.patch_files))
    {
        if let Some(lp) = locked_patches.iter_mut().find(|l| {
            config
                .patches
                .iter()
                .any(|p| p.name == l.name && p.file == file)
        }) {
            lp.sha256 = Digest::of(&bytes).hex().to_owned();
        } else if let Some(p) = config.patches.iter().find(|p| p.file == file) {
            locked_patches.push(LockedPatch {
                name: p.name.clone(),
                sha256: Digest::of(&bytes).hex().to_owned(),
            });
        }
        txn.stage(&file, bytes);
    }
    locked_patches.sort_by_key(|l| config.patches.iter().position(|p| p.name == l.name));
    Ok(locked_patches)
}

/// The lock's `[[upstream]]` entries at the target (with the archive a
/// chart's version was read from), and the target's stamp with each commit
/// learnt.
///
/// The commit is information for people reading the lock (everything the
/// lock vouches for is verified by sha256): a failure to learn it is not
/// worth failing an update that verified everything else (a `{commit}`
/// rewrite learnt it already, strictly), but it is said, not dropped in
/// silence (issue 13).
fn lock_upstreams(
    ctx: &Context,
    moves: &[Move<'_>],
    facts: Vec<SourceFacts>,
    target_stamp: &Stamp,
) -> Result<(Vec<LockedUpstream>, Stamp)> {
    let mut stamp = target_stamp.clone();
    let mut locked_upstreams = Vec::new();
    for (mv, facts) in moves.iter().zip(facts) {
        let commit = match &mv.target_values.commit {
            Some(c) => Some(c.clone()),
            None => mv.source.commit(&mv.target).unwrap_or_else(|e| {
                ctx.shell.warn(format!(
                    "the lock records no `commit` for {}: {e}",
                    mv.target
                ));
                None
            }),
        };
        stamp = stamp.moved(
            mv.name(),
            Placeholders {
                commit: commit.clone(),
                ..mv.target_values.clone()
            },
        );
        let artifact = mv.source.artifact(&mv.target)?.unwrap_or_default();
        let filled = |s: String| (!s.is_empty()).then_some(s);
        locked_upstreams.push(LockedUpstream {
            name: mv.upstream.name.clone(),
            source: mv.upstream.source.describe(),
            version: mv.target.clone(),
            commit,
            source_tree_sha256: facts.tree_sha256,
            source_sha256: None,
            go_directive: facts.go_directive,
            archive: filled(artifact.url),
            archive_sha256: filled(artifact.sha256),
            app_version: artifact.app_version,
        });
    }
    Ok((locked_upstreams, stamp))
}

/// The `version` vendor.toml gets for `m`'s target: the version, and for a
/// version pinned by digest (`0.1.1@sha256:…`) the manifest digest of the
/// target, so that the pin moves with it.
fn written_version(m: &Move<'_>) -> Result<String> {
    if m.upstream.pin.is_none() {
        return Ok(m.target.clone());
    }
    Ok(match m.source.artifact(&m.target)? {
        Some(a) if !a.sha256.is_empty() => format!("{}@sha256:{}", m.target, a.sha256),
        _ => m.target.clone(),
    })
}

/// Removes each pristine copy of the lock that no vendored file at the
/// target reads, and what a removed `[[vendor]]` rendered.
fn stage_removals(run: &mut Run<'_>, package: &Package<'_>) {
    let target = &run.vendored.target;
    // One set of the copies still read, not a search of every target per
    // locked file: a directory of 10,000 files has as many of each.
    let kept: BTreeSet<String> = target
        .iter()
        .filter(|v| !v.created)
        .map(|v| v.pristine())
        .collect();
    let old_files = package
        .lock()
        .map(|l| l.files.as_slice())
        .unwrap_or_default();
    for old in old_files.iter().map(|f| f.pristine()) {
        if !kept.contains(&old) {
            run.txn.remove(&old);
        }
    }
    for path in run.removed.deletions(target) {
        run.txn.remove(&path);
    }
}

/// Stages vendor.toml when the update changes it: each patch `dropped` as
/// upstreamed removed, each upstream's version moved. A branch's commit is
/// the lock's alone.
fn stage_vendor_toml(
    ctx: &Context,
    moves: &[Move<'_>],
    dropped: &[String],
    txn: &mut Transaction,
) -> Result<()> {
    let mut moved = Vec::new();
    for m in moves {
        if matches!(m.upstream.selection, Selection::Branch(_)) {
            continue;
        }
        let written = written_version(m)?;
        if m.upstream.written_version().as_deref() != Some(written.as_str()) {
            moved.push((m, written));
        }
    }
    if moved.is_empty() && dropped.is_empty() {
        return Ok(());
    }
    let path = ctx.root.join("vendor.toml");
    // Read guarded: an edit made from here to the commit (the closing check's
    // time) stops it rather than being written over; one made before is kept.
    let read = match txn.read_guarded("vendor.toml")? {
        Some(bytes) => bytes,
        None => paths::read(&path)?,
    };
    let mut text = String::from_utf8_lossy(&read).into_owned();
    for name in dropped {
        text = crate::config::edit::remove_patch(&path, &text, name)?;
    }
    for (m, written) in moved {
        text = crate::config::edit::set_upstream_version(&path, &text, m.name(), &written)?;
    }
    txn.stage("vendor.toml", text.into_bytes());
    Ok(())
}
