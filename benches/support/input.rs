//! Deterministic large inputs for the benchmarks: an upstream file, a patch with one hunk per
//! block of lines, the patched file, and a new upstream that changes a context line of every
//! hunk (so a strict apply fails and the 3-way merge runs) and adds a line to every block.
//!
//! Every line is distinct, as in a real manifest or source file, so each tool sees the same
//! unambiguous merge and the outputs can be compared byte for byte.

/// The four files of one input size.
pub struct Input {
    /// The upstream file the patch was made against.
    pub base: Vec<u8>,
    /// The patch, one hunk per block, with `a/<path>` and `b/<path>` names.
    pub patch: Vec<u8>,
    /// `base` with the patch applied.
    pub ours: Vec<u8>,
    /// The new upstream: in every block, line 47 (48 in the adjacent shape) changed and a line
    /// added after line 10.
    pub theirs: Vec<u8>,
    /// `ours` and `theirs` merged, as any correct 3-way merge gives it.
    pub merged: Vec<u8>,
}

/// Where in each block the patch changes a line, and where upstream does: the first line of
/// the hunk's context, or (the adjacent shape) two lines from the patched line.
const PATCHED: usize = 50;
const UPSTREAM_CHANGED: usize = 47;
const UPSTREAM_CHANGED_ADJACENT: usize = PATCHED - 2;
const UPSTREAM_ADDED_AFTER: usize = 10;

impl Input {
    /// `lines` lines in `hunks` equal blocks (at least 100 lines each), patch names `path`.
    pub fn new(lines: usize, hunks: usize, path: &str) -> Input {
        Input::with_change_at(lines, hunks, path, UPSTREAM_CHANGED)
    }

    /// [`Input::new`] with upstream's change two lines from each patched line (issue 23): the
    /// shape of a re-indented or re-commented chart, where every hunk's strict apply fails.
    #[allow(dead_code)] // render_vs_patch has no use for it
    pub fn adjacent(lines: usize, hunks: usize, path: &str) -> Input {
        Input::with_change_at(lines, hunks, path, UPSTREAM_CHANGED_ADJACENT)
    }

    fn with_change_at(lines: usize, hunks: usize, path: &str, upstream_changed: usize) -> Input {
        let block = lines / hunks;
        assert!(
            block >= 100 && lines.is_multiple_of(hunks),
            "blocks of at least 100 lines"
        );
        let line = |i: usize| format!("  value-{i:07}: \"generated upstream line {i}\"\n");
        let patched = |i: usize| format!("  value-{i:07}: \"patched downstream line {i}\"\n");
        let changed = |i: usize| format!("  value-{i:07}: \"changed upstream line {i}\"\n");
        let added = |i: usize| format!("  added-{i:07}: \"new upstream line after {i}\"\n");
        let mut input = Input {
            base: Vec::new(),
            patch: format!("--- a/{path}\n+++ b/{path}\n").into_bytes(),
            ours: Vec::new(),
            theirs: Vec::new(),
            merged: Vec::new(),
        };
        for i in 0..lines {
            let at = i % block;
            input.base.extend(line(i).bytes());
            let ours = if at == PATCHED { patched(i) } else { line(i) };
            let theirs = if at == upstream_changed {
                changed(i)
            } else {
                line(i)
            };
            input.ours.extend(ours.bytes());
            input.theirs.extend(theirs.bytes());
            input.merged.extend(
                if at == upstream_changed {
                    &theirs
                } else {
                    &ours
                }
                .bytes(),
            );
            if at == UPSTREAM_ADDED_AFTER {
                input.theirs.extend(added(i).bytes());
                input.merged.extend(added(i).bytes());
            }
            if at == PATCHED {
                let start = i - 3;
                input
                    .patch
                    .extend(format!("@@ -{0},7 +{0},7 @@\n", start + 1).bytes());
                for c in start..i {
                    input.patch.extend(format!(" {}", line(c)).bytes());
                }
                input
                    .patch
                    .extend(format!("-{}+{}", line(i), patched(i)).bytes());
                for c in i + 1..i + 4 {
                    input.patch.extend(format!(" {}", line(c)).bytes());
                }
            }
        }
        input
    }
}
