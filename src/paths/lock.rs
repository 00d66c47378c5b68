//! One writer at a time (DESIGN.md): the lock a run holds on its package.
//!
//! 1. [`hold`] opens the package directory itself and takes an OS file lock
//!    (`flock`) on it: exclusive for a command that writes the package,
//!    shared for one that only reads it. A lock that is taken waits, polling,
//!    for up to `REVENDOR_LOCK_TIMEOUT` seconds, saying once who holds it;
//!    past that the run stops with [`Error::Locked`] (exit 3).
//! 2. Under the lock it settles what a killed run left in `.revendor-txn/`,
//!    touching the journal only while it holds the lock exclusively: a
//!    writer finishes or discards it ([`super::recover`]); a reader takes the
//!    lock exclusively for that only when nobody else holds the package, and
//!    otherwise leaves the journal alone and reads the package as its plan
//!    leaves it ([`Recovery::Deferred`]). A reader never waits behind
//!    another reader, and never sees a live writer's journal: it takes its
//!    shared lock only once the writer is done.
//! 3. The lock is held until the [`PackageLock`] is dropped, at the end of
//!    the run. The OS releases it when the process dies, however it dies, so
//!    a killed run never leaves a stale lock.
//!
//! Why the directory and not a lock file: nothing is created in the tree
//! (a monorepo checkout needs no `.gitignore` entry, Helm and git never see
//! it), it works on a read-only package, and every process that reaches the
//! package by any path locks the same inode. A waiting run names the
//! processes holding that inode as the kernel lists them (`/proc/locks`, with
//! each one's command line); where there is no such list it says only that
//! another revendor holds the package.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

use rustix::fs::{FlockOperation, flock};

use super::{Recovery, STAGING_DIR, recover, transaction};
use crate::error::{Error, Result};

/// How a run uses its package.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// It writes the package: an exclusive lock.
    Write,
    /// It only reads the package: a shared lock.
    Read,
    /// It reads no package of its own (`check --all` opens one run per
    /// package, each with its own lock): no lock, and the journal is left
    /// to those runs.
    None,
}

/// How long a run waits for the lock: `REVENDOR_LOCK_TIMEOUT`.
#[derive(Debug, Clone, Copy)]
pub struct Waiting {
    /// How long, in all, before it gives up.
    pub timeout: Duration,
}

/// The lock a run holds on its package until it is dropped (the OS
/// releases it with the directory's file descriptor).
#[derive(Debug)]
pub struct PackageLock {
    /// The package directory, opened to lock it; none when there is no
    /// package directory to lock (the command then fails on its own terms).
    dir: Option<File>,
}

/// Takes the package at `root` for `access` and settles any interrupted
/// write there as that access allows; `waiting` is told once who holds it
/// when the lock must be waited for.
pub fn hold(
    root: &Path,
    access: Access,
    waiting: &Waiting,
    on_wait: &mut dyn FnMut(&str),
) -> Result<(PackageLock, Recovery)> {
    let mut lock = PackageLock { dir: None };
    if access == Access::None {
        return Ok((lock, Recovery::Clean));
    }
    lock.dir = match File::open(root) {
        Ok(dir) if dir.metadata().is_ok_and(|m| m.is_dir()) => Some(dir),
        // No package directory: nothing to lock, nothing to recover; the
        // command says what is missing.
        _ => return Ok((lock, Recovery::Clean)),
    };
    if access == Access::Write {
        lock.wait(Mode::Exclusive, root, waiting, on_wait)?;
        return Ok((lock, recover(root)?));
    }
    lock.wait(Mode::Shared, root, waiting, on_wait)?;
    if !root.join(STAGING_DIR).exists() {
        return Ok((lock, Recovery::Clean));
    }
    // A killed run's journal: finish it only with the package to ourselves.
    lock.unlock();
    let recovery = if lock.try_lock(Mode::Exclusive) {
        recover(root)
    } else {
        Ok(Recovery::Clean)
    };
    lock.wait(Mode::Shared, root, waiting, on_wait)?;
    let recovery = recovery?;
    if root.join(STAGING_DIR).exists() && !matches!(recovery, Recovery::ReadOnly { .. }) {
        return Ok((lock, transaction::defer(root)?));
    }
    Ok((lock, recovery))
}

