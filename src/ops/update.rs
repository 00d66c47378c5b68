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
//! 5. Verify the source patches against the upstream source tree (`source.rs`);
//!    with `--keep-conflicts`, a conflicting one's files are written with
//!    markers under `upstream/.revendor-conflicts/` (`source_conflict.rs`).
//!    A patch the target already carries stops the update unless
//!    `--drop-upstreamed` removes it (`upstreamed.rs`).
//! 6. Rewrite, pin, write the lock; stage everything and commit it at once.
//! 7. Check the result offline and report each finding with its next
//!    command, an error that the check of the tree before the update (run
//!    before step 2 reads a file) did not report as caused by it
//!    (`closing.rs`).
//!
//! Each file's part of steps 2 to 4 is planned first, one typed step per
//! file (`plan.rs`: carry, add, remove, delete, adopt, resume), then
//! executed (`run.rs`) through the package's render pipeline
//! ([`Package`]); steps 5 to 7 are `finish.rs`.
//!
//! A package with no lock whose target is another version than vendor.toml's
//! is adopted first, at that version, and written; then moved, as a second
//! update under the same package lock (`adopt_first.rs`): a conflict in the
//! move leaves an adopted package.
//!
//! Nothing is written before step 6, so any error leaves the tree as it was.
//! A `[[vendor]]` or `[[patch]]` gone from vendor.toml is undone on the way
//! (`removed.rs`); `--continue` takes a resolved conflict in place of step 3
//! and 4's carry (`resume.rs`).

mod adopt;
mod adopt_first;
mod arg_digest;
mod carry;
mod closing;
mod files;
mod finish;
mod matching;
mod plan;
mod resume;
mod run;
mod source;
mod source_conflict;
mod summary;
mod upstreamed;
mod upstreams;

pub use summary::{
    AdoptionStep, ClosingFinding, ConflictReport, FuzzyReport, Renamed, UpdateReport, UpstreamMove,
    UpstreamedReport,
};

use std::collections::HashSet;

use crate::config::Config;
use crate::config::lock::Lock;
use crate::error::Result;
use crate::paths::{self, Transaction};
use crate::render::origin::Removed;
use crate::render::{self, Package};
use crate::workspace::Context;
use files::Vendored;
use resume::Resume;
use run::Run;
use upstreams::{Move, Wanted};

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

/// Which part of an update one run of [`run`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage<'s> {
    /// All of it: a package with no lock whose target is another version
    /// is handed to [`adopt_first`] instead.
    Whole,
    /// The adoption at vendor.toml's versions, written before the move.
    Adoption,
    /// The move after that adoption.
    Move,
    /// An adoption, with `--dry-run`, at another release of one upstream, to
    /// learn whether it renders the committed files (`matching.rs`); the
    /// report's `changed` lists the rendered files it does not.
    Probe(Probe<'s>),
}

/// The release a [`Stage::Probe`] adopts one upstream at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Probe<'s> {
    /// The upstream's name (`None`: the unnamed `[upstream]`).
    upstream: Option<&'s str>,
    /// The release tag, in place of vendor.toml's `version`.
    version: &'s str,
}

/// Runs the update; the report says what happened (conflicts included).
/// An adoption refused for hand edits says which release the committed
/// files match, when one near `version` does (`matching.rs`).
pub fn update(ctx: &Context, opts: &UpdateOptions) -> Result<UpdateReport> {
    run(ctx, opts, Stage::Whole).map_err(|e| matching::explain(ctx, e))
}

