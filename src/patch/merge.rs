//! Carrying a patch from the locked upstream to a new one: strict first, 3-way when that fails.
//!
//! 1. The patch must apply strictly to `base`, the pristine upstream it was made against;
//!    otherwise nothing after this step would mean anything, and that is an error.
//! 2. It is applied strictly to `theirs`, the new upstream: [`Outcome::Exact`] or
//!    [`Outcome::Offset`].
//! 3. If it reverse-applies strictly to `theirs`, upstream already made the change:
//!    [`Outcome::AlreadyUpstream`].
//! 4. Otherwise `base`, `ours` (the patched base) and `theirs` are merged with diffy:
//!    [`Outcome::Merged`], [`Outcome::AlreadyUpstream`] when the merge is just `theirs` although
//!    the patch changes something, or [`Outcome::Conflict`] with diff3-style markers.

use diffy::{ConflictStyle, IncompleteHunkStyle, MergeOptions};

use super::Error;
use super::apply::{Applied, apply, apply_reverse};
use super::conflict::{self, ConflictHunk, Labels};
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
pub fn merge3(base: &[u8], ours: &[u8], theirs: &[u8], labels: &Labels<'_>) -> Merge {
    let len = conflict::marker_len(&[base, ours, theirs]);
    let mut options = MergeOptions::new();
    options
        .set_conflict_marker_length(len)
        .set_conflict_style(ConflictStyle::Diff3)
        .set_incomplete_hunk_style(IncompleteHunkStyle::Diff3);
    match options.merge_bytes(base, ours, theirs) {
        Ok(clean) => Merge::Clean(clean),
        Err(raw) => {
            let pieces = conflict::split(&raw, len);
            let (marked, hunks) = conflict::render(&pieces, labels, eol_of(&[theirs, ours]));
            Merge::Conflict { hunks, marked }
        }
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
        return applied.into();
    }
    if apply_reverse(patch, theirs).is_ok() {
        return Outcome::AlreadyUpstream {
            content: theirs.to_vec(),
        };
    }
    match merge3(base, ours, theirs, labels) {
        Merge::Clean(content) if content == theirs && ours != base => {
            Outcome::AlreadyUpstream { content }
        }
        Merge::Clean(content) => Outcome::Merged { content },
        Merge::Conflict { hunks, marked } => Outcome::Conflict { hunks, marked },
    }
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
