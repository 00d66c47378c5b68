//! `patch-offset` and `patch-upstreamed`: how each vendor patch lands on the
//! locked pristine copy.
//!
//! Every section of every `applies-to = "vendor"` patch is applied strictly,
//! in vendor.toml order, to the pristine copy it targets
//! ([`Stack::walk`](crate::render::Stack::walk)). A
//! section that lands only at an offset still renders, but the next upstream
//! change near it may land it somewhere else: refresh it. A section that does
//! not apply but reverse-applies means the locked upstream already contains
//! the change. A section that does neither cannot render at all; that is
//! `render-drift`'s to report.
//!
//! Source patches are not walked here: `update` verified them against the
//! locked source archive (its sha256 is in the lock) and lock-integrity holds
//! the patch files to the sha256 they were verified with.

use super::{Check, Finding, Id, Input, Sink};
use crate::error::Result;
use crate::patch::Outcome;

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
A vendor patch (or one file section of it) no longer applies to the locked
upstream file, but its reverse does: upstream already contains the change.

### Why
A patch that upstream merged is dead weight that will conflict on the next
release. Dropping it keeps the patch list the set of changes that are really
ours.

### Example
```text
patch-upstreamed
  patches/fix.patch:3: error: upstream v4.3.0 already contains the change patch `fix` makes to `templates/app.yml` (fix: drop the section from `patches/fix.patch` (or the whole [[patch]] from vendor.toml))
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
    for vendor in &input.config.vendor {
        let Some(walk) = input.walk(vendor)? else {
            continue;
        };
        let patches = input.vendor_patches()?;
        for step in &walk.steps {
            let (p, _) = patches.section(step.id);
            match &step.outcome {
                Outcome::Offset { offsets, .. } => {
                    let first = offsets.iter().position(|o| *o != 0).unwrap_or(0);
                    sink.push(
                        Finding::warning(
                            PATCH_OFFSET.name,
                            &p.file,
                            patches.hunk_line(step.id, first),
                            format!(
                                "patch `{}` applies to `{}` only with {}",
                                p.name, vendor.to, step.outcome
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
                            patches.hunk_line(step.id, 0),
                            format!(
                                "upstream {} already contains the change patch `{}` makes to `{}`",
                                input.lock.upstream.version, p.name, vendor.to
                            ),
                        )
                        .fix(if whole {
                            format!(
                                "drop the patch: remove its [[patch]] from vendor.toml and delete `{}`",
                                p.file
                            )
                        } else {
                            format!("drop the section for `{}` from `{}`", vendor.to, p.file)
                        }),
                    );
                }
                _ => {}
            }
        }
    }
    Ok(())
}
