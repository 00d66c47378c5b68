//! The line diff under [`merge3`](super::merge3) and [`refresh`](super::refresh): imara-diff's
//! histogram algorithm on interned lines.
//!
//! 1. [`Lines`] interns every line of the texts it is given into one table, so a line is a
//!    `u32` token and the same line in two texts is the same token.
//! 2. [`Lines::changes`] cuts the texts at patience anchors (`anchor.rs`), then in each piece
//!    trims the common prefix and suffix, diffs the rest with the histogram heuristic (which
//!    falls back to Myers, with git's cut-offs, on runs of lines repeated 64 times or more), and
//!    slides each ambiguous change the way git's indent heuristic does.
//!
//! Why not diffy's Myers diff, as before: it has no trimming or cut-off, and on a 1M-line file
//! with 10,000 changes it took 6.7 s and grew 44 times for 10 times the input (issue 13).
//! Lines keep their terminators, so `a` and `a\n`, or `a\r\n` and `a\n`, are different lines.

use std::ops::Range;

use imara_diff::{Algorithm, Diff, IndentHeuristic, IndentLevel, Interner};

use super::anchor::{Cut, Cuts, cuts, shared_cuts};

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

    /// [`Lines::intern`] for a text that is mostly `like` (already interned) with a few
    /// changes: each line is first compared with the line that follows the last match in `like`,
    /// so only changed lines are hashed. On a 1M-line file the table's random probes, not the
    /// diff, were most of the time.
    pub(crate) fn intern_like(&mut self, text: &'a [u8], like: &[Token]) -> Vec<Token> {
        // Where each token of `like` is (its last occurrence), to follow on after a change.
        let mut at = vec![u32::MAX; self.interner.num_tokens() as usize];
        for (i, &token) in like.iter().enumerate() {
            at[u32::from(token) as usize] = i as u32;
        }
        let mut tokens = Vec::with_capacity(estimate(text));
        let mut next = 0;
        for line in split(text) {
            let token = match like.get(next) {
                Some(&guess) if self.text(guess) == line => {
                    next += 1;
                    guess
                }
                _ => {
                    let token = self.interner.intern(line);
                    if let Some(&i) = at.get(u32::from(token) as usize)
                        && i != u32::MAX
                    {
                        next = i as usize + 1;
                    }
                    token
                }
            };
            tokens.push(token);
        }
        tokens
    }

    /// The bytes of the line behind `token`, terminator included.
    pub(crate) fn text(&self, token: Token) -> &'a [u8] {
        self.interner[token]
    }

    /// The changes that turn `old` into `new`, in order.
    ///
    /// The texts are cut at patience anchors ([`cuts`]) and each piece is diffed on its own,
    /// with its tokens renumbered densely so the histogram's tables fit the piece.
    pub(crate) fn changes(&self, old: &[Token], new: &[Token]) -> Vec<Change> {
        self.changes_cut(old, new, cuts(old, new, self.interner.num_tokens()))
    }

    /// The cuts for the two diffs of a 3-way merge ([`shared_cuts`]), for
    /// [`Lines::changes_cut`].
    pub(crate) fn shared_cuts(&self, base: &[Token], ours: &[Token], theirs: &[Token]) -> Cuts {
        shared_cuts(base, ours, theirs, self.interner.num_tokens())
    }

    /// [`Lines::changes`] with the texts cut at `cuts`: aligned positions, increasing in both.
    pub(crate) fn changes_cut(&self, old: &[Token], new: &[Token], cuts: Vec<Cut>) -> Vec<Change> {
        let mut changes = Vec::new();
        let mut piece = Piece::new(self.interner.num_tokens());
        let mut from = (0, 0);
        for to in cuts.into_iter().chain([(old.len(), new.len())]) {
            let (o, n) = (&old[from.0..to.0], &new[from.1..to.1]);
            if o != n {
                for change in piece.changes(self, o, n) {
                    let change = Change {
                        old: change.old.start + from.0..change.old.end + from.0,
                        new: change.new.start + from.1..change.new.end + from.1,
                    };
                    push(&mut changes, change);
                }
            }
            from = to;
        }
        changes
    }
}

/// Appends `change`, joining it to the last one when no common line is left between them.
fn push(changes: &mut Vec<Change>, change: Change) {
    match changes.last_mut() {
        Some(last) if last.old.end == change.old.start && last.new.end == change.new.start => {
            last.old.end = change.old.end;
            last.new.end = change.new.end;
        }
        _ => changes.push(change),
    }
}

/// One piece of a diff, its tokens renumbered `0..n` (reusing the tables across pieces).
struct Piece {
    /// Per global token, its number in the current piece plus one (0: not numbered yet).
    local: Vec<u32>,
    /// Per local number, the global token.
    global: Vec<Token>,
}

impl Piece {
    fn new(tokens: u32) -> Piece {
        Piece {
            local: vec![0; tokens as usize],
            global: Vec::new(),
        }
    }

    /// The histogram diff of `old` and `new`, sliders placed by git's indent heuristic.
    fn changes(&mut self, lines: &Lines<'_>, old: &[Token], new: &[Token]) -> Vec<Change> {
        let old_local = self.renumber(old);
        let new_local = self.renumber(new);
        let mut diff = Diff::default();
        diff.compute_with(
            Algorithm::Histogram,
            &old_local,
            &new_local,
            self.global.len() as u32,
        );
        let global = &self.global;
        let indent = |token: Token| {
            let text = lines.text(global[u32::from(token) as usize]);
            IndentLevel::for_ascii_line(text.iter().copied(), 8)
        };
        diff.postprocess_with(&old_local, &new_local, IndentHeuristic::new(indent));
        let changes = diff
            .hunks()
            .map(|hunk| Change {
                old: hunk.before.start as usize..hunk.before.end as usize,
                new: hunk.after.start as usize..hunk.after.end as usize,
            })
            .collect();
        for token in self.global.drain(..) {
            self.local[u32::from(token) as usize] = 0;
        }
        changes
    }

    fn renumber(&mut self, tokens: &[Token]) -> Vec<Token> {
        tokens
            .iter()
            .map(|&token| {
                let slot = &mut self.local[u32::from(token) as usize];
                if *slot == 0 {
                    self.global.push(token);
                    *slot = self.global.len() as u32;
                }
                Token::from(*slot - 1)
            })
            .collect()
    }
}

/// `text`'s lines, each with its terminator; the last may lack one. Found with
/// `memchr` (a vector search): `split_inclusive` tests a byte at a time, which was a
/// tenth of a 100,000-line render.
pub(crate) fn split(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut start = 0;
    let mut ends = memchr::memchr_iter(b'\n', text);
    std::iter::from_fn(move || {
        let end = match ends.next() {
            Some(at) => at + 1,
            None if start < text.len() => text.len(),
            None => return None,
        };
        let line = &text[start..end];
        start = end;
        Some(line)
    })
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
    fn intern_like_gives_the_tokens_intern_gives() {
        let mut lines = Lines::with_capacity(8);
        let like = lines.intern(b"a\nb\nc\nd\nb\n");
        let text: &[u8] = b"x\na\nc\nb\nd\ny\nb";
        let fast = lines.intern_like(text, &like);
        assert_eq!(fast, lines.intern(text));
        assert_eq!(fast[1], like[0]);
        assert_eq!(fast[3], like[1]);
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
