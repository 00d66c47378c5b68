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

use crate::config::Vendor;
use crate::error::{Error, Result};
use crate::ops::outcome::EditReport;
use crate::render::{self, Package};

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
        return Err(Error::Conflict(format!(
            "`{}` still holds the conflict markers of an earlier `update --keep-conflicts` (line {line}); \
             the lock records no pending update to finish with `revendor update --continue`: restore the file with \
             `revendor render`, run `revendor update --keep-conflicts` again, resolve the markers, then run `revendor update --continue`",
            vendor.to
        )));
    }
    let expected = package.expected(vendor, base)?;
    if expected.output == current {
        return Ok(Vec::new());
    }
    let edits = edited_lines(&vendor.to, &expected.output, current);
    let Some(last) = expected.steps.last() else {
        return Err(Error::Conflict(format!(
            "`{}` has hand edits and no patch targets it: {}; add a [[patch]] for it, or revert the edits",
            vendor.to,
            list(&edits)
        )));
    };
    let patch_name = package.patch_name(last.id).to_owned();
    if !adopt {
        return Err(Error::Conflict(format!(
            "`{}` has {} hand edit{} that no patch carries: {}; run `revendor {command} --adopt-edits` to fold them into patch `{patch_name}`, or revert them",
            vendor.to,
            edits.len(),
            if edits.len() == 1 { "" } else { "s" },
            list(&edits)
        )));
    }

    let merged = diffy::merge_bytes(&expected.output, current, &expected.patched).map_err(|_| {
        Error::Conflict(format!(
            "the hand edits of `{}` touch lines that rewrites or pins produce; revert them there: {}",
            vendor.to,
            list(&edits)
        ))
    })?;
    // The last section, given the pristine copy with every earlier section
    // applied, now makes the file with the edits.
    package
        .patches_mut()
        .refresh_section(last.id, &last.input, &merged);
    Ok(edits
        .into_iter()
        .map(|mut e| {
            e.adopted_into = Some(patch_name.clone());
            e
        })
        .collect())
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
