//! `render-drift`: each rendered file equals pin(rewrite(patches(upstream)))
//! at the locked version.
//!
//! 1. Take the patch walk over the verified pristine copy (see
//!    `patches.rs`); a section that does not apply means the file cannot be
//!    rendered at all, reported at the failing hunk of the patch.
//! 2. Finish it as `render` does ([`Package::finish`](render::Package::finish):
//!    rewrites with the locked version, the locked pin).
//! 3. Compare with the file on disk ([`render::hand_edits`]), one finding
//!    per differing region, at its line in the file on disk.
//!
//! A file on disk that differs from the render is compared again after the
//! locked pin is put back at every pin site and stale `[[rewrite]]` results
//! are set to the locked version: those lines are `image-pin`'s and
//! `version-sync`'s to report, so that one mistake makes one finding. What
//! is left is an edit no patch carries, unless the lock explains it: a
//! conflict of an update pending since `update --keep-conflicts` (one
//! finding, pointing to `update --continue`; a source patch's conflict is
//! reported at its working copy), or a patch that vendor.toml no longer has
//! (one finding per patch, pointing to `render`). A file the lock says was
//! rendered, that no `[[vendor]]` renders any more, is reported too: it has
//! no source. So is a file in a vendored directory that nothing renders (a
//! stray: not upstream's at the locked version, created by no patch), and
//! one a patch deletes that is there.

use std::collections::HashSet;

use super::{Check, Finding, Id, Input, Sink, version_sync};
use crate::config::Vendor;
use crate::error::Result;
use crate::patch;
use crate::render::origin::Removed;
use crate::render::{self, HandEdit};
use crate::upstream::Pristine;

/// `render-drift`.
pub const RENDER_DRIFT: Id = Id {
    name: "render-drift",
    doc: "\
### What
A rendered file differs from what its pristine copy, the vendor patches, the
rewrites and the pin give at the locked version: an edit no patch carries, a
patch that no longer applies to the locked upstream at all, a conflict of an
update still pending (in a rendered file, or a source patch's in its working
copy under `upstream/.revendor-conflicts/`), the changes of a patch removed
from vendor.toml, a rendered file whose `[[vendor]]` is gone (a file with no
source), a file in a vendored directory that nothing renders (not upstream's
at the locked version, and no patch creates it), a rendered file that is
missing, or a file a patch deletes that is there.

### Why
The rendered file is output. An edit made there belongs in a patch: `update`
and `render` stop on it rather than lose it, and until it is carried the
package does not render to what it holds; this is how a vendored fix would
disappear in an upgrade pull request nobody reads line by line.

### Example
```text
render-drift
  templates/multus-daemonset-thick.yml:130: error: line 130 differs from the render: `+        \"logLevel\": \"debug\",` (1 added): an edit no patch carries (fix: carry it in its patch with `revendor render --adopt-edits`, or drop it: restore the file from git, or delete it and run `revendor render`)
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
    let files = input.files()?;
    let removed = Removed::find(input.config, &files, input.lock);
    let package = input.package()?;
    for vendor in files.iter() {
        let Some(walk) = input.walk(vendor)? else {
            continue;
        };
        // A file no section targets renders as its pristine copy, which the
        // walk holds no copy of (issue 23): the one `input.walk` verified.
        let pristine = input.pristine(vendor)?;
        let Pristine::Verified(pristine) = &*pristine else {
            continue;
        };
        let output = walk.output(pristine);
        if output.is_ok() && package.deletes(vendor) {
            if input.read(&vendor.to)?.is_some() {
                let sections = package.sections(vendor);
                let name = package.patch_name(sections[sections.len() - 1]);
                sink.push(
                    Finding::error(
                        id,
                        &vendor.to,
                        1,
                        format!("`{}` is there, but patch `{name}` deletes it", vendor.to),
                    )
                    .fix("delete it, or run `revendor render`"),
                );
            }
            continue;
        }
        let patched = match output {
            Ok(patched) => patched,
            Err(e) => {
                sink.push(
                    Finding::error(
                        id,
                        &e.file,
                        e.line,
                        format!("`{}` cannot be rendered: {e}", vendor.to),
                    )
                    .fix(format!(
                        "make the patch apply to `{}` again, then run `revendor patch refresh {}`",
                        vendor.pristine(),
                        e.patch
                    )),
                );
                continue;
            }
        };
        let expected = package.finish(&vendor.to, patched)?;
        let Some(actual) = input.read(&vendor.to)? else {
            sink.push(
                Finding::error(id, &vendor.to, 1, format!("`{}` is missing", vendor.to))
                    .fix("run `revendor render`"),
            );
            continue;
        };
        // The file as render writes it has no drift; only one that differs
        // is normalized (a YAML parse and a pattern per rewrite) to tell
        // drift from what other checks report.
        if *expected == *actual {
            continue;
        }
        let expected = String::from_utf8_lossy(&expected);
        let actual = normalize(input, &vendor.to, &String::from_utf8_lossy(&actual));
        if expected == actual {
            continue;
        }
        if explained(input, &removed, vendor, &actual, sink) {
            continue;
        }
        for edit in render::hand_edits(&expected, &actual) {
            sink.push(
                Finding::error(id, &vendor.to, edit.line, message(&edit))
                    .fix("carry it in its patch with `revendor render --adopt-edits`, or drop it: restore the file from git, or delete it and run `revendor render`"),
            );
        }
    }
    strays(input, &files, &removed, sink)?;
    pending_sources(input, sink)?;
    for output in &removed.outputs {
        if input.read(&output.file)?.is_some() {
            sink.push(
                Finding::error(
                    id,
                    &output.file,
                    1,
                    format!(
                        "`{}` has no source: the lock says it was rendered from `{}`, which no [[vendor]] vendors any more",
                        output.file, output.from
                    ),
                )
                .fix("run `revendor render` to delete it and its pristine copy, or add its [[vendor]] back"),
            );
        }
    }
    Ok(())
}

