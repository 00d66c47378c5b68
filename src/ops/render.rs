//! `revendor render`: rebuild the outputs from the pristine copies, the
//! patches, the rewrites and the locked pin, without the network.
//!
//! 1. Read the lock: it must be of the source vendor.toml names, and its pin
//!    an image reference pinned by digest. A vendored directory is the files
//!    the lock lists for it (`render::files`). Each pristine copy under
//!    upstream/ must match its sha256 (a missing copy is taken from the
//!    download cache by that sha256).
//! 2. Compare each rendered file on disk with what the package renders
//!    (`edits::fold`, as `update` does): an edit no patch carries stops the
//!    render (exit 1, nothing written), or with `--adopt-edits` is folded
//!    into the last patch targeting the file, which the lock then records.
//! 3. Apply the vendor patches strictly (offsets reported, no fuzz). A file
//!    whose last section deletes it (`+++ /dev/null`) is removed, once the
//!    file there is known to be the one it deletes (`deleted`).
//! 4. Rewrite with the locked version, pin the locked image.
//! 5. Delete what a removed `[[vendor]]` rendered, and record in the lock
//!    what each output is now made from when a `[[vendor]]` or `[[patch]]`
//!    was removed ([`render::origin`]): a removed patch's changes are
//!    reverted because the output is rendered without it, and the file on
//!    disk is compared with the stack that still had it
//!    (`removed::settle`, as `update` does), so they are not hand edits.
//! 6. Commit every output at once.
//!
//! Two differences are not hand edits. A file still holding the markers of
//! an unfinished `update --keep-conflicts` is revendor's own output: render
//! puts back the render at the locked version and says so, which is how an
//! unwanted conflicted update is dropped. And when a patch targeting the
//! file is not the one the lock verified (edited since), the file on disk
//! holds that patch's old effect, which the lock cannot tell apart from an
//! edit: render follows the edited patch and names each line it replaced.

pub(super) mod edits;
mod memo;
pub(super) mod removed;

use std::path::Path;

use crate::config::lock::{LOCK_PATH, Lock, LockedFile};
use crate::config::{Config, ConfigError, Vendor};
use crate::error::{Error, Result};
use crate::image::Reference;
use crate::ops::outcome::{EditReport, PatchResult};
use crate::patch;
use crate::paths::{self, Transaction};
use crate::render::origin::{self, Removed};
use crate::render::{self, Package, SectionId, Stamp};
use crate::upstream::Pristine;
use crate::workspace::Context;

/// Flags of `revendor render`.
#[derive(Debug, Clone, Copy, Default)]
pub struct RenderOptions {
    /// Fold hand edits of rendered files into the patch targeting them.
    pub adopt_edits: bool,
}

/// What `render` did; `--format json` prints it (docs/json.md).
#[derive(Debug, Clone, serde::Serialize)]
pub struct RenderReport {
    /// The locked version rendered (of the first upstream, when there are
    /// several).
    pub version: String,
    /// Each patch section's result (the same objects `update` reports).
    pub patches: Vec<PatchResult>,
    /// Hand edits folded into patches, with `--adopt-edits`.
    pub edits: Vec<EditReport>,
    /// A removed patch reverted, a removed output deleted: one sentence each.
    pub notes: Vec<String>,
    /// Files written.
    pub changed: Vec<String>,
}

