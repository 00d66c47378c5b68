//! All-or-nothing writes of several files.
//!
//! 1. [`Transaction::stage`] collects new contents in memory.
//! 2. [`Transaction::commit`] looks at what is at each path once (one listing
//!    of each directory holding several, one look at a path alone), refuses
//!    any change leaving the package, drops the changes that change nothing,
//!    writes the rest under
//!    `<package>/.revendor-txn/`, fsyncs them, then writes the plan
//!    (`plan.tmp` renamed to `plan`, the staging directory fsynced): the
//!    commit point.
//! 3. Each staged file is renamed over its destination (one atomic rename per
//!    file) and deletions are carried out; every directory renamed into or
//!    removed from, and the parent of every directory made or removed, is
//!    fsynced, and only then is the plan removed, then the staging directory.
//!    One fsync per file written and one per directory (issue 23).
//! 4. A transaction that writes one file and removes nothing (a render of one
//!    file, most of them) writes no plan: its staged file, synced, renamed
//!    over the destination is all or nothing by itself, so that rename is the
//!    commit point; the destination's directory is then synced and the
//!    emptied staging directory removed. Two fsyncs, where the plan costs
//!    five. A destination whose directory does not exist yet goes through
//!    the plan, which makes the directory after its commit point.
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
//!   lose a rename the journal no longer records;
//! - a staging directory without a plan is also what a one-file write leaves
//!   when killed after its rename: empty, or (after a power loss that kept
//!   the rename but not the staged name's removal) holding a second name of
//!   the new file. Deleting it changes nothing in the tree, so `recover`
//!   does not tell the two apart: a staging directory without a plan is
//!   always removed, and the tree is the old one or the new one as the
//!   rename left it.
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

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use super::{STAGING_DIR, io};
use crate::error::{Error, Result};
use crate::journal::{self, Seen, Step, steps};

/// A set of writes and deletions applied together.
#[derive(Debug)]
pub struct Transaction {
    root: PathBuf,
    changes: BTreeMap<String, Change>,
    /// What was at a path when the caller read it to judge it.
    guards: HashMap<String, Seen>,
}

/// One staged change.
#[derive(Debug)]
struct Change {
    /// The new bytes; `None` removes the file.
    new: Option<Vec<u8>>,
    /// When it is a change.
    when: When,
}

/// When a staged change changes the file on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum When {
    /// When the file holds other bytes: read to find out.
    Differs,
    /// Always: the caller compared them, or [`Transaction::changed_paths`]
    /// did, so nothing reads the file again to find out.
    Known,
    /// When no file is there, whatever one there holds.
    Missing,
}

