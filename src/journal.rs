//! The journal of an interrupted write: the plan's format, and the package as
//! an unfinished plan leaves it.
//!
//! `paths::Transaction` stages new files under `<package>/.revendor-txn/` and,
//! unless it writes a single file (whose one rename needs none), writes a plan
//! there, one [`Step`] a line, before it renames anything
//! (`paths/transaction.rs` tells the whole protocol). A run killed after that
//! leaves a plan whose renames are not all done, and the files on disk mix old
//! and new. `paths::recover` finishes it before any command reads the package;
//! where the package cannot be written (a read-only mount, a checkout of
//! another user), it cannot, and reading the files as they are would judge a
//! tree no run ever produced. So it [`install`]s a view instead: [`read`] and
//! [`is_file`] of a path the plan still has to write answer with its staged
//! bytes, and of a path it removes, as absent; a directory's listing
//! ([`amend_listing`]) gains and loses those files the same way. Nothing on disk changes; the
//! first command that can write there finishes the plan.
//!
//! It sits below `config` and `paths` because both read the package (config
//! reads vendor.toml and the lock, everything else goes through `paths`). The
//! view is process-wide, one entry per path, because the package is read from
//! many places rather than through one handle; paths are compared made
//! absolute, `.` components dropped.

mod seen;

pub use seen::{Seen, note_dir, note_missing, record, recorded, unchanged};

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// One line of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step<'a> {
    /// Rename staged file `n` over the package-relative `path`.
    Write {
        /// The staged file's name inside the staging directory.
        n: &'a str,
        /// Where it goes.
        path: &'a str,
    },
    /// Remove the package-relative `path`.
    Remove {
        /// What goes.
        path: &'a str,
    },
}

/// The plan line of a step, newline included.
impl std::fmt::Display for Step<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Write { n, path } => writeln!(f, "write {n} {path}"),
            Step::Remove { path } => writeln!(f, "remove {path}"),
        }
    }
}

/// A plan line that is not a step revendor writes: its 1-based number and
/// text. A plan is read by every command, and a line naming `../x` or an
/// absolute path would be obeyed outside the package, so one such line
/// refuses the whole plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadStep {
    /// The line's number in the plan.
    pub line: usize,
    /// The line as written.
    pub text: String,
}

/// The steps of a plan, in order, each naming a package-relative path (no
/// `..`, `.`, empty or absolute part, no control character) and, for a
/// write, a staged file's number.
pub fn steps(plan: &str) -> Result<Vec<Step<'_>>, BadStep> {
    plan.lines()
        .enumerate()
        .map(|(at, line)| {
            let step = if let Some(rest) = line.strip_prefix("write ") {
                rest.split_once(' ')
                    .map(|(n, path)| Step::Write { n, path })
                    .filter(|_| !rest.is_empty())
            } else {
                line.strip_prefix("remove ")
                    .map(|path| Step::Remove { path })
            };
            step.filter(is_safe).ok_or_else(|| BadStep {
                line: at + 1,
                text: line.to_owned(),
            })
        })
        .collect()
}

/// Whether a step stays inside the package and names a staged file by number.
fn is_safe(step: &Step<'_>) -> bool {
    let (n, path) = match step {
        Step::Write { n, path } => (Some(*n), *path),
        Step::Remove { path } => (None, *path),
    };
    let n_ok = n.is_none_or(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    n_ok && !path.is_empty()
        && !path.chars().any(char::is_control)
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
}

/// Where a read of a path goes instead of the path itself.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Redirect {
    /// The staged file holding its new bytes.
    Staged(PathBuf),
    /// Nowhere: the plan removes it.
    Removed,
}

static INSTALLED: AtomicBool = AtomicBool::new(false);
static VIEW: OnceLock<Mutex<HashMap<PathBuf, Redirect>>> = OnceLock::new();

fn view() -> MutexGuard<'static, HashMap<PathBuf, Redirect>> {
    VIEW.get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

fn key(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    absolute
        .components()
        .filter(|c| *c != Component::CurDir)
        .collect()
}

/// Whether a view is installed: the package is then read as an unfinished
/// plan leaves it, not as the disk holds it.
pub fn viewing() -> bool {
    INSTALLED.load(Ordering::Acquire)
}

fn redirect(path: &Path) -> Option<Redirect> {
    if !INSTALLED.load(Ordering::Acquire) {
        return None;
    }
    view().get(&key(path)).cloned()
}

