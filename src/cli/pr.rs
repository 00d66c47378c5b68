//! `revendor pr`.

use crate::console::Format;
use crate::error::{Outcome, Result};
use crate::ops::pr::{Action, PrOptions, pr};
use crate::report;
use crate::workspace::Context;

/// Flags of `revendor pr`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Commit on a branch, push it, and open or update the pull request.
    #[arg(long)]
    pub create: bool,
    /// The branch to compare with and merge into (default: origin's default branch, else HEAD).
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
    /// Add `Signed-off-by:` (the committer) to the commit, for DCO.
    #[arg(long, requires = "create")]
    pub signoff: bool,
}

pub(super) fn exec(ctx: &Context, args: Args) -> Result<Outcome> {
    let create = args.create;
    let report = pr(
        ctx,
        &PrOptions {
            create,
            base: args.base,
            signoff: args.signoff,
        },
    )?;
    if ctx.shell.format() == Format::Json {
        super::out(ctx, &report::document(&report))?;
        return Ok(Outcome::Clean);
    }
    if report.is_empty() {
        super::out(
            ctx,
            "nothing in the package changed since the base: no pull request to propose\n",
        )?;
        return Ok(Outcome::Clean);
    }
    match (&report.url, report.action) {
        (Some(url), Some(action)) => {
            let verb = match action {
                Action::Opened => "Opened",
                Action::Updated => "Updated",
                Action::LeftAlone => "Left alone",
            };
            ctx.shell.status(verb, url);
            super::out(ctx, &format!("{url}\n"))?;
        }
        _ if create => {}
        _ => super::out(ctx, &format!("{}\n\n{}", report.title, report.body))?,
    }
    Ok(Outcome::Clean)
}
