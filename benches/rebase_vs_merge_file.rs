//! The 3-way rebase against `git merge-file` on the same three files, at 10k, 100k and 1M
//! lines (one hunk per 100 lines): whole processes, medians of wall time, and each process's
//! peak RSS (as GNU time reports it).
//!
//! revendor's side is this benchmark binary run again as a child (`--child DIR`): it reads the
//! base, the patch and the new upstream, applies the patch to the base, rebases it onto the new
//! upstream with `patch::rebase` and writes the result, so it does more than `git merge-file -p
//! ours base theirs`, which is handed the patched file. Both outputs are checked against the
//! expected merge.
//!
//! Then `revendor update` itself, whole, on the adjacent-changes shape (issue 23): a package
//! whose `git =` upstream (a local repository) moves from the base to a new upstream that
//! changed a line two lines from each hunk's change and inserted a line every 100 lines, at
//! 100k and 1M lines, against `git merge-file` on the same three files. Every hunk's strict
//! apply fails there, so `update` also asks which hunks upstream already has; placing hunks by
//! searching the whole file for each made it quadratic. Each run updates a fresh copy of the
//! package adopted once, with the download cache warm.
//!
//! Run with `make bench` (needs git). Prints figures and ratios; asserts nothing about time.

// Tests and benchmarks print skip notes and figures, and read their own
// switches (REVENDOR_REALWORLD, SNAPSHOTS): clippy.toml's bans are for the tool.
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

#[path = "support/git_package.rs"]
mod git_package;
#[path = "support/input.rs"]
mod input;
#[path = "support/measure.rs"]
mod measure;
#[path = "../tests/testsuite/support/mod.rs"]
mod support;

use std::fs::{self, File};
use std::path::Path;
use std::process::Command;

use git_package::{GitPackage, git_merge_file};
use input::Input;
use measure::{Measured, goal, median, ratio};
use revendor::patch::{Labels, parse, rebase};

/// (lines, hunks, runs)
const SIZES: [(usize, usize, usize); 3] = [
    (10_000, 100, 21),
    (100_000, 1_000, 11),
    (1_000_000, 10_000, 5),
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--child") {
        child(Path::new(&args[at + 1]));
        return;
    }
    let me = std::env::current_exe().expect("own path");
    println!("3-way rebase vs git merge-file, whole processes: medians, largest peak RSS");
    println!(
        "{:>9} {:>6} {:>9} {:>9} {:>6} {:>9} {:>9} {:>6} {:>7} {:>7} {:>9}",
        "lines",
        "hunks",
        "wall",
        "git",
        "ratio",
        "cpu",
        "git cpu",
        "ratio",
        "rss",
        "git",
        "rss/files"
    );
    let mut previous: Option<(usize, Measured)> = None;
    for (lines, hunks, runs) in SIZES {
        let dir = tempfile::tempdir().expect("scratch");
        let input = Input::new(lines, hunks, "values.yaml");
        for (name, bytes) in [
            ("base", &input.base),
            ("patch", &input.patch),
            ("ours", &input.ours),
            ("theirs", &input.theirs),
        ] {
            fs::write(dir.path().join(name), bytes).expect("write input");
        }
        let files = (input.base.len() + input.ours.len() + input.theirs.len()) as f64;
        let ours = median(runs, || {
            let out = File::create(dir.path().join("out")).expect("out");
            Measured::of(Command::new(&me).arg("--child").arg(dir.path()), out)
        });
        same(&dir.path().join("out"), &input.merged, "revendor");
        let git = median(runs, || git_merge_file(dir.path()));
        same(&dir.path().join("out"), &input.merged, "git merge-file");
        println!(
            "{lines:>9} {hunks:>6} {:>9.2?} {:>9.2?} {:>6.2} {:>9.2?} {:>9.2?} {:>6.2} {:>5}MB {:>5}MB {:>9.2}",
            ours.wall,
            git.wall,
            ratio(ours.wall, git.wall),
            ours.cpu,
            git.cpu,
            ratio(ours.cpu, git.cpu),
            ours.peak_rss >> 20,
            git.peak_rss >> 20,
            ours.peak_rss as f64 / files,
        );
        goal(
            &format!("rebase in-process, {lines} lines / {hunks} hunks, CPU"),
            "git merge-file",
            &ours,
            &git,
            1.5,
        );
        if let Some((before, earlier)) = previous {
            println!(
                "{:>16} {}x the lines: {:.1}x the wall time, {:.1}x the cpu time",
                "",
                lines / before,
                ratio(ours.wall, earlier.wall),
                ratio(ours.cpu, earlier.cpu)
            );
        }
        previous = Some((lines, ours));
    }
    println!("rss/files: revendor's peak RSS over the size of base, ours and theirs together");
    update_adjacent();
}

