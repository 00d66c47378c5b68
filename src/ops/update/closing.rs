//! What `update` says when it ends: the offline check of what it wrote,
//! each finding with its next command.
//!
//! An update can be right and still leave work: v4.3.0's go.mod asks for a
//! newer Go than the Dockerfile's builder, and only `check` would say so.
//! So the update ends by checking its own result:
//!
//! 1. Before the update reads the first vendored file, when the package has
//!    a lock, the offline check runs on the tree as it is: what was already
//!    reported before the update ([`before`]). Nothing is written until the
//!    commit, so it is the tree the commit replaces; run then, it holds its
//!    copies of the files while the transaction holds none (at the commit it
//!    overlapped the result and the new pristine copy: one copy of a large
//!    file more at the update's peak, issue 23).
//! 2. The transaction commits.
//! 3. The offline check runs on the written tree. Every finding is reported
//!    with its fix. An `error` finding that the check before did not report
//!    (same id, file and message) is `caused` by this update: the files stay
//!    written, and `update` exits 1 until the next command is run. The
//!    one exception is `image-stale`: a new version always leaves the pinned
//!    image behind, and building it is the next step of every update, not a
//!    mistake of this one (the finding still says so, with its command).
//!
//! Without a lock before (adoption) nothing counts as caused: the findings
//! are the package's own. `--dry-run` writes nothing, so there is no result
//! to check. A check that cannot run on the result is a warning, not an
//! error: the update itself is done.

use super::summary::{ClosingFinding, UpdateReport};
use crate::check::{Finding, IMAGE_STALE, Severity};
use crate::error::Result;
use crate::ops::check::{CheckOptions, check};
use crate::paths::Transaction;
use crate::workspace::Context;

/// The offline findings of the tree before the update, for [`commit`] to
/// tell what the update caused: none without a lock (adoption: nothing
/// counts as caused), with `--dry-run` (nothing is committed), or when the
/// check cannot run.
pub(super) fn before(ctx: &Context, has_lock: bool, dry_run: bool) -> Option<Vec<Finding>> {
    (has_lock && !dry_run)
        .then(|| offline_check(ctx).ok())
        .flatten()
}

/// Commits `txn` (or, with `dry_run`, only lists what it would change) and
/// records the closing check's findings in `report`, each error that
/// `before` ([`before`]) did not hold as caused by the update.
pub(super) fn commit(
    ctx: &Context,
    mut txn: Transaction,
    dry_run: bool,
    before: Option<&[Finding]>,
    report: &mut UpdateReport,
) -> Result<()> {
    record_kinds(&ctx.root, &mut txn, report)?;
    if dry_run {
        report.changed = txn.changed_paths()?;
        return Ok(());
    }
    report.changed = txn.commit()?;
    match offline_check(ctx) {
        Ok(after) => report.findings = closing(before, after),
        Err(e) => {
            let hint = e.hint().map(|h| format!("; {h}")).unwrap_or_default();
            ctx.shell.warn(format!(
                "the update is written, but the check of its result could not run: {e}{hint}"
            ));
        }
    }
    Ok(())
}

/// Records in `report` which of `txn`'s changes create a file and which
/// delete one, before it is committed (after, every file is as it left it).
pub(super) fn record_kinds(
    root: &std::path::Path,
    txn: &mut Transaction,
    report: &mut UpdateReport,
) -> Result<()> {
    for path in txn.changed_paths()? {
        if txn.staged(&path).is_none() {
            report.deleted.push(path);
        } else if !crate::paths::is_file(&root.join(&path)) {
            report.created.push(path);
        }
    }
    Ok(())
}

/// The offline findings of the package as it is on disk.
fn offline_check(ctx: &Context) -> Result<Vec<Finding>> {
    Ok(check(ctx, &CheckOptions::default())?.findings)
}

/// `after`, each marked `caused` when it is an error that `before` (when
/// known) did not hold.
fn closing(before: Option<&[Finding]>, after: Vec<Finding>) -> Vec<ClosingFinding> {
    let known = |f: &Finding| {
        before.is_none_or(|b| {
            b.iter()
                .any(|o| o.id == f.id && o.file == f.file && o.message == f.message)
        })
    };
    after
        .into_iter()
        .map(|finding| ClosingFinding {
            caused: finding.severity == Severity::Error
                && !known(&finding)
                && finding.id != IMAGE_STALE.name,
            finding,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_new_error_is_caused_by_the_update() {
        let old = Finding::error("marker:talos", "D", 5, "says v1, wants v2");
        let moved = Finding::error("marker:talos", "D", 6, "says v1, wants v2");
        let new = Finding::error("builder-go", "D", 1, "Go 1.24 is older than go 1.25.0");
        let warning = Finding::warning("image-pin", "t.yml", 3, "not pinned");
        let after = vec![moved.clone(), new.clone(), warning.clone()];
        let caused: Vec<bool> = closing(Some(&[old]), after.clone())
            .iter()
            .map(|c| c.caused)
            .collect();
        assert_eq!(caused, [false, true, false]);
        assert!(closing(None, after).iter().all(|c| !c.caused));
    }
}
