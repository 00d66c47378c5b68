//! A `git =` package vendoring one directory of 1,000 and of 10,000 files
//! (issue 23): `check --offline`, `render` with the tree up to date, and
//! `update` v1.0.0 → v1.1.0, whose upstream changed a tenth of the files
//! and added a hundredth; one vendor patch changes a hundredth of them. Each
//! figure is a whole process: medians of wall and of CPU time (user +
//! system; the wall time waits for a core on a shared machine, the CPU time
//! does not). Printed: each command's 10k / 1k ratio (goal ≤ 12: linear,
//! with the file system's own cost), and at 10k, `update` against what a
//! shell does for the same result: `git archive v1.1.0 | tar -x` of the
//! directory and GNU `patch -p1` of the package's patch (goal ≤ 1.5).
//!
//! The file system holds still for both sizes and both sides: every copy an
//! update runs on is made before anything is timed, nothing is deleted
//! until the end, each timed command starts after a `sync`, and the runs of
//! `update` and of the shell alternate. Deleting a copy right before the
//! next run made each run's new files wait on ext4's inode allocator, which
//! passes over every inode freed in the last minute (five when its inode
//! table is not yet written back) when the file system has no journal: a
//! cost of creations × recent deletions that moved the 10k update between
//! 0.94 and 1.5 s and a 1k median from 76 to 255 ms (issue 23).
//!
//! Run with `make bench` (needs git, GNU patch and GNU time). Prints figures
//! and ratios; asserts only that each command succeeds and that update's
//! result equals the shell's.

// Tests and benchmarks print skip notes and figures, and read their own
// switches (REVENDOR_REALWORLD, SNAPSHOTS): clippy.toml's bans are for the tool.
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

#[path = "support/measure.rs"]
mod measure;
#[path = "../tests/testsuite/support/mod.rs"]
mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use measure::{Measured, goal, load_average, median, ratio};

/// (files, runs of check and render, runs of update and of the shell): more
/// of update at 1k, where a few milliseconds of the machine's noise weigh
/// most on the 10k / 1k ratio.
const SIZES: [(usize, usize, usize); 2] = [(1_000, 11, 9), (10_000, 5, 5)];

/// Lines in each generated file.
const LINES: usize = 30;

fn main() {
    let bin = env!("CARGO_BIN_EXE_revendor");
    println!("a directory package of N files, whole processes: medians of wall and CPU time");
    println!(
        "{:>6} {:>18} {:>18} {:>18} {:>18}",
        "files", "check --offline", "render", "update", "git archive+patch"
    );
    // Each size's directory is deleted at the end only: the 10k runs would
    // wait on the inodes the 1k ones freed.
    let mut scratches = Vec::new();
    let mut first: Option<[Measured; 3]> = None;
    for (files, runs, update_runs) in SIZES {
        let shape = Shape::new(files);
        let scratch = tempfile::tempdir().expect("scratch");
        let dir = scratch.path().to_path_buf();
        scratches.push(scratch);
        let cache = dir.join("cache");
        let revendor = |pkg: &Path, args: &[&str]| {
            let mut cmd = Command::new(bin);
            cmd.arg("-C")
                .arg(pkg)
                .args(args)
                .env("REVENDOR_CACHE_DIR", &cache);
            cmd
        };
        let adopted = shape.adopted(&dir);
        Measured::of(
            &revendor(&adopted, &["update", "--to", "v1.0.0"]),
            Stdio::null(),
        );
        let check = median(runs, || timed(&revendor(&adopted, &["check", "--offline"])));
        let render = median(runs, || timed(&revendor(&adopted, &["render"])));
        let copies: Vec<PathBuf> = (0..update_runs)
            .map(|i| copy(&adopted, &dir.join(format!("pkg{i}"))))
            .collect();
        let (mut updates, mut shells) = (Vec::new(), Vec::new());
        for (i, pkg) in copies.iter().enumerate() {
            updates.push(timed(&revendor(pkg, &["update", "--to", "v1.1.0"])));
            let out = dir.join(format!("shell{i}"));
            shells.push(timed(&shape.shell(&adopted, &out)));
            same_tree(&pkg.join("templates"), &out.join("templates"));
        }
        let (mut updates, mut shells) = (updates.into_iter(), shells.into_iter());
        let update = median(update_runs, || updates.next().expect("one per run"));
        let shell = median(update_runs, || shells.next().expect("one per run"));
        let cell = |m: &Measured| format!("{:.1?} / {:.1?}", m.wall, m.cpu);
        println!(
            "{files:>6} {:>18} {:>18} {:>18} {:>18}",
            cell(&check),
            cell(&render),
            cell(&update),
            cell(&shell)
        );
        if let Some([c, r, u]) = first {
            println!(
                "10k/1k CPU: check {:.1}, render {:.1}, update {:.1} (goal ≤ 12), load average {}",
                ratio(check.cpu, c.cpu),
                ratio(render.cpu, r.cpu),
                ratio(update.cpu, u.cpu),
                load_average()
            );
            println!(
                "update / (git archive | tar -x + patch) at {files} files: wall {:.2}",
                ratio(update.wall, shell.wall)
            );
            goal(
                &format!("update at {files} files, CPU"),
                "git archive | tar -x + patch",
                &update,
                &shell,
                1.5,
            );
        }
        first = Some([check, render, update]);
    }
    println!("cells: wall / CPU (user + system)");
}

