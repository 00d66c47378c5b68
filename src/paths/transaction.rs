//! All-or-nothing writes of several files.
//!
//! 1. [`Transaction::stage`] collects new contents in memory.
//! 2. [`Transaction::commit`] writes them under `<package>/.revendor-txn/`,
//!    fsyncs them, then writes the plan (`plan.tmp` renamed to `plan`, the
//!    staging directory fsynced): the commit point.
//! 3. Each staged file is renamed over its destination (one atomic rename per
//!    file) and deletions are carried out; every directory renamed into or
//!    removed from is fsynced, and only then is the staging directory removed.
//!
//! What holds when a run is killed at any moment (and after a power loss):
//!
//! - every file is whole, its old bytes or its new ones, never a torn write;
//! - before the commit point nothing in the package has changed: only the
//!   staging directory exists, and [`recover`] deletes it (roll back);
//! - after it, until the next revendor command, some files may be new and
//!   others old, and exactly then `.revendor-txn/plan` exists: `recover`
//!   finishes the renames (roll forward); those already done are skipped,
//!   because their staged file is gone. The plan is removed last, after the
//!   directories holding the renamed files are fsynced, so a crash cannot
//!   lose a rename the journal no longer records.
//!
//! Every command calls `recover` before it reads the package, so no revendor
//! command reads a mixed tree. Where the package cannot be written to finish
//! the plan (a read-only mount), `recover` leaves the files alone and installs
//! a read view instead ([`crate::journal`]): the command reads the tree the plan
//! leaves, and a write refuses to start until the plan is finished.
//!
//! Why a journal and not one rename: the outputs live in several directories
//! (templates/, upstream/, images/, patches/) and vendor.toml beside them, and
//! POSIX offers no atomic multi-path rename. Swapping the whole package
//! directory would be one, but it would pull the directory out from under
//! every shell and editor open in it (`make update` runs in the package), so
//! the on-disk promise is the one above, and tools that read the tree
//! directly (helm, git, CI) see a mixed one only while `.revendor-txn/plan`
//! exists.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use super::{STAGING_DIR, io};
use crate::error::{Error, Result};
use crate::journal::{self, Step, steps};

/// A set of writes and deletions applied together.
#[derive(Debug)]
pub struct Transaction {
    root: PathBuf,
    changes: BTreeMap<String, Option<Vec<u8>>>,
}

