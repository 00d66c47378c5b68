//! `upstream-newer` (online): a release newer than the locked one exists
//! inside `track` (an error, with a dry run of every patch against it) or
//! outside it (information).
//!
//! 1. List the upstream's releases (a conditional request: an unchanged list
//!    costs a 304 and no bytes).
//! 2. Take the highest version above the locked one that `update` would move
//!    to, and the highest outside `track`.
//! 3. Dry-run every patch against the newer release in track, in memory:
//!    vendor patches are carried from the locked pristine copy to the new
//!    file ([`Package::carry`](crate::render::Package::carry)), as `update`
//!    carries them; source patches are applied to the new source
//!    tree, and rebased from the locked one (verified against the lock's
//!    tree hash) when that fails. Each result is
//!    `exact`, `offset`, `merged`, `already-upstream` or `conflict`, so the
//!    finding says what `update` will meet.
//!
//! A conflict's fix names where `update --keep-conflicts` writes its
//! markers: the rendered file, or for a source patch a working copy of the
//! source file under `upstream/.revendor-conflicts/<patch>/`.
//!
//! An upstream that does not answer the list is `unreachable`; one that
//! answers the list but not the dry run's downloads still gets its
//! `upstream-newer`, saying the dry run could not be done.

use std::collections::BTreeMap;

use super::{Check, Finding, Id, Input, Sink, unreachable};
use crate::config::lock::{LockedUpstream, conflict_copy};
use crate::config::{AppliesTo, Selection, Upstream};
use crate::error::Result;
use crate::patch::{self, Labels, Outcome};
use crate::render::Patches;
use crate::upstream::Pristine;
use crate::upstream::{self, Listed, Newer, Release, Source, SourceTree};

/// `upstream-newer`.
pub const UPSTREAM_NEWER: Id = Id {
    name: "upstream-newer",
    doc: "\
### What
With `--online`: upstream published a release newer than the locked one
inside `track` (an error), or outside it (information); for an upstream that
follows a branch (`ref`), the branch's head is not the locked commit (an
error); for an OCI chart, the locked version's tag pushed again with another
manifest (an error). Releases are the tags its `tag-pattern` takes, by default an optional
`v` then a version, never a chart-release tag such as `kube-ovn-v1.15.24`.
The finding carries a dry run of every patch of that upstream against the
newer release: `exact`, `offset`, `merged`, `already-upstream` or `conflict`.

### Why
The nightly run is how a new upstream release gets noticed, before a
security fix in it is weeks old; the dry run tells whoever picks it up
whether `revendor update` will go through or stop at a conflict.

### Example
```text
upstream-newer
  vendor.toml:7: error: v4.4.0 is newer than the vendored v4.3.0 (inside track `>=4.0.0, <5.0.0`); dry run: customize-deployment on templates/multus-daemonset-thick.yml: conflict (lines 245-250), fix-del-without-cache on pkg/multus/multus.go: exact (fix: run `revendor update --to v4.4.0 --keep-conflicts`, resolve the markers it writes in templates/multus-daemonset-thick.yml, then run `revendor update --continue`)
```
",
};

pub(super) const CHECK: Check = Check {
    name: "upstream_newer",
    ids: &[UPSTREAM_NEWER],
    online_only: true,
    run: check,
};

fn check(input: &Input<'_>, sink: &mut Sink) -> Result<()> {
    for up in &input.config.upstreams {
        // An upstream the lock lacks is lock-integrity's to report.
        if let Some(locked) = input.lock.upstream(up.name.as_deref()) {
            check_upstream(input, up, locked, sink)?;
        }
    }
    Ok(())
}

fn check_upstream(
    input: &Input<'_>,
    up: &Upstream,
    locked_up: &LockedUpstream,
    sink: &mut Sink,
) -> Result<()> {
    let locked = &locked_up.version;
    let source = upstream::open(up, &input.ctx.env, &input.ctx.client);
    let what = match &up.selection {
        Selection::Branch(branch) => format!("read branch `{branch}` of {}", up.label()),
        _ => format!("list the releases of {}", up.label()),
    };
    let what = format!("{} could not {what}", UPSTREAM_NEWER.name);
    let newer = source.newer(up, locked_up);
    match unreachable::answered(newer, sink, &what, "vendor.toml", up.version_line)? {
        Some(Newer::Releases { inside, outside }) => {
            if let Some(outside) = outside {
                outside_track(up, locked, &outside, sink);
            }
            match inside {
                Some(target) => inside_track(input, up, locked, &*source, &target, sink),
                None => Ok(()),
            }
        }
        Some(Newer::Branch { branch, head }) => {
            moved_branch(input, up, &branch, &head, locked, &*source, sink)
        }
        Some(Newer::Moved { tag, digest }) => {
            moved_tag(up, locked_up, &tag, &digest, sink);
            Ok(())
        }
        Some(Newer::Nothing) | None => Ok(()),
    }
}

/// The `track` as the findings quote it.
fn track(up: &Upstream) -> String {
    up.track
        .as_ref()
        .map_or_else(|| "*".to_owned(), |t| t.to_string())
}

