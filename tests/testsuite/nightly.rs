//! Issue 22: the nightly of a monorepo, end to end, as GitHub runs it.
//!
//! The jobs' `run:` steps are read from `.github/workflows/nightly.yml` and run with bash as a
//! runner runs them (`bash --noprofile --norc -eo pipefail`, `GITHUB_OUTPUT` and
//! `GITHUB_STEP_SUMMARY` files, `RUNNER_TEMP`), each job in a fresh clone of a real bare
//! `origin` over `file://`, against the GitHub stand-in: `check` once, then `update` for each
//! package of the matrix it outputs, then `report` on the `check` job's JSON (the artifact,
//! copied where the download step puts it). The monorepo holds three packages: one up to date,
//! one whose newer release applies, one whose newer release conflicts with its patch.

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use support::{GitHub, GitRepo, Revendor};
use yaml_rust2::YamlLoader;

/// The repository the nightly runs in, on the stand-in.
const PLATFORM: &str = "example/platform";
const TOKEN: &str = "ghp_nightlytoken0123456789";
const FILE: &str = "deploy/app.yml";
const TEMPLATE: &str = "templates/app.yml";

/// The three packages: (directory, upstream repository).
const SAME: (&str, &str) = ("packages/system/same", "example/same");
const NEWER: (&str, &str) = ("packages/system/newer", "example/newer");
const CONFLICT: (&str, &str) = ("packages/apps/conflict", "example/conflict");

fn manifest(image: &str, replicas: u32) -> String {
    format!(
        "kind: Deployment\nmetadata:\n  name: app\nspec:\n  replicas: {replicas}\n  image: {image}\n"
    )
}

fn vendor_toml(repo: &str) -> String {
    format!(
        "[upstream]\ngithub = \"{repo}\"\nversion = \"v1.0.0\"\ntrack = \">=1\"\n\n[[vendor]]\nfrom = \"{FILE}\"\nto = \"{TEMPLATE}\"\n"
    )
}

/// The platform repository, its bare origin, and the stand-in serving the upstreams.
struct Monorepo {
    gh: GitHub,
    origin: tempfile::TempDir,
}

/// What one job left: its exit code, its outputs, its summary and its log.
struct Job {
    code: i32,
    outputs: BTreeMap<String, String>,
    summary: String,
    log: String,
}

impl Monorepo {
    /// Every upstream at v1.0.0; `newer` and `conflict` also at v1.1.0, where `conflict`'s
    /// release changes the line its package's patch changes. The packages are adopted at
    /// v1.0.0 (`conflict` with a patch made from a hand edit) and pushed to origin's `main`
    /// with the workflow's script, as a repository using the nightly holds it.
    fn new() -> Monorepo {
        let gh = GitHub::start();
        for (_, repo) in [SAME, NEWER, CONFLICT] {
            gh.repo(repo)
                .file_at("v1.0.0", FILE, manifest("app:1.0", 1))
                .release("v1.0.0", |r| r);
        }
        gh.repo(NEWER.1)
            .file_at("v1.1.0", FILE, manifest("app:1.0", 2))
            .release("v1.1.0", |r| r);
        gh.repo(CONFLICT.1)
            .file_at("v1.1.0", FILE, manifest("app:1.1", 1))
            .release("v1.1.0", |r| r);
        gh.accept_token(TOKEN);
        let repo = GitRepo::new();
        let script = std::fs::read(source().join("scripts/triage-findings")).unwrap();
        repo.commit(
            "packages",
            [SAME, NEWER, CONFLICT]
                .iter()
                .map(|(dir, upstream)| {
                    (
                        format!("{dir}/vendor.toml"),
                        vendor_toml(upstream).into_bytes(),
                    )
                })
                .chain([("scripts/triage-findings".to_owned(), script)]),
        );
        make_executable(&repo.path().join("scripts/triage-findings"));
        for (dir, _) in [SAME, NEWER, CONFLICT] {
            Revendor::new(&repo.path().join(dir), &gh)
                .run(&["update", "--to", "v1.0.0"])
                .expect(0);
        }
        let package = repo.path().join(CONFLICT.0);
        let toml = std::fs::read_to_string(package.join("vendor.toml")).unwrap();
        std::fs::write(
            package.join("vendor.toml"),
            format!("{toml}\n[[patch]]\nname = \"mirror\"\nfile = \"patches/mirror.patch\"\napplies-to = \"vendor\"\n"),
        )
        .unwrap();
        let template = package.join(TEMPLATE);
        let text = std::fs::read_to_string(&template).unwrap();
        std::fs::write(
            &template,
            text.replace("image: app:1.0", "image: mirror/app:1.0"),
        )
        .unwrap();
        Revendor::new(&repo.path().join(CONFLICT.0), &gh)
            .run(&["render", "--adopt-edits"])
            .expect(0);
        let main = repo.commit("adopt at v1.0.0", Vec::<(&str, &str)>::new());
        gh.repo(PLATFORM).branch("main", &main);
        let origin = tempfile::tempdir().unwrap();
        git(
            origin.path(),
            &["init", "--quiet", "--bare", "--initial-branch=main"],
        );
        let url = format!("file://{}", origin.path().display());
        repo.git(&["push", "--quiet", &url, "main"]);
        Monorepo { gh, origin }
    }

