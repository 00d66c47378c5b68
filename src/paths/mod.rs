//! The only writer of the package tree, and file reads with path context.
//!
//! Every command that changes files builds a [`Transaction`]: new contents are
//! staged, then swapped in together, so a failure at any point leaves the tree
//! as it was. See `transaction.rs` for how a kill is survived, and
//! `bounds.rs` for where it refuses to write, `collide.rs` for names that are
//! one file on macOS or Windows, and `lock.rs` for the lock
//! every run holds on its package while it reads or writes it. Reads go through
//! [`crate::journal`], so a package holding a write that could not be
//! finished reads as that write leaves it.

mod bounds;
mod collide;
pub mod lock;
mod transaction;

pub use collide::collisions;
pub use lock::{Access, PackageLock, hold};
pub use transaction::{Recovery, Transaction, recover};

pub use crate::journal::{FileIdentity, Seen, record, recorded, unchanged, viewing};

use std::path::Path;

use crate::error::{Error, Result};
use crate::journal;

/// The directory, inside the package, where a transaction stages its files.
pub const STAGING_DIR: &str = ".revendor-txn";

/// Reads a file, naming it on failure; a file past [`journal::MAX_FILE`] is
/// [`Error::TooLarge`] (the package's own, so exit 2).
pub fn read(path: &Path) -> Result<Vec<u8>> {
    journal::read(path).map_err(|source| read_error(path, source))
}

/// Reads a file that may be absent.
pub fn read_opt(path: &Path) -> Result<Option<Vec<u8>>> {
    match journal::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(read_error(path, source)),
    }
}

/// [`read_opt`], with the identity of the file read when it has one
/// ([`journal::read_identified`]).
pub fn read_opt_identified(path: &Path) -> Result<Option<(Vec<u8>, Option<FileIdentity>)>> {
    match journal::read_identified(path) {
        Ok(read) => Ok(Some(read)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(read_error(path, source)),
    }
}

/// Whether `path` is a regular file as the package reads now: a file a
/// write that could not be finished still stages is one, a file it removes
/// is not.
pub fn is_file(path: &Path) -> bool {
    journal::is_file(path)
}

fn read_error(path: &Path, source: std::io::Error) -> Error {
    if source.kind() == std::io::ErrorKind::FileTooLarge {
        return Error::TooLarge {
            what: format!("`{}`", path.display()),
            limit: format!("at most {} MiB a file", journal::MAX_FILE >> 20),
            remote: false,
        };
    }
    Error::Io {
        action: "read",
        path: path.to_path_buf(),
        source,
    }
}

/// Every regular file under `dir` (package-relative, ending with `/`) of the
/// package at `root`, recursively, as package-relative `/`-separated paths,
/// sorted. Symlinks are not followed; a directory that does not exist holds
/// nothing. A package holding a write that could not be finished is listed
/// as that write leaves it.
pub fn list(root: &Path, dir: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_string()];
    while let Some(rel) = pending.pop() {
        let path = root.join(&rel);
        journal::note_dir(&path);
        let entries = match std::fs::read_dir(&path) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => return Err(io("list", &path)(source)),
        };
        for entry in entries {
            let entry = entry.map_err(io("list", &path))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let kind = entry.file_type().map_err(io("list", &entry.path()))?;
            if kind.is_dir() {
                pending.push(format!("{rel}{name}/"));
            } else if kind.is_file() {
                out.push(format!("{rel}{name}"));
            }
        }
    }
    out.sort();
    journal::amend_listing(root, dir, &mut out);
    Ok(out)
}

/// Wraps an I/O error with the action and path.
pub(crate) fn io<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> Error + 'a {
    move |source| Error::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}
