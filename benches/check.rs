//! Offline `revendor check` time on the multus package (the repository root's
//! vendor.toml, patches and Dockerfile), adopted once from the real releases
//! served by the local GitHub stand-in.
//!
//! Two figures, each the median of RUNS: the whole process (`revendor check`
//! as `make check` runs it), and the check alone in-process
//! (`ops::check::check`), which leaves out process start and argument
//! parsing. Run with `cargo bench --bench check` (needs REVENDOR_REALWORLD).
//! Prints medians; asserts only that the package checks clean.

// Tests and benchmarks print skip notes and figures, and read their own
// switches (REVENDOR_REALWORLD, SNAPSHOTS): clippy.toml's bans are for the tool.
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

#[path = "../tests/testsuite/support/mod.rs"]
mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use revendor::console::{ColorChoice, Format, Settings, Shell, Verbosity};
use revendor::env::Env;
use revendor::ops::check::{CheckOptions, check};
use revendor::workspace::Context;
use support::{GitHub, Realworld, TempPackage};

const RUNS: usize = 31;

fn main() {
    let Some(rw) = Realworld::from_env() else {
        eprintln!("set REVENDOR_REALWORLD to the realworld folder to run this benchmark");
        return;
    };
    let gh = GitHub::start();
    rw.register_multus(&gh);
    rw.register_multus_source(&gh);
    let bin = env!("CARGO_BIN_EXE_revendor");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cache = tempfile::tempdir().expect("cache");

    let pkg = TempPackage::new();
    for f in ["vendor.toml", "Chart.yaml", "values.yaml"] {
        pkg.write(f, std::fs::read(root.join(f)).expect("root package file"));
    }
    pkg.copy_from(&root.join("patches"), "patches");
    pkg.copy_from(&root.join("images"), "images");
    let run = |args: &[&str]| {
        Command::new(bin)
            .arg("-C")
            .arg(pkg.path())
            .args(args)
            .envs(gh.env())
            .env("REVENDOR_CACHE_DIR", cache.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("revendor")
    };
    assert!(run(&["update"]).success(), "update adopts the package");
    assert!(run(&["check"]).success(), "the package checks clean");

    let process = median(|| {
        let start = Instant::now();
        let status = run(&["--offline", "check"]);
        let elapsed = start.elapsed();
        assert!(status.success());
        elapsed
    });

    let env = Env {
        cache_dir: cache.path().to_path_buf(),
        ..Env::from_process()
    };
    let shell = Shell::new(Settings {
        format: Format::Json,
        verbosity: Verbosity::Normal,
        progress: false,
        color: ColorChoice::Never,
        no_color: true,
        force_color: false,
    });
    let ctx = Context::new(pkg.path().to_path_buf(), env, true, shell).expect("context");
    let in_process = median(|| {
        let start = Instant::now();
        let report = check(&ctx, &CheckOptions::default()).expect("check");
        let elapsed = start.elapsed();
        assert!(
            report
                .findings
                .iter()
                .all(|f| f.severity != revendor::check::Severity::Error)
        );
        elapsed
    });

    println!("offline check of the multus package, median of {RUNS} runs");
    println!("revendor check (whole process)     {process:>10.2?}");
    println!("ops::check::check (in-process)     {in_process:>10.2?}");
}

fn median(mut f: impl FnMut() -> Duration) -> Duration {
    let mut times: Vec<Duration> = (0..RUNS).map(|_| f()).collect();
    times.sort();
    times[RUNS / 2]
}