/// What [`recover`] found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovery {
    /// No interrupted transaction.
    Clean,
    /// An interrupted transaction without a plan was discarded: it had not
    /// reached its commit point, or it wrote one file and had renamed it
    /// into place (nothing tells the two apart, and deleting what is left
    /// changes no file): every file is whole, the old one or that one new.
    RolledBack,
    /// An interrupted transaction after its commit point was completed.
    Completed,
    /// An interrupted transaction the package cannot be written to finish or
    /// discard. When `committed`, reads through `paths` see the tree as its
    /// plan leaves it (the files on disk stay mixed); otherwise only the
    /// staging directory is left, and every file is whole (see
    /// [`Recovery::RolledBack`]).
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
            guards: HashMap::new(),
        }
    }

    /// Stages `bytes` for the package-relative `path`; the commit leaves the
    /// file alone if it already holds them.
    pub fn stage(&mut self, path: &str, bytes: Vec<u8>) {
        self.put(path, Some(bytes), When::Differs);
    }

    /// Stages `bytes` for `path`, which the caller read and found to hold
    /// other bytes, or missing: the commit writes it without reading the
    /// file again (a 5 MB render was read twice).
    pub fn stage_changed(&mut self, path: &str, bytes: Vec<u8>) {
        self.put(path, Some(bytes), When::Known);
    }

    /// Stages `bytes` for `path` when no file is there; a file there, whatever
    /// it holds, is left alone (a pristine copy the caller read and verified
    /// from it), and not looked for again when a listing answers.
    pub fn stage_missing(&mut self, path: &str, bytes: Vec<u8>) {
        self.put(path, Some(bytes), When::Missing);
    }

    /// Stages the removal of `path`.
    pub fn remove(&mut self, path: &str) {
        self.put(path, None, When::Differs);
    }

    /// Makes the commit write or remove `path` only while it holds what
    /// `seen` says the caller found there when it read it (the file's
    /// identity, or nothing): a hand edit made while the command ran, after
    /// its hand-edit check read the file, is never written over; the whole
    /// commit stops with [`Error::ChangedDuringRun`] instead. Identity is
    /// what git's index trusts (see [`crate::journal::FileIdentity`]); a
    /// path the commit leaves alone is not looked at.
    pub fn guard(&mut self, path: &str, seen: Seen) {
        self.guards.insert(path.to_string(), seen);
    }

    /// Reads `path` to judge it (`None`: no file there) and guards it with
    /// what the read found ([`Transaction::guard`]). A file that changed
    /// while it was read is being edited: that is the error the commit would
    /// give, given now. Read through an unfinished write's view, a file has
    /// no identity to guard it by, and this transaction's commit is refused
    /// until that write is finished anyway.
    pub fn read_guarded(&mut self, path: &str) -> Result<Option<Vec<u8>>> {
        let at = self.root.join(path);
        match super::read_opt_identified(&at)? {
            None => {
                self.guard(path, None);
                Ok(None)
            }
            Some((bytes, Some(identity))) => {
                self.guard(path, Some(identity));
                Ok(Some(bytes))
            }
            Some((_, None)) if !journal::viewing() => Err(Error::ChangedDuringRun {
                path: PathBuf::from(path),
            }),
            Some((bytes, None)) => Ok(Some(bytes)),
        }
    }

    /// A new transaction on the same package holding this one's guards and
    /// nothing staged: what an update that stops on a conflict commits
    /// instead (its marked files) is judged by the same reads.
    pub fn guarded_alike(&self) -> Transaction {
        Transaction {
            guards: self.guards.clone(),
            ..Transaction::new(&self.root)
        }
    }

    fn put(&mut self, path: &str, new: Option<Vec<u8>>, when: When) {
        self.changes.insert(path.to_string(), Change { new, when });
    }

    /// The staged contents of `path`, if staged for writing.
    pub fn staged(&self, path: &str) -> Option<&[u8]> {
        self.changes.get(path).and_then(|c| c.new.as_deref())
    }

    /// Drops the changes that would leave a file as it is; returns the paths
    /// that will really change, in order.
    pub fn changed_paths(&mut self) -> Result<Vec<String>> {
        let disk = OnDisk::look(&self.root, self.changes.keys());
        self.drop_unchanged(&disk)?;
        Ok(self.changes.keys().cloned().collect())
    }

    /// [`Transaction::changed_paths`] with what is on disk looked at
    /// already: a file `disk` knows to be missing is not read.
    fn drop_unchanged(&mut self, disk: &OnDisk) -> Result<()> {
        let mut keep = BTreeMap::new();
        for (path, change) in std::mem::take(&mut self.changes) {
            let differs = match (change.when, disk.entry(&path)) {
                (When::Known, _) => true,
                (_, Entry::Absent) => change.new.is_some(),
                (When::Missing, Entry::Unknown) => !super::is_file(&self.root.join(&path)),
                // A symlink to nothing holds no file: written over, as a missing
                // copy is (the bounds check decides whether it may be).
                (When::Missing, Entry::Symlink) => !self.root.join(&path).exists(),
                (When::Missing, _) => false,
                (When::Differs, _) => super::read_opt(&self.root.join(&path))? != change.new,
            };
            if differs {
                let when = When::Known;
                keep.insert(path, Change { when, ..change });
            }
        }
        self.changes = keep;
        Ok(())
    }

    /// Writes every staged change, all or nothing. Returns the changed paths.
    ///
    /// A change that would land outside the package (through a symlink, or
    /// `..`), in git's directory or in the staging directory is refused
    /// before anything is read through it or written, whatever it would
    /// change: vendor.toml validation names such paths first, with their
    /// line; this is the writer keeping its own promise.
    pub fn commit(mut self) -> Result<Vec<String>> {
        if let Some(path) = self.changes.keys().find(|path| !plain(path)) {
            // The plan names paths as written, and recovery obeys no `.`, `..`
            // or empty part: refused here, before the commit point, not after.
            return Err(Error::usage(
                format!("refusing to write `{path}`: it has an empty, `.` or `..` part"),
                "name the file in vendor.toml by its plain package-relative path",
            ));
        }
        let disk = OnDisk::look(&self.root, self.changes.keys());
        // Every change, before a file is read to compare it: whether a path
        // leaving the package is refused must not hang on what it finds there.
        super::bounds::check_listed(
            &self.root,
            self.changes.keys().map(String::as_str),
            |path| disk.symlink(path),
        )?;
        self.drop_unchanged(&disk)?;
        let changed: Vec<String> = self.changes.keys().cloned().collect();
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
        let staged = self.stage_files(&staging, &disk).and_then(|()| {
            match self.rename_alone(&staging, &disk) {
                Ok(true) => Ok(None),
                Ok(false) => self.write_plan(&staging, &plan_path).map(Some),
                Err(e) => Err(e),
            }
        });
        let plan = match staged {
            Ok(Some(plan)) => plan,
            Ok(None) => return Ok(changed),
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
        // The plan is this run's own, made of paths checked above: read back
        // without asking the disk about them again.
        let steps = steps(&plan).map_err(|bad| {
            Error::usage(
                format!(
                    "{}:{}: `{}` is not a step",
                    plan_path.display(),
                    bad.line,
                    bad.text
                ),
                "report this: revendor wrote a plan it cannot read",
            )
        })?;
        roll_forward(
            &self.root,
            &staging,
            &steps,
            &Run::Commit { dirs: &disk.dirs },
        )?;
        Ok(changed)
    }

    /// Writes every staged file under `staging` (the `n`th change's as
    /// `n`), each synced.
    ///
    /// Only a file that exists (`disk`) is asked for its mode (kept on the
    /// new copy): a new one has none to keep, and is not looked for.
    fn stage_files(&self, staging: &Path, disk: &OnDisk) -> Result<()> {
        for (n, (path, change)) in self.changes.iter().enumerate() {
            let Some(bytes) = &change.new else { continue };
            let staged = staging.join(n.to_string());
            let mode = match disk.entry(path) {
                Entry::Absent | Entry::Other => None,
                Entry::File(Some(mode)) => Some(mode),
                Entry::File(None) | Entry::Symlink | Entry::Unknown => {
                    fs::metadata(self.root.join(path))
                        .ok()
                        .map(|m| m.permissions())
                }
            };
            write_synced(&staged, bytes, mode)?;
        }
        Ok(())
    }

    /// Writes the plan of the staged changes (`plan.tmp` renamed to
    /// `plan_path`, the commit point); returns it.
    fn write_plan(&self, staging: &Path, plan_path: &Path) -> Result<String> {
        let mut plan = String::new();
        for (n, (path, change)) in self.changes.iter().enumerate() {
            let n = n.to_string();
            let step = match change.new {
                Some(_) => Step::Write { n: &n, path },
                None => Step::Remove { path },
            };
            plan.push_str(&step.to_string());
        }
        // As late as it can be: writing and syncing the staged files is
        // the slow part, and a file edited during it is still caught.
        self.check_guards()?;
        let tmp = staging.join("plan.tmp");
        write_synced(&tmp, plan.as_bytes(), None)?;
        fs::rename(&tmp, plan_path).map_err(io("rename", &tmp))?;
        sync_dir(staging)?;
        Ok(plan)
    }

    /// A transaction writing one file and nothing else needs no plan: its
    /// staged file (`0`, synced) renamed over the destination is all or
    /// nothing by itself, and that rename is the commit point. The
    /// destination's directory is synced, then the emptied staging directory
    /// removed. Returns whether it was done so; not when the transaction
    /// changes more, nor when the destination's directory is missing (a
    /// crash after making it and before the rename would leave an empty
    /// directory in the old tree): the plan then makes it.
    fn rename_alone(&self, staging: &Path, disk: &OnDisk) -> Result<bool> {
        let mut changes = self.changes.iter();
        let (Some((path, change)), None) = (changes.next(), changes.next()) else {
            return Ok(false);
        };
        if change.new.is_none() {
            return Ok(false);
        }
        let (from, to) = (staging.join("0"), self.root.join(path));
        let dir = to.parent().unwrap_or(&self.root);
        if dir != self.root && !disk.dirs.contains(dir) {
            match fs::symlink_metadata(dir) {
                Ok(meta) if meta.is_dir() => {}
                _ => return Ok(false),
            }
        }
        // Just before the commit point, as for a plan.
        self.check_guards()?;
        fs::rename(&from, &to).map_err(io("rename", &from))?;
        sync_dir(dir)?;
        // Left behind by a crash, the empty staging directory is rolled back
        // by `recover`, which removes it and changes nothing else.
        fs::remove_dir(staging).map_err(io("remove", staging))?;
        Ok(true)
    }
}

