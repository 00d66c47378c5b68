//! Offline commands never set up the network stack (issue 13, "Speed"). `render --offline`,
//! `check` (with or without `--offline`) and `patch refresh` send no request, so they never build the HTTP client:
//! no TLS roots read, no runtime thread, and they work in a container without CA certificates.
//!
//! Two proofs: the commands pass with `SSL_CERT_FILE` and `SSL_CERT_DIR` naming nothing (where
//! an online command fails to set up its client), and under `strace` they open neither the
//! trust store they are pointed at nor `/etc/ssl`, and start no thread (where an online command
//! does both). The strace proof skips with a note where strace is missing, except under
//! `CI=true`, where `scripts/install-test-deps` installs it.

// Tests print skip notes and read their own switches: clippy.toml's bans are for the tool.
use crate::support;

use std::path::Path;
use std::process::{Command, Stdio};

use support::daemonset::{FILE, Manifest, PATCH, REPO, VendorToml};
use support::{GitHub, Revendor, TempPackage};

/// The commands that must never touch the network stack (`check` without `--online` sends
/// no request either).
const OFFLINE: [&[&str]; 4] = [
    &["--offline", "render"],
    &["--offline", "check"],
    &["check"],
    &["patch", "refresh"],
];

/// The upstream at v1.0.0 and a package adopted at it (online, with the normal trust store).
fn adopted() -> (GitHub, TempPackage) {
    let gh = GitHub::start();
    gh.repo(REPO)
        .file_at("v1.0.0", FILE, Manifest::bare().text())
        .release("v1.0.0", |r| r);
    let pkg = TempPackage::new();
    pkg.write("vendor.toml", VendorToml::new().text())
        .write(PATCH, Manifest::bare().namespace_patch());
    Revendor::new(pkg.path(), &gh)
        .run(&["update", "--to", "v1.0.0"])
        .expect(0);
    (gh, pkg)
}

/// `rv` with both trust-store variables pointing at `file` and `dir`.
fn with_roots(rv: Revendor, file: &Path, dir: &Path) -> Revendor {
    rv.env("SSL_CERT_FILE", &file.to_string_lossy())
        .env("SSL_CERT_DIR", &dir.to_string_lossy())
}

#[test]
fn issue13_offline_commands_pass_without_tls_roots() {
    let (gh, pkg) = adopted();
    let nothing = tempfile::tempdir().unwrap();
    let missing = nothing.path().join("missing");
    let rv = with_roots(Revendor::new(pkg.path(), &gh), &missing, &missing);
    for args in OFFLINE {
        rv.run(args).expect(0);
    }
    // The variables do reach the TLS setup: a command that sends a request cannot build its
    // client without roots, so the passes above prove the offline ones never tried.
    let online = rv.run(&["check", "--online"]).expect(3);
    assert!(
        online.stderr.contains("failed to set up the HTTP client"),
        "{}",
        online.stderr
    );
}

#[test]
fn issue13_offline_commands_never_read_tls_roots_or_start_a_thread() {
    if !strace_works() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "strace is missing under CI=true: scripts/install-test-deps installs it"
        );
        eprintln!("skipped: strace is not installed (apt-get install strace)");
        return;
    }
    let (gh, pkg) = adopted();
    let roots = tempfile::tempdir().unwrap();
    let file = roots.path().join("roots.pem");
    std::fs::write(&file, "").unwrap();
    let dir = roots.path().join("certs");
    std::fs::create_dir(&dir).unwrap();
    let rv = with_roots(Revendor::new(pkg.path(), &gh), &file, &dir);
    let marker = roots.path().to_string_lossy().into_owned();
    for args in OFFLINE {
        let trace = traced(&rv, args, 0);
        let touched: Vec<&str> = trace
            .lines()
            .filter(|l| l.contains(&marker) || l.contains("/etc/ssl"))
            .collect();
        assert!(touched.is_empty(), "{args:?} read TLS roots: {touched:#?}");
        let threads: Vec<&str> = trace
            .lines()
            .filter(|l| l.contains("CLONE_THREAD"))
            .collect();
        assert!(
            threads.is_empty(),
            "{args:?} started a thread: {threads:#?}"
        );
    }
    // The same trace of a command that sends a request shows both, so the check above can fail.
    let online = traced(&rv, &["check", "--online"], 3);
    assert!(online.contains(&marker), "{online}");
    assert!(online.contains("CLONE_THREAD"), "{online}");
}

/// Whether strace is installed and may trace here (ptrace can be forbidden in a container).
fn strace_works() -> bool {
    Command::new("strace")
        .args(["-f", "-qq", "-o", "/dev/null", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The file and thread system calls of `revendor args`, which must exit `code`.
fn traced(rv: &Revendor, args: &[&str], code: i32) -> String {
    let out = tempfile::NamedTempFile::new().unwrap();
    let run = rv.command(args);
    let mut cmd = Command::new("strace");
    cmd.args([
        "-f",
        "-qq",
        "-s",
        "256",
        "-e",
        "trace=%file,clone,clone3",
        "-o",
    ])
    .arg(out.path())
    .arg(run.get_program())
    .args(run.get_args())
    .stdin(Stdio::null());
    if let Some(dir) = run.get_current_dir() {
        cmd.current_dir(dir);
    }
    for (key, value) in run.get_envs() {
        match value {
            Some(value) => cmd.env(key, value),
            None => cmd.env_remove(key),
        };
    }
    let status = cmd.output().expect("run strace");
    assert_eq!(
        status.status.code(),
        Some(code),
        "{args:?} under strace: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    std::fs::read_to_string(out.path()).unwrap()
}