/// Renders and writes the outputs; stops on a hand edit unless
/// `opts.adopt_edits`.
pub fn render(ctx: &Context, opts: &RenderOptions) -> Result<RenderReport> {
    ctx.shell
        .step("Reading", "vendor.toml and upstream/lock.toml");
    let mut memo = memo::Memo::start(ctx, opts.adopt_edits);
    let config = match opts.adopt_edits {
        true => Config::load_starting(&ctx.root)?,
        false => Config::load(&ctx.root)?,
    };
    if let Some((report, steps)) = memo.recall() {
        // Said first, so that the steps after it read as what the
        // remembered render did, not as work this run repeated.
        ctx.shell.step(
            "Remembered",
            "nothing this render reads changed since it last found nothing to write; that render's steps:",
        );
        for (verb, message) in steps {
            ctx.shell.step(&verb, message);
        }
        return Ok(report);
    }
    let Some(lock) = Lock::load(&ctx.root)? else {
        return Err(Error::usage(
            "this package has no upstream/lock.toml yet",
            "run `revendor update` once to adopt it",
        ));
    };
    lock.require_source(&config)?;
    let (patches, files) = match opts.adopt_edits {
        true => render::load_locked_starting(&config, &lock)?,
        false => render::load_locked(&config, &lock)?,
    };
    // Each pin must be a reference pinned by digest before anything is written.
    locked_pins(&ctx.root, &lock)?;
    let stamp = Stamp::locked(&config, &lock)?;
    let mut package = Package::new(&config, Some(&lock), stamp, patches);
    let mut report = RenderReport {
        version: package
            .stamp()
            .version(config.upstreams[0].name.as_deref())
            .to_owned(),
        patches: Vec::new(),
        edits: Vec::new(),
        notes: Vec::new(),
        changed: Vec::new(),
    };
    let mut txn = Transaction::new(&ctx.root);
    let mut notes = Vec::new();
    let mut steps = Vec::new();
    let removed = Removed::find(&config, &files, &lock);
    for vendor in &files {
        let mut file = OneFile {
            ctx,
            removed: &removed,
            txn: &mut txn,
            report: &mut report,
            notes: &mut notes,
            steps: &mut steps,
        };
        file.render(&mut package, vendor, opts.adopt_edits)?;
    }
    edits::require_started(&config, package.patches())?;
    let stamp = package.stamp();
    let rewritten = render::rewrite_in_place(&config, stamp, |f| paths::read(&ctx.root.join(f)))?;
    let pinned = render::pin_in_place(&config, stamp, &rewritten, |f| {
        paths::read(&ctx.root.join(f))
    })?;
    for (file, bytes) in rewritten.into_iter().chain(pinned) {
        txn.stage(&file, bytes);
    }
    let gone_sources = settle_lock(ctx, &package, &files, &removed, &report.edits, &mut txn)?;
    report.notes = removed.notes();
    report
        .notes
        .extend(gone_sources.iter().map(|o| o.deleted_note()));
    report.notes.extend(edits::started_notes(package.patches()));
    report.changed = txn.commit()?;
    memo.keep(&report, &steps, !notes.is_empty());
    // Said once the render is written, so that a render stopped by a hand
    // edit in another file does not claim what it did not do.
    for note in notes {
        ctx.shell.warn(note);
    }
    Ok(report)
}

/// What rendering one vendored file reads and adds to.
struct OneFile<'r, 'a> {
    ctx: &'r Context,
    removed: &'r Removed<'a>,
    txn: &'r mut Transaction,
    report: &'r mut RenderReport,
    notes: &'r mut Vec<String>,
    /// The `-v` steps said, for the memo to say again.
    steps: &'r mut Vec<(String, String)>,
}

impl OneFile<'_, '_> {
    /// Says a `-v` step, and keeps it.
    fn step(&mut self, verb: &str, message: impl std::fmt::Display) {
        let message = message.to_string();
        self.ctx.shell.step(verb, &message);
        self.steps.push((verb.to_owned(), message));
    }