/// Reports each file in a vendored directory that the directory selects but
/// nothing renders: not upstream's at the locked version, created by no
/// patch, and not a removed output (reported as such).
fn strays(
    input: &Input<'_>,
    files: &[Vendor],
    removed: &Removed<'_>,
    sink: &mut Sink,
) -> Result<()> {
    // One set of the known paths, not a search of every file per path: a
    // directory of 10,000 files has as many of each.
    let known: HashSet<&str> = files
        .iter()
        .map(|f| f.to.as_str())
        .chain(removed.outputs.iter().map(|o| o.file.as_str()))
        .collect();
    for dir in input.config.vendor.iter().filter(|v| v.is_dir()) {
        let version = input.stamp.version(dir.upstream.as_deref());
        // A directory the lock has nothing of is lock-integrity's to report.
        if !files.iter().any(|f| dir.renders(&f.to)) {
            continue;
        }
        for path in input.list(&dir.to)? {
            let known = known.contains(path.as_str());
            if known || dir.selects_to(&path).is_none() {
                continue;
            }
            sink.push(
                Finding::error(
                    RENDER_DRIFT.name,
                    &path,
                    1,
                    format!(
                        "`{path}` is in the vendored directory `{}` but nothing renders it: upstream {version} has no `{}{}` and no patch creates it",
                        dir.to,
                        dir.from,
                        &path[dir.to.len()..]
                    ),
                )
                .fix("delete it; or carry it in a patch that creates it (`--- /dev/null`); or leave it out of the directory with `exclude`"),
            );
        }
    }
    Ok(())
}

/// Reports what the lock says the difference of `vendor`'s file is, when it
/// says: the pending update's conflict, or the changes of removed patches.
fn explained(
    input: &Input<'_>,
    removed: &Removed<'_>,
    vendor: &Vendor,
    actual: &str,
    sink: &mut Sink,
) -> bool {
    let id = RENDER_DRIFT.name;
    let to = &vendor.to;
    if let Some(pending) = &input.lock.pending {
        let target = pending
            .version_of(vendor.upstream.as_deref())
            .unwrap_or_default();
        let markers = patch::marker_lines(actual.as_bytes());
        let finding = match markers.first() {
            _ if input.lock.pending_conflict(to).is_none() => Finding::error(
                id,
                to,
                1,
                format!("`{to}` is rendered for the update to {target}, pending since `update --keep-conflicts`"),
            )
            .fix("resolve the conflicts it left, then run `revendor update --continue`"),
            Some(&line) => Finding::error(
                id,
                to,
                line,
                format!("`{to}` holds the conflict markers of the update to {target}, pending since `update --keep-conflicts`"),
            )
            .fix("resolve them, then run `revendor update --continue`"),
            None => Finding::error(
                id,
                to,
                1,
                format!("`{to}` holds a resolution of the update to {target}, pending since `update --keep-conflicts`"),
            )
            .fix("run `revendor update --continue` to finish the update"),
        };
        sink.push(finding);
        return true;
    }
    let gone = removed.patches_of(to);
    for p in &gone {
        sink.push(
            Finding::error(
                id,
                to,
                1,
                format!(
                    "`{to}` still has the changes of patch `{}`, which vendor.toml no longer has",
                    p.name
                ),
            )
            .fix("run `revendor render` to revert them"),
        );
    }
    !gone.is_empty()
}