    /// Runs every `run:` step of `job` in a fresh clone of origin's `main`, with the
    /// environment the workflow and the runner give it (`env`: the job's own, such as the
    /// matrix's), stopping at the first step that fails, as a runner does.
    fn run_job(&self, job: &str, runner_temp: &Path, env: &[(&str, &str)]) -> Job {
        let work = tempfile::tempdir().unwrap();
        let checkout = work.path().join("checkout");
        let url = format!("file://{}", self.origin.path().display());
        git(
            work.path(),
            &["clone", "--quiet", &url, checkout.to_str().unwrap()],
        );
        let output = work.path().join("github-output");
        let summary = work.path().join("step-summary");
        let cache = work.path().join("cache");
        let mut job_result = Job {
            code: 0,
            outputs: BTreeMap::new(),
            summary: String::new(),
            log: String::new(),
        };
        for script in steps(job) {
            std::fs::write(&output, "").unwrap();
            let mut cmd = Command::new("bash");
            cmd.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", &script])
                .current_dir(&checkout)
                .env("PATH", path_with_revendor())
                .env("ROOT", ".")
                .env("RUNNER_TEMP", runner_temp)
                .env("GITHUB_OUTPUT", &output)
                .env("GITHUB_STEP_SUMMARY", &summary)
                .env("GITHUB_WORKSPACE", &checkout)
                .env("GITHUB_REPOSITORY", PLATFORM)
                .env("GITHUB_TOKEN", TOKEN)
                .env("TOKEN_KIND", "app")
                .env("IMAGE_TAG", "nightly-0123abc")
                .env("REVENDOR_CACHE_DIR", &cache)
                .env("NO_COLOR", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_AUTHOR_NAME", "Nightly Bot")
                .env("GIT_AUTHOR_EMAIL", "bot@example.com")
                .env("GIT_COMMITTER_NAME", "Nightly Bot")
                .env("GIT_COMMITTER_EMAIL", "bot@example.com")
                .env_remove("GH_TOKEN");
            for (k, v) in self.gh.env() {
                cmd.env(k, v);
            }
            for (k, v) in env {
                cmd.env(k, v);
            }
            let out = cmd.output().unwrap();
            job_result
                .log
                .push_str(&String::from_utf8_lossy(&out.stdout));
            job_result
                .log
                .push_str(&String::from_utf8_lossy(&out.stderr));
            for line in std::fs::read_to_string(&output).unwrap().lines() {
                if let Some((key, value)) = line.split_once('=') {
                    job_result.outputs.insert(key.to_owned(), value.to_owned());
                }
            }
            job_result.code = out.status.code().unwrap_or(-1);
            if job_result.code != 0 {
                break;
            }
        }
        job_result.summary = std::fs::read_to_string(&summary).unwrap_or_default();
        job_result
    }

    /// One night: `check`, an `update` per package of its matrix, `report` on its JSON.
    /// Returns the three jobs' results (the updates in matrix order).
    fn night(&self) -> (Job, Vec<Job>, Job) {
        let check_temp = tempfile::tempdir().unwrap();
        let check = self.run_job("check", check_temp.path(), &[]);
        let updates = check
            .outputs
            .get("updates")
            .unwrap_or_else(|| panic!("no matrix from the check job:\n{}", check.log));
        let matrix: Vec<Value> = serde_json::from_str(updates).unwrap();
        let updates = matrix
            .iter()
            .map(|leg| {
                let temp = tempfile::tempdir().unwrap();
                let field = |k: &str| leg[k].as_str().unwrap_or_default().to_owned();
                let (path, to, upstream) = (field("path"), field("to"), field("upstream"));
                self.run_job(
                    "update",
                    temp.path(),
                    &[("PACKAGE", &path), ("TO", &to), ("UPSTREAM", &upstream)],
                )
            })
            .collect();
        // The artifact: what the check job uploaded, where the report job downloads it.
        let report_temp = tempfile::tempdir().unwrap();
        let artifact = report_temp.path().join("revendor-check");
        std::fs::create_dir_all(&artifact).unwrap();
        for file in ["check.json", "matrix.json"] {
            std::fs::copy(check_temp.path().join(file), artifact.join(file)).unwrap();
        }
        let report = self.run_job("report", report_temp.path(), &[]);
        (check, updates, report)
    }
}

/// The crate's own directory: where the workflow and its script are.
fn source() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `PATH` with the revendor under test first, as the install step leaves it.
fn path_with_revendor() -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_revendor")).parent().unwrap();
    let rest = std::env::var("PATH").unwrap_or_default();
    format!("{}:{rest}", bin.display())
}

