//! `render` remembered by its inputs (issue 23): a render that changed nothing is kept with
//! every path it read, each by the identity of what was there ([`paths::Seen`]), and what it
//! said; the next render whose paths all hold the same says it again without reading,
//! hashing or patching anything (a 5 MB file of 1,000 hunks cost 13.5 ms of CPU to find
//! nothing to do, against GNU patch's 12.8 ms to apply it).
//!
//! 1. [`Memo::start`] records the run's reads ([`paths::record`]) and keys its memo by the
//!    revendor binary (path and identity: another build may render otherwise), the
//!    package's absolute path and `--adopt-edits`; a package read through an unfinished
//!    write's view (`paths::recover`) has no memo.
//! 2. [`Memo::recall`], once vendor.toml is read and valid: the remembered report, when
//!    every path the remembered render read holds what it held then (vendor.toml, the lock,
//!    every patch, pristine copy and rendered file, each directory listed, each path found
//!    missing).
//! 3. Otherwise the render runs, and [`Memo::keep`] remembers it when it wrote nothing,
//!    folded nothing and said nothing but its report, every read was pinned down, and every
//!    file and directory it read last changed [`SETTLED`] before: two writes within one
//!    tick of a file system's clock leave the same times (git's "racily clean" index entry),
//!    so a file just written is hashed and patched until it has settled.
//!
//! The memo lives in the download cache (`<cache>/verdict/render/<key>`); a lost or damaged
//! one costs only the render.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::RenderReport;
use crate::image::Digest;
use crate::ops::outcome::PatchResult;
use crate::paths::{self, FileIdentity};
use crate::upstream::SETTLED;
use crate::workspace::Context;

/// The kind of verdict in the cache.
const KIND: &str = "render";

/// One render's memo: its key, and the record of its reads while it runs.
pub(super) struct Memo<'c> {
    ctx: &'c Context,
    /// `None` when the binary cannot be named: nothing is remembered.
    key: Option<String>,
    recording: bool,
}

/// A remembered render: what it reported and said, and what it read.
#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    version: String,
    patches: Vec<PatchResult>,
    steps: Vec<(String, String)>,
    /// Each path read (absolute) with the identity of what was there, `None` for nothing.
    seen: Vec<(PathBuf, Option<String>)>,
}

impl<'c> Memo<'c> {
    /// Starts recording the reads of a render of `ctx`'s package.
    pub(super) fn start(ctx: &'c Context, adopt_edits: bool) -> Memo<'c> {
        paths::record();
        // A package read through an unfinished write's view is not the tree on disk, whose
        // files may all still be as a remembered render read them.
        let key = (!paths::viewing())
            .then(|| key(&ctx.root, adopt_edits))
            .flatten();
        Memo {
            ctx,
            key,
            recording: true,
        }
    }

    /// The report and `-v` steps of the remembered render, when every path it read holds
    /// what it held then.
    pub(super) fn recall(&mut self) -> Option<(RenderReport, Vec<(String, String)>)> {
        let bytes = self.ctx.cache.remembered(KIND, self.key.as_deref()?)?;
        let entry: Entry = serde_json::from_slice(&bytes).ok()?;
        for (path, seen) in &entry.seen {
            let seen = match seen {
                Some(id) => Some(FileIdentity::from_str(id).ok()?),
                None => None,
            };
            if !paths::unchanged(path, &seen) {
                return None;
            }
        }
        self.stop();
        let report = RenderReport {
            version: entry.version,
            patches: entry.patches,
            edits: Vec::new(),
            notes: Vec::new(),
            changed: Vec::new(),
        };
        Some((report, entry.steps))
    }

    /// Remembers `report`, with the `-v` `steps` the render said, when it can be said again
    /// from the same reads (see the module doc). `warned` is whether it warned.
    pub(super) fn keep(mut self, report: &RenderReport, steps: &[(String, String)], warned: bool) {
        let seen = self.stop();
        let quiet = report.changed.is_empty()
            && report.edits.is_empty()
            && report.notes.is_empty()
            && !warned;
        let (Some(key), Some(seen), true) = (&self.key, seen, quiet) else {
            return;
        };
        let now = SystemTime::now();
        if seen.iter().any(|(_, id)| {
            id.as_ref()
                .is_some_and(|id| !id.changed_before(now, SETTLED))
        }) {
            return;
        }
        let entry = Entry {
            version: report.version.clone(),
            patches: report.patches.clone(),
            steps: steps.to_vec(),
            seen: seen
                .into_iter()
                .map(|(path, id)| (path, id.map(|id| id.to_string())))
                .collect(),
        };
        if let Ok(bytes) = serde_json::to_vec(&entry) {
            self.ctx.cache.remember(KIND, key, &bytes);
        }
    }

    /// Ends the record of reads, handing it over.
    fn stop(&mut self) -> Option<Vec<(PathBuf, paths::Seen)>> {
        if !std::mem::take(&mut self.recording) {
            return None;
        }
        paths::recorded()
    }
}

/// A render that stops early (an error) leaves no record running behind it.
impl Drop for Memo<'_> {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The memo's key: the binary by path and identity, the package's absolute path, the flag.
fn key(root: &Path, adopt_edits: bool) -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let id = FileIdentity::of_path(&exe).ok()?;
    let root = std::path::absolute(root).ok()?;
    let text = format!(
        "revendor render 1\n{}\n{id}\n{}\n{adopt_edits}\n",
        exe.display(),
        root.display()
    );
    Some(Digest::of(text.as_bytes()).hex().to_owned())
}
