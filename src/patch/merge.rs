//! Carrying a patch from the locked upstream to a new one: strict first, 3-way when that fails.
//!
//! 1. The patch must apply strictly to `base`, the pristine upstream it was made against;
//!    otherwise nothing after this step would mean anything, and that is an error.
//! 2. It is applied strictly to `theirs`, the new upstream: [`Outcome::Exact`] or
//!    [`Outcome::Offset`]. When a hunk moved, or the patch also reverse-applies, a clean merge
//!    (step 3) that says otherwise wins: the hunk found another copy of its lines.
//! 3. Otherwise `base`, `ours` (the patched base) and `theirs` are merged ([`merge3`]):
//!    [`Outcome::Merged`], or [`Outcome::AlreadyUpstream`] when the merge is just `theirs`
//!    although the patch changes something.
//! 4. A conflicting merge is [`Outcome::AlreadyUpstream`] still if the patch reverse-applies
//!    strictly to `theirs` (upstream made the change and more around it), else
//!    [`Outcome::Conflict`] with diff3-style markers.

use std::ops::Range;

use super::Error;
use super::apply::{Applied, apply, apply_reverse};
use super::conflict::{self, ConflictHunk, Labels, Piece};
use super::diff::{Change, Cursor, Lines, estimate};
use super::model::FilePatch;

/// The result of a 3-way merge of whole files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Merge {
    /// No conflicts: the merged bytes.
    Clean(Vec<u8>),
    /// At least one conflict.
    Conflict {
        /// The conflicting regions.
        hunks: Vec<ConflictHunk>,
        /// The merged file with diff3-style markers around each region.
        marked: Vec<u8>,
    },
}

/// How a patch lands on a new upstream, with the resulting file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every hunk applies strictly where its header says.
    Exact {
        /// The patched new upstream.
        content: Vec<u8>,
    },
    /// Every hunk applies strictly, some at an offset; the patch should be refreshed.
    Offset {
        /// The patched new upstream.
        content: Vec<u8>,
        /// Per hunk, the offset it landed at (zero for hunks that did not move).
        offsets: Vec<isize>,
    },
    /// The strict apply failed but the 3-way merge is clean.
    Merged {
        /// The merged file.
        content: Vec<u8>,
    },
    /// The 3-way merge has conflicts.
    Conflict {
        /// The conflicting regions.
        hunks: Vec<ConflictHunk>,
        /// The merged file with diff3-style markers, for a user to resolve.
        marked: Vec<u8>,
    },
    /// The new upstream already contains the change; the patch can be dropped.
    AlreadyUpstream {
        /// The new upstream, unchanged.
        content: Vec<u8>,
    },
}

impl Outcome {
    /// The file to write: the patched, merged or upstream bytes, or the marked conflict.
    pub fn content(&self) -> &[u8] {
        match self {
            Outcome::Exact { content }
            | Outcome::Offset { content, .. }
            | Outcome::Merged { content }
            | Outcome::AlreadyUpstream { content } => content,
            Outcome::Conflict { marked, .. } => marked,
        }
    }

    /// [`Outcome::content`] by value, for a caller done with the rest.
    pub fn into_content(self) -> Vec<u8> {
        match self {
            Outcome::Exact { content }
            | Outcome::Offset { content, .. }
            | Outcome::Merged { content }
            | Outcome::AlreadyUpstream { content } => content,
            Outcome::Conflict { marked, .. } => marked,
        }
    }

    /// A short stable name: `exact`, `offset`, `merged`, `conflict` or `already-upstream`.
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Exact { .. } => "exact",
            Outcome::Offset { .. } => "offset",
            Outcome::Merged { .. } => "merged",
            Outcome::Conflict { .. } => "conflict",
            Outcome::AlreadyUpstream { .. } => "already-upstream",
        }
    }
}

/// A strict apply is [`Outcome::Exact`] when no hunk moved, else [`Outcome::Offset`]: the one
/// place that tells the two apart.
impl From<Applied> for Outcome {
    fn from(applied: Applied) -> Outcome {
        if applied.offsets.iter().all(|&o| o == 0) {
            Outcome::Exact {
                content: applied.content,
            }
        } else {
            Outcome::Offset {
                content: applied.content,
                offsets: applied.offsets,
            }
        }
    }
}