impl Transaction {
    /// Refuses the commit when a guarded path it changes no longer holds
    /// what its caller read there.
    fn check_guards(&self) -> Result<()> {
        for path in self.changes.keys() {
            let Some(seen) = self.guards.get(path) else {
                continue;
            };
            if !journal::unchanged(&self.root.join(path), seen) {
                return Err(Error::ChangedDuringRun {
                    path: PathBuf::from(path),
                });
            }
        }
        Ok(())
    }
}

/// Whether `path` has no empty, `.` or `..` part: what a plan line may name.
fn plain(path: &str) -> bool {
    path.split('/')
        .all(|part| !part.is_empty() && part != "." && part != "..")
}

/// What is at a changed path, as [`OnDisk::look`] found it.
#[derive(Debug, Clone)]
enum Entry {
    /// Nothing.
    Absent,
    /// A regular file, with its mode when the look read it.
    File(Option<fs::Permissions>),
    /// A symlink (followed where it is read or its mode kept).
    Symlink,
    /// A directory, FIFO or other thing a write will fail on.
    Other,
    /// Not looked at: the package is read through an unfinished plan's
    /// view, or its directory could not be listed.
    Unknown,
}

/// What is at each changed path of a commit, and which of their directories
/// exist: one listing of each directory holding several changed paths, one
/// look at a path alone in its directory, and nothing asked twice (issue 23:
/// a commit of 1,000 files made 10,012 statx calls, 6,009 of them failing).
#[derive(Debug, Default)]
struct OnDisk {
    entries: HashMap<String, Entry>,
    /// The destination directories known to exist.
    dirs: HashSet<PathBuf>,
}

