//! git, for the commands that work on the package's own repository (`pr`):
//! git2 for what is read and written locally, the `git` command for what
//! talks to a remote.
//!
//! 1. [`Repo`] (`repo.rs`) finds the repository around a package, reads a
//!    commit's files and lists the package's files that differ from the
//!    work tree; it writes nothing.
//! 2. `commit.rs` builds a commit from a base commit and the package's
//!    changed files without touching the index, `HEAD` or the work tree,
//!    and reads the commits of a branch back.
//! 3. [`Remote`] (`remote.rs`) asks `origin` for a branch, fetches it, and
//!    pushes or deletes it, leased on what it was seen at.
//!
//! What a commit means to revendor (its trailer, whether revendor made it)
//! is the `pr` command's business, not this module's: here are only the
//! operations.

pub mod commit;
mod remote;
mod repo;

pub use commit::Identity;
pub use remote::Remote;
pub use repo::{Change, Repo, Status, error};
