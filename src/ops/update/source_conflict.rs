//! Source-patch conflicts kept for a person and continued (issue 20, item 6).
//!
//! 1. `update --keep-conflicts`: each upstream source file a source patch
//!    conflicts on at the target is written, merged with diff3 markers, to
//!    a working copy `upstream/.revendor-conflicts/<patch>/<path>`
//!    ([`CONFLICTS_DIR`], [`stage`]) and recorded in the lock's
//!    `[[pending.source]]`, beside the rendered files' conflicts.
//! 2. A plain `update` stops while a working copy is there ([`guard`]):
//!    `--continue` is the way on; deleting the directory gives it up.
//! 3. `update --continue`: each working copy, once no marker is left, is the
//!    patched file at the target ([`resolution`]); `source.rs` refreshes the
//!    patch section on it, as it refreshes a section that merged cleanly,
//!    and the copies go with the rest of the update's transaction
//!    ([`remove`]).
//!
//! Why a working copy rather than the file itself: a source patch's target
//! is upstream's source, which the package does not hold (the image build
//! applies the patch to it); only the patch file is the package's.

use super::resume;
use crate::config::lock::{CONFLICTS_DIR, Lock, Pending, PendingSource, conflict_copy};
use crate::error::{Error, Result};
use crate::image::Digest;
use crate::patch;
use crate::paths::{self, Transaction};

/// One source file a source patch conflicts on at the target.
#[derive(Debug, Clone)]
pub(super) struct SourceConflict {
    /// The source patch's name.
    pub patch: String,
    /// The file's path in the upstream source tree.
    pub file: String,
    /// The merged file with diff3 markers.
    pub marked: Vec<u8>,
}

/// Stages each of `conflicts` at its working copy in `keep`; returns the
/// lock's `[[pending.source]]` entries. A patch name that is not one path
/// segment, or two conflicting sections of one patch on the same file, has
/// no working copy of its own: refused, with nothing written.
pub(super) fn stage(
    keep: &mut Transaction,
    conflicts: &[SourceConflict],
) -> Result<Vec<PendingSource>> {
    let mut pending: Vec<PendingSource> = Vec::new();
    for c in conflicts {
        let name = &c.patch;
        if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\']) {
            return Err(Error::usage(
                format!(
                    "source patch `{name}` conflicts on `{}`, but its name cannot name a directory under {CONFLICTS_DIR}/; nothing was written",
                    c.file
                ),
                "rename the [[patch]] (letters, digits, `-`, `_`, `.`), then run `revendor update --keep-conflicts` again",
            ));
        }
        if pending
            .iter()
            .any(|p| p.patch == c.patch && p.file == c.file)
        {
            return Err(Error::PatchConflict(format!(
                "source patch `{name}` has two sections for `{}` that both conflict: one working copy cannot hold both; \
                 nothing was written; merge the two sections into one, then run `revendor update --keep-conflicts` again",
                c.file
            )));
        }
        let copy = conflict_copy(name, &c.file);
        keep.stage(&copy, c.marked.clone());
        pending.push(PendingSource {
            patch: c.patch.clone(),
            file: c.file.clone(),
            sha256: Digest::of(&c.marked).hex().to_owned(),
        });
    }
    Ok(pending)
}

/// The resolution of `source` at the target: its working copy, refused while
/// it is missing, while a marker is left (each named by file and line), or
/// when it is upstream's file `theirs` unchanged (the patch would be
/// empty).
pub(super) fn resolution(
    root: &std::path::Path,
    source: &PendingSource,
    theirs: &[u8],
) -> Result<Vec<u8>> {
    let copy = source.copy();
    let Some(resolved) = paths::read_opt(&root.join(&copy))? else {
        return Err(Error::usage(
            format!(
                "`{copy}` is missing: it should hold your resolution of source patch `{}` on `{}`",
                source.patch, source.file
            ),
            "restore it (`git checkout` it), resolve the markers, then run `revendor update --continue`",
        ));
    };
    resume::refuse_markers(&copy, &resolved)?;
    if resolved == theirs {
        return Err(Error::PendingUpdate(format!(
            "the resolution in `{copy}` drops every change of source patch `{}` to `{}`: remove its [[patch]] instead, \
             or keep its changes in the resolution",
            source.patch, source.file
        )));
    }
    Ok(resolved)
}

/// A plain `update` while a source conflict is pending stops as long as its
/// working copy is there (markers or a resolution): `--continue` finishes
/// the update. With every copy deleted, the pending update is given up.
pub(super) fn guard(root: &std::path::Path, lock: Option<&Lock>) -> Result<()> {
    let Some(pending) = lock.and_then(|l| l.pending.as_ref()) else {
        return Ok(());
    };
    for source in &pending.sources {
        let copy = source.copy();
        let Some(bytes) = paths::read_opt(&root.join(&copy))? else {
            continue;
        };
        let target = target_of(pending);
        let holds = match patch::marker_lines(&bytes).first() {
            Some(line) => format!("{copy}:{line}: `{copy}` still holds the conflict markers"),
            None => format!("`{copy}` holds a resolution"),
        };
        return Err(Error::PendingUpdate(format!(
            "{holds} of source patch `{}` for the pending update to {target}; resolve them, then run \
             `revendor update --continue` (or delete {CONFLICTS_DIR}/ and restore the rendered files from git to give the update up)",
            source.patch
        )));
    }
    Ok(())
}

/// Removes every working copy of `pending` in `txn` (the directories they
/// leave empty go with them).
pub(super) fn remove(txn: &mut Transaction, pending: &Pending) {
    for source in &pending.sources {
        txn.remove(&source.copy());
    }
}

/// The release(s) a pending update moves to, as a guard names them.
fn target_of(pending: &Pending) -> String {
    let mut targets: Vec<String> = pending.version.iter().cloned().collect();
    targets.extend(pending.versions.iter().map(|(n, v)| format!("{n} {v}")));
    targets.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conflict(patch: &str, file: &str) -> SourceConflict {
        SourceConflict {
            patch: patch.into(),
            file: file.into(),
            marked: b"<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n".to_vec(),
        }
    }

    #[test]
    fn each_conflict_is_staged_at_its_working_copy() {
        let dir = tempfile::tempdir().unwrap();
        let mut keep = Transaction::new(dir.path());
        let pending = stage(&mut keep, &[conflict("fix", "pkg/a.go")]).unwrap();
        assert_eq!(
            pending[0].copy(),
            "upstream/.revendor-conflicts/fix/pkg/a.go"
        );
        assert!(keep.staged(&pending[0].copy()).is_some());
    }

    #[test]
    fn a_name_that_is_not_a_segment_and_a_second_section_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut keep = Transaction::new(dir.path());
        assert!(stage(&mut keep, &[conflict("../x", "a.go")]).is_err());
        let twice = [conflict("fix", "a.go"), conflict("fix", "a.go")];
        let e = stage(&mut keep, &twice).unwrap_err();
        assert!(e.to_string().contains("two sections for `a.go`"), "{e}");
    }
}