impl OnDisk {
    fn look<'a>(root: &Path, paths: impl Iterator<Item = &'a String>) -> OnDisk {
        let mut disk = OnDisk::default();
        if journal::viewing() {
            // The disk is not what the package reads: every read goes through the view.
            return disk;
        }
        let mut by_dir: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for path in paths {
            let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
            by_dir.entry(dir).or_default().push(name);
        }
        for (dir, names) in by_dir {
            let at = root.join(dir);
            let join = |name: &str| {
                if dir.is_empty() {
                    name.to_owned()
                } else {
                    format!("{dir}/{name}")
                }
            };
            if let [name] = names[..] {
                let entry = match fs::symlink_metadata(at.join(name)) {
                    Ok(meta) => {
                        disk.dirs.insert(at.clone());
                        Entry::of(meta.file_type(), Some(meta.permissions()))
                    }
                    Err(e) if e.kind() == ErrorKind::NotFound => Entry::Absent,
                    Err(_) => Entry::Unknown,
                };
                disk.note(root, join(name), entry);
                continue;
            }
            let listed = match listing_kinds(&at) {
                Ok(listed) => {
                    disk.dirs.insert(at.clone());
                    Some(listed)
                }
                Err(e) if e.kind() == ErrorKind::NotFound => Some(HashMap::new()),
                Err(_) => None,
            };
            for name in names {
                let entry = match &listed {
                    Some(listed) => listed
                        .get(name)
                        .map_or(Entry::Absent, |kind| Entry::of(*kind, None)),
                    None => Entry::Unknown,
                };
                disk.note(root, join(name), entry);
            }
        }
        disk
    }

    /// Keeps what is at `path`; a missing file is also noted in the record
    /// of what this run read ([`journal::record`]), as a read would.
    fn note(&mut self, root: &Path, path: String, entry: Entry) {
        if matches!(entry, Entry::Absent) {
            journal::note_missing(&root.join(&path));
        }
        self.entries.insert(path, entry);
    }

    fn entry(&self, path: &str) -> Entry {
        self.entries.get(path).cloned().unwrap_or(Entry::Unknown)
    }

    /// Whether `path` is a symlink, when the look knows.
    fn symlink(&self, path: &str) -> Option<bool> {
        match self.entries.get(path)? {
            Entry::Unknown => None,
            entry => Some(matches!(entry, Entry::Symlink)),
        }
    }
}

