//! Where output goes: status on stderr, data on stdout.
//!
//! [`Shell`] is the one handle commands print through, so `--format`,
//! `--no-progress`, `-v` and `NO_COLOR` are honoured in one place. Progress
//! bars appear only when stderr is a terminal.
//!
//! The console sits below everything that prints (`check`, `ops`, `cli`) and
//! knows nothing of what they print; how findings look is `report`'s job.

use std::io::{IsTerminal, Write};

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

/// The console of one run.
#[derive(Debug)]
pub struct Shell {
    format: Format,
    verbose: u8,
    progress: bool,
    color: bool,
}

impl Shell {
    /// A shell for the given flags.
    pub fn new(format: Format, verbose: u8, no_progress: bool, no_color: bool) -> Shell {
        let tty = std::io::stderr().is_terminal();
        Shell {
            format,
            verbose,
            progress: tty && !no_progress && format == Format::Human,
            color: tty && !no_color,
        }
    }

    /// The output format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The `-v` count.
    pub fn verbosity(&self) -> u8 {
        self.verbose
    }

    /// A status line: `   Fetching deployments/x.yml at v4.3.0`.
    pub fn status(&self, verb: &str, message: impl std::fmt::Display) {
        if self.format == Format::Json {
            return;
        }
        let verb = if self.color {
            format!("\x1b[1;32m{verb:>12}\x1b[0m")
        } else {
            format!("{verb:>12}")
        };
        let _ = writeln!(std::io::stderr(), "{verb} {message}");
    }

    /// A warning line on stderr.
    pub fn warn(&self, message: impl std::fmt::Display) {
        let label = if self.color {
            "\x1b[1;33mwarning\x1b[0m"
        } else {
            "warning"
        };
        let _ = writeln!(std::io::stderr(), "{label}: {message}");
    }

    /// A line shown only with `-v`.
    pub fn verbose(&self, message: impl std::fmt::Display) {
        if self.verbose > 0 {
            let _ = writeln!(std::io::stderr(), "{:>12} {message}", "note");
        }
    }

    /// Data for stdout (the summary, a plan, JSON).
    pub fn out(&self, text: &str) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        if !text.ends_with('\n') && !text.is_empty() {
            let _ = out.write_all(b"\n");
        }
        let _ = out.flush();
    }

    /// A download bar that follows the HTTP client's progress hook, or
    /// nothing off a terminal. One bar is reused for every download.
    pub fn download_bar(&self) -> Option<indicatif::ProgressBar> {
        if !self.progress {
            return None;
        }
        let bar = indicatif::ProgressBar::new(0);
        let style =
            indicatif::ProgressStyle::with_template("{spinner} {msg} {bytes}/{total_bytes}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
        bar.set_style(style);
        Some(bar)
    }

    /// A spinner for a step, or nothing off a terminal.
    pub fn spinner(&self, message: impl Into<String>) -> Option<indicatif::ProgressBar> {
        if !self.progress {
            return None;
        }
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_message(message.into());
        bar.enable_steady_tick(std::time::Duration::from_millis(100));
        Some(bar)
    }
}