/// `cmd` measured once what earlier commands wrote is on disk, so that no
/// run pays for another's write-back.
fn timed(cmd: &Command) -> Measured {
    let synced = Command::new("sync").status();
    assert!(synced.expect("sync").success(), "sync");
    Measured::of(cmd, Stdio::null())
}

/// The upstream repository and the package's patch for `files` files.
struct Shape {
    files: usize,
    upstream: support::GitRepo,
    patch: String,
}

impl Shape {
    /// v1.0.0 holds `d/fNNNNN.yaml` for each file; v1.1.0 changes line 25
    /// of every tenth and adds a hundredth more. The patch changes line 10
    /// of every hundredth, far enough from line 25 to apply exactly.
    fn new(files: usize) -> Shape {
        let upstream = support::GitRepo::new();
        upstream.commit("v1", (0..files).map(|n| (name(n), body(n, false))));
        upstream.tag("v1.0.0");
        let changed = (0..files).step_by(10).map(|n| (name(n), body(n, true)));
        let added = (files..files + files / 100).map(|n| (name(n), body(n, false)));
        upstream.commit("v1.1", changed.chain(added));
        upstream.tag("v1.1.0");
        let mut patch = String::new();
        for n in (0..files).step_by(100).map(|n| n + 3) {
            let to = format!("templates/{}", &name(n)[2..]);
            patch.push_str(&format!(
                "--- a/{to}\n+++ b/{to}\n@@ -7,7 +7,7 @@\n key7: value-{n}-7\n key8: value-{n}-8\n \
                 key9: value-{n}-9\n-key10: value-{n}-10\n+key10: patched\n key11: value-{n}-11\n \
                 key12: value-{n}-12\n key13: value-{n}-13\n"
            ));
        }
        Shape {
            files,
            upstream,
            patch,
        }
    }

    /// What a shell does for update's result, into `out`: `git archive` of
    /// the directory at v1.1.0 through `tar -x`, then GNU `patch -p1` of the
    /// package's patch (copied into `out` first, as its checkout would be).
    fn shell(&self, adopted: &Path, out: &Path) -> Command {
        fs::create_dir_all(out).expect("shell output");
        fs::copy(adopted.join("patches/p.patch"), out.join("p.patch")).expect("patch");
        let script = format!(
            "git -C '{}' archive --prefix=templates/ v1.1.0:d | tar -x -C '{}' \
             && patch -s -p1 -d '{}' < '{}/p.patch'",
            self.upstream.path().display(),
            out.display(),
            out.display(),
            out.display()
        );
        let mut cmd = Command::new("sh");
        cmd.args(["-c", &script]);
        cmd
    }

    /// The package before its first update: vendor.toml and the patch.
    fn adopted(&self, dir: &Path) -> PathBuf {
        let pkg = dir.join("adopted");
        fs::create_dir_all(pkg.join("patches")).expect("package");
        fs::write(pkg.join("patches/p.patch"), &self.patch).expect("patch");
        fs::write(
            pkg.join("vendor.toml"),
            format!(
                "[upstream]\ngit = \"{}\"\nversion = \"v1.0.0\"\n\n\
                 [[vendor]]\nfrom = \"d/\"\nto = \"templates/\"\n\n\
                 [[patch]]\nname = \"p\"\nfile = \"patches/p.patch\"\n\
                 applies-to = \"vendor\"\nstrip = 1\n",
                self.upstream.url()
            ),
        )
        .expect("vendor.toml");
        assert!(self.files > 0);
        pkg
    }
}

fn name(n: usize) -> String {
    format!("d/f{n:05}.yaml")
}

/// The file `n`: `keyK: value-n-K` for each line K, line 25 changed when
/// `changed`.
fn body(n: usize, changed: bool) -> String {
    (1..=LINES)
        .map(|k| {
            if changed && k == 25 {
                format!("key{k}: changed-{n}\n")
            } else {
                format!("key{k}: value-{n}-{k}\n")
            }
        })
        .collect()
}

/// A copy of the package at `from`, made at `to`.
fn copy(from: &Path, to: &Path) -> PathBuf {
    let copied = Command::new("cp").arg("-a").arg(from).arg(to).status();
    assert!(copied.expect("cp").success(), "copy the adopted package");
    to.to_path_buf()
}

/// Panics unless the two directories hold the same files with the same bytes.
fn same_tree(ours: &Path, theirs: &Path) {
    let out = Command::new("diff")
        .args(["-r", "-q"])
        .arg(ours)
        .arg(theirs)
        .output()
        .expect("diff");
    assert!(
        out.status.success(),
        "update and the shell disagree:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
