//! One update under way ([`Run`]): the steps of the plan (`plan.rs`)
//! executed one vendored file at a time, each reading its pristine copies
//! and the file on disk, checking it as its action says, carrying its
//! patches through the package's render pipeline ([`Package`]) and staging
//! the result. Nothing is written here: the transaction is committed at the
//! end (`finish.rs`), or, on a conflict with `--keep-conflicts`, only the
//! marked files are ([`Run::keep_conflicts`]).

use std::collections::HashSet;

use super::files::{self, FileBytes, Vendored};
use super::plan::{Action, Step};
use super::resume::{self, Resume};
use super::source_conflict::{self, SourceConflict};
use super::summary::UpdateReport;
use super::upstreams::{self, Move};
use super::{UpdateOptions, adopt, carry};
use crate::check::Finding;
use crate::config::Vendor;
use crate::config::lock::{Lock, LockedFile};
use crate::error::Result;
use crate::image::Digest;
use crate::ops::render::{edits, removed};
use crate::paths::Transaction;
use crate::render::origin::Removed;
use crate::render::{Package, RecountedHunk, Stamp};
use crate::workspace::Context;

/// One update under way: what its steps read, and what they add to.
pub(super) struct Run<'r> {
    /// Root, environment, network and console.
    pub ctx: &'r Context,
    /// The flags.
    pub opts: &'r UpdateOptions,
    /// Each upstream's move.
    pub moves: &'r [Move<'r>],
    /// The vendored files at the locked version and at the target.
    pub vendored: &'r Vendored,
    /// What vendor.toml lost that the lock knows.
    pub removed: &'r Removed<'r>,
    /// The pending update `--continue` finishes.
    pub resume: Option<Resume<'r>>,
    /// Headers recounted while adopting.
    pub recounted: &'r [RecountedHunk],
    /// The versions and pins at the target.
    pub target_stamp: &'r Stamp,
    /// What the update did so far.
    pub report: UpdateReport,
    /// Everything staged so far.
    pub txn: Transaction,
    /// The lock's `[[file]]` entries at the target.
    pub locked_files: Vec<LockedFile>,
    /// The same at the locked version, for a lock written while adopting.
    pub base_files: Vec<LockedFile>,
    /// The files of vendored directories that arrive and go.
    pub moved_files: files::Moved,
    /// The offline check of the tree before the update
    /// ([`super::closing::before`]), for the closing check to tell what it
    /// caused.
    pub before: Option<Vec<Finding>>,
}

