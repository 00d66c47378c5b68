//! A large CRD through `render` and `update` with a patch (issue 23): a generated
//! CustomResourceDefinition of 24,000+ lines with a deep `openAPIV3Schema`
//! (`support/crd.rs`), whose lines repeat thousands of times, patched with the edits a chart
//! package makes to CRDs (one hunk per ~200 lines, made by GNU `diff -U3`).
//!
//! - `render --offline` with the rendered file removed, against GNU `patch -F0` on the same
//!   upstream file and patch: on a package left alone for longer than the 3 s after which
//!   revendor trusts a file's identity (the pristine copy's sha256 is then remembered, as in
//!   `render_vs_patch`), and right after adoption, when the copy is hashed on every run;
//! - `update` to the next upstream release (new optional fields, reworded descriptions, some
//!   next to the patch's changes), against `git merge-file` on the same three files; both
//!   results must be equal.
//!
//! The package's upstream is a local `git =` repository; each update runs on a fresh copy of
//! the package adopted once, with the download cache warm. Run with `make bench` (needs git,
//! GNU patch and diff). Prints medians and ratios; asserts nothing about time.

// Tests and benchmarks print skip notes and figures, and read their own
// switches (REVENDOR_REALWORLD, SNAPSHOTS): clippy.toml's bans are for the tool.
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

#[path = "support/crd.rs"]
mod crd;
#[path = "support/git_package.rs"]
mod git_package;
#[path = "support/measure.rs"]
mod measure;
#[path = "../tests/testsuite/support/mod.rs"]
mod support;

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use crd::Crd;
use git_package::{GitPackage, git_merge_file};
use measure::{Measured, goal, median};

const LINES: usize = 24_000;
const RUNS: usize = 11;
const FILE: &str = "crds/widgets.yaml";
/// Longer than the 3 s after which revendor trusts a file's identity.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(3500);

fn main() {
    let crd = Crd::new(LINES);
    let scratch = tempfile::tempdir().expect("scratch");
    let dir = scratch.path();
    for (name, bytes) in [
        ("base", &crd.base),
        ("ours", &crd.ours),
        ("theirs", &crd.theirs),
    ] {
        fs::write(dir.join(name), bytes).expect("write input");
    }
    let patch = unified_diff(dir);
    let hunks = patch
        .split(|&b| b == b'\n')
        .filter(|l| l.starts_with(b"@@ "))
        .count();
    let package = GitPackage::new(dir, FILE, &crd.base, &crd.theirs, &crd.ours, &patch);
    let lines = crd.base.iter().filter(|&&b| b == b'\n').count();
    println!(
        "a generated CRD of {lines} lines, a patch of {hunks} hunks: whole processes, medians of {RUNS} runs"
    );
    println!("{:<44} {:>9} {:>9} {:>8}", "", "wall", "cpu", "peak rss");

    let render = || {
        median(RUNS, || {
            fs::remove_file(package.adopted.join(FILE)).expect("remove the rendered file");
            Measured::of(
                &package.command(&package.adopted, &["--offline", "render"]),
                Stdio::null(),
            )
        })
    };
    let just_adopted = render();
    std::thread::sleep(SETTLE);
    let written = render();
    same(&package.adopted.join(FILE), &crd.ours, "revendor render");
    let gnu = gnu_patch(dir, &crd.base);
    same(&dir.join("target"), &crd.ours, "GNU patch");

    let updated = median(RUNS, || package.update_copy(&dir.join("pkg")));
    let git = median(RUNS, || git_merge_file(dir));
    let merged = fs::read(dir.join("out")).expect("git merge-file's result");
    same(
        &dir.join("pkg").join(FILE),
        &merged,
        "revendor update (against git merge-file)",
    );

    for (name, m) in [
        ("revendor --offline render (writes it)", &written),
        ("  the same, right after adoption", &just_adopted),
        ("GNU patch -F0", &gnu),
        ("revendor update v1.0.0 -> v1.1.0", &updated),
        ("git merge-file", &git),
    ] {
        println!(
            "{name:<44} {:>9.2?} {:>9.2?} {:>6}MB",
            m.wall,
            m.cpu,
            m.peak_rss >> 20
        );
    }
    goal("render, CRD, CPU", "GNU patch", &written, &gnu, 0.5);
    goal("update, CRD, CPU", "git merge-file", &updated, &git, 1.5);
}

/// `diff -U3` from `base` to `ours` in `dir`, as `a/` and `b/` names of the package's file.
fn unified_diff(dir: &Path) -> Vec<u8> {
    let out = Command::new("diff")
        .current_dir(dir)
        .args([
            "-U3",
            "--label",
            &format!("a/{FILE}"),
            "--label",
            &format!("b/{FILE}"),
        ])
        .args(["base", "ours"])
        .output()
        .expect("diff (GNU diffutils)");
    assert_eq!(
        out.status.code(),
        Some(1),
        "diff finds the downstream edits"
    );
    out.stdout
}

/// GNU `patch -F0` of the same patch onto a fresh copy of `base` at `dir/target`, medians.
fn gnu_patch(dir: &Path, base: &[u8]) -> Measured {
    let patch_file = dir.join("the.patch");
    fs::write(&patch_file, unified_diff(dir)).expect("write the patch");
    median(RUNS, || {
        fs::write(dir.join("target"), base).expect("write the upstream file");
        Measured::of(
            Command::new("patch")
                .current_dir(dir)
                .args(["-s", "-F0", "-i"])
                .arg(&patch_file)
                .arg("target"),
            Stdio::null(),
        )
    })
}

fn same(path: &Path, expected: &[u8], who: &str) {
    let got = fs::read(path).expect("read output");
    assert!(got == expected, "{who} gave another file");
}
