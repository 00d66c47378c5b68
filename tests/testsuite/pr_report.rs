//! `revendor pr --report` through the real binary against the GitHub stand-in: the one
//! tracking issue opened, left alone when nothing changed (no write at all), updated when a
//! row goes, closed when none is left and reopened when one comes back; the check run in
//! process agreeing with the `--findings` document; failures of GitHub and of the input;
//! hostile text kept in its cell.

use crate::support;

use serde_json::{Value, json};
use support::github::Issue;
use support::{GitHub, Revendor, Run, TempPackage};

const PLATFORM: &str = "example/platform";
const TOKEN: &str = "ghs_report_token_1234";
const MARKER: &str = "<!-- revendor:report -->";

/// An `upstream-newer` finding whose dry run ended `outcome`.
fn newer(outcome: &str) -> Value {
    let (patch, command) = match outcome {
        "conflict" => ("conflict", "revendor update --to v2.0.0 --keep-conflicts"),
        _ => ("exact", "revendor update --to v2.0.0"),
    };
    json!({
        "id": "upstream-newer", "severity": "error", "file": "vendor.toml", "line": 3,
        "message": "v2.0.0 is newer than the vendored v1.0.0", "fix": format!("run `{command}`"),
        "dry_run": {
            "upstream": null, "from": "v1.0.0", "to": "v2.0.0", "outcome": outcome, "reason": null,
            "patches": [{"patch": "ns", "target": "templates/app.yml", "outcome": patch, "result": patch}],
            "command": command,
        },
    })
}

/// A package of a `check --all --format json` document.
fn package(name: &str, findings: Vec<Value>) -> Value {
    json!({"package": name, "path": format!("packages/{name}"), "findings": findings,
           "counts": {"error": 0, "warning": 0, "info": 0}})
}

/// A package whose check failed with `message`.
fn failed(name: &str, message: &str) -> Value {
    let mut p = package(name, vec![]);
    p["error"] = json!({"message": message, "hint": "fix vendor.toml", "exit_code": 2});
    p
}

/// The stand-in with the platform repository, some open issues and pull requests that are
/// not the tracking issue (enough for the listing to take two pages), and the package tree.
fn setup() -> (GitHub, TempPackage, Revendor) {
    let gh = GitHub::start();
    gh.accept_token(TOKEN);
    let repo = gh.repo(PLATFORM);
    for i in 0..120 {
        repo.issue(&format!("other {i}"), "not ours", "open", &["revendor"]);
    }
    let tree = TempPackage::new();
    let rv = Revendor::new(tree.path(), &gh)
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_REPOSITORY", PLATFORM);
    (gh, tree, rv)
}

/// `pr --report --findings` over `packages`, in JSON, exit 0.
fn report(tree: &TempPackage, rv: &Revendor, packages: &[Value]) -> Value {
    tree.write("check.json", json!({"packages": packages}).to_string());
    let run = rv
        .run(&[
            "pr",
            "--report",
            "--findings",
            &findings(tree),
            "--format",
            "json",
        ])
        .expect(0);
    parse(&run)
}

/// The absolute path of the tree's `check.json` (a relative one is the working directory's).
fn findings(tree: &TempPackage) -> String {
    tree.join("check.json").display().to_string()
}

fn parse(run: &Run) -> Value {
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", run.stdout, run.stderr))
}

/// The tracking issues: those whose body starts with the marker.
fn tracking(gh: &GitHub) -> Vec<Issue> {
    gh.issues(PLATFORM)
        .into_iter()
        .filter(|i| i.body.starts_with(MARKER))
        .collect()
}

/// The writes (`POST`, `PATCH`) the stand-in received since the last clear.
fn writes(gh: &GitHub) -> Vec<String> {
    gh.requests()
        .matching("/")
        .iter()
        .filter(|r| r.method == "POST" || r.method == "PATCH")
        .map(|r| format!("{} {}", r.method, r.target))
        .collect()
}

