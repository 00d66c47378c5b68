//! Commits written with git2 without touching the user's index, `HEAD` or
//! work tree: a commit's tree is a base commit's tree with a package's
//! changed files put in (read from the work tree), so a file staged or
//! untracked elsewhere in the repository never rides along.

use std::path::Path;

use git2::{IndexEntry, IndexTime, Oid, Signature, Time};

use super::repo::{Change, Repo, Status, error};
use crate::env::{Env, GitIdentity};
use crate::error::{Error, Result};

/// Who the commit is by: `GIT_AUTHOR_*` and `GIT_COMMITTER_*`, each part
/// unset falling back to git config's `user.name` and `user.email`.
pub struct Identity {
    /// The author.
    pub author: Signature<'static>,
    /// The committer, who signs off.
    pub committer: Signature<'static>,
}

impl Identity {
    /// The identities of this run.
    pub fn of(repo: &Repo, env: &Env) -> Result<Identity> {
        let config = repo.git.config().ok();
        let get = |key: &str| config.as_ref().and_then(|c| c.get_string(key).ok());
        let sign = |who: &GitIdentity, var: &str| -> Result<Signature<'static>> {
            let (Some(name), Some(email)) = (
                who.name.clone().or_else(|| get("user.name")),
                who.email.clone().or_else(|| get("user.email")),
            ) else {
                return Err(Error::usage(
                    format!("`pr --create` commits, and there is no {var} identity"),
                    format!(
                        "set {var}_NAME and {var}_EMAIL, or git config user.name and user.email"
                    ),
                ));
            };
            let signature = match &who.date {
                Some(date) => Signature::new(&name, &email, &parse_date(date, var)?),
                None => Signature::now(&name, &email),
            };
            signature.map_err(|e| {
                Error::usage(
                    format!(
                        "{var} identity `{name} <{email}>` is not usable: {}",
                        e.message()
                    ),
                    format!("fix {var}_NAME and {var}_EMAIL"),
                )
            })
        };
        Ok(Identity {
            author: sign(&env.git_author, "GIT_AUTHOR")?,
            committer: sign(&env.git_committer, "GIT_COMMITTER")?,
        })
    }

    /// Whether `commit` was made by these identities: its author and its
    /// committer have their names and emails (the dates aside). An amend
    /// by anyone else changes the committer.
    pub fn made(&self, commit: &git2::Commit<'_>) -> bool {
        let same = |a: &Signature<'_>, b: &Signature<'_>| {
            a.name_bytes() == b.name_bytes() && a.email_bytes() == b.email_bytes()
        };
        same(&commit.author(), &self.author) && same(&commit.committer(), &self.committer)
    }

    /// `Name <email>` of the committer, for `Signed-off-by:`.
    pub fn signoff(&self) -> String {
        format!(
            "{} <{}>",
            self.committer.name().unwrap_or_default(),
            self.committer.email().unwrap_or_default()
        )
    }
}

/// git's internal date format, `[@]<epoch> [+-]hhmm`, the one
/// `GIT_*_DATE` is given in by scripts.
fn parse_date(date: &str, var: &str) -> Result<Time> {
    let bad = || {
        Error::usage(
            format!("{var}_DATE = `{date}` is not `@<seconds since 1970> +hhmm`"),
            format!("set {var}_DATE in git's internal format, or unset it"),
        )
    };
    let mut parts = date.trim().trim_start_matches('@').split_whitespace();
    let seconds: i64 = parts.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
    let offset = match parts.next() {
        None => 0,
        Some(z) if z.len() == 5 && (z.starts_with('+') || z.starts_with('-')) => {
            let hours: i32 = z[1..3].parse().map_err(|_| bad())?;
            let minutes: i32 = z[3..5].parse().map_err(|_| bad())?;
            let sign = if z.starts_with('-') { -1 } else { 1 };
            sign * (hours * 60 + minutes)
        }
        Some(_) => return Err(bad()),
    };
    if parts.next().is_some() {
        return Err(bad());
    }
    Ok(Time::new(seconds, offset))
}

