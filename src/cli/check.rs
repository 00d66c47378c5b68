//! `revendor check [--online] [--fix]`.

use crate::console::Format;
use crate::error::{ExitCode, Result};
use crate::ops::check::{CheckOptions, check};
use crate::report;
use crate::workspace::Context;

/// Flags of `revendor check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Also ask the network: newer upstream releases, the pinned image in its
    /// registry, what the marker releases ship, the CNI checksum sidecars.
    #[arg(long)]
    pub online: bool,
    /// Apply the fixes that need no decision (moving a marker whose release
    /// ships the pinned CNI plugins; checksums after a deliberate version
    /// change). Needs --online.
    #[arg(long)]
    pub fix: bool,
}

pub(super) fn exec(ctx: &Context, args: Args) -> Result<ExitCode> {
    let opts = CheckOptions {
        online: args.online,
        fix: args.fix,
    };
    let report = check(ctx, &opts)?;
    let found = &report.findings;
    match ctx.shell.format() {
        Format::Human => ctx.shell.out(&report::human(
            &report.package,
            found,
            ctx.shell.paint_out(),
        )),
        Format::Json => ctx.shell.out(&report::json(&report.package, found)),
        Format::Github => {
            ctx.shell.out(&report::github(&ctx.root, found));
            if let Some(summary) = &ctx.env.step_summary {
                report::append_summary(
                    summary,
                    &report::markdown(&report.package, &ctx.root, found),
                )?;
            }
        }
    }
    for file in &report.changed {
        ctx.shell.status("Fixed", file);
    }
    if report::Counts::of(found).error > 0 {
        Ok(ExitCode::Findings)
    } else {
        Ok(ExitCode::Clean)
    }
}
