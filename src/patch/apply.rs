//! Strict application of one [`FilePatch`] to a file's bytes: zero fuzz, offsets allowed.
//!
//! 1. Each hunk is first tried where its header says, moved by the offset the previous hunk
//!    landed at (as GNU patch does), then searched outward, nearest first and later before
//!    earlier at equal distance, for a place where every context and removed line matches
//!    byte for byte.
//! 2. A hunk may not start before the end of the previous one.
//! 3. As in GNU patch, a hunk with less context above than below can only match at the start of
//!    the file, and one with less below than above only at the end: diff writes short context
//!    only at the file's edges, so matching such a hunk in the middle would be a guess.
//!
//! Fuzz is never applied: a line that changed upstream is a conflict for the 3-way merge to
//! show, not something to paper over.

use std::cell::{Cell, OnceCell};

use thiserror::Error;

use super::index::LineIndex;
use super::model::{FilePatch, Hunk, LineKind};

/// The patched bytes and where each hunk landed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    /// The file after the patch.
    pub content: Vec<u8>,
    /// Per hunk, in order: the line it landed at minus the line its header names (GNU patch's
    /// "offset N lines"). All zero for an exact apply.
    pub offsets: Vec<isize>,
}

/// Why a file patch does not apply strictly.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum ApplyError {
    /// No position matches. `line` is the 1-based line of the file, at the position the hunk was
    /// first tried (its header plus the previous hunk's offset), where the first context or
    /// removed line differs; `expected` is that line of the patch, `found` the file's (`None` past
    /// the end). Line texts are shown without their `\n`.
    #[error(
        "hunk #{hunk} `{header}` does not apply: line {line} is {}, expected {expected:?}",
        found_text(.found, *.line)
    )]
    Mismatch {
        /// 1-based hunk number.
        hunk: usize,
        /// The hunk's `@@` line.
        header: String,
        /// 1-based line of the file.
        line: usize,
        /// The patch's line there.
        expected: String,
        /// The file's line there; `None` past the end.
        found: Option<String>,
    },
    /// The line is there but for its line ending: one side has CRLF, the other LF (a patch
    /// saved on another system, or an upstream file that changed its endings).
    #[error(
        "hunk #{hunk} `{header}` does not apply: line {line} differs only in its line ending: the patch has {}, the file {}",
        if *patch_crlf { "CRLF" } else { "LF" },
        if *patch_crlf { "LF" } else { "CRLF" }
    )]
    LineEnding {
        /// 1-based hunk number.
        hunk: usize,
        /// The hunk's `@@` line.
        header: String,
        /// 1-based line of the file.
        line: usize,
        /// Whether the patch's line ends with CRLF (and the file's with LF).
        patch_crlf: bool,
    },
    /// The file's last line is there but for its newline: one side says
    /// `\ No newline at end of file` and the other does not.
    #[error(
        "hunk #{hunk} `{header}` does not apply: line {line} differs only in the newline at the end of the file: {}",
        if *patch_newline {
            "the patch's line has one, the file ends without it"
        } else {
            "the patch says `\\ No newline at end of file`, the file ends with one"
        }
    )]
    EndOfFile {
        /// 1-based hunk number.
        hunk: usize,
        /// The hunk's `@@` line.
        header: String,
        /// 1-based line of the file: its last.
        line: usize,
        /// Whether the patch's line ends with a newline (and the file's does not).
        patch_newline: bool,
    },
    /// The hunk matches only where it would overlap the hunk before it.
    #[error("hunk #{hunk} `{header}` matches only at line {line}, inside the hunk before it")]
    Overlap {
        /// 1-based hunk number.
        hunk: usize,
        /// The hunk's `@@` line.
        header: String,
        /// 1-based line of the file where it matches.
        line: usize,
    },
    /// A hunk with nothing to match (a pure insertion without context) points outside the file.
    #[error("hunk #{hunk} `{header}` inserts after line {line}, outside the file's {lines} lines")]
    OutOfRange {
        /// 1-based hunk number.
        hunk: usize,
        /// The hunk's `@@` line.
        header: String,
        /// The line it inserts after.
        line: isize,
        /// The file's line count.
        lines: usize,
    },
    /// The patch creates the file, but it already has content.
    #[error("`{file}` should be created but already has content")]
    NotNew {
        /// The file patch's name.
        file: String,
    },
    /// The patch deletes the file, but content is left after its hunks.
    #[error("`{file}` should be deleted but is not empty after the patch")]
    NotEmpty {
        /// The file patch's name.
        file: String,
    },
    /// A git binary patch, which revendor does not apply.
    #[error("`{file}` has a binary patch; only text patches apply")]
    Binary {
        /// The file patch's name.
        file: String,
    },
}

