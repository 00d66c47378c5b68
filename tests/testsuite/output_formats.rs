//! Issue 22's output contract, with the real binary: every `--format json`
//! document leads with `"schema": 1`, and so does the lock; a command that
//! fails prints one error document on stdout (and the human error on
//! stderr); a format a command has no use for is refused.

use serde_json::{Value, json};

use crate::support;
use support::daemonset::{FILE, LOCK, Manifest, PATCH, PINNED, REPO, TEMPLATE, VENDOR, VendorToml};
use support::{GitHub, Revendor, Run, TempPackage};

const MANIFEST: Manifest = Manifest::bare().memory_limit();

/// The upstream at v1.0.0 and the package adopted at it.
fn adopted() -> (GitHub, TempPackage, Revendor) {
    let gh = GitHub::start();
    gh.repo(REPO)
        .file_at("v1.0.0", FILE, MANIFEST.text())
        .release("v1.0.0", |r| r);
    let pkg = TempPackage::new();
    pkg.write(
        "vendor.toml",
        VendorToml::new().vendors(VENDOR).pin().text(),
    )
    .write(PATCH, MANIFEST.namespace_patch())
    .write(TEMPLATE, MANIFEST.rendered(PINNED));
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    (gh, pkg, rv)
}

/// The document on stdout, which must lead with `"schema": 1`.
fn document(run: &Run) -> Value {
    assert!(
        run.stdout.starts_with("{\n  \"schema\": 1,\n"),
        "no schema first:\n{}\n{}",
        run.stdout,
        run.stderr
    );
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}):\n{}", run.stdout))
}

#[test]
fn issue_22_every_json_document_and_the_lock_lead_with_schema_1() {
    let (_gh, pkg, rv) = adopted();
    let lock = pkg.read_string(LOCK);
    assert!(
        lock.starts_with("# Written by revendor: what was vendored and verified. Do not edit by hand.\nschema = 1\n\n[upstream]\n"),
        "{lock}"
    );
    for args in [
        &["--format", "json", "render"][..],
        &["--format", "json", "check"],
        &["--format", "json", "update", "--dry-run"],
        &["--format", "json", "patch", "refresh"],
        &["--format", "json", "check", "--all"],
    ] {
        let doc = document(&rv.run(args).expect(0));
        assert_eq!(doc["schema"], 1, "{args:?}");
    }
    let refreshed = document(&rv.run(&["--format", "json", "patch", "refresh"]).expect(0));
    assert_eq!(refreshed["changed"], json!([]));
}

/// A lock written before `schema` existed still reads, and is left alone by
/// a run that changes nothing in it.
#[test]
fn issue_22_a_lock_without_schema_reads_as_1_and_is_not_rewritten_for_it() {
    let (_gh, pkg, rv) = adopted();
    let older = pkg.read_string(LOCK).replace("schema = 1\n\n", "");
    pkg.write(LOCK, &older);
    rv.run(&["check"]).expect(0);
    rv.run(&["render"]).expect(0);
    rv.run(&["patch", "refresh"]).expect(0);
    assert_eq!(pkg.read_string(LOCK), older);
}

/// The error document of a failed run: the same object for every command.
fn error_of(run: &Run, code: i32) -> Value {
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    let doc = document(run);
    let error = &doc["error"];
    assert_eq!(error["exit_code"], code, "{doc:#}");
    for key in ["message", "hint", "exit_code", "kind", "file", "line"] {
        assert!(error.get(key).is_some(), "no {key}: {doc:#}");
    }
    let first = run.stderr.lines().next().unwrap();
    let message = error["message"].as_str().unwrap();
    assert!(
        message.starts_with(first.strip_prefix("error: ").unwrap()),
        "{message}\n{first}"
    );
    doc
}

