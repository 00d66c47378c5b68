//! Carrying the vendor patches of one file from the locked upstream to the
//! target ([`Package::carry`](crate::render::Package::carry): strict on the
//! locked side, then rebased, 3-way when the strict apply fails), reporting
//! each section and refreshing it to exact hunks at the target.

use super::summary::{ConflictReport, UpstreamedReport};
use super::upstreamed;
use crate::config::Vendor;
use crate::error::Result;
use crate::ops::outcome::{Kind, PatchResult};
use crate::patch::{self, FilePatch, Outcome};
use crate::render::Package;

/// The result for one vendored file.
pub(super) struct Carried {
    /// The patched target (with conflict markers when there are conflicts).
    pub output: Vec<u8>,
    /// Each patch section's result.
    pub reports: Vec<PatchResult>,
    /// Conflicting hunks.
    pub conflicts: Vec<ConflictReport>,
    /// Sections upstream already carries.
    pub upstreamed: Vec<UpstreamedReport>,
}

/// Where each hunk of `fp` lands on `content` when applied alone:
/// `hunk 1 +9, …, hunk 5 does not apply`. Says which hunks upstream moved
/// and which one it changed under the patch.
/// The file is split once for all the hunks ([`patch::hunks_alone`]), not
/// once per hunk with a copy of the patch (issue 23).
fn placement(fp: &FilePatch, content: &[u8]) -> String {
    let parts: Vec<String> = patch::hunks_alone(fp, content)
        .into_iter()
        .enumerate()
        .map(|(i, offset)| match offset {
            Some(0) => format!("hunk {} exact", i + 1),
            Some(offset) => format!("hunk {} offset {offset:+}", i + 1),
            None => format!("hunk {} does not apply", i + 1),
        })
        .collect();
    parts.join(", ")
}

/// Carries the sections targeting `vendor` from `base` (at the package's
/// version) to `theirs` (at `target`), and refreshes each carried section
/// in `package` to exact hunks at the target. Both sides are given by value
/// and not copied ([`Package::carry`]): `base` goes once the first section
/// is rebased, and `theirs` comes back beside the result. The last
/// section is refreshed against the output, not a copy of it: two copies
/// less at the update's peak (issue 23).
pub(super) fn carry(
    package: &mut Package<'_>,
    vendor: &Vendor,
    base: Vec<u8>,
    theirs: Vec<u8>,
    target: &str,
) -> Result<(Carried, Vec<u8>)> {
    let walk = package.carry(vendor, base.into(), theirs.into(), target);
    let output = walk.output?;
    // With no section, the output is the new release itself.
    let mut theirs = match walk.steps.first() {
        Some(_) => Vec::new(),
        None => output.clone(),
    };
    let mut out = Carried {
        output,
        reports: Vec::new(),
        conflicts: Vec::new(),
        upstreamed: Vec::new(),
    };
    let last = walk.steps.len().saturating_sub(1);
    for (at, step) in walk.steps.into_iter().enumerate() {
        let (p, fp) = package.patches().section(step.id);
        let result = match &step.outcome {
            Outcome::Conflict { hunks, .. } => {
                // The strict failure names the hunk (number, header, first
                // line that no longer matches); the merge names the lines.
                let strict = patch::apply(fp, &step.input).err().map(|e| e.to_string());
                for h in hunks {
                    out.conflicts.push(ConflictReport {
                        patch: p.name.clone(),
                        file: vendor.to.clone(),
                        start: h.line_start,
                        end: h.line_end,
                        ours: String::from_utf8_lossy(&h.ours).into_owned(),
                        theirs: String::from_utf8_lossy(&h.theirs).into_owned(),
                        strict: strict.clone(),
                        marked: None,
                    });
                }
                format!("conflict ({})", placement(fp, &step.input))
            }
            Outcome::AlreadyUpstream { .. } => {
                let index = step.id.index();
                out.upstreamed
                    .push(upstreamed::found(&p.name, &p.file, &vendor.to, index));
                step.outcome.to_string()
            }
            outcome => upstreamed::describe(fp, &step.input, outcome),
        };
        out.reports.push(PatchResult::described(
            &p.name,
            &vendor.to,
            Kind::from(&step.outcome),
            result,
        ));
        let refresh = !matches!(
            step.outcome,
            Outcome::Conflict { .. } | Outcome::AlreadyUpstream { .. }
        );
        // The last section's content is the output: it goes before the
        // refresh builds its line tables.
        let content = (at != last).then_some(step.outcome);
        if refresh {
            let content = content.as_ref().map_or(&out.output[..], Outcome::content);
            package
                .patches_mut()
                .refresh_section(step.id, &step.input, content);
        }
        if at == 0 {
            theirs = step.input;
        }
    }
    Ok((out, theirs))
}
