//! The command line: parse flags, run one op, render its error once, and
//! pick the exit code.
//!
//! Each subcommand has a file here holding its clap arguments and an `exec`
//! that turns them into the op's options (`ops::<command>`). Errors from the
//! library are printed here and nowhere else: `error: <message>` on one line,
//! the chain of causes under `Caused by:`, then `  help: <what to do>` when
//! there is a hint; the exit code is [`Error::exit_code`].

mod check;
mod check_all;
mod generate;
mod image;
mod patch;
mod pr;
mod pr_report;
mod render;
mod update;

use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};

use crate::console::{ColorChoice, Format, Paint, Settings, Shell, Style, Verbosity};
use crate::env::Env;
use crate::error::{Error, ExitCode, Outcome};
use crate::report;
use crate::workspace::{Access, Context};

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
    /// Show each step: files read, patches applied, HTTP requests.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Errors only: no status lines, warnings or progress bars (data on stdout stays).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// No progress bars (they only ever appear on a terminal).
    #[arg(long, global = true)]
    pub no_progress: bool,
    /// When to use colour.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
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
    /// Title and Markdown body for the upgrade; `--create` commits, pushes and opens the pull
    /// request; `--report` keeps the tracking issue of every package that needs a person.
    Pr(pr::Args),
    /// Print the shell completion script (bash, elvish, fish, powershell, zsh) on stdout.
    Completions(generate::Args),
    /// Print the man page, revendor(1), on stdout.
    Man,
}

impl Command {
    /// How this command uses its package (DESIGN.md, "One writer at a
    /// time"): the lock its run holds.
    fn access(&self) -> Access {
        let write = |writes: bool| if writes { Access::Write } else { Access::Read };
        match self {
            Command::Update(args) => write(!args.dry_run),
            Command::Render(_) | Command::Patch(_) => Access::Write,
            Command::Check(args) if args.all => Access::None,
            Command::Check(args) => write(args.fix),
            Command::Image(image::Command::Build(args)) => write(!args.dry_run),
            Command::Image(image::Command::Pin(_)) => Access::Write,
            Command::Image(image::Command::PinBase(args)) => write(!args.dry_run),
            Command::Pr(args) if args.report => Access::None,
            Command::Pr(args) => write(args.create),
            Command::Completions(_) | Command::Man => Access::None,
        }
    }

    /// The `--format`s this command answers in. Any other is refused before
    /// it runs (exit 2), rather than answered in another format than asked:
    /// only `check` has GitHub annotations, and what `completions` and
    /// `man` print has no other format.
    fn formats(&self) -> &'static [Format] {
        match self {
            Command::Check(_) => &[Format::Human, Format::Json, Format::Github],
            Command::Completions(_) | Command::Man => &[Format::Human],
            _ => &[Format::Human, Format::Json],
        }
    }

    /// The command as a user types it, for messages.
    fn name(&self) -> &'static str {
        match self {
            Command::Update(_) => "update",
            Command::Render(_) => "render",
            Command::Check(_) => "check",
            Command::Patch(patch::Command::Refresh { .. }) => "patch refresh",
            Command::Image(image::Command::Build(_)) => "image build",
            Command::Image(image::Command::Pin(_)) => "image pin",
            Command::Image(image::Command::PinBase(_)) => "image pin-base",
            Command::Pr(_) => "pr",
            Command::Completions(_) => "completions",
            Command::Man => "man",
        }
    }

    /// The usage error for `--format format` when this command does not
    /// take it, naming the formats it does take.
    fn refuse_format(&self, format: Format) -> Option<Error> {
        let formats = self.formats();
        if formats.contains(&format) {
            return None;
        }
        let names: Vec<String> = formats.iter().map(|f| format!("`{}`", f.name())).collect();
        Some(Error::usage(
            format!(
                "`revendor {}` does not take --format {}: it takes {}",
                self.name(),
                format.name(),
                names.join(" or ")
            ),
            "run it with one of those formats (only `check` writes GitHub annotations)",
        ))
    }
}

/// Runs the command line of this process.
pub fn main() -> std::process::ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return refuse_command_line(&e),
    };
    let env = Env::from_process();
    let shell = Shell::new(Settings {
        format: cli.format,
        verbosity: Verbosity::from_flags(cli.quiet, cli.verbose),
        progress: !cli.no_progress,
        color: cli.color,
        no_color: env.no_color,
        force_color: env.clicolor_force,
    });
    let dir = cli.dir.clone();
    let workspace = env.github_workspace.clone();
    let reports = cli.command.formats().contains(&cli.format);
    let result = run(cli, env, shell.clone());
    if let Err(e) = &result
        && !e.is_closed_stdout()
    {
        if reports && !shell.wrote_out() {
            report_failure(&shell, &dir, workspace.as_deref(), e);
        }
        shell.error(&render_error(e, shell.paint_err()));
    }
    std::process::ExitCode::from(crate::error::exit_code(result.as_ref().copied()) as u8)
}

