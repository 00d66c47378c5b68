//! GNU patch's fuzzy apply (`patch -F2`), for adopting a package whose patches were only ever
//! applied that way. Nothing else uses it: fuzz is how a vendored patch rots (see the module
//! doc of [`patch`](super)), so its one caller checks the result against files a person
//! committed and then refreshes the patch to exact hunks.
//!
//! Each hunk, in order, as GNU patch 2.7 places it:
//!
//! 1. Fuzz 0, then 1, up to the limit (and never more than the hunk's longer run of leading or
//!    trailing context). At fuzz F the hunk's longer context run loses F lines at its outer
//!    end, and the shorter run loses F minus the difference, so a hunk with short context at
//!    a file edge stays tied to that edge until the fuzz evens the two runs out.
//! 2. At each fuzz the search starts where the header says, moved by the offset the previous
//!    hunk landed at, and goes outward, later before earlier at equal distance. A hunk may
//!    start inside the previous hunk's trailing context (GNU only freezes the lines up to a
//!    hunk's last change), never before it.
//! 3. The result keeps the file's own lines where the patch's context was ignored: GNU copies
//!    context from the file, never from the patch.
//!
//! Matching is byte for byte on the lines that count; GNU's `-l` (loose whitespace) is not
//! offered.

use super::apply::ApplyError;
use super::model::{FilePatch, Hunk, Line, LineKind};

/// Where one hunk landed in a fuzzy apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Landing {
    /// The line it landed at minus the line its header names, as GNU's "offset N lines".
    pub offset: isize,
    /// How many context lines at each end had to be ignored (GNU's "with fuzz N").
    pub fuzz: usize,
}

/// The patched bytes and where each hunk landed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fuzzed {
    /// The file after the patch.
    pub content: Vec<u8>,
    /// One landing per hunk, in order.
    pub landings: Vec<Landing>,
}

/// Applies `patch` to `base` as `patch -F<max_fuzz>` would. The first hunk that finds no place
/// is the error, with the mismatch at the place its header names.
pub fn apply_fuzzy(patch: &FilePatch, base: &[u8], max_fuzz: usize) -> Result<Fuzzed, ApplyError> {
    if patch.is_binary() {
        return Err(ApplyError::Binary { file: patch.name() });
    }
    if patch.is_new() && !base.is_empty() {
        return Err(ApplyError::NotNew { file: patch.name() });
    }
    let lines: Vec<&[u8]> = super::diff::split(base).collect();
    let n = lines.len();
    let mut out = Output {
        lines: &lines,
        content: Vec::with_capacity(base.len()),
        frozen: 0,
    };
    let mut in_offset: isize = 0;
    let mut landings = Vec::with_capacity(patch.hunks.len());
    for (index, hunk) in patch.hunks.iter().enumerate() {
        let pattern: Vec<&[u8]> = hunk.old_lines().collect();
        if pattern.is_empty() {
            // Nothing to match: it goes where its header says, moved like the rest.
            let at = hunk.old_start as isize + in_offset;
            if at < out.frozen as isize || at > n as isize {
                return Err(ApplyError::OutOfRange {
                    hunk: index + 1,
                    header: hunk.header(),
                    line: at,
                    lines: n,
                });
            }
            out.splice(hunk, at as usize);
            landings.push(Landing {
                offset: in_offset,
                fuzz: 0,
            });
            continue;
        }
        let stated = hunk.old_start.saturating_sub(1) as isize;
        let guess = stated + in_offset;
        let shape = Shape::of(hunk);
        let top = max_fuzz.min(shape.prefix.max(shape.suffix));
        let found = (0..=top).find_map(|fuzz| {
            let search = Search {
                lines: &lines,
                pattern: &pattern,
                shape,
                fuzz,
                frozen: out.frozen,
                at_start: hunk.old_start <= 1,
            };
            search.locate(guess).map(|at| (at, fuzz))
        });
        let Some((at, fuzz)) = found else {
            return Err(mismatch(index + 1, hunk, &lines, &pattern, guess));
        };
        if at + shape.prefix < out.frozen {
            // GNU refuses this too ("misordered hunks"): a change before a frozen line.
            return Err(ApplyError::Overlap {
                hunk: index + 1,
                header: hunk.header(),
                line: at + 1,
            });
        }
        out.splice(hunk, at);
        in_offset = at as isize - stated;
        landings.push(Landing {
            offset: in_offset,
            fuzz,
        });
    }
    let content = out.finish();
    if patch.is_delete() && !content.is_empty() {
        return Err(ApplyError::NotEmpty { file: patch.name() });
    }
    Ok(Fuzzed { content, landings })
}

