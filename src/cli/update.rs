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
    /// On a conflict, write diff3 markers into the rendered file (the lock stays).
    #[arg(long)]
    pub keep_conflicts: bool,
    /// Fold hand edits of rendered files into the patch that targets them.
    #[arg(long)]
    pub adopt_edits: bool,
    /// Remove each patch (or section of one) the new release already carries: its file and its [[patch]].
    #[arg(long)]
    pub drop_upstreamed: bool,
}

pub(super) fn exec(ctx: &Context, args: Args) -> Result<ExitCode> {
    let opts = UpdateOptions {
        to: args.to,
        dry_run: args.dry_run,
        keep_conflicts: args.keep_conflicts,
        adopt_edits: args.adopt_edits,
        drop_upstreamed: args.drop_upstreamed,
    };
    let report = update(ctx, &opts)?;
    match ctx.shell.format() {
        Format::Json => ctx
            .shell
            .out(&serde_json::to_string_pretty(&report).unwrap_or_default()),
        _ => ctx.shell.out(&report.human()),
    }
    let mut kept: Vec<&str> = report
        .upstreamed
        .iter()
        .filter(|u| !u.dropped)
        .map(|u| u.patch.as_str())
        .collect();
    kept.dedup();
    if report.conflicts.is_empty() && !kept.is_empty() {
        ctx.shell.warn(format!(
            "upstream {} already carries patch {}; nothing was written; rerun with --drop-upstreamed to remove {}",
            report.to,
            kept.iter()
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", "),
            if kept.len() == 1 { "it" } else { "them" }
        ));
        return Ok(ExitCode::Findings);
    }
    if report.conflicts.is_empty() {
        Ok(ExitCode::Clean)
    } else {
        let hint = if opts.keep_conflicts {
            "resolve the markers, fold the result into the patch, then run `revendor update` again"
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
