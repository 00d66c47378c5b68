//! `render-drift`: each rendered file equals pin(rewrite(patches(upstream)))
//! at the locked version.
//!
//! 1. Take the strict patch walk over the verified pristine copy (see
//!    `patches.rs`); a section that does not apply means the file cannot be
//!    rendered at all, reported at the failing hunk of the patch.
//! 2. Finish it as `render` does ([`render::finish`]: rewrites with the
//!    locked version, the locked pin).
//! 3. Compare with the file on disk, one finding per differing hunk, at its
//!    line in the file on disk.
//!
//! Before comparing, the file on disk has the locked pin put back at every
//! pin site and stale `[[rewrite]]` results set to the locked version: those
//! lines are `image-pin`'s and `version-sync`'s to report, so that one
//! mistake makes one finding. What is left is an edit no patch carries.

use super::patches::{Outcome, hunk_line};
use super::{Check, Finding, Id, Input, Sink, version_sync};
use crate::error::Result;
use crate::render;

/// `render-drift`.
pub const RENDER_DRIFT: Id = Id {
    name: "render-drift",
    doc: "\
### What
A rendered file differs from what its pristine copy, the vendor patches, the
rewrites and the pin give at the locked version: an edit no patch carries, or
a patch that no longer applies to the locked upstream at all.

### Why
The rendered file is output. An edit made there is lost on the next `update`
or `render`, silently, unless a patch carries it; this is how a vendored fix
disappears in an upgrade pull request nobody reads line by line.

### Example
```text
render-drift
  templates/multus-daemonset-thick.yml:130: error: line 130 differs from the render: `+        \"logLevel\": \"debug\",` (1 added): an edit no patch carries (fix: carry it in a patch with `revendor update --adopt-edits`, or drop it with `revendor render`)
```
",
};

pub(super) const CHECK: Check = Check {
    name: "render_drift",
    ids: &[RENDER_DRIFT],
    online_only: false,
    run: check,
};

fn check(input: &Input<'_>, sink: &mut Sink) -> Result<()> {
    let id = RENDER_DRIFT.name;
    let version = &input.lock.upstream.version;
    let pin = input.lock.image.as_ref().map(|i| i.reference.as_str());
    for vendor in &input.config.vendor {
        let Some(walk) = input.walk(vendor)? else {
            continue;
        };
        let Some(patched) = &walk.content else {
            let patches = input.vendor_patches()?;
            if let Some(step) = walk.steps.last()
                && let Outcome::Failed(e) = &step.outcome
            {
                let (p, _) = patches.section(step.section);
                let hunk = match e {
                    crate::patch::ApplyError::Mismatch { hunk, .. }
                    | crate::patch::ApplyError::Overlap { hunk, .. }
                    | crate::patch::ApplyError::OutOfRange { hunk, .. } => hunk.saturating_sub(1),
                    _ => 0,
                };
                sink.push(
                    Finding::error(
                        id,
                        &p.file,
                        hunk_line(&patches, step.section, hunk),
                        format!(
                            "`{}` cannot be rendered: patch `{}` does not apply to the locked `{}` ({version}): {e}",
                            vendor.to, p.name, vendor.from
                        ),
                    )
                    .fix(format!(
                        "make the patch apply to `{}` again, then run `revendor patch refresh {}`",
                        vendor.pristine(),
                        p.name
                    )),
                );
            }
            continue;
        };
        let expected = render::finish(input.config, &vendor.to, patched, version, pin)?;
        let Some(actual) = input.read(&vendor.to)? else {
            sink.push(
                Finding::error(id, &vendor.to, 1, format!("`{}` is missing", vendor.to))
                    .fix("run `revendor render`"),
            );
            continue;
        };
        let expected = String::from_utf8_lossy(&expected);
        let actual = normalize(input, &vendor.to, &String::from_utf8_lossy(&actual));
        if expected == actual {
            continue;
        }
        for hunk in drift_hunks(&expected, &actual) {
            sink.push(
                Finding::error(id, &vendor.to, hunk.line, hunk.message())
                    .fix("carry it in a patch with `revendor update --adopt-edits`, or drop it with `revendor render`"),
            );
        }
    }
    Ok(())
}

/// The file on disk with the locked pin at every pin site and every
/// `[[rewrite]]` result at the locked version (see the module docs).
fn normalize(input: &Input<'_>, file: &str, text: &str) -> String {
    let mut out = version_sync::normalize(input.config, file, text, &input.lock.upstream.version);
    if let Some(image) = &input.lock.image {
        for pin in input.config.pins.iter().filter(|p| p.file == file) {
            // A file that does not parse as YAML keeps its text: the
            // difference then shows as drift, which is what it is.
            if let Ok(pinned) = render::pin::apply(&out, pin, &image.reference) {
                out = pinned;
            }
        }
    }
    out
}

/// One differing region of a rendered file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DriftHunk {
    /// First line of the region in the file on disk.
    line: usize,
    /// Last line of it (equal to `line` for a pure removal).
    last: usize,
    /// Lines on disk that the render does not have.
    added: Vec<String>,
    /// Lines of the render missing on disk.
    removed: Vec<String>,
}

impl DriftHunk {
    fn message(&self) -> String {
        let lines = if self.last > self.line {
            format!("lines {}-{}", self.line, self.last)
        } else {
            format!("line {}", self.line)
        };
        let sample = match (self.added.first(), self.removed.first()) {
            (Some(a), _) => format!("`+{a}`"),
            (None, Some(r)) => format!("`-{r}`"),
            (None, None) => String::new(),
        };
        let mut counts = Vec::new();
        if !self.added.is_empty() {
            counts.push(format!("{} added", self.added.len()));
        }
        if !self.removed.is_empty() {
            counts.push(format!("{} removed", self.removed.len()));
        }
        format!(
            "{lines} differ{} from the render: {sample} ({}): an edit no patch carries",
            if lines.starts_with("line ") { "s" } else { "" },
            counts.join(", ")
        )
    }
}

/// The regions where `actual` differs from `expected`, in file order.
fn drift_hunks(expected: &str, actual: &str) -> Vec<DriftHunk> {
    let mut options = diffy::DiffOptions::new();
    options.set_context_len(0);
    let diff = options.create_patch(expected, actual);
    diff.hunks()
        .iter()
        .map(|h| {
            let mut line = h.new_range().start();
            let mut first = None;
            let mut last = line;
            let mut added = Vec::new();
            let mut removed = Vec::new();
            for l in h.lines() {
                match l {
                    diffy::Line::Context(_) => line += 1,
                    diffy::Line::Insert(t) => {
                        first.get_or_insert(line);
                        last = line;
                        added.push(t.trim_end_matches(['\n', '\r']).to_owned());
                        line += 1;
                    }
                    diffy::Line::Delete(t) => {
                        // A removal sits before the line now at `line`
                        // (diffy numbers an empty new range one lower).
                        let at = if h.new_range().is_empty() {
                            line + 1
                        } else {
                            line
                        };
                        first.get_or_insert(at);
                        removed.push(t.trim_end_matches(['\n', '\r']).to_owned());
                    }
                }
            }
            let line = first.unwrap_or(line);
            DriftHunk {
                line,
                last: last.max(line),
                added,
                removed,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_hunk_per_region_at_its_line_on_disk() {
        let expected = "a\nb\nc\nd\ne\nf\ng\n";
        let actual = "a\nB\nc\nd\ne\nf\ng\nh\n";
        let hunks = drift_hunks(expected, actual);
        assert_eq!(hunks.len(), 2, "{hunks:?}");
        assert_eq!((hunks[0].line, hunks[0].last), (2, 2));
        assert_eq!(hunks[0].added, ["B"]);
        assert_eq!(hunks[0].removed, ["b"]);
        assert_eq!(
            hunks[0].message(),
            "line 2 differs from the render: `+B` (1 added, 1 removed): an edit no patch carries"
        );
        assert_eq!(hunks[1].line, 8);
    }

    #[test]
    fn a_removal_points_at_the_line_after_it() {
        let hunks = drift_hunks("a\nb\nc\n", "a\nc\n");
        assert_eq!(hunks.len(), 1);
        assert_eq!(hunks[0].line, 2);
        assert_eq!(hunks[0].removed, ["b"]);
        assert!(hunks[0].message().contains("`-b`"));
    }
}