/// A hunk's runs of context: leading and trailing.
#[derive(Clone, Copy)]
struct Shape {
    prefix: usize,
    suffix: usize,
}

impl Shape {
    fn of(hunk: &Hunk) -> Shape {
        let is_context = |l: &&Line| l.kind == LineKind::Context;
        Shape {
            prefix: hunk.lines.iter().take_while(is_context).count(),
            suffix: hunk.lines.iter().rev().take_while(is_context).count(),
        }
    }
}

/// One search for a hunk's place at one fuzz.
struct Search<'a> {
    lines: &'a [&'a [u8]],
    pattern: &'a [&'a [u8]],
    shape: Shape,
    fuzz: usize,
    /// Input lines already written out: a hunk's changes may not come before them.
    frozen: usize,
    /// The header names the first line (or the file's start).
    at_start: bool,
}

impl Search<'_> {
    /// The 0-based line the hunk's first old line goes to, trying `guess` first.
    fn locate(&self, guess: isize) -> Option<usize> {
        let (n, m) = (self.lines.len() as isize, self.pattern.len() as isize);
        let context = self.shape.prefix.max(self.shape.suffix) as isize;
        let fuzz = self.fuzz as isize;
        let mut prefix_fuzz = fuzz + self.shape.prefix as isize - context;
        let suffix_fuzz = fuzz + self.shape.suffix as isize - context;
        let highest = n - m + suffix_fuzz.max(0);
        let lowest = self.frozen as isize;
        let max_pos = highest - guess;
        // Never before the file's first line.
        let max_neg = (guess - lowest).min(guess);
        if prefix_fuzz < 0 && self.at_start {
            // Less context above than below, at the top: only the file's start will do.
            let fits = self.frozen <= self.shape.prefix && -guess <= max_pos;
            return (fits && self.matches(0, 0, suffix_fuzz)).then_some(0);
        }
        prefix_fuzz = prefix_fuzz.max(0);
        if suffix_fuzz < 0 {
            // Less context below than above: only the file's end will do.
            let end = n - m;
            let fits = guess - end <= max_neg;
            return (fits && self.matches(end, prefix_fuzz, 0)).then_some(end as usize);
        }
        // As GNU counts: when the guess lies outside the range, the first offset tried is the
        // one that reaches back into it.
        let first = if max_pos < 0 {
            guess - highest
        } else if max_neg < 0 {
            guess - lowest
        } else {
            0
        };
        for offset in first..=max_pos.max(max_neg) {
            if offset <= max_pos && self.matches(guess + offset, prefix_fuzz, suffix_fuzz) {
                return Some((guess + offset) as usize);
            }
            if offset <= max_neg && self.matches(guess - offset, prefix_fuzz, suffix_fuzz) {
                return Some((guess - offset) as usize);
            }
        }
        None
    }

    /// Whether the pattern, less `skip_start` lines at its start and `skip_end` at its end,
    /// matches the file with its first line at `at`. A place whose first line would sit before
    /// the file's start is none, even when the lines skipped are the ones hanging over.
    fn matches(&self, at: isize, skip_start: isize, skip_end: isize) -> bool {
        let m = self.pattern.len() as isize;
        at >= 0
            && (skip_start..m - skip_end).all(|k| {
                usize::try_from(at + k)
                    .ok()
                    .and_then(|i| self.lines.get(i))
                    .is_some_and(|line| *line == self.pattern[k as usize])
            })
    }
}

/// The output being built, GNU style: input lines are copied up to each change, so context the
/// fuzz ignored comes from the file.
struct Output<'a> {
    lines: &'a [&'a [u8]],
    content: Vec<u8>,
    /// Input lines consumed so far.
    frozen: usize,
}

impl Output<'_> {
    /// Writes `hunk` with its first old line at input line `at` (0-based).
    fn splice(&mut self, hunk: &Hunk, at: usize) {
        let mut old = 0;
        for line in &hunk.lines {
            match line.kind {
                LineKind::Context => old += 1,
                LineKind::Remove => {
                    self.copy_till(at + old);
                    self.frozen = at + old + 1;
                    old += 1;
                }
                LineKind::Add => {
                    self.copy_till(at + old);
                    self.content.extend_from_slice(&line.text);
                }
            }
        }
    }

    /// Copies input lines up to (not including) `end`; context ignored past the file's end
    /// copies nothing.
    fn copy_till(&mut self, end: usize) {
        let n = self.lines.len();
        if self.frozen < end {
            let (from, to) = (self.frozen.min(n), end.min(n));
            self.content.extend(self.lines[from..to].concat());
            self.frozen = end;
        }
    }

    fn finish(mut self) -> Vec<u8> {
        self.copy_till(self.lines.len());
        self.content
    }
}

