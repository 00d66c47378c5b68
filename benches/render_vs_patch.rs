//! `revendor --offline render` against GNU `patch -F0` on the same input: a 100,000-line
//! upstream file and a 1,000-hunk patch (`support/input.rs`), whole processes, medians.
//!
//! The package is adopted once from the local GitHub stand-in. Each revendor run starts with
//! the rendered file removed, so like `patch` it reads the upstream copy and the patch, applies
//! every hunk and writes the result; a second figure is `render` on an up-to-date tree (what
//! `make render` mostly meets), which has nothing to write.
//!
//! Both are measured on a tree left alone for longer than the 3 s after which revendor trusts
//! a file's identity (its sha256, and a render that found nothing to do, are then remembered
//! by it: issue 23), as a tree rendered again mostly is; a third figure is the up-to-date
//! render right after the file was written, which reads, hashes and patches everything. Run
//! with `make bench` (needs GNU patch). Prints medians and ratios; asserts nothing about time.

// Tests and benchmarks print skip notes and figures, and read their own
// switches (REVENDOR_REALWORLD, SNAPSHOTS): clippy.toml's bans are for the tool.
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

#[path = "../tests/testsuite/support/mod.rs"]
mod support;

#[path = "support/input.rs"]
mod input;
#[path = "support/measure.rs"]
mod measure;

use std::fs;
use std::process::{Command, Stdio};

use input::Input;
use measure::{Measured, goal, median, ratio};
use support::{GitHub, Revendor, TempPackage};

const RUNS: usize = 31;
/// Longer than the 3 s after which revendor trusts a file's identity.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(3500);
const LINES: usize = 100_000;
const HUNKS: usize = 1_000;
const TEMPLATE: &str = "templates/values.yaml";
const PATCH: &str = "patches/values.patch";

fn main() {
    let input = Input::new(LINES, HUNKS, TEMPLATE);
    let gh = GitHub::start();
    gh.repo("example/big")
        .file_at("v1.0.0", "deploy/values.yaml", input.base.clone())
        .release("v1.0.0", |r| r);
    let pkg = TempPackage::new();
    pkg.write(
        "vendor.toml",
        format!(
            "[upstream]\ngithub = \"example/big\"\nversion = \"v1.0.0\"\n\n\
             [[vendor]]\nfrom = \"deploy/values.yaml\"\nto = \"{TEMPLATE}\"\n\n\
             [[patch]]\nname = \"values\"\nfile = \"{PATCH}\"\napplies-to = \"vendor\"\n"
        ),
    )
    .write(PATCH, &input.patch);
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    assert!(
        pkg.read(TEMPLATE) == input.ours,
        "render gives the patched file"
    );

    let render = |remove: bool| {
        median(RUNS, || {
            if remove {
                fs::remove_file(pkg.join(TEMPLATE)).expect("remove the rendered file");
            }
            Measured::of(&rv.command(&["--offline", "render"]), Stdio::null())
        })
    };
    std::thread::sleep(SETTLE);
    let written = render(true);
    assert!(
        pkg.read(TEMPLATE) == input.ours,
        "render wrote the patched file"
    );
    let just_written = render(false);
    std::thread::sleep(SETTLE);
    let up_to_date = render(false);

    let scratch = tempfile::tempdir().expect("scratch");
    let target = scratch.path().join(TEMPLATE);
    fs::create_dir_all(target.parent().unwrap()).unwrap();
    let patch_file = scratch.path().join("values.patch");
    fs::write(&patch_file, &input.patch).unwrap();
    let gnu = median(RUNS, || {
        fs::write(&target, &input.base).unwrap();
        Measured::of(
            Command::new("patch")
                .current_dir(scratch.path())
                .args(["-s", "-F0", "-p1", "-i"])
                .arg(&patch_file),
            Stdio::null(),
        )
    });
    assert!(
        fs::read(&target).unwrap() == input.ours,
        "GNU patch gives the same file"
    );

    println!("{LINES} lines through {HUNKS} hunks, whole processes, medians of {RUNS} runs");
    println!(
        "{:<42} {:>9} {:>6} {:>9} {:>6} {:>8}",
        "", "wall", "ratio", "cpu", "ratio", "peak rss"
    );
    for (name, m) in [
        ("revendor --offline render (writes it)", written),
        ("revendor --offline render (up to date)", up_to_date),
        ("  the same, the file written just before", just_written),
        ("GNU patch -F0", gnu),
    ] {
        println!(
            "{name:<42} {:>9.2?} {:>6.2} {:>9.2?} {:>6.2} {:>6}MB",
            m.wall,
            ratio(m.wall, gnu.wall),
            m.cpu,
            ratio(m.cpu, gnu.cpu),
            m.peak_rss >> 20
        );
    }
    goal(
        "render 100k lines / 1,000 hunks (writes it), CPU",
        "GNU patch",
        &written,
        &gnu,
        0.5,
    );
    goal(
        "render 100k lines / 1,000 hunks (up to date), CPU",
        "GNU patch",
        &up_to_date,
        &gnu,
        0.5,
    );
}
