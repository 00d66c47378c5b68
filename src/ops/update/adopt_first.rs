//! An adoption that moves (issue 20): a package with no lock whose target
//! (`--to`, or the newest release inside `track`) is another version than
//! vendor.toml's `version` is updated in two steps, both under the package
//! lock this run holds:
//!
//! 1. the adoption at vendor.toml's versions, written as an adoption alone
//!    is (the lock, the pristine copies, the patches refreshed);
//! 2. the move to the target: an update of a locked package, same flags.
//!
//! So a conflict in the move (or a patch upstream already carries) leaves
//! an adopted package, and the move's conflict is handled as any other
//! (`--keep-conflicts`, `[pending]`, `--continue`). `--dry-run` writes
//! nothing, so it plans both steps as one, and its summary says both.

use super::summary::{AdoptionStep, UpdateReport};
use super::{Stage, UpdateOptions};
use crate::error::Result;
use crate::workspace::Context;

/// Adopts the package at vendor.toml's versions and writes it, then moves
/// it as `opts` asks; the report is the move's, saying the adoption too.
pub(super) fn adopt_then_move(ctx: &Context, opts: &UpdateOptions) -> Result<UpdateReport> {
    let adoption = super::run(ctx, opts, Stage::Adoption)?;
    let kept = adoption.upstreamed.iter().any(|u| !u.dropped);
    if !adoption.conflicts.is_empty() || kept {
        return Ok(adoption);
    }
    // Said now: should the move fail, the error follows this line.
    ctx.shell.status(
        "Adopted",
        format!(
            "the package at {} (upstream/lock.toml written); now the move",
            versions(&adoption)
        ),
    );
    let moved = super::run(ctx, opts, Stage::Move)?;
    Ok(merged(adoption, moved))
}

/// `v1.0.0`, or `a v1.0.0, b v2.0.0` with several upstreams.
fn versions(report: &UpdateReport) -> String {
    report
        .upstreams
        .iter()
        .map(|u| match &u.name {
            Some(name) => format!("{name} {}", u.to),
            None => u.to.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The move's report, with what the adoption did: which upstreams it
/// adopted, the hunks it refreshed, the edits it folded, its notes, and the
/// files it wrote among the ones changed.
fn merged(adoption: UpdateReport, mut moved: UpdateReport) -> UpdateReport {
    moved.adopted = true;
    for (m, a) in moved.upstreams.iter_mut().zip(&adoption.upstreams) {
        m.adopted = a.adopted;
    }
    moved.fuzzy = adoption.fuzzy.clone();
    moved.edits.splice(0..0, adoption.edits.clone());
    moved.notes.splice(0..0, adoption.notes.clone());
    let mut changed: Vec<String> = adoption
        .changed
        .iter()
        .chain(&moved.changed)
        .cloned()
        .collect();
    changed.sort();
    changed.dedup();
    let (mut created, mut deleted, mut kept) = (Vec::new(), Vec::new(), Vec::new());
    for f in changed {
        match (
            was_there(&adoption, &moved, &f),
            is_there(&adoption, &moved, &f),
        ) {
            (false, true) => created.push(f.clone()),
            (true, false) => deleted.push(f.clone()),
            (true, true) => {}
            // Created by the adoption and deleted by the move: never there.
            (false, false) => continue,
        }
        kept.push(f);
    }
    (moved.changed, moved.created, moved.deleted) = (kept, created, deleted);
    moved.adoption = Some(AdoptionStep {
        written: true,
        changed: adoption.changed,
    });
    moved
}

/// Whether `f`, changed by one of the steps, was there before the first.
fn was_there(adoption: &UpdateReport, moved: &UpdateReport, f: &String) -> bool {
    if adoption.changed.contains(f) {
        !adoption.created.contains(f)
    } else {
        !moved.created.contains(f)
    }
}

/// Whether `f`, changed by one of the steps, is there after the second.
fn is_there(adoption: &UpdateReport, moved: &UpdateReport, f: &String) -> bool {
    if moved.changed.contains(f) {
        !moved.deleted.contains(f)
    } else {
        !adoption.deleted.contains(f)
    }
}