impl Run<'_> {
    /// Executes `step`: reads the file's pristine copies and the file on
    /// disk, checks it, carries its patches and stages the result.
    pub fn file(&mut self, package: &mut Package<'_>, step: &Step<'_>) -> Result<()> {
        let vendor = step.vendor;
        let mv = upstreams::of(self.moves, vendor.upstream.as_deref());
        let (base, kept) = self.base(package.lock(), mv, step)?;
        let on_disk = self.txn.read_guarded(&vendor.to)?;
        if step.action == Action::Remove {
            self.keep_in_cache(step, &base);
            return self.remove(package, vendor, &base.bytes, on_disk, &mv.target);
        }
        let edits = {
            let current = self.current(package, step, &base.bytes, on_disk.as_deref())?;
            let adopt = self.opts.adopt_edits;
            edits::fold(package, vendor, &base.bytes, current, adopt, "update")?
        };
        self.report.edits.extend(edits);
        let compare_on_commit = self.resume.is_none()
            && step.base.is_some()
            && on_disk.as_ref().is_some_and(|b| b.len() > HELD_ON_DISK);
        // A big file is not held through the merge, only what identifies it:
        // a result equal to the file as checked is not staged, so a hand edit
        // made since is not written over (as for a file that is held).
        let checked = on_disk
            .as_deref()
            .filter(|_| compare_on_commit)
            .map(|b| (b.len(), Digest::of(b)));
        let on_disk = on_disk.filter(|_| !compare_on_commit);
        // The target's copy is read once the hand-edit check is done, not
        // held through it (issue 23).
        let mut theirs = self.theirs(mv, step, &base)?;
        let upstream_same = theirs.bytes == base.bytes;
        if !upstream_same {
            self.keep_in_cache(step, &base);
        }
        let base_sha256 = base.known_sha256().map(str::to_owned);
        let base = base.bytes;
        let carried = match &self.resume {
            Some(resume) if step.base.is_some() => {
                let (at_target, on_disk) = (self.target_stamp, on_disk.as_deref());
                resume.rebase(package, at_target, vendor, &base, &theirs.bytes, on_disk)?
            }
            _ => {
                let given = std::mem::take(&mut theirs.bytes);
                let (carried, given) = carry::carry(package, vendor, base, given, &mv.target)?;
                theirs.bytes = given;
                carried
            }
        };
        carried
            .reports
            .iter()
            .for_each(|r| self.ctx.shell.step("Applying", r));
        self.report.patches.extend(carried.reports);
        self.report.conflicts.extend(carried.conflicts);
        self.report.upstreamed.extend(carried.upstreamed);
        let rendered = package.finish_with(&vendor.to, carried.output, self.target_stamp)?;
        if step.base.is_none() {
            files::added(vendor, &rendered, on_disk.as_deref(), &mv.target)?;
            self.moved_files.arrived(vendor, &theirs.bytes);
        }
        // What is already on disk is not staged: the commit would read each
        // file again only to drop it, and most of a directory stays as it is
        // (issue 23).
        if step.action == Action::Delete {
            self.txn.remove(&vendor.to);
        } else if match &checked {
            Some((len, digest)) => *len != rendered.len() || *digest != Digest::of(&rendered),
            None => on_disk.as_deref() != Some(rendered.as_slice()),
        } {
            // Compared with the file as read: its guard stops the commit if
            // it changed since, so the commit need not read it again.
            self.txn.stage_changed(&vendor.to, rendered);
        }
        if !vendor.created {
            let sha256 = match (theirs.known_sha256(), &base_sha256) {
                (Some(sha), _) => sha.to_owned(),
                (None, Some(sha)) if upstream_same => sha.clone(),
                _ => theirs.sha256(),
            };
            self.locked_files.push(locked_file(vendor, sha256));
            if !kept || !upstream_same {
                self.txn.stage(&vendor.pristine(), theirs.bytes);
            }
        }
        Ok(())
    }

    /// The pristine copy of `step`'s file at the locked version (empty when
    /// it was not vendored there), recorded for a lock written while
    /// adopting; and whether the copy on disk holds it.
    fn base(
        &mut self,
        lock: Option<&Lock>,
        mv: &Move<'_>,
        step: &Step<'_>,
    ) -> Result<(FileBytes, bool)> {
        let Some(at_base) = step.base else {
            return Ok((FileBytes::unhashed(Vec::new()), false));
        };
        let source = mv.base_source();
        let (base, kept) = files::locked_copy(
            self.ctx,
            source,
            lock,
            self.vendored,
            at_base,
            &mv.base_version,
        )?;
        if !at_base.created {
            self.base_files
                .push(locked_file(step.vendor, base.sha256()));
        }
        Ok((base, kept))
    }

    /// Keeps `base`, the pristine copy of `step`'s file at the locked
    /// version, in the cache by its blob id when the target has other
    /// bytes: a copy the target keeps stays on disk, and storing each one
    /// again cost every file of a directory two hashes and two lookups.
    /// A sha256 verified before is not computed again (issue 23).
    fn keep_in_cache(&self, step: &Step<'_>, base: &FileBytes) {
        if step.base.is_some_and(|b| !b.created) {
            match base.known_sha256() {
                Some(sha) => self.ctx.cache.put_blob_verified(&base.bytes, sha),
                None => {
                    self.ctx.cache.put_blob(&base.bytes);
                }
            }
        }
    }

    /// `step`'s file at the target: the locked copy again when the release
    /// is the same, else fetched.
    fn theirs(&self, mv: &Move<'_>, step: &Step<'_>, base: &FileBytes) -> Result<FileBytes> {
        let vendor = step.vendor;
        let sha256 = base.known_sha256().map(str::to_owned);
        let base = &base.bytes;
        let theirs = if mv.same_release && step.base.is_some_and(|b| b.created == vendor.created) {
            FileBytes::hashed(base.to_vec(), sha256)
        } else {
            self.vendored
                .fetch(self.ctx, &*mv.source, vendor, &mv.target, base)?
        };
        if theirs.bytes.is_empty() && !base.is_empty() && !vendor.created {
            // Every patch of it conflicts; say why first (issue 13).
            self.ctx.shell.warn(format!(
                "`{}` is empty at {} (it has {} bytes at {})",
                vendor.from,
                mv.target,
                base.len(),
                mv.base_version
            ));
        }
        Ok(theirs)
    }

    /// The file on disk as the hand-edit check sees it, once `step`'s
    /// action has judged it: `None` when there is no render at the locked
    /// version to compare it with (a file upstream added, one a patch
    /// deletes) or when `--continue` takes it as the resolution.
    fn current<'d>(
        &mut self,
        package: &mut Package<'_>,
        step: &Step<'_>,
        base: &[u8],
        on_disk: Option<&'d [u8]>,
    ) -> Result<Option<&'d [u8]>> {
        let vendor = step.vendor;
        match step.action {
            Action::Delete => {
                let current = if self.resume.is_some() { None } else { on_disk };
                package.deleted(vendor, base, current)?;
                Ok(None)
            }
            Action::Adopt => {
                let fuzzy = adopt::settle(package, self.recounted, vendor, base, on_disk)?;
                self.report.fuzzy.extend(fuzzy);
                self.checked(package, vendor, base, on_disk)
            }
            Action::Carry => self.checked(package, vendor, base, on_disk),
            Action::Remove | Action::Add | Action::Resume => Ok(None),
        }
    }

    /// `on_disk` checked for a pending conflict ([`resume::guard`]) and with
    /// the changes of removed patches settled ([`removed::settle`]).
    fn checked<'d>(
        &self,
        package: &Package<'_>,
        vendor: &Vendor,
        base: &[u8],
        on_disk: Option<&'d [u8]>,
    ) -> Result<Option<&'d [u8]>> {
        resume::guard(package, vendor, base, on_disk)?;
        removed::settle(self.ctx, package, self.removed, vendor, base, on_disk)
    }

    /// A file that goes (upstream removed it): checked, then removed.
    fn remove(
        &mut self,
        package: &Package<'_>,
        vendor: &Vendor,
        base: &[u8],
        on_disk: Option<Vec<u8>>,
        target: &str,
    ) -> Result<()> {
        let current = match &self.resume {
            Some(_) => on_disk.as_deref(),
            None => {
                let on_disk = on_disk.as_deref();
                removed::settle(self.ctx, package, self.removed, vendor, base, on_disk)?
            }
        };
        files::removed(package, vendor, base, current, target)?;
        self.txn.remove(&vendor.to);
        self.moved_files.gone(vendor, base);
        Ok(())
    }

    /// With `--keep-conflicts` (and not `--dry-run`), commits the rendered
    /// files alone, with their markers, and the working copies of the
    /// source files in `sources`: the lock, the pristine copies and the
    /// patches stay at the old version so the next run knows where it
    /// stands, and the lock records the pending update.
    pub fn keep_conflicts(
        &mut self,
        package: &Package<'_>,
        sources: &[SourceConflict],
    ) -> Result<()> {
        if !self.opts.keep_conflicts || self.opts.dry_run {
            return Ok(());
        }
        let vendored = self.vendored;
        // The marked files are judged files too: an edit made since the
        // hand-edit check read one stops this commit as it would the update's.
        let mut keep = self.txn.guarded_alike();
        let at_target: HashSet<&str> = vendored.target.iter().map(|t| t.to.as_str()).collect();
        for vendor in vendored
            .base
            .iter()
            .filter(|b| at_target.contains(b.to.as_str()))
        {
            if let Some(bytes) = self.txn.staged(&vendor.to) {
                keep.stage(&vendor.to, bytes.to_vec());
            }
        }
        let at = match package.lock() {
            Some(l) => l.clone(),
            None => {
                let base_files = std::mem::take(&mut self.base_files);
                resume::adoption(package, self.moves, &vendored.base, base_files)
            }
        };
        let targets: Vec<_> = self
            .moves
            .iter()
            .map(|m| (m.upstream.name.clone(), m.target.clone()))
            .collect();
        let sources = source_conflict::stage(&mut keep, sources)?;
        resume::record(
            &mut keep,
            &self.ctx.root,
            at,
            &targets,
            &mut self.report.conflicts,
            sources,
        )?;
        super::closing::record_kinds(&self.ctx.root, &mut keep, &mut self.report)?;
        self.report.changed = keep.commit()?;
        Ok(())
    }
}

/// The size above which the file on disk is not held through the carry once
/// the hand-edit check has read it: the commit compares the result with the
/// file instead, one more read for one copy less at the update's peak
/// (issue 23). Smaller files, most of a directory package, stay held, so
/// one that did not change is not staged and read again.
const HELD_ON_DISK: usize = 1 << 20;

/// The lock's `[[file]]` entry of `vendor`, its pristine copy's `sha256`.
fn locked_file(vendor: &Vendor, sha256: String) -> LockedFile {
    LockedFile {
        upstream: vendor.upstream.clone(),
        from: vendor.from.clone(),
        sha256,
    }
}
