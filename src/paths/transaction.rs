//! All-or-nothing writes of several files.
//!
//! 1. [`Transaction::stage`] collects new contents in memory.
//! 2. [`Transaction::commit`] writes them under `<package>/.revendor-txn/`,
//!    fsyncs them, then writes the plan (`plan.tmp` renamed to `plan`): the
//!    commit point.
//! 3. Each staged file is renamed over its destination (one atomic rename per
//!    file), deletions are carried out, and the staging directory is removed.
//!
//! A kill before the plan exists leaves only the staging directory, which
//! [`recover`] deletes (roll back). A kill after it leaves a plan that
//! `recover` finishes (roll forward): renames already done are skipped,
//! because their staged file is gone. Every command calls `recover` before it
//! reads the package, so no reader ever sees a mixed tree.
//!
//! Why a journal and not one rename: the outputs live in several directories
//! (templates/, upstream/, images/, patches/), and POSIX offers no atomic
//! multi-path rename.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{STAGING_DIR, io};
use crate::error::Result;

/// A set of writes and deletions applied together.
#[derive(Debug)]
pub struct Transaction {
    root: PathBuf,
    changes: BTreeMap<String, Option<Vec<u8>>>,
}

/// What [`recover`] found and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    /// No interrupted transaction.
    Clean,
    /// An interrupted transaction before its commit point was discarded.
    RolledBack,
    /// An interrupted transaction after its commit point was completed.
    Completed,
}

impl Transaction {
    /// Starts a transaction on the package at `root`.
    pub fn new(root: &Path) -> Transaction {
        Transaction {
            root: root.to_path_buf(),
            changes: BTreeMap::new(),
        }
    }

    /// Stages `bytes` for the package-relative `path`.
    pub fn stage(&mut self, path: &str, bytes: Vec<u8>) {
        self.changes.insert(path.to_string(), Some(bytes));
    }

    /// Stages the removal of `path`.
    pub fn remove(&mut self, path: &str) {
        self.changes.insert(path.to_string(), None);
    }

    /// The staged contents of `path`, if staged for writing.
    pub fn staged(&self, path: &str) -> Option<&[u8]> {
        self.changes.get(path).and_then(|c| c.as_deref())
    }

    /// Drops the changes that would leave a file as it is; returns the paths
    /// that will really change, in order.
    pub fn changed_paths(&mut self) -> Result<Vec<String>> {
        let mut keep = BTreeMap::new();
        for (path, new) in std::mem::take(&mut self.changes) {
            let current = super::read_opt(&self.root.join(&path))?;
            if current != new {
                keep.insert(path, new);
            }
        }
        self.changes = keep;
        Ok(self.changes.keys().cloned().collect())
    }

    /// Writes every staged change, all or nothing. Returns the changed paths.
    ///
    /// A change that would land outside the package (through a symlink, or
    /// `..`), in git's directory or in the staging directory is refused
    /// before anything is written: vendor.toml validation names such paths
    /// first, with their line; this is the writer keeping its own promise.
    pub fn commit(mut self) -> Result<Vec<String>> {
        for path in self.changes.keys() {
            super::bounds::check(&self.root, path)?;
        }
        let changed = self.changed_paths()?;
        if changed.is_empty() {
            return Ok(changed);
        }
        let staging = self.root.join(STAGING_DIR);
        if staging.exists() {
            fs::remove_dir_all(&staging).map_err(io("remove", &staging))?;
        }
        fs::create_dir(&staging).map_err(io("create", &staging))?;

        let mut plan = String::new();
        for (n, (path, new)) in self.changes.iter().enumerate() {
            match new {
                Some(bytes) => {
                    let staged = staging.join(n.to_string());
                    write_synced(&staged, bytes)?;
                    if let Ok(meta) = fs::metadata(self.root.join(path)) {
                        fs::set_permissions(&staged, meta.permissions())
                            .map_err(io("chmod", &staged))?;
                    }
                    plan.push_str(&format!("write {n} {path}\n"));
                }
                None => plan.push_str(&format!("remove {path}\n")),
            }
        }
        let tmp = staging.join("plan.tmp");
        write_synced(&tmp, plan.as_bytes())?;
        let plan_path = staging.join("plan");
        fs::rename(&tmp, &plan_path).map_err(io("rename", &tmp))?;
        sync_dir(&staging)?;

        roll_forward(&self.root, &staging, &plan)?;
        Ok(changed)
    }
}

/// Finishes or discards a transaction a killed process left behind.
pub fn recover(root: &Path) -> Result<Recovery> {
    let staging = root.join(STAGING_DIR);
    if !staging.exists() {
        return Ok(Recovery::Clean);
    }
    let plan_path = staging.join("plan");
    match fs::read_to_string(&plan_path) {
        Ok(plan) => {
            roll_forward(root, &staging, &plan)?;
            Ok(Recovery::Completed)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            fs::remove_dir_all(&staging).map_err(io("remove", &staging))?;
            Ok(Recovery::RolledBack)
        }
        Err(source) => Err(io("read", &plan_path)(source)),
    }
}

