//! Which commits on the upgrade branch are revendor's, so that it never
//! pushes over anyone else's.
//!
//! Every commit revendor makes carries the trailer
//! `Revendor-Package: <package path>`, but a trailer is text anyone keeps
//! (an amend keeps the message): a commit is revendor's only when it also
//! is by the author and committer this run commits as, and changes nothing
//! outside the package, which is the shape of every commit revendor builds
//! (issue 21: a maintainer's amend that kept the trailer was pushed over).
//! [`foreign`] lists the others.

use git2::{Commit, Oid};

use crate::error::Result;
use crate::git::{self, Identity, Repo};

/// The trailer that marks revendor's commits.
pub(super) const TRAILER: &str = "Revendor-Package";

/// The trailer's value for the package at `package` (`.` for the root).
pub(super) fn trailer_value(package: &str) -> String {
    if package.is_empty() {
        ".".to_owned()
    } else {
        package.to_owned()
    }
}

/// Whether `commit` carries revendor's trailer for `package`: enough to
/// step over it when choosing the base, never to push over it.
pub(super) fn has_trailer(commit: &Commit<'_>, package: &str) -> bool {
    let wanted = format!("{TRAILER}: {}", trailer_value(package));
    commit
        .message()
        .is_ok_and(|m| m.lines().any(|l| l.trim_end() == wanted))
}

/// The commits on `head` that are not on `base` and that revendor did not
/// make as `who`: `abc1234 "subject" by Name`, newest first.
pub(super) fn foreign(repo: &Repo, head: Oid, base: Oid, who: &Identity) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for commit in git::commit::between(repo, head, base)? {
        let ours = has_trailer(&commit, &repo.package)
            && who.made(&commit)
            && git::commit::only_touches(repo, &commit, &repo.package)?;
        if !ours {
            let id = commit.id().to_string();
            out.push(format!(
                "{} \"{}\" by {}",
                &id[..7],
                commit.summary().ok().flatten().unwrap_or_default(),
                commit.author().name().unwrap_or("someone").to_owned()
            ));
        }
    }
    Ok(out)
}