/// One update run (see the module docs) as `stage` says.
fn run(ctx: &Context, opts: &UpdateOptions, stage: Stage<'_>) -> Result<UpdateReport> {
    ctx.shell
        .step("Reading", "vendor.toml and upstream/lock.toml");
    let config = match opts.adopt_edits {
        true => Config::load_starting(&ctx.root)?,
        false => Config::load(&ctx.root)?,
    };
    let lock = Lock::load(&ctx.root)?;
    let resume = Resume::start(opts, lock.as_ref())?;
    if resume.is_none() {
        source_conflict::guard(&ctx.root, lock.as_ref())?;
    }
    let (patches, recounted) = adopt::load(&config, lock.is_none(), opts.adopt_edits)?;
    let wanted = match (&resume, stage) {
        (Some(r), _) => Wanted::Pending(r.pending()),
        (None, Stage::Adoption) => Wanted::Adoption,
        (None, Stage::Probe(p)) => Wanted::Probe(p.upstream, p.version),
        (None, _) => Wanted::Asked(&opts.to),
    };
    let moves = upstreams::resolve(ctx, &config, lock.as_ref(), wanted)?;
    let adopts_then_moves = lock.is_none() && moves.iter().any(|m| !m.same_release);
    if stage == Stage::Whole && adopts_then_moves && !opts.dry_run && resume.is_none() {
        drop(moves);
        return adopt_first::adopt_then_move(ctx, opts);
    }
    if !matches!(stage, Stage::Probe(_)) {
        upstreams::announce(ctx, &moves);
    }
    let pins = pins(ctx, &config, lock.as_ref())?;
    let (base_stamp, target_stamp) = upstreams::stamps(&moves, pins.clone());
    let mut package = Package::new(&config, lock.as_ref(), base_stamp, patches);
    let vendored = Vendored::new(ctx, &config, lock.as_ref(), package.patches(), &moves)?;
    // One set of the locked version's outputs, not a search of them per
    // target: a directory of 10,000 files has as many of each (issue 23).
    let at_base: HashSet<&str> = vendored.base.iter().map(|b| b.to.as_str()).collect();
    let both: Vec<crate::config::Vendor> = vendored
        .base
        .iter()
        .chain(
            vendored
                .target
                .iter()
                .filter(|t| !at_base.contains(t.to.as_str())),
        )
        .cloned()
        .collect();
    package.patches().check_targets(&config, &both)?;
    for (a, b) in crate::paths::collisions(vendored.target.iter().map(|v| v.to.as_str())) {
        ctx.shell.warn(format!(
            "`{a}` and `{b}` differ only by case or Unicode normalisation: a macOS or Windows checkout holds only one of them; `exclude` one in vendor.toml, or rename it upstream"
        ));
    }
    vendored.strays(ctx, &config, lock.as_ref(), &moves)?;
    let removed = lock
        .as_ref()
        .map(|l| Removed::find(&config, &vendored.base, l))
        .unwrap_or_default();
    let steps = plan::steps(&vendored, &package, lock.is_none(), resume.is_some());
    let mut report = UpdateReport::new(
        moves.iter().map(Move::report).collect(),
        lock.is_none(),
        opts.dry_run,
    );
    if adopts_then_moves {
        // --dry-run: both steps are planned as one; the summary says both.
        report.adoption = Some(AdoptionStep::default());
    }
    let before = closing::before(ctx, lock.is_some(), opts.dry_run);
    let mut run = Run {
        ctx,
        opts,
        moves: &moves,
        vendored: &vendored,
        removed: &removed,
        resume,
        recounted: &recounted,
        target_stamp: &target_stamp,
        report,
        txn: Transaction::new(&ctx.root),
        locked_files: Vec::new(),
        base_files: Vec::new(),
        moved_files: files::Moved::default(),
        before,
    };
    for step in &steps {
        run.file(&mut package, step)?;
    }
    if let Stage::Probe(_) = stage {
        return matching::unmatched(run);
    }
    let moved_files = std::mem::take(&mut run.moved_files);
    moved_files.report(&mut run.report);
    if !run.report.conflicts.is_empty() {
        let sources = finish::kept_sources(&mut run, package.config())?;
        run.keep_conflicts(&package, &sources)?;
        return Ok(run.report);
    }
    finish::finish(run, package, pins)
}

/// The lock's pins, checked ([`super::render::locked_pins`]); without any,
/// the ones the rendered files hold.
fn pins(
    ctx: &Context,
    config: &Config,
    lock: Option<&Lock>,
) -> Result<Vec<(Option<String>, String)>> {
    match lock {
        Some(l) if !l.images.is_empty() => super::render::locked_pins(&ctx.root, l),
        _ => render::read_pins(config, |f| {
            paths::read_opt(&ctx.root.join(f)).ok().flatten()
        }),
    }
}
