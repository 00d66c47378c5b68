//! `check --all --offline` over 65 packages (issue 23), the shape of a
//! platform's nightly: 20 copies of the repository's own multus package
//! (a manifest with a vendor patch, a source patch, an image pin and Helm
//! contracts), 20 of cozystack's kube-ovn package (its whole chart directory
//! from a GitHub upstream, two chart patches and a source patch) and 25 of
//! its coredns package (a chart from an HTTP chart repository). Each kind is
//! adopted once from the real-world data (REVENDOR_REALWORLD) served on
//! loopback, then copied; everything is generated in a temporary directory.
//!
//! Measured, whole processes: cold (an empty cache) and warm (the cache the
//! adoptions and one check filled: source archives, remembered verdicts,
//! Helm renders). The goal is under 2 s warm on two cores; CPU time is
//! printed beside the wall time (on a shared machine the wall waits for a
//! core), and CPU / 2 is the wall two idle cores would need at best.
//!
//! Run with `make bench` (needs REVENDOR_REALWORLD, git and the tests'
//! Helm). Prints figures and the ratio; asserts only that every package
//! checks clean.

// Tests and benchmarks print skip notes and figures, and read their own
// switches (REVENDOR_REALWORLD, SNAPSHOTS): clippy.toml's bans are for the tool.
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

#[path = "support/measure.rs"]
mod measure;
#[path = "support/multus.rs"]
mod multus;
#[path = "../tests/testsuite/support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use measure::{Measured, median};
use support::chart_repo::ChartRepo;
use support::package::read_tree;
use support::{GitHub, Realworld};

/// How many copies of each kind of package: 65 in all.
const KINDS: [(&str, usize); 3] = [("multus", 20), ("kubeovn", 20), ("coredns", 25)];

/// The goal for a warm `check --all` on two cores.
const GOAL: Duration = Duration::from_secs(2);

fn main() {
    let Some(rw) = Realworld::from_env() else {
        eprintln!("set REVENDOR_REALWORLD to the realworld folder to run this benchmark");
        return;
    };
    let bin = env!("CARGO_BIN_EXE_revendor");
    let gh = GitHub::start();
    rw.register_multus(&gh);
    rw.register_multus_source(&gh);
    rw.register_kube_ovn_chart(&gh);
    let charts = ChartRepo::start();
    let coredns = rw.fact_map(&["helm", "coredns", "bump"])["from"].clone();
    let before = rw.root().join("cozystack-coredns-before/charts/coredns");
    charts.publish_files("coredns", &read_tree(&before));

    let scratch = tempfile::tempdir().expect("scratch");
    let (adopted, all) = (scratch.path().join("adopted"), scratch.path().join("all"));
    let warm = scratch.path().join("cache");
    let revendor = |dir: &Path, args: &[&str], cache: &Path| {
        let mut cmd = Command::new(bin);
        cmd.arg("-C")
            .arg(dir)
            .args(args)
            .envs(gh.env())
            .env("REVENDOR_CACHE_DIR", cache)
            .env("REVENDOR_HELM", support::helm::binary());
        cmd
    };
    let run = |dir: &Path, args: &[&str]| Measured::of(&revendor(dir, args, &warm), Stdio::null());

    multus::unadopted(&adopted.join("multus"));
    run(&adopted.join("multus"), &["update"]);
    kube_ovn(&rw, &adopted.join("kubeovn"));
    run(&adopted.join("kubeovn"), &["update", "--to", "v1.14.5"]);
    coredns_package(&rw, &charts, &adopted.join("coredns"));
    run(&adopted.join("coredns"), &["update", "--to", &coredns]);
    for (kind, copies) in KINDS {
        for n in 0..copies {
            copy(&adopted.join(kind), &all.join(format!("{kind}-{n:02}")));
        }
    }
    let check_all = ["--offline", "check", "--all"];
    run(&all, &check_all);
    let warm_run = median(5, || run(&all, &check_all));
    let cold_run = median(3, || {
        let empty = tempfile::tempdir().expect("empty cache");
        Measured::of(&revendor(&all, &check_all, empty.path()), Stdio::null())
    });
    report(&warm_run, &cold_run);
}

/// Prints the figures and the ratio line.
fn report(warm: &Measured, cold: &Measured) {
    let packages: usize = KINDS.iter().map(|(_, n)| n).sum();
    println!("check --all --offline over {packages} packages, whole process: medians");
    for (name, m) in [("warm cache", warm), ("empty cache", cold)] {
        println!(
            "{name:<12} wall {:>8.2?}  CPU {:>8.2?}  (CPU / 2 cores {:>8.2?})  peak RSS {} MB",
            m.wall,
            m.cpu,
            m.cpu / 2,
            m.peak_rss / 1_000_000
        );
    }
    println!(
        "revendor/peer = {:.2} (goal ≤ 1.00; revendor: warm CPU / 2 cores; peer: {GOAL:?})",
        measure::ratio(warm.cpu / 2, GOAL)
    );
}

/// cozystack's kube-ovn package before its v1.14.11 bump, with a vendor.toml
/// vendoring the chart directory with both chart patches and the source patch.
fn kube_ovn(rw: &Realworld, dir: &Path) {
    write_tree(dir, &read_tree(&rw.root().join("cozystack-kubeovn-before")));
    let toml = "[upstream]\ngithub = \"kubeovn/kube-ovn\"\nversion = \"v1.14.5\"\n\
                track = \">=1.14.0, <1.15.0\"\n\n\
                [[vendor]]\nfrom = \"charts/kube-ovn/\"\nto = \"charts/kube-ovn/\"\n\n\
                [[patch]]\nname = \"cozyconfig\"\nfile = \"patches/cozyconfig.diff\"\n\
                applies-to = \"vendor\"\nstrip = 4\n\n\
                [[patch]]\nname = \"mtu\"\nfile = \"patches/mtu.diff\"\n\
                applies-to = \"vendor\"\nstrip = 4\n\n\
                [[patch]]\nname = \"northd-probe\"\nfile = \"images/kubeovn/patches/northd_probe.diff\"\n\
                applies-to = \"source\"\nstrip = 1\n";
    fs::write(dir.join("vendor.toml"), toml).expect("vendor.toml");
}

/// cozystack's coredns package before its chart bump, pulling from `charts`.
fn coredns_package(rw: &Realworld, charts: &ChartRepo, dir: &Path) {
    write_tree(dir, &read_tree(&rw.root().join("cozystack-coredns-before")));
    let version = &rw.fact_map(&["helm", "coredns", "bump"])["from"];
    let toml = format!(
        "[upstream]\nhelm = \"{}\"\nchart = \"coredns\"\nversion = \"{version}\"\n\n\
         [[vendor]]\nfrom = \"./\"\nto = \"charts/coredns/\"\n",
        charts.url()
    );
    fs::write(dir.join("vendor.toml"), toml).expect("vendor.toml");
}

/// Writes `files` (path → bytes) under `dir`.
fn write_tree(dir: &Path, files: &BTreeMap<String, Vec<u8>>) {
    for (path, bytes) in files {
        let at = dir.join(path);
        fs::create_dir_all(at.parent().expect("a parent")).expect("directory");
        fs::write(at, bytes).expect("file");
    }
}

/// A copy of the directory `from` at `to` (its parents created).
fn copy(from: &Path, to: &Path) {
    fs::create_dir_all(to.parent().expect("a parent")).expect("directory");
    let copied = Command::new("cp").arg("-a").arg(from).arg(to).status();
    assert!(copied.expect("cp").success(), "copy {}", from.display());
}
