//! The repository around a package, read through git2: where the package
//! is in it, what a commit holds, and which of the package's files differ
//! between a commit and the work tree.
//!
//! Nothing here writes: not the index, not a ref, not the work tree.

use std::path::{Path, PathBuf};

use git2::{Delta, DiffOptions, Oid, Repository};

use crate::error::{Error, Result};

/// The repository holding a package.
pub struct Repo {
    /// The git2 handle.
    pub git: Repository,
    /// The work tree's root.
    pub workdir: PathBuf,
    /// The package directory relative to the work tree, `/`-separated; empty
    /// when the package is the repository's root.
    pub package: String,
}

/// How a file of the package differs between a commit and the work tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Only in the work tree.
    Added,
    /// In both, with other bytes or mode.
    Modified,
    /// Only in the commit.
    Deleted,
}

/// One changed file of the package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Relative to the package, `/`-separated.
    pub path: String,
    /// How it changed.
    pub status: Status,
}

/// A local git2 failure, named by what was attempted; libgit2's answer is
/// its cause.
pub fn error(action: &str) -> impl Fn(git2::Error) -> Error + '_ {
    move |e| Error::Repository {
        action: action.to_owned(),
        source: e.into(),
    }
}

impl Repo {
    /// The repository holding the package at `root`.
    pub fn open(root: &Path) -> Result<Repo> {
        let git = Repository::discover(root).map_err(|_| {
            Error::usage(
                format!("`{}` is not inside a git repository", root.display()),
                "run `revendor pr` in the repository that holds the package",
            )
        })?;
        let workdir = git
            .workdir()
            .ok_or_else(|| {
                Error::usage("the repository is bare", "run `revendor pr` in a checkout")
            })?
            .to_path_buf();
        let canon = |p: &Path| p.canonicalize().map_err(crate::paths::io("resolve", p));
        let (w, r) = (canon(&workdir)?, canon(root)?);
        let package = r
            .strip_prefix(&w)
            .map(|p| {
                p.components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .unwrap_or_default();
        Ok(Repo {
            git,
            workdir: w,
            package,
        })
    }

    /// `rel` (package-relative) as a path from the work tree's root.
    pub fn full(&self, rel: &str) -> String {
        if self.package.is_empty() {
            rel.to_owned()
        } else {
            format!("{}/{rel}", self.package)
        }
    }

    /// The commit `HEAD` points at, if it points at one.
    pub fn head(&self) -> Option<Oid> {
        self.git
            .head()
            .ok()
            .and_then(|h| h.peel_to_commit().ok())
            .map(|c| c.id())
    }

    /// The commit a branch or revision names: origin's branch before a
    /// local one (`asked` may say `origin/` itself), else any revision git
    /// understands.
    pub fn branch_or_commit(&self, asked: &str) -> Option<Oid> {
        let name = asked.strip_prefix("origin/").unwrap_or(asked);
        [
            format!("refs/remotes/origin/{name}"),
            format!("refs/heads/{name}"),
        ]
        .iter()
        .find_map(|r| self.git.find_reference(r).ok()?.peel_to_commit().ok())
        .or_else(|| self.git.revparse_single(asked).ok()?.peel_to_commit().ok())
        .map(|c| c.id())
    }

    /// `refs/remotes/origin/HEAD`: origin's default branch, as a clone
    /// records it, and the commit it points at.
    pub fn origin_default(&self) -> Option<(Oid, String)> {
        let reference = self.git.find_reference("refs/remotes/origin/HEAD").ok()?;
        let resolved = reference.resolve().ok()?;
        let name = resolved
            .name()
            .ok()?
            .strip_prefix("refs/remotes/origin/")?
            .to_owned();
        Some((resolved.peel_to_commit().ok()?.id(), name))
    }

    /// The URL of `origin`, when it has one.
    pub fn origin_url(&self) -> Option<String> {
        let remote = self.git.find_remote("origin").ok()?;
        remote.url().ok().map(str::to_owned)
    }

    /// The tree of `commit`.
    pub fn tree(&self, commit: Oid) -> Result<git2::Tree<'_>> {
        self.git
            .find_commit(commit)
            .and_then(|c| c.tree())
            .map_err(error("read the base commit"))
    }

    /// The bytes of the package file `rel` in `tree`; `None` when it has none.
    pub fn read_at(&self, tree: &git2::Tree<'_>, rel: &str) -> Option<Vec<u8>> {
        let entry = tree.get_path(Path::new(&self.full(rel))).ok()?;
        let blob = entry.to_object(&self.git).ok()?.peel_to_blob().ok()?;
        Some(blob.content().to_vec())
    }

    /// Every file of the package that differs between `tree` and the work
    /// tree, sorted by path: untracked ones included, ignored ones not, the
    /// index never consulted.
    pub fn changed(&self, tree: &git2::Tree<'_>) -> Result<Vec<Change>> {
        let mut opts = DiffOptions::new();
        opts.include_untracked(true)
            .recurse_untracked_dirs(true)
            .include_typechange(true);
        if !self.package.is_empty() {
            opts.pathspec(format!("{}/", self.package));
        }
        let diff = self
            .git
            .diff_tree_to_workdir(Some(tree), Some(&mut opts))
            .map_err(error("compare the work tree with the base commit"))?;
        let prefix = if self.package.is_empty() {
            String::new()
        } else {
            format!("{}/", self.package)
        };
        let mut out: Vec<Change> = diff
            .deltas()
            .filter_map(|d| {
                let status = match d.status() {
                    Delta::Added | Delta::Untracked => Status::Added,
                    Delta::Deleted => Status::Deleted,
                    Delta::Modified | Delta::Typechange => Status::Modified,
                    _ => return None,
                };
                let path = d.new_file().path().or_else(|| d.old_file().path())?;
                let path = path.to_str()?.strip_prefix(&prefix)?.to_owned();
                Some(Change { path, status })
            })
            .collect();
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out.dedup_by(|a, b| a.path == b.path);
        Ok(out)
    }
}