/// What [`recover`] found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovery {
    /// No interrupted transaction.
    Clean,
    /// An interrupted transaction before its commit point was discarded.
    RolledBack,
    /// An interrupted transaction after its commit point was completed.
    Completed,
    /// An interrupted transaction the package cannot be written to finish or
    /// discard. When `committed`, reads through `paths` see the tree as its
    /// plan leaves it (the files on disk stay mixed); otherwise the tree on
    /// disk is the old one and only the staging directory is left.
    ReadOnly {
        /// Whether the transaction had reached its commit point.
        committed: bool,
        /// Why it could not be finished: the failed step and the system's answer.
        reason: String,
    },
    /// An interrupted transaction left for the next writer, because another
    /// revendor was reading the package and only a run holding it alone may
    /// touch a journal. When `committed`, reads see the tree as its plan
    /// leaves it, as with [`Recovery::ReadOnly`].
    Deferred {
        /// Whether the transaction had reached its commit point.
        committed: bool,
    },
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
        Ok(self.drop_unchanged()?.0)
    }

    /// [`Transaction::changed_paths`], and which of them are files on disk
    /// now (read once for both).
    fn drop_unchanged(&mut self) -> Result<(Vec<String>, BTreeSet<String>)> {
        let mut keep = BTreeMap::new();
        let mut existing = BTreeSet::new();
        for (path, new) in std::mem::take(&mut self.changes) {
            let current = super::read_opt(&self.root.join(&path))?;
            if current != new {
                if current.is_some() {
                    existing.insert(path.clone());
                }
                keep.insert(path, new);
            }
        }
        self.changes = keep;
        Ok((self.changes.keys().cloned().collect(), existing))
    }

    /// Writes every staged change, all or nothing. Returns the changed paths.
    ///
    /// A change that would land outside the package (through a symlink, or
    /// `..`), in git's directory or in the staging directory is refused
    /// before anything is written: vendor.toml validation names such paths
    /// first, with their line; this is the writer keeping its own promise.
    pub fn commit(mut self) -> Result<Vec<String>> {
        super::bounds::check_all(&self.root, self.changes.keys().map(String::as_str))?;
        let (changed, existing) = self.drop_unchanged()?;
        if changed.is_empty() {
            return Ok(changed);
        }
        let staging = self.root.join(STAGING_DIR);
        if staging.exists() {
            // Only when `recover` could not finish it (a read-only package): never
            // start over a plan, which would make its half-done renames permanent.
            finish(&self.root).map_err(|source| Error::Unfinished {
                package: self.root.clone(),
                source: Box::new(source),
            })?;
        }
        fs::create_dir(&staging).map_err(io("create", &staging))?;
        let plan_path = staging.join("plan");
        let plan = match self.write_staged(&staging, &plan_path, &existing) {
            Ok(plan) => plan,
            Err(e) => {
                // Before the commit point nothing in the tree has changed:
                // a failure to stage (a full disk) leaves nothing behind
                // either. After it, the plan stays for `recover`.
                if !plan_path.exists() {
                    let _ = fs::remove_dir_all(&staging);
                }
                return Err(e);
            }
        };

        roll_forward(&self.root, &staging, &plan)?;
        Ok(changed)
    }

    /// Writes every staged file under `staging`, then the plan (`plan.tmp`
    /// renamed to `plan_path`, the commit point); returns the plan.
    ///
    /// Only a file `existing` holds is asked for its mode (kept on the new
    /// copy): a new one has none to keep, and is not looked for.
    fn write_staged(
        &self,
        staging: &Path,
        plan_path: &Path,
        existing: &BTreeSet<String>,
    ) -> Result<String> {
        let mut plan = String::new();
        for (n, (path, new)) in self.changes.iter().enumerate() {
            match new {
                Some(bytes) => {
                    let staged = staging.join(n.to_string());
                    write_synced(&staged, bytes)?;
                    if existing.contains(path)
                        && let Ok(meta) = fs::metadata(self.root.join(path))
                    {
                        fs::set_permissions(&staged, meta.permissions())
                            .map_err(io("chmod", &staged))?;
                    }
                    plan.push_str(
                        &Step::Write {
                            n: &n.to_string(),
                            path,
                        }
                        .to_string(),
                    );
                }
                None => plan.push_str(&Step::Remove { path }.to_string()),
            }
        }
        let tmp = staging.join("plan.tmp");
        write_synced(&tmp, plan.as_bytes())?;
        fs::rename(&tmp, plan_path).map_err(io("rename", &tmp))?;
        sync_dir(staging)?;
        Ok(plan)
    }
}

/// Finishes or discards a transaction a killed process left behind.
///
/// A package that cannot be written to do so is not an error here: the
/// result says so, and a committed plan's view is installed for reads.
pub fn recover(root: &Path) -> Result<Recovery> {
    match finish(root) {
        Err(Error::Io {
            action,
            path,
            source,
        }) if cannot_write(&source) => {
            let reason = format!("failed to {action} `{}`: {source}", path.display());
            Ok(Recovery::ReadOnly {
                committed: view(root)?,
                reason,
            })
        }
        other => other,
    }
}

/// Leaves a killed run's transaction for the next writer, and reads the
/// package as it leaves it: what a reader does while another process holds
/// the package (`paths::lock`).
pub(super) fn defer(root: &Path) -> Result<Recovery> {
    Ok(Recovery::Deferred {
        committed: view(root)?,
    })
}

/// Installs the read view of the transaction at `root`, without touching
/// it; whether it had reached its commit point (before it, the tree on disk
/// is the old one and there is nothing to see through).
fn view(root: &Path) -> Result<bool> {
    let staging = root.join(STAGING_DIR);
    let plan_path = staging.join("plan");
    match fs::read_to_string(&plan_path) {
        Ok(plan) => {
            journal::install(root, &staging, &plan_steps(root, &plan_path, &plan)?);
            Ok(true)
        }
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
        Err(source) => Err(io("read", &plan_path)(source)),
    }
}

/// Whether an I/O error means the package cannot be written here.
fn cannot_write(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem
    )
}

/// Rolls an interrupted transaction forward or back on disk; any failure is
/// an error.
fn finish(root: &Path) -> Result<Recovery> {
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
        Err(e) if e.kind() == ErrorKind::NotFound => {
            fs::remove_dir_all(&staging).map_err(io("remove", &staging))?;
            Ok(Recovery::RolledBack)
        }
        Err(source) => Err(io("read", &plan_path)(source)),
    }
}