fn found_text(found: &Option<String>, line: usize) -> String {
    match found {
        Some(text) => format!("{text:?}"),
        // Line 1 is past the end only of an empty file: say so, not "does not apply".
        None if line == 1 => "past the end of the file (the file is empty)".to_string(),
        None => "past the end of the file".to_string(),
    }
}

/// Applies `patch` to `base` strictly. A new-file patch needs an empty `base`; a deletion must
/// leave nothing.
pub fn apply(patch: &FilePatch, base: &[u8]) -> Result<Applied, ApplyError> {
    run(patch, base, false)
}

/// Undoes `patch` on `content` strictly: the check for a change that upstream already made.
pub fn apply_reverse(patch: &FilePatch, content: &[u8]) -> Result<Applied, ApplyError> {
    run(patch, content, true)
}

/// The hunks of `patch` (0-based) that `text` already has: each alone does not apply to it
/// strictly but is undone strictly, as [`apply`] and [`apply_reverse`] would say of a patch of
/// that one hunk. What an update reports of a patch it merged. `text` is split and indexed
/// once for all the hunks.
pub fn hunks_already_applied(patch: &FilePatch, text: &[u8]) -> Vec<usize> {
    let text = Text::new(text);
    (0..patch.hunks.len())
        .filter(|&i| {
            let alone = std::slice::from_ref(&patch.hunks[i]);
            // Undone first: a hunk upstream does not have (the common case) is then one
            // search, not two.
            place(patch, alone, &text, true).is_ok() && place(patch, alone, &text, false).is_err()
        })
        .collect()
}

/// Where each hunk of `patch` lands in `text` applied alone, as [`apply`] of a patch of that
/// one hunk would say: its offset, or `None` where it does not apply. What an update reports
/// of a patch that conflicts; `text` is split and indexed once for all the hunks.
pub fn hunks_alone(patch: &FilePatch, text: &[u8]) -> Vec<Option<isize>> {
    let text = Text::new(text);
    patch
        .hunks
        .iter()
        .map(|hunk| {
            let alone = std::slice::from_ref(hunk);
            place(patch, alone, &text, false)
                .ok()
                .map(|offsets| offsets[0])
        })
        .collect()
}

fn run(patch: &FilePatch, base: &[u8], reverse: bool) -> Result<Applied, ApplyError> {
    let text = Text::new(base);
    let offsets = place(patch, &patch.hunks, &text, reverse)?;
    Ok(text.rewrite(&patch.hunks, offsets, reverse))
}

/// A file's bytes split into lines once, and indexed ([`LineIndex`]) the second time a hunk
/// is searched for beyond [`NEAR`] lines of where it should be.
struct Text<'a> {
    bytes: &'a [u8],
    lines: Vec<&'a [u8]>,
    index: OnceCell<LineIndex>,
    /// Whether a search went past [`NEAR`] lines already (the next one indexes the file).
    searched_far: Cell<bool>,
}

/// The sides of a hunk as the apply sees them: the lines it looks for, the lines it puts
/// there, and the line its header names for them.
fn sides(hunk: &Hunk, reverse: bool) -> (Vec<&[u8]>, Vec<&[u8]>, usize) {
    if reverse {
        (
            hunk.new_lines().collect(),
            hunk.old_lines().collect(),
            hunk.new_start,
        )
    } else {
        (
            hunk.old_lines().collect(),
            hunk.new_lines().collect(),
            hunk.old_start,
        )
    }
}

/// The 0-based line a hunk's header names for `from`, its lines found at `start`: a header
/// names the first line of a side, or the line after which an empty side sits.
fn stated(from: &[&[u8]], start: usize) -> usize {
    if from.is_empty() {
        start
    } else {
        start.saturating_sub(1)
    }
}