/// What reports print for a patch section: `exact`, `offset (hunk 1 +106, hunk 3 -2)` (the
/// hunks that moved), `merged (3-way)`, `already upstream`, `conflict (lines 245-250)`.
impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Exact { .. } => f.write_str("exact"),
            Outcome::Offset { offsets, .. } => {
                let moved: Vec<String> = offsets
                    .iter()
                    .enumerate()
                    .filter(|(_, o)| **o != 0)
                    .map(|(i, o)| format!("hunk {} {o:+}", i + 1))
                    .collect();
                write!(f, "offset ({})", moved.join(", "))
            }
            Outcome::Merged { .. } => f.write_str("merged (3-way)"),
            Outcome::AlreadyUpstream { .. } => f.write_str("already upstream"),
            Outcome::Conflict { hunks, .. } => {
                let at: Vec<String> = hunks
                    .iter()
                    .map(|h| format!("lines {}-{}", h.line_start, h.line_end))
                    .collect();
                write!(f, "conflict ({})", at.join(", "))
            }
        }
    }
}

/// Merges `ours` and `theirs`, two descendants of `base`, line by line. Conflict markers carry
/// `labels` and end in `\r\n` when `theirs` (else `ours`) starts with a CRLF line.
///
/// 1. Diff `base` against each side (`Lines::changes`).
/// 2. Group the two sides' changes into regions: changes whose `base` lines overlap or touch
///    (no unchanged line between them) share one, as in `diff3` and `git merge-file`.
/// 3. A region that both sides changed the same way, or only one side changed, takes that
///    side's lines; anything else is a conflict. Lines outside every region are `base`'s.
///
/// Linear in the input besides the diffs, which trim the common prefix and suffix first.
pub fn merge3(base: &[u8], ours: &[u8], theirs: &[u8], labels: &Labels<'_>) -> Merge {
    let mut lines =
        Lines::with_capacity(estimate(base) + estimate(ours) / 8 + estimate(theirs) / 8);
    let b = lines.intern(base);
    let o = lines.intern_like(ours, &b);
    let t = lines.intern_like(theirs, &b);
    let tokens = [b, o, t];
    let [b, o, t] = &tokens;
    let (to_ours, to_theirs) = lines.shared_cuts(b, o, t);
    let regions = regions(
        &lines.changes_cut(b, o, to_ours),
        &lines.changes_cut(b, t, to_theirs),
    );
    let mut cursors = [Cursor::new(base), Cursor::new(ours), Cursor::new(theirs)];
    let mut pieces = Vec::with_capacity(2 * regions.len() + 1);
    let mut done = 0;
    for region in &regions {
        let same = region.sides[0].start - done;
        let clean = cursors[0].take(same);
        cursors[1].take(same);
        cursors[2].take(same);
        pieces.push(Piece::Clean(clean));
        let [base_text, ours_text, theirs_text] =
            [0, 1, 2].map(|k| cursors[k].take(region.sides[k].len()));
        let side = |k: usize| &tokens[k][region.sides[k].clone()];
        pieces.push(if side(1) == side(2) || side(0) == side(2) {
            Piece::Clean(ours_text)
        } else if side(0) == side(1) {
            Piece::Clean(theirs_text)
        } else {
            Piece::Conflict {
                ours: ours_text,
                base: base_text,
                theirs: theirs_text,
            }
        });
        done = region.sides[0].end;
    }
    pieces.push(Piece::Clean(cursors[0].take(usize::MAX)));
    // The pieces are slices of the texts: the line table and the tokens go
    // before the result is written, not beside it (on a 1M-line file they
    // were 45 MB of the update's peak, issue 23).
    drop((tokens, lines));
    if pieces.iter().all(|p| matches!(p, Piece::Clean(_))) {
        let mut clean = Vec::with_capacity(ours.len().max(theirs.len()));
        for piece in &pieces {
            if let Piece::Clean(text) = piece {
                clean.extend_from_slice(text);
            }
        }
        return Merge::Clean(clean);
    }
    let (marked, hunks) = conflict::render(&pieces, labels, eol_of(&[theirs, ours]));
    Merge::Conflict { hunks, marked }
}

/// Lines that one side or both changed: per text (base, ours, theirs), its lines in the region.
#[derive(Debug, PartialEq, Eq)]
struct Region {
    sides: [Range<usize>; 3],
}