fn roll_forward(root: &Path, staging: &Path, plan: &str) -> Result<()> {
    for line in plan.lines() {
        let mut parts = line.splitn(3, ' ');
        match (parts.next(), parts.next(), parts.next()) {
            (Some("write"), Some(n), Some(path)) => {
                let from = staging.join(n);
                if !from.exists() {
                    continue;
                }
                let to = root.join(path);
                if let Some(parent) = to.parent() {
                    fs::create_dir_all(parent).map_err(io("create", parent))?;
                }
                fs::rename(&from, &to).map_err(io("rename", &from))?;
            }
            (Some("remove"), Some(first), rest) => {
                let path = match rest {
                    Some(rest) => format!("{first} {rest}"),
                    None => first.to_string(),
                };
                let target = root.join(&path);
                match fs::remove_file(&target) {
                    Ok(()) => prune(root, &target),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(source) => return Err(io("remove", &target)(source)),
                }
            }
            _ => {}
        }
    }
    fs::remove_dir_all(staging).map_err(io("remove", staging))?;
    Ok(())
}

/// Removes the directories that removing `file` left empty, up to (not
/// including) the package root: a vendored directory whose last file in a
/// subdirectory upstream removed leaves no empty subdirectory behind.
fn prune(root: &Path, file: &Path) {
    let mut dir = file.parent();
    while let Some(d) = dir.filter(|d| *d != root && d.starts_with(root)) {
        if fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = fs::File::create(path).map_err(io("create", path))?;
    f.write_all(bytes).map_err(io("write", path))?;
    f.sync_all().map_err(io("sync", path))
}

fn sync_dir(dir: &Path) -> Result<()> {
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io("sync", dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_writes_and_removes_together() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("old"), "x").unwrap();
        let mut t = Transaction::new(dir.path());
        t.stage("a/b/new", b"hello".to_vec());
        t.remove("old");
        let changed = t.commit().unwrap();
        assert_eq!(changed, vec!["a/b/new", "old"]);
        assert_eq!(fs::read(dir.path().join("a/b/new")).unwrap(), b"hello");
        assert!(!dir.path().join("old").exists());
        assert!(!dir.path().join(STAGING_DIR).exists());
    }

    #[test]
    fn removing_the_last_file_of_a_directory_removes_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("c/sub/deep")).unwrap();
        fs::write(dir.path().join("c/sub/deep/a"), "x").unwrap();
        fs::write(dir.path().join("c/b"), "x").unwrap();
        let mut t = Transaction::new(dir.path());
        t.remove("c/sub/deep/a");
        t.commit().unwrap();
        assert!(!dir.path().join("c/sub").exists());
        assert!(dir.path().join("c/b").exists());
    }

    #[test]
    fn unchanged_files_are_not_touched() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("same"), "x").unwrap();
        let mut t = Transaction::new(dir.path());
        t.stage("same", b"x".to_vec());
        assert!(t.commit().unwrap().is_empty());
    }

    #[test]
    fn staging_without_plan_rolls_back() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("f"), "old").unwrap();
        fs::create_dir(dir.path().join(STAGING_DIR)).unwrap();
        fs::write(dir.path().join(STAGING_DIR).join("0"), "new").unwrap();
        assert_eq!(recover(dir.path()).unwrap(), Recovery::RolledBack);
        assert_eq!(fs::read(dir.path().join("f")).unwrap(), b"old");
        assert!(!dir.path().join(STAGING_DIR).exists());
    }

    #[test]
    fn plan_half_done_rolls_forward() {
        let dir = tempfile::tempdir().unwrap();
        let staging = dir.path().join(STAGING_DIR);
        fs::create_dir(&staging).unwrap();
        // File 0 was already renamed into place; file 1 was not.
        fs::write(dir.path().join("a"), "new-a").unwrap();
        fs::write(staging.join("1"), "new-b").unwrap();
        fs::write(dir.path().join("b"), "old-b").unwrap();
        fs::write(dir.path().join("gone"), "x").unwrap();
        fs::write(staging.join("plan"), "write 0 a\nwrite 1 b\nremove gone\n").unwrap();
        assert_eq!(recover(dir.path()).unwrap(), Recovery::Completed);
        assert_eq!(fs::read(dir.path().join("a")).unwrap(), b"new-a");
        assert_eq!(fs::read(dir.path().join("b")).unwrap(), b"new-b");
        assert!(!dir.path().join("gone").exists());
        assert!(!staging.exists());
    }
}