/// Makes reads of the package at `root` see what `steps` (staged under
/// `staging`) leave. A write whose staged file is gone was already renamed
/// into place, and reads the disk.
pub fn install(root: &Path, staging: &Path, steps: &[Step<'_>]) {
    let mut view = view();
    for step in steps {
        match step {
            Step::Write { n, path } => {
                let staged = staging.join(n);
                if staged.exists() {
                    view.insert(key(&root.join(path)), Redirect::Staged(staged));
                }
            }
            Step::Remove { path } => {
                view.insert(key(&root.join(path)), Redirect::Removed);
            }
        }
    }
    INSTALLED.store(true, Ordering::Release);
}

/// The bytes of `path` as the package reads; a file the view removes is
/// missing with the same error as any missing file.
pub fn read(path: &Path) -> std::io::Result<Vec<u8>> {
    match redirect(path) {
        Some(Redirect::Removed) => Err(std::io::Error::from_raw_os_error(ENOENT)),
        Some(Redirect::Staged(staged)) => std::fs::read(staged),
        None if seen::recording() => read_identified(path).map(|(bytes, _)| bytes),
        None => read_regular(path),
    }
}

/// The bytes of `path` as the package reads, with the identity of the file they were read
/// from when that is a regular file that did not change while it was read (a staged file of
/// an unfinished write has none: its name is not the package's).
pub fn read_identified(path: &Path) -> std::io::Result<(Vec<u8>, Option<FileIdentity>)> {
    match redirect(path) {
        Some(Redirect::Removed) => Err(std::io::Error::from_raw_os_error(ENOENT)),
        Some(Redirect::Staged(staged)) => Ok((std::fs::read(staged)?, None)),
        None => {
            let read = open_and_read(path).and_then(|(bytes, file, before)| {
                let after = FileIdentity::of(&file.metadata()?);
                Ok((bytes, (before == after).then_some(after)))
            });
            if seen::recording() {
                seen::note(
                    path,
                    &read.as_ref().map(|(_, id)| id.clone()).map_err(copy_error),
                );
            }
            read
        }
    }
}

/// An error's kind and code again, for the record of reads.
fn copy_error(e: &std::io::Error) -> std::io::Error {
    e.raw_os_error()
        .map_or_else(|| e.kind().into(), std::io::Error::from_raw_os_error)
}

/// What names one version of a file without reading it: device, inode, size, and the
/// modification and change times to the nanosecond, which is what git's index keeps to know a
/// file unchanged. Any write moves the change time, which no program can set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileIdentity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl FileIdentity {
    /// The identity of what is at `path` now (symlinks followed).
    pub fn of_path(path: &Path) -> std::io::Result<FileIdentity> {
        std::fs::metadata(path).map(|meta| FileIdentity::of(&meta))
    }

    fn of(meta: &std::fs::Metadata) -> FileIdentity {
        use std::os::unix::fs::MetadataExt;
        FileIdentity {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// Whether the file last changed (its change time) at least `settled` before `now`.
    pub fn changed_before(&self, now: std::time::SystemTime, settled: std::time::Duration) -> bool {
        let (Ok(secs), Ok(nanos)) = (u64::try_from(self.ctime.0), u32::try_from(self.ctime.1))
        else {
            return false;
        };
        let changed = std::time::UNIX_EPOCH + std::time::Duration::new(secs, nanos);
        now.duration_since(changed).is_ok_and(|age| age >= settled)
    }
}

/// Reads back what [`FileIdentity`]'s `Display` writes; anything else is an error.
impl std::str::FromStr for FileIdentity {
    type Err = ();

    fn from_str(text: &str) -> Result<FileIdentity, ()> {
        let mut fields = text.split(' ');
        let mut number = || fields.next().and_then(|f| f.parse::<u64>().ok()).ok_or(());
        let (dev, ino, size) = (number()?, number()?, number()?);
        let mut time = || -> Result<(i64, i64), ()> {
            let (secs, nanos) = fields.next().and_then(|f| f.split_once('.')).ok_or(())?;
            Ok((
                secs.parse().map_err(|_| ())?,
                nanos.parse().map_err(|_| ())?,
            ))
        };
        let (mtime, ctime) = (time()?, time()?);
        if fields.next().is_some() {
            return Err(());
        }
        Ok(FileIdentity {
            dev,
            ino,
            size,
            mtime,
            ctime,
        })
    }
}

/// `dev ino size mtime ctime`, the times as `seconds.nanoseconds`.
impl std::fmt::Display for FileIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (m, c) = (self.mtime, self.ctime);
        write!(
            f,
            "{} {} {} {}.{:09} {}.{:09}",
            self.dev, self.ino, self.size, m.0, m.1, c.0, c.1
        )
    }
}