/// The bytes `hunks` add to a file and the bytes they take out of it.
fn growth(hunks: &[Hunk], reverse: bool) -> (usize, usize) {
    let side = |h: &Hunk, new: bool| -> usize {
        let own = if new { LineKind::Add } else { LineKind::Remove };
        h.lines
            .iter()
            .filter(|l| l.kind == own)
            .map(|l| l.text.len())
            .sum()
    };
    hunks.iter().fold((0, 0), |(g, s), h| {
        (g + side(h, !reverse), s + side(h, reverse))
    })
}

/// Where each of `hunks` (all of `patch`'s, or some) lands in `text`: the offset of each from
/// the line its header names, or why the patch does not apply.
fn place(
    patch: &FilePatch,
    hunks: &[Hunk],
    text: &Text<'_>,
    reverse: bool,
) -> Result<Vec<isize>, ApplyError> {
    if patch.is_binary() {
        return Err(ApplyError::Binary { file: patch.name() });
    }
    let (creates, deletes) = if reverse {
        (patch.is_delete(), patch.is_new())
    } else {
        (patch.is_new(), patch.is_delete())
    };
    if creates && !text.bytes.is_empty() {
        return Err(ApplyError::NotNew { file: patch.name() });
    }
    let mut cursor = 0;
    let mut offset = 0;
    let mut offsets = Vec::with_capacity(hunks.len());
    for (index, hunk) in hunks.iter().enumerate() {
        let (from, _, start) = sides(hunk, reverse);
        let stated = stated(&from, start) as isize;
        let search = Search {
            text,
            pattern: &from,
            cursor,
            anchor: anchor(hunk, start),
        };
        let at = search
            .locate(stated + offset)
            .map_err(|fail| fail.into_error(index + 1, hunk))?;
        cursor = at + from.len();
        offset = at as isize - stated;
        offsets.push(offset);
    }
    // The hunks' lines matched byte for byte, so the result's size is known before it is made.
    let (grown, shrunk) = growth(hunks, reverse);
    if deletes && text.bytes.len() + grown > shrunk {
        return Err(ApplyError::NotEmpty { file: patch.name() });
    }
    Ok(offsets)
}