/// The tree of the base commit with the package's `changes` applied from
/// the work tree at `root` (the package directory).
pub fn tree(repo: &Repo, base: Oid, changes: &[Change], root: &Path) -> Result<Oid> {
    let err = error("build the upgrade commit's tree");
    let mut index = git2::Index::new().map_err(&err)?;
    index.read_tree(&repo.tree(base)?).map_err(&err)?;
    for change in changes {
        let full = repo.full(&change.path);
        if change.status == Status::Deleted {
            index.remove_path(Path::new(&full)).map_err(&err)?;
            continue;
        }
        let path = root.join(&change.path);
        let meta = std::fs::symlink_metadata(&path).map_err(crate::paths::io("read", &path))?;
        let (mode, bytes) = if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&path).map_err(crate::paths::io("read", &path))?;
            (0o120000, target.to_string_lossy().into_owned().into_bytes())
        } else {
            let bytes = crate::paths::read(&path)?;
            (file_mode(&meta), bytes)
        };
        let id = repo.git.blob(&bytes).map_err(&err)?;
        index
            .add(&IndexEntry {
                ctime: IndexTime::new(0, 0),
                mtime: IndexTime::new(0, 0),
                dev: 0,
                ino: 0,
                mode,
                uid: 0,
                gid: 0,
                file_size: u32::try_from(bytes.len()).unwrap_or(u32::MAX),
                id,
                flags: u16::try_from(full.len()).unwrap_or(0xfff).min(0xfff),
                flags_extended: 0,
                path: full.into_bytes(),
            })
            .map_err(&err)?;
    }
    index.write_tree_to(&repo.git).map_err(&err)
}

#[cfg(unix)]
fn file_mode(meta: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    if meta.permissions().mode() & 0o111 != 0 {
        0o100755
    } else {
        0o100644
    }
}

#[cfg(not(unix))]
fn file_mode(_: &std::fs::Metadata) -> u32 {
    0o100644
}

/// Writes the commit (no ref moves) and returns it.
pub fn commit(repo: &Repo, base: Oid, tree: Oid, who: &Identity, message: &str) -> Result<Oid> {
    let err = error("write the upgrade commit");
    let parent = repo.git.find_commit(base).map_err(&err)?;
    let tree = repo.git.find_tree(tree).map_err(&err)?;
    repo.git
        .commit(
            None,
            &who.author,
            &who.committer,
            message,
            &tree,
            &[&parent],
        )
        .map_err(&err)
}

/// Whether `head` is exactly the commit this run would make: on `base`,
/// with `tree` and `message`. Re-running then pushes nothing.
pub fn is_same(repo: &Repo, head: Oid, base: Oid, tree: Oid, message: &str) -> bool {
    repo.git.find_commit(head).is_ok_and(|c| {
        c.message().is_ok_and(|m| m == message)
            && c.tree_id() == tree
            && c.parent_count() == 1
            && c.parent_id(0).ok() == Some(base)
    })
}

/// The commits reachable from `head` and not from `base`, newest first.
pub fn between(repo: &Repo, head: Oid, base: Oid) -> Result<Vec<git2::Commit<'_>>> {
    let err = error("read the upgrade branch's commits");
    let mut walk = repo.git.revwalk().map_err(&err)?;
    walk.push(head).map_err(&err)?;
    walk.hide(base).map_err(&err)?;
    walk.map(|oid| repo.git.find_commit(oid.map_err(&err)?).map_err(&err))
        .collect()
}

/// Whether `commit` changes nothing outside `package` (a path from the work
/// tree's root; empty for all of it) compared with its only parent: the
/// shape of every commit [`tree`] builds.
pub fn only_touches(repo: &Repo, commit: &git2::Commit<'_>, package: &str) -> Result<bool> {
    let err = error("read the upgrade branch's commits");
    if commit.parent_count() != 1 {
        return Ok(false);
    }
    let parent = commit.parent(0).and_then(|p| p.tree()).map_err(&err)?;
    let tree = commit.tree().map_err(&err)?;
    let diff = repo
        .git
        .diff_tree_to_tree(Some(&parent), Some(&tree), None)
        .map_err(&err)?;
    let prefix = format!("{package}/");
    Ok(package.is_empty()
        || diff.deltas().all(|d| {
            [d.old_file().path(), d.new_file().path()]
                .into_iter()
                .flatten()
                .all(|p| p.to_str().is_some_and(|p| p.starts_with(&prefix)))
        }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_read_in_gits_internal_format() {
        let t = parse_date("@1767225600 +0130", "GIT_AUTHOR").unwrap();
        assert_eq!((t.seconds(), t.offset_minutes()), (1_767_225_600, 90));
        let t = parse_date("1767225600 -0500", "GIT_AUTHOR").unwrap();
        assert_eq!(t.offset_minutes(), -300);
        let e = parse_date("yesterday", "GIT_COMMITTER").unwrap_err();
        assert!(e.to_string().contains("GIT_COMMITTER_DATE"), "{e}");
    }
}
