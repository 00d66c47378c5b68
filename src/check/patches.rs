//! `patch-offset` and `patch-upstreamed`: how each vendor patch lands on the
//! locked pristine copy.
//!
//! Every section of every `applies-to = "vendor"` patch is applied strictly,
//! in vendor.toml order, to the pristine copy it targets
//! ([`Package::walk`](crate::render::Package::walk)). A
//! section that lands only at an offset still renders, but the next upstream
//! change near it may land it somewhere else: refresh it. A section that does
//! not apply but reverse-applies means the locked upstream already contains
//! the change. A section that does neither cannot render at all; that is
//! `render-drift`'s to report.
//!
//! Source patches are applied to the upstream source tree at the locked
//! version, each section on its own, for `patch-upstreamed` only (`git apply`
//! in the image build takes offsets, and lock-integrity holds the files to
//! the sha256 `update` verified). That tree is read offline when it is at
//! hand: the archive `update` downloaded, from the download cache by the
//! tree hash the lock records, or a git upstream's mirror. When it is not (a
//! fresh machine), only `--online` reports them, fetching the tree.

use std::collections::HashMap;

use super::verdict::{Key, Verdicts};
use super::{Check, Finding, Id, Input, Sink};
use crate::config::AppliesTo;
use crate::error::Result;
use crate::patch::{self, Outcome};
use crate::render::{LoadedPatch, Patches};
use crate::upstream;

/// `patch-offset`.
pub const PATCH_OFFSET: Id = Id {
    name: "patch-offset",
    doc: "\
### What
A vendor patch applies to the locked upstream file only with some hunks moved
from the lines their headers name. It is a warning: the render is still right.

### Why
A hunk that already drifted is one upstream change away from landing in the
wrong place or not at all. Refreshing keeps every hunk exact, so the next
`update` compares like with like.

### Example
```text
patch-offset
  patches/customize-deployment.patch:3: warning: patch `customize-deployment` applies to `templates/multus-daemonset-thick.yml` only with offset (hunk 1 -1, hunk 2 -1) (fix: run `revendor patch refresh customize-deployment`)
```
",
};

