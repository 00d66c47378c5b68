//! Text from elsewhere made safe for where revendor writes it (issue 21).
//!
//! File names, tag and release names, file contents and error bodies come
//! from upstream or a remote, and any of them may hold a control character:
//! an ANSI sequence that clears the screen or sets a window title, a line
//! break followed by `::warning ...`, which a GitHub Actions runner executes
//! as a workflow command when a line of stdout or stderr starts with it.
//!
//! 1. [`terminal`] is applied to everything [`super::Shell`] writes: every
//!    control character but a line break and a tab is escaped (`\u{1b}`), as
//!    are the Unicode direction overrides, except revendor's own colour
//!    codes; and a line that would start with `::` has its first colon
//!    escaped (`\u{3a}`), so no workflow command starts where revendor did
//!    not write one.
//! 2. [`super::Shell::commands`] writes the workflow commands revendor
//!    forms itself (`report::github`): their data is escaped as GitHub
//!    specifies, and its other control characters by [`escape`].
//!
//! The JSON format needs nothing more: serde_json escapes every control
//! character.

use super::color::Style;

/// `text` with every control character but `\n` and `\t`, and every
/// Unicode direction override, written as a Rust escape (`\u{1b}`).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if needs_escape(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` as a terminal or a CI log may show it: [`escape`]d, except the
/// colour codes revendor paints with, and no line starting with `::`.
pub fn terminal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some(code) = own_colour(rest) {
            out.push_str(code);
            rest = &rest[code.len()..];
            continue;
        }
        if needs_escape(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    defuse_commands(&out)
}

/// Whether `c` must not reach a terminal raw.
fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// The colour code `text` starts with, when it is one revendor paints with.
fn own_colour(text: &str) -> Option<&'static str> {
    const RESET: &str = "\x1b[0m";
    if !text.starts_with('\x1b') {
        return None;
    }
    if text.starts_with(RESET) {
        return Some(RESET);
    }
    Style::ALL
        .iter()
        .map(|s| s.sequence())
        .find(|seq| text.starts_with(seq))
}

/// `text` with the first colon of each line that starts (after blanks)
/// with `::` escaped.
fn defuse_commands(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let blanks = line.len() - line.trim_start().len();
        if line[blanks..].starts_with("::") {
            out.push_str(&line[..blanks]);
            out.push_str("\\u{3a}");
            out.push_str(&line[blanks + 1..]);
        } else {
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::console::Paint;

    #[test]
    fn controls_are_escaped_and_line_breaks_kept() {
        assert_eq!(
            escape("a\x1b[2Jb\r\n\tc\u{7}\u{202e}"),
            "a\\u{1b}[2Jb\\u{d}\n\tc\\u{7}\\u{202e}"
        );
    }

    #[test]
    fn a_terminal_keeps_revendors_colours_only() {
        let painted = Paint::new(true).paint(Style::Error, "error");
        let text = format!("{painted}: `x\x1b]0;title\x07`\n");
        assert_eq!(
            terminal(&text),
            format!("{painted}: `x\\u{{1b}}]0;title\\u{{7}}`\n")
        );
    }

    #[test]
    fn no_line_starts_a_workflow_command() {
        assert_eq!(
            terminal("error: `a\n::warning title=x::y`\n  ::error::z\nok :: fine\n"),
            "error: `a\n\\u{3a}:warning title=x::y`\n  \\u{3a}:error::z\nok :: fine\n"
        );
    }
}
