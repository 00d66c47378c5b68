//! `revendor update` against the shell pipeline it replaces (curl the release,
//! curl the file, GNU `patch`, `sed`): whole processes under GNU time, wall and
//! CPU time (user + system, the pipeline's children included), and wall time of
//! revendor's patch engine against GNU `patch` and `git apply`, all on the same
//! input served by the same local GitHub stand-in (whose own CPU time neither
//! side is charged).
//!
//! Run with `make bench` (needs REVENDOR_REALWORLD, curl, patch, git). Prints
//! medians and ratios; asserts nothing about time.

// Tests and benchmarks print skip notes and figures, and read their own
// switches (REVENDOR_REALWORLD, SNAPSHOTS): clippy.toml's bans are for the tool.
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

#[path = "support/measure.rs"]
mod measure;
#[path = "../tests/testsuite/support/mod.rs"]
mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use measure::{Measured, goal};

use support::{GitHub, Realworld, TempPackage};

const RUNS: usize = 15;
const TEMPLATE: &str = "templates/multus-daemonset-thick.yml";
const PATCH: &str = "patches/customize-deployment.patch";

fn main() {
    let Some(rw) = Realworld::from_env() else {
        eprintln!("set REVENDOR_REALWORLD to the realworld folder to run this benchmark");
        return;
    };
    let gh = GitHub::start();
    rw.register_multus(&gh);
    let bin = env!("CARGO_BIN_EXE_revendor");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cache = tempfile::tempdir().expect("cache");

    let revendor = measure::median(RUNS, || {
        let pkg = package(&rw, root);
        let mut update = Command::new(bin);
        update
            .args(["-C"])
            .arg(pkg.path())
            .args(["update", "--to", "v4.3.0", "--quiet"])
            .envs(gh.env())
            .env("REVENDOR_CACHE_DIR", cache.path());
        Measured::of(&update, Stdio::null())
    });

    let shell = measure::median(RUNS, || {
        let pkg = package(&rw, root);
        let script = format!(
            r#"set -e
cd '{dir}'
tag=$(curl -fsS '{api}/repos/k8snetworkplumbingwg/multus-cni/releases/latest' | sed -n 's/.*"tag_name": *"\([^"]*\)".*/\1/p')
curl -fsSo {TEMPLATE} '{raw}/k8snetworkplumbingwg/multus-cni/'"$tag"'/deployments/multus-daemonset-thick.yml'
patch -s -p4 < {PATCH}
sed -i "/multus-cni/ s/snapshot-thick/$tag-thick/" {TEMPLATE}
sed -i "s|image: .*multus-cni.*|image: ghcr.io/cozystack/cozystack/multus-cni:v1.6.0@sha256:{digest}|" {TEMPLATE}
sed -i "s/^ARG VERSION=.*/ARG VERSION=$tag/" images/multus-cni/Dockerfile
"#,
            dir = pkg.path().display(),
            api = gh.api_url(),
            raw = gh.raw_url(),
            digest = "0".repeat(64),
        );
        let mut sh = Command::new("sh");
        sh.arg("-c").arg(&script);
        Measured::of(&sh, Stdio::null())
    });

    // The patch step alone: in-process engine vs GNU patch vs git apply.
    let scratch = tempfile::tempdir().expect("scratch");
    let base = rw.multus_manifest("v4.3.0");
    let patch_bytes = rw.read(&format!("cozystack-multus/{PATCH}"));
    let set = revendor::patch::parse(&patch_bytes).expect("parse");
    let engine = median(|| {
        let start = Instant::now();
        for _ in 0..100 {
            let set = revendor::patch::parse(&patch_bytes).expect("parse");
            revendor::patch::apply(&set.files[0], &base).expect("apply");
        }
        start.elapsed() / 100
    });
    let _ = set;
    let target = scratch
        .path()
        .join("packages/system/multus/templates/multus-daemonset-thick.yml");
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    let patch_file = scratch.path().join("p.patch");
    std::fs::write(&patch_file, &patch_bytes).unwrap();
    let gnu = median(|| {
        std::fs::write(&target, &base).unwrap();
        let start = Instant::now();
        let ok = Command::new("patch")
            .args(["-s", "-F0", "-p4"])
            .arg(&target)
            .arg(&patch_file)
            .status()
            .expect("patch")
            .success();
        assert!(ok);
        start.elapsed()
    });
    let git = median(|| {
        std::fs::write(&target, &base).unwrap();
        let start = Instant::now();
        let ok = Command::new("git")
            .current_dir(scratch.path())
            .args(["apply", "--unsafe-paths", "-p1"])
            .arg(&patch_file)
            .status()
            .expect("git")
            .success();
        assert!(ok);
        start.elapsed()
    });

    println!("median of {RUNS} runs, same local server and input");
    println!("                                         wall        cpu   peak rss");
    for (name, m) in [
        ("revendor update v4.2.4 -> v4.3.0", &revendor),
        ("curl + patch + sed pipeline", &shell),
    ] {
        println!(
            "{name:<34} {:>10.2?} {:>10.2?} {:>8}MB",
            m.wall,
            m.cpu,
            m.peak_rss >> 20
        );
    }
    println!(
        "ratio revendor / shell (wall)      {:>10.2}",
        measure::ratio(revendor.wall, shell.wall)
    );
    println!("patch step: revendor engine        {:>10.2?}", engine);
    println!("patch step: GNU patch -F0          {:>10.2?}", gnu);
    println!("patch step: git apply              {:>10.2?}", git);
    println!(
        "ratio engine / GNU patch           {:>10.3}",
        ratio(engine, gnu)
    );
    println!(
        "ratio engine / git apply           {:>10.3}",
        ratio(engine, git)
    );
    goal(
        "update v4.2.4 -> v4.3.0, CPU",
        "curl + patch + sed",
        &revendor,
        &shell,
        1.0,
    );
}

/// The multus package as cozystack had it at v4.2.4 (no lock).
fn package(rw: &Realworld, root: &Path) -> TempPackage {
    let pkg = TempPackage::new();
    let vendor = std::fs::read_to_string(root.join("vendor.toml")).expect("vendor.toml");
    let vendor: String = vendor
        .replace("version = \"v4.3.0\"", "version = \"v4.2.4\"")
        .split("\n[[patch]]\nname = \"fix-del-without-cache\"")
        .next()
        .unwrap()
        .to_string()
        + &vendor[vendor.find("\n[[rewrite]]").unwrap()..vendor.find("\n[[marker]]").unwrap()];
    pkg.write("vendor.toml", vendor);
    pkg.write(PATCH, rw.read(&format!("cozystack-multus/{PATCH}")));
    let template = String::from_utf8(rw.read(&format!("cozystack-multus/{TEMPLATE}"))).unwrap();
    pkg.write(TEMPLATE, template.replacen("      - nad\n", "", 1));
    pkg.write(
        "images/multus-cni/Dockerfile",
        "FROM scratch\nARG VERSION=v4.2.4\n",
    );
    pkg
}

fn median(mut f: impl FnMut() -> Duration) -> Duration {
    let mut times: Vec<Duration> = (0..RUNS).map(|_| f()).collect();
    times.sort();
    times[RUNS / 2]
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}