impl<'a> Text<'a> {
    fn new(bytes: &'a [u8]) -> Text<'a> {
        let mut lines: Vec<&[u8]> = Vec::with_capacity(super::diff::estimate(bytes));
        lines.extend(super::diff::split(bytes));
        Text {
            bytes,
            lines,
            index: OnceCell::new(),
            searched_far: Cell::new(false),
        }
    }

    /// Where line `i` starts in the bytes (their end past the last line), so unchanged runs
    /// copy in one piece.
    fn at_line(&self, i: usize) -> usize {
        self.lines.get(i).map_or(self.bytes.len(), |l| {
            l.as_ptr() as usize - self.bytes.as_ptr() as usize
        })
    }

    /// The text with `hunks` put where [`place`] found them.
    fn rewrite(&self, hunks: &[Hunk], offsets: Vec<isize>, reverse: bool) -> Applied {
        let (grown, shrunk) = growth(hunks, reverse);
        let mut content = Vec::with_capacity((self.bytes.len() + grown).saturating_sub(shrunk));
        let mut cursor = 0;
        for (hunk, offset) in hunks.iter().zip(&offsets) {
            let (from, to, start) = sides(hunk, reverse);
            let at = stated(&from, start).saturating_add_signed(*offset);
            content.extend_from_slice(&self.bytes[self.at_line(cursor)..self.at_line(at)]);
            for line in &to {
                content.extend_from_slice(line);
            }
            cursor = at + from.len();
        }
        content.extend_from_slice(&self.bytes[self.at_line(cursor)..]);
        Applied { content, offsets }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Anchor {
    Free,
    Start,
    End,
}

fn anchor(hunk: &Hunk, start: usize) -> Anchor {
    let is_context = |l: &&super::model::Line| l.kind == LineKind::Context;
    let above = hunk.lines.iter().take_while(is_context).count();
    let below = hunk.lines.iter().rev().take_while(is_context).count();
    if above < below && start <= 1 {
        Anchor::Start
    } else if below < above {
        Anchor::End
    } else {
        Anchor::Free
    }
}

struct Search<'a> {
    text: &'a Text<'a>,
    pattern: &'a [&'a [u8]],
    cursor: usize,
    anchor: Anchor,
}

/// How far from its expected place a hunk is looked for line by line; past that, only where
/// its rarest line is ([`LineIndex`]).
const NEAR: isize = 64;

/// Lines the first far walk may compare, per line of the file, before the index takes
/// over. A walk costs about one comparison a place; but where a long run of lines each
/// begin the hunk (an upstream file of `}` under a hunk of `}` context lines) every place
/// would cost the hunk's length, and the walk would be quadratic.
const WALK_BUDGET_PER_LINE: usize = 4;

/// How a walk out from a hunk's expected place ended.
enum Walked {
    /// The pattern is at this line.
    Found(usize),
    /// Every place in the file was tried.
    Everywhere,
    /// Places farther out are left.
    NotYet,
}

enum Fail {
    Mismatch {
        line: usize,
        expected: Vec<u8>,
        found: Option<Vec<u8>>,
    },
    Overlap {
        line: usize,
    },
    OutOfRange {
        line: isize,
        lines: usize,
    },
}

impl Search<'_> {
    /// The 0-based line where the pattern goes, trying `guess` first.
    fn locate(&self, guess: isize) -> Result<usize, Fail> {
        let lines = &self.text.lines;
        let (n, m) = (lines.len() as isize, self.pattern.len() as isize);
        let lowest = self.cursor as isize;
        if m == 0 {
            return match usize::try_from(guess) {
                Ok(at) if guess >= lowest && guess <= n => Ok(at),
                _ => Err(Fail::OutOfRange {
                    line: guess,
                    lines: lines.len(),
                }),
            };
        }
        let first = match self.anchor {
            Anchor::Free => guess,
            Anchor::Start => 0,
            Anchor::End => n - m,
        };
        if self.anchor != Anchor::Free {
            return self.try_at(first).ok_or_else(|| self.fail_at(first));
        }
        let highest = n - m;
        // Start from the nearest place the pattern could be: a header may state any line
        // (fuzzing found `+2555555555555555537`), and walking out from there one line at a
        // time would never end. Outside the file only one direction holds candidates, so
        // the order of the places tried is the same.
        let from = guess.min(highest).max(lowest);
        // Near places are always all tried: their walk has no budget.
        let mut unbounded = usize::MAX;
        match self.outward(from, (lowest, highest), 0..=NEAR, &mut unbounded) {
            Walked::Found(at) => return Ok(at),
            Walked::Everywhere => return Err(self.fail_at(guess)),
            Walked::NotYet => {}
        }
        // The first search past NEAR lines walks on through the file, as cheap as indexing
        // it while it compares about a line a place: a strict apply that fails at a hunk
        // (the try before a 3-way merge) stops there, and never needed the index (issue
        // 23). Past its budget the index takes over, trying the same places in order.
        if self.text.index.get().is_none() && !self.text.searched_far.replace(true) {
            let mut budget = lines.len().saturating_mul(WALK_BUDGET_PER_LINE);
            match self.outward(from, (lowest, highest), NEAR + 1..=isize::MAX, &mut budget) {
                Walked::Found(at) => return Ok(at),
                Walked::Everywhere => return Err(self.fail_at(guess)),
                Walked::NotYet => {}
            }
        }
        // Farther out, the same places in the same order, less those without the hunk's
        // rarest line: linear in the file for the whole patch, not per hunk (issue 23).
        let index = self
            .text
            .index
            .get_or_init(|| LineIndex::new(&self.text.lines));
        index
            .candidates(self.pattern, from, (lowest, highest), NEAR)
            .into_iter()
            .find_map(|at| self.try_at(at))
            .ok_or_else(|| self.fail_at(guess))
    }

    /// Walks out from `from`, at each of `distances` the later place first, within
    /// `lowest..=highest`, until it has compared `budget` lines (then `NotYet`).
    fn outward(
        &self,
        from: isize,
        (lowest, highest): (isize, isize),
        distances: std::ops::RangeInclusive<isize>,
        budget: &mut usize,
    ) -> Walked {
        for distance in distances {
            let (later, earlier) = (from + distance, from - distance);
            if later > highest && earlier < lowest {
                return Walked::Everywhere;
            }
            if *budget == 0 {
                return Walked::NotYet;
            }
            if let Some(at) = self.try_counted(later, budget) {
                return Walked::Found(at);
            }
            if distance > 0
                && let Some(at) = self.try_counted(earlier, budget)
            {
                return Walked::Found(at);
            }
        }
        Walked::NotYet
    }

