//! `revendor check --all [ROOT]` through the real binary, over a tree of packages adopted from
//! the GitHub stand-in: one clean, one drifted, one with a broken vendor.toml, in the three
//! formats, with the job matrix written to `$GITHUB_OUTPUT`; exit codes from the worst package.

use crate::support;

use serde_json::{Value, json};
use support::{GitHub, Revendor, TempPackage};

const REPO: &str = "example/app";
const TEMPLATE: &str = "templates/app.yml";

const MANIFEST: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: app
data:
  key: upstream
";

const VENDOR_TOML: &str = r#"[upstream]
github = "example/app"
version = "v1.0.0"

[[vendor]]
from = "deploy/app.yml"
to = "templates/app.yml"
"#;

/// The tree: `packages/clean` and `packages/drift` adopted at v1.0.0, `packages/drift`'s
/// template then edited by hand, and `packages/broken` whose vendor.toml has an unknown key
/// on line 4. A vendor.toml under `node_modules` and a hidden directory is no package.
fn tree(gh: &GitHub) -> TempPackage {
    gh.repo(REPO)
        .file_at("v1.0.0", "deploy/app.yml", MANIFEST)
        .release("v1.0.0", |r| r);
    let tree = TempPackage::new();
    for name in ["clean", "drift"] {
        let dir = format!("packages/{name}");
        tree.write(&format!("{dir}/vendor.toml"), VENDOR_TOML);
        Revendor::new(&tree.join(&dir), gh)
            .run(&["update", "--to", "v1.0.0"])
            .expect(0);
    }
    let drift = format!("packages/drift/{TEMPLATE}");
    tree.write(
        &drift,
        tree.read_string(&drift)
            .replace("key: upstream", "key: edited"),
    );
    tree.write(
        "packages/broken/vendor.toml",
        VENDOR_TOML.replace(
            "version = \"v1.0.0\"\n",
            "version = \"v1.0.0\"\nbogus = 1\n",
        ),
    );
    tree.write("node_modules/x/vendor.toml", VENDOR_TOML);
    tree.write(".cache/y/vendor.toml", VENDOR_TOML);
    tree
}

fn all(gh: &GitHub, tree: &TempPackage) -> Revendor {
    Revendor::new(tree.path(), gh)
}

