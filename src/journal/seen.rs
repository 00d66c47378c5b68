//! What one run read of the package, so that a result made from those reads can be
//! remembered by them and known still to hold without reading them again (issue 23: a
//! `render` of an unchanged package read, hashed and patched 5 MB to find nothing to do).
//!
//! [`record`] starts a record; from then on every read of the package through the journal
//! notes what it found at its path: the identity of the file read ([`FileIdentity`]: device,
//! inode, size, modification and change times), of a directory listed, or nothing there.
//! [`recorded`] hands the record over, unless a read could not be pinned down (a file that
//! changed while it was read, an error other than a missing file, a package read through an
//! unfinished plan's view): then there is none, and nothing may be remembered.
//!
//! A later run asks [`unchanged`] of each path: the same identity there, or still nothing.
//! Identity is what git's index trusts to know a file unchanged; like git, the caller must
//! remember only a record whose files last changed a while before it was taken
//! ([`FileIdentity::changed_before`]), since two writes within one tick of the file system's
//! clock leave the same times.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::FileIdentity;

/// What was at a path when it was read: a file's or directory's identity, or nothing.
pub type Seen = Option<FileIdentity>;

/// The paths read so far (absolute), and what was at each.
type Paths = BTreeMap<PathBuf, Seen>;

/// A record being made: the working directory relative paths are read from (asked once,
/// not once a read), and the paths read, `None` once a read could not be pinned down.
struct Record {
    cwd: PathBuf,
    paths: Option<Paths>,
}

thread_local! {
    /// The record of this thread's reads, when one is being made. A thread's own: a command
    /// records the reads of the thread that runs it, and a test beside it on another thread
    /// adds nothing to it.
    static RECORD: RefCell<Option<Record>> = const { RefCell::new(None) };
}

/// Starts a record of this thread's reads; a package read through an unfinished plan's
/// view is not what the disk holds, and gives none, nor does a working directory that
/// cannot be named.
pub fn record() {
    let cwd = std::env::current_dir();
    let paths = (!super::viewing() && cwd.is_ok()).then(BTreeMap::new);
    let cwd = cwd.unwrap_or_default();
    RECORD.with_borrow_mut(|record| *record = Some(Record { cwd, paths }));
}

/// Ends the record and hands it over, each path absolute: `None` when a read could not be
/// pinned down, or no record was started.
pub fn recorded() -> Option<Vec<(PathBuf, Seen)>> {
    RECORD
        .with_borrow_mut(Option::take)
        .and_then(|record| record.paths)
        .map(|paths| paths.into_iter().collect())
}

/// Whether reads are being recorded.
pub(super) fn recording() -> bool {
    RECORD.with_borrow(Option::is_some)
}

/// Notes what a read of `path` found: the identity of what it read (`Ok(None)`: it changed
/// while it was read), or an error; only a missing file is something to remember.
pub(super) fn note(path: &Path, found: &std::io::Result<Option<FileIdentity>>) {
    let seen = match found {
        Ok(Some(id)) => Some(Some(id.clone())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(None),
        Ok(None) | Err(_) => None,
    };
    RECORD.with_borrow_mut(|record| {
        let Some(Record { cwd, paths }) = record else {
            return;
        };
        let key = cwd
            .join(path)
            .components()
            .filter(|c| *c != std::path::Component::CurDir)
            .collect();
        let (Some(known), Some(seen)) = (paths.as_mut(), seen) else {
            *paths = None;
            return;
        };
        // Read twice and found otherwise: the run did not read one tree.
        if known
            .insert(key, seen.clone())
            .is_some_and(|before| before != seen)
        {
            *paths = None;
        }
    });
}

/// Notes that `path` is missing, when a listing of its directory (the writer's) said so.
pub fn note_missing(path: &Path) {
    if recording() {
        note(path, &Err(std::io::ErrorKind::NotFound.into()));
    }
}

/// Notes the identity of the directory `dir` before it is listed: an entry added or
/// removed since moves its times.
pub fn note_dir(dir: &Path) {
    if recording() {
        note(dir, &FileIdentity::of_path(dir).map(Some));
    }
}

/// Whether `path` holds what `seen` says was there: the same identity, or still nothing.
pub fn unchanged(path: &Path, seen: &Seen) -> bool {
    match (FileIdentity::of_path(path), seen) {
        (Ok(now), Some(then)) => now == *then,
        (Err(e), None) => e.kind() == std::io::ErrorKind::NotFound,
        _ => false,
    }
}
