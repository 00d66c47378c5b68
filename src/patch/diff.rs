//! The line diff under [`merge3`](super::merge3) and [`refresh`](super::refresh): imara-diff's
//! histogram algorithm on interned lines.
//!
//! 1. [`Lines`] interns every line of the texts it is given into one table, so a line is a
//!    `u32` token and the same line in two texts is the same token.
//! 2. [`Lines::changes`] trims the common prefix and suffix, diffs the rest with the histogram
//!    heuristic (which falls back to Myers, with git's cut-offs, on runs of lines repeated 64
//!    times or more), and slides each ambiguous change the way git's indent heuristic does.
//!
//! Why not diffy's Myers diff, as before: it has no trimming or cut-off, and on a 1M-line file
//! with 10,000 changes it took 6.7 s and grew 44 times for 10 times the input (issue 13).
//! Lines keep their terminators, so `a` and `a\n`, or `a\r\n` and `a\n`, are different lines.

use std::ops::Range;

use imara_diff::{Algorithm, Diff, IndentHeuristic, IndentLevel, Interner};

/// One interned line: equal tokens are equal lines.
pub(crate) use imara_diff::Token;

/// One region where two texts differ: `old` lines replaced by `new` lines (0-based, half
/// open). Consecutive changes always have at least one common line between them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Change {
    /// The lines of the old text.
    pub old: Range<usize>,
    /// The lines of the new text.
    pub new: Range<usize>,
}

/// Texts split into lines and interned in one table.
pub(crate) struct Lines<'a> {
    interner: Interner<&'a [u8]>,
}

impl<'a> Lines<'a> {
    /// A table sized for about `lines` distinct lines.
    pub(crate) fn with_capacity(lines: usize) -> Lines<'a> {
        Lines {
            interner: Interner::new(lines),
        }
    }

    /// The tokens of `text`'s lines, in order.
    pub(crate) fn intern(&mut self, text: &'a [u8]) -> Vec<Token> {
        let mut tokens = Vec::with_capacity(estimate(text));
        tokens.extend(split(text).map(|line| self.interner.intern(line)));
        tokens
    }

    /// The bytes of the line behind `token`, terminator included.
    pub(crate) fn text(&self, token: Token) -> &'a [u8] {
        self.interner[token]
    }

    /// The changes that turn `old` into `new`, in order.
    pub(crate) fn changes(&self, old: &[Token], new: &[Token]) -> Vec<Change> {
        let mut diff = Diff::default();
        diff.compute_with(Algorithm::Histogram, old, new, self.interner.num_tokens());
        let indent =
            |token: Token| IndentLevel::for_ascii_line(self.text(token).iter().copied(), 8);
        diff.postprocess_with(old, new, IndentHeuristic::new(indent));
        diff.hunks()
            .map(|hunk| Change {
                old: hunk.before.start as usize..hunk.before.end as usize,
                new: hunk.after.start as usize..hunk.after.end as usize,
            })
            .collect()
    }
}

/// `text`'s lines, each with its terminator; the last may lack one.
pub(crate) fn split(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split_inclusive(|&b| b == b'\n')
}

/// About how many lines `text` has, from the length of its first few.
pub(crate) fn estimate(text: &[u8]) -> usize {
    let sample: usize = split(text).take(20).map(<[u8]>::len).sum();
    let sampled = split(text).take(20).count();
    (text.len() * sampled)
        .checked_div(sample)
        .map_or(0, |lines| lines + 1)
}

/// Hands out a text's lines in order, as runs of whole lines, without indexing them.
pub(crate) struct Cursor<'a> {
    rest: &'a [u8],
}

impl<'a> Cursor<'a> {
    /// A cursor at the first line of `text`.
    pub(crate) fn new(text: &'a [u8]) -> Cursor<'a> {
        Cursor { rest: text }
    }

    /// The next `n` lines as one slice (fewer if the text ends first).
    pub(crate) fn take(&mut self, n: usize) -> &'a [u8] {
        let end = match n {
            0 => 0,
            n => memchr::memchr_iter(b'\n', self.rest)
                .nth(n - 1)
                .map_or(self.rest.len(), |at| at + 1),
        };
        let (taken, rest) = self.rest.split_at(end);
        self.rest = rest;
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changes(old: &str, new: &str) -> Vec<(Range<usize>, Range<usize>)> {
        let mut lines = Lines::with_capacity(8);
        let old = lines.intern(old.as_bytes());
        let new = lines.intern(new.as_bytes());
        lines
            .changes(&old, &new)
            .into_iter()
            .map(|c| (c.old, c.new))
            .collect()
    }

    #[test]
    fn changes_are_ranges_of_whole_lines_with_their_ends() {
        assert_eq!(changes("a\nb\nc\n", "a\nB\nc\n"), [(1..2, 1..2)]);
        assert_eq!(changes("a\nb", "a\nb\n"), [(1..2, 1..2)]);
        assert_eq!(changes("a\r\n", "a\n"), [(0..1, 0..1)]);
        assert_eq!(changes("", "x\n"), [(0..0, 0..1)]);
        assert_eq!(changes("a\nb\n", "a\nb\n"), []);
    }

    #[test]
    fn an_ambiguous_insertion_slides_to_git_s_place() {
        // git puts the inserted function after the closing brace, not inside the one above.
        let old = "f() {\n  x\n}\n";
        let new = "f() {\n  x\n}\n\ng() {\n  x\n}\n";
        assert_eq!(changes(old, new), [(3..3, 3..7)]);
    }

    #[test]
    fn a_cursor_takes_runs_of_lines() {
        let mut cursor = Cursor::new(b"a\nb\nc");
        assert_eq!(cursor.take(0), b"");
        assert_eq!(cursor.take(2), b"a\nb\n");
        assert_eq!(cursor.take(5), b"c");
        assert_eq!(cursor.take(1), b"");
    }

    #[test]
    fn estimate_is_near_the_line_count() {
        assert_eq!(estimate(b""), 0);
        let text = "line\n".repeat(1000);
        assert_eq!(estimate(text.as_bytes()), 1001);
    }
}