#[test]
fn human_reports_every_package_and_the_worst_exit_code() {
    let gh = GitHub::start();
    let tree = tree(&gh);
    let run = all(&gh, &tree).run(&["check", "--all"]).expect(2);
    let out = &run.stdout;
    let sections: Vec<&str> = out.lines().filter(|l| l.starts_with("== ")).collect();
    assert_eq!(
        sections,
        [
            "== packages/broken ==",
            "== packages/clean ==",
            "== packages/drift =="
        ],
        "{out}"
    );
    assert!(
        out.contains("packages/broken/vendor.toml:4: unknown key `bogus`"),
        "{out}"
    );
    assert!(
        out.contains("== packages/clean ==\npackages/clean: clean, no findings\n"),
        "{out}"
    );
    assert!(out.contains("render-drift\n  templates/app.yml:"), "{out}");
    assert!(
        out.ends_with("3 packages: 1 clean, 1 with errors, 1 failed; 1 error, 0 warnings\n"),
        "{out}"
    );

    // ROOT as an argument, the broken package gone: the drift decides (1).
    std::fs::remove_dir_all(tree.join("packages/broken")).unwrap();
    let root = tree.join("packages");
    let root = root.to_str().unwrap();
    let run = all(&gh, &tree).run(&["check", "--all", root]).expect(1);
    assert!(run.stdout.contains("== drift =="), "{}", run.stdout);
    // The hand edit reverted: clean.
    let drift = format!("packages/drift/{TEMPLATE}");
    tree.write(
        &drift,
        tree.read_string(&drift)
            .replace("key: edited", "key: upstream"),
    );
    all(&gh, &tree).run(&["check", "--all", root]).expect(0);

    // A package that cannot be read is exit 3 (here: a killed run's staging directory whose
    // plan is unreadable), and the others are still reported.
    std::fs::create_dir_all(tree.join("packages/clean/.revendor-txn/plan")).unwrap();
    let run = all(&gh, &tree).run(&["check", "--all", root]).expect(3);
    assert!(
        run.stdout.contains("== clean ==\nerror: failed to read"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("== drift ==\ndrift: clean, no findings"),
        "{}",
        run.stdout
    );
}

#[test]
fn json_holds_every_package_with_its_findings_counts_and_error() {
    let gh = GitHub::start();
    let tree = tree(&gh);
    let run = all(&gh, &tree)
        .run(&["--format", "json", "check", "--all"])
        .expect(2);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["counts"], json!({"error": 1, "warning": 0, "info": 0}));
    assert_eq!(doc["failed"], 1);
    let packages = doc["packages"].as_array().unwrap();
    let names: Vec<&str> = packages
        .iter()
        .map(|p| p["package"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["packages/broken", "packages/clean", "packages/drift"]
    );
    let broken = &packages[0];
    assert_eq!(broken["error"]["exit_code"], 2);
    assert!(
        broken["error"]["message"]
            .as_str()
            .unwrap()
            .contains("packages/broken/vendor.toml:4: unknown key `bogus`"),
        "{broken}"
    );
    assert_eq!(broken["findings"], json!([]));
    assert_eq!(packages[1]["findings"], json!([]));
    assert!(packages[1].get("error").is_none());
    let drift = &packages[2]["findings"][0];
    assert_eq!(drift["id"], "render-drift");
    assert_eq!(drift["file"], TEMPLATE);
    assert_eq!(packages[2]["counts"]["error"], 1);
}

#[test]
fn github_annotates_summarizes_and_writes_the_job_matrix() {
    let gh = GitHub::start();
    let tree = tree(&gh);
    let output = tree.join("github-output");
    let summary = tree.join("step-summary");
    std::fs::write(&output, "earlier=1\n").unwrap();
    let workspace = tree.path().to_str().unwrap();
    let run = all(&gh, &tree)
        .env("GITHUB_OUTPUT", output.to_str().unwrap())
        .env("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())
        .env("GITHUB_WORKSPACE", workspace)
        .run(&["--format", "github", "check", "--all"])
        .expect(2);
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        "earlier=1\nmatrix={\"package\":[\"packages/broken\",\"packages/clean\",\"packages/drift\"]}\n"
    );
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", run.stdout);
    assert!(
        lines[0].starts_with(
            "::error file=packages/broken/vendor.toml,line=4,title=revendor check packages/broken::"
        ),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("::error file=packages/drift/templates/app.yml,line="),
        "{}",
        lines[1]
    );
    let text = std::fs::read_to_string(&summary).unwrap();
    assert_eq!(text.matches("| package |").count(), 1, "{text}");
    assert!(
        text.contains("| `packages/clean` | | | | clean | |"),
        "{text}"
    );
    assert!(
        text.contains(
            "| `packages/drift` | error | `render-drift` | `packages/drift/templates/app.yml:"
        ),
        "{text}"
    );

    // From a subdirectory of the workspace, paths stay relative to the workspace root.
    std::fs::write(&output, "").unwrap();
    Revendor::new(&tree.join("packages"), &gh)
        .env("GITHUB_OUTPUT", output.to_str().unwrap())
        .env("GITHUB_WORKSPACE", workspace)
        .run(&["--format", "github", "check", "--all"])
        .expect(2);
    assert!(
        std::fs::read_to_string(&output)
            .unwrap()
            .starts_with("matrix={\"package\":[\"packages/broken\","),
    );
}

#[test]
fn a_tree_without_packages_and_contradicting_flags_are_usage_errors() {
    let gh = GitHub::start();
    let empty = TempPackage::new();
    empty.write("docs/readme.md", "no package here");
    let run = all(&gh, &empty).run(&["check", "--all"]).expect(2);
    assert!(
        run.stderr
            .contains("no package (a directory holding vendor.toml)"),
        "{}",
        run.stderr
    );
    let run = all(&gh, &empty)
        .run(&["--offline", "check", "--all", "--online"])
        .expect(2);
    assert!(run.stderr.contains("contradict"), "{}", run.stderr);
    // ROOT without --all is refused by the parser.
    all(&gh, &empty).run(&["check", "somewhere"]).expect(2);
}

/// Issue 22: a repository's sample packages (this one's `examples/`) are read, never adopted, so
/// `.revendor.toml`'s `[all] exclude` leaves them out of `check --all`; a bad glob is an error
/// at its line.
#[test]
fn revendor_toml_all_exclude_leaves_packages_out_of_check_all() {
    let gh = GitHub::start();
    let tree = tree(&gh);
    tree.write(".revendor.toml", "[all]\nexclude = [\"packages/b*\"]\n");
    let run = all(&gh, &tree).run(&["-v", "check", "--all"]).expect(1);
    assert!(!run.stdout.contains("packages/broken"), "{}", run.stdout);
    assert!(
        run.stdout.contains("== packages/drift =="),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .ends_with("2 packages: 1 clean, 1 with errors, 0 failed; 1 error, 0 warnings\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains("leaving out 1 packages"),
        "{}",
        run.stderr
    );

    tree.write(".revendor.toml", "[all]\nexclude = [\"packages/**\"]\n");
    let run = all(&gh, &tree).run(&["check", "--all"]).expect(2);
    assert!(
        run.stderr.contains("but the 3 that `[all] exclude`"),
        "{}",
        run.stderr
    );

    tree.write(
        ".revendor.toml",
        "[all]\nexclude = [\n  \"packages/[\",\n]\n",
    );
    let run = all(&gh, &tree).run(&["check", "--all"]).expect(2);
    assert!(run.stderr.contains(".revendor.toml:3:"), "{}", run.stderr);
}

/// Issue 22: the nightly asks the network once. One `--format github --online` run prints the
/// annotations and writes the summary, the JSON document (`--json-out`, the document `--format
/// json` prints) and the update matrix (`--matrix-out`): only a package whose newer release
/// applies and that nothing else blocks; the drifted and the broken package are no job.
#[test]
fn issue_22_one_online_run_writes_the_annotations_the_json_and_the_update_matrix() {
    let gh = GitHub::start();
    let tree = tree(&gh);
    gh.repo(REPO)
        .file_at("v1.1.0", "deploy/app.yml", MANIFEST)
        .release("v1.1.0", |r| r);
    let json_out = tree.join("out/check.json");
    let matrix_out = tree.join("out/matrix.json");
    let summary = tree.join("step-summary");
    std::fs::create_dir_all(tree.join("out")).unwrap();
    let run = all(&gh, &tree)
        .env("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())
        .env("GITHUB_WORKSPACE", tree.path().to_str().unwrap())
        .run(&[
            "--format",
            "github",
            "check",
            "--all",
            "--online",
            "--json-out",
            json_out.to_str().unwrap(),
            "--matrix-out",
            matrix_out.to_str().unwrap(),
        ])
        .expect(2);
    assert!(
        run.stdout.contains(
            "::error file=packages/clean/vendor.toml,line=3,title=upstream-newer::v1.1.0 is newer"
        ),
        "{}",
        run.stdout
    );
    assert!(
        std::fs::read_to_string(&summary)
            .unwrap()
            .contains("`upstream-newer`")
    );

    // The file holds what `--format json` prints for the same tree.
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_out).unwrap()).unwrap();
    let printed = all(&gh, &tree)
        .env("GITHUB_WORKSPACE", tree.path().to_str().unwrap())
        .run(&["--format", "json", "check", "--all", "--online"])
        .expect(2);
    assert_eq!(
        written,
        serde_json::from_str::<Value>(&printed.stdout).unwrap()
    );
    assert_eq!(
        written["packages"][1]["findings"][0]["id"],
        "upstream-newer"
    );

    let matrix: Value =
        serde_json::from_str(&std::fs::read_to_string(&matrix_out).unwrap()).unwrap();
    assert_eq!(
        matrix,
        json!([{"package": "packages/clean", "path": "packages/clean", "to": "v1.1.0", "upstream": null}])
    );

    // Without --all the flags are usage errors; a file that cannot be written is an I/O error.
    all(&gh, &tree)
        .run(&["check", "--json-out", json_out.to_str().unwrap()])
        .expect(2);
    let run = all(&gh, &tree)
        .run(&[
            "check",
            "--all",
            "--matrix-out",
            tree.join("no/such/dir/m.json").to_str().unwrap(),
        ])
        .expect(3);
    assert!(run.stderr.contains("no/such/dir/m.json"), "{}", run.stderr);
}

/// Issue 22: with `--online`, every package's `upstream-newer` carries the
/// structured dry run that `check` gives it, so the nightly reads one
/// document for all of them.
#[test]
fn online_json_gives_each_package_its_dry_run() {
    let gh = GitHub::start();
    let tree = tree(&gh);
    std::fs::remove_dir_all(tree.join("packages/broken")).unwrap();
    gh.repo(REPO)
        .file_at("v1.1.0", "deploy/app.yml", MANIFEST.replace("app", "app2"))
        .release("v1.1.0", |r| r);
    let run = all(&gh, &tree)
        .run(&["check", "--all", "--online", "--format", "json"])
        .expect(1);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    for package in doc["packages"].as_array().unwrap() {
        let newer: Vec<&Value> = package["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["id"] == "upstream-newer")
            .collect();
        assert_eq!(newer.len(), 1, "{package:#}");
        assert_eq!(
            newer[0]["dry_run"],
            json!({
                "upstream": null,
                "from": "v1.0.0",
                "to": "v1.1.0",
                "outcome": "applies",
                "reason": null,
                "patches": [],
                "command": "revendor update --to v1.1.0",
            }),
            "{package:#}"
        );
    }
}