/// The `run:` scripts of `job` in nightly.yml, in order (`uses:` steps are the runner's).
fn steps(job: &str) -> Vec<String> {
    let text = std::fs::read_to_string(source().join(".github/workflows/nightly.yml")).unwrap();
    let doc = &YamlLoader::load_from_str(&text).unwrap()[0];
    let steps = doc["jobs"][job]["steps"].as_vec().expect("the job's steps");
    let scripts: Vec<String> = steps
        .iter()
        .filter_map(|s| s["run"].as_str().map(str::to_owned))
        .collect();
    assert!(!scripts.is_empty(), "job {job} has no run step");
    assert!(
        !scripts.iter().any(|s| s.contains("${{")),
        "a run step of {job} has an expression the test cannot evaluate"
    );
    scripts
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The requests of a run that open or change a pull request or an issue.
fn writes(gh: &GitHub) -> Vec<String> {
    let requests = gh.requests();
    requests
        .matching(&format!("/repos/{PLATFORM}/"))
        .iter()
        .filter(|r| r.method == "POST" || r.method == "PATCH")
        .map(|r| format!("{} {}", r.method, r.target))
        .collect()
}

#[test]
fn issue_22_a_monorepo_nightly_opens_one_pull_request_and_one_tracking_issue_then_changes_nothing()
{
    let mono = Monorepo::new();
    let (check, updates, report) = mono.night();

    // check: one online run; the package whose release applies is the one job; the conflict
    // fails the run, at its vendor.toml line, with the command that resolves it.
    assert_eq!(check.code, 1, "{}", check.log);
    let matrix: Value = serde_json::from_str(&check.outputs["updates"]).unwrap();
    assert_eq!(
        matrix,
        serde_json::json!([{"package": NEWER.0, "path": NEWER.0, "to": "v1.1.0", "upstream": null}])
    );
    assert_eq!(check.outputs["attention"], "1", "{}", check.log);
    assert!(
        check.log.contains(&format!(
            "::error file={}/vendor.toml,line=3,title=conflict in {}::v1.1.0",
            CONFLICT.0, CONFLICT.0
        )),
        "{}",
        check.log
    );
    assert!(
        check.summary.contains("### revendor check --all")
            && check
                .summary
                .contains(&format!("| `{}` | conflict |", CONFLICT.0)),
        "{}",
        check.summary
    );

    // update: one pull request, for the second package only.
    assert_eq!(updates.len(), 1);
    assert_eq!(updates[0].code, 0, "{}", updates[0].log);
    let pulls = mono.gh.pulls(PLATFORM);
    assert_eq!(pulls.len(), 1, "{pulls:?}");
    assert!(pulls[0].title.contains(NEWER.0), "{}", pulls[0].title);
    assert!(pulls[0].title.contains("v1.1.0"), "{}", pulls[0].title);
    let branch = pulls[0].head.clone();

    // report: one tracking issue, listing the third package and nothing else.
    assert_eq!(report.code, 0, "{}", report.log);
    let issues = mono.gh.issues(PLATFORM);
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert_eq!(issues[0].state, "open");
    let body = &issues[0].body;
    assert!(body.contains(CONFLICT.0), "{body}");
    assert!(body.contains("--keep-conflicts"), "{body}");
    assert!(!body.contains(NEWER.0) && !body.contains(SAME.0), "{body}");

    // The next night finds the same: the pull request and the issue are left as they are.
    let head = origin_head(&mono, &branch);
    let issue = issues[0].clone();
    mono.gh.clear_requests();
    let (check, updates, report) = mono.night();
    assert_eq!(check.code, 1, "{}", check.log);
    assert_eq!(updates.len(), 1);
    assert_eq!(updates[0].code, 0, "{}", updates[0].log);
    assert_eq!(report.code, 0, "{}", report.log);
    assert_eq!(mono.gh.pulls(PLATFORM).len(), 1);
    assert_eq!(
        origin_head(&mono, &branch),
        head,
        "the branch is not pushed again"
    );
    assert_eq!(mono.gh.issues(PLATFORM), [issue]);
    let writes = writes(&mono.gh);
    assert!(
        writes
            .iter()
            .all(|w| !w.starts_with("POST") && !w.contains("/issues")),
        "only the pull request's in-place update may write: {writes:?}"
    );
}

/// The commit `branch` names on origin.
fn origin_head(mono: &Monorepo, branch: &str) -> String {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(mono.origin.path())
        .args(["rev-parse", &format!("refs/heads/{branch}")])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(out.status.success(), "{branch} is on origin");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}