    /// [`Search::try_at`], taking the lines it compared from `budget`.
    fn try_counted(&self, at: isize, budget: &mut usize) -> Option<usize> {
        let at = usize::try_from(at).ok().filter(|&at| at >= self.cursor)?;
        let window = self.text.lines.get(at..at + self.pattern.len())?;
        let same = window
            .iter()
            .zip(self.pattern)
            .take_while(|(found, wanted)| found == wanted)
            .count();
        *budget = budget.saturating_sub(same + 1);
        (same == self.pattern.len()).then_some(at)
    }

    fn try_at(&self, at: isize) -> Option<usize> {
        let at = usize::try_from(at).ok().filter(|&at| at >= self.cursor)?;
        let window = self.text.lines.get(at..at + self.pattern.len())?;
        (window == self.pattern).then_some(at)
    }

    /// What is wrong at `at`, clamped into the file.
    fn fail_at(&self, at: isize) -> Fail {
        let lines = &self.text.lines;
        let at = at.clamp(0, lines.len() as isize) as usize;
        for (k, expected) in self.pattern.iter().enumerate() {
            let found = lines.get(at + k);
            if found != Some(expected) {
                return Fail::Mismatch {
                    line: at + k + 1,
                    expected: expected.to_vec(),
                    found: found.map(|f| f.to_vec()),
                };
            }
        }
        Fail::Overlap { line: at + 1 }
    }
}

impl Fail {
    fn into_error(self, hunk_number: usize, hunk: &Hunk) -> ApplyError {
        let header = hunk.header();
        match self {
            Fail::Mismatch {
                line,
                expected,
                found: Some(found),
            } if ending(&expected) != ending(&found) && body(&expected) == body(&found) => {
                match (ending(&expected), ending(&found)) {
                    (Ending::None, _) | (_, Ending::None) => ApplyError::EndOfFile {
                        hunk: hunk_number,
                        header,
                        line,
                        patch_newline: ending(&expected) != Ending::None,
                    },
                    (patch, _) => ApplyError::LineEnding {
                        hunk: hunk_number,
                        header,
                        line,
                        patch_crlf: patch == Ending::Crlf,
                    },
                }
            }
            Fail::Mismatch {
                line,
                expected,
                found,
            } => ApplyError::Mismatch {
                hunk: hunk_number,
                header,
                line,
                expected: show(&expected),
                found: found.as_deref().map(show),
            },
            Fail::Overlap { line } => ApplyError::Overlap {
                hunk: hunk_number,
                header,
                line,
            },
            Fail::OutOfRange { line, lines } => ApplyError::OutOfRange {
                hunk: hunk_number,
                header,
                line,
                lines,
            },
        }
    }
}

/// How a line ends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// The last line of a file without a newline.
    None,
    Lf,
    Crlf,
}

fn ending(line: &[u8]) -> Ending {
    if line.ends_with(b"\r\n") {
        Ending::Crlf
    } else if line.ends_with(b"\n") {
        Ending::Lf
    } else {
        Ending::None
    }
}