fn roll_forward(root: &Path, staging: &Path, plan: &str) -> Result<()> {
    // Every directory an entry was renamed into or removed from, and those
    // above it up to the package: a new directory's own entry needs its
    // parent synced too.
    let mut touched = BTreeSet::new();
    // The staged files not yet renamed, from one listing (after a kill,
    // those already renamed are gone), and the directories made or found
    // so far: nothing is asked about twice.
    let staged = listing(staging)?;
    let mut made = BTreeSet::new();
    for step in plan_steps(root, &staging.join("plan"), plan)? {
        match step {
            Step::Write { n, path } => {
                let to = root.join(path);
                touched.extend(ancestors(root, &to));
                if !staged.contains(n) {
                    continue;
                }
                let from = staging.join(n);
                if let Some(parent) = to.parent()
                    && !made.contains(parent)
                {
                    fs::create_dir_all(parent).map_err(io("create", parent))?;
                    made.insert(parent.to_path_buf());
                }
                fs::rename(&from, &to).map_err(io("rename", &from))?;
            }
            Step::Remove { path } => {
                let target = root.join(path);
                touched.extend(ancestors(root, &target));
                match fs::remove_file(&target) {
                    Ok(()) => prune(root, &target),
                    Err(e) if e.kind() == ErrorKind::NotFound => {}
                    Err(source) => return Err(io("remove", &target)(source)),
                }
            }
        }
    }
    for dir in &touched {
        match sync_dir(dir) {
            // A directory a removal left empty was pruned (its parent, synced
            // too, records that), and removing a file that was never there names
            // a directory that may not exist either: nothing to sync in them.
            Err(Error::Io { source, .. }) if source.kind() == ErrorKind::NotFound => {}
            other => other?,
        }
    }
    fs::remove_dir_all(staging).map_err(io("remove", staging))?;
    sync_dir(root)
}

/// The names of the entries of `dir`.
fn listing(dir: &Path) -> Result<BTreeSet<String>> {
    let mut names = BTreeSet::new();
    for entry in fs::read_dir(dir).map_err(io("list", dir))? {
        let entry = entry.map_err(io("list", dir))?;
        names.insert(entry.file_name().to_string_lossy().into_owned());
    }
    Ok(names)
}

/// The steps of the plan at `plan_path`; a line that is not a step revendor
/// writes (a path leaving the package, also through a symlinked directory
/// inside it: issue 21) refuses the plan before anything moves.
fn plan_steps<'a>(root: &Path, plan_path: &Path, plan: &'a str) -> Result<Vec<Step<'a>>> {
    let refuse = |line: usize, text: &str, why: &str| {
        Error::usage(
            format!(
                "{}:{line}: `{}` is not a step revendor writes: {why}",
                plan_path.display(),
                text.escape_debug()
            ),
            format!(
                "revendor did not write this plan; look at {} and remove it by hand",
                plan_path.parent().unwrap_or(plan_path).display()
            ),
        )
    };
    let steps = steps(plan).map_err(|bad| {
        refuse(
            bad.line,
            &bad.text,
            "a plan may only name paths inside the package",
        )
    })?;
    for (at, (step, line)) in steps.iter().zip(plan.lines()).enumerate() {
        let (Step::Write { path, .. } | Step::Remove { path }) = step;
        if let Err(e) = super::bounds::check_all(root, [*path]) {
            return Err(refuse(at + 1, line, &e.to_string()));
        }
    }
    Ok(steps)
}

/// The directories from `path`'s parent up to `root`, both included.
fn ancestors(root: &Path, path: &Path) -> Vec<PathBuf> {
    path.ancestors()
        .skip(1)
        .take_while(|dir| dir.starts_with(root))
        .map(Path::to_path_buf)
        .collect()
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

    #[test]
    fn a_new_commit_finishes_a_pending_plan_first() {
        let dir = tempfile::tempdir().unwrap();
        let staging = dir.path().join(STAGING_DIR);
        fs::create_dir(&staging).unwrap();
        fs::write(staging.join("0"), "new-a").unwrap();
        fs::write(dir.path().join("a"), "old-a").unwrap();
        fs::write(staging.join("plan"), "write 0 a\n").unwrap();
        let mut t = Transaction::new(dir.path());
        t.stage("b", b"b".to_vec());
        t.commit().unwrap();
        assert_eq!(fs::read(dir.path().join("a")).unwrap(), b"new-a");
        assert_eq!(fs::read(dir.path().join("b")).unwrap(), b"b");
        assert!(!staging.exists());
    }

    #[test]
    fn the_directories_renamed_into_are_the_ones_up_to_the_package() {
        let root = Path::new("/p");
        assert_eq!(
            ancestors(root, &root.join("templates/sub/x.yml")),
            [
                PathBuf::from("/p/templates/sub"),
                PathBuf::from("/p/templates"),
                PathBuf::from("/p"),
            ]
        );
        assert_eq!(ancestors(root, &root.join("vendor.toml")), [root]);
    }
}