impl Entry {
    fn of(kind: fs::FileType, mode: Option<fs::Permissions>) -> Entry {
        if kind.is_symlink() {
            Entry::Symlink
        } else if kind.is_file() {
            Entry::File(mode)
        } else {
            Entry::Other
        }
    }
}

/// Each entry of `dir` by name, with its type as the listing gives it.
fn listing_kinds(dir: &Path) -> std::io::Result<HashMap<String, fs::FileType>> {
    let mut kinds = HashMap::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        if let Ok(name) = entry.file_name().into_string() {
            kinds.insert(name, entry.file_type()?);
        }
    }
    Ok(kinds)
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
            let steps = plan_steps(root, &plan_path, &plan)?;
            // The staged files not yet renamed, from one listing: after a
            // kill, those already renamed are gone.
            let staged = listing(&staging)?;
            roll_forward(root, &staging, &steps, &Run::Recover { staged })?;
            Ok(Recovery::Completed)
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {
            fs::remove_dir_all(&staging).map_err(io("remove", &staging))?;
            Ok(Recovery::RolledBack)
        }
        Err(source) => Err(io("read", &plan_path)(source)),
    }
}

/// Who rolls a plan forward, which decides what it must sync.
enum Run<'a> {
    /// The commit that wrote the plan, in the same process: every staged
    /// file is there, `dirs` are the destination directories known to
    /// exist, and a directory's parent needs syncing only when this run
    /// made the directory.
    Commit {
        /// The destination directories known to exist.
        dirs: &'a HashSet<PathBuf>,
    },
    /// [`recover`], after a kill: `staged` are the staged files not yet
    /// renamed, and every directory up to the package is synced, since the
    /// killed run may have made any of them without syncing its parent.
    Recover {
        /// The names left in the staging directory.
        staged: BTreeSet<String>,
    },
}