/// The line without its ending.
fn body(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn show(line: &[u8]) -> String {
    String::from_utf8_lossy(line.strip_suffix(b"\n").unwrap_or(line)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::super::parse::parse;
    use super::*;

    fn file(patch: &str) -> FilePatch {
        parse(patch.as_bytes()).unwrap().files.remove(0)
    }

    const BASE: &str = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";

    /// Fuzzing (issue 13, fuzz/corpus/patch_apply/timeout-huge-start): a header stating line
    /// 2555555555555555537 made the offset search walk back to the file one line at a time.
    /// It starts at the file's end now, and finds the hunk wherever it is.
    #[test]
    fn a_start_far_past_the_end_is_searched_from_the_end() {
        let p = file("--- a/x\n+++ b/x\n@@ -4 +2555555555555555537 @@\n-4\n+four\n");
        let undone = apply_reverse(&p, b"1\nfour\n5\n").unwrap();
        assert_eq!(undone.content, b"1\n4\n5\n");
        assert_eq!(undone.offsets, [1 - 2555555555555555536]);
        let p = file("--- a/x\n+++ b/x\n@@ -2555555555555555537 +4 @@\n-4\n+four\n");
        assert_eq!(
            apply(&p, BASE.as_bytes()).unwrap().offsets,
            [3 - 2555555555555555536]
        );
        assert!(apply(&p, b"nothing\nhere\n").is_err());
    }

    #[test]
    fn exact_and_offset_hunks() {
        let p = file(
            "--- a/x\n+++ b/x\n@@ -3,3 +3,3 @@\n 3\n-4\n+four\n 5\n@@ -8,3 +8,3 @@\n 8\n-9\n+nine\n 10\n",
        );
        let exact = apply(&p, BASE.as_bytes()).unwrap();
        assert_eq!(exact.offsets, [0, 0]);
        assert_eq!(exact.content, b"1\n2\n3\nfour\n5\n6\n7\n8\nnine\n10\n");
        let shifted = format!("0a\n0b\n{BASE}");
        let moved = apply(&p, shifted.as_bytes()).unwrap();
        assert_eq!(moved.offsets, [2, 2]);
        let fewer = &BASE[4..];
        assert_eq!(apply(&p, fewer.as_bytes()).unwrap().offsets, [-2, -2]);
    }

    #[test]
    fn search_prefers_nearest_then_later() {
        let p = file("--- a/x\n+++ b/x\n@@ -3 +3 @@\n-x\n+y\n");
        let got = apply(&p, b"x\na\nb\nx\nc\n").unwrap();
        assert_eq!(got.offsets, [1]);
        let got = apply(&p, b"a\nx\nb\nc\nx\n").unwrap();
        assert_eq!(got.offsets, [-1]);
    }

    /// Past NEAR lines the search reads the line index (issue 23): the same places, in the
    /// same order, as walking out line by line.
    #[test]
    fn far_hunks_land_where_the_walk_out_would_put_them() {
        // `}` is everywhere; `x` (the rarer line) decides, at offset 1 of the pattern.
        let p = file("--- a/x\n+++ b/x\n@@ -200,3 +200,3 @@\n }\n-x\n+y\n }\n");
        let at = |places: &[usize]| -> String {
            let mut text = String::new();
            for i in 0..400 {
                text.push_str(if places.contains(&i) { "x\n" } else { "}\n" });
            }
            text
        };
        // Nearest first: 80 lines before beats 90 after.
        assert_eq!(
            apply(&p, at(&[120, 290]).as_bytes()).unwrap().offsets,
            [-80]
        );
        // At equal distance the later place wins.
        assert_eq!(
            apply(&p, at(&[100, 300]).as_bytes()).unwrap().offsets,
            [100]
        );
        let none: String = (0..400).map(|i| format!("f{i}\n")).collect();
        let err = apply(&p, none.as_bytes()).unwrap_err();
        assert!(
            matches!(err, ApplyError::Mismatch { line: 200, .. }),
            "{err}"
        );
        // A hunk may not go back past the one before it, however far the index reaches.
        let two = |start: usize| {
            file(&format!(
                "--- a/x\n+++ b/x\n@@ -{start},3 +{start},3 @@\n }}\n-x\n+y\n }}\n\
                 @@ -{0},3 +{0},3 @@\n }}\n-x\n+y\n }}\n",
                start + 10
            ))
        };
        let got = apply(&two(1), at(&[100, 110]).as_bytes()).unwrap();
        assert_eq!(got.offsets, [99, 99]);
        let err = apply(&two(300), at(&[100, 110]).as_bytes()).unwrap_err();
        assert!(matches!(err, ApplyError::Mismatch { hunk: 2, .. }), "{err}");
    }

    /// The first far search walks the file, the later ones read the index: both put every
    /// hunk where walking out would.
    #[test]
    fn walked_and_indexed_far_searches_agree() {
        let hunk =
            |k: usize, start: usize| format!("@@ -{start},3 +{start},3 @@\n }}\n-x{k}\n+y\n }}\n");
        let p = file(&format!(
            "--- a/x\n+++ b/x\n{}{}{}",
            hunk(1, 10),
            hunk(2, 200),
            hunk(3, 300)
        ));
        // Each hunk's line 100 lines past where the hunk before leaves it, and farther out
        // a decoy of it.
        let places = [(109, 1), (399, 2), (599, 3), (250, 1), (560, 2), (40, 3)];
        let text: String = (0..700)
            .map(|i| match places.iter().find(|(at, _)| *at == i) {
                Some((_, k)) => format!("x{k}\n"),
                None => "}\n".to_owned(),
            })
            .collect();
        assert_eq!(apply(&p, text.as_bytes()).unwrap().offsets, [99, 199, 299]);
        // Undone alone, each is found as far out; with its decoy left, each still applies.
        let done = apply(&p, text.as_bytes()).unwrap().content;
        assert!(hunks_already_applied(&p, &done).is_empty());
        let plain = String::from_utf8(done).unwrap().replace("x1\n", "}\n");
        let plain = plain.replace("x2\n", "}\n").replace("x3\n", "}\n");
        assert_eq!(hunks_already_applied(&p, plain.as_bytes()), [0, 1, 2]);
        assert!(hunks_already_applied(&p, text.as_bytes()).is_empty());
    }

    /// Where every place begins the hunk (a run of `}` under a hunk of `}` context lines),
    /// the far walk spends its budget and the index finds the place: the same one.
    #[test]
    fn a_walk_over_lines_that_all_begin_the_hunk_gives_way_to_the_index() {
        let context = " }\n".repeat(25);
        let p = file(&format!(
            "--- a/x\n+++ b/x\n@@ -100,51 +100,51 @@\n{context}-y\n+z\n{context}"
        ));
        let braces = "}\n".repeat(3000);
        let text = format!("{braces}y\n{braces}");
        // `y` is line 3001; the hunk starts 25 lines before it, 2876 past its header's.
        assert_eq!(apply(&p, text.as_bytes()).unwrap().offsets, [2876]);
        let without = format!("{braces}{braces}");
        assert!(apply(&p, without.as_bytes()).is_err());
    }

    #[test]
    fn hunks_already_applied_are_those_undone_alone() {
        let p = file(
            "--- a/x\n+++ b/x\n@@ -2,3 +2,3 @@\n 2\n-3\n+three\n 4\n@@ -7,3 +7,3 @@\n 7\n-8\n+eight\n 9\n",
        );
        assert_eq!(
            hunks_already_applied(&p, BASE.as_bytes()),
            Vec::<usize>::new()
        );
        let second = BASE.replace("8\n", "eight\n");
        assert_eq!(hunks_already_applied(&p, second.as_bytes()), [1]);
        assert_eq!(hunks_alone(&p, second.as_bytes()), [Some(0), None]);
        let moved = format!("0\n{second}");
        assert_eq!(hunks_alone(&p, moved.as_bytes()), [Some(1), None]);
        let both = second.replace("3\n", "three\n");
        assert_eq!(hunks_already_applied(&p, both.as_bytes()), [0, 1]);
    }

    #[test]
    fn mismatch_names_hunk_line_and_expected_text() {
        let p = file("--- a/x\n+++ b/x\n@@ -3,3 +3,3 @@ ctx\n 3\n-4\n+four\n 5\n");
        let err = apply(&p, b"1\n2\n3\nFOUR\n5\n").unwrap_err();
        assert_eq!(
            err,
            ApplyError::Mismatch {
                hunk: 1,
                header: "@@ -3,3 +3,3 @@ ctx".into(),
                line: 4,
                expected: "4".into(),
                found: Some("FOUR".into()),
            }
        );
        assert_eq!(
            err.to_string(),
            "hunk #1 `@@ -3,3 +3,3 @@ ctx` does not apply: line 4 is \"FOUR\", expected \"4\""
        );
        let short = apply(&p, b"1\n2\n3\n").unwrap_err();
        assert!(
            short
                .to_string()
                .contains("line 4 is past the end of the file")
        );
        let empty = apply(&p, b"").unwrap_err().to_string();
        assert!(
            empty.contains("line 1 is past the end of the file (the file is empty)"),
            "{empty}"
        );
    }

    #[test]
    fn crlf_must_match_exactly() {
        let p = file("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n");
        assert_eq!(apply(&p, b"a\r\nb\r\n").unwrap().content, b"a\r\nc\r\n");
        let err = apply(&p, b"a\nb\n").unwrap_err();
        assert!(
            matches!(
                err,
                ApplyError::LineEnding {
                    line: 1,
                    patch_crlf: true,
                    ..
                }
            ),
            "{err}"
        );
        assert!(
            err.to_string().ends_with(
                "line 1 differs only in its line ending: the patch has CRLF, the file LF"
            ),
            "{err}"
        );
        let lf = file("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n");
        let err = apply(&lf, b"a\r\nb\r\n").unwrap_err();
        assert!(
            err.to_string().ends_with("the patch has LF, the file CRLF"),
            "{err}"
        );
    }

    #[test]
    fn missing_newline_at_eof_is_part_of_the_match() {
        let p =
            file("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
        assert_eq!(apply(&p, b"a\nb").unwrap().content, b"a\nb\n");
        // issue 13: not `line 2 is "b", expected "b"`.
        let err = apply(&p, b"a\nb\n").unwrap_err().to_string();
        assert!(
            err.ends_with("line 2 differs only in the newline at the end of the file: the patch says `\\ No newline at end of file`, the file ends with one"),
            "{err}"
        );
        let with_newline = file("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n");
        let err = apply(&with_newline, b"a\nb").unwrap_err().to_string();
        assert!(
            err.ends_with("the patch's line has one, the file ends without it"),
            "{err}"
        );
        assert_eq!(apply_reverse(&p, b"a\nb\n").unwrap().content, b"a\nb");
    }

    #[test]
    fn hunks_may_not_go_backwards() {
        let p = file("--- a/x\n+++ b/x\n@@ -5 +5 @@\n-x\n+y\n@@ -6 +6 @@\n-a\n+b\n");
        let err = apply(&p, b"a\n1\n2\n3\nx\n").unwrap_err();
        assert_eq!(
            err,
            ApplyError::Mismatch {
                hunk: 2,
                header: "@@ -6 +6 @@".into(),
                line: 6,
                expected: "a".into(),
                found: None,
            }
        );
        let overlap = file("--- a/x\n+++ b/x\n@@ -2 +2 @@\n-x\n+y\n@@ -1,2 +1,2 @@\n a\n-y\n+z\n");
        let err = apply(&overlap, b"a\nx\n").unwrap_err();
        assert!(
            matches!(
                err,
                ApplyError::Mismatch {
                    hunk: 2,
                    line: 2,
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn short_context_anchors_to_the_file_edges() {
        let top = file("--- a/x\n+++ b/x\n@@ -1,2 +1,3 @@\n+new\n a\n b\n");
        assert_eq!(
            apply(&top, b"a\nb\nc\n").unwrap().content,
            b"new\na\nb\nc\n"
        );
        assert!(apply(&top, b"z\na\nb\n").is_err());
        let bottom = file("--- a/x\n+++ b/x\n@@ -2,2 +2,3 @@\n b\n c\n+end\n");
        assert_eq!(
            apply(&bottom, b"a\nb\nc\n").unwrap().content,
            b"a\nb\nc\nend\n"
        );
        let err = apply(&bottom, b"a\nb\nc\nd\n").unwrap_err();
        assert!(matches!(err, ApplyError::Mismatch { line: 3, .. }), "{err}");
    }

    #[test]
    fn pure_insertion_without_context() {
        let p = file("--- a/x\n+++ b/x\n@@ -2,0 +3 @@\n+ins\n");
        assert_eq!(apply(&p, b"a\nb\nc\n").unwrap().content, b"a\nb\nins\nc\n");
        let err = apply(&p, b"a\n").unwrap_err();
        assert!(
            matches!(
                err,
                ApplyError::OutOfRange {
                    line: 2,
                    lines: 1,
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn new_and_deleted_files() {
        let new = file("--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+a\n+b\n");
        assert_eq!(apply(&new, b"").unwrap().content, b"a\nb\n");
        assert!(matches!(
            apply(&new, b"x\n"),
            Err(ApplyError::NotNew { .. })
        ));
        let gone = file("--- a/g\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n");
        assert_eq!(apply(&gone, b"a\n").unwrap().content, b"");
        assert!(matches!(
            apply(&gone, b"a\nb\n"),
            Err(ApplyError::NotEmpty { .. })
        ));
        assert_eq!(apply_reverse(&gone, b"").unwrap().content, b"a\n");
        assert!(matches!(
            apply_reverse(&gone, b"a\n"),
            Err(ApplyError::NotNew { .. })
        ));
    }

    #[test]
    fn binary_patches_are_refused() {
        let set = parse(
            b"diff --git a/b.png b/b.png\nindex 1..2\nBinary files a/b.png and b/b.png differ\n",
        )
        .unwrap();
        assert!(matches!(
            apply(&set.files[0], b""),
            Err(ApplyError::Binary { .. })
        ));
    }
}
