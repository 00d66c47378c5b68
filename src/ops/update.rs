//! `revendor update`: move the vendored upstream to a release, all or nothing.
//!
//! 1. Resolve each upstream's target (`--to`, the highest release inside
//!    `track`, a branch's head; `upstreams.rs`).
//! 2. Read the pristine copies at the locked version (fetching them when the
//!    package is adopted without a lock) and the new ones at the target; a
//!    vendored directory is listed at its upstream's target, and the files
//!    upstream added arrive and the ones it removed go (`files.rs`).
//!    Adopting (no lock), a patch that applies only with GNU patch's fuzz is
//!    taken when its result is the committed file, then refreshed (`adopt.rs`).
//! 3. Render the package as it should be at the locked version and compare
//!    with the rendered files on disk: a difference is a hand edit, which
//!    stops the update unless `--adopt-edits` folds it into the patch.
//! 4. Carry every vendor patch to the target (`carry.rs`): strict first, then
//!    a 3-way merge; refresh each patch to exact hunks.
//! 5. Verify the source patches against the upstream source tree (`source.rs`).
//!    A patch the target already carries stops the update unless
//!    `--drop-upstreamed` removes it (`upstreamed.rs`).
//! 6. Rewrite, pin, write the lock; stage everything and commit it at once.
//! 7. Check the result offline and report each finding with its next
//!    command (`closing.rs`).
//!
//! Nothing is written before step 6, so any error leaves the tree as it was.
//! A `[[vendor]]` or `[[patch]]` gone from vendor.toml is undone on the way
//! (`removed.rs`); `--continue` takes a resolved conflict in place of step 3
//! and 4's carry (`resume.rs`).

mod adopt;
mod arg_digest;
mod carry;
mod closing;
pub(super) mod edits;
mod files;
pub(super) mod locked;
pub(super) mod removed;
mod resume;
mod source;
mod summary;
mod upstreamed;
mod upstreams;

pub use closing::ClosingFinding;
pub use summary::{
    ConflictReport, EditReport, FuzzyReport, Renamed, UpdateReport, UpstreamMove, UpstreamedReport,
};

use std::collections::BTreeMap;

use crate::config::lock::{LOCK_PATH, Lock, LockedFile, LockedImage, LockedPatch, LockedUpstream};
use crate::config::{AppliesTo, Config, Selection, Vendor};
use crate::error::{Error, Result};
use crate::image::Digest;
use crate::paths::{self, Transaction};
use crate::render::origin::{self, Removed};
use crate::render::{self, Patches};
use crate::upstream::Pristine;
use crate::upstream::{self, Source};
use crate::workspace::Context;
use upstreams::Move;

/// Flags of `revendor update`.
#[derive(Debug, Clone, Default)]
pub struct UpdateOptions {
    /// Move to these tags instead of the highest inside `track`: `TAG` for
    /// the only upstream, `NAME=TAG` for a named one.
    pub to: Vec<String>,
    /// Print the plan and each patch's result; write nothing.
    pub dry_run: bool,
    /// On a conflict, write diff3 markers into the rendered file.
    pub keep_conflicts: bool,
    /// Fold hand edits of rendered files into the patch targeting them.
    pub adopt_edits: bool,
    /// `--continue`: finish the update `--keep-conflicts` left pending,
    /// taking the resolved files as the patched result.
    pub resume: bool,
    /// Remove the patches (or sections) the target release already carries.
    pub drop_upstreamed: bool,
}