/// A command line clap refused: clap's own message (or `--help` and
/// `--version`, exit 0). With `--format json` among the arguments, stdout
/// also gets the error document every failed command prints.
fn refuse_command_line(e: &clap::Error) -> std::process::ExitCode {
    if !e.use_stderr() {
        let _ = e.print();
        return std::process::ExitCode::from(ExitCode::Clean as u8);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--format=json")
        || args
            .windows(2)
            .any(|w| w[0] == "--format" && w[1] == "json");
    if json {
        let text = e.render().to_string();
        let first = text.lines().next().unwrap_or_default();
        let failure = report::Failure {
            message: first.strip_prefix("error: ").unwrap_or(first).to_owned(),
            hint: Some("run `revendor --help` for the commands and their flags".to_owned()),
            exit_code: ExitCode::Usage as u8,
            kind: "usage",
            file: None,
            line: None,
        };
        let mut stdout = std::io::stdout().lock();
        let _ = std::io::Write::write_all(&mut stdout, report::json_error(&failure).as_bytes());
    }
    let _ = e.print();
    std::process::ExitCode::from(ExitCode::Usage as u8)
}

/// A failed run's report on stdout in a machine format, for a command that
/// printed none itself: `{"schema": 1, "error": {…}}` with `--format json`,
/// one `::error` annotation with `--format github`. Best effort: stderr
/// gets the error whatever becomes of this.
fn report_failure(shell: &Shell, dir: &Path, workspace: Option<&Path>, e: &Error) {
    let failure = report::Failure::of(dir, e);
    let _ = match shell.format() {
        Format::Human => Ok(()),
        Format::Json => shell.out(&report::json_error(&failure)),
        Format::Github => {
            let at = report::annotation_dir(dir, workspace);
            shell.commands(&report::github_failure(&at, "revendor", &failure))
        }
    };
}

/// Runs a parsed command line with its console; how a run that did its job
/// ended (clean, or findings and conflicts it reported itself).
pub fn run(cli: Cli, env: Env, shell: Shell) -> Result<Outcome, Error> {
    if let Some(e) = cli.command.refuse_format(cli.format) {
        return Err(e);
    }
    let access = cli.command.access();
    let ctx = Context::open(cli.dir.clone(), env, cli.offline, shell, access)?;
    let code = match cli.command {
        Command::Update(args) => update::exec(&ctx, args),
        Command::Render(args) => render::exec(&ctx, args),
        Command::Patch(cmd) => patch::exec(&ctx, cmd),
        Command::Pr(args) => pr::exec(&ctx, args),
        Command::Image(cmd) => image::exec(&ctx, cmd),
        Command::Check(args) => check::exec(&ctx, args),
        Command::Completions(args) => generate::completions(&ctx.shell, args),
        Command::Man => generate::man(&ctx.shell),
    };
    ctx.report_network();
    code
}

/// Prints `text` on stdout: the one way a command's data leaves `cli`. A
/// failed write ends the command ([`Error::Stdout`]).
fn out(ctx: &Context, text: &str) -> Result<(), Error> {
    ctx.shell.out(text).map_err(Error::Stdout)
}

/// [`out`] for the workflow commands revendor formed itself
/// (`--format github`), written through [`Shell::commands`].
fn commands(ctx: &Context, text: &str) -> Result<(), Error> {
    ctx.shell.commands(text).map_err(Error::Stdout)
}

/// What a failed run prints, cargo-style: `error: <message>`, then each
/// of its [`Error::causes`] on its own line under `Caused by:`, then
/// `  help: <hint>`. `paint` colours the `error` label.
fn render_error(e: &Error, paint: Paint) -> String {
    let mut out = format!("{}: {e}\n", paint.paint(Style::Error, "error"));
    let causes = e.causes();
    if !causes.is_empty() {
        out.push_str("Caused by:\n");
        for cause in causes {
            for line in cause.lines() {
                out.push_str(&format!("  {line}\n"));
            }
        }
    }
    if let Some(hint) = e.hint() {
        out.push_str(&format!(
            "  help: {hint} (docs/reference.md#{})\n",
            e.reference()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Error as IoError, ErrorKind};

    #[test]
    fn an_error_without_causes_is_one_line_and_its_help() {
        let e = Error::usage("no lock", "run `revendor update`");
        assert_eq!(
            render_error(&e, Paint::plain()),
            "error: no lock\n  help: run `revendor update` (docs/reference.md#commands)\n"
        );
    }

    /// Every `help:` line points at docs/reference.md: each anchor must be a
    /// heading there, as GitHub spells its slugs.
    #[test]
    fn every_reference_anchor_is_a_heading_of_the_reference() {
        let doc =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/reference.md"))
                .unwrap();
        let slugs: Vec<String> = doc
            .lines()
            .filter_map(|l| l.strip_prefix('#'))
            .map(|h| {
                h.trim_start_matches('#')
                    .trim()
                    .to_lowercase()
                    .chars()
                    .filter_map(|c| match c {
                        ' ' => Some('-'),
                        c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        let config = |file: &str| {
            Error::Config(crate::config::ConfigError::at(
                std::path::Path::new(file),
                Some(1),
                "bad",
            ))
        };
        let errors = [
            config("vendor.toml"),
            config("upstream/lock.toml"),
            config("patches/a.patch"),
            config("images/a/Dockerfile"),
            Error::usage("m", "h"),
            Error::NoRelease {
                upstream: "github:o/r".into(),
                track: "*".into(),
            },
            Error::Http(crate::net::HttpError::NotFound { url: "u".into() }),
            Error::Checksum {
                what: "w".into(),
                digest: "sha256",
                expected: "e".into(),
                actual: "a".into(),
            },
            Error::Render {
                file: "f".into(),
                line: None,
                message: "m".into(),
            },
            Error::HandEdits("c".into()),
            Error::ChangedDuringRun { path: "c".into() },
            Error::StrayFiles("c".into()),
            Error::PatchConflict("c".into()),
            Error::PendingUpdate("c".into()),
            Error::PinsDisagree("c".into()),
            Error::ForeignBranch {
                branch: "b".into(),
                commits: "c".into(),
            },
            Error::Bug("c".into()),
            Error::Io {
                action: "read",
                path: "p".into(),
                source: IoError::other("x"),
            },
            Error::Repository {
                action: "read".into(),
                source: git2::Error::from_str("m").into(),
            },
            Error::Registry(crate::registry::Error::MissingDigest { url: "u".into() }),
        ];
        for e in &errors {
            assert!(
                slugs.iter().any(|s| s == e.reference()),
                "docs/reference.md has no heading `#{}` (for {e})",
                e.reference()
            );
        }
    }

    #[test]
    fn the_error_label_is_painted_when_stderr_has_colour() {
        let e = Error::usage("no lock", "run `revendor update`");
        assert_eq!(
            render_error(&e, Paint::new(true)),
            "\x1b[1;31merror\x1b[0m: no lock\n  help: run `revendor update` (docs/reference.md#commands)\n"
        );
    }

    #[test]
    fn causes_follow_the_message_once() {
        let e = Error::Io {
            action: "read",
            path: "vendor.toml".into(),
            source: IoError::new(ErrorKind::PermissionDenied, "permission denied"),
        };
        assert_eq!(
            render_error(&e, Paint::plain()),
            "error: failed to read `vendor.toml`\nCaused by:\n  permission denied\n"
        );
    }

    #[test]
    fn a_wrapped_registry_error_keeps_its_cause_and_its_hint() {
        let e = Error::PinnedImage {
            reference: "r/x:v1@sha256:00".into(),
            source: crate::registry::Error::Unauthorized {
                url: "https://r/v2/x/manifests/v1".into(),
                reason: "the registry refused the credentials".into(),
                errors: Vec::new(),
            },
        };
        let text = render_error(&e, Paint::plain());
        assert_eq!(
            text.lines().take(3).collect::<Vec<_>>(),
            [
                "error: failed to verify the pinned image `r/x:v1@sha256:00`",
                "Caused by:",
                "  not authorized for `https://r/v2/x/manifests/v1`: the registry refused the credentials",
            ]
        );
        assert!(
            text.ends_with(
                "(docker login) or set DOCKER_CONFIG to a config holding its credentials (docs/reference.md#revendor-image-pin)\n"
            ),
            "{text}"
        );
        assert_eq!(e.exit_code(), ExitCode::Failure);
    }

    #[test]
    fn a_transparent_error_shows_the_inner_cause() {
        let e = Error::Registry(crate::registry::Error::Manifest {
            reference: "r/app:v1".into(),
            source: crate::image::Error::Platform {
                input: "linux".into(),
            },
        });
        assert_eq!(
            render_error(&e, Paint::plain()),
            "error: invalid manifest `r/app:v1`\nCaused by:\n  invalid platform `linux`: expected `os/arch` or `os/arch/variant`\n"
        );
    }

    /// A library error that prints its own cause in its message, as
    /// hyper's connect errors do.
    #[derive(Debug)]
    struct Embeds(IoError);

    impl std::fmt::Display for Embeds {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "tcp connect error: {}", self.0)
        }
    }

    impl std::error::Error for Embeds {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_cause_already_in_the_line_above_is_not_repeated() {
        let refused = IoError::new(ErrorKind::ConnectionRefused, "connection refused");
        let e = Error::Io {
            action: "read",
            path: "x".into(),
            source: IoError::other(Embeds(refused)),
        };
        assert_eq!(
            render_error(&e, Paint::plain()),
            "error: failed to read `x`\nCaused by:\n  tcp connect error: connection refused\n"
        );
    }
}
