//! `revendor pr`.

use crate::console::Format;
use crate::error::{ExitCode, Result};
use crate::ops::pr::{PrOptions, pr};
use crate::workspace::Context;

/// Flags of `revendor pr`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Commit on a branch, push it, and open or update the pull request.
    #[arg(long)]
    pub create: bool,
    /// The branch to compare with and merge into (default: HEAD, and the repository's default branch).
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
}

pub(super) fn exec(ctx: &Context, args: Args) -> Result<ExitCode> {
    let report = pr(
        ctx,
        &PrOptions {
            create: args.create,
            base: args.base,
        },
    )?;
    match ctx.shell.format() {
        Format::Json => ctx
            .shell
            .out(&serde_json::to_string_pretty(&report).unwrap_or_default()),
        _ if report.summary.files.is_empty() => ctx
            .shell
            .out("nothing in the package changed since the base: no pull request to propose\n"),
        _ => {
            ctx.shell
                .out(&format!("{}\n\n{}", report.title, report.body));
            if let Some(url) = &report.url {
                ctx.shell.status("Opened", url);
            }
        }
    }
    Ok(ExitCode::Clean)
}
