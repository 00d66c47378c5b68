//! Colour: whether a stream gets it, and the few styles revendor uses.
//!
//! `--color always|never` decides outright. Under `auto` (the default),
//! `NO_COLOR` turns colour off, then `CLICOLOR_FORCE` turns it on even into
//! a pipe, and otherwise a stream is coloured when it is a terminal. `NO_COLOR`
//! wins over `CLICOLOR_FORCE` because it is the user's "never" and the other is
//! usually a CI default; anstream (clap's output) decides in the same order.

/// The values of `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour on a terminal, unless `NO_COLOR`; `CLICOLOR_FORCE` forces it.
    #[default]
    Auto,
    /// Always colour, even into a file or a pipe.
    Always,
    /// Never colour.
    Never,
}

impl ColorChoice {
    /// Whether a stream gets colour: `no_color` is `NO_COLOR`, `force` is
    /// `CLICOLOR_FORCE`, `terminal` whether the stream is one.
    pub fn enabled(self, no_color: bool, force: bool, terminal: bool) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => !no_color && (force || terminal),
        }
    }
}

/// What a piece of text is, which decides its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `error:` and error findings: bold red.
    Error,
    /// `warning:` and warning findings: bold yellow.
    Warning,
    /// The verb of a status line: bold green.
    Status,
    /// The verb of a `-v` line and info findings: bold cyan.
    Note,
}

impl Style {
    /// Every style, for telling revendor's own colour codes from others'.
    pub const ALL: [Style; 4] = [Style::Error, Style::Warning, Style::Status, Style::Note];

    /// The escape sequence that starts this style.
    pub fn sequence(self) -> &'static str {
        match self {
            Style::Error => "\x1b[1;31m",
            Style::Warning => "\x1b[1;33m",
            Style::Status => "\x1b[1;32m",
            Style::Note => "\x1b[1;36m",
        }
    }
}

/// Paints text for one stream, or leaves it as it is when that stream has no
/// colour. Copy it into whatever formats output (`report`, `cli`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paint {
    on: bool,
}

impl Paint {
    /// A painter that colours when `on`.
    pub fn new(on: bool) -> Paint {
        Paint { on }
    }

    /// A painter that never colours (tests, files).
    pub fn plain() -> Paint {
        Paint { on: false }
    }

    /// `text` in `style`, or `text` itself.
    pub fn paint(self, style: Style, text: &str) -> String {
        if self.on {
            format!("{}{text}\x1b[0m", style.sequence())
        } else {
            text.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_follows_the_terminal_and_the_variables() {
        let auto = ColorChoice::Auto;
        assert!(auto.enabled(false, false, true));
        assert!(!auto.enabled(false, false, false));
        assert!(
            auto.enabled(false, true, false),
            "CLICOLOR_FORCE into a pipe"
        );
        assert!(!auto.enabled(true, false, true), "NO_COLOR on a terminal");
        assert!(!auto.enabled(true, true, true), "NO_COLOR wins");
    }

    #[test]
    fn the_flag_overrides_the_variables() {
        assert!(ColorChoice::Always.enabled(true, false, false));
        assert!(!ColorChoice::Never.enabled(false, true, true));
    }

    #[test]
    fn paint_wraps_only_when_on() {
        assert_eq!(
            Paint::new(true).paint(Style::Error, "error"),
            "\x1b[1;31merror\x1b[0m"
        );
        assert_eq!(Paint::plain().paint(Style::Error, "error"), "error");
    }
}
