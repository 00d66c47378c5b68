//! Issue 20, item 7: a package with no lock whose target is another version than
//! vendor.toml's is adopted at `version` and written, then moved. A conflict in the move
//! leaves an adopted package (lock at `version`), handled as any conflict is; the summary
//! and the JSON say which happened. The real binary against the GitHub stand-in.

use crate::support;

use support::{GitHub, Revendor, TempPackage, app};

const OUT: &str = "templates/app.yml";
const LOCK: &str = "upstream/lock.toml";

/// example/app at v1.0.0 and at v1.1.0, whose namespace line is `v110_namespace`
/// (`default`: the patch carries; anything else: it conflicts); a package the way a
/// Makefile left it at v1.0.0, with no lock.
fn setup(v110_namespace: &str) -> (GitHub, TempPackage) {
    let gh = GitHub::start();
    app::serve(&gh, &["v1.0.0"]);
    let v110 = app::manifest("v1.1.0").replace(
        "namespace: default",
        &format!("namespace: {v110_namespace}"),
    );
    gh.repo(app::REPO)
        .file_at("v1.1.0", app::FILE, v110)
        .release("v1.1.0", |r| r);
    let pkg = app::package("v1.0.0");
    pkg.write(OUT, app::rendered("v1.0.0"));
    (gh, pkg)
}

#[test]
fn an_adoption_with_to_another_version_adopts_at_version_then_moves_issue_20() {
    let (gh, pkg) = setup("default");
    let rv = Revendor::new(pkg.path(), &gh);
    let out = rv.run(&["update", "--to", "v1.1.0"]).expect(0);
    assert!(
        out.stdout.starts_with(
            "adopted the package at v1.0.0 (no lock before), then moved to v1.1.0\n\
             upstream: v1.0.0 -> v1.1.0\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("created upstream/lock.toml\n")
            && out.stdout.contains("created upstream/deploy/app.yml\n")
            && out.stdout.contains("updated vendor.toml\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr
            .contains("Adopted the package at v1.0.0 (upstream/lock.toml written); now the move"),
        "{}",
        out.stderr
    );
    assert!(pkg.read_string(LOCK).contains("version = \"v1.1.0\""));
    assert!(
        pkg.read_string("vendor.toml")
            .contains("version = \"v1.1.0\"")
    );
    rv.run(&["check"]).expect(0);
}

#[test]
fn a_conflict_in_the_move_leaves_the_package_adopted_at_version_issue_20() {
    let (gh, pkg) = setup("other");
    let rv = Revendor::new(pkg.path(), &gh);
    let out = rv.run(&["update", "--to", "v1.1.0"]).expect(1);
    assert!(
        out.stdout.starts_with(
            "adopted the package at v1.0.0 (no lock before); the move to v1.1.0 conflicts: \
             1 conflicting hunk(s), below\nupstream: v1.0.0 -> v1.1.0\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("conflict in templates/app.yml")
            && out.stdout.contains("created upstream/lock.toml\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains(
            "1 conflicting hunk(s); the adoption is written, nothing of the move; \
             rerun with --keep-conflicts to write diff3 markers"
        ),
        "{}",
        out.stderr
    );
    // Adopted at v1.0.0: the lock is written, vendor.toml and the file are as they were.
    let lock = pkg.read_string(LOCK);
    assert!(
        lock.contains("version = \"v1.0.0\"") && !lock.contains("[pending]"),
        "{lock}"
    );
    assert_eq!(pkg.read_string("vendor.toml"), app::vendor_toml("v1.0.0"));
    assert_eq!(pkg.read_string(OUT), app::rendered("v1.0.0"));
    rv.run(&["check"]).expect(0);

    // The move's conflict is then any conflict: kept, resolved, continued.
    rv.run(&["update", "--to", "v1.1.0", "--keep-conflicts"])
        .expect(1);
    assert!(pkg.read_string(LOCK).contains("[pending]"));
    assert!(pkg.read_string(OUT).contains("<<<<<<< ours"));
    pkg.write(
        OUT,
        app::rendered("v1.1.0").replace("namespace: cozy-app", "namespace: cozy-other"),
    );
    rv.run(&["update", "--continue"]).expect(0);
    assert!(pkg.read_string(LOCK).contains("version = \"v1.1.0\""));
    assert!(
        pkg.read_string("patches/namespace.patch")
            .contains("+  namespace: cozy-other\n")
    );
}

#[test]
fn the_json_says_the_adoption_was_written_before_the_move_conflicted_issue_20() {
    let (gh, pkg) = setup("other");
    let out = Revendor::new(pkg.path(), &gh)
        .run(&[
            "--format",
            "json",
            "update",
            "--to",
            "v1.1.0",
            "--keep-conflicts",
        ])
        .expect(1);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect(&out.stdout);
    assert_eq!(json["adopted"], true, "{json}");
    assert_eq!(json["adoption"]["written"], true, "{json}");
    let changed = json["adoption"]["changed"].as_array().unwrap();
    assert!(changed.iter().any(|c| c == LOCK), "{json}");
    assert_eq!(json["upstreams"][0]["adopted"], true, "{json}");
    assert_eq!(
        (&json["from"], &json["to"]),
        (&"v1.0.0".into(), &"v1.1.0".into())
    );
    assert_eq!(json["conflicts"].as_array().unwrap().len(), 1, "{json}");
    // The markers of the move, on top of the written adoption.
    let lock = pkg.read_string(LOCK);
    assert!(
        lock.contains("version = \"v1.0.0\"") && lock.contains("[pending]"),
        "{lock}"
    );
}

#[test]
fn a_dry_run_says_both_steps_and_writes_nothing_issue_20() {
    for (namespace, said) in [
        ("default", ", then move to v1.1.0\n"),
        (
            "other",
            "; the move to v1.1.0 would conflict: 1 conflicting hunk(s), below\n",
        ),
    ] {
        let (gh, pkg) = setup(namespace);
        let before = pkg.snapshot();
        let out = Revendor::new(pkg.path(), &gh)
            .run(&["update", "--to", "v1.1.0", "--dry-run"])
            .expect(if namespace == "default" { 0 } else { 1 });
        let first = format!("would adopt the package at v1.0.0 (no lock before){said}");
        assert!(out.stdout.starts_with(&first), "{}", out.stdout);
        assert_eq!(pkg.snapshot(), before, "nothing is written");
    }
}

#[test]
fn an_adoption_at_version_is_one_step_as_before_issue_20() {
    let (gh, pkg) = setup("other");
    let out = Revendor::new(pkg.path(), &gh)
        .run(&["--format", "json", "update", "--to", "v1.0.0"])
        .expect(0);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect(&out.stdout);
    assert_eq!(json["adopted"], true, "{json}");
    assert!(json["adoption"].is_null(), "{json}");
    assert!(!out.stderr.contains("Adopted"), "{}", out.stderr);
}