/// Which lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Exclusive,
    Shared,
}

/// How often a waiting run tries the lock again.
const POLL: Duration = Duration::from_millis(100);

impl PackageLock {
    /// Takes the lock in `mode`, waiting up to `waiting.timeout`.
    fn wait(
        &self,
        mode: Mode,
        root: &Path,
        waiting: &Waiting,
        on_wait: &mut dyn FnMut(&str),
    ) -> Result<()> {
        if self.try_lock(mode) {
            return Ok(());
        }
        on_wait(&self.holder());
        let start = Instant::now();
        loop {
            std::thread::sleep(POLL.min(waiting.timeout));
            if self.try_lock(mode) {
                return Ok(());
            }
            if start.elapsed() >= waiting.timeout {
                return Err(Error::Locked {
                    package: root.to_path_buf(),
                    holder: self.holder(),
                    seconds: waiting.timeout.as_secs_f64(),
                });
            }
        }
    }

    /// Tries the lock once; an error other than "held" (a file system
    /// without locks) counts as taken, so revendor still runs there.
    fn try_lock(&self, mode: Mode) -> bool {
        let Some(dir) = &self.dir else { return true };
        let op = match mode {
            Mode::Exclusive => FlockOperation::NonBlockingLockExclusive,
            Mode::Shared => FlockOperation::NonBlockingLockShared,
        };
        match flock(dir, op) {
            Ok(()) => true,
            Err(e) => e != rustix::io::Errno::WOULDBLOCK && e != rustix::io::Errno::INTR,
        }
    }

    fn unlock(&self) {
        if let Some(dir) = &self.dir {
            let _ = flock(dir, FlockOperation::Unlock);
        }
    }

    /// Who holds the package: each process the kernel lists with a lock on
    /// its directory, by command line and id.
    fn holder(&self) -> String {
        let Some(meta) = self.dir.as_ref().and_then(|d| d.metadata().ok()) else {
            return "another revendor".into();
        };
        let inode = format!(
            "{:02x}:{:02x}:{}",
            rustix::fs::major(meta.dev()),
            rustix::fs::minor(meta.dev()),
            meta.ino()
        );
        let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
        let holders: Vec<String> = holders(&locks, &inode)
            .into_iter()
            .filter(|pid| *pid != std::process::id())
            .map(|pid| format!("`{}` (pid {pid})", command_of(pid)))
            .collect();
        if holders.is_empty() {
            "another revendor".into()
        } else {
            holders.join(", ")
        }
    }
}

/// The processes `/proc/locks` (its text: `locks`) lists with a `flock` on
/// the inode `dev:ino` (`fe:00:10102861`), in order, each once.
fn holders(locks: &str, inode: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for line in locks.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // `1: FLOCK  ADVISORY  WRITE 17910 fe:00:6004743 0 EOF`
        if fields.get(1) == Some(&"FLOCK")
            && fields.get(5) == Some(&inode)
            && let Some(pid) = fields.get(4).and_then(|p| p.parse::<u32>().ok())
            && !pids.contains(&pid)
        {
            pids.push(pid);
        }
    }
    pids
}

