//! `update --continue`: finish an update that `--keep-conflicts` left with
//! conflict markers, once a person has resolved them.
//!
//! 1. `--keep-conflicts` records the pending update in the lock's
//!    `[pending]` ([`record`]): the release it moves to, each output
//!    written with markers and each source file a source patch conflicts
//!    on, written to a working copy (`source_conflict.rs`). Everything else stays at the old version; a
//!    package being adopted gets a lock at the version it is adopted at
//!    ([`adoption`]), so that there is something to continue from.
//! 2. `--continue` reads it back ([`Resume::start`]); with nothing pending
//!    it is a usage error. A plain `update` stops while one is pending and
//!    its file is resolved or still marked ([`guard`]).
//! 3. For each conflicted output ([`Resume::rebase`]) no marker may be
//!    left. The resolution is taken back to the patched text it renders
//!    from: rewrites and pins change lines in place and keep their count, so
//!    each resolved line is matched with the line it was rendered from in
//!    the marked file ([`unrender`]); re-rendering must give the resolution
//!    byte for byte. The first conflicting patch section gets the
//!    difference: the sections before it keep their carried form, the ones
//!    after it must come off the resolution strictly and are refreshed on
//!    it. Applying the stack to the new pristine copy must then give the
//!    resolution back, or the update stops.
//! 4. The update then finishes as any other (source patches, rewrites, the
//!    lock without `[pending]`), in one transaction.

use super::UpdateOptions;
use super::carry::{self, Carried};
use super::summary::ConflictReport;
use super::upstreams::Move;
use crate::config::Vendor;
use crate::config::lock::{
    LOCK_PATH, Lock, LockedFile, LockedImage, LockedPatch, LockedUpstream, Pending,
    PendingConflict, PendingSource, Schema,
};
use crate::error::{Error, Result};
use crate::image::Digest;
use crate::ops::outcome::{Kind, PatchResult};
use crate::ops::render::edits;
use crate::patch::{self, Outcome};
use crate::paths::{self, Transaction};
use crate::render::{Package, Patches, Stamp, Step, origin};

/// A pending update being finished.
#[derive(Debug, Clone, Copy)]
pub(super) struct Resume<'a> {
    pending: &'a Pending,
}

impl<'a> Resume<'a> {
    /// The pending update `--continue` finishes; `None` without the flag.
    pub fn start(opts: &UpdateOptions, lock: Option<&'a Lock>) -> Result<Option<Resume<'a>>> {
        if !opts.resume {
            return Ok(None);
        }
        match lock.and_then(|l| l.pending.as_ref()) {
            Some(pending) => Ok(Some(Resume { pending })),
            None => Err(Error::usage(
                "nothing to continue: no update is pending (upstream/lock.toml has no [pending])",
                "`revendor update --keep-conflicts` records one when it writes conflict markers",
            )),
        }
    }

    /// The pending update: the releases it moves to, its conflicts.
    pub fn pending(&self) -> &'a Pending {
        self.pending
    }

