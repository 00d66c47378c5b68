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

use super::dry_run::{DryRun, Verdict};
use super::{Check, Finding, Id, Input, Sink, unreachable};
use crate::config::lock::{LockedUpstream, conflict_copy};
use crate::config::{AppliesTo, Selection, Upstream};
use crate::error::Result;
use crate::patch::result::{Kind, PatchResult};
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
In `--format json` the finding also has a `dry_run` object for scripts:
`outcome` is `applies`, `conflict`, `upstreamed` or `not-done` (with a
`reason`), each patch's result is in `patches`, and `command` is what to run
next (docs/json.md).

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
    let update = format!("revendor update --to {}", target.tag);
    let run = carried(input, up, locked, source, &target.tag, &update, sink)?;
    let fix = fix(input, &run);
    sink.push(
        Finding::error(
            id,
            "vendor.toml",
            up.version_line,
            format!(
                "{} is newer than the vendored {locked} (inside track `{track}`); dry run: {}",
                target.tag,
                summary(&run)
            ),
        )
        .fix(fix)
        .dry_run(run),
    );
    Ok(())
}

/// The dry run against `to`, or why it was not done: an upstream that did
/// not answer its downloads is also reported `unreachable`.
fn carried(
    input: &Input<'_>,
    up: &Upstream,
    locked: &str,
    source: &dyn Source,
    to: &str,
    update: &str,
    sink: &mut Sink,
) -> Result<DryRun> {
    let what = format!(
        "{} could not dry-run the patches against {to}",
        UPSTREAM_NEWER.name
    );
    let ran = dry_run(input, up, locked, source, to);
    let name = up.name.as_deref();
    Ok(
        match unreachable::answered(ran, sink, &what, "vendor.toml", up.version_line)? {
            Some(results) => DryRun::ran(name, locked, to, update, results),
            None => DryRun::not_done(name, locked, to, update, NOT_ANSWERED),
        },
    )
}

/// Why a dry run was not done when the upstream's downloads failed.
const NOT_ANSWERED: &str = "the upstream did not answer";

/// The dry run as the message says it: each patch's result, or why none.
fn summary(run: &DryRun) -> String {
    match run.outcome {
        Verdict::NotDone => format!(
            "not done, {}",
            run.reason.as_deref().unwrap_or(NOT_ANSWERED)
        ),
        _ if run.patches.is_empty() => "no patches".to_owned(),
        _ => run
            .patches
            .iter()
            .map(|r| format!("{} on {}: {}", r.patch, r.target, r.result))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// What to do after the dry run: its command, and with a conflict, where
/// to resolve it and how to finish.
fn fix(input: &Input<'_>, run: &DryRun) -> String {
    let pending = input
        .lock
        .pending
        .as_ref()
        .and_then(|p| p.version_of(run.upstream.as_deref()));
    if pending == Some(run.to.as_str()) {
        return format!(
            "the update to {} is pending since `update --keep-conflicts`: resolve the markers it wrote, then run `revendor update --continue`",
            run.to
        );
    }
    if run.outcome == Verdict::Conflict {
        format!(
            "run `{}`, resolve the markers it writes in {}, then run `revendor update --continue`",
            run.command,
            marked(input, run).join(", ")
        )
    } else {
        format!("run `{}`", run.command)
    }
}

/// Where `update --keep-conflicts` writes the markers of each conflict of
/// `run`, each once: the rendered file, or for a source patch the working
/// copy of the source file under `upstream/.revendor-conflicts/`.
fn marked(input: &Input<'_>, run: &DryRun) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in run.patches.iter().filter(|p| p.outcome == Kind::Conflict) {
        let source = input
            .config
            .patches_for(AppliesTo::Source)
            .any(|s| s.name == p.patch);
        let file = match source {
            true => conflict_copy(&p.patch, &p.target),
            false => p.target.clone(),
        };
        if !out.contains(&file) {
            out.push(file);
        }
    }
    out
}

/// An OCI chart's locked tag pushed again with another manifest: an error,
/// since the same version now means other files; its dry run is not done,
/// because whether to take the new files is a person's call.
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
        ))
        .dry_run(DryRun::not_done(
            up.name.as_deref(),
            &locked.version,
            tag,
            "revendor update",
            &format!("the tag {tag} was pushed again with manifest {digest}: a person decides whether to take it"),
        )),
    );
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
    let run = carried(input, up, locked, source, head, "revendor update", sink)?;
    sink.push(
        Finding::error(
            UPSTREAM_NEWER.name,
            "vendor.toml",
            up.version_line,
            format!(
                "branch `{branch}` of {} moved to {head}; the vendored commit is {locked}; dry run: {}",
                up.label(),
                summary(&run)
            ),
        )
        .fix(fix(input, &run))
        .dry_run(run),
    );
    Ok(())
}

