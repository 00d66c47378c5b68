//! `revendor pr`: the upgrade's title and body from the base lock and the
//! working tree, and `--create` committing, pushing to a real bare `origin`
//! and opening (then updating) the pull request on the GitHub stand-in.

use crate::support;

use support::{GitHub, GitRepo, Revendor};

const UPSTREAM: &str = "example/app";
const FILE: &str = "deploy/app.yml";

fn manifest(version: &str) -> String {
    format!(
        "kind: Deployment\nmetadata:\n  name: app\nspec:\n  image: example.org/app:snapshot\n  # {version}\n"
    )
}

fn vendor_toml() -> String {
    format!(
        "[upstream]\ngithub = \"{UPSTREAM}\"\nversion = \"v1.0.0\"\ntrack = \">=1\"\n\n[[vendor]]\nfrom = \"{FILE}\"\nto = \"templates/app.yml\"\n"
    )
}

/// A repository holding the package at packages/app, adopted at v1.0.0 and
/// committed, with a bare `origin`; the upstream has v1.0.0 and v1.1.0.
fn setup(gh: &GitHub) -> (GitRepo, tempfile::TempDir) {
    for tag in ["v1.0.0", "v1.1.0"] {
        gh.repo(UPSTREAM)
            .file_at(tag, FILE, manifest(tag))
            .release(tag, |r| r);
    }
    let repo = GitRepo::new();
    repo.commit("package", [("packages/app/vendor.toml", vendor_toml())]);
    let pkg = repo.path().join("packages/app");
    Revendor::new(&pkg, gh)
        .run(&["update", "--to", "v1.0.0"])
        .expect(0);
    repo.commit("adopt at v1.0.0", Vec::<(&str, &str)>::new());
    let origin = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("git")
        .args(["init", "--quiet", "--bare"])
        .arg(origin.path())
        .status()
        .unwrap();
    assert!(status.success());
    repo.git(&[
        "remote",
        "add",
        "origin",
        &format!("file://{}", origin.path().display()),
    ]);
    (repo, origin)
}

#[test]
fn pr_text_names_the_versions_and_the_changed_files() {
    let gh = GitHub::start();
    let (repo, _origin) = setup(&gh);
    let pkg = repo.path().join("packages/app");
    let rv = Revendor::new(&pkg, &gh);
    rv.run(&["update"]).expect(0);
    let out = rv.run(&["pr"]).expect(0);
    assert!(
        out.stdout.starts_with("app: update app v1.0.0 → v1.1.0\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("| version | `v1.0.0` | `v1.1.0` |"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&format!(
            "{}/{UPSTREAM}/compare/v1.0.0...v1.1.0",
            gh.server_url()
        )),
        "{}",
        out.stdout
    );
    for f in [
        "templates/app.yml",
        "upstream/lock.toml",
        "vendor.toml",
        "upstream/deploy/app.yml",
    ] {
        assert!(
            out.stdout.contains(&format!("- `{f}`")),
            "{f} in {}",
            out.stdout
        );
    }
}

#[test]
fn pr_create_pushes_a_branch_and_opens_then_updates_one_pull_request() {
    let gh = GitHub::start();
    let (repo, origin) = setup(&gh);
    gh.repo("example/platform").branch("main", &"1".repeat(40));
    let token = "ghp_prtoken0123456789";
    gh.accept_token(token);
    let pkg = repo.path().join("packages/app");
    let rv = Revendor::new(&pkg, &gh)
        .env("GITHUB_TOKEN", token)
        .env("GITHUB_REPOSITORY", "example/platform");
    rv.run(&["update"]).expect(0);

    let out = rv.run(&["pr", "--create"]).expect(0);
    assert!(!out.all().contains(token));
    let pulls = gh.pulls("example/platform");
    assert_eq!(pulls.len(), 1);
    assert_eq!(pulls[0].head, "revendor/app-v1.1.0");
    assert_eq!(pulls[0].base, "main");
    assert_eq!(pulls[0].title, "app: update app v1.0.0 → v1.1.0");
    let pushed = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(origin.path())
        .args(["log", "-1", "--format=%s", "revendor/app-v1.1.0"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&pushed.stdout),
        "app: update app v1.0.0 → v1.1.0\n"
    );
    assert_eq!(
        repo.git(&["status", "--porcelain"]).trim(),
        "",
        "everything committed"
    );

    // Running it again updates the same pull request instead of opening another.
    rv.run(&["pr", "--create", "--base", "main"]).expect(0);
    assert_eq!(gh.pulls("example/platform").len(), 1);
}

#[test]
fn pr_create_with_nothing_changed_is_a_quiet_success() {
    let gh = GitHub::start();
    let (repo, _origin) = setup(&gh);
    let pkg = repo.path().join("packages/app");
    let rv = Revendor::new(&pkg, &gh)
        .env("GITHUB_TOKEN", "t")
        .env("GITHUB_REPOSITORY", "example/platform");
    let out = rv.run(&["pr", "--create"]).expect(0);
    assert!(
        out.stdout.contains("no pull request to propose"),
        "{}",
        out.stdout
    );
    assert!(gh.pulls("example/platform").is_empty());
}

#[test]
fn pr_create_without_a_token_is_a_usage_error() {
    let gh = GitHub::start();
    let (repo, _origin) = setup(&gh);
    let pkg = repo.path().join("packages/app");
    let rv = Revendor::new(&pkg, &gh).env("GITHUB_REPOSITORY", "example/platform");
    rv.run(&["update"]).expect(0);
    let out = rv.run(&["pr", "--create"]).expect(2);
    assert!(out.stderr.contains("set GITHUB_TOKEN"), "{}", out.stderr);
}