    /// Renders `vendor` from its verified pristine copy and stages it: a
    /// file a patch deletes is removed, hand edits stop the render unless
    /// `adopt` folds them into `package`'s patches.
    fn render(&mut self, package: &mut Package<'_>, vendor: &Vendor, adopt: bool) -> Result<()> {
        let (ctx, lock) = (self.ctx, package.lock().expect("render has a lock"));
        let pristine =
            Pristine::read(&ctx.root, lock, vendor, &ctx.cache, None)?.verified(vendor)?;
        if !vendor.created {
            self.step(
                "Verified",
                format!("{} against the lock", vendor.pristine()),
            );
        }
        // Guarded: an edit made while render runs stops its commit.
        let on_disk = self.txn.read_guarded(&vendor.to)?;
        if package.deletes(vendor) {
            for step in package.deleted(vendor, &pristine, on_disk.as_deref())? {
                let result =
                    PatchResult::new(package.patch_name(step.id), &vendor.to, &step.outcome);
                self.step("Applying", &result);
                self.report.patches.push(result);
            }
            self.txn.remove(&vendor.to);
            return Ok(());
        }
        let current = removed::settle(
            ctx,
            package,
            self.removed,
            vendor,
            &pristine,
            on_disk.as_deref(),
        )?;
        // One walk serves the hand-edit check and the output, unless edits are folded into
        // a patch: a second walk of a 100,000-line file was a third of render's time. The
        // walk keeps no step's input, and its output is finished in place, not copied.
        let (mut results, mut rendered) = render_walk(package, vendor, &pristine)?;
        if let Some(current) = current
            && has_hand_edits(package, vendor, &results, &rendered, current, self.notes)
        {
            let folded = edits::fold(package, vendor, &pristine, Some(current), adopt, "render")?;
            self.report.edits.extend(folded);
            (results, rendered) = render_walk(package, vendor, &pristine)?;
        }
        for (_, result) in results {
            self.step("Applying", &result);
            self.report.patches.push(result);
        }
        // The file on disk was read once already: the commit need not read it again to
        // find that nothing changed.
        if current != Some(rendered.as_slice()) {
            self.txn.stage_changed(&vendor.to, rendered);
        }
        if !vendor.created {
            self.txn.stage_missing(&vendor.pristine(), pristine);
        }
        Ok(())
    }
}

/// Each section that landed on a file, with its result.
type Results = Vec<(SectionId, PatchResult)>;

/// `vendor` rendered from `pristine`, with each section's result.
fn render_walk(
    package: &Package<'_>,
    vendor: &Vendor,
    pristine: &[u8],
) -> Result<(Results, Vec<u8>)> {
    let mut results = Vec::new();
    let rendered = package.render(vendor, pristine, |id, outcome| {
        results.push((
            id,
            PatchResult::new(package.patch_name(id), &vendor.to, outcome),
        ));
    })?;
    Ok((results, rendered))
}

/// Stages the lock when the render changes it, and removes what a removed
/// `[[vendor]]` rendered and each pristine copy no vendored file reads.
fn settle_lock(
    ctx: &Context,
    package: &Package<'_>,
    files: &[Vendor],
    removed: &Removed<'_>,
    adopted: &[EditReport],
    txn: &mut Transaction,
) -> Result<Vec<crate::check::Orphan>> {
    let (config, lock) = (package.config(), package.lock().expect("render has a lock"));
    for path in removed.deletions(files) {
        txn.remove(&path);
    }
    // A pristine copy no vendored file reads any more (one whose output a
    // patch deleted has no record to find it by) goes with the removals.
    let read = origin::upstream_files(files);
    let orphans: Vec<String> = lock
        .files
        .iter()
        .filter(|f| !read.contains(&(&f.upstream, f.from.as_str())))
        .map(LockedFile::pristine)
        .collect();
    for copy in &orphans {
        txn.remove(copy);
    }
    // A removed source patch's file would still be applied by the image
    // build (`git apply /patches/*.diff`): it goes too (issue 20).
    let gone_sources = crate::check::removed_patch_files(config, lock, &ctx.root)?;
    for o in &gone_sources {
        txn.remove(&o.file);
    }
    let mut next =
        (!removed.is_empty() || !orphans.is_empty() || !gone_sources.is_empty()).then(|| {
            origin::forget_removed(
                lock,
                config,
                files,
                origin::outputs(files, package.patches()),
            )
        });
    if !adopted.is_empty() {
        let next = next.get_or_insert_with(|| lock.clone());
        record_adopted(package, next, adopted, txn);
    }
    if let Some(next) = next {
        let previous = paths::read_opt(&ctx.root.join(LOCK_PATH))?
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        txn.stage(LOCK_PATH, next.to_toml(previous.as_deref()).into_bytes());
    }
    Ok(gone_sources)
}