#[test]
fn one_issue_is_opened_then_left_alone_updated_closed_and_reopened() {
    let (gh, tree, rv) = setup();
    gh.repo(PLATFORM)
        .issue("old report", MARKER, "closed", &["other"]);
    let all = [
        package("clean", vec![]),
        package("newer", vec![newer("applies")]),
        package("conflict", vec![newer("conflict")]),
        failed(
            "broken",
            "packages/broken/vendor.toml:4: unknown key `bogus`",
        ),
    ];
    let doc = report(&tree, &rv, &all);
    assert_eq!(doc["action"], "opened", "{doc:#}");
    let rows: Vec<&str> = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["package"].as_str().unwrap())
        .collect();
    assert_eq!(rows, ["conflict", "broken"]);
    assert_eq!(
        doc["rows"][0],
        json!({
            "package": "conflict",
            "reason": "v2.0.0: ns on templates/app.yml would conflict; resolve the conflict, then run revendor update --continue",
            "findings": ["upstream-newer"],
            "command": "revendor -C packages/conflict update --to v2.0.0 --keep-conflicts",
        })
    );
    let issues = tracking(&gh);
    let open: Vec<&Issue> = issues.iter().filter(|i| i.state == "open").collect();
    assert_eq!(open.len(), 1, "{issues:#?}");
    let issue = open[0].clone();
    assert_eq!(issue.title, "revendor: packages that need a person");
    assert_eq!(issue.labels, ["revendor"]);
    assert_eq!(
        doc["url"],
        format!("{}/{PLATFORM}/issues/{}", gh.server_url(), issue.number)
    );
    assert!(issue.body.contains("| `packages/conflict`") || issue.body.contains("| `conflict`"));
    assert!(!issue.body.contains("`newer`"), "{}", issue.body);

    // The same input again: found on the listing's second page, nothing written.
    gh.clear_requests();
    let doc = report(&tree, &rv, &all);
    assert_eq!(doc["action"], "left-alone");
    assert_eq!(writes(&gh), Vec::<String>::new());
    assert!(
        gh.requests().targets().iter().any(|t| t.contains("page=2")),
        "{:#?}",
        gh.requests().targets()
    );

    // A row goes: the issue is edited in place.
    gh.clear_requests();
    let doc = report(&tree, &rv, &all[..3]);
    assert_eq!(doc["action"], "updated");
    assert_eq!(
        writes(&gh),
        [format!("PATCH /repos/{PLATFORM}/issues/{}", issue.number)]
    );
    let now = &tracking(&gh)
        .into_iter()
        .find(|i| i.number == issue.number)
        .unwrap();
    assert!(!now.body.contains("broken"), "{}", now.body);

    // None left: closed, saying so; again: nothing written.
    let doc = report(&tree, &rv, &all[..2]);
    assert_eq!(doc["action"], "closed");
    assert_eq!(doc["rows"], json!([]));
    let closed = tracking(&gh)
        .into_iter()
        .find(|i| i.number == issue.number)
        .unwrap();
    assert_eq!(closed.state, "closed");
    assert!(
        closed.body.contains("Nothing needs a person"),
        "{}",
        closed.body
    );
    gh.clear_requests();
    let doc = report(&tree, &rv, &all[..2]);
    assert_eq!(
        (&doc["action"], &doc["url"]),
        (&json!("left-alone"), &Value::Null)
    );
    assert_eq!(writes(&gh), Vec::<String>::new());

    // A package needs a person again: the same issue reopens.
    let doc = report(&tree, &rv, &all);
    assert_eq!(doc["action"], "reopened");
    let again = tracking(&gh)
        .into_iter()
        .find(|i| i.number == issue.number)
        .unwrap();
    assert_eq!((again.state.as_str(), &again.body), ("open", &issue.body));
    assert_eq!(
        tracking(&gh).iter().filter(|i| i.state == "open").count(),
        1
    );
}

#[test]
fn report_title_and_labels_come_from_the_repository_config() {
    let (gh, tree, rv) = setup();
    tree.write(
        ".revendor.toml",
        "[report]\ntitle = \"Vendored packages to look at\"\nlabels = [\"area/deps\", \"bot\"]\n",
    );
    gh.repo(PLATFORM)
        .issue("not it", MARKER, "open", &["area/deps"]);
    let doc = report(&tree, &rv, &[package("c", vec![newer("conflict")])]);
    assert_eq!(doc["action"], "opened", "{doc:#}");
    let ours: Vec<Issue> = tracking(&gh)
        .into_iter()
        .filter(|i| i.labels.len() == 2)
        .collect();
    assert_eq!(ours.len(), 1);
    assert_eq!(ours[0].title, "Vendored packages to look at");
    assert_eq!(ours[0].labels, ["area/deps", "bot"]);
    let listed = gh
        .requests()
        .matching(&format!("/repos/{PLATFORM}/issues?"))[0]
        .target
        .clone();
    assert!(listed.contains("labels=area%2Fdeps%2Cbot"), "{listed}");
}

#[test]
fn hostile_package_text_stays_in_its_cell() {
    let (gh, tree, rv) = setup();
    let hostile = "x|y`z\n| forged | row |\n<!-- revendor:report --> @org/team [a](http://e)";
    report(&tree, &rv, &[failed("p|q`\nr", hostile)]);
    let issue = tracking(&gh).pop().unwrap();
    assert_eq!(issue.body.matches(MARKER).count(), 1, "{}", issue.body);
    assert!(!issue.body.contains("@org"), "{}", issue.body);
    let table: Vec<&str> = issue.body.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(table.len(), 3, "{}", issue.body);
    // Every cell boundary is an unescaped `|`: four cells.
    let row = table[2];
    let cells = row.split(" | ").count();
    assert_eq!(cells, 4, "{row}");
}

