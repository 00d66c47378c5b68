//! Carrying the vendor patches of one file from the locked upstream to the
//! target: strict first, then a 3-way merge, then an exact refresh.
//!
//! Patches targeting the same file are applied in vendor.toml order, each on
//! the output of the ones before it, on both sides (base and theirs).

use super::summary::{ConflictReport, PatchReport};
use crate::config::Vendor;
use crate::error::{Error, Result};
use crate::patch::{self, FilePatch, Labels, Outcome};
use crate::render::{PatchStep, Patches};

/// The result for one vendored file.
pub(super) struct Carried {
    /// The patched target (with conflict markers when there are conflicts).
    pub output: Vec<u8>,
    /// Each patch section's result.
    pub reports: Vec<PatchReport>,
    /// Conflicting hunks.
    pub conflicts: Vec<ConflictReport>,
    /// Refreshed sections: (patch, file section) → exact hunks at the target.
    pub refreshed: Vec<((usize, usize), FilePatch)>,
}

/// Where each hunk of `fp` lands on `content` when applied alone:
/// `hunk 1 +9, …, hunk 5 does not apply`. Says which hunks upstream moved
/// and which one it changed under the patch.
fn placement(fp: &FilePatch, content: &[u8]) -> String {
    let parts: Vec<String> = (0..fp.hunks.len())
        .map(|i| {
            let mut single = fp.clone();
            single.hunks = vec![fp.hunks[i].clone()];
            match patch::apply(&single, content) {
                Ok(a) if a.offsets[0] == 0 => format!("hunk {} exact", i + 1),
                Ok(a) => format!("hunk {} offset {:+}", i + 1, a.offsets[0]),
                Err(_) => format!("hunk {} does not apply", i + 1),
            }
        })
        .collect();
    parts.join(", ")
}

pub(super) fn carry(
    patches: &Patches,
    vendor: &Vendor,
    base: &[u8],
    theirs: &[u8],
    base_version: &str,
    target: &str,
) -> Result<Carried> {
    let mut b = base.to_vec();
    let mut t = theirs.to_vec();
    let mut out = Carried {
        output: Vec::new(),
        reports: Vec::new(),
        conflicts: Vec::new(),
        refreshed: Vec::new(),
    };
    let ours_label = format!("patched {base_version}");
    let labels = Labels {
        ours: &ours_label,
        base: base_version,
        theirs: target,
    };
    for id in patches.sections_for(vendor) {
        let (p, fp) = patches.section(id);
        let ours = patch::apply(fp, &b).map_err(|e| {
            Error::Conflict(format!(
                "patch `{}` ({}) does not apply to `{}` at the locked version {base_version}: {e}",
                p.name, p.file, vendor.from
            ))
        })?;
        let rebased = patch::rebase(&b, fp, &t, &labels)
            .map_err(|e| Error::Conflict(format!("patch `{}` ({}): {e}", p.name, p.file)))?;
        let (step, next) = match rebased {
            Outcome::Exact { content } => (PatchStep::Exact, content),
            Outcome::Offset { content, offsets } => (PatchStep::Offset(offsets), content),
            Outcome::Merged { content } => (PatchStep::Merged, content),
            Outcome::AlreadyUpstream { .. } => (PatchStep::AlreadyUpstream, t.clone()),
            Outcome::Conflict { hunks, marked } => {
                // The strict failure names the hunk (number, header, first
                // line that no longer matches); the merge names the lines.
                let strict = patch::apply(fp, &t).err().map(|e| e.to_string());
                for h in &hunks {
                    out.conflicts.push(ConflictReport {
                        patch: p.name.clone(),
                        file: vendor.to.clone(),
                        start: h.line_start,
                        end: h.line_end,
                        ours: String::from_utf8_lossy(&h.ours).into_owned(),
                        theirs: String::from_utf8_lossy(&h.theirs).into_owned(),
                        strict: strict.clone(),
                    });
                }
                out.reports.push(PatchReport {
                    patch: p.name.clone(),
                    target: vendor.to.clone(),
                    result: format!("conflict ({})", placement(fp, &t)),
                });
                b = ours.content;
                t = marked;
                continue;
            }
        };
        if step != PatchStep::AlreadyUpstream {
            out.refreshed.push((id, patch::refresh(fp, &t, &next)));
        }
        out.reports.push(PatchReport {
            patch: p.name.clone(),
            target: vendor.to.clone(),
            result: step.to_string(),
        });
        b = ours.content;
        t = next;
    }
    out.output = t;
    Ok(out)
}