/// Whether the differences between `current` and the render of `vendor` are
/// hand edits for `edits::fold` to judge. Not when there are none, nor
/// when the file holds conflict markers or a targeting patch changed since
/// the lock verified it (see the module docs): the render is written over
/// it, and `notes` gets the warning that says so. `landed` are the sections
/// the stack applied to the pristine copy, `expected` its finished render.
fn has_hand_edits(
    package: &Package<'_>,
    vendor: &Vendor,
    landed: &[(SectionId, PatchResult)],
    expected: &[u8],
    current: &[u8],
    notes: &mut Vec<String>,
) -> bool {
    let version = package.version(vendor);
    if expected == current {
        return false;
    }
    if let Some(line) = edits::conflict_marker_line(current) {
        notes.push(format!(
            "`{}` held the conflict markers of an unfinished `update --keep-conflicts` (line {line}); it is back at the render of {version}",
            vendor.to
        ));
        return false;
    }
    let mut changed: Vec<&str> = Vec::new();
    let lock = package.lock().expect("render has a lock");
    for (id, _) in landed {
        let p = package.patches().section(*id).0;
        if lock.patch_sha256(&p.name) != Some(p.sha256.as_str()) && !changed.contains(&&*p.name) {
            changed.push(&p.name);
        }
    }
    if changed.is_empty() {
        return true;
    }
    let mut replaced = Vec::new();
    let (expected, current) = (
        String::from_utf8_lossy(expected),
        String::from_utf8_lossy(current),
    );
    for edit in render::hand_edits(&expected, &current) {
        for (i, text) in edit.added.iter().enumerate() {
            replaced.push(format!("{}:{} `{}`", vendor.to, edit.line + i, text.trim()));
        }
    }
    let more = replaced.len().saturating_sub(5);
    replaced.truncate(5);
    let what = match (replaced.is_empty(), more) {
        (true, _) => String::new(),
        (false, 0) => format!("; the lines it replaced: {}", replaced.join(", ")),
        (false, n) => format!(
            "; the lines it replaced: {} and {n} more",
            replaced.join(", ")
        ),
    };
    notes.push(format!(
        "patch `{}` changed since the lock verified it, so `{}` follows it now{what}",
        changed.join("`, `"),
        vendor.to,
    ));
    false
}

/// Stages the patch files that took hand edits and records their new
/// sha256 in `lock` (staged by the caller): each applies exactly at the
/// locked version, which is what the lock vouches for.
fn record_adopted(
    package: &Package<'_>,
    lock: &mut Lock,
    adopted: &[EditReport],
    txn: &mut Transaction,
) {
    let config = package.config();
    for p in package.patches().loaded() {
        if !adopted
            .iter()
            .any(|e| e.adopted_into.as_deref() == Some(&p.name))
        {
            continue;
        }
        let bytes = patch::write(&p.set);
        let sha = crate::image::Digest::of(&bytes).hex().to_owned();
        match lock.patches.iter_mut().find(|l| l.name == p.name) {
            Some(locked) => locked.sha256 = sha,
            None => lock.patches.push(crate::config::lock::LockedPatch {
                name: p.name.clone(),
                sha256: sha,
            }),
        }
        txn.stage(&p.file, bytes);
    }
    lock.patches
        .sort_by_key(|l| config.patches.iter().position(|p| p.name == l.name));
}

/// The lock's pinned image references by image name, checked before
/// anything writes them: `repository:tag@sha256:…` by the distribution
/// grammar. Anything else is an error at its line of upstream/lock.toml.
pub(crate) fn locked_pins(root: &Path, lock: &Lock) -> Result<Vec<(Option<String>, String)>> {
    lock.images
        .iter()
        .map(|image| Ok((image.name.clone(), locked_pin(root, image)?)))
        .collect()
}

fn locked_pin(root: &Path, image: &crate::config::lock::LockedImage) -> Result<String> {
    let why = match Reference::parse(&image.reference) {
        Ok(r) if r.digest().is_some() => return Ok(image.reference.clone()),
        Ok(_) => "it has no `@sha256:` digest".to_owned(),
        Err(e) => e.to_string(),
    };
    let path = root.join(LOCK_PATH);
    let line = paths::read_opt(&path)?.and_then(|b| {
        Lock::line_of_key(
            &String::from_utf8_lossy(&b),
            "image",
            image.name.as_deref(),
            "reference",
        )
    });
    Err(ConfigError::at(
        path,
        line,
        format!(
            "the pinned `reference` = \"{}\" is not an image reference pinned by digest: {why}",
            image.reference
        ),
    )
    .hint("the lock is written by revendor: restore it from git, or pin the image again with `revendor image pin`")
    .into())
}
