//! How long `revendor image build --push` takes to decide that nothing that
//! goes into the image changed (the skip), on this repository's multus
//! package. Run with `make bench`; prints the median, asserts nothing.
//!
//! The package is laid out with a lock whose content hash is the one the
//! build would compute, so the run ends at the skip; `--offline` keeps the
//! registry out of the figure (online, one HEAD request is added).

// Benchmarks print their figures.
#![allow(clippy::disallowed_macros)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 31;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pkg = tempfile::tempdir().expect("package dir");
    for f in ["vendor.toml", "patches/customize-deployment.patch"] {
        copy(root, pkg.path(), f);
    }
    for f in ["Dockerfile", "patches/fix-del-without-cache.diff"] {
        copy(root, pkg.path(), &format!("images/multus-cni/{f}"));
    }
    let context = pkg.path().join("images/multus-cni");
    let hash = revendor::builder::content_hash(
        &context,
        &context.join("Dockerfile"),
        &[("VERSION".to_owned(), "v4.3.0".to_owned())],
        &["linux/amd64".to_owned(), "linux/arm64".to_owned()],
        &[],
    )
    .expect("content hash");
    let lock = format!(
        "[upstream]\nsource = \"github:k8snetworkplumbingwg/multus-cni\"\nversion = \"v4.3.0\"\n\n\
         [image]\nreference = \"ghcr.io/cozystack/cozystack/multus-cni:v1.6.0@sha256:{}\"\ncontent-hash = \"{hash}\"\n",
        "0".repeat(64)
    );
    std::fs::create_dir_all(pkg.path().join("upstream")).unwrap();
    std::fs::write(pkg.path().join("upstream/lock.toml"), lock).unwrap();

    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            let out = Command::new(env!("CARGO_BIN_EXE_revendor"))
                .arg("-C")
                .arg(pkg.path())
                .args(["--offline", "image", "build", "--push"])
                .stderr(Stdio::null())
                .output()
                .expect("revendor");
            let took = start.elapsed();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(stdout.starts_with("up to date: "), "not skipped: {stdout}");
            took
        })
        .collect();
    times.sort();
    println!(
        "image build with nothing changed (skip), median of {RUNS}: {:.2?}",
        times[RUNS / 2]
    );
}

fn copy(from: &Path, to: &Path, rel: &str) {
    let dest = to.join(rel);
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    std::fs::copy(from.join(rel), dest).unwrap();
}