    /// Carries `vendor`'s patches to the pending release so that they
    /// render the file on disk (`current`): the resolution, for an output
    /// that was written with markers; else the file as `--keep-conflicts`
    /// wrote it. `patches` are refreshed on the new pristine copy `theirs`.
    #[allow(clippy::too_many_arguments)] // one call site, every argument a different fact
    pub fn rebase(
        &self,
        package: &mut Package<'_>,
        at_target: &Stamp,
        vendor: &Vendor,
        base: &[u8],
        theirs: &[u8],
        current: Option<&[u8]>,
    ) -> Result<Carried> {
        let target = at_target.version(vendor.upstream.as_deref());
        let version = package.version(vendor).to_owned();
        let to = &vendor.to;
        if !self.pending.conflicts.iter().any(|c| &c.file == to) {
            let (base, theirs) = (base.to_vec(), theirs.to_vec());
            let (carried, _) = carry::carry(package, vendor, base, theirs, target)?;
            let rendered = package.finish_with(to, carried.output.as_slice(), at_target)?;
            if !carried.conflicts.is_empty() || current != Some(rendered.as_slice()) {
                let found = current
                    .map(|c| edits::list(&edits::edited_lines(to, &rendered, c)))
                    .unwrap_or_else(|| "it is missing".into());
                return Err(Error::PendingUpdate(format!(
                    "`{to}` is no longer what `update --keep-conflicts` wrote for {target}: {found}; \
                     restore it, finish with `revendor update --continue`, then fold the edits in with `revendor update --adopt-edits`"
                )));
            }
            return Ok(carried);
        }
        let Some(resolved) = current else {
            return Err(Error::usage(
                format!("`{to}` is missing: it should hold your resolution of the conflict"),
                "restore it, resolve the markers, then run `revendor update --continue`",
            ));
        };
        refuse_markers(to, resolved)?;
        if package.expected(vendor, base)?.output == resolved {
            return Err(Error::usage(
                format!(
                    "`{to}` is back as the lock renders it at {}: there is no resolution to continue with",
                    version
                ),
                format!(
                    "run `revendor update --keep-conflicts` to start the update to {target} again"
                ),
            ));
        }

        let walk = package.carry(vendor, base.into(), theirs.into(), target);
        let marked = walk.output?;
        let Some(first) = walk
            .steps
            .iter()
            .position(|s| matches!(s.outcome, Outcome::Conflict { .. }))
        else {
            return Err(Error::usage(
                format!(
                    "the patches of `{to}` now carry to {target} without a conflict: were they edited since `--keep-conflicts`?"
                ),
                format!(
                    "restore `{to}` as `revendor render` gives it, then run `revendor update --to {target}`"
                ),
            ));
        };
        let wanted = take_back(package, to, at_target, &marked, resolved)?;
        let reports = onto(package.patches_mut(), to, &walk.steps, first, &wanted)?;
        // Applied strictly to the new pristine copy, the refreshed sections
        // must give the resolution back (the version only names a failure,
        // which is not shown).
        let check = package.apply(vendor, theirs).output;
        if check.as_deref().ok() != Some(wanted.as_slice()) {
            return Err(Error::PendingUpdate(format!(
                "the patches of `{to}` cannot be rebased so that they give the resolution back at {target}; \
                 nothing was written"
            )));
        }
        Ok(Carried {
            output: wanted,
            reports,
            conflicts: Vec::new(),
            upstreamed: Vec::new(),
        })
    }
}

/// The resolution of `to` taken back through its rewrites and pins to the
/// patched text it renders from ([`unrender`]), checked by rendering it
/// again. `marked` is the carried file with markers, before rendering.
fn take_back(
    package: &Package<'_>,
    to: &str,
    target: &Stamp,
    marked: &[u8],
    resolved: &[u8],
) -> Result<Vec<u8>> {
    let wanted = unrender(marked, &package.finish_with(to, marked, target)?, resolved);
    let again = package.finish_with(to, wanted.as_slice(), target)?;
    if again != resolved {
        let line = first_difference(&again, resolved);
        return Err(Error::PendingUpdate(format!(
            "{to}:{line}: the resolution cannot be taken back through the [[rewrite]]s and [[pin]]s of `{to}` \
             (re-rendered, the line reads `{}`); write the line as the render would",
            line_text(&again, line)
        )));
    }
    Ok(wanted)
}

/// Refreshes the sections of a carry (`steps`, the first conflict at
/// `first`) so that they turn the new pristine copy into `wanted`: those
/// before the conflict as they were carried, those after it on what is
/// left once they come off `wanted` strictly (last first), and the
/// conflicting one on the difference between the two.
fn onto(
    patches: &mut Patches,
    to: &str,
    steps: &[Step],
    first: usize,
    wanted: &[u8],
) -> Result<Vec<PatchResult>> {
    let mut after = wanted.to_vec();
    let mut later = Vec::new();
    for step in steps[first + 1..].iter().rev() {
        let (p, fp) = patches.section(step.id);
        let before = patch::apply_reverse(fp, &after)
            .map_err(|e| {
                Error::PendingUpdate(format!(
                    "patch `{}` ({}) does not come off the resolution of `{to}` strictly: {e}; \
                     the resolution must keep its changes",
                    p.name, p.file
                ))
            })?
            .content;
        later.push((step.id, before.clone(), after));
        after = before;
    }
    let conflicted = &steps[first];
    let name = patches.section(conflicted.id).0.name.clone();
    if conflicted.input == after {
        return Err(Error::PendingUpdate(format!(
            "the resolution of `{to}` drops every change of patch `{name}`: remove its [[patch]] instead, \
             or keep its changes in the resolution"
        )));
    }

    let resolved = |patches: &Patches, id, result: &str| {
        PatchResult::described(
            &patches.section(id).0.name,
            to,
            Kind::Resolved,
            result.to_owned(),
        )
    };
    let mut reports = Vec::new();
    for step in &steps[..first] {
        if !matches!(step.outcome, Outcome::AlreadyUpstream { .. }) {
            patches.refresh_section(step.id, &step.input, step.outcome.content());
        }
        reports.push(PatchResult::new(
            &patches.section(step.id).0.name,
            to,
            &step.outcome,
        ));
    }
    patches.refresh_section(conflicted.id, &conflicted.input, &after);
    reports.push(resolved(
        patches,
        conflicted.id,
        "resolved by hand, refreshed on the resolution",
    ));
    for (id, before, after) in later.into_iter().rev() {
        patches.refresh_section(id, &before, &after);
        reports.push(resolved(patches, id, "refreshed on the resolution"));
    }
    Ok(reports)
}