/// Runs the update; the report says what happened (conflicts included).
pub fn update(ctx: &Context, opts: &UpdateOptions) -> Result<UpdateReport> {
    ctx.shell
        .step("Reading", "vendor.toml and upstream/lock.toml");
    let config = match opts.adopt_edits {
        true => Config::load_starting(&ctx.root)?,
        false => Config::load(&ctx.root)?,
    };
    let lock = Lock::load(&ctx.root)?;
    let resume = resume::Resume::start(opts, lock.as_ref())?;
    let (mut patches, recounted) = adopt::load(&config, lock.is_none(), opts.adopt_edits)?;
    let moves = upstreams::resolve(ctx, &config, lock.as_ref(), &opts.to, resume)?;

    let read_current = |rel: &str| paths::read_opt(&ctx.root.join(rel));
    let pins = match &lock {
        Some(l) if !l.images.is_empty() => super::render::locked_pins(&ctx.root, l)?,
        _ => render::read_pins(&config, |f| read_current(f).ok().flatten())?,
    };
    let (base_stamp, mut target_stamp) = upstreams::stamps(&moves, pins.clone());

    let locked = locked::Locked {
        config: &config,
        lock: lock.as_ref(),
        stamp: &base_stamp,
    };
    let plan = files::Plan::new(ctx, &config, lock.as_ref(), &patches, &moves)?;
    let both: Vec<Vendor> = plan
        .base
        .iter()
        .chain(
            plan.target
                .iter()
                .filter(|t| !plan.base.iter().any(|b| b.to == t.to)),
        )
        .cloned()
        .collect();
    patches.check_targets(&config, &both)?;
    plan.strays(ctx, &config, lock.as_ref(), &moves)?;
    let removed = lock
        .as_ref()
        .map(|l| Removed::find(&config, &plan.base, l))
        .unwrap_or_default();
    let mut report = UpdateReport::new(
        moves.iter().map(UpstreamMove::of).collect(),
        lock.is_none(),
        opts.dry_run,
    );
    let mut txn = Transaction::new(&ctx.root);
    let mut locked_files = Vec::new();
    let mut base_files = Vec::new();
    let mut moved_files = files::Moved::default();

    for (at_base, at_target) in plan.files() {
        let Some(vendor) = at_target.or(at_base) else {
            continue;
        };
        let mv = upstreams::of(&moves, vendor.upstream.as_deref());
        let (base_version, target) = (&mv.base_version, &mv.target);
        let (in_base, in_target) = (at_base.is_some(), at_target.is_some());
        let base = match at_base {
            Some(b) => locked_copy(ctx, mv.base_source(), lock.as_ref(), &plan, b, base_version)?,
            None => Vec::new(),
        };
        if in_base && !at_base.is_some_and(|b| b.created) {
            base_files.push(LockedFile {
                upstream: vendor.upstream.clone(),
                from: vendor.from.clone(),
                sha256: Digest::of(&base).hex().to_owned(),
            });
            ctx.cache.put_blob(&base);
        }
        let on_disk = read_current(&vendor.to)?;
        if !in_target {
            let current = match &resume {
                Some(_) => on_disk,
                None => removed::settle(ctx, &locked, &removed, &patches, vendor, &base, on_disk)?,
            };
            files::removed(&locked, &patches, vendor, &base, current.as_deref(), target)?;
            txn.remove(&vendor.to);
            moved_files.gone(vendor, &base);
            continue;
        }
        let theirs = if mv.same_release && at_base.is_some_and(|b| b.created == vendor.created) {
            base.clone()
        } else {
            plan.fetch(ctx, &*mv.source, vendor, target)?
        };
        if theirs.is_empty() && !base.is_empty() && !vendor.created {
            // Every patch of it conflicts; say why first (issue 13).
            ctx.shell.warn(format!(
                "`{}` is empty at {target} (it has {} bytes at {base_version})",
                vendor.from,
                base.len()
            ));
        }
        let deletes = patches.stack(vendor, base_version).deletes();
        if deletes {
            let finish = |patched: &[u8]| locked.finish(&vendor.to, patched, &base_stamp);
            let current = match &resume {
                Some(_) => None,
                None => on_disk.clone(),
            };
            super::render::deleted(&patches, vendor, base_version, &base, current, finish)?;
        } else if lock.is_none() && in_base {
            let finish = |patched: &[u8]| render::finish(&config, &vendor.to, patched, &base_stamp);
            report.fuzzy.extend(adopt::settle(
                &mut patches,
                &recounted,
                vendor,
                &base,
                base_version,
                on_disk.as_deref(),
                finish,
            )?);
        }
        // With --continue the file on disk is the resolution, which the
        // rebase takes; otherwise it is checked for hand edits.
        // A file upstream added has no render at the locked version.
        let current = match &resume {
            _ if deletes || !in_base => None,
            Some(_) => None,
            None => {
                resume::guard(&locked, &patches, vendor, &base, on_disk.as_deref())?;
                removed::settle(
                    ctx,
                    &locked,
                    &removed,
                    &patches,
                    vendor,
                    &base,
                    on_disk.clone(),
                )?
            }
        };
        let edits = edits::fold(
            &config,
            &mut patches,
            vendor,
            &base,
            &base_stamp,
            current.as_deref(),
            opts.adopt_edits,
            "update",
        )?;
        report.edits.extend(edits);

        let carried = match &resume {
            Some(resume) if in_base => resume.rebase(
                &locked,
                &target_stamp,
                &mut patches,
                vendor,
                &base,
                &theirs,
                on_disk.as_deref(),
            )?,
            _ => carry::carry(&mut patches, vendor, &base, &theirs, base_version, target)?,
        };
        carried
            .reports
            .iter()
            .for_each(|r| ctx.shell.step("Applying", r));
        report.patches.extend(carried.reports);
        report.conflicts.extend(carried.conflicts);
        report.upstreamed.extend(carried.upstreamed);
        let rendered = render::finish(&config, &vendor.to, &carried.output, &target_stamp)?;
        if !in_base {
            files::added(vendor, &rendered, on_disk.as_deref(), target)?;
            moved_files.arrived(vendor, &theirs);
        }
        if deletes {
            txn.remove(&vendor.to);
        } else {
            txn.stage(&vendor.to, rendered);
        }
        if !vendor.created {
            txn.stage(&vendor.pristine(), theirs.clone());
            locked_files.push(LockedFile {
                upstream: vendor.upstream.clone(),
                from: vendor.from.clone(),
                sha256: Digest::of(&theirs).hex().to_owned(),
            });
        }
    }
    moved_files.report(&mut report);

    if !report.conflicts.is_empty() {
        if opts.keep_conflicts && !opts.dry_run {
            // Only the rendered files, with their markers: the lock, the
            // pristine copies and the patches stay at the old version so the
            // next run knows where it stands.
            let mut keep = Transaction::new(&ctx.root);
            for vendor in plan
                .base
                .iter()
                .filter(|b| plan.target.iter().any(|t| t.to == b.to))
            {
                if let Some(bytes) = txn.staged(&vendor.to) {
                    keep.stage(&vendor.to, bytes.to_vec());
                }
            }
            let at = match &lock {
                Some(l) => l.clone(),
                None => resume::adoption(&locked, &moves, &patches, &plan.base, base_files),
            };
            let targets: Vec<_> = moves
                .iter()
                .map(|m| (m.upstream.name.clone(), m.target.clone()))
                .collect();
            resume::record(&mut keep, &ctx.root, at, &targets, &report.conflicts)?;
            report.changed = keep.commit()?;
        }
        return Ok(report);
    }

    let vendor_results = report.patches.len();
    let mut facts = Vec::new();
    for mv in &moves {
        facts.push(source::verify(ctx, &config, mv, &mut report)?);
    }
    report.patches[vendor_results..]
        .iter()
        .for_each(|r| ctx.shell.step("Applying", r));
    if !report.conflicts.is_empty() || upstreamed::settle(&mut report, opts.drop_upstreamed) {
        return Ok(report);
    }

    edits::require_started(&config, &patches)?;
    let mut locked_patches = Vec::new();
    for p in patches.loaded() {
        let bytes = crate::patch::write(&p.set);
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
    let dropped = upstreamed::remove_sections(
        &config,
        &mut txn,
        &mut locked_patches,
        &mut report.upstreamed,
    )?;
    removed::remember(ctx, &config, &txn);

    // The commit is information for people reading the lock (everything the
    // lock vouches for is verified by sha256): a failure to learn it is not
    // worth failing an update that verified everything else (a `{commit}`
    // rewrite learnt it already, strictly), but it is said, not dropped in
    // silence (issue 13).
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
        target_stamp = target_stamp.moved(
            mv.name(),
            crate::config::Placeholders {
                commit: commit.clone(),
                ..mv.target_values.clone()
            },
        );
        locked_upstreams.push(LockedUpstream {
            name: mv.upstream.name.clone(),
            source: mv.upstream.source.describe(),
            version: mv.target.clone(),
            commit,
            source_tree_sha256: facts.tree_sha256,
            source_sha256: None,
            go_directive: facts.go_directive,
        });
    }

    let repinned = arg_digest::repin(ctx, &config, &target_stamp, |f| {
        paths::read(&ctx.root.join(f))
    })?;
    report.notes.extend(repinned.notes);
    let read = |f: &str| match repinned.files.iter().find(|(r, _)| r == f) {
        Some((_, bytes)) => Ok(bytes.clone()),
        None => paths::read(&ctx.root.join(f)),
    };
    let rewritten = render::rewrite_in_place(&config, &target_stamp, read)?;
    let pinned = render::pin_in_place(&config, &target_stamp, &rewritten, read)?;
    for (file, bytes) in rewritten.into_iter().chain(pinned) {
        txn.stage(&file, bytes);
    }

    let old_files: Vec<String> = lock
        .as_ref()
        .map(|l| l.files.iter().map(LockedFile::pristine).collect())
        .unwrap_or_default();
    for old in old_files {
        if !plan
            .target
            .iter()
            .any(|v| !v.created && v.pristine() == old)
        {
            txn.remove(&old);
        }
    }
    for path in removed.deletions(&plan.target) {
        txn.remove(&path);
    }
    report.notes.extend(removed.notes());
    report.notes.extend(edits::started_notes(&patches));
    if let Some(lock) = &lock {
        for o in crate::check::removed_patch_files(&config, lock, &ctx.root)? {
            txn.remove(&o.file);
            report.notes.push(o.deleted_note());
        }
    }

    let new_lock = Lock {
        upstreams: locked_upstreams,
        files: locked_files,
        patches: locked_patches,
        images: match lock.as_ref().map(|l| l.images.clone()) {
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
        outputs: origin::outputs(&plan.target, &patches)
            .into_iter()
            .map(|mut o| {
                o.patches.retain(|p| !dropped.contains(&p.name));
                o
            })
            .collect(),
        pending: None,
    };
    // A branch's commit is the lock's alone; a version moves in vendor.toml.
    let moved: Vec<&Move> = moves
        .iter()
        .filter(|m| !matches!(m.upstream.selection, Selection::Branch(_)))
        .filter(|m| m.upstream.version.as_deref() != Some(m.target.as_str()))
        .collect();
    if !moved.is_empty() || !dropped.is_empty() {
        let path = ctx.root.join("vendor.toml");
        let mut text = String::from_utf8_lossy(&paths::read(&path)?).into_owned();
        for name in &dropped {
            text = crate::config::edit::remove_patch(&path, &text, name)?;
        }
        for m in moved {
            text = crate::config::edit::set_upstream_version(&path, &text, m.name(), &m.target)?;
        }
        txn.stage("vendor.toml", text.into_bytes());
    }
    let previous_lock = paths::read_opt(&ctx.root.join(LOCK_PATH))?
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    txn.stage(
        LOCK_PATH,
        new_lock.to_toml(previous_lock.as_deref()).into_bytes(),
    );

    closing::commit(ctx, txn, opts.dry_run, lock.is_some(), &mut report)?;
    Ok(report)
}

/// The pristine copy of `vendor` at the locked version: the verified copy
/// when there is one ([`Pristine::read`]), else downloaded (and verified when
/// the lock names its sha256; by its blob id when `plan` listed it), which
/// also restores an edited copy.
fn locked_copy(
    ctx: &Context,
    source: &dyn Source,
    lock: Option<&Lock>,
    plan: &files::Plan,
    vendor: &Vendor,
    version: &str,
) -> Result<Vec<u8>> {
    if vendor.created {
        return Ok(Vec::new());
    }
    if let Some(lock) = lock
        && let Pristine::Verified(bytes) =
            Pristine::read(&ctx.root, lock, vendor, &ctx.cache, None)?
    {
        ctx.shell.step(
            "Verified",
            format!("{} against the lock", vendor.pristine()),
        );
        return Ok(bytes);
    }
    let expected = lock.and_then(|l| l.file_sha256(vendor.upstream.as_deref(), &vendor.from));
    if let (Some(listed), None) = (plan.base_listed(vendor), expected) {
        ctx.shell
            .step("Fetching", format!("{} at {version}", vendor.from));
        return upstream::fetch_listed(source, &ctx.cache, version, listed);
    }
    ctx.shell
        .status("Fetching", format!("{} at {version}", vendor.from));
    vendored_file(ctx, source, vendor, version, expected)
}

/// `vendor`'s upstream file at `tag` ([`upstream::fetch_file`]), a 404
/// blamed on vendor.toml ([`not_in_upstream`]).
fn vendored_file(
    ctx: &Context,
    source: &dyn Source,
    vendor: &Vendor,
    tag: &str,
    expected: Option<&str>,
) -> Result<Vec<u8>> {
    upstream::fetch_file(source, &ctx.cache, tag, &vendor.from, expected)
        .map_err(|e| not_in_upstream(ctx, vendor, tag, e))
}

/// An upstream that answers it has no `vendor`'s `from` (a file, or a
/// directory with no file) at `tag` names vendor.toml's `[[vendor]]`, exit
/// 2: the fix is in vendor.toml (the path, or the release), not in the
/// network (issue 13). Any other failure stays as it came.
fn not_in_upstream(ctx: &Context, vendor: &Vendor, tag: &str, e: Error) -> Error {
    let Error::NotFound { .. } = e else {
        return e;
    };
    let shown = if vendor.from.is_empty() {
        "./"
    } else {
        &vendor.from
    };
    crate::config::ConfigError::at(
        ctx.root.join("vendor.toml"),
        Some(vendor.line),
        format!("[[vendor]] `from` = \"{shown}\" is not in the upstream at {tag}: {e}"),
    )
    .hint("fix `from`, or move to a release that has it with `--to`")
    .into()
}

/// Every source patch file, parsed, keyed by its name.
pub(crate) fn source_patches(config: &Config) -> Result<BTreeMap<String, render::LoadedPatch>> {
    Ok(Patches::load_kind(config, AppliesTo::Source)?
        .into_loaded()
        .into_iter()
        .map(|p| (p.name.clone(), p))
        .collect())
}
