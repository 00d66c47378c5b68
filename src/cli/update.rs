//! `revendor update`.
//!
//! The update ends with the offline check of what it wrote: each finding is
//! printed as a warning with its next command. The exit code stays 0 when
//! the update did its job, unless a finding is an `error` the update itself
//! caused (one the check before it did not report): then the files are
//! written and the exit code is 1, until that next command is run.

use crate::console::Format;
use crate::error::{Outcome, Result};
use crate::ops::update::{UpdateOptions, UpdateReport, update};
use crate::report;
use crate::workspace::Context;

/// Flags of `revendor update`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
When it has written the update, `update` runs the offline check on the result and prints \
each finding as a warning with its next command. It exits 0 when the update is done, and 1 \
when the result has an error finding that the update caused (one the check before did not \
report; after adopting a package, none is): the files stay written, and the finding's next \
command (for example `revendor image pin-base --go 1.25` when the new release's go.mod needs \
a newer Go than the builder) finishes the job. A conflict also exits 1, with nothing written \
(or the markers, with --keep-conflicts: in the rendered file for a vendor patch, in a working \
copy under upstream/.revendor-conflicts/<patch>/ for a source patch).")]
pub struct Args {
    /// Move to this release tag (outside `track` only with a warning), or commit; with several
    /// upstreams, `NAME=TAG` for each one moved (repeatable).
    #[arg(long, value_name = "[NAME=]TAG")]
    pub to: Vec<String>,
    /// Print the plan and each patch's result; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// On a conflict, write diff3 markers into the rendered file (a source patch's: into a copy
    /// of the source file under upstream/.revendor-conflicts/<patch>/) and record the update as
    /// pending in the lock; finish it with --continue once they are resolved.
    #[arg(long)]
    pub keep_conflicts: bool,
    /// Fold hand edits of rendered files into the patch that targets them.
    #[arg(long)]
    pub adopt_edits: bool,
    /// After --keep-conflicts and a hand resolution: take the resolved files as the patched
    /// result, rebase the patches onto them (a source patch is rebuilt from its resolved
    /// copies, which are then removed), finish the update.
    #[arg(long = "continue", conflicts_with_all = ["to", "keep_conflicts", "adopt_edits"])]
    pub resume: bool,
    /// Remove each patch (or section of one) the new release already carries: its file and its [[patch]].
    #[arg(long)]
    pub drop_upstreamed: bool,
}

pub(super) fn exec(ctx: &Context, args: Args) -> Result<Outcome> {
    let opts = UpdateOptions {
        to: args.to,
        dry_run: args.dry_run,
        keep_conflicts: args.keep_conflicts,
        adopt_edits: args.adopt_edits,
        resume: args.resume,
        drop_upstreamed: args.drop_upstreamed,
    };
    let report = update(ctx, &opts)?;
    match ctx.shell.format() {
        Format::Json => super::out(ctx, &report::document(&report))?,
        _ => super::out(ctx, &report.human())?,
    }
    let mut kept: Vec<&str> = report
        .upstreamed
        .iter()
        .filter(|u| !u.dropped)
        .map(|u| u.patch.as_str())
        .collect();
    kept.dedup();
    let nothing = nothing_written(&report);
    if report.conflicts.is_empty() && !kept.is_empty() {
        ctx.shell.warn(format!(
            "upstream {} already carries patch {}; {nothing}; rerun with --drop-upstreamed to remove {}",
            report.to,
            kept.iter()
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", "),
            if kept.len() == 1 { "it" } else { "them" }
        ));
        return Ok(Outcome::Findings);
    }
    if report.conflicts.is_empty() {
        return Ok(closing(ctx, &report));
    }
    ctx.shell.warn(format!(
        "{} conflicting hunk(s); {}",
        report.conflicts.len(),
        conflict_hint(&opts, &report)
    ));
    Ok(Outcome::Findings)
}

/// What to do about the conflicts of `report`: where their markers are and
/// the command after, or why nothing was written.
fn conflict_hint(opts: &UpdateOptions, report: &UpdateReport) -> String {
    let mut marked: Vec<&str> = Vec::new();
    for m in report.conflicts.iter().filter_map(|c| c.marked.as_deref()) {
        if !marked.contains(&m) {
            marked.push(m);
        }
    }
    if !marked.is_empty() {
        return format!(
            "resolve the markers in {}, then run `revendor update --continue`",
            marked.join(", ")
        );
    }
    if opts.resume {
        "nothing was written; the pending update stays as it was".into()
    } else if opts.keep_conflicts && opts.dry_run {
        "nothing was written (--dry-run); rerun without it to write diff3 markers".into()
    } else if opts.keep_conflicts {
        format!(
            "{}: no file of these conflicts can hold markers",
            nothing_written(report)
        )
    } else {
        format!(
            "{}; rerun with --keep-conflicts to write diff3 markers",
            nothing_written(report)
        )
    }
}

/// "nothing was written", or, after an adoption written before its move
/// (issue 20), that the move's stop did not undo it.
fn nothing_written(report: &UpdateReport) -> &'static str {
    match &report.adoption {
        Some(a) if a.written => "the adoption is written, nothing of the move",
        _ => "nothing was written",
    }
}

/// The closing check's findings as warnings, each with its next command;
/// exit 1 when the update caused an error finding.
fn closing(ctx: &Context, report: &UpdateReport) -> Outcome {
    for c in &report.findings {
        let f = &c.finding;
        let caused = if c.caused {
            " (caused by this update)"
        } else {
            ""
        };
        let mut line = format!(
            "{}: {}:{}: {}: {}{caused}",
            f.id, f.file, f.line, f.severity, f.message
        );
        if !f.fix.is_empty() {
            line.push_str(&format!("\n  next: {}", f.fix));
        }
        ctx.shell.warn(line);
    }
    let caused = report.caused().count();
    if caused == 0 {
        return Outcome::Clean;
    }
    ctx.shell.warn(format!(
        "the update is written, but its result has {caused} error finding(s) it caused; run the next command of each, then `revendor check`"
    ));
    Outcome::Findings
}
