//! [`write_atomic`]: the one writer of the download caches' files.
//!
//! A cache entry is written to a unique temporary file next to it and renamed into place, so a
//! reader (another thread of `check --all`, another process) sees the old entry or the whole new
//! one, never half of it. The temporary file is created exclusively (`O_CREAT | O_EXCL`): a
//! file or symlink someone planted under its name is never opened or written through; another
//! name is taken instead (issue 21). The package tree is not written here: that is
//! `paths::Transaction`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Distinguishes the temporary files of threads writing the same entry at once.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` through a temporary file and a rename, creating the directory.
///
/// The temporary file is removed when the write or the rename fails.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let (tmp, mut file) = create_temporary(dir, &name)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// A new temporary file in `dir` for the entry `name`, created exclusively: a name that is
/// taken (by another writer, or by something planted there) is skipped for the next one.
fn create_temporary(dir: &Path, name: &str) -> std::io::Result<(PathBuf, std::fs::File)> {
    loop {
        let tmp = dir.join(format!(
            ".{name}.{}.{}.tmp",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        match std::fs::File::options()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_whole_files_and_leaves_no_temporary_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/entry");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path().join("a/b"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["entry"]);
    }

    #[test]
    fn a_planted_symlink_under_the_temporary_name_is_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::write(&outside, b"keep").unwrap();
        std::fs::create_dir(dir.path().join("cache")).unwrap();
        let next = NEXT.load(Ordering::Relaxed);
        for n in next..next + 64 {
            let planted = format!(".entry.{}.{n}.tmp", std::process::id());
            std::os::unix::fs::symlink(&outside, dir.path().join("cache").join(planted)).unwrap();
        }
        write_atomic(&dir.path().join("cache/entry"), b"new").unwrap();
        assert_eq!(std::fs::read(&outside).unwrap(), b"keep");
        assert_eq!(
            std::fs::read(dir.path().join("cache/entry")).unwrap(),
            b"new"
        );
    }

    #[test]
    fn a_failed_rename_removes_the_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("taken");
        std::fs::create_dir_all(target.join("non-empty")).unwrap();
        assert!(write_atomic(&target, b"x").is_err());
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["taken"]);
    }
}
