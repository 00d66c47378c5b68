//! `revendor check --all [ROOT]`: every package's check, printed once all
//! are done, one package after the other.
//!
//! Each package gets a [`Context`] of its own, opened on the thread that
//! checks it, with the run's environment, flags and format but never a
//! progress bar (several at once would garble the terminal). A package that
//! could not be checked is rendered here, like any error of a run, and then
//! reported among the others.

use std::path::{Path, PathBuf};

use crate::console::{Format, Paint};
use crate::error::{Error, Outcome, Result};
use crate::ops::check::CheckOptions;
use crate::ops::check_all::{CheckAllOptions, PackageCheck, check_all};
use crate::report::{self, all::Failed, all::Package};
use crate::workspace::{Access, Context};

/// The files one run writes besides its output (`--json-out`,
/// `--matrix-out`), so that a workflow reads the annotations, the JSON and
/// the matrix of the same answers instead of asking the network twice.
#[derive(Debug, Default)]
pub(super) struct Files {
    /// Where the JSON document goes.
    pub json: Option<PathBuf>,
    /// Where the update matrix goes.
    pub matrix: Option<PathBuf>,
}

pub(super) fn exec(
    ctx: &Context,
    root: Option<PathBuf>,
    check: CheckOptions,
    files: &Files,
) -> Result<Outcome> {
    let format = ctx.shell.format();
    let access = if check.fix {
        Access::Write
    } else {
        Access::Read
    };
    let open = opener(ctx, access);
    let all = check_all(ctx, &CheckAllOptions { root, check }, &open)?;
    let packages: Vec<Package<'_>> = all
        .packages
        .iter()
        .map(|p| Package {
            name: &p.package,
            dir: &p.workspace_path,
            outcome: match &p.outcome {
                Ok(report) => Ok(report.findings.as_slice()),
                Err(e) => Err(failure(p, e)),
            },
        })
        .collect();
    match format {
        Format::Human => super::out(ctx, &report::all::human(&packages))?,
        Format::Json => super::out(ctx, &report::all::json(&packages))?,
        Format::Github => {
            super::commands(ctx, &report::all::github(&packages))?;
            if let Some(summary) = &ctx.env.step_summary {
                report::append_summary(summary, &report::all::markdown(&packages))?;
            }
            if let Some(output) = &ctx.env.github_output {
                report::all::append_output(output, &report::all::matrix(&packages))?;
            }
        }
    }
    if let Some(path) = &files.json {
        report::all::write_file(path, &report::all::json(&packages))?;
    }
    if let Some(path) = &files.matrix {
        report::all::write_file(path, &report::all::updates_json(&packages))?;
    }
    for p in &all.packages {
        for file in p.outcome.iter().flat_map(|r| &r.changed) {
            ctx.shell
                .status("Fixed", Path::new(&p.package).join(file).display());
        }
    }
    Ok(Outcome::Reported(all.exit_code()))
}

/// Opens each package's [`Context`] with the run's environment, flags and
/// format, never a progress bar, holding `access`.
pub(super) fn opener(
    ctx: &Context,
    access: Access,
) -> impl Fn(PathBuf) -> Result<Context> + Sync + use<> {
    let offline = ctx.client.offline();
    let env = ctx.env.clone();
    let quiet = ctx.shell.without_progress();
    move |dir: PathBuf| Context::open(dir, env.clone(), offline, quiet.clone(), access)
}

/// A package's error as every format shows it: the error object of every
/// failed command, and rendered as a run's error would be.
fn failure(package: &PackageCheck, e: &Error) -> Failed {
    Failed {
        failure: report::Failure::of(&package.dir, e),
        rendered: super::render_error(e, Paint::plain()),
    }
}