/// Why a hunk found no place: the first line that differs where its header points, or an
/// overlap when it matches there but only before the previous hunk's changes.
fn mismatch(
    number: usize,
    hunk: &Hunk,
    lines: &[&[u8]],
    pattern: &[&[u8]],
    at: isize,
) -> ApplyError {
    let at = at.clamp(0, lines.len() as isize) as usize;
    let show = |line: &[u8]| {
        String::from_utf8_lossy(line.strip_suffix(b"\n").unwrap_or(line)).into_owned()
    };
    for (k, expected) in pattern.iter().enumerate() {
        let found = lines.get(at + k);
        if found != Some(expected) {
            return ApplyError::Mismatch {
                hunk: number,
                header: hunk.header(),
                line: at + k + 1,
                expected: show(expected),
                found: found.map(|f| show(f)),
            };
        }
    }
    ApplyError::Overlap {
        hunk: number,
        header: hunk.header(),
        line: at + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse::parse;
    use super::*;

    fn file(patch: &str) -> FilePatch {
        parse(patch.as_bytes()).unwrap().files.remove(0)
    }

    fn lines(text: &str) -> Vec<u8> {
        text.split(' ')
            .map(|l| format!("{l}\n"))
            .collect::<String>()
            .into_bytes()
    }

    fn landings(fuzzed: &Fuzzed) -> Vec<(isize, usize)> {
        fuzzed.landings.iter().map(|l| (l.offset, l.fuzz)).collect()
    }

    /// kube-ovn's values.yaml hunk of cozystack's cozyconfig.diff on v1.14.5, cut down: the
    /// first and the second-to-last context lines changed upstream, the lines it removes are
    /// still there, 10 lines further down. `patch -F2`: "succeeded at 12 with fuzz 2 (offset
    /// 10 lines)"; `-F1` fails.
    #[test]
    fn an_outer_and_a_second_outer_context_line_changed_needs_fuzz_2() {
        let p =
            file("--- a/v\n+++ b/v\n@@ -2,8 +2,6 @@\n top\n \n ipv4:\n-a\n-b\n addr\n domain\n \n");
        let mut base = String::new();
        for i in 0..10 {
            base.push_str(&format!("pad{i}\n"));
        }
        base.push_str("x\nTOP\n\nipv4:\na\nb\naddr\nDOMAIN\n\ny\n");
        let fuzzed = apply_fuzzy(&p, base.as_bytes(), 2).unwrap();
        assert_eq!(landings(&fuzzed), [(10, 2)]);
        let text = String::from_utf8(fuzzed.content).unwrap();
        assert!(
            text.ends_with("x\nTOP\n\nipv4:\naddr\nDOMAIN\n\ny\n"),
            "{text}"
        );
        assert!(apply_fuzzy(&p, base.as_bytes(), 1).is_err());
    }

    /// Found by fuzzing: a place before the file's start (here a hunk longer than the file,
    /// which can only end at the file's end) is no place; it used to land at a line near
    /// `usize::MAX` and overflow.
    #[test]
    fn a_hunk_longer_than_the_file_has_no_place_at_its_end() {
        let p = file("--- a/f\n+++ b/f\n@@ -1,4 +1,3 @@\n 1\n 2\n 3\n-4\n");
        assert!(apply_fuzzy(&p, &lines("3 4"), 2).is_err());
        let fits = apply_fuzzy(&p, &lines("0 2 3 4"), 2).unwrap();
        assert_eq!(fits.content, lines("0 2 3"));
    }

    #[test]
    fn fuzz_is_tried_in_order_and_exact_wins() {
        let p = file("--- a/f\n+++ b/f\n@@ -2,5 +2,5 @@\n 2\n 3\n-4\n+X\n 5\n 6\n");
        let exact = apply_fuzzy(&p, &lines("1 2 3 4 5 6 7"), 2).unwrap();
        assert_eq!(landings(&exact), [(0, 0)]);
        let one = apply_fuzzy(&p, &lines("1 two 3 4 5 six 7"), 2).unwrap();
        assert_eq!(landings(&one), [(0, 1)]);
        assert_eq!(
            one.content,
            lines("1 two 3 X 5 six 7"),
            "the file's context is kept"
        );
        let two = apply_fuzzy(&p, &lines("1 two three 4 five six 7"), 2).unwrap();
        assert_eq!(landings(&two), [(0, 2)]);
        let err = apply_fuzzy(&p, &lines("1 2 3 four 5 6 7"), 2).unwrap_err();
        assert!(
            matches!(
                err,
                ApplyError::Mismatch {
                    hunk: 1,
                    line: 4,
                    ..
                }
            ),
            "{err}"
        );
    }

    /// GNU 2.7.6: `Hunk #2 succeeded at 6 (offset 1 line)`. The second hunk's guess (line 5) is
    /// inside the first hunk's change, so the search starts back at the first free line.
    #[test]
    fn a_guess_inside_the_previous_change_searches_from_the_first_free_line() {
        let p = file(
            "--- a/g\n+++ b/g\n@@ -3,5 +3,5 @@\n 3\n 4\n-a\n+X\n a\n a\n@@ -5,3 +5,3 @@\n a\n-a\n+Y\n a\n",
        );
        let fuzzed = apply_fuzzy(&p, &lines("1 2 3 4 a a a a a 10"), 2).unwrap();
        assert_eq!(landings(&fuzzed), [(0, 0), (1, 0)]);
        assert_eq!(fuzzed.content, lines("1 2 3 4 X a Y a a 10"));
    }

    /// GNU 2.7.6 fails this hunk: it may start in the previous hunk's trailing context, but not
    /// earlier than the line after its last change.
    #[test]
    fn a_hunk_cannot_reach_back_into_the_previous_change() {
        let p = file(
            "--- a/f\n+++ b/f\n@@ -3,5 +3,5 @@\n 3\n 4\n-5\n+X\n 6\n 7\n@@ -7,3 +7,3 @@\n 5\n-6\n+Y\n 7\n",
        );
        let err = apply_fuzzy(&p, &lines("1 2 3 4 5 6 7 8 9 10"), 2).unwrap_err();
        assert!(matches!(err, ApplyError::Mismatch { hunk: 2, .. }), "{err}");
        let overlapping = file(
            "--- a/f\n+++ b/f\n@@ -3,5 +3,5 @@\n 3\n 4\n-5\n+X\n 6\n 7\n@@ -5,3 +5,3 @@\n 5\n-6\n+Y\n 7\n",
        );
        let fuzzed = apply_fuzzy(&overlapping, &lines("1 2 3 4 5 6 7 8 9 10"), 2).unwrap();
        assert_eq!(fuzzed.content, lines("1 2 3 4 X Y 7 8 9 10"));
    }

    #[test]
    fn short_context_stays_at_the_edge_until_fuzz_evens_it() {
        // One line below, three above: at fuzz 0 and 1 only the file's end will do.
        let p = file("--- a/f\n+++ b/f\n@@ -3,5 +3,5 @@\n a\n b\n c\n-d\n+D\n e\n");
        assert!(apply_fuzzy(&p, &lines("a b c d e f"), 1).is_err());
        let fuzzed = apply_fuzzy(&p, &lines("a b c d e f"), 2).unwrap();
        assert_eq!(landings(&fuzzed), [(-2, 2)]);
        assert_eq!(fuzzed.content, lines("a b c D e f"));
        let end = apply_fuzzy(&p, &lines("x y a b c d e"), 0).unwrap();
        assert_eq!(landings(&end), [(0, 0)]);
    }

    #[test]
    fn insertions_without_context_and_ignored_context_past_the_end() {
        let p = file("--- a/f\n+++ b/f\n@@ -2,0 +3 @@\n+ins\n");
        let fuzzed = apply_fuzzy(&p, &lines("a b c"), 2).unwrap();
        assert_eq!(fuzzed.content, lines("a b ins c"));
        let tail = file("--- a/f\n+++ b/f\n@@ -1,4 +1,5 @@\n a\n b\n+c\n x\n y\n");
        let fuzzed = apply_fuzzy(&tail, &lines("a b"), 2).unwrap();
        assert_eq!(landings(&fuzzed), [(0, 2)]);
        assert_eq!(fuzzed.content, lines("a b c"));
    }
}
