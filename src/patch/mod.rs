//! The patch engine: parse, apply, merge and refresh unified diffs, all on bytes in memory.
//!
//! This module never touches the disk or the network; callers hand it bytes and write what it
//! returns through `paths`. The flow `revendor update` runs for each patch:
//!
//! 1. [`parse`] the patch file into a [`PatchSet`]: file patches with their headers, `---`/`+++`
//!    lines and hunks kept verbatim, so [`write()`] gives the same bytes back.
//! 2. [`rebase`] each [`FilePatch`] from the locked upstream onto the new one: [`apply`] strictly
//!    (zero fuzz, offsets allowed) to the new upstream; else detect a change upstream already
//!    made ([`apply_reverse`]); else [`merge3`] the patched old upstream with the new one. The
//!    [`Outcome`] says which happened; a conflict comes with diff3-style markers.
//! 3. [`refresh`] the patch against the new upstream, so its hunks are exact again, in the
//!    author's header style, and [`write()`] it.
//!
//! [`apply_tree`] and [`rebase_tree`] do the same for a multi-file patch against a whole source
//! tree held as a map, which is how a Go source patch is verified against an upstream archive.
//!
//! Adoption alone, where no lock says what the patches were made against, may read hunk headers
//! whose counts lie ([`parse_recounted`], as `git apply --recount`) and apply with GNU patch's
//! fuzz ([`apply_fuzzy`]); its caller accepts that only when the result is the committed file.
//!
//! Why strict: GNU patch's default fuzz lets a hunk land on changed context and exits 0, which
//! is how a vendored patch silently rots. Here a context line that changed upstream is a
//! conflict to resolve, never a guess. The line diff is imara-diff's (histogram, trimmed, linear
//! in practice: `diff.rs`); the rest (3-way merge, multi-file parsing, git headers, offset
//! search, refresh formatting) is here.

mod anchor;
mod apply;
mod conflict;
mod diff;
mod fuzz;
mod index;
mod merge;
mod model;
mod parse;
mod path;
mod refresh;
pub mod result;
mod tree;
mod write;

pub use apply::{Applied, ApplyError, apply, apply_reverse, hunks_alone, hunks_already_applied};
pub use conflict::{ConflictHunk, Labels, marker_lines};
pub use fuzz::{Fuzzed, Landing, apply_fuzzy};
pub use merge::{Merge, Outcome, merge3, rebase, rebase_applied};
pub use model::{FilePatch, Hunk, Line, LineKind, PatchSet};
pub use parse::{ParseError, Recounted, parse, parse_recounted};
pub use refresh::{refresh, refresh_set};
pub use tree::{FileApplied, FileRebased, Patched, Rebased, Tree, apply_tree, rebase_tree};
pub use write::{write, write_file};

