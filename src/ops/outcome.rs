//! What `render` and `update` both report, in one shape each, so
//! `render --format json` and `update --format json` read alike
//! (docs/json.md documents the documents).
//!
//! - [`PatchResult`]: one patch section on one file, in `"patches"`;
//! - [`EditReport`]: one hand edit of a rendered file, in `"edits"`;
//! - the files written are a list of package-relative paths, `"changed"`,
//!   in both reports.

use serde::Serialize;

pub use crate::patch::result::{Kind, PatchResult};

/// One hand edit found in a rendered file.
#[derive(Debug, Clone, Serialize)]
pub struct EditReport {
    /// The rendered file.
    pub file: String,
    /// 1-based line in the file as it is.
    pub line: usize,
    /// The edited line's text.
    pub text: String,
    /// The patch it was folded into, with `--adopt-edits`.
    pub adopted_into: Option<String>,
}
