//! `revendor check [--online] [--fix] [--all [ROOT]]`.
//!
//! Whatever happens, the asked format gets its report: the findings, or,
//! when the check could not run at all (a malformed vendor.toml, no lock),
//! the error as a finding-like entry (`report::Failure`). The exit code is
//! then the error's; after a report, 3 when a remote did not answer (the
//! `unreachable` findings), else 1 for an `error` finding, else 0.

use std::path::PathBuf;

use crate::console::Format;
use crate::error::{Error, Outcome, Result};
use crate::ops::check::{CheckOptions, check, package_name};
use crate::report;
use crate::workspace::Context;

/// Flags of `revendor check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Also ask the network: newer upstream releases, the pinned image in its
    /// registry, what the marker releases ship, the CNI checksum sidecars. A
    /// remote that does not answer is the finding `unreachable`: every other
    /// check still runs, and the exit code is 3.
    #[arg(long)]
    pub online: bool,
    /// Apply the fixes that need no decision (moving a marker whose release
    /// ships the pinned CNI plugins; checksums after a deliberate version
    /// change). Needs --online.
    #[arg(long)]
    pub fix: bool,
    /// Check every package (a directory holding vendor.toml) under ROOT, in parallel: one
    /// report; with --format github also the job matrix in $GITHUB_OUTPUT.
    #[arg(long)]
    pub all: bool,
    /// With --all: where to look for packages (default: the -C directory).
    #[arg(value_name = "ROOT", requires = "all")]
    pub root: Option<PathBuf>,
    /// With --all: also write the JSON document (what --format json prints) to FILE, whatever
    /// --format says, so one run gives the annotations, the summary and the JSON.
    #[arg(long, value_name = "FILE", requires = "all")]
    pub json_out: Option<PathBuf>,
    /// With --all: write the update matrix to FILE, a JSON list with one
    /// {"package","path","to","upstream"} per package whose newer release every patch
    /// re-applies to (docs/check-all.md).
    #[arg(long, value_name = "FILE", requires = "all")]
    pub matrix_out: Option<PathBuf>,
}

pub(super) fn exec(ctx: &Context, args: Args) -> Result<Outcome> {
    let opts = CheckOptions {
        online: args.online,
        fix: args.fix,
    };
    if args.all {
        let files = super::check_all::Files {
            json: args.json_out,
            matrix: args.matrix_out,
        };
        return super::check_all::exec(ctx, args.root, opts, &files);
    }
    let report = match check(ctx, &opts) {
        Ok(report) => report,
        Err(e) => {
            print_failure(ctx, &e)?;
            return Err(e);
        }
    };
    let found = &report.findings;
    match ctx.shell.format() {
        Format::Human => super::out(
            ctx,
            &report::human(&report.package, found, ctx.shell.paint_out()),
        )?,
        Format::Json => super::out(ctx, &report::json(&report.package, found))?,
        Format::Github => {
            let dir = annotation_dir(ctx);
            super::commands(ctx, &report::github(&dir, found))?;
            if let Some(summary) = &ctx.env.step_summary {
                report::append_summary(summary, &report::markdown(&report.package, &dir, found))?;
            }
        }
    }
    for file in &report.changed {
        ctx.shell.status("Fixed", file);
    }
    match report.outcome() {
        // Said as an error, so stderr names what did not answer.
        Outcome::Incomplete => Err(Error::Unreachable {
            urls: report.unreachable,
        }),
        outcome => Ok(outcome),
    }
}

/// A check that could not run, in the asked format; the human format has
/// only the error itself, which `cli` prints on stderr.
fn print_failure(ctx: &Context, e: &Error) -> Result<()> {
    let failure = report::Failure::of(&ctx.root, e);
    let package = package_name(ctx);
    match ctx.shell.format() {
        Format::Human => {}
        Format::Json => super::out(ctx, &report::json_failure(&package, &failure))?,
        Format::Github => {
            let dir = annotation_dir(ctx);
            super::commands(ctx, &report::github_failure(&dir, "revendor", &failure))?;
            if let Some(summary) = &ctx.env.step_summary {
                let markdown = report::markdown_failure(&package, &dir, &failure);
                report::append_summary(summary, &markdown)?;
            }
        }
    }
    Ok(())
}

/// The package as annotations name it (`GITHUB_WORKSPACE`, else the git
/// root).
fn annotation_dir(ctx: &Context) -> PathBuf {
    report::annotation_dir(&ctx.root, ctx.env.github_workspace.as_deref())
}
