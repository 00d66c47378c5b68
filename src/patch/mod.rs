//! The patch engine: parse, apply, merge and refresh unified diffs, all on bytes in memory.
//!
//! This module never touches the disk or the network; callers hand it bytes and write what it
//! returns through `paths`. The flow `revendor update` runs for each patch:
//!
//! 1. [`parse`] the patch file into a [`PatchSet`]: file patches with their headers, `---`/`+++`
//!    lines and hunks kept verbatim, so [`write`] gives the same bytes back.
//! 2. [`rebase`] each [`FilePatch`] from the locked upstream onto the new one: [`apply`] strictly
//!    (zero fuzz, offsets allowed) to the new upstream; else detect a change upstream already
//!    made ([`apply_reverse`]); else [`merge3`] the patched old upstream with the new one. The
//!    [`Outcome`] says which happened; a conflict comes with diff3-style markers.
//! 3. [`refresh`] the patch against the new upstream, so its hunks are exact again, in the
//!    author's header style, and [`write`] it.
//!
//! [`apply_tree`] and [`rebase_tree`] do the same for a multi-file patch against a whole source
//! tree held as a map, which is how a Go source patch is verified against an upstream archive.
//!
//! Why strict: GNU patch's default fuzz lets a hunk land on changed context and exits 0, which
//! is how a vendored patch silently rots. Here a context line that changed upstream is a
//! conflict to resolve, never a guess. Why diffy: its diff and 3-way merge are the tested parts;
//! what it lacks (multi-file parsing, git headers, offset search, refresh formatting) is here.

mod apply;
mod conflict;
mod merge;
mod model;
mod parse;
mod path;
mod refresh;
mod tree;
mod write;

pub use apply::{Applied, ApplyError, apply, apply_reverse};
pub use conflict::{ConflictHunk, Labels};
pub use merge::{Merge, Outcome, merge3, rebase};
pub use model::{FilePatch, Hunk, Line, LineKind, PatchSet};
pub use parse::{ParseError, parse};
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