/// (lines, hunks, runs) of the `update` table.
const UPDATE_SIZES: [(usize, usize, usize); 2] = [(100_000, 1_000, 5), (1_000_000, 10_000, 3)];

/// `revendor update` on the adjacent-changes shape against `git merge-file`.
fn update_adjacent() {
    println!();
    println!("update on the adjacent-changes shape vs git merge-file, whole processes: medians");
    println!(
        "{:>9} {:>6} {:>9} {:>9} {:>6} {:>9} {:>9} {:>6} {:>7} {:>9}",
        "lines", "hunks", "wall", "git", "ratio", "cpu", "git cpu", "ratio", "rss", "rss/files"
    );
    for (lines, hunks, runs) in UPDATE_SIZES {
        let input = Input::adjacent(lines, hunks, "values.yaml");
        let scratch = tempfile::tempdir().expect("scratch");
        let dir = scratch.path();
        for (name, bytes) in [
            ("base", &input.base),
            ("ours", &input.ours),
            ("theirs", &input.theirs),
        ] {
            fs::write(dir.join(name), bytes).expect("write input");
        }
        let package = GitPackage::new(
            dir,
            "values.yaml",
            &input.base,
            &input.theirs,
            &input.ours,
            &input.patch,
        );
        let files = (input.base.len() + input.ours.len() + input.theirs.len()) as f64;
        let ours = median(runs, || package.update_copy(&dir.join("pkg")));
        same(
            &dir.join("pkg/values.yaml"),
            &input.merged,
            "revendor update",
        );
        let git = median(runs, || git_merge_file(dir));
        same(&dir.join("out"), &input.merged, "git merge-file");
        println!(
            "{lines:>9} {hunks:>6} {:>9.2?} {:>9.2?} {:>6.2} {:>9.2?} {:>9.2?} {:>6.2} {:>5}MB {:>9.2}",
            ours.wall,
            git.wall,
            ratio(ours.wall, git.wall),
            ours.cpu,
            git.cpu,
            ratio(ours.cpu, git.cpu),
            ours.peak_rss >> 20,
            ours.peak_rss as f64 / files,
        );
        goal(
            &format!("update, adjacent changes, {lines} lines / {hunks} hunks, CPU"),
            "git merge-file",
            &ours,
            &git,
            1.5,
        );
        println!(
            "update, adjacent changes, {lines} lines: peak RSS / the three files = {:.2} (goal ≤ 2): {}",
            ours.peak_rss as f64 / files,
            if ours.peak_rss as f64 <= 2.0 * files {
                "met"
            } else {
                "missed"
            }
        );
    }
}

/// The measured side: read the three files, rebase, write the result to stdout.
fn child(dir: &Path) {
    let read = |name: &str| fs::read(dir.join(name)).expect("read input");
    let (base, patch, theirs) = (read("base"), read("patch"), read("theirs"));
    let set = parse(&patch).expect("parse the patch");
    let labels = Labels {
        ours: "patched",
        base: "base",
        theirs: "new",
    };
    let outcome = rebase(&base, &set.files[0], &theirs, &labels).expect("rebase");
    assert_eq!(
        outcome.kind(),
        "merged",
        "the input is made to need the merge"
    );
    use std::io::Write;
    std::io::stdout()
        .lock()
        .write_all(outcome.content())
        .expect("write the result");
}

fn same(path: &Path, expected: &[u8], who: &str) {
    let got = fs::read(path).expect("read output");
    assert!(got == expected, "{who} gave another merge");
}
