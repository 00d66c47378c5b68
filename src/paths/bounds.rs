//! Where the writer may write: inside the package, never through a symlink
//! out of it, never into git's directory or its own staging directory.
//!
//! vendor.toml validation (`config::bounds`) refuses such paths with their
//! line before any command runs; `config` may not name `paths`, so the walk
//! is repeated here, where every write passes, as the last word.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

use super::STAGING_DIR;
use crate::error::{Error, Result};

/// Refuses the first of `paths` (package-relative) that the writer must not
/// touch. Each component is looked at on disk: a symlink is followed and
/// must land inside the package (a dangling one is refused). The package
/// root is resolved once, and a directory already seen to be a plain one is
/// not looked at again: a commit of 10,000 files in one directory asks
/// about that directory once (issue 23).
pub(super) fn check_all<'a>(root: &Path, paths: impl IntoIterator<Item = &'a str>) -> Result<()> {
    check_listed(root, paths, |_| None)
}

/// [`check_all`], told by `symlink` whether a path's last component is a
/// symlink when a listing of its directory already said so: a file known to
/// be absent or plain is not looked at again (issue 23: a commit of 1,000 new
/// files asked the disk about each one, twice).
pub(super) fn check_listed<'a>(
    root: &Path,
    paths: impl IntoIterator<Item = &'a str>,
    symlink: impl Fn(&str) -> Option<bool>,
) -> Result<()> {
    // No package directory yet: nothing on disk to follow.
    let root = root.canonicalize().ok();
    let mut plain_dirs = HashSet::new();
    for path in paths {
        let plain_file = symlink(path) == Some(false);
        check(root.as_deref(), path, plain_file, &mut plain_dirs)?;
    }
    Ok(())
}

/// [`check_all`] for one `path` in the package at the resolved `root`;
/// `plain_dirs` holds the paths known not to be symlinks (directories, and
/// paths found missing), and
/// `plain_file` says the last component is known not to be one.
fn check(
    root: Option<&Path>,
    path: &str,
    plain_file: bool,
    plain_dirs: &mut HashSet<PathBuf>,
) -> Result<()> {
    let refuse = |why: String| {
        Err(Error::usage(
            format!("refusing to write `{path}`: {why}"),
            "fix the path in vendor.toml, or the symlink, so that it stays inside the package",
        ))
    };
    if path.chars().any(char::is_control) {
        // The journal's plan holds one path a line; a line break in a name
        // would make it two steps.
        return refuse("its name holds a control character".into());
    }
    let rel = Path::new(path);
    if rel.components().any(|c| c.as_os_str() == ".git") {
        return refuse("it is inside git's own directory".into());
    }
    if rel
        .components()
        .next()
        .is_some_and(|c| c.as_os_str() == STAGING_DIR)
    {
        return refuse(format!("{STAGING_DIR} is the writer's staging directory"));
    }
    let Some(root) = root else {
        return Ok(());
    };
    let mut at = root.to_path_buf();
    // What the listing knows holds for the path as written, not once a
    // symlink or `..` moved the walk elsewhere.
    let mut as_written = true;
    let last = rel.components().count().saturating_sub(1);
    for (i, c) in rel.components().enumerate() {
        match c {
            Component::Normal(name) => at.push(name),
            Component::ParentDir => {
                as_written = false;
                at.pop();
            }
            Component::CurDir => continue,
            Component::RootDir | Component::Prefix(_) => {
                return refuse("it is not relative to the package".into());
            }
        }
        if plain_dirs.contains(&at) || (i == last && plain_file && as_written) {
            continue;
        }
        let kind = at.symlink_metadata().map(|m| m.file_type());
        // A directory, or nothing at all: no symlink there, nor below (a commit
        // of 1,000 files into a directory it makes asked about it 1,000 times).
        let missing = kind
            .as_ref()
            .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
        if missing || kind.as_ref().is_ok_and(|k| k.is_dir()) {
            plain_dirs.insert(at.clone());
        }
        if kind.is_ok_and(|k| k.is_symlink()) {
            as_written = false;
            match at.canonicalize() {
                Ok(target) if target.starts_with(root) => at = target,
                Ok(target) => {
                    return refuse(format!(
                        "`{}` is a symlink to `{}`, outside the package",
                        c.as_os_str().to_string_lossy(),
                        target.display()
                    ));
                }
                Err(_) => {
                    return refuse(format!(
                        "`{}` is a symlink that points nowhere",
                        c.as_os_str().to_string_lossy()
                    ));
                }
            }
        }
    }
    if !at.starts_with(root) {
        return refuse("it leaves the package directory".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gits_directory_and_the_staging_directory_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for path in [
            ".git/config",
            "a/.git/HEAD",
            ".revendor-txn/plan",
            "a\nremove ../x",
            "../x",
            "a/../../x",
        ] {
            let e = check_all(dir.path(), [path]).unwrap_err();
            assert!(
                e.to_string()
                    .starts_with(&format!("refusing to write `{path}`")),
                "{e}"
            );
        }
        check_all(dir.path(), ["templates/a.yml"]).unwrap();
        check_all(dir.path(), ["./a/../b.yml"]).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_out_of_the_package_is_refused_and_one_inside_followed() {
        let outside = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("templates")).unwrap();
        std::os::unix::fs::symlink("real", dir.path().join("inside")).unwrap();
        std::os::unix::fs::symlink("gone", dir.path().join("dangling")).unwrap();
        let e = check_all(dir.path(), ["templates/a.yml"]).unwrap_err();
        assert!(e.to_string().contains("outside the package"), "{e}");
        assert!(check_all(dir.path(), ["dangling/a.yml"]).is_err());
        check_all(dir.path(), ["inside/a.yml"]).unwrap();
    }
}