/// The lock of a package adopted at each upstream's base version in
/// `moves`, for a first update that stopped on a conflict: the pristine
/// copies it was adopted from (`files`, of the vendored files `vendored`),
/// its vendor patches as read (each applied strictly there), the
/// pin found in its rendered files. Source patches are left out: nothing
/// verified them yet.
pub(super) fn adoption(
    package: &Package<'_>,
    moves: &[Move<'_>],
    vendored: &[Vendor],
    files: Vec<LockedFile>,
) -> Lock {
    Lock {
        schema: Schema::CURRENT,
        upstreams: moves
            .iter()
            .map(|m| LockedUpstream {
                name: m.upstream.name.clone(),
                source: m.upstream.source.describe(),
                version: m.base_version.clone(),
                ..LockedUpstream::default()
            })
            .collect(),
        files,
        patches: package
            .patches()
            .loaded()
            .iter()
            .map(|p| LockedPatch {
                name: p.name.clone(),
                sha256: p.sha256.clone(),
            })
            .collect(),
        images: package
            .stamp()
            .pins()
            .iter()
            .map(|(name, reference)| LockedImage {
                name: name.clone(),
                reference: reference.clone(),
                ..LockedImage::default()
            })
            .collect(),
        outputs: origin::outputs(vendored, package.patches()),
        pending: None,
        lookup: Default::default(),
    }
}

/// Records the update to `targets` (each upstream's, by name) as pending
/// in `lock`, staged in `keep`: the sha256 of each conflicted output as
/// staged there, and the working copies of source files `sources`. Each of
/// `conflicts` learns the file its markers were written to.
pub(super) fn record(
    keep: &mut Transaction,
    root: &std::path::Path,
    lock: Lock,
    targets: &[(Option<String>, String)],
    conflicts: &mut [ConflictReport],
    sources: Vec<PendingSource>,
) -> Result<()> {
    let mut pending = Pending {
        version: None,
        versions: Default::default(),
        conflicts: Vec::new(),
        sources,
    };
    for (name, target) in targets {
        match name {
            Some(name) => {
                pending.versions.insert(name.clone(), target.clone());
            }
            None => pending.version = Some(target.clone()),
        }
    }
    for c in conflicts {
        // Patch names are unique: a source patch's conflict is never a
        // rendered file's.
        if let Some(s) = pending
            .sources
            .iter()
            .find(|s| s.patch == c.patch && s.file == c.file)
        {
            c.marked = Some(s.copy());
            continue;
        }
        let Some(bytes) = keep.staged(&c.file) else {
            continue;
        };
        c.marked = Some(c.file.clone());
        if !pending.conflicts.iter().any(|p| p.file == c.file) {
            pending.conflicts.push(PendingConflict {
                file: c.file.clone(),
                sha256: Digest::of(bytes).hex().to_owned(),
            });
        }
    }
    let mut next = lock;
    next.pending = Some(pending);
    let previous =
        paths::read_opt(&root.join(LOCK_PATH))?.map(|b| String::from_utf8_lossy(&b).into_owned());
    keep.stage(LOCK_PATH, next.to_toml(previous.as_deref()).into_bytes());
    Ok(())
}

/// A plain `update` while one is pending stops when `vendor`'s file holds
/// the pending conflict (its markers, or a resolution): `--continue` is the
/// way on. A file back as the lock renders it gives the pending update up.
pub(super) fn guard(
    package: &Package<'_>,
    vendor: &Vendor,
    base: &[u8],
    current: Option<&[u8]>,
) -> Result<()> {
    let (Some(lock), Some(current)) = (package.lock(), current) else {
        return Ok(());
    };
    let (Some(pending), Some(_)) = (&lock.pending, lock.pending_conflict(&vendor.to)) else {
        return Ok(());
    };
    let to = &vendor.to;
    let target = pending
        .version_of(vendor.upstream.as_deref())
        .unwrap_or_default();
    if let Some(line) = patch::marker_lines(current).first() {
        return Err(Error::PendingUpdate(format!(
            "{to}:{line}: `{to}` still holds the conflict markers of the pending update to {target}; \
             resolve them, then run `revendor update --continue`"
        )));
    }
    if package.expected(vendor, base)?.output != current {
        return Err(Error::PendingUpdate(format!(
            "`{to}` holds a resolution of the pending update to {target}: run `revendor update --continue` to finish it \
             (or restore the file as the lock renders it to give the update up)"
        )));
    }
    Ok(())
}

/// Leftover markers stop `--continue`, each named by its line.
pub(super) fn refuse_markers(to: &str, resolved: &[u8]) -> Result<()> {
    let lines = patch::marker_lines(resolved);
    if lines.is_empty() {
        return Ok(());
    }
    let shown: Vec<String> = lines
        .iter()
        .map(|&l| format!("{to}:{l} `{}`", line_text(resolved, l)))
        .collect();
    Err(Error::PendingUpdate(format!(
        "`{to}` still holds conflict markers: {}; resolve every conflict, then run `revendor update --continue` again",
        shown.join(", ")
    )))
}

/// `resolved` taken back to the text it renders from. `marked` is the
/// patched file with markers and `rendered` the same after rewrites and
/// pins, line for line; a resolved line that rendering produced from another
/// line becomes that line, every other line stays as written. The caller
/// checks the result by rendering it again.
fn unrender(marked: &[u8], rendered: &[u8], resolved: &[u8]) -> Vec<u8> {
    let pre: Vec<&[u8]> = marked.split_inclusive(|&b| b == b'\n').collect();
    let post: Vec<&[u8]> = rendered.split_inclusive(|&b| b == b'\n').collect();
    if pre.len() != post.len() {
        return resolved.to_vec();
    }
    let mut from = std::collections::HashMap::new();
    let mut kept = std::collections::HashSet::new();
    for (&p, &r) in pre.iter().zip(&post) {
        if p == r {
            kept.insert(r);
        } else {
            from.entry(r).or_insert(p);
        }
    }
    resolved
        .split_inclusive(|&b| b == b'\n')
        .flat_map(|line| match from.get(line) {
            Some(&p) if !kept.contains(line) => p,
            _ => line,
        })
        .copied()
        .collect()
}

/// The 1-based line where `a` and `b` first differ.
fn first_difference(a: &[u8], b: &[u8]) -> usize {
    a.split_inclusive(|&c| c == b'\n')
        .zip(b.split_inclusive(|&c| c == b'\n'))
        .take_while(|(x, y)| x == y)
        .count()
        + 1
}

/// Line `line` (1-based) of `text`, without its line end.
fn line_text(text: &[u8], line: usize) -> String {
    let l = text
        .split(|&b| b == b'\n')
        .nth(line - 1)
        .unwrap_or_default();
    String::from_utf8_lossy(l).trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unrender_takes_each_rendered_line_back_to_its_source() {
        let marked = b"image: up:snapshot\n<<<<<<< ours\nkeep\n=======\nimage: up:snapshot\n>>>>>>> theirs\n";
        let rendered =
            b"image: ours@sha\n<<<<<<< ours\nkeep\n=======\nimage: ours@sha\n>>>>>>> theirs\n";
        assert_eq!(
            unrender(marked, rendered, b"image: ours@sha\nkeep\nnew\n"),
            b"image: up:snapshot\nkeep\nnew\n"
        );
        // A line written as the render leaves it is its own source.
        assert_eq!(
            unrender(b"a\nb\n", b"a\nB\n", b"B\nb\n"),
            b"b\nb\n",
            "B came from b"
        );
        assert_eq!(
            unrender(b"B\nb\n", b"B\nB\n", b"B\n"),
            b"B\n",
            "B is also kept as is"
        );
    }

    #[test]
    fn markers_are_refused_with_their_lines() {
        let e = refuse_markers(
            "t.yml",
            b"a\n<<<<<<< ours (patched v1)\nb\n=======\nc\n>>>>>>> theirs (v2)\n",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "`t.yml` still holds conflict markers: t.yml:2 `<<<<<<< ours (patched v1)`, t.yml:4 `=======`, \
             t.yml:6 `>>>>>>> theirs (v2)`; resolve every conflict, then run `revendor update --continue` again"
        );
        assert!(refuse_markers("t.yml", b"a\n").is_ok());
    }

    #[test]
    fn first_difference_and_line_text() {
        assert_eq!(first_difference(b"a\nb\nc\n", b"a\nB\nc\n"), 2);
        assert_eq!(line_text(b"a\nb\r\n", 2), "b");
    }
}
