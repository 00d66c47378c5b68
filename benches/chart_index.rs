//! One chart resolved and pulled from a 20 MB chart repository index (issue
//! 23): revendor adopting cozystack's coredns chart into an empty package
//! (`update --to`: the index read for that chart, the archive fetched,
//! checked against the index's digest and unpacked), against Helm's own
//! `pull --untar` of the same chart through the real Helm library
//! (tests/tools/revendor-test-helm.py over helm-python-sdk). Both start cold:
//! an empty cache each run, the repository served on loopback.
//!
//! The index is the one Helm's `repo index` writes for the chart (from
//! REVENDOR_REALWORLD), with 300 other charts of 66 versions each (19,800
//! entries, about 20 MB) ahead of it, so that the chart is the last one read.
//!
//! Run with `make bench`. Prints medians of CPU (user + system) and wall
//! time, peak RSS and the ratio; asserts only that both commands succeed
//! and unpack the same files.

// Tests and benchmarks print skip notes and figures, and read their own
// switches (REVENDOR_REALWORLD, SNAPSHOTS): clippy.toml's bans are for the tool.
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

#[path = "support/measure.rs"]
mod measure;
#[path = "../tests/testsuite/support/mod.rs"]
mod support;

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use measure::{Measured, median, ratio};
use support::Realworld;
use support::chart_repo::ChartRepo;
use support::package::read_tree;

/// Charts in the index besides the one pulled, and versions of each.
const CHARTS: usize = 300;
const VERSIONS: usize = 66;
const RUNS: usize = 5;

fn main() {
    let Some(rw) = Realworld::from_env() else {
        eprintln!("set REVENDOR_REALWORLD to the realworld folder to run this benchmark");
        return;
    };
    let repo = ChartRepo::start();
    let version = rw.fact_map(&["helm", "coredns", "bump"])["from"].clone();
    let chart = rw.root().join("cozystack-coredns-before/charts/coredns");
    repo.publish_files("coredns", &read_tree(&chart));
    let index = repo.dir().join("index.yaml");
    let grown = grow(&fs::read_to_string(&index).expect("Helm's index"));
    fs::write(&index, &grown).expect("the grown index");

    let scratch = tempfile::tempdir().expect("scratch");
    let pkg = scratch.path().join("pkg");
    let helm_out = scratch.path().join("helm");
    let revendor = median(RUNS, || {
        let _ = fs::remove_dir_all(&pkg);
        fs::create_dir_all(&pkg).expect("package");
        let toml = format!(
            "[upstream]\nhelm = \"{}\"\nchart = \"coredns\"\nversion = \"{version}\"\n\n\
             [[vendor]]\nfrom = \"./\"\nto = \"charts/coredns/\"\n",
            repo.url()
        );
        fs::write(pkg.join("vendor.toml"), toml).expect("vendor.toml");
        let cache = tempfile::tempdir().expect("cache");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_revendor"));
        cmd.arg("-C")
            .arg(&pkg)
            .args(["--no-progress", "update", "--to", &version])
            .env("REVENDOR_CACHE_DIR", cache.path());
        Measured::of(&cmd, Stdio::null())
    });
    let helm = median(RUNS, || {
        let _ = fs::remove_dir_all(&helm_out);
        let home = tempfile::tempdir().expect("Helm's home");
        Measured::of(
            &helm_pull(&repo, &version, &helm_out, home.path()),
            Stdio::null(),
        )
    });
    assert_eq!(
        read_tree(&pkg.join("charts/coredns")),
        read_tree(&helm_out.join("coredns")),
        "revendor and Helm unpack the same chart"
    );
    report(grown.len(), &revendor, &helm);
}

/// Helm's `pull --untar` of coredns at `version` into `out`, with Helm's
/// cache, config and data homes under `home`.
fn helm_pull(repo: &ChartRepo, version: &str, out: &Path, home: &Path) -> Command {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = Command::new(root.join(".tools/venv/bin/python"));
    cmd.arg(root.join("tests/tools/revendor-test-helm.py"))
        .args([
            "pull",
            "coredns",
            "--repo",
            &repo.url(),
            "--version",
            version,
        ])
        .arg("--untar-dir")
        .arg(out);
    for (key, dir) in [
        ("HELM_CACHE_HOME", "cache"),
        ("HELM_CONFIG_HOME", "config"),
        ("HELM_DATA_HOME", "data"),
    ] {
        cmd.env(key, home.join(dir));
    }
    cmd
}

/// Prints the figures and the ratio line.
fn report(index_bytes: usize, revendor: &Measured, helm: &Measured) {
    println!(
        "one chart from a {:.1} MB index ({} entries), whole process, median of {RUNS}",
        index_bytes as f64 / 1e6,
        CHARTS * VERSIONS + 1
    );
    for (name, m) in [("revendor update", revendor), ("helm pull --untar", helm)] {
        println!(
            "{name:<18} CPU {:>8.2?}  wall {:>8.2?}  peak RSS {} MB",
            m.cpu,
            m.wall,
            m.peak_rss / 1_000_000
        );
    }
    println!(
        "revendor/peer = {:.2} (CPU; goal ≤ 1.00: no more than Helm's own pull)",
        ratio(revendor.cpu, helm.cpu)
    );
}

/// Helm's index `text` with [`CHARTS`] charts of [`VERSIONS`] versions each
/// put ahead of its entries, written as Helm writes an index.
fn grow(text: &str) -> String {
    let (head, rest) = text
        .split_once("entries:\n")
        .expect("an index has `entries:`");
    let mut out = String::with_capacity(21_000_000);
    out.push_str(head);
    out.push_str("entries:\n");
    for c in 0..CHARTS {
        let name = format!("app-{c:03}");
        let _ = writeln!(out, "  {name}:");
        for v in (0..VERSIONS).rev() {
            entry(&mut out, &name, c, v);
        }
    }
    out.push_str(rest);
    out
}

/// One index entry of chart `name` (number `c`) at version `1.<v>.0`.
fn entry(out: &mut String, name: &str, c: usize, v: usize) {
    let digest: String = (0..4)
        .map(|k| format!("{:016x}", (c * 1_000 + v) * 31 + k))
        .collect();
    let _ = write!(
        out,
        "  - annotations:\n      artifacthub.io/changes: |\n        - kind: changed\n          \
         description: Bump the default image to 2.{v}.0\n        - kind: fixed\n          \
         description: Render the probes only when enabled\n      artifacthub.io/license: Apache-2.0\n    \
         apiVersion: v2\n    appVersion: 2.{v}.0\n    created: \"2026-08-{:02}T10:{:02}:00.000000000Z\"\n    \
         description: A Helm chart for {name}, a service that many clusters install\n    \
         digest: {digest}\n    home: https://charts.example.org/{name}\n    \
         icon: https://charts.example.org/{name}/icon.svg\n    keywords:\n    - {name}\n    - networking\n    \
         - operator\n    kubeVersion: '>=1.25.0-0'\n    maintainers:\n    - email: maintainers@example.org\n      \
         name: Maintainers\n      url: https://example.org\n    name: {name}\n    sources:\n    \
         - https://github.com/example/{name}\n    type: application\n    urls:\n    \
         - https://charts.example.org/{name}/releases/download/{name}-1.{v}.0/{name}-1.{v}.0.tgz\n    \
         version: 1.{v}.0\n",
        1 + v % 28,
        v % 60
    );
}