/// A process's command line, its program named by file name alone, as a
/// terminal may show it (control characters escaped); `revendor` when it
/// cannot be read (another user's process).
fn command_of(pid: u32) -> String {
    let Ok(raw) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return "revendor".into();
    };
    let mut args = raw
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned());
    let program = args.next().unwrap_or_default();
    let program = Path::new(&program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or(program);
    let line: String = std::iter::once(program)
        .chain(args)
        .collect::<Vec<_>>()
        .join(" ");
    line.chars()
        .take(200)
        .collect::<String>()
        .escape_debug()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(secs: u64) -> Waiting {
        Waiting {
            timeout: Duration::from_secs(secs),
        }
    }

    #[test]
    fn readers_share_and_a_writer_waits_for_them_then_gives_up() {
        let dir = tempfile::tempdir().unwrap();
        let mut told = Vec::new();
        let mut tell = |h: &str| told.push(h.to_owned());
        let (_a, _) = hold(dir.path(), Access::Read, &waiting(0), &mut tell).unwrap();
        let (_b, _) = hold(dir.path(), Access::Read, &waiting(0), &mut tell).unwrap();
        let err = hold(dir.path(), Access::Write, &waiting(0), &mut tell).unwrap_err();
        assert!(matches!(err, Error::Locked { .. }), "{err}");
        assert_eq!(told.len(), 1, "{told:?}");
        drop((_a, _b));
        assert!(hold(dir.path(), Access::Write, &waiting(0), &mut |_| {}).is_ok());
    }

    #[test]
    fn a_reader_waits_for_a_writer_and_takes_the_package_once_it_is_done() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, _) = hold(dir.path(), Access::Write, &waiting(0), &mut |_| {}).unwrap();
        let err = hold(dir.path(), Access::Read, &waiting(0), &mut |_| {}).unwrap_err();
        assert!(matches!(err, Error::Locked { .. }), "{err}");
        drop(writer);
        assert!(hold(dir.path(), Access::Read, &waiting(0), &mut |_| {}).is_ok());
    }

    #[test]
    fn the_holders_are_read_from_the_kernels_list_of_locks() {
        let locks = "1: FLOCK  ADVISORY  WRITE 17910 fe:00:6004743 0 EOF\n\
                     2: FLOCK  ADVISORY  READ 12 fe:00:10133507 0 EOF\n\
                     3: POSIX  ADVISORY  WRITE 13 fe:00:10133507 0 EOF\n\
                     4: FLOCK  ADVISORY  READ 14 fe:00:10133507 0 EOF\n\
                     5: FLOCK  ADVISORY  READ 12 fe:00:10133507 0 EOF\n";
        assert_eq!(holders(locks, "fe:00:10133507"), [12, 14]);
        assert!(holders(locks, "fe:00:1").is_empty());
    }

    #[test]
    fn no_package_directory_is_nothing_to_lock() {
        let dir = tempfile::tempdir().unwrap();
        let absent = dir.path().join("absent");
        let (lock, recovery) = hold(&absent, Access::Write, &waiting(0), &mut |_| {}).unwrap();
        assert!(lock.dir.is_none());
        assert_eq!(recovery, Recovery::Clean);
    }

    /// A killed run's journal that another reader's presence keeps this one
    /// from finishing is read through, never touched.
    #[test]
    fn a_reader_beside_another_reader_leaves_the_journal_alone() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a"), "old").unwrap();
        std::fs::create_dir(root.join(STAGING_DIR)).unwrap();
        std::fs::write(root.join(STAGING_DIR).join("0"), "new").unwrap();
        std::fs::write(root.join(STAGING_DIR).join("plan"), "write 0 a\n").unwrap();
        let (other, _) = hold(root, Access::Read, &waiting(0), &mut |_| {}).unwrap();
        // `other` found the journal alone and finished it; a new one, as if killed since.
        std::fs::write(root.join("a"), "old").unwrap();
        std::fs::create_dir(root.join(STAGING_DIR)).unwrap();
        std::fs::write(root.join(STAGING_DIR).join("0"), "new").unwrap();
        std::fs::write(root.join(STAGING_DIR).join("plan"), "write 0 a\n").unwrap();
        let (_lock, recovery) = hold(root, Access::Read, &waiting(0), &mut |_| {}).unwrap();
        assert_eq!(recovery, Recovery::Deferred { committed: true });
        assert_eq!(std::fs::read(root.join("a")).unwrap(), b"old");
        assert_eq!(crate::paths::read(&root.join("a")).unwrap(), b"new");
        drop(other);
    }
}