fn roll_forward(root: &Path, staging: &Path, steps: &[Step<'_>], run: &Run<'_>) -> Result<()> {
    // Every directory an entry was renamed into or removed from, and the
    // parent of each directory made or removed: a directory's own entry
    // needs its parent synced too.
    let mut touched = BTreeSet::new();
    let touch = |touched: &mut BTreeSet<PathBuf>, path: &Path| match run {
        Run::Commit { .. } => {
            touched.extend(path.parent().map(Path::to_path_buf));
        }
        Run::Recover { .. } => touched.extend(ancestors(root, path)),
    };
    // The directories made or found so far: none is asked about twice.
    let mut found: HashSet<PathBuf> = HashSet::new();
    // The directories a removal left empty and pruned: no longer there, whatever
    // the look before the commit found (an upstream renaming the only file of a
    // directory removes it, then writes into it).
    let mut pruned: HashSet<PathBuf> = HashSet::new();
    for step in steps {
        match step {
            Step::Write { n, path } => {
                let to = root.join(path);
                touch(&mut touched, &to);
                if let Run::Recover { staged } = run
                    && !staged.contains(*n)
                {
                    continue;
                }
                let from = staging.join(n);
                if let Some(parent) = to.parent()
                    && !found.contains(parent)
                {
                    let known = !pruned.contains(parent)
                        && matches!(run, Run::Commit { dirs } if dirs.contains(parent));
                    if !known {
                        make_dir(root, parent, &mut touched)?;
                    }
                    found.insert(parent.to_path_buf());
                }
                fs::rename(&from, &to).map_err(io("rename", &from))?;
            }
            Step::Remove { path } => {
                let target = root.join(path);
                touch(&mut touched, &target);
                match fs::remove_file(&target) {
                    Ok(()) => {
                        for dir in prune(root, &target) {
                            touch(&mut touched, &dir);
                            found.remove(&dir);
                            pruned.insert(dir);
                        }
                    }
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
    match run {
        // Every staged file was renamed, and `plan.tmp` became the plan: the plan is all
        // that is left, and removing it is the end of the transaction.
        Run::Commit { .. } => {
            let plan = staging.join("plan");
            fs::remove_file(&plan).map_err(io("remove", &plan))?;
            fs::remove_dir(staging).map_err(io("remove", staging))?;
        }
        Run::Recover { .. } => fs::remove_dir_all(staging).map_err(io("remove", staging))?,
    }
    sync_dir(root)
}

/// Makes the directory `dir` inside `root` and those missing above it; the
/// parent of each one made goes into `touched`, to be synced.
fn make_dir(root: &Path, dir: &Path, touched: &mut BTreeSet<PathBuf>) -> Result<()> {
    match fs::create_dir(dir) {
        Ok(()) => {}
        // A file in its place fails at the rename, naming it.
        Err(e) if e.kind() == ErrorKind::AlreadyExists => return Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound && dir != root => {
            let parent = dir.parent().unwrap_or(root);
            make_dir(root, parent, touched)?;
            match fs::create_dir(dir) {
                Err(e) if e.kind() != ErrorKind::AlreadyExists => {
                    return Err(io("create", dir)(e));
                }
                _ => {}
            }
        }
        Err(source) => return Err(io("create", dir)(source)),
    }
    touched.extend(dir.parent().map(Path::to_path_buf));
    Ok(())
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
/// Returns the directories removed.
fn prune(root: &Path, file: &Path) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let mut dir = file.parent();
    while let Some(d) = dir.filter(|d| *d != root && d.starts_with(root)) {
        if fs::remove_dir(d).is_err() {
            break;
        }
        removed.push(d.to_path_buf());
        dir = d.parent();
    }
    removed
}

/// Writes `bytes` to a new file at `path`, with `mode` when given, and syncs
/// it: the mode is set on the open file before the sync, so that it is as
/// durable as the bytes when the file is renamed into place.
fn write_synced(path: &Path, bytes: &[u8], mode: Option<fs::Permissions>) -> Result<()> {
    let mut f = fs::File::create(path).map_err(io("create", path))?;
    f.write_all(bytes).map_err(io("write", path))?;
    if let Some(mode) = mode {
        f.set_permissions(mode).map_err(io("chmod", path))?;
    }
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

    /// A file edited after the command read it to judge it (here: one byte longer, so its
    /// identity differs even within one tick of the clock) stops the whole commit: the edit
    /// and every other file stay, and no staging directory is left.
    #[test]
    fn a_guarded_file_edited_since_it_was_read_stops_the_commit() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a"), "as read").unwrap();
        let mut t = Transaction::new(dir.path());
        assert_eq!(t.read_guarded("a").unwrap().unwrap(), b"as read");
        t.stage_changed("a", b"rendered".to_vec());
        t.stage("b", b"new".to_vec());
        fs::write(dir.path().join("a"), "as edited").unwrap();
        let err = t.commit().unwrap_err();
        assert!(matches!(err, Error::ChangedDuringRun { ref path } if path.ends_with("a")));
        assert_eq!(fs::read(dir.path().join("a")).unwrap(), b"as edited");
        assert!(!dir.path().join("b").exists());
        assert!(!dir.path().join(STAGING_DIR).exists());
    }

    #[test]
    fn a_file_made_where_none_was_read_stops_the_commit() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = Transaction::new(dir.path());
        assert_eq!(t.read_guarded("a").unwrap(), None);
        t.stage_changed("a", b"rendered".to_vec());
        fs::write(dir.path().join("a"), "made meanwhile").unwrap();
        assert!(matches!(t.commit(), Err(Error::ChangedDuringRun { .. })));
        assert_eq!(fs::read(dir.path().join("a")).unwrap(), b"made meanwhile");
    }

    /// Guarded and unchanged, a file is written; a guarded file the commit leaves alone is
    /// not looked at, whatever happened to it.
    #[test]
    fn a_guard_holds_only_a_path_the_commit_changes() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a"), "as read").unwrap();
        fs::write(dir.path().join("b"), "as read").unwrap();
        let mut t = Transaction::new(dir.path());
        t.read_guarded("a").unwrap();
        t.read_guarded("b").unwrap();
        t.stage_changed("a", b"rendered".to_vec());
        fs::write(dir.path().join("b"), "edited, left alone").unwrap();
        assert_eq!(t.commit().unwrap(), ["a"]);
        assert_eq!(fs::read(dir.path().join("a")).unwrap(), b"rendered");
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

    /// Upstream renamed the only file of a directory: the removal prunes the directory the
    /// look found, and the write into it makes it again.
    #[test]
    fn a_directory_emptied_and_written_into_in_one_commit_is_made_again() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("crds")).unwrap();
        fs::write(dir.path().join("crds/a.yaml"), "a").unwrap();
        let mut t = Transaction::new(dir.path());
        t.remove("crds/a.yaml");
        t.stage("crds/b.yaml", b"b".to_vec());
        assert_eq!(t.commit().unwrap(), ["crds/a.yaml", "crds/b.yaml"]);
        assert!(!dir.path().join("crds/a.yaml").exists());
        assert_eq!(fs::read(dir.path().join("crds/b.yaml")).unwrap(), b"b");
        assert!(!dir.path().join(STAGING_DIR).exists());
    }

    /// A symlink to nothing where a pristine copy belongs is no copy: not kept as present,
    /// but refused as a write through a symlink that points nowhere.
    #[test]
    fn a_dangling_symlink_where_a_copy_belongs_is_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("up")).unwrap();
        fs::write(dir.path().join("up/other"), "o").unwrap();
        std::os::unix::fs::symlink("/nonexistent/x", dir.path().join("up/copy")).unwrap();
        let mut t = Transaction::new(dir.path());
        t.stage_missing("up/other", b"ignored".to_vec());
        assert!(t.changed_paths().unwrap().is_empty());
        t.stage_missing("up/copy", b"pristine".to_vec());
        assert_eq!(t.changed_paths().unwrap(), ["up/copy"]);
        let e = t.commit().unwrap_err().to_string();
        assert!(e.contains("up/copy") && e.contains("points nowhere"), "{e}");
        assert_eq!(fs::read(dir.path().join("up/other")).unwrap(), b"o");
    }

    /// A path leaving the package is refused even when what it points at already holds the
    /// bytes, and a path with a `.` part is refused before the commit point (recovery would
    /// not obey its plan line).
    #[test]
    fn a_path_leaving_the_package_is_refused_whatever_it_would_change() {
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("x"), "same").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        let mut t = Transaction::new(dir.path());
        t.stage("link/x", b"same".to_vec());
        assert!(t.commit().unwrap_err().to_string().contains("link/x"));
        let mut t = Transaction::new(dir.path());
        t.stage("a/./b", b"b".to_vec());
        assert!(t.commit().unwrap_err().to_string().contains("a/./b"));
        assert!(!dir.path().join(STAGING_DIR).exists());
        assert!(!dir.path().join("a").exists());
    }

    /// Paths several to a directory are answered by one listing of it, a path alone by one
    /// look at it; either way an unchanged file is left alone, a missing one is not read, an
    /// existing one keeps its mode, and a new directory is made (issue 23).
    #[cfg(unix)]
    #[test]
    fn a_commit_asks_each_directory_once_and_keeps_what_it_finds() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let at = |p: &str| dir.path().join(p);
        fs::create_dir(at("many")).unwrap();
        fs::write(at("many/same"), "x").unwrap();
        fs::write(at("many/changed"), "old").unwrap();
        fs::write(at("many/kept"), "old").unwrap();
        fs::write(at("alone"), "old").unwrap();
        fs::set_permissions(at("many/changed"), fs::Permissions::from_mode(0o751)).unwrap();
        fs::set_permissions(at("alone"), fs::Permissions::from_mode(0o700)).unwrap();
        let mut t = Transaction::new(dir.path());
        t.stage("many/same", b"x".to_vec());
        t.stage("many/changed", b"new".to_vec());
        t.stage("many/new", b"n".to_vec());
        t.remove("many/never-there");
        t.stage_missing("many/kept", b"other".to_vec());
        t.stage_missing("many/copy", b"c".to_vec());
        t.stage_changed("alone", b"new".to_vec());
        t.stage("fresh/sub/file", b"f".to_vec());
        assert_eq!(
            t.commit().unwrap(),
            [
                "alone",
                "fresh/sub/file",
                "many/changed",
                "many/copy",
                "many/new"
            ]
        );
        let mode = |p: &str| fs::metadata(at(p)).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode("many/changed"), mode("alone")), (0o751, 0o700));
        for (path, bytes) in [
            ("many/changed", "new"),
            ("many/kept", "old"),
            ("many/copy", "c"),
            ("alone", "new"),
            ("fresh/sub/file", "f"),
        ] {
            assert_eq!(fs::read_to_string(at(path)).unwrap(), bytes);
        }
        assert!(!at(STAGING_DIR).exists());
    }

    #[test]
    fn unchanged_files_are_not_touched() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("same"), "x").unwrap();
        let mut t = Transaction::new(dir.path());
        t.stage("same", b"x".to_vec());
        assert!(t.commit().unwrap().is_empty());
    }

    /// One file written, in its package's root, over a file in place (its mode kept), or
    /// where no directory holds it yet (the plan's way, which makes it): whole, nothing left.
    #[cfg(unix)]
    #[test]
    fn a_one_file_commit_renames_it_into_place() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let at = |p: &str| dir.path().join(p);
        fs::create_dir(at("d")).unwrap();
        fs::write(at("d/f"), "old").unwrap();
        fs::set_permissions(at("d/f"), fs::Permissions::from_mode(0o751)).unwrap();
        for (path, bytes) in [("top", "t"), ("d/f", "new"), ("d/g", "g"), ("e/sub/h", "h")] {
            let mut t = Transaction::new(dir.path());
            t.stage(path, bytes.as_bytes().to_vec());
            assert_eq!(t.commit().unwrap(), [path]);
            assert_eq!(fs::read_to_string(at(path)).unwrap(), bytes);
            assert!(!at(STAGING_DIR).exists());
        }
        let mode = fs::metadata(at("d/f")).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o751);
    }

    /// A one-file write killed at any step leaves a staging directory without a plan, which
    /// `recover` removes: before the rename the tree is the old one, after it the new one
    /// (the staged file gone, or left as a second name by a power loss that kept the rename).
    #[test]
    fn a_one_file_write_killed_at_any_step_is_rolled_back_to_what_it_left() {
        for (staged, on_disk) in [
            (None, "old"),
            (Some("ne"), "old"),
            (Some("new"), "old"),
            (None, "new"),
            (Some("new"), "new"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let staging = dir.path().join(STAGING_DIR);
            fs::create_dir(&staging).unwrap();
            if let Some(bytes) = staged {
                fs::write(staging.join("0"), bytes).unwrap();
            }
            fs::write(dir.path().join("f"), on_disk).unwrap();
            assert_eq!(recover(dir.path()).unwrap(), Recovery::RolledBack);
            assert_eq!(fs::read_to_string(dir.path().join("f")).unwrap(), on_disk);
            assert!(!staging.exists());
        }
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
