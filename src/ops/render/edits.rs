//! Hand edits: differences between a rendered file on disk and what the
//! package renders at the locked version. `update` and `render` both call
//! [`fold`] before they write a rendered file.
//!
//! A hand edit is never silently lost. Without `--adopt-edits` the command
//! stops and names each edited line; with it, the edits are folded into the
//! last patch targeting the file by a 3-way merge (base = the expected
//! render, ours = the file on disk, theirs = the patched pristine copy, so
//! the rewrites and pins drop out and only the edits remain), and that patch
//! is regenerated with exact hunks.

use crate::config::{Config, ConfigError, Vendor};
use crate::error::{Error, Result};
use crate::ops::outcome::EditReport;
use crate::render::{self, Expected, Package, Patches};

/// Finds the hand edits of `vendor.to` and, when `adopt`, folds them into a
/// patch of `package`. `base` is `vendor`'s pristine copy at the locked
/// version, `current` the file on disk. `command` (`update`, `render`) is
/// the one the advice names.
pub(in crate::ops) fn fold(
    package: &mut Package<'_>,
    vendor: &Vendor,
    base: &[u8],
    current: Option<&[u8]>,
    adopt: bool,
    command: &str,
) -> Result<Vec<EditReport>> {
    let Some(current) = current else {
        return Ok(Vec::new());
    };
    if let Some(line) = conflict_marker_line(current) {
        return Err(Error::PendingUpdate(format!(
            "`{}` still holds the conflict markers of an earlier `update --keep-conflicts` (line {line}); \
             the lock records no pending update to finish with `revendor update --continue`: restore the file with \
             `revendor render`, run `revendor update --keep-conflicts` again, resolve the markers, then run `revendor update --continue`",
            vendor.to
        )));
    }
    // The render alone first: a file without edits (nearly every one) needs
    // no step's input kept, and each is a copy of the whole file (issue 23).
    if package.render(vendor, base, |_, _| ())? == current {
        return Ok(Vec::new());
    }
    let expected = package.expected(vendor, base)?;
    let edits = edited_lines(&vendor.to, &expected.output, current);
    let Some(last) = expected.steps.last() else {
        if adopt {
            return start(package, vendor, &expected, current, edits);
        }
        return Err(Error::HandEdits(format!(
            "`{}` has hand edits and no patch targets it: {}; add a [[patch]] for it (a file that does not exist yet), \
             then run `revendor {command} --adopt-edits` to start it from them, or revert the edits",
            vendor.to,
            list(&edits)
        )));
    };
    let patch_name = package.patch_name(last.id).to_owned();
    if !adopt {
        return Err(Error::HandEdits(format!(
            "`{}` has {} hand edit{} that no patch carries: {}; run `revendor {command} --adopt-edits` to fold them into patch `{patch_name}`, or revert them",
            vendor.to,
            edits.len(),
            if edits.len() == 1 { "" } else { "s" },
            list(&edits)
        )));
    }

    let merged = merge_edits(vendor, &expected, current, &edits)?;
    // The last section, given the pristine copy with every earlier section
    // applied, now makes the file with the edits.
    package
        .patches_mut()
        .refresh_section(last.id, &last.input, &merged);
    Ok(adopted(edits, &patch_name))
}

/// The hand edits of `vendor`, which no patch targets, start the patch
/// whose file does not exist yet ([`Patches::started`]): a section from the
/// pristine copy (nothing applied) to it with the edits.
fn start(
    package: &mut Package<'_>,
    vendor: &Vendor,
    expected: &Expected,
    current: &[u8],
    edits: Vec<EditReport>,
) -> Result<Vec<EditReport>> {
    let config = package.config();
    let vendor_toml = config.root.join("vendor.toml");
    let index = match package.patches().started(vendor) {
        Ok(Some(index)) => index,
        Ok(None) => {
            return Err(Error::HandEdits(format!(
                "`{}` has hand edits and no patch targets it: {}; add a [[patch]] for it whose `file` does not exist yet, \
                 and --adopt-edits starts it from them, or revert the edits",
                vendor.to,
                list(&edits)
            )));
        }
        Err(names) => {
            return Err(ConfigError::at(
                &vendor_toml,
                None,
                format!(
                    "the hand edits of `{}` could start any of the patches {}, whose files do not exist yet",
                    vendor.to,
                    names.join(", ")
                ),
            )
            .hint("start them one at a time: keep one of those [[patch]] entries for this run")
            .into());
        }
    };
    let merged = merge_edits(vendor, expected, current, &edits)?;
    let name = package.patches().loaded()[index].name.clone();
    let started = package
        .patches_mut()
        .start_section(index, vendor, &expected.patched, &merged);
    if started.is_none() {
        let line = config
            .patches
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.line);
        return Err(ConfigError::at(
            &vendor_toml,
            line,
            format!(
                "patch `{name}` is started from hand edits, and its `strip` is neither 0 nor 1"
            ),
        )
        .hint(
            "a started patch names files as git does (a/ and b/): set `strip = 1`, or leave it out",
        )
        .into());
    }
    Ok(adopted(edits, &name))
}

