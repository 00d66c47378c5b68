//! The command line: parse flags, run one op, render its error once, and
//! pick the exit code.
//!
//! Each subcommand has a file here holding its clap arguments and an `exec`
//! that turns them into the op's options (`ops::<command>`). Errors from the
//! library are printed here and nowhere else: `error: <message>` on one line,
//! then `  help: <what to do>` when there is a hint.

mod check;
mod image;
mod patch;
mod pr;
mod render;
mod update;

use std::io::Write;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::console::{Format, Shell};
use crate::env::Env;
use crate::error::{Error, ExitCode};
use crate::workspace::Context;

/// revendor keeps a vendored upstream honest.
#[derive(Debug, Parser)]
#[command(name = "revendor", version, about, propagate_version = true)]
pub struct Cli {
    /// Package directory (holds vendor.toml).
    #[arg(short = 'C', global = true, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// Output format.
    #[arg(long, global = true, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Never use the network.
    #[arg(long, global = true)]
    pub offline: bool,
    /// More detail (request counts, each step).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// No progress bars (they only ever appear on a terminal).
    #[arg(long, global = true)]
    pub no_progress: bool,
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands of DESIGN.md.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Resolve the release, fetch, re-apply every patch, rewrite, refresh patches, write the lock.
    Update(update::Args),
    /// Rebuild the outputs from the pristine copies, patches, rewrites and pin; offline.
    Render(render::Args),
    /// The drift check: every finding with a stable id, file and line.
    Check(check::Args),
    /// Work on patch files.
    #[command(subcommand)]
    Patch(patch::Command),
    /// Build, verify and pin the package's image; pin its base images.
    #[command(subcommand)]
    Image(image::Command),
    /// Title and Markdown body for the upgrade; `--create` commits, pushes and opens the pull request.
    Pr(pr::Args),
}

/// Runs the command line of this process.
pub fn main() -> std::process::ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                ExitCode::Usage
            } else {
                ExitCode::Clean
            };
            let _ = e.print();
            return std::process::ExitCode::from(code as u8);
        }
    };
    let env = Env::from_process();
    let code = match run(cli, env) {
        Ok(code) => code,
        Err(e) => {
            report_error(&e);
            e.exit_code()
        }
    };
    std::process::ExitCode::from(code as u8)
}

/// Runs a parsed command line; the exit code for a run that did its job
/// (0, or 1 when it found drift or a conflict it reports itself).
pub fn run(cli: Cli, env: Env) -> Result<ExitCode, Error> {
    let shell = Shell::new(cli.format, cli.verbose, cli.no_progress, env.no_color);
    let ctx = Context::new(cli.dir.clone(), env, cli.offline, shell)?;
    let code = match cli.command {
        Command::Update(args) => update::exec(&ctx, args),
        Command::Render(args) => render::exec(&ctx, args),
        Command::Patch(cmd) => patch::exec(&ctx, cmd),
        Command::Pr(args) => pr::exec(&ctx, args),
        Command::Image(cmd) => image::exec(&ctx, cmd),
        Command::Check(args) => check::exec(&ctx, args),
    };
    ctx.report_network();
    code
}

fn report_error(e: &Error) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "error: {e}");
    if let Some(hint) = e.hint() {
        let _ = writeln!(err, "  help: {hint}");
    }
}
