//! Offline `revendor check` time on the multus package (the repository root's
//! vendor.toml, patches and Dockerfile), adopted once from the real releases
//! served by the local GitHub stand-in.
//!
//! Two figures, each the median of RUNS: the whole process (`revendor check`
//! as `make check` runs it), and the check alone in-process
//! (`ops::check::check`), which leaves out process start and argument
//! parsing. Then a nightly `check --online` with nothing new upstream: how many
//! GitHub requests it sent, how many were conditional and answered 304, and how
//! the registry was asked for the pinned image's manifests (HEAD or GET). Run
//! with `cargo bench --bench check` (needs REVENDOR_REALWORLD). Prints medians
//! and counts; asserts only that the package checks clean. Also: the whole
//! `check --offline`'s CPU time with a warm cache against an empty one.

// Tests and benchmarks print skip notes and figures, and read their own
// switches (REVENDOR_REALWORLD, SNAPSHOTS): clippy.toml's bans are for the tool.
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

#[path = "support/measure.rs"]
mod measure;
#[path = "support/multus.rs"]
mod multus;
#[path = "../tests/testsuite/support/mod.rs"]
mod support;

#[allow(dead_code)]
#[path = "../tests/testsuite/registry_support/mod.rs"]
mod registry_support;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use registry_support::content::multi_arch;
use registry_support::{Auth, Registry, have_registry};
use revendor::console::{ColorChoice, Format, Settings, Shell, Verbosity};
use revendor::env::Env;
use revendor::image::MediaType;
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
    let cache = tempfile::tempdir().expect("cache");

    let pkg = TempPackage::new();
    // The contracts on what Helm renders read tests/values, with the tests'
    // helm; after the first run every render comes from the cache.
    multus::unadopted(pkg.path());
    let helm = support::helm::binary();
    let run_with = |args: &[&str], env: &[(&str, String)]| {
        Command::new(bin)
            .arg("-C")
            .arg(pkg.path())
            .args(args)
            .envs(gh.env())
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .env("REVENDOR_CACHE_DIR", cache.path())
            .env("REVENDOR_HELM", &helm)
            .stdin(Stdio::null())
            .output()
            .expect("revendor")
    };
    let run = |args: &[&str]| run_with(args, &[]);
    assert!(
        run(&["update"]).status.success(),
        "update adopts the package"
    );
    assert!(run(&["check"]).status.success(), "the package checks clean");

    let process = median(|| {
        let start = Instant::now();
        let status = run(&["--offline", "check"]).status;
        let elapsed = start.elapsed();
        assert!(status.success());
        elapsed
    });

    let env = Env {
        cache_dir: cache.path().to_path_buf(),
        helm: Some(helm.clone()),
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
    // The context holds the package's lock for as long as it lives: it is
    // dropped before the whole-process runs below, which would wait for it.
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
    drop(ctx);

    println!("offline check of the multus package, median of {RUNS} runs");
    println!("revendor check (whole process)     {process:>10.2?}   (goal: under 5ms)");
    println!("ops::check::check (in-process)     {in_process:>10.2?}");

    warm_and_cold(
        &|cache: &Path| {
            let mut cmd = Command::new(bin);
            cmd.arg("-C")
                .arg(pkg.path())
                .args(["--offline", "check"])
                .envs(gh.env())
                .env("REVENDOR_CACHE_DIR", cache)
                .env("REVENDOR_HELM", &helm);
            measure::Measured::of(&cmd, Stdio::null())
        },
        cache.path(),
    );

    nightly(&rw, &gh, &pkg, run_with);
}

/// `check --offline`'s CPU time with the cache a previous run filled (the
/// source archive, the remembered verdicts, the Helm renders) against an
/// empty one (issue 23: a warm check re-verified the source patch; goal:
/// warm within 1.2 times cold).
fn warm_and_cold(check: &dyn Fn(&Path) -> measure::Measured, warm_cache: &Path) {
    let warm = measure::median(RUNS, || check(warm_cache));
    let cold = measure::median(5, || {
        let empty = tempfile::tempdir().expect("empty cache");
        check(empty.path())
    });
    println!(
        "check --offline CPU (user + system): warm cache {:.2?}, empty cache {:.2?}",
        warm.cpu, cold.cpu
    );
    println!(
        "revendor/peer = {:.2} (check --offline with a warm cache against an empty one, CPU; goal ≤ 1.2)",
        measure::ratio(warm.cpu, cold.cpu)
    );
}