/// Reports each source file a pending update's source patch conflicts on:
/// its working copy under `upstream/.revendor-conflicts/` still marked,
/// resolved, or gone. The source is upstream's, so there is no rendered
/// file whose drift would say it.
fn pending_sources(input: &Input<'_>, sink: &mut Sink) -> Result<()> {
    let Some(pending) = &input.lock.pending else {
        return Ok(());
    };
    let id = RENDER_DRIFT.name;
    for source in &pending.sources {
        let copy = source.copy();
        let target = input
            .config
            .patches
            .iter()
            .find(|p| p.name == source.patch)
            .and_then(|p| pending.version_of(p.upstream.as_deref()))
            .unwrap_or_default();
        let what = format!(
            "source patch `{}` on `{}` for the update to {target}, pending since `update --keep-conflicts`",
            source.patch, source.file
        );
        let finding = match input.read(&copy)? {
            None => Finding::error(id, &copy, 1, format!("`{copy}` is missing: it held the conflict of {what}"))
                .fix("restore it from git and resolve it, then run `revendor update --continue`; or restore the rendered files from git and run `revendor update --keep-conflicts` to start the update again"),
            Some(bytes) => match patch::marker_lines(&bytes).first() {
                Some(&line) => Finding::error(id, &copy, line, format!("`{copy}` holds the conflict markers of {what}"))
                    .fix("resolve them, then run `revendor update --continue`"),
                None => Finding::error(id, &copy, 1, format!("`{copy}` holds a resolution of {what}"))
                    .fix("run `revendor update --continue` to rebuild the patch from it and finish the update"),
            },
        };
        sink.push(finding);
    }
    Ok(())
}

/// The file on disk with the locked pin at every pin site and every
/// `[[rewrite]]` result at the locked version (see the module docs).
fn normalize(input: &Input<'_>, file: &str, text: &str) -> String {
    let mut out = version_sync::normalize(input.config, file, text, &input.stamp);
    for pin in input.config.pins.iter().filter(|p| p.file == file) {
        let Some(reference) = input.stamp.pin(pin.image.as_deref()) else {
            continue;
        };
        // A file that does not parse as YAML keeps its text: the
        // difference then shows as drift, which is what it is.
        if let Ok(pinned) = render::pin_text(file, &out, pin, reference) {
            out = pinned;
        }
    }
    out
}

/// The finding's text for one region: its lines, a sample, the counts.
fn message(edit: &HandEdit) -> String {
    let lines = if edit.last > edit.line {
        format!("lines {}-{}", edit.line, edit.last)
    } else {
        format!("line {}", edit.line)
    };
    let sample = match (edit.added.first(), edit.removed.first()) {
        (Some(a), _) => format!("`+{a}`"),
        (None, Some(r)) => format!("`-{r}`"),
        (None, None) => String::new(),
    };
    let mut counts = Vec::new();
    if !edit.added.is_empty() {
        counts.push(format!("{} added", edit.added.len()));
    }
    if !edit.removed.is_empty() {
        counts.push(format!("{} removed", edit.removed.len()));
    }
    format!(
        "{lines} differ{} from the render: {sample} ({}): an edit no patch carries",
        if lines.starts_with("line ") { "s" } else { "" },
        counts.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_lines_sample_and_counts() {
        let edits = render::hand_edits("a\nb\nc\nd\n", "a\nB\nc\nx\ny\nd\n");
        assert_eq!(
            message(&edits[0]),
            "line 2 differs from the render: `+B` (1 added, 1 removed): an edit no patch carries"
        );
        assert_eq!(
            message(&edits[1]),
            "lines 4-5 differ from the render: `+x` (2 added): an edit no patch carries"
        );
        let removal = render::hand_edits("a\nb\nc\n", "a\nc\n");
        assert_eq!(
            message(&removal[0]),
            "line 2 differs from the render: `-b` (1 removed): an edit no patch carries"
        );
    }
}
