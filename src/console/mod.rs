//! Where output goes: status on stderr, data on stdout.
//!
//! [`Shell`] is the one handle commands print through, so `--format`,
//! `--no-progress`, `-q`, `-v` and colour (`--color`, `NO_COLOR`,
//! `CLICOLOR_FORCE`) are honoured in one place.
//!
//! 1. Progress bars appear only when stderr is a terminal, never with `-q`,
//!    `--no-progress` or a machine format.
//! 2. Every bar lives in one [`MultiProgress`], and every line either stream
//!    gets is printed through its `suspend`: the bars are taken off the
//!    screen, the line is written, the bars come back. A line written
//!    around the bars would leave a stale copy of a bar on screen.
//! 3. Bars are cleared when they finish and when they are dropped, so a run
//!    ends with its last lines and no bar.
//!
//! The console sits below everything that prints (`check`, `ops`, `cli`) and
//! knows nothing of what they print; how findings look is `report`'s job.

mod color;
mod progress;
pub mod text;

pub use color::{ColorChoice, Paint, Style};
pub use progress::Downloads;

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressFinish};

/// Output formats of `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Lines for people.
    Human,
    /// One JSON document on stdout.
    Json,
    /// GitHub workflow annotations, plus a Markdown summary.
    Github,
}

impl Format {
    /// The format as `--format` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Human => "human",
            Format::Json => "json",
            Format::Github => "github",
        }
    }
}

/// How much stderr says: `-q`, the default, or `-v`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    /// `-q`: errors only. Data on stdout (a report, JSON) is still printed.
    Quiet,
    /// Status lines and warnings.
    Normal,
    /// `-v`: also each step (files read, patches applied, HTTP requests).
    Verbose,
}

impl Verbosity {
    /// The verbosity of `-q` and a `-v` count (clap keeps them exclusive).
    pub fn from_flags(quiet: bool, verbose: u8) -> Verbosity {
        match (quiet, verbose) {
            (true, _) => Verbosity::Quiet,
            (false, 0) => Verbosity::Normal,
            _ => Verbosity::Verbose,
        }
    }
}

/// What the run was asked for: the global flags and the colour variables.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// `--format`.
    pub format: Format,
    /// `-q` / `-v`.
    pub verbosity: Verbosity,
    /// False with `--no-progress`.
    pub progress: bool,
    /// `--color`.
    pub color: ColorChoice,
    /// `NO_COLOR` is set.
    pub no_color: bool,
    /// `CLICOLOR_FORCE` is set (and not `0`).
    pub force_color: bool,
}

/// The console of one run. Clones share the bars, so a hook that prints
/// (the HTTP client's, for `-v`) can hold one.
#[derive(Debug, Clone)]
pub struct Shell {
    format: Format,
    verbosity: Verbosity,
    progress: bool,
    err: Paint,
    out: Paint,
    bars: MultiProgress,
    /// Whether anything went to stdout yet: a failed run whose command
    /// printed its own report gets no second one (`cli`).
    wrote: Arc<AtomicBool>,
}

