//! The 3-way merge and the rebase agree with `git merge-file` wherever neither reports a
//! conflict (issue 13).
//!
//! Each case is a base file, a patched side and a new upstream made by random edits (lines
//! kept, dropped, replaced or inserted, the last newline sometimes missing), compared with
//! `git merge-file -p` on the same three files. Where either reports a conflict the two may
//! rightly differ: git's zealous mode shrinks conflicts that revendor keeps whole.
//!
//! - [`merge3`] is compared on files with repeated lines (`}`, blank lines), where the diffs
//!   have ambiguous matches to place.
//! - [`rebase`] (the patch is the refreshed diff of base and patched side) is compared on files
//!   of distinct lines: where a line repeats, a strict apply at an offset and a diff can both
//!   be right yet pick different copies of it.

use std::process::Command;

use proptest::prelude::*;
use revendor::patch::{Labels, Merge, Outcome, merge3, parse, rebase, refresh};

const LABELS: Labels<'static> = Labels {
    ours: "ours",
    base: "base",
    theirs: "theirs",
};

/// What happens to one base line on one side.
#[derive(Clone, Debug)]
enum Edit {
    Keep,
    Drop,
    Replace(String),
    InsertBefore(String),
}

/// An edit of base line `at` by `side`; new lines are `ours 3`, `theirs 3` or `both 3` (the
/// same on either side), plus `}` and blank lines when `repeats`.
fn edit(side: &'static str, at: usize, repeats: bool) -> impl Strategy<Value = Edit> {
    let mut texts = vec![format!("{side} {at}"), format!("both {at}")];
    if repeats {
        texts.extend(["}".to_owned(), String::new()]);
    }
    let text = prop::sample::select(texts);
    prop_oneof![
        16 => Just(Edit::Keep),
        1 => Just(Edit::Drop),
        1 => text.clone().prop_map(Edit::Replace),
        1 => text.prop_map(Edit::InsertBefore),
    ]
}

/// Up to 40 edits, one per base line.
fn edits(side: &'static str, repeats: bool) -> impl Strategy<Value = Vec<Edit>> {
    (0..40)
        .map(|at| edit(side, at, repeats))
        .collect::<Vec<_>>()
}

/// Base lines: `line N` in order, or with `repeats` also `}` and blank lines as in source code.
fn base(repeats: bool) -> impl Strategy<Value = Vec<String>> {
    let line = if repeats {
        prop_oneof![
            4 => (0..200u32).prop_map(|n| format!("line {n}")),
            1 => prop::sample::select(vec!["}", ""]).prop_map(str::to_owned),
        ]
        .boxed()
    } else {
        Just(String::new()).boxed()
    };
    prop::collection::vec(line, 0..40).prop_map(move |lines| {
        if repeats {
            lines
        } else {
            (0..lines.len()).map(|n| format!("line {n}")).collect()
        }
    })
}

fn join(lines: &[String], newline_at_end: bool) -> Vec<u8> {
    let mut out: Vec<u8> = lines
        .iter()
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect();
    if !newline_at_end {
        out.pop();
    }
    out
}

fn apply_edits(base: &[String], edits: &[Edit]) -> Vec<String> {
    let mut out = Vec::new();
    for (line, edit) in base
        .iter()
        .zip(edits.iter().chain(std::iter::repeat(&Edit::Keep)))
    {
        match edit {
            Edit::Keep => out.push(line.clone()),
            Edit::Drop => {}
            Edit::Replace(text) => out.push(text.clone()),
            Edit::InsertBefore(text) => {
                out.push(text.clone());
                out.push(line.clone());
            }
        }
    }
    out
}

/// `git merge-file -p` of the three texts: the merged bytes, or `None` on a conflict.
fn git_merge_file(base: &[u8], ours: &[u8], theirs: &[u8]) -> Option<Vec<u8>> {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [("base", base), ("ours", ours), ("theirs", theirs)] {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    let out = Command::new("git")
        .current_dir(dir.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(["merge-file", "-p", "ours", "base", "theirs"])
        .output()
        .expect("run git merge-file");
    match out.status.code() {
        Some(0) => Some(out.stdout),
        Some(1..=127) => None,
        _ => panic!(
            "git merge-file failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

/// Three files from `base` and each side's edits, each ending in a newline or not.
fn files(
    base: &[String],
    ours: &[Edit],
    theirs: &[Edit],
    ends: (bool, bool, bool),
) -> [Vec<u8>; 3] {
    [
        join(base, ends.0),
        join(&apply_edits(base, ours), ends.1),
        join(&apply_edits(base, theirs), ends.2),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn issue13_merge3_equals_git_merge_file_where_neither_conflicts(
        base in base(true),
        ours in edits("ours", true),
        theirs in edits("theirs", true),
        ends in any::<(bool, bool, bool)>(),
    ) {
        let [base, ours, theirs] = files(&base, &ours, &theirs, ends);
        if let (Merge::Clean(merged), Some(git)) = (
            merge3(&base, &ours, &theirs, &LABELS),
            git_merge_file(&base, &ours, &theirs),
        ) {
            prop_assert_eq!(String::from_utf8_lossy(&merged), String::from_utf8_lossy(&git));
        }
    }

    #[test]
    fn issue13_rebase_equals_git_merge_file_where_neither_conflicts(
        base in base(false),
        ours in edits("ours", false),
        theirs in edits("theirs", false),
        ends in any::<(bool, bool, bool)>(),
    ) {
        let [base, ours, theirs] = files(&base, &ours, &theirs, ends);
        let template = parse(b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-q\n+r\n").unwrap().files.remove(0);
        let patch = refresh(&template, &base, &ours);
        let outcome = rebase(&base, &patch, &theirs, &LABELS).unwrap();
        if let (false, Some(git)) = (
            matches!(outcome, Outcome::Conflict { .. }),
            git_merge_file(&base, &ours, &theirs),
        ) {
            prop_assert_eq!(
                String::from_utf8_lossy(outcome.content()),
                String::from_utf8_lossy(&git),
                "outcome {}", outcome
            );
        }
    }
}