/// A nightly `check --online` with nothing new upstream, after one run that filled the
/// validator cache: what it asked of GitHub, and of the registry holding the pinned image (the
/// real CNCF registry read as ghcr.io through a mirror, when it is installed).
fn nightly(
    rw: &Realworld,
    gh: &GitHub,
    pkg: &TempPackage,
    run: impl Fn(&[&str], &[(&str, String)]) -> Output,
) {
    rw.register_talos(gh, rw.fact_str(&["talos", "shipped"]));
    rw.register_kube_ovn(gh, rw.fact_str(&["kube-ovn", "vendored"]));
    rw.register_cni_plugins(gh, rw.fact_str(&["cni-plugins", "pinned"]));
    let registry = have_registry("the registry half of the nightly figures")
        .then(|| Registry::start_logged(Auth::Anonymous));
    let mut env = Vec::new();
    if let Some(registry) = &registry {
        let image = multi_arch(
            &["linux/amd64", "linux/arm64"],
            "multus",
            MediaType::OciIndex,
        );
        registry.push_multi_arch("cozystack/cozystack/multus-cni", "v1.6.0", &image);
        env.push((
            "REVENDOR_REGISTRY_MIRRORS",
            format!("ghcr.io={}", registry.host),
        ));
        env.push(("DOCKER_CONFIG", pkg.join(".docker").display().to_string()));
        let pinned = run(&["image", "pin"], &env);
        assert!(
            pinned.status.success(),
            "image pin: {}",
            String::from_utf8_lossy(&pinned.stderr)
        );
    }
    let first = run(&["check", "--online"], &env);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stdout)
    );
    gh.clear_requests();
    let before = registry.as_ref().map(|r| r.log().len()).unwrap_or(0);
    let second = run(&["check", "--online", "-v"], &env);
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stdout)
    );
    let requests = gh.requests();
    let count = |f: &dyn Fn(&support::github::LoggedRequest) -> bool| {
        requests.iter().filter(|r| f(r)).count()
    };
    println!("nightly check --online, nothing new upstream (the second of two runs)");
    println!("GitHub requests                    {:>10}", requests.len());
    println!(
        "  conditional (If-None-Match)      {:>10}",
        count(&|r| r.conditional())
    );
    println!(
        "  answered 304 Not Modified        {:>10}",
        count(&|r| r.status == 304)
    );
    println!(
        "  redirects (302) to the assets    {:>10}",
        count(&|r| r.status == 302)
    );
    let said = String::from_utf8_lossy(&second.stderr);
    if let Some(line) = said.lines().find(|l| l.contains("HTTP requests")) {
        println!(
            "  revendor -v: {}",
            line.trim().trim_start_matches("note").trim()
        );
    }
    match &registry {
        Some(registry) => {
            let log = registry.log();
            let lines: Vec<&str> = log[before..]
                .lines()
                .filter(|l| l.contains("/v2/"))
                .collect();
            let manifests = |method: &str| {
                lines
                    .iter()
                    .filter(|l| {
                        l.contains(&format!("\"{method} /v2/")) && l.contains("/manifests/")
                    })
                    .count()
            };
            println!(
                "registry manifest requests by HEAD {:>10}",
                manifests("HEAD")
            );
            println!(
                "registry manifest requests by GET  {:>10}",
                manifests("GET")
            );
        }
        None => println!("registry: not installed, no registry figures"),
    }
}

fn median(mut f: impl FnMut() -> Duration) -> Duration {
    let mut times: Vec<Duration> = (0..RUNS).map(|_| f()).collect();
    times.sort();
    times[RUNS / 2]
}