/// The largest file of a package revendor reads: as large as the largest
/// vendored file (`upstream::MAX_FILE`), so a pristine copy always fits.
pub const MAX_FILE: u64 = 64 << 20;

/// The bytes of `path` when it is a regular file (symlinks followed).
/// Anything else is refused once opened without blocking: a FIFO where a
/// file is expected (a vendor.toml, a patch) would otherwise hang the run
/// until something wrote to it (issue 21). A file larger than [`MAX_FILE`]
/// is refused before it is read, with [`std::io::ErrorKind::FileTooLarge`].
fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    open_and_read(path).map(|(bytes, _, _)| bytes)
}

/// [`read_regular`], with the open file and its identity before the read.
fn open_and_read(path: &Path) -> std::io::Result<(Vec<u8>, std::fs::File, FileIdentity)> {
    use std::os::unix::fs::OpenOptionsExt;
    let nonblock = rustix::fs::OFlags::NONBLOCK.bits() as i32;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nonblock)
        .open(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(std::io::Error::from_raw_os_error(EISDIR));
    }
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, a socket or a device): revendor reads only files here",
        ));
    }
    if meta.len() > MAX_FILE {
        return Err(std::io::ErrorKind::FileTooLarge.into());
    }
    let bytes = read_sized(&mut file, usize::try_from(meta.len()).unwrap_or(0))?;
    Ok((bytes, file, FileIdentity::of(&meta)))
}

