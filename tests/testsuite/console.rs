//! What the tool prints, pinned: `-q`, `-v`, colour, the suggestions of issue 11 (`--to
//! 4.3.0` names `v4.3.0`, an unknown tag names the nearest releases, a misspelt key names the
//! key), and the JSON shapes `render` and `update` share (docs/json.md). Each snapshot under tests/snapshots/console/ holds the command lines, exit codes and
//! both streams, with the stand-in's ports and the temporary directories replaced by names.
//! `SNAPSHOTS=overwrite cargo test --test testsuite -- console` rewrites them; then read the diff.

// Tests read their own switches (SNAPSHOTS); clippy.toml's bans are for the tool.
use crate::support;

use snapbox::{assert_data_eq, file};
use support::{GitHub, Revendor, TempPackage, app};

/// Runs each command line and writes down what it printed, with the variable parts named.
struct Transcript<'a> {
    rv: &'a Revendor,
    replace: Vec<(String, &'static str)>,
    text: String,
}

impl<'a> Transcript<'a> {
    fn new(rv: &'a Revendor, gh: &GitHub, pkg: &TempPackage) -> Transcript<'a> {
        Transcript {
            rv,
            replace: vec![
                (gh.api_url(), "[API]"),
                (gh.server_url(), "[SERVER]"),
                (gh.raw_url().replace("http://", ""), "[RAW]"),
                (pkg.path().display().to_string(), "[ROOT]"),
                (rv.cache().display().to_string(), "[CACHE]"),
            ],
            text: String::new(),
        }
    }

    fn run(&mut self, args: &[&str]) -> &mut Self {
        let out = self.rv.run(args);
        let mut entry = format!(
            "$ revendor {}\nexit {}\n--- stdout\n{}--- stderr\n{}\n",
            args.join(" "),
            out.code,
            out.stdout,
            out.stderr
        );
        for (from, to) in &self.replace {
            entry = entry.replace(from.as_str(), to);
        }
        self.text.push_str(&entry);
        self
    }
}

#[test]
fn quiet_prints_errors_and_data_only() {
    let gh = GitHub::start();
    app::serve(&gh, &["v1.0.0", "v1.1.0", "v2.0.0"]);
    let pkg = app::package("v1.0.0");
    let rv = Revendor::new(pkg.path(), &gh);
    let mut t = Transcript::new(&rv, &gh, &pkg);
    // Outside `track`: a warning and status lines without -q, neither with it.
    t.run(&["update", "--to", "v2.0.0"])
        .run(&["-q", "update", "--to", "v2.0.0", "--dry-run"])
        .run(&["-q", "render"])
        .run(&["-q", "update", "--to", "v3"]);
    assert_data_eq!(t.text.as_str(), file!["../snapshots/console/quiet.txt"]);
}

#[test]
fn verbose_names_each_file_patch_and_request() {
    let gh = GitHub::start();
    app::serve(&gh, &["v1.0.0", "v1.1.0"]);
    let pkg = app::package("v1.0.0");
    // Credentials in a URL are redacted wherever a request is shown.
    let raw = gh.raw_url().replace("http://", "http://revendor:s3cret@");
    let rv = Revendor::new(pkg.path(), &gh).env("REVENDOR_RAW_URL", &raw);
    let mut t = Transcript::new(&rv, &gh, &pkg);
    // Adopt at v1.1.0; then again, answered 304 from the validators; then render offline.
    t.run(&["-v", "update"])
        .run(&["-v", "update"])
        .run(&["-v", "--offline", "render"]);
    assert!(!t.text.contains("s3cret"), "{}", t.text);
    assert_data_eq!(t.text.as_str(), file!["../snapshots/console/verbose.txt"]);
}

#[test]
fn a_tag_without_its_v_and_an_unknown_tag_are_answered_with_releases() {
    let gh = GitHub::start();
    app::serve(
        &gh,
        &["v1.0.0", "v1.2.0", "v1.2.1", "v1.3.0", "v1.10.0", "v2.0.0"],
    );
    let pkg = app::package("v1.0.0");
    let rv = Revendor::new(pkg.path(), &gh);
    let mut t = Transcript::new(&rv, &gh, &pkg);
    t.run(&["update", "--to", "1.2.1"])
        .run(&["update", "--to", "v1.2.7"])
        .run(&["update", "--to", "stable"]);
    assert_data_eq!(
        t.text.as_str(),
        file!["../snapshots/console/to-suggestions.txt"]
    );
}

#[test]
fn a_misspelt_key_is_answered_with_the_key() {
    let gh = GitHub::start();
    let pkg = app::package("v1.0.0");
    let text = app::vendor_toml("v1.0.0").replace("track =", "trak =");
    pkg.write("vendor.toml", text);
    let rv = Revendor::new(pkg.path(), &gh);
    let mut t = Transcript::new(&rv, &gh, &pkg);
    t.run(&["--offline", "render"]);
    pkg.write(
        "vendor.toml",
        app::vendor_toml("v1.0.0").replace("applies-to", "aplies-to"),
    );
    t.run(&["--offline", "render"]);
    assert_data_eq!(t.text.as_str(), file!["../snapshots/console/key-typo.txt"]);
}

#[test]
fn colour_follows_the_flag_then_no_color_then_clicolor_force() {
    let gh = GitHub::start();
    let pkg = app::package("v1.0.0");
    let rv = Revendor::new(pkg.path(), &gh);
    let red = "\x1b[1;31merror\x1b[0m: ";
    let painted = |extra: &[(&str, &str)], args: &[&str]| {
        let mut cmd = rv.command(args);
        for (k, v) in extra {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        String::from_utf8_lossy(&out.stderr).starts_with(red)
    };
    // No lock yet: `render` fails with a usage error, on stderr (a pipe here).
    let render = ["--offline", "render"];
    assert!(!painted(&[("NO_COLOR", "")], &render), "a pipe is plain");
    assert!(painted(
        &[("NO_COLOR", ""), ("CLICOLOR_FORCE", "1")],
        &render
    ));
    assert!(!painted(
        &[("NO_COLOR", ""), ("CLICOLOR_FORCE", "0")],
        &render
    ));
    assert!(!painted(
        &[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")],
        &render
    ));
    let always = ["--color", "always", "--offline", "render"];
    assert!(painted(&[("NO_COLOR", "1")], &always), "the flag wins");
    let never = ["--color", "never", "--offline", "render"];
    assert!(!painted(
        &[("NO_COLOR", ""), ("CLICOLOR_FORCE", "1")],
        &never
    ));
}

#[test]
fn render_and_update_json_share_their_shapes() {
    let gh = GitHub::start();
    app::serve(&gh, &["v1.0.0", "v1.1.0"]);
    let pkg = app::package("v1.0.0");
    let rv = Revendor::new(pkg.path(), &gh);
    let json = |args: &[&str]| -> serde_json::Value {
        let out = rv.run(args).expect(0);
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout))
    };
    let update = json(&["--format", "json", "update"]);
    pkg.remove("templates/app.yml");
    let render = json(&["--format", "json", "render"]);
    let patch = serde_json::json!({
        "patch": "namespace",
        "target": "templates/app.yml",
        "outcome": "exact",
        "result": "exact",
    });
    assert_eq!(update["patches"], serde_json::json!([patch]));
    assert_eq!(render["patches"], update["patches"]);
    assert_eq!(render["changed"], serde_json::json!(["templates/app.yml"]));
    assert_eq!(
        update["changed"],
        serde_json::json!([
            "templates/app.yml",
            "upstream/deploy/app.yml",
            "upstream/lock.toml",
            "vendor.toml"
        ])
    );
}

#[test]
fn findings_are_coloured_as_errors_are() {
    let gh = GitHub::start();
    app::serve(&gh, &["v1.0.0"]);
    let pkg = app::package("v1.0.0");
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update"]).expect(0);
    let drifted = pkg
        .read_string("templates/app.yml")
        .replace("paused: false", "paused: true");
    pkg.write("templates/app.yml", drifted);
    let out = rv
        .run(&["--offline", "--color", "always", "check"])
        .expect(1);
    assert!(
        out.stdout.contains(": \x1b[1;31merror\x1b[0m: "),
        "{:?}",
        out.stdout
    );
    let plain = rv.run(&["--offline", "check"]).expect(1);
    assert!(!plain.stdout.contains('\x1b') && plain.stdout.contains(": error: "));
}

/// Issue 17: a report that cannot be written is a failure (exit 3, said on stderr), and a
/// reader that closes the pipe early (`| head -c1`) ends the run quietly with 0, as ripgrep
/// does.
#[test]
fn a_full_stdout_fails_and_a_closed_pipe_ends_quietly() {
    let gh = GitHub::start();
    app::serve(&gh, &["v1.0.0"]);
    let pkg = app::package("v1.0.0");
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update"]).expect(0);
    rv.run(&["check", "--offline", "--format", "json"])
        .expect(0);

    let full = rv
        .command(&["check", "--offline", "--format", "json"])
        .stdout(std::fs::File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&full.stderr);
    assert_eq!(full.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("error: failed to write to stdout"),
        "{stderr}"
    );

    // The reader is gone before the report is written: the write fails with a broken pipe.
    let mut child = rv
        .command(&["check", "--offline", "--format", "json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let closed = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&closed.stderr);
    assert_eq!(closed.status.code(), Some(0), "{stderr}");
    assert_eq!(stderr, "");

    // The same through a shell pipeline, as a script would write it.
    let line = rv.command(&["check", "--offline", "--format", "json"]);
    let args: Vec<String> = std::iter::once(line.get_program())
        .chain(line.get_args())
        .map(|a| format!("'{}'", a.to_string_lossy()))
        .collect();
    let script = format!(
        "{} | head -c1 >/dev/null; echo \"${{PIPESTATUS[0]}}\"",
        args.join(" ")
    );
    let mut shell = std::process::Command::new("bash");
    shell.arg("-c").arg(&script);
    for (k, v) in line.get_envs() {
        match v {
            Some(v) => shell.env(k, v),
            None => shell.env_remove(k),
        };
    }
    let out = shell.output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "0");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}