/// A release newer than `locked` outside `track`: information.
fn outside_track(up: &Upstream, locked: &str, outside: &Release, sink: &mut Sink) {
    sink.push(
        Finding::info(
            UPSTREAM_NEWER.name,
            "vendor.toml",
            up.version_line,
            format!(
                "{} is newer than the vendored {locked}, outside track `{}`",
                outside.tag,
                track(up)
            ),
        )
        .fix(format!(
            "to move to it, widen `track` or run `revendor update --to {}`",
            outside.tag
        )),
    );
}

/// A release `update` would move to: an error, with the dry run.
fn inside_track(
    input: &Input<'_>,
    up: &Upstream,
    locked: &str,
    source: &dyn Source,
    target: &Release,
    sink: &mut Sink,
) -> Result<()> {
    let id = UPSTREAM_NEWER.name;
    let track = track(up);
    let what = format!("{id} could not dry-run the patches against {}", target.tag);
    let ran = dry_run(input, up, locked, source, &target.tag);
    let results = unreachable::answered(ran, sink, &what, "vendor.toml", up.version_line)?;
    let results = match results {
        Some(results) => results,
        None => {
            sink.push(
                Finding::error(
                    id,
                    "vendor.toml",
                    up.version_line,
                    format!(
                        "{} is newer than the vendored {locked} (inside track `{track}`); dry run: not done, the upstream did not answer",
                        target.tag
                    ),
                )
                .fix(format!("run `revendor update --to {}`", target.tag)),
            );
            return Ok(());
        }
    };
    let conflicts: Vec<&DryRun> = results
        .iter()
        .filter(|r| r.result.starts_with("conflict"))
        .collect();
    let summary = if results.is_empty() {
        "no patches".to_owned()
    } else {
        results
            .iter()
            .map(|r| format!("{} on {}: {}", r.patch, r.target, r.result))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // `update` stops on a patch the release already carries unless told to
    // drop it.
    let drop = if results.iter().any(|r| r.result == "already-upstream") {
        " --drop-upstreamed"
    } else {
        ""
    };
    let mut marked: Vec<&str> = Vec::new();
    for c in &conflicts {
        if !marked.contains(&c.marked.as_str()) {
            marked.push(&c.marked);
        }
    }
    let pending = input
        .lock
        .pending
        .as_ref()
        .and_then(|p| p.version_of(up.name.as_deref()));
    let fix = if pending == Some(target.tag.as_str()) {
        format!(
            "the update to {} is pending since `update --keep-conflicts`: resolve the markers it wrote, then run `revendor update --continue`",
            target.tag
        )
    } else if conflicts.is_empty() {
        format!("run `revendor update --to {}{drop}`", target.tag)
    } else {
        format!(
            "run `revendor update --to {}{drop} --keep-conflicts`, resolve the markers it writes in {}, then run `revendor update --continue`",
            target.tag,
            marked.join(", ")
        )
    };
    sink.push(
        Finding::error(
            id,
            "vendor.toml",
            up.version_line,
            format!(
                "{} is newer than the vendored {locked} (inside track `{track}`); dry run: {summary}",
                target.tag
            ),
        )
        .fix(fix),
    );
    Ok(())
}

/// An OCI chart's locked tag pushed again with another manifest: an error,
/// since the same version now means other files.
fn moved_tag(up: &Upstream, locked: &LockedUpstream, tag: &str, digest: &str, sink: &mut Sink) {
    let was = locked.archive_sha256.as_deref().unwrap_or_default();
    sink.push(
        Finding::error(
            UPSTREAM_NEWER.name,
            "vendor.toml",
            up.version_line,
            format!(
                "the tag of {tag} of {} was pushed again: it names manifest {digest}, the lock vendored sha256:{was}",
                up.label()
            ),
        )
        .fix(format!(
            "run `revendor update` to vendor what the tag names now, or keep the vendored chart with `version = \"{tag}@sha256:{was}\"`"
        )),
    );
}

/// One patch section carried to the newer release.
#[derive(Debug, Clone)]
struct DryRun {
    patch: String,
    target: String,
    result: String,
    /// Where `update --keep-conflicts` writes the markers of a conflict:
    /// the rendered file, or a source file's working copy.
    marked: String,
}

/// With `ref = "<branch>"`: the branch's head is not the locked commit.
fn moved_branch(
    input: &Input<'_>,
    up: &Upstream,
    branch: &str,
    head: &str,
    locked: &str,
    source: &dyn Source,
    sink: &mut Sink,
) -> Result<()> {
    let id = UPSTREAM_NEWER.name;
    let ran = dry_run(input, up, locked, source, head);
    let what = format!("{id} could not dry-run the patches against {head}");
    let summary = match unreachable::answered(ran, sink, &what, "vendor.toml", up.version_line)? {
        Some(results) if results.is_empty() => "no patches".to_owned(),
        Some(results) => results
            .iter()
            .map(|r| format!("{} on {}: {}", r.patch, r.target, r.result))
            .collect::<Vec<_>>()
            .join(", "),
        None => "not done, the upstream did not answer".to_owned(),
    };
    sink.push(
        Finding::error(
            id,
            "vendor.toml",
            up.version_line,
            format!(
                "branch `{branch}` of {} moved to {head}; the vendored commit is {locked}; dry run: {summary}",
                up.label()
            ),
        )
        .fix("run `revendor update`"),
    );
    Ok(())
}

fn dry_run(
    input: &Input<'_>,
    up: &Upstream,
    locked: &str,
    source: &dyn Source,
    tag: &str,
) -> Result<Vec<DryRun>> {
    let ours = format!("patched {locked}");
    let labels = Labels {
        ours: &ours,
        base: locked,
        theirs: tag,
    };
    let mut out = Vec::new();
    let package = input.package()?;
    let patches = package.patches();
    let mut listings: BTreeMap<&str, Vec<Listed>> = BTreeMap::new();
    for vendor in input.files()?.iter().filter(|v| v.upstream == up.name) {
        let Pristine::Verified(base) = input.pristine(vendor)? else {
            continue;
        };
        // A file of a directory is fetched only when a patch is carried on
        // it; the directory's listing says whether the release has it.
        let dir = input
            .config
            .vendor
            .iter()
            .find(|d| d.is_dir() && d.upstream == up.name && d.renders(&vendor.to));
        let theirs = match dir {
            None => upstream::fetch_file(source, &input.ctx.cache, tag, &vendor.from, None)?,
            Some(_) if package.sections(vendor).is_empty() => continue,
            Some(dir) => {
                if !listings.contains_key(dir.from.as_str()) {
                    let listed = source.list(tag, &dir.from, &input.ctx.cache)?;
                    listings.insert(&dir.from, listed);
                }
                match listings[dir.from.as_str()]
                    .iter()
                    .find(|l| l.path == vendor.from)
                {
                    Some(listed) => upstream::fetch_listed(source, &input.ctx.cache, tag, listed)?,
                    None if vendor.created => Vec::new(),
                    None => {
                        let first = package.sections(vendor)[0];
                        out.push(DryRun {
                            patch: patches.section(first).0.name.clone(),
                            target: vendor.to.clone(),
                            marked: vendor.to.clone(),
                            result: format!(
                                "conflict (upstream {tag} no longer has `{}`)",
                                vendor.from
                            ),
                        });
                        continue;
                    }
                }
            }
        };
        let walk = package.carry(vendor, &base, &theirs, tag);
        let step = |patch: &str, result: String| DryRun {
            patch: patch.to_owned(),
            target: vendor.to.clone(),
            result,
            marked: vendor.to.clone(),
        };
        // A conflict's marked file says nothing about the sections after
        // it: the dry run ends there.
        let conflict = walk
            .steps
            .iter()
            .position(|s| matches!(s.outcome, Outcome::Conflict { .. }));
        let shown = conflict.map_or(walk.steps.len(), |i| i + 1);
        for s in &walk.steps[..shown] {
            out.push(step(&patches.section(s.id).0.name, describe(&s.outcome)));
        }
        if let (None, Err(e)) = (conflict, &walk.output) {
            out.push(step(&e.patch, e.to_string()));
        }
    }
    let sources = Patches::load_kind(input.config, AppliesTo::Source)?;
    let ours_only = |p: &&crate::render::LoadedPatch| {
        input
            .config
            .patches
            .iter()
            .any(|c| c.name == p.name && c.upstream == up.name)
    };
    if !sources.loaded().iter().any(|p| ours_only(&p)) {
        return Ok(out);
    }
    let tree = source.tree(tag)?;
    let mut base_tree: Option<SourceTree> = None;
    for p in sources.loaded().iter().filter(ours_only) {
        for fp in &p.set.files {
            let path = fp.target_path(p.strip).unwrap_or_default();
            let theirs = tree.files.get(&path).cloned().unwrap_or_default();
            let result = match patch::apply(fp, &theirs) {
                Ok(applied) => describe(&Outcome::from(applied)),
                Err(_) => {
                    if base_tree.is_none() {
                        let lock = input.lock.upstream(up.name.as_deref());
                        base_tree = Some(upstream::fetch_tree(source, locked, lock)?);
                    }
                    let base = base_tree
                        .as_ref()
                        .and_then(|t| t.files.get(&path).cloned())
                        .unwrap_or_default();
                    match patch::rebase(&base, fp, &theirs, &labels) {
                        Ok(outcome) => describe(&outcome),
                        Err(e) => format!("does not apply to {locked}: {e}"),
                    }
                }
            };
            out.push(DryRun {
                patch: p.name.clone(),
                marked: conflict_copy(&p.name, &path),
                target: path,
                result,
            });
        }
    }
    Ok(out)
}

/// `exact`, `offset`, `merged`, `already-upstream`, or a conflict with its
/// lines.
fn describe(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Conflict { .. } => outcome.to_string(),
        other => other.kind().to_owned(),
    }
}
