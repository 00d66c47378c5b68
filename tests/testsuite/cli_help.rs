//! Every `--help` of the command line, pinned. Scripts depend on these
//! commands and flags (DESIGN.md): a change here must be deliberate and show
//! up in review. `SNAPSHOTS=overwrite cargo test --test testsuite -- cli_help` rewrites the
//! snapshots; then read the diff.

// Tests read their own switch (SNAPSHOTS); clippy.toml's bans are for the tool.
use std::path::Path;
use std::process::Command;

const COMMANDS: &[&[&str]] = &[
    &[],
    &["update"],
    &["render"],
    &["check"],
    &["patch"],
    &["patch", "refresh"],
    &["image"],
    &["image", "build"],
    &["image", "pin"],
    &["image", "pin-base"],
    &["pr"],
    &["completions"],
    &["man"],
];

#[test]
fn every_help_matches_its_snapshot() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/help");
    let overwrite = std::env::var_os("SNAPSHOTS").is_some_and(|v| v == "overwrite");
    let mut mismatches = Vec::new();
    for args in COMMANDS {
        let out = Command::new(env!("CARGO_BIN_EXE_revendor"))
            .args(*args)
            .arg("--help")
            .env("NO_COLOR", "1")
            .output()
            .expect("run revendor --help");
        assert!(
            out.status.success(),
            "{args:?} --help exited {:?}",
            out.status
        );
        let name = if args.is_empty() {
            "revendor".to_string()
        } else {
            format!("revendor-{}", args.join("-"))
        };
        let path = dir.join(format!("{name}.txt"));
        if overwrite {
            std::fs::write(&path, &out.stdout).expect("write snapshot");
            continue;
        }
        let expected = std::fs::read(&path).unwrap_or_default();
        if expected != out.stdout {
            mismatches.push(format!("{name}:\n{}", String::from_utf8_lossy(&out.stdout)));
        }
    }
    assert!(
        mismatches.is_empty(),
        "help changed (SNAPSHOTS=overwrite to accept):\n{}",
        mismatches.join("\n")
    );
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_revendor"))
            .args(args)
            .output()
            .expect("run revendor")
    };
    assert_eq!(run(&["--help"]).status.code(), Some(0));
    assert_eq!(run(&["--version"]).status.code(), Some(0));
    assert_eq!(run(&["no-such-command"]).status.code(), Some(2));
    assert_eq!(run(&["update", "--no-such-flag"]).status.code(), Some(2));
    assert_eq!(run(&["--format", "yaml", "check"]).status.code(), Some(2));
    assert_eq!(run(&["-q", "-v", "check"]).status.code(), Some(2));
    assert_eq!(
        run(&["--color", "sometimes", "check"]).status.code(),
        Some(2)
    );
}

/// `completions` and `man` need no package (issue 22): they answer in an
/// empty directory, from the command line the binary parses.
#[test]
fn completions_and_the_man_page_come_from_the_binary_anywhere() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_revendor"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let bash = run(&["completions", "bash"]);
    assert!(bash.contains("complete -F _revendor"), "{bash}");
    assert!(bash.contains("pin-base"), "{bash}");
    let zsh = run(&["completions", "zsh"]);
    assert!(zsh.starts_with("#compdef revendor"), "{zsh}");
    let man = run(&["man"]);
    assert!(man.contains(".TH revendor 1"), "{man}");
    assert!(man.contains("update"), "{man}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
