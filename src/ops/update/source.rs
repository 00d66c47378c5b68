//! Source patches (`applies-to = "source"`): verified against the upstream
//! source tree at the target, refreshed so `git apply` in the image build
//! takes them, and upstream's go.mod `go` directive recorded for `check`.
//!
//! The tree at the target comes from the tag archive (GitHub) or the git tag;
//! the tree at the locked version is fetched only when a patch needs the
//! 3-way merge. A tree at the locked version must have the lock's tree hash
//! ([`upstream::fetch_tree`]); the target's hash goes into the new lock.
//!
//! A section that conflicts is kept for `--keep-conflicts` with its marked
//! file; with `--continue`, a section the pending update lists is refreshed
//! on the person's resolution instead (`source_conflict.rs`).

use super::source_conflict::{self, SourceConflict};
use super::summary::{ConflictReport, UpdateReport};
use super::upstreamed;
use super::upstreams::Move;
use std::collections::BTreeMap;

use crate::config::lock::Pending;
use crate::config::{AppliesTo, Config};
use crate::error::{Error, Result};
use crate::go;
use crate::ops::outcome::{Kind, PatchResult};
use crate::patch::{self, Labels, Outcome};
use crate::render::{self, Patches};
use crate::upstream::{self, SourceTree};
use crate::workspace::Context;

/// What the source side of an update found.
#[derive(Debug, Default)]
pub(super) struct SourceFacts {
    /// The source-tree hash at the target.
    pub tree_sha256: Option<String>,
    /// The `go` directive of go.mod at the target.
    pub go_directive: Option<String>,
    /// Refreshed source patch files: (package-relative path, bytes).
    pub patch_files: Vec<(String, Vec<u8>)>,
    /// The sections that conflict, with their marked files.
    pub conflicts: Vec<SourceConflict>,
}

/// Verifies and refreshes the source patches of `mv`'s upstream at its
/// target. After a move to another source, the tree at the base version
/// comes from the old one, and the lock's tree hash (of that other source)
/// says nothing about this one. `pending` is the update `--continue`
/// finishes: each source file it lists takes the person's resolution.
pub(super) fn verify(
    ctx: &Context,
    config: &Config,
    mv: &Move<'_>,
    pending: Option<&Pending>,
    report: &mut UpdateReport,
) -> Result<SourceFacts> {
    let (source, base_version, target) =
        (&*mv.source, mv.base_version.as_str(), mv.target.as_str());
    let locked = mv.locked.filter(|_| mv.moved_from.is_none());
    let mut patches = source_patches(config)?;
    patches.retain(|_, p| p.upstream.as_deref() == mv.name());
    let mut facts = SourceFacts::default();
    if patches.is_empty() {
        if !config.images.is_empty() {
            facts.go_directive = match source.file(target, "go.mod") {
                Ok(bytes) => go_directive(source, target, &bytes)?,
                Err(Error::NotFound { .. }) => None,
                Err(e) => return Err(e),
            };
        }
        return Ok(facts);
    }
    ctx.shell
        .status("Fetching", format!("the source tree at {target}"));
    let tree = upstream::fetch_tree(source, target, locked)?;
    facts.tree_sha256 = Some(tree.tree_sha256.clone());
    facts.go_directive = match tree.files.get("go.mod") {
        Some(bytes) => go_directive(source, target, bytes)?,
        None => None,
    };

    let mut base_tree: Option<SourceTree> = None;
    let ours_label = format!("patched {base_version}");
    let labels = Labels {
        ours: &ours_label,
        base: base_version,
        theirs: target,
    };
    for p in patches.values() {
        let mut set = p.set.clone();
        for (section, fp) in set.files.iter_mut().enumerate() {
            let path = fp.target_path(p.strip).unwrap_or_default();
            if !fp.is_new() && !tree.files.contains_key(&path) {
                return Err(missing_target(p, &path, &tree, target));
            }
            let theirs = tree.files.get(&path).cloned().unwrap_or_default();
            if take_resolution(ctx, pending, &p.name, fp, &path, &theirs, report)? {
                continue;
            }
            let outcome = match patch::apply(fp, &theirs) {
                Ok(applied) => Outcome::from(applied),
                Err(strict) => {
                    let base = base_tree_of(&mut base_tree, ctx, mv, &tree, locked)?
                        .files
                        .get(&path)
                        .cloned()
                        .unwrap_or_default();
                    match patch::rebase(&base, fp, &theirs, &labels) {
                        Ok(Outcome::Conflict { hunks, marked }) => {
                            record_conflict(report, &p.name, &path, hunks, &strict);
                            facts.conflicts.push(SourceConflict {
                                patch: p.name.clone(),
                                file: path,
                                marked,
                            });
                            continue;
                        }
                        Ok(outcome) => outcome,
                        Err(e) => {
                            return Err(Error::PatchConflict(format!(
                                "source patch `{}` ({}) on `{path}`: {strict}; and against {base_version}: {e}",
                                p.name, p.file
                            )));
                        }
                    }
                }
            };
            let result = upstreamed::describe(fp, &theirs, &outcome);
            if matches!(outcome, Outcome::AlreadyUpstream { .. }) {
                report
                    .upstreamed
                    .push(upstreamed::found(&p.name, &p.file, &path, section));
            } else {
                *fp = patch::refresh(fp, &theirs, outcome.content());
            }
            report.patches.push(PatchResult::described(
                &p.name,
                &path,
                Kind::from(&outcome),
                result,
            ));
        }
        facts.patch_files.push((p.file.clone(), patch::write(&set)));
    }
    Ok(facts)
}

