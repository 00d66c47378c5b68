//! The base commit the upgrade is compared with.
//!
//! The merge-base of `HEAD` with `--base BRANCH` (origin's branch before a
//! local one), else with origin's default branch
//! (`refs/remotes/origin/HEAD`), else `HEAD`; revendor's own commits for
//! the package are stepped over, so a checkout of the upgrade branch
//! compares with what it was made on.

use git2::Oid;

use super::ownership;
use crate::error::{Error, Result};
use crate::git::Repo;

/// The commit the upgrade is compared with.
#[derive(Debug, Clone)]
pub(super) struct Base {
    /// The commit.
    pub commit: Oid,
    /// The branch it was found on, when one was named or is origin's
    /// default: where the pull request merges into.
    pub branch: Option<String>,
}

/// The base commit of `repo`, for `--base asked` when given: see the module
/// documentation.
pub(super) fn base(repo: &Repo, asked: Option<&str>) -> Result<Base> {
    let head = repo.head();
    let (target, branch) = match asked {
        Some(asked) => {
            let found = repo.branch_or_commit(asked).ok_or_else(|| {
                Error::usage(
                    format!("`{asked}` is not a branch or commit of this repository"),
                    "pass an existing branch to --base (fetch it first when only origin has it)",
                )
            })?;
            let name = asked.strip_prefix("origin/").unwrap_or(asked);
            (found, Some(name.to_owned()))
        }
        None => match repo.origin_default() {
            Some((oid, name)) => (oid, Some(name)),
            None => {
                let head = head.ok_or_else(|| {
                    Error::usage(
                        "the repository has no commit to compare the package with",
                        "commit the package before the upgrade, or pass --base",
                    )
                })?;
                (head, None)
            }
        },
    };
    let mut commit = match head {
        Some(h) if h != target => repo.git.merge_base(h, target).unwrap_or(target),
        _ => target,
    };
    while let Ok(c) = repo.git.find_commit(commit) {
        match c.parent_id(0) {
            Ok(parent) if c.parent_count() == 1 && ownership::has_trailer(&c, &repo.package) => {
                commit = parent;
            }
            _ => break,
        }
    }
    Ok(Base { commit, branch })
}