fn dry_run(
    input: &Input<'_>,
    up: &Upstream,
    locked: &str,
    source: &dyn Source,
    tag: &str,
) -> Result<Vec<PatchResult>> {
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
        let pristine = input.pristine(vendor)?;
        let Pristine::Verified(base) = &*pristine else {
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
                        out.push(PatchResult::described(
                            &patches.section(first).0.name,
                            &vendor.to,
                            Kind::Conflict,
                            format!("conflict (upstream {tag} no longer has `{}`)", vendor.from),
                        ));
                        continue;
                    }
                }
            }
        };
        let walk = package.carry(vendor, base.into(), theirs.as_slice().into(), tag);

        // A conflict's marked file says nothing about the sections after
        // it: the dry run ends there.
        let conflict = walk
            .steps
            .iter()
            .position(|s| matches!(s.outcome, Outcome::Conflict { .. }));
        let shown = conflict.map_or(walk.steps.len(), |i| i + 1);
        for s in &walk.steps[..shown] {
            let name = &patches.section(s.id).0.name;
            out.push(described(name, &vendor.to, &s.outcome));
        }
        if let (None, Err(e)) = (conflict, &walk.output) {
            let words = e.to_string();
            out.push(PatchResult::described(
                &e.patch,
                &vendor.to,
                Kind::Conflict,
                words,
            ));
        }
    }
    out.extend(source_patches(input, up, locked, source, tag, &labels)?);
    Ok(out)
}

/// The source patches of `up` applied to its tree at `tag`, and rebased
/// from the locked tree where they do not apply.
fn source_patches(
    input: &Input<'_>,
    up: &Upstream,
    locked: &str,
    source: &dyn Source,
    tag: &str,
    labels: &Labels<'_>,
) -> Result<Vec<PatchResult>> {
    let sources = Patches::load_kind(input.config, AppliesTo::Source)?;
    let ours_only = |p: &&crate::render::LoadedPatch| {
        input
            .config
            .patches
            .iter()
            .any(|c| c.name == p.name && c.upstream == up.name)
    };
    let mut out = Vec::new();
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
                Ok(applied) => described(&p.name, &path, &Outcome::from(applied)),
                Err(_) => {
                    if base_tree.is_none() {
                        let lock = input.lock.upstream(up.name.as_deref());
                        base_tree = Some(upstream::fetch_tree(source, locked, lock)?);
                    }
                    let base = base_tree
                        .as_ref()
                        .and_then(|t| t.files.get(&path).cloned())
                        .unwrap_or_default();
                    match patch::rebase(&base, fp, &theirs, labels) {
                        Ok(outcome) => described(&p.name, &path, &outcome),
                        Err(e) => PatchResult::described(
                            &p.name,
                            &path,
                            Kind::Conflict,
                            format!("does not apply to {locked}: {e}"),
                        ),
                    }
                }
            };
            out.push(result);
        }
    }
    Ok(out)
}

/// A patch section's result worded as the finding says it: `exact`,
/// `offset`, `merged`, `already-upstream`, or a conflict with its lines.
fn described(patch: &str, target: &str, outcome: &Outcome) -> PatchResult {
    let words = match outcome {
        Outcome::Conflict { .. } => outcome.to_string(),
        other => other.kind().to_owned(),
    };
    PatchResult::described(patch, target, Kind::from(outcome), words)
}