/// With `--continue`, refreshes section `fp` of source patch `name` on the
/// person's resolution of `path` (upstream's file `theirs` at the target)
/// when the `pending` update lists it; whether it did.
fn take_resolution(
    ctx: &Context,
    pending: Option<&Pending>,
    name: &str,
    fp: &mut patch::FilePatch,
    path: &str,
    theirs: &[u8],
    report: &mut UpdateReport,
) -> Result<bool> {
    let Some(source) = pending.and_then(|pd| {
        pd.sources
            .iter()
            .find(|s| s.patch == name && s.file == path)
    }) else {
        return Ok(false);
    };
    let resolution = source_conflict::resolution(&ctx.root, source, theirs)?;
    *fp = patch::refresh(fp, theirs, &resolution);
    report.patches.push(PatchResult::described(
        name,
        path,
        Kind::Resolved,
        "resolved by hand, refreshed on the resolution".into(),
    ));
    Ok(true)
}

/// The refusal for a source patch whose file is not a file of the source at
/// `target` (absent, or a link, which is never followed).
fn missing_target(p: &render::LoadedPatch, path: &str, tree: &SourceTree, target: &str) -> Error {
    let what = match tree.links.get(path) {
        Some(link) => {
            format!("which is {link} in the source at {target}, and links are never followed")
        }
        None => format!("which does not exist in the source at {target}"),
    };
    Error::PatchConflict(format!(
        "source patch `{}` ({}) targets `{path}`, {what}",
        p.name, p.file
    ))
}

/// The source tree at `mv`'s base version, fetched into `slot` the first
/// time a patch needs the 3-way merge (the target's own tree when the base
/// is the target; the old source's after a move).
fn base_tree_of<'t>(
    slot: &'t mut Option<SourceTree>,
    ctx: &Context,
    mv: &Move<'_>,
    target_tree: &SourceTree,
    locked: Option<&crate::config::lock::LockedUpstream>,
) -> Result<&'t SourceTree> {
    let tree = match slot.take() {
        Some(tree) => tree,
        None => {
            let base_version = mv.base_version.as_str();
            match mv.old_source.as_deref() {
                None if base_version == mv.target.as_str() => target_tree.clone(),
                base => {
                    ctx.shell
                        .status("Fetching", format!("the source tree at {base_version}"));
                    upstream::fetch_tree(base.unwrap_or(&*mv.source), base_version, locked)?
                }
            }
        }
    };
    Ok(slot.insert(tree))
}

/// Records the conflicting regions of source patch `patch` on `path`.
fn record_conflict(
    report: &mut UpdateReport,
    patch: &str,
    path: &str,
    hunks: Vec<patch::ConflictHunk>,
    strict: &patch::ApplyError,
) {
    for h in hunks {
        report.conflicts.push(ConflictReport {
            patch: patch.to_owned(),
            file: path.to_owned(),
            start: h.line_start,
            end: h.line_end,
            ours: String::from_utf8_lossy(&h.ours).into_owned(),
            theirs: String::from_utf8_lossy(&h.theirs).into_owned(),
            strict: Some(strict.to_string()),
            marked: None,
        });
    }
    report.patches.push(PatchResult::described(
        patch,
        path,
        Kind::Conflict,
        "conflict".into(),
    ));
}
/// Every source patch file, parsed, keyed by its name.
fn source_patches(config: &Config) -> Result<BTreeMap<String, render::LoadedPatch>> {
    Ok(Patches::load_kind(config, AppliesTo::Source)?
        .into_loaded()
        .into_iter()
        .map(|p| (p.name.clone(), p))
        .collect())
}

/// The `go` directive of upstream's go.mod at `target`, for the lock; one
/// that is not a Go version is refused rather than left out of the lock.
fn go_directive(
    source: &dyn upstream::Source,
    target: &str,
    go_mod: &[u8],
) -> Result<Option<String>> {
    go::Version::from_go_mod(go_mod)
        .map(|v| v.map(|v| v.to_string()))
        .map_err(|directive| Error::Malformed {
            what: "a go.mod whose `go` directive is a Go version".into(),
            url: format!("go.mod of {} at {target}", source.describe()),
            detail: format!("`go {directive}` is not a Go version (`go 1.25.0`, `go 1.26`)"),
        })
}