/// The regions of two sides' changes against one base, in order: changes whose base lines
/// overlap or touch are one region.
fn regions(ours: &[Change], theirs: &[Change]) -> Vec<Region> {
    let mut regions = Vec::new();
    let (mut next_ours, mut next_theirs) = (ours.iter().peekable(), theirs.iter().peekable());
    // How many lines each side has gained (or, negative, lost) before the current region.
    let (mut ours_shift, mut theirs_shift) = (0isize, 0isize);
    loop {
        let start = match (next_ours.peek(), next_theirs.peek()) {
            (None, None) => return regions,
            (Some(c), None) | (None, Some(c)) => c.old.start,
            (Some(a), Some(b)) => a.old.start.min(b.old.start),
        };
        let (ours_start, theirs_start) = (
            start.saturating_add_signed(ours_shift),
            start.saturating_add_signed(theirs_shift),
        );
        let mut end = start;
        loop {
            let mut grew = false;
            for (changes, shift) in [
                (&mut next_ours, &mut ours_shift),
                (&mut next_theirs, &mut theirs_shift),
            ] {
                while let Some(change) = changes.next_if(|c| c.old.start <= end) {
                    end = end.max(change.old.end);
                    *shift += change.new.len() as isize - change.old.len() as isize;
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
        regions.push(Region {
            sides: [
                start..end,
                ours_start..end.saturating_add_signed(ours_shift),
                theirs_start..end.saturating_add_signed(theirs_shift),
            ],
        });
    }
}

fn eol_of(texts: &[&[u8]]) -> &'static [u8] {
    let first_line = texts
        .iter()
        .find_map(|text| text.split_inclusive(|&b| b == b'\n').next());
    match first_line {
        Some(line) if line.ends_with(b"\r\n") => b"\r\n",
        _ => b"\n",
    }
}

/// Carries `patch`, made against `base`, onto `theirs`. Errors only when the patch does not
/// apply strictly to `base`; every other result, conflicts included, is an [`Outcome`].
pub fn rebase(
    base: &[u8],
    patch: &FilePatch,
    theirs: &[u8],
    labels: &Labels<'_>,
) -> Result<Outcome, Error> {
    let ours = apply(patch, base).map_err(|source| Error::BaseMismatch {
        file: patch.name(),
        source,
    })?;
    Ok(rebase_applied(base, &ours.content, patch, theirs, labels))
}

/// [`rebase`] once `ours`, the strictly patched `base`, is known: for a caller that already
/// walked the patch over `base` and should not apply it twice.
pub fn rebase_applied(
    base: &[u8],
    ours: &[u8],
    patch: &FilePatch,
    theirs: &[u8],
    labels: &Labels<'_>,
) -> Outcome {
    if let Ok(applied) = apply(patch, theirs) {
        let moved = applied.offsets.iter().any(|&o| o != 0);
        if !moved && apply_reverse(patch, theirs).is_err() {
            return applied.into();
        }
        // A hunk that moved may have landed on another copy of its lines, and one that fits
        // `theirs` undone as well as done (short context at the end of the file, none against
        // an empty base) on upstream's own copy of the change: a clean merge, which sees the
        // whole file, decides.
        return match merge3(base, ours, theirs, labels) {
            merge if is_theirs(&merge, base, ours, theirs) => Outcome::AlreadyUpstream {
                content: theirs.to_vec(),
            },
            Merge::Clean(content) if content != applied.content => Outcome::Merged { content },
            _ => applied.into(),
        };
    }
    // A clean merge has seen the whole file, so it decides before the reverse apply, whose
    // hunks can match where upstream made only part of the change (a hunk that removes the
    // first line has no context above it to tell).
    match merge3(base, ours, theirs, labels) {
        merge if is_theirs(&merge, base, ours, theirs) => Outcome::AlreadyUpstream {
            content: theirs.to_vec(),
        },
        Merge::Clean(content) => Outcome::Merged { content },
        Merge::Conflict { .. } if apply_reverse(patch, theirs).is_ok() => {
            Outcome::AlreadyUpstream {
                content: theirs.to_vec(),
            }
        }
        Merge::Conflict { hunks, marked } => Outcome::Conflict { hunks, marked },
    }
}

/// Whether `merge` is a clean `theirs` although the patch changes something: upstream has it.
fn is_theirs(merge: &Merge, base: &[u8], ours: &[u8], theirs: &[u8]) -> bool {
    matches!(merge, Merge::Clean(content) if content == theirs && ours != base)
}

#[cfg(test)]
mod tests {
    use super::super::parse::parse;
    use super::*;

    const LABELS: Labels<'static> = Labels {
        ours: "patched v1",
        base: "v1",
        theirs: "v2",
    };

    fn patch(text: &str) -> FilePatch {
        parse(text.as_bytes()).unwrap().files.remove(0)
    }

    const BASE: &str = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
    const CHANGE_D: &str = "--- a/x\n+++ b/x\n@@ -2,5 +2,5 @@\n b\n c\n-d\n+D\n e\n f\n";

    #[test]
    fn exact_offset_and_error_on_base_mismatch() {
        let p = patch(CHANGE_D);
        let exact = rebase(BASE.as_bytes(), &p, BASE.as_bytes(), &LABELS).unwrap();
        assert_eq!(exact.kind(), "exact");
        assert_eq!(exact.content(), BASE.replace("d\n", "D\n").as_bytes());
        let moved = format!("0\n{BASE}");
        let offset = rebase(BASE.as_bytes(), &p, moved.as_bytes(), &LABELS).unwrap();
        assert!(matches!(offset, Outcome::Offset { ref offsets, .. } if offsets == &[1]));
        let err = rebase(b"x\n", &p, BASE.as_bytes(), &LABELS).unwrap_err();
        assert!(
            err.to_string()
                .contains("does not match the locked upstream"),
            "{err}"
        );
    }

    #[test]
    fn merged_when_upstream_changed_the_context() {
        let p = patch(CHANGE_D);
        let theirs = BASE.replace("b\n", "B\n");
        let merged = rebase(BASE.as_bytes(), &p, theirs.as_bytes(), &LABELS).unwrap();
        assert_eq!(
            merged,
            Outcome::Merged {
                content: theirs.replace("d\n", "D\n").into_bytes()
            }
        );
    }

    #[test]
    fn conflict_when_both_changed_the_same_line() {
        let p = patch(CHANGE_D);
        let theirs = BASE.replace("d\n", "delta\n");
        let Outcome::Conflict { hunks, marked } =
            rebase(BASE.as_bytes(), &p, theirs.as_bytes(), &LABELS).unwrap()
        else {
            panic!("expected a conflict");
        };
        assert_eq!(
            String::from_utf8(marked).unwrap(),
            "a\nb\nc\n<<<<<<< ours (patched v1)\nD\n||||||| base (v1)\nd\n=======\ndelta\n\
             >>>>>>> theirs (v2)\ne\nf\ng\nh\ni\nj\n"
        );
        assert_eq!(hunks.len(), 1);
        assert_eq!((hunks[0].line_start, hunks[0].line_end), (4, 10));
        assert_eq!(hunks[0].ours, b"D\n");
        assert_eq!(hunks[0].theirs, b"delta\n");
    }

    #[test]
    fn already_upstream_by_reverse_apply_and_by_merge() {
        let p = patch(CHANGE_D);
        let theirs = BASE.replace("d\n", "D\n");
        let up = rebase(BASE.as_bytes(), &p, theirs.as_bytes(), &LABELS).unwrap();
        assert_eq!(up.kind(), "already-upstream");
        let both = theirs.replace("b\n", "B\n");
        let merged = rebase(BASE.as_bytes(), &p, both.as_bytes(), &LABELS).unwrap();
        assert_eq!(
            merged,
            Outcome::AlreadyUpstream {
                content: both.into_bytes()
            }
        );
    }

    #[test]
    fn reports_print_each_outcome_the_same_way() {
        let p = patch(CHANGE_D);
        let moved = format!("0\n{BASE}");
        let offset = rebase(BASE.as_bytes(), &p, moved.as_bytes(), &LABELS).unwrap();
        assert_eq!(offset.to_string(), "offset (hunk 1 +1)");
        let conflict = rebase(
            BASE.as_bytes(),
            &p,
            BASE.replace("d\n", "delta\n").as_bytes(),
            &LABELS,
        )
        .unwrap();
        assert_eq!(conflict.to_string(), "conflict (lines 4-10)");
        let content = Vec::new();
        let moved_some = Outcome::Offset {
            content: content.clone(),
            offsets: vec![0, 106, 0, -2],
        };
        assert_eq!(moved_some.to_string(), "offset (hunk 2 +106, hunk 4 -2)");
        assert_eq!(
            Outcome::Exact {
                content: content.clone()
            }
            .to_string(),
            "exact"
        );
        assert_eq!(
            Outcome::Merged {
                content: content.clone()
            }
            .to_string(),
            "merged (3-way)"
        );
        assert_eq!(
            Outcome::AlreadyUpstream { content }.to_string(),
            "already upstream"
        );
    }

    #[test]
    fn a_strict_apply_is_exact_only_when_no_hunk_moved() {
        let still = Applied {
            content: b"x".to_vec(),
            offsets: vec![0, 0],
        };
        assert_eq!(Outcome::from(still).kind(), "exact");
        let moved = Applied {
            content: b"x".to_vec(),
            offsets: vec![0, 3],
        };
        assert_eq!(Outcome::from(moved).kind(), "offset");
    }

    #[test]
    fn markers_never_collide_with_content() {
        let base = "=======\nx\n<<<<<<< y\n";
        let ours = "=======\nours\n<<<<<<< y\n";
        let theirs = "=======\ntheirs\n<<<<<<< y\n";
        let Merge::Conflict { hunks, marked } =
            merge3(base.as_bytes(), ours.as_bytes(), theirs.as_bytes(), &LABELS)
        else {
            panic!("expected a conflict");
        };
        assert_eq!(hunks.len(), 1);
        assert_eq!(hunks[0].base, b"x\n");
        assert!(
            String::from_utf8(marked)
                .unwrap()
                .starts_with("=======\n<<<<<<< ours (patched v1)\nours\n")
        );
    }

    #[test]
    fn changes_that_touch_conflict_and_equal_ones_do_not() {
        let base = "a\nb\nc\nd\n";
        let touching = merge3(base.as_bytes(), b"a\nB\nc\nd\n", b"a\nb\nC\nd\n", &LABELS);
        assert!(matches!(touching, Merge::Conflict { ref hunks, .. } if hunks.len() == 1));
        let apart = merge3(base.as_bytes(), b"a\nB\nc\nd\n", b"a\nb\nc\nD\n", &LABELS);
        assert_eq!(apart, Merge::Clean(b"a\nB\nc\nD\n".to_vec()));
        let same = merge3(
            base.as_bytes(),
            b"x\na\nB\nc\nd\n",
            b"x\na\nB\nc\nd\n",
            &LABELS,
        );
        assert_eq!(same, Merge::Clean(b"x\na\nB\nc\nd\n".to_vec()));
    }

    #[test]
    fn issue13_a_change_upstream_made_in_part_is_merged_not_dropped() {
        // Reversed, the hunk that drops line 0 has no context above to see that it is still
        // there; the merge does.
        let p = patch(
            "--- a/x\n+++ b/x\n@@ -1,3 +1,2 @@\n-line 0\n line 1\n-line 2\n+line 2\n\\ No newline at end of file\n",
        );
        let base = b"line 0\nline 1\nline 2\n";
        let outcome = rebase(base, &p, b"line 0\nline 1\nline 2", &LABELS).unwrap();
        assert_eq!(
            outcome,
            Outcome::Merged {
                content: b"line 1\nline 2".to_vec()
            }
        );
    }

    #[test]
    fn issue13_a_hunk_on_upstream_s_own_copy_of_the_change_is_already_upstream() {
        let p = patch("--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+x\n");
        let outcome = rebase(b"", &p, b"x\n", &LABELS).unwrap();
        assert_eq!(outcome.kind(), "already-upstream");
        assert_eq!(outcome.content(), b"x\n");
    }

    #[test]
    fn issue13_a_moved_hunk_the_merge_contradicts_is_merged() {
        // Upstream added `both` at the top too: the hunk's old lines are found one line lower,
        // where applying it would add `both` a second time.
        let p = patch(
            "--- a/x\n+++ b/x\n@@ -1,2 +1,3 @@\n+both\n line 0\n-line 1\n+line 1\n\\ No newline at end of file\n",
        );
        let theirs = b"both\nline 0\nline 1\n";
        let outcome = rebase(b"line 0\nline 1\n", &p, theirs, &LABELS).unwrap();
        assert_eq!(
            outcome,
            Outcome::Merged {
                content: b"both\nline 0\nline 1".to_vec()
            }
        );
    }

    #[test]
    fn crlf_files_get_crlf_markers() {
        let Merge::Conflict { marked, .. } = merge3(b"a\r\n", b"b\r\n", b"c\r\n", &LABELS) else {
            panic!("expected a conflict");
        };
        assert_eq!(
            marked,
            b"<<<<<<< ours (patched v1)\r\nb\r\n||||||| base (v1)\r\na\r\n=======\r\nc\r\n>>>>>>> theirs (v2)\r\n"
        );
    }
}