/// The bytes of `file`, `len` long when it was asked: read to that size, then to the end.
/// `File::read_to_end` would ask the size and the position again (a statx and an lseek a
/// file; issue 23). Read into one buffer of the right size, not mapped: a mapping would save
/// the copy, but another process writing the file would then change bytes already verified
/// against the lock (or compared with a render), and one truncating it would kill the run
/// with SIGBUS; a read is a private copy whose identity [`read_identified`] checks.
fn read_sized(file: &mut std::fs::File, len: usize) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = vec![0; len];
    let mut filled = 0;
    while filled < len {
        match file.read(&mut bytes[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    bytes.truncate(filled);
    if filled == len {
        // The file may have grown since its size was asked.
        let mut more = [0; 1];
        let n = loop {
            match file.read(&mut more) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                other => break other?,
            }
        };
        if n > 0 {
            bytes.extend_from_slice(&more[..n]);
            file.read_to_end(&mut bytes)?;
        }
    }
    Ok(bytes)
}

/// [`read`] as UTF-8 text.
pub fn read_to_string(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read(path)?)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// Whether `path` is a file, as [`read`] sees the package.
pub fn is_file(path: &Path) -> bool {
    match redirect(path) {
        Some(Redirect::Removed) => false,
        Some(Redirect::Staged(_)) => true,
        None if seen::recording() => {
            let meta = std::fs::metadata(path);
            seen::note(
                path,
                &meta
                    .as_ref()
                    .map(|m| Some(FileIdentity::of(m)))
                    .map_err(copy_error),
            );
            meta.is_ok_and(|m| m.is_file())
        }
        None => path.is_file(),
    }
}

/// `listed`, the package-relative files found on disk under `dir` (a
/// package-relative directory ending with `/`) of the package at `root`, as
/// the view sees them: with the files the plan still writes there, without
/// those it removes; sorted.
pub fn amend_listing(root: &Path, dir: &str, listed: &mut Vec<String>) {
    if !INSTALLED.load(Ordering::Acquire) {
        return;
    }
    let root = key(root);
    for (path, redirect) in view().iter() {
        let Some(rel) = path.strip_prefix(&root).ok().and_then(Path::to_str) else {
            continue;
        };
        if !rel.starts_with(dir) {
            continue;
        }
        match redirect {
            Redirect::Staged(_) => listed.push(rel.to_owned()),
            Redirect::Removed => listed.retain(|l| l != rel),
        }
    }
    listed.sort();
    listed.dedup();
}

/// `ENOENT` on every Unix.
const ENOENT: i32 = 2;

/// `EISDIR` on every Unix.
const EISDIR: i32 = 21;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_reads_back_its_steps() {
        let steps_in = [
            Step::Write {
                n: "0",
                path: "templates/a b.yml",
            },
            Step::Remove { path: "old file" },
        ];
        let plan: String = steps_in.iter().map(ToString::to_string).collect();
        assert_eq!(plan, "write 0 templates/a b.yml\nremove old file\n");
        assert_eq!(steps(&plan).unwrap(), steps_in);
    }

    /// Every command reads a plan left in the package; one that names a path outside it
    /// (committed by someone else, or a file name holding a line break) is refused whole.
    #[test]
    fn a_plan_line_leaving_the_package_refuses_the_plan() {
        for (plan, line) in [
            ("garbage\n", 1),
            ("write 1\n", 1),
            ("write 0 ok\nremove ../../x\n", 2),
            ("write 0 /etc/passwd\n", 1),
            ("write ../0 a\n", 1),
            ("remove a//b\n", 1),
            ("remove a/./b\n", 1),
            ("remove \n", 1),
            ("write 0 a\tb\n", 1),
        ] {
            let err = steps(plan).unwrap_err();
            assert_eq!(err.line, line, "{plan:?}");
        }
    }

    #[test]
    fn a_record_names_each_file_read_and_each_path_found_missing() {
        let dir = tempfile::tempdir().unwrap();
        let (file, gone) = (dir.path().join("a"), dir.path().join("gone"));
        std::fs::write(&file, "one").unwrap();
        record();
        assert_eq!(read(&file).unwrap(), b"one");
        assert!(read(&gone).is_err() && !is_file(&gone));
        let seen = recorded().expect("every read pinned down");
        assert_eq!(seen.len(), 2);
        assert!(seen.iter().all(|(path, id)| unchanged(path, id)));
        let (_, id) = seen.iter().find(|(p, _)| p.ends_with("a")).unwrap();
        let id = id.clone().expect("a file read has an identity");
        assert_eq!(id.to_string().parse::<FileIdentity>(), Ok(id.clone()));
        // Rewritten: another identity; created: no longer missing.
        std::fs::write(&file, "three").unwrap();
        std::fs::write(&gone, "").unwrap();
        assert!(seen.iter().all(|(path, id)| !unchanged(path, id)));
        assert!(recorded().is_none(), "a record is handed over once");
        assert!("1 2 3 4.5".parse::<FileIdentity>().is_err());
    }

    #[test]
    fn a_fifo_where_a_file_is_expected_is_refused_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("vendor.toml");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let err = read(&fifo).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let err = read(dir.path()).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(EISDIR));
    }

    #[test]
    fn the_view_reads_staged_bytes_and_hides_removed_files() {
        let dir = tempfile::tempdir().unwrap();
        let (root, staging) = (dir.path().join("pkg"), dir.path().join("staging"));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&staging).unwrap();
        for (name, bytes) in [("new", "disk"), ("gone", "disk"), ("done", "disk")] {
            std::fs::write(root.join(name), bytes).unwrap();
        }
        std::fs::write(staging.join("0"), "staged").unwrap();
        let plan = "write 0 new\nwrite 1 done\nremove gone\n";
        install(&root, &staging, &steps(plan).unwrap());
        assert_eq!(read(&root.join("./new")).unwrap(), b"staged");
        // Staged file 1 is gone: renamed into place before the kill.
        assert_eq!(read(&root.join("done")).unwrap(), b"disk");
        let gone = read(&root.join("gone")).unwrap_err();
        assert_eq!(gone.kind(), std::io::ErrorKind::NotFound);
        assert!(!is_file(&root.join("gone")) && is_file(&root.join("new")));
        assert!(root.join("gone").is_file(), "the disk is not touched");

        std::fs::create_dir_all(root.join("d/sub")).unwrap();
        std::fs::write(staging.join("2"), "added").unwrap();
        let plan = "write 2 d/sub/added\nremove d/old\n";
        install(&root, &staging, &steps(plan).unwrap());
        let mut listed = vec!["d/old".to_owned(), "d/kept".to_owned()];
        amend_listing(&root, "d/", &mut listed);
        assert_eq!(listed, ["d/kept", "d/sub/added"]);
        let mut other = vec!["e/x".to_owned()];
        amend_listing(&root, "e/", &mut other);
        assert_eq!(other, ["e/x"]);
    }
}