#[test]
fn dry_run_prints_the_body_and_writes_nothing_even_without_a_token() {
    let (gh, tree, _) = setup();
    tree.write(
        "check.json",
        json!({"packages": [package("c", vec![newer("conflict")])]}).to_string(),
    );
    let rv = Revendor::new(tree.path(), &gh);
    gh.clear_requests();
    let run = rv
        .run(&[
            "pr",
            "--report",
            "--findings",
            &findings(&tree),
            "--dry-run",
        ])
        .expect(0);
    assert!(
        run.stdout.starts_with(&format!(
            "revendor: packages that need a person\n\n{MARKER}\n"
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("`revendor -C packages/c update --to v2.0.0 --keep-conflicts`")
    );
    assert_eq!(gh.requests().count("/"), 0);
    // Without --dry-run there must be a token.
    let run = rv
        .run(&["pr", "--report", "--findings", &findings(&tree)])
        .expect(2);
    assert!(run.stderr.contains("there is no token"), "{}", run.stderr);
}

#[test]
fn github_refusals_exit_3_in_one_line_and_never_print_the_token() {
    let (gh, tree, rv) = setup();
    tree.write(
        "check.json",
        json!({"packages": [failed("b", "broken")]}).to_string(),
    );
    let file = findings(&tree);
    let args = ["pr", "--report", "--findings", &file];
    let bad = rv.env("GITHUB_TOKEN", "ghs_wrong_token_5678");
    let run = bad.run(&args).expect(3);
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("error:"))
        .collect();
    assert_eq!(errors.len(), 1, "{}", run.stderr);
    assert!(
        errors[0].starts_with(&format!(
            "error: failed to list the open issues of {PLATFORM}"
        )),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("401"), "{}", run.stderr);
    assert!(!run.all().contains("ghs_wrong_token_5678"), "{}", run.all());
    assert!(tracking(&gh).is_empty());

    let (gh, tree, rv) = setup();
    tree.write(
        "check.json",
        json!({"packages": [failed("b", "broken")]}).to_string(),
    );
    gh.rate_limit(true);
    let run = rv.run(&args).expect(3);
    assert!(run.stderr.contains("rate limit exceeded"), "{}", run.stderr);
    gh.rate_limit(false);
    let run = rv
        .env("GITHUB_REPOSITORY", "example/missing")
        .run(&args)
        .expect(3);
    assert!(run.stderr.contains("404"), "{}", run.stderr);
    assert!(!run.all().contains(TOKEN), "{}", run.all());
}

#[test]
fn a_findings_file_that_is_not_the_document_is_exit_2_naming_file_and_line() {
    let (gh, tree, rv) = setup();
    tree.write("check.json", "{\"packages\": [\n  {\"findings\": []}\n]}\n");
    let run = rv
        .run(&["pr", "--report", "--findings", &findings(&tree)])
        .expect(2);
    assert!(
        run.stderr.contains("check.json:2") && run.stderr.contains("missing field `package`"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("check --all --online --format json"),
        "{}",
        run.stderr
    );
    assert!(tracking(&gh).is_empty());
}

/// Without `--findings` the same `check --all --online` runs in process: its rows are the
/// rows of the document the nightly would pass on.
#[test]
fn without_findings_the_check_runs_here_and_agrees_with_the_document() {
    const MANIFEST: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n";
    const VENDOR_TOML: &str = "[upstream]\ngithub = \"example/app\"\nversion = \"v1.0.0\"\n\n\
                               [[vendor]]\nfrom = \"deploy/app.yml\"\nto = \"templates/app.yml\"\n";
    let (gh, tree, rv) = setup();
    gh.repo("example/app")
        .file_at("v1.0.0", "deploy/app.yml", MANIFEST)
        .release("v1.0.0", |r| r);
    for name in ["clean", "drift"] {
        let dir = format!("packages/{name}");
        tree.write(&format!("{dir}/vendor.toml"), VENDOR_TOML);
        Revendor::new(&tree.join(&dir), &gh)
            .run(&["update", "--to", "v1.0.0"])
            .expect(0);
    }
    tree.write("packages/drift/templates/app.yml", "edited: by hand\n");
    tree.write(
        "packages/broken/vendor.toml",
        VENDOR_TOML.replace(
            "version = \"v1.0.0\"\n",
            "version = \"v1.0.0\"\nbogus = 1\n",
        ),
    );
    gh.repo("example/app")
        .file_at("v1.1.0", "deploy/app.yml", MANIFEST.replace("app", "app2"))
        .release("v1.1.0", |r| r);

    let here = parse(
        &rv.run(&["pr", "--report", "--dry-run", "--format", "json"])
            .expect(0),
    );
    let rows: Vec<(&str, &Value)> = here["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["package"].as_str().unwrap(), &r["findings"]))
        .collect();
    assert_eq!(
        rows,
        [
            ("packages/broken", &json!([])),
            ("packages/drift", &json!(["render-drift"]))
        ],
        "{here:#}"
    );
    assert!(
        here["rows"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("unknown key `bogus`"),
        "{here:#}"
    );

    let check = rv
        .run(&["check", "--all", "--online", "--format", "json"])
        .expect(2);
    tree.write("check.json", &check.stdout);
    let read = parse(
        &rv.run(&[
            "pr",
            "--report",
            "--findings",
            &findings(&tree),
            "--dry-run",
            "--format",
            "json",
        ])
        .expect(0),
    );
    assert_eq!(read["rows"], here["rows"]);
    assert_eq!(read["body"], here["body"]);
    assert_eq!(writes(&gh), Vec::<String>::new());
}