#[test]
fn issue_22_a_failed_command_prints_one_error_document() {
    let (_gh, pkg, rv) = adopted();
    let toml = pkg.read_string("vendor.toml");
    pkg.write("vendor.toml", format!("bogus = 1\n{toml}"));
    for command in ["render", "update", "check"] {
        let run = rv.run(&["--format", "json", command]).expect(2);
        let doc = error_of(&run, 2);
        let error = &doc["error"];
        assert_eq!(
            (&error["kind"], &error["file"], &error["line"]),
            (&json!("configuration"), &json!("vendor.toml"), &json!(1)),
            "{command}: {doc:#}"
        );
        assert!(error["message"].as_str().unwrap().contains("bogus"));
        let keys: Vec<&str> = doc
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let expected: &[&str] = if command == "check" {
            // check's own keys stay, empty, beside the error.
            &["counts", "error", "findings", "package", "schema"]
        } else {
            &["error", "schema"]
        };
        assert_eq!(keys, expected, "{command}");
    }
    pkg.write("vendor.toml", &toml);

    // Exit 3: the upstream's API does not answer.
    let down = rv.env("GITHUB_API_URL", "http://127.0.0.1:9");
    let run = down.run(&["--format", "json", "update"]).expect(3);
    let doc = error_of(&run, 3);
    assert_eq!(doc["error"]["kind"], "failure");
    assert_eq!(doc["error"]["file"], Value::Null);
}

#[test]
fn issue_22_a_command_line_clap_refuses_is_an_error_document_too() {
    let (_gh, _pkg, rv) = adopted();
    let run = rv.run(&["--format", "json", "check", "--bogus"]).expect(2);
    let doc = document(&run);
    assert_eq!(doc["error"]["kind"], "usage");
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--bogus"),
        "{doc:#}"
    );
    assert!(run.stderr.contains("--bogus"), "{}", run.stderr);
}

#[test]
fn issue_22_github_format_is_refused_where_it_means_nothing() {
    let (_gh, pkg, rv) = adopted();
    let before = pkg.snapshot();
    for (args, name, takes) in [
        (
            &["--format", "github", "render"][..],
            "render",
            "`human` or `json`",
        ),
        (
            &["--format", "github", "update"],
            "update",
            "`human` or `json`",
        ),
        (&["--format", "github", "pr"], "pr", "`human` or `json`"),
        (
            &["--format", "github", "patch", "refresh"],
            "patch refresh",
            "`human` or `json`",
        ),
        (&["--format", "json", "man"], "man", "`human`"),
    ] {
        let run = rv.run(args).expect(2);
        assert_eq!(run.stdout, "", "{args:?}");
        let first = run.stderr.lines().next().unwrap();
        let format = args[1];
        assert_eq!(
            first,
            format!("error: `revendor {name}` does not take --format {format}: it takes {takes}"),
            "{args:?}"
        );
    }
    assert_eq!(pkg.snapshot(), before);
    rv.run(&["--format", "github", "check"]).expect(0);
}

/// GitHub shows 10 annotations of a kind per step: 25 packages that cannot
/// be checked are 10 `::error`s and one line counting the rest, and the step
/// summary lists all 25, a package named with `|` and a line break in one
/// row of its own.
#[test]
fn issue_22_annotations_are_capped_per_kind_and_the_summary_lists_the_rest() {
    let gh = GitHub::start();
    let root = TempPackage::new();
    for i in 0..24 {
        root.write(&format!("p{i:02}/vendor.toml"), "bogus = 1\n");
    }
    root.write("z|pipe\nline/vendor.toml", "bogus = 1\n");
    let summary = root.join("summary.md");
    let run = Revendor::new(root.path(), &gh)
        .env("GITHUB_STEP_SUMMARY", &summary.display().to_string())
        .env("GITHUB_WORKSPACE", &root.path().display().to_string())
        .run(&["--format", "github", "check", "--all"])
        .expect(2);
    assert_eq!(run.stdout.matches("::error ").count(), 10, "{}", run.stdout);
    assert!(
        run.stdout.ends_with(
            "and 15 more errors: see the step summary (GitHub shows 10 of each kind per step)\n"
        ),
        "{}",
        run.stdout
    );
    let md = std::fs::read_to_string(&summary).unwrap();
    let rows: Vec<&str> = md.lines().filter(|l| l.contains(" | error | ")).collect();
    assert_eq!(rows.len(), 25, "{md}");
    let odd = rows.last().unwrap();
    assert!(
        odd.starts_with("| `z\\|pipe\\u{a}line` | error | | `z\\|pipe\\u{a}line/vendor.toml"),
        "{odd}"
    );
    assert_eq!(
        odd.replace("\\|", "").matches('|').count(),
        7,
        "six cells: {odd}"
    );
}
