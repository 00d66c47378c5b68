//! The update's plan: one typed [`Step`] per vendored file, decided before
//! anything is fetched or carried, so that what `update` does with a file
//! is read in one place and executed in another (`update.rs`).
//!
//! A file is in the locked version's list, the target's, or both
//! ([`Vendored::files`]); with the package's patches and the run's mode
//! that gives its [`Action`], first match wins:
//!
//! 1. not at the target: [`Action::Remove`];
//! 2. its last patch section deletes it: [`Action::Delete`];
//! 3. not at the locked version (upstream added it): [`Action::Add`];
//! 4. no lock (the package is adopted): [`Action::Adopt`];
//! 5. `--continue`: [`Action::Resume`];
//! 6. else [`Action::Carry`].

use super::files::Vendored;
use crate::config::Vendor;
use crate::render::Package;

/// What `update` does with one vendored file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Action {
    /// Upstream no longer has it (or its `[[vendor]]` no longer selects
    /// it): it goes, once no patch changes it and it has no hand edit.
    Remove,
    /// Its last patch section deletes it (`+++ /dev/null`): the file there
    /// must be the one it deletes; the sections are carried for the report.
    Delete,
    /// Upstream added it: rendered at the target, with no render at the
    /// locked version to compare the file on disk with.
    Add,
    /// The package has no lock: patches that apply only with fuzz are
    /// taken when they give the committed file, then carried.
    Adopt,
    /// `--continue`: the patches are rebased onto the resolution on disk.
    Resume,
    /// The patches are carried from the locked version to the target, after
    /// the hand-edit check.
    Carry,
}

/// One vendored file and what the update does with it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Step<'v> {
    /// The file at the locked version, when it was vendored there.
    pub base: Option<&'v Vendor>,
    /// The file as the update renders it: at the target, or at the locked
    /// version when it goes.
    pub vendor: &'v Vendor,
    /// What is done with it.
    pub action: Action,
}

/// The steps of an update over `vendored`, in its order; `adopting` when
/// the package has no lock, `resuming` with `--continue`.
pub(super) fn steps<'v>(
    vendored: &'v Vendored,
    package: &Package<'_>,
    adopting: bool,
    resuming: bool,
) -> Vec<Step<'v>> {
    let mut out = Vec::new();
    for (base, target) in vendored.files() {
        let Some(vendor) = target.or(base) else {
            continue;
        };
        let action = match (base, target) {
            (_, None) => Action::Remove,
            _ if package.deletes(vendor) => Action::Delete,
            (None, _) => Action::Add,
            _ if adopting => Action::Adopt,
            _ if resuming => Action::Resume,
            _ => Action::Carry,
        };
        out.push(Step {
            base,
            vendor,
            action,
        });
    }
    out
}
