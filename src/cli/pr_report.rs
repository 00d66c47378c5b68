//! `revendor pr --report [ROOT]`: the tracking issue, then what was done to
//! it; with `--dry-run`, its title and body; with `--format json`,
//! `{"schema", "url", "action", "rows", "title", "body"}` (docs/json.md).

use std::path::PathBuf;

use crate::console::Format;
use crate::error::{Outcome, Result};
use crate::ops::pr::IssueAction;
use crate::ops::pr::report::{ReportOptions, report};
use crate::report;
use crate::workspace::{Access, Context};

pub(super) fn exec(
    ctx: &Context,
    root: Option<PathBuf>,
    findings: Option<PathBuf>,
    dry_run: bool,
) -> Result<Outcome> {
    let open = super::check_all::opener(ctx, Access::Read);
    let opts = ReportOptions {
        root,
        findings,
        dry_run,
    };
    let done = report(ctx, &opts, &open)?;
    if ctx.shell.format() == Format::Json {
        super::out(ctx, &report::document(&done))?;
        return Ok(Outcome::Clean);
    }
    let count = match done.rows.len() {
        0 => "no package needs a person".to_owned(),
        1 => "1 package needs a person".to_owned(),
        n => format!("{n} packages need a person"),
    };
    let Some(action) = done.action else {
        super::out(ctx, &format!("{}\n\n{}", done.title, done.body))?;
        ctx.shell
            .status("Dry run", format!("{count}; nothing written"));
        return Ok(Outcome::Clean);
    };
    let verb = match action {
        IssueAction::Opened => "Opened",
        IssueAction::Updated => "Updated",
        IssueAction::Reopened => "Reopened",
        IssueAction::Closed => "Closed",
        IssueAction::LeftAlone => "Left alone",
    };
    match &done.url {
        Some(url) => {
            ctx.shell.status(verb, format!("{url}: {count}"));
            super::out(ctx, &format!("{url}\n"))?;
        }
        None => ctx
            .shell
            .status(verb, format!("{count}; no tracking issue")),
    }
    Ok(Outcome::Clean)
}