/// Why the patch engine could not do its job. A conflict is not an error: it is an
/// [`Outcome`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The patch does not apply strictly to the upstream it is locked against.
    #[error("patch for `{file}` does not match the locked upstream")]
    BaseMismatch {
        /// The file patch's name as written in the patch.
        file: String,
        /// Which hunk failed and where.
        #[source]
        source: ApplyError,
    },
    /// A file patch does not apply strictly to its file in a tree.
    #[error("failed to apply the patch for `{path}`")]
    Apply {
        /// The file's path in the tree.
        path: String,
        /// Which hunk failed and where.
        #[source]
        source: ApplyError,
    },
    /// The patched file is not in the tree.
    #[error("`{path}` is not in the tree the patch applies to")]
    Missing {
        /// The file's path in the tree.
        path: String,
    },
    /// The file name has too few components for the strip count.
    #[error("cannot name the file patched by `{file}` with strip {strip}")]
    NoPath {
        /// The file patch's name as written in the patch.
        file: String,
        /// The `-pN` strip count.
        strip: usize,
    },
    /// [`refresh_set`] needs one old and one new content per file patch.
    #[error(
        "refresh needs one old and one new content per file: {files} files, {olds} old and {news} new contents"
    )]
    RefreshCount {
        /// File patches in the set.
        files: usize,
        /// Old contents given.
        olds: usize,
        /// New contents given.
        news: usize,
    },
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Files made of few distinct lines, so diffs have repeats and ambiguous matches; lines may
    /// end in CRLF and the file may lack its final newline.
    fn text() -> impl Strategy<Value = Vec<u8>> {
        let line = (
            prop::sample::select(vec!["a", "b", "c", "func f() {", "}", "", "  x", "$v"]),
            any::<bool>(),
        );
        (prop::collection::vec(line, 0..30), any::<bool>()).prop_map(|(lines, newline_at_end)| {
            let mut out = Vec::new();
            for (text, crlf) in lines {
                out.extend_from_slice(text.as_bytes());
                out.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
            }
            if !newline_at_end {
                out.pop();
            }
            out
        })
    }

    fn template(function_context: bool) -> FilePatch {
        let section = if function_context { " f" } else { "" };
        let patch = format!(
            "diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@{section}\n-q\n+r\n"
        );
        parse(patch.as_bytes()).unwrap().files.remove(0)
    }

    /// The engine works on bytes it is handed: no disk, network, process or environment, and no
    /// other module of the crate.
    #[test]
    fn depends_on_nothing_outside_memory() {
        let sources = [
            ("anchor.rs", include_str!("anchor.rs")),
            ("apply.rs", include_str!("apply.rs")),
            ("conflict.rs", include_str!("conflict.rs")),
            ("diff.rs", include_str!("diff.rs")),
            ("fuzz.rs", include_str!("fuzz.rs")),
            ("merge.rs", include_str!("merge.rs")),
            ("model.rs", include_str!("model.rs")),
            ("parse.rs", include_str!("parse.rs")),
            ("path.rs", include_str!("path.rs")),
            ("refresh.rs", include_str!("refresh.rs")),
            ("tree.rs", include_str!("tree.rs")),
            ("write.rs", include_str!("write.rs")),
        ];
        let banned = [
            "crate::",
            "std::fs",
            "std::net",
            "std::process",
            "std::env",
            "std::io",
        ];
        for (file, source) in sources {
            for word in banned {
                assert!(!source.contains(word), "src/patch/{file} uses `{word}`");
            }
        }
    }

    proptest! {
        #[test]
        fn applying_a_diff_gives_the_new_file(a in text(), b in text(), fc in any::<bool>()) {
            let patch = refresh(&template(fc), &a, &b);
            let applied = apply(&patch, &a).unwrap();
            prop_assert_eq!(&applied.content, &b);
            prop_assert!(applied.offsets.iter().all(|&o| o == 0));
            let bytes = write_file(&patch);
            if a == b {
                // No hunks: the written section is its headers only, which no reader takes.
                prop_assert_eq!(parse(&bytes).map(|_| ()), Err(ParseError::NoHunks {
                    line: 3,
                    text: "--- a/x".into(),
                }));
            } else {
                let reparsed = parse(&bytes).unwrap().files.remove(0);
                prop_assert_eq!(&reparsed, &patch);
            }
            prop_assert_eq!(apply_reverse(&patch, &b).unwrap().content, a);
        }

        #[test]
        fn rebase_onto_an_unchanged_upstream_is_the_patched_file(a in text(), b in text()) {
            let patch = refresh(&template(false), &a, &b);
            let labels = Labels { ours: "o", base: "b", theirs: "t" };
            let outcome = rebase(&a, &patch, &a, &labels).unwrap();
            prop_assert_eq!(outcome.kind(), "exact");
            prop_assert_eq!(outcome.content(), b.as_slice());
        }

        #[test]
        fn odd_input_never_panics(pieces in prop::collection::vec(prop::sample::select(vec![
            "--- a/x\n", "+++ b/x\n", "+++ /dev/null\n", "@@ -1,2 +1 @@\n", "@@ -0,0 +1 @@\n",
            "@@ -2 +0,0 @@ f\n", " a\n", "-b\n", "+c\n", "\\ No newline at end of file\n",
            "diff --git a/x b/x\n", "\n", "\r\n", "x", "-- \n",
        ]), 0..24), base in text()) {
            let input = format!("--- a/x\n+++ b/x\n{}", pieces.concat());
            if let Ok(set) = parse(input.as_bytes()) {
                for file in &set.files {
                    let _ = apply(file, &base);
                    let _ = rebase(&base, file, &base, &Labels { ours: "o", base: "b", theirs: "t" });
                }
                let again = write(&set);
                prop_assert_eq!(parse(&again).map(|s| write(&s)), Ok(again));
            }
        }

        #[test]
        fn refresh_is_idempotent(a in text(), b in text(), fc in any::<bool>()) {
            let once = refresh(&template(fc), &a, &b);
            let twice = refresh(&once, &a, &b);
            prop_assert_eq!(write_file(&once), write_file(&twice));
        }
    }
}