impl Shell {
    /// A shell for `settings`, looking at whether stderr and stdout are
    /// terminals.
    pub fn new(settings: Settings) -> Shell {
        let stderr_tty = std::io::stderr().is_terminal();
        let stdout_tty = std::io::stdout().is_terminal();
        let paint = |tty| {
            Paint::new(
                settings
                    .color
                    .enabled(settings.no_color, settings.force_color, tty),
            )
        };
        let progress = stderr_tty
            && settings.progress
            && settings.verbosity != Verbosity::Quiet
            && settings.format == Format::Human;
        let target = if progress {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        Shell {
            format: settings.format,
            verbosity: settings.verbosity,
            progress,
            err: paint(stderr_tty),
            out: paint(stdout_tty),
            bars: MultiProgress::with_draw_target(target),
            wrote: Arc::default(),
        }
    }

    /// The same console without progress bars, for work run on several
    /// threads at once (`check --all`), whose bars would garble the terminal.
    pub fn without_progress(&self) -> Shell {
        Shell {
            progress: false,
            bars: MultiProgress::with_draw_target(ProgressDrawTarget::hidden()),
            ..self.clone()
        }
    }

    /// The output format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// How much stderr says.
    pub fn verbosity(&self) -> Verbosity {
        self.verbosity
    }

    /// The painter for stdout (findings, summaries).
    pub fn paint_out(&self) -> Paint {
        self.out
    }

    /// The painter for stderr (the error report).
    pub fn paint_err(&self) -> Paint {
        self.err
    }

    /// A status line: `   Fetching deployments/x.yml at v4.3.0`. Not in
    /// JSON, not with `-q`.
    pub fn status(&self, verb: &str, message: impl std::fmt::Display) {
        if self.format != Format::Json && self.verbosity > Verbosity::Quiet {
            self.line(Style::Status, verb, message);
        }
    }

    /// A `-v` line naming one step: `     Reading upstream/lock.toml`.
    pub fn step(&self, verb: &str, message: impl std::fmt::Display) {
        if self.verbosity == Verbosity::Verbose {
            self.line(Style::Note, verb, message);
        }
    }

    /// A line shown only with `-v`, under the verb `note`.
    pub fn verbose(&self, message: impl std::fmt::Display) {
        self.step("note", message);
    }

    /// A warning line on stderr; not with `-q`.
    pub fn warn(&self, message: impl std::fmt::Display) {
        if self.verbosity > Verbosity::Quiet {
            let label = self.err.paint(Style::Warning, "warning");
            self.write_err(&format!("{label}: {message}\n"));
        }
    }

    /// Text for stderr that is always printed, `-q` or not: the error report
    /// `cli` renders (painted with [`Shell::paint_err`]).
    pub fn error(&self, text: &str) {
        self.write_err(text);
    }

    /// Data for stdout (the summary, a plan, JSON), whatever the verbosity;
    /// made safe for a terminal and a CI log ([`text::terminal`]). The
    /// write's error is returned, never dropped: a report that did not reach
    /// its reader must not end in success (`cli` makes it exit 3, or 0
    /// quietly for a pipe its reader closed).
    pub fn out(&self, text: &str) -> std::io::Result<()> {
        self.write_out(&text::terminal(text))
    }

    /// GitHub workflow commands revendor formed itself (`--format github`),
    /// for stdout: written as they are, but for control characters
    /// ([`text::escape`]); their data must already be escaped as GitHub
    /// specifies, so none holds a line break. Errors as for [`Shell::out`].
    pub fn commands(&self, text: &str) -> std::io::Result<()> {
        self.write_out(&text::escape(text))
    }

    /// Whether this run printed anything on stdout (through any clone of
    /// this shell), even a write that failed.
    pub fn wrote_out(&self) -> bool {
        self.wrote.load(Ordering::Relaxed)
    }

    fn write_out(&self, text: &str) -> std::io::Result<()> {
        self.wrote.store(true, Ordering::Relaxed);
        self.bars.suspend(|| {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            if !text.ends_with('\n') && !text.is_empty() {
                out.write_all(b"\n")?;
            }
            out.flush()
        })
    }

    /// Bars for the HTTP client's progress hook, or nothing off a terminal.
    pub fn downloads(&self) -> Option<Downloads> {
        self.progress.then(|| Downloads::new(self.bars.clone()))
    }

    /// A spinner for a step, or nothing off a terminal; dropping it clears it.
    pub fn spinner(&self, message: impl Into<String>) -> Option<ProgressBar> {
        if !self.progress {
            return None;
        }
        let bar = ProgressBar::new_spinner()
            .with_message(message.into())
            .with_finish(ProgressFinish::AndClear);
        let bar = self.bars.add(bar);
        bar.enable_steady_tick(std::time::Duration::from_millis(100));
        Some(bar)
    }

    fn line(&self, style: Style, verb: &str, message: impl std::fmt::Display) {
        let verb = self.err.paint(style, &format!("{verb:>12}"));
        self.write_err(&format!("{verb} {message}\n"));
    }

    fn write_err(&self, text: &str) {
        let text = text::terminal(text);
        self.bars.suspend(|| {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(text.as_bytes());
            let _ = err.flush();
        });
    }
}