/// `patch-upstreamed`.
pub const PATCH_UPSTREAMED: Id = Id {
    name: "patch-upstreamed",
    doc: "\
### What
A patch (or one file section of it) no longer applies to the locked
upstream, but its reverse does: upstream already contains the change. Vendor
patches are checked against the pristine copies, always. Source patches are
checked against the upstream source tree at the locked version when it is at
hand offline (the archive `update` downloaded, kept in the download cache by
the tree hash the lock records, or a git upstream's mirror); otherwise only with
`--online`, which fetches it.

### Why
A patch that upstream merged does not apply any more: a source patch stops
the image build's `git apply`, a vendor patch stops `render`. Dropping it
keeps the patch list the set of changes that are really ours; `revendor
update --drop-upstreamed` does it when moving to a release that carries it.

### Example
```text
patch-upstreamed
  patches/fix.patch:3: error: upstream v4.3.0 already contains the change patch `fix` makes to `templates/app.yml` (fix: drop the patch: remove its [[patch]] from vendor.toml and delete `patches/fix.patch`)
  images/app/patches/fix.diff:5: error: upstream v4.3.0 already contains the change source patch `fix-go` makes to `pkg/app/app.go` (fix: drop the patch: remove its [[patch]] from vendor.toml and delete `images/app/patches/fix.diff`)
```
",
};

pub(super) const CHECK: Check = Check {
    name: "patches",
    ids: &[PATCH_OFFSET, PATCH_UPSTREAMED],
    online_only: false,
    run: check,
};

fn check(input: &Input<'_>, sink: &mut Sink) -> Result<()> {
    vendor(input, sink)?;
    source(input, sink)
}

fn vendor(input: &Input<'_>, sink: &mut Sink) -> Result<()> {
    for vendor in input.files()?.iter() {
        let Some(walk) = input.walk(vendor)? else {
            continue;
        };
        let package = input.package()?;
        let patches = package.patches();
        for (id, outcome) in &walk.outcomes {
            let (p, _) = patches.section(*id);
            match outcome {
                Outcome::Offset { offsets, .. } => {
                    let first = offsets.iter().position(|o| *o != 0).unwrap_or(0);
                    sink.push(
                        Finding::warning(
                            PATCH_OFFSET.name,
                            &p.file,
                            patches.hunk_line(*id, first),
                            format!(
                                "patch `{}` applies to `{}` only with {}",
                                p.name, vendor.to, outcome
                            ),
                        )
                        .fix(format!("run `revendor patch refresh {}`", p.name)),
                    );
                }
                Outcome::AlreadyUpstream { .. } => {
                    let whole = p.set.files.len() == 1;
                    sink.push(
                        Finding::error(
                            PATCH_UPSTREAMED.name,
                            &p.file,
                            patches.hunk_line(*id, 0),
                            format!(
                                "upstream {} already contains the change patch `{}` makes to `{}`",
                                input.stamp.version(vendor.upstream.as_deref()),
                                p.name,
                                vendor.to
                            ),
                        )
                        .fix(drop_fix(whole, &p.file, &vendor.to)),
                    );
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// `patch-upstreamed` for the sections of the source patches, against the
/// locked source tree when it can be read (see the module doc). A patch
/// whose verdict on that tree is remembered ([`Verdicts`]) needs no tree.
fn source(input: &Input<'_>, sink: &mut Sink) -> Result<()> {
    let patches = Patches::load_kind(input.config, AppliesTo::Source)?;
    if patches.loaded().is_empty() {
        return Ok(());
    }
    let ctx = input.ctx;
    let verdicts = Verdicts::new(&ctx.env.cache_dir);
    let keys: HashMap<&str, Key> = patches
        .loaded()
        .iter()
        .filter_map(|p| {
            let tree = input.lock.upstream(p.upstream.as_deref())?;
            let tree = tree.source_tree_sha256.as_deref()?;
            Some((p.name.as_str(), Key::new(tree, p.strip, &p.bytes)))
        })
        .collect();
    let mut known: HashMap<&str, Vec<usize>> = keys
        .iter()
        .filter_map(|(&name, key)| Some((name, verdicts.get(key)?)))
        .collect();
    for up in &input.config.upstreams {
        let Some(locked) = input.lock.upstream(up.name.as_deref()) else {
            continue;
        };
        let unknown: Vec<&LoadedPatch> = patches
            .loaded()
            .iter()
            .filter(|p| p.upstream == up.name && !known.contains_key(p.name.as_str()))
            .collect();
        if unknown.is_empty() {
            continue;
        }
        let source = upstream::open(up, &ctx.env, &ctx.client);
        let tree = upstream::locked_tree(&*source, &ctx.cache, locked, input.online)?;
        let Some(tree) = tree else {
            continue;
        };
        for p in unknown {
            let found = upstreamed(p, &tree);
            if let Some(key) = keys.get(p.name.as_str()) {
                verdicts.put(key, &found);
            }
            known.insert(&p.name, found);
        }
    }
    for id in patches.sections() {
        let (p, fp) = patches.section(id);
        let upstreamed = known.get(p.name.as_str());
        if !upstreamed.is_some_and(|found| found.contains(&id.index())) {
            continue;
        }
        let (Some(locked), Some(path)) = (
            input.lock.upstream(p.upstream.as_deref()),
            fp.target_path(p.strip),
        ) else {
            continue;
        };
        sink.push(
            Finding::error(
                PATCH_UPSTREAMED.name,
                &p.file,
                patches.hunk_line(id, 0),
                format!(
                    "upstream {} already contains the change source patch `{}` makes to `{path}`",
                    locked.version, p.name
                ),
            )
            .fix(drop_fix(p.set.files.len() == 1, &p.file, &path)),
        );
    }
    Ok(())
}

/// The sections of `p` (0-based) that do not apply to `tree` but are undone
/// by it: changes the tree already has.
fn upstreamed(p: &LoadedPatch, tree: &upstream::SourceTree) -> Vec<usize> {
    (0..p.set.files.len())
        .filter(|&section| {
            let fp = &p.set.files[section];
            let file = fp
                .target_path(p.strip)
                .and_then(|path| tree.files.get(&path));
            file.is_some_and(|file| {
                patch::apply(fp, file).is_err() && patch::apply_reverse(fp, file).is_ok()
            })
        })
        .collect()
}

/// What to do about an upstreamed section: drop the patch, or the section.
fn drop_fix(whole: bool, file: &str, target: &str) -> String {
    if whole {
        format!("drop the patch: remove its [[patch]] from vendor.toml and delete `{file}`")
    } else {
        format!("drop the section for `{target}` from `{file}`")
    }
}
