//! `patch-offset` and `patch-upstreamed`: how each vendor patch lands on the
//! locked pristine copy.
//!
//! Every section of every `applies-to = "vendor"` patch is applied strictly,
//! in vendor.toml order, to the pristine copy it targets ([`Walk`]). A
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
use crate::config::Vendor;
use crate::error::Result;
use crate::patch::{self, ApplyError};
use crate::render::{PatchStep, Patches};

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

/// What happened to one patch section in a [`Walk`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Outcome {
    /// Applied strictly; per hunk, how far it moved.
    Applied(Vec<isize>),
    /// Did not apply, but reverse-applies: upstream has the change.
    Upstreamed,
    /// Neither applies nor reverse-applies.
    Failed(ApplyError),
}

/// One section of a walk.
#[derive(Debug, Clone)]
pub(super) struct Step {
    /// (patch index, file section index) in [`Patches`].
    pub section: (usize, usize),
    /// What applying it did.
    pub outcome: Outcome,
}

/// Every patch section targeting one vendored file, applied in order to its
/// pristine copy.
#[derive(Debug, Clone)]
pub(super) struct Walk {
    /// One step per section, up to and including the first failure.
    pub steps: Vec<Step>,
    /// The patched file; `None` when a section failed.
    pub content: Option<Vec<u8>>,
}

impl Walk {
    /// Walks the sections of `patches` that target `vendor` over `pristine`.
    pub fn run(patches: &Patches, vendor: &Vendor, pristine: &[u8]) -> Walk {
        let mut text = pristine.to_vec();
        let mut steps = Vec::new();
        for section in patches.sections_for(vendor) {
            let (_, fp) = patches.section(section);
            let outcome = match patch::apply(fp, &text) {
                Ok(applied) => {
                    text = applied.content;
                    Outcome::Applied(applied.offsets)
                }
                Err(e) => match patch::apply_reverse(fp, &text) {
                    Ok(_) => Outcome::Upstreamed,
                    Err(_) => Outcome::Failed(e),
                },
            };
            let failed = matches!(outcome, Outcome::Failed(_));
            steps.push(Step { section, outcome });
            if failed {
                return Walk {
                    steps,
                    content: None,
                };
            }
        }
        Walk {
            steps,
            content: Some(text),
        }
    }
}

/// The 1-based line of hunk `hunk` (0-based) of file section `file` in a
/// patch file's text: its `@@` line, or 1 when it cannot be found.
pub(super) fn hunk_line(patches: &Patches, (pi, fi): (usize, usize), hunk: usize) -> usize {
    let p = &patches.loaded[pi];
    let before: usize = p.set.files[..fi].iter().map(|f| f.hunks.len()).sum();
    let wanted = before + hunk;
    p.bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, l)| l.starts_with(b"@@ -"))
        .nth(wanted)
        .map_or(1, |(i, _)| i + 1)
}

fn check(input: &Input<'_>, sink: &mut Sink) -> Result<()> {
    for vendor in &input.config.vendor {
        let Some(walk) = input.walk(vendor)? else {
            continue;
        };
        let patches = input.vendor_patches()?;
        for step in &walk.steps {
            let (p, _) = patches.section(step.section);
            match &step.outcome {
                Outcome::Applied(offsets) => {
                    let Some(first) = offsets.iter().position(|o| *o != 0) else {
                        continue;
                    };
                    sink.push(
                        Finding::warning(
                            PATCH_OFFSET.name,
                            &p.file,
                            hunk_line(&patches, step.section, first),
                            format!(
                                "patch `{}` applies to `{}` only with {}",
                                p.name,
                                vendor.to,
                                PatchStep::Offset(offsets.clone())
                            ),
                        )
                        .fix(format!("run `revendor patch refresh {}`", p.name)),
                    );
                }
                Outcome::Upstreamed => {
                    let whole = p.set.files.len() == 1;
                    sink.push(
                        Finding::error(
                            PATCH_UPSTREAMED.name,
                            &p.file,
                            hunk_line(&patches, step.section, 0),
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
                Outcome::Failed(_) => {}
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use std::path::Path;

    fn patches(text: &str) -> (Patches, Vendor) {
        let config = Config::parse(
            Path::new("."),
            Path::new("vendor.toml"),
            "[upstream]\ngithub = \"o/r\"\nversion = \"v1\"\n[[vendor]]\nfrom = \"a.yml\"\nto = \"t/a.yml\"\n",
        )
        .unwrap();
        let set = patch::parse(text.as_bytes()).unwrap();
        let loaded = crate::render::LoadedPatch {
            name: "p".into(),
            file: "p.patch".into(),
            strip: 1,
            bytes: text.as_bytes().to_vec(),
            sha256: String::new(),
            set,
        };
        (
            Patches {
                loaded: vec![loaded],
            },
            config.vendor[0].clone(),
        )
    }

    const PATCH: &str =
        "--- a/a.yml\n+++ b/a.yml\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n@@ -6,2 +6,3 @@\n f\n+g\n h\n";

    #[test]
    fn exact_offset_upstreamed_and_failed() {
        let (p, v) = patches(PATCH);
        let walk = Walk::run(&p, &v, b"a\nb\nc\nd\ne\nf\nh\n");
        assert_eq!(walk.steps[0].outcome, Outcome::Applied(vec![0, 0]));
        assert_eq!(
            walk.content.as_deref(),
            Some(&b"a\nb\nC\nd\ne\nf\ng\nh\n"[..])
        );

        let walk = Walk::run(&p, &v, b"x\na\nb\nc\nd\ne\nf\nh\n");
        assert_eq!(walk.steps[0].outcome, Outcome::Applied(vec![1, 1]));

        let walk = Walk::run(&p, &v, b"a\nb\nC\nd\ne\nf\ng\nh\n");
        assert_eq!(walk.steps[0].outcome, Outcome::Upstreamed);
        assert!(walk.content.is_some());

        let walk = Walk::run(&p, &v, b"a\nb\nX\nd\ne\nf\nh\n");
        assert!(matches!(walk.steps[0].outcome, Outcome::Failed(_)));
        assert!(walk.content.is_none());
    }

    #[test]
    fn hunk_lines_count_in_the_patch_file() {
        let (p, _) = patches(PATCH);
        assert_eq!(hunk_line(&p, (0, 0), 0), 3);
        assert_eq!(hunk_line(&p, (0, 0), 1), 8);
        assert_eq!(hunk_line(&p, (0, 0), 7), 1);
    }
}
