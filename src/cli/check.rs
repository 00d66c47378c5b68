//! `revendor check [--online] [--fix]`.

use crate::error::{ExitCode, Result};
use crate::ops::Context;
use crate::ops::check::{CheckOptions, check};
use crate::report::Format;
use crate::report::findings;

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
        Format::Human => ctx.shell.out(&findings::human(&report.package, found)),
        Format::Json => ctx.shell.out(&findings::json(&report.package, found)),
        Format::Github => {
            ctx.shell.out(&findings::github(&ctx.root, found));
            if let Some(summary) = &ctx.env.step_summary {
                findings::append_summary(
                    summary,
                    &findings::markdown(&report.package, &ctx.root, found),
                )?;
            }
        }
    }
    for file in &report.changed {
        ctx.shell.status("Fixed", file);
    }
    if findings::Counts::of(found).error > 0 {
        Ok(ExitCode::Findings)
    } else {
        Ok(ExitCode::Clean)
    }
}
