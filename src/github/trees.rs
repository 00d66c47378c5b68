//! `GET /repos/{o}/{r}/git/trees/{ref}?recursive=1`: a whole tree in one
//! request, every file with its blob id.
//!
//! GitHub cuts the answer past 100,000 entries or 7 MB and says so with
//! `truncated`; the caller then reads the archive instead.

use serde::Deserialize;

use super::{Error, Repo};

/// The git mode of a symlink; its blob is the link target, not a file.
pub const SYMLINK_MODE: &str = "120000";

/// A tree as the API lists it.
#[derive(Debug, Deserialize)]
pub struct Tree {
    /// Whether GitHub left entries out.
    #[serde(default)]
    pub truncated: bool,
    /// Every entry, at any depth.
    pub tree: Vec<TreeEntry>,
}

/// One entry of a [`Tree`].
#[derive(Debug, Deserialize)]
pub struct TreeEntry {
    /// Its path from the top of the repository.
    pub path: String,
    /// Its git mode: [`SYMLINK_MODE`] for a link.
    pub mode: String,
    /// `blob`, `tree` or `commit` (a submodule).
    #[serde(rename = "type")]
    pub kind: String,
    /// Its object id: for a blob, the blob id of its contents.
    pub sha: String,
}

impl Repo<'_> {
    /// The recursive tree at `rev` (a tag or a commit), and the URL it came
    /// from.
    pub fn tree(&self, rev: &str) -> Result<(Tree, String), Error> {
        let url = self.api_url(&format!("/git/trees/{rev}?recursive=1"));
        let (tree, _) = self.get_json(&url, "a git tree")?;
        Ok((tree, url))
    }
}