/// The patched file with the hand edits (`current` against the expected
/// output) in it: a 3-way merge, so the rewrites and pins drop out and only
/// the edits remain.
fn merge_edits(
    vendor: &Vendor,
    expected: &Expected,
    current: &[u8],
    edits: &[EditReport],
) -> Result<Vec<u8>> {
    diffy::merge_bytes(&expected.output, current, &expected.patched).map_err(|_| {
        Error::HandEdits(format!(
            "the hand edits of `{}` touch lines that rewrites or pins produce; revert them there: {}",
            vendor.to,
            list(edits)
        ))
    })
}

/// `edits`, each adopted into patch `name`.
fn adopted(edits: Vec<EditReport>, name: &str) -> Vec<EditReport> {
    edits
        .into_iter()
        .map(|mut e| {
            e.adopted_into = Some(name.to_owned());
            e
        })
        .collect()
}

/// Refuses a patch whose file did not exist and that no hand edit started:
/// writing it empty would make a patch file that changes nothing.
pub(in crate::ops) fn require_started(config: &Config, patches: &Patches) -> Result<()> {
    let Some(p) = patches
        .loaded()
        .iter()
        .find(|p| p.bytes.is_empty() && p.set.files.is_empty())
    else {
        return Ok(());
    };
    let line = config
        .patches
        .iter()
        .find(|c| c.name == p.name)
        .map(|c| c.line);
    Err(ConfigError::at(
        config.root.join("vendor.toml"),
        line,
        format!(
            "patch file `{}` does not exist, and no hand edit of a file without a patch started it",
            p.file
        ),
    )
    .hint("edit the vendored file the patch is for, then run the command again; or create the patch or fix `file`")
    .into())
}

/// One sentence for each patch the hand edits started (its file did not
/// exist), naming its file: what `update` and `render` say besides the
/// edits.
pub(in crate::ops) fn started_notes(patches: &Patches) -> Vec<String> {
    patches
        .loaded()
        .iter()
        .filter(|p| p.bytes.is_empty() && !p.set.files.is_empty())
        .map(|p| {
            format!(
                "started patch `{}` in {} from the hand edits (it did not exist)",
                p.name, p.file
            )
        })
        .collect()
}

/// The 1-based line of a `<<<<<<< ours (` marker left by `--keep-conflicts`.
pub(in crate::ops) fn conflict_marker_line(text: &[u8]) -> Option<usize> {
    text.split(|&b| b == b'\n')
        .position(|l| l.starts_with(b"<<<<<<< ours ("))
        .map(|i| i + 1)
}

/// Each line of `current` that differs from `expected` (added or changed),
/// and each removal, with its line in `current` ([`render::hand_edits`]).
pub(in crate::ops) fn edited_lines(file: &str, expected: &[u8], current: &[u8]) -> Vec<EditReport> {
    let expected = String::from_utf8_lossy(expected);
    let current = String::from_utf8_lossy(current);
    let report = |line: usize, text: String| EditReport {
        file: file.to_string(),
        line,
        text,
        adopted_into: None,
    };
    let mut out = Vec::new();
    for edit in render::hand_edits(&expected, &current) {
        for text in &edit.removed {
            out.push(report(edit.line, format!("(removed) {}", text.trim_end())));
        }
        for (i, text) in edit.added.iter().enumerate() {
            out.push(report(edit.line + i, text.trim_end().to_string()));
        }
    }
    out
}

/// Up to five edits as `file:line `text``, and how many more.
pub(in crate::ops) fn list(edits: &[EditReport]) -> String {
    let shown: Vec<String> = edits
        .iter()
        .take(5)
        .map(|e| format!("{}:{} `{}`", e.file, e.line, e.text.trim()))
        .collect();
    let more = edits.len().saturating_sub(5);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftover_markers_are_found() {
        assert_eq!(
            conflict_marker_line(b"a\n<<<<<<< ours (patched v1)\nb\n"),
            Some(2)
        );
        assert_eq!(conflict_marker_line(b"a\n<<<< not a marker\n"), None);
    }

    #[test]
    fn edited_lines_name_line_and_text() {
        let e = edited_lines("t.yml", b"a\nb\nc\n", b"a\nB\nc\nd\n");
        let got: Vec<(usize, &str)> = e.iter().map(|e| (e.line, e.text.as_str())).collect();
        assert_eq!(got, vec![(2, "(removed) b"), (2, "B"), (4, "d")]);
    }
}
