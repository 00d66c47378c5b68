//! `revendor update`.

use crate::console::Format;
use crate::error::{ExitCode, Result};
use crate::ops::update::{UpdateOptions, update};
use crate::workspace::Context;

/// Flags of `revendor update`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Move to this release tag (outside `track` only with a warning).
    #[arg(long, value_name = "TAG")]
    pub to: Option<String>,
    /// Print the plan and each patch's result; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// On a conflict, write diff3 markers into the rendered file and record the update as pending
    /// in the lock; finish it with --continue once they are resolved.
    #[arg(long)]
    pub keep_conflicts: bool,
    /// Fold hand edits of rendered files into the patch that targets them.
    #[arg(long)]
    pub adopt_edits: bool,
    /// After --keep-conflicts and a hand resolution: take the resolved files as the patched
    /// result, rebase the patches onto them, finish the update.
    #[arg(long = "continue", conflicts_with_all = ["to", "keep_conflicts", "adopt_edits"])]
    pub resume: bool,
}

pub(super) fn exec(ctx: &Context, args: Args) -> Result<ExitCode> {
    let opts = UpdateOptions {
        to: args.to,
        dry_run: args.dry_run,
        keep_conflicts: args.keep_conflicts,
        adopt_edits: args.adopt_edits,
        resume: args.resume,
    };
    let report = update(ctx, &opts)?;
    match ctx.shell.format() {
        Format::Json => ctx
            .shell
            .out(&serde_json::to_string_pretty(&report).unwrap_or_default()),
        _ => ctx.shell.out(&report.human()),
    }
    if report.conflicts.is_empty() {
        Ok(ExitCode::Clean)
    } else {
        let hint = if opts.keep_conflicts {
            "resolve the markers, then run `revendor update --continue`"
        } else {
            "nothing was written; rerun with --keep-conflicts to write diff3 markers"
        };
        ctx.shell.warn(format!(
            "{} conflicting hunk(s); {hint}",
            report.conflicts.len()
        ));
        Ok(ExitCode::Findings)
    }
}
