//! `revendor pr`: the upgrade's title and body from the base commit and the
//! working tree, and `--create` committing, pushing to a real bare `origin`
//! over `file://` and opening (then updating) the pull request on the GitHub
//! stand-in; every way it can fail leaves the user's repository and origin
//! as they were (issue 10). The last test runs it on cozystack's real multus
//! package (REVENDOR_REALWORLD) against a golden body.

use crate::support;

#[allow(dead_code)]
use crate::registry_support;

use std::path::Path;
use std::process::Command;

use registry_support::content::multi_arch;
use registry_support::{Auth, Registry, have_registry};
use revendor::image::MediaType;
use support::multus_dockerfile::multus_dockerfile;
use support::realworld::cozystack_vendor_toml;
use support::{GitHub, GitRepo, Realworld, Revendor};

const UPSTREAM: &str = "example/app";
const PLATFORM: &str = "example/platform";
const FILE: &str = "deploy/app.yml";
const TOKEN: &str = "ghp_prtoken0123456789";
const BRANCH: &str = "revendor/app-v1.1.0";

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
/// committed, with a bare `origin` reached over `file://`; the upstream has
/// v1.0.0 and v1.1.0, and the platform repository on the stand-in has `main`.
struct Setup {
    gh: GitHub,
    repo: GitRepo,
    origin: tempfile::TempDir,
}

impl Setup {
    fn new() -> Setup {
        let gh = GitHub::start();
        for tag in ["v1.0.0", "v1.1.0"] {
            gh.repo(UPSTREAM)
                .file_at(tag, FILE, manifest(tag))
                .release(tag, |r| r);
        }
        gh.repo(PLATFORM).branch("main", &"1".repeat(40));
        gh.accept_token(TOKEN);
        let repo = GitRepo::new();
        repo.commit("package", [("packages/app/vendor.toml", vendor_toml())]);
        let s = Setup {
            gh,
            repo,
            origin: tempfile::tempdir().unwrap(),
        };
        s.rv().run(&["update", "--to", "v1.0.0"]).expect(0);
        s.repo.commit("adopt at v1.0.0", Vec::<(&str, &str)>::new());
        let init = Command::new("git")
            .args(["init", "--quiet", "--bare"])
            .arg(s.origin.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .status()
            .unwrap();
        assert!(init.success());
        s.repo.git(&[
            "remote",
            "add",
            "origin",
            &format!("file://{}", s.origin.path().display()),
        ]);
        s
    }

    /// revendor in the package, with a token, the repository, fixed
    /// identities, and git blind to the user's configuration.
    fn rv(&self) -> Revendor {
        Revendor::new(&self.repo.path().join("packages/app"), &self.gh)
            .env("GITHUB_TOKEN", TOKEN)
            .env("GITHUB_REPOSITORY", PLATFORM)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Nightly Bot")
            .env("GIT_AUTHOR_EMAIL", "bot@example.com")
            .env("GIT_COMMITTER_NAME", "Nightly Committer")
            .env("GIT_COMMITTER_EMAIL", "committer@example.com")
    }

    /// `git` on the bare origin; trimmed stdout, or `None` when it fails.
    fn origin_try(&self, args: &[&str]) -> Option<String> {
        let out = Command::new("git")
            .arg("--git-dir")
            .arg(self.origin.path())
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    fn origin_git(&self, args: &[&str]) -> String {
        self.origin_try(args)
            .unwrap_or_else(|| panic!("git {args:?} on origin failed"))
    }

    /// A maintainer's clone of the upgrade branch as origin has it.
    fn maintainers_checkout(&self) -> GitRepo {
        let maintainer = GitRepo::new();
        maintainer.git(&[
            "fetch",
            "--quiet",
            &format!("file://{}", self.origin.path().display()),
            &format!("{BRANCH}:{BRANCH}"),
        ]);
        maintainer.checkout(BRANCH);
        maintainer
    }

    /// The upgrade branch's head on origin, if it exists.
    fn pushed(&self) -> Option<String> {
        self.origin_try(&["rev-parse", "--verify", &format!("refs/heads/{BRANCH}")])
    }

    /// What the user sees of their repository: HEAD, its branch, the
    /// status of index and work tree, and what is staged.
    fn user_state(&self) -> [String; 4] {
        [
            self.repo.head(),
            self.repo.git(&["symbolic-ref", "HEAD"]),
            self.repo
                .git(&["status", "--porcelain=v1", "--untracked-files=all"]),
            self.repo.git(&["diff", "--cached"]),
        ]
    }
}

#[test]
fn pr_text_names_the_versions_the_links_and_what_changed_in_each_file() {
    let s = Setup::new();
    let rv = s.rv();
    rv.run(&["update"]).expect(0);
    let out = rv.run(&["pr"]).expect(0);
    let server = s.gh.server_url();
    let expected = format!(
        "chore(packages/app): bump app to v1.1.0

Bumps [app]({server}/{UPSTREAM}) from `v1.0.0` to `v1.1.0` in `packages/app`.

- Release notes: {server}/{UPSTREAM}/releases/tag/v1.1.0
- Upstream changes: {server}/{UPSTREAM}/compare/v1.0.0...v1.1.0
- Upstream commit: `{commit}`

### Upstream changes in the vendored files

```text
 deploy/app.yml | +1 -1
 1 file compared, 1 insertion(+), 1 deletion(-)
```

### Adaptations

Adaptations:
- `templates/app.yml`: rendered from app v1.1.0 with its patches, rewrites and pin (+1 -1)
- `upstream/deploy/app.yml`: pristine copy of upstream `deploy/app.yml` at v1.1.0 (+1 -1)
- `upstream/lock.toml`: version v1.0.0 → v1.1.0, commit {old} → {new}, sha256 of deploy/app.yml
- `vendor.toml`: [upstream] version v1.0.0 → v1.1.0

### Checks

- `revendor check --offline` on the working tree: clean
",
        commit = s.gh.repo(UPSTREAM).sha("v1.1.0"),
        old = &s.gh.repo(UPSTREAM).sha("v1.0.0")[..12],
        new = &s.gh.repo(UPSTREAM).sha("v1.1.0")[..12],
    );
    assert_eq!(out.stdout, expected);

    // The JSON carries the same facts, and the same change gives the same bytes.
    let json = rv.run(&["pr", "--format", "json"]).expect(0).stdout;
    assert_eq!(rv.run(&["pr", "--format", "json"]).expect(0).stdout, json);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["body"], expected.split_once("\n\n").unwrap().1);
    crate::pr_upstreams::assert_documented(&report);
    assert_eq!(report["summary"]["upstream"]["from"], "v1.0.0");
    assert_eq!(report["summary"]["adaptations"][3]["file"], "vendor.toml");
    assert_eq!(report["branch"], BRANCH);
}

/// issue 10: a package adopted without a lock still has its old version:
/// vendor.toml at the base commit names it.
#[test]
fn the_old_version_comes_from_the_base_commits_vendor_toml_without_a_lock() {
    let gh = GitHub::start();
    for tag in ["v1.0.0", "v1.1.0"] {
        gh.repo(UPSTREAM)
            .file_at(tag, FILE, manifest(tag))
            .release(tag, |r| r);
    }
    let repo = GitRepo::new();
    repo.commit(
        "package without a lock",
        [
            ("packages/app/vendor.toml", vendor_toml()),
            ("packages/app/templates/app.yml", manifest("v1.0.0")),
        ],
    );
    let rv = Revendor::new(&repo.path().join("packages/app"), &gh);
    rv.run(&["update", "--to", "v1.1.0"]).expect(0);
    let out = rv.run(&["pr"]).expect(0);
    assert!(
        out.stdout.contains("Bumps [app](http://127.0.0.1:")
            && out.stdout.contains("from `v1.0.0` to `v1.1.0`"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("/compare/v1.0.0...v1.1.0"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("- `upstream/lock.toml`: written: app v1.1.0 at "),
        "{}",
        out.stdout
    );
    // The base held no pristine copy: the old one was fetched to compare.
    assert!(
        out.stdout.contains(" deploy/app.yml | +1 -1"),
        "{}",
        out.stdout
    );
}

#[test]
fn pr_create_commits_only_the_packages_files_then_updates_the_same_pull_request() {
    let s = Setup::new();
    let rv = s.rv();
    rv.run(&["update"]).expect(0);
    // Someone's notes, staged at the repository root: never part of the upgrade.
    std::fs::write(s.repo.path().join("WIP-notes.txt"), "half a thought\n").unwrap();
    s.repo.git(&["add", "WIP-notes.txt"]);
    let before = s.user_state();
    let base = s.repo.head();

    let out = rv.run(&["pr", "--create", "--signoff"]).expect(0);
    let url = format!("{}/{PLATFORM}/pull/1", s.gh.server_url());
    assert_eq!(out.stdout, format!("{url}\n"), "the URL, alone, on stdout");
    assert!(
        out.stderr.contains(&format!("Opened {url}")),
        "{}",
        out.stderr
    );
    assert!(!out.all().contains(TOKEN));
    assert_eq!(
        s.user_state(),
        before,
        "HEAD, index and work tree untouched"
    );

    let pulls = s.gh.pulls(PLATFORM);
    assert_eq!(pulls.len(), 1);
    assert_eq!(pulls[0].head, BRANCH);
    assert_eq!(pulls[0].base, "main");
    assert_eq!(pulls[0].title, "chore(packages/app): bump app to v1.1.0");
    assert!(
        pulls[0].body.contains("### Adaptations"),
        "{}",
        pulls[0].body
    );

    // One commit on the base, holding the package's files and nothing else.
    let head = s.pushed().expect("the branch is on origin");
    assert_eq!(s.origin_git(&["rev-parse", &format!("{head}^")]), base);
    assert_eq!(
        s.origin_git(&["diff", "--name-only", &base, &head]),
        "packages/app/templates/app.yml\npackages/app/upstream/deploy/app.yml\n\
         packages/app/upstream/lock.toml\npackages/app/vendor.toml"
    );
    let message = s.origin_git(&["log", "-1", "--format=%B", &head]);
    assert!(
        message.starts_with("chore(packages/app): bump app to v1.1.0\n\napp v1.0.0 -> v1.1.0\n"),
        "{message}"
    );
    assert!(
        message.ends_with(
            "Revendor-Package: packages/app\nSigned-off-by: Nightly Committer <committer@example.com>"
        ),
        "{message}"
    );
    assert_eq!(
        s.origin_git(&["log", "-1", "--format=%an <%ae> / %cn <%ce>", &head]),
        "Nightly Bot <bot@example.com> / Nightly Committer <committer@example.com>"
    );

    // Again, and with --base main: the same pull request, updated in place,
    // and no second (empty) commit.
    for args in [
        &["pr", "--create", "--signoff"][..],
        &["pr", "--create", "--signoff", "--base", "main"],
    ] {
        let out = rv.run(args).expect(0);
        assert_eq!(out.stdout, format!("{url}\n"));
        assert!(
            out.stderr.contains(&format!("Updated {url}")),
            "{}",
            out.stderr
        );
        assert_eq!(s.gh.pulls(PLATFORM).len(), 1);
        assert_eq!(s.pushed().as_deref(), Some(head.as_str()));
    }
    assert_eq!(s.user_state(), before);
}

#[test]
fn issue_22_revendor_toml_at_the_root_sets_title_labels_and_footer() {
    let s = Setup::new();
    s.repo.commit(
        "repository conventions",
        [(
            ".revendor.toml",
            "[pr]\ntitle = \"chore({component}): bump {upstream} to {version}\"\n\
             labels = [\"area/networking\", \"kind/dependency\"]\n\
             footer = \"```release-note\\n[{component}] {summary} (was {from})\\n```\"\n\
             components = { \"packages/app\" = \"the-app\" }\n",
        )],
    );
    let rv = s.rv();
    rv.run(&["update"]).expect(0);
    let text = rv.run(&["pr"]).expect(0).stdout;
    assert!(
        text.starts_with("chore(the-app): bump app to v1.1.0\n"),
        "{text}"
    );
    rv.run(&["pr", "--create"]).expect(0);
    let pulls = s.gh.pulls(PLATFORM);
    assert_eq!(pulls[0].title, "chore(the-app): bump app to v1.1.0");
    assert_eq!(pulls[0].labels, ["area/networking", "kind/dependency"]);
    assert!(
        pulls[0]
            .body
            .ends_with("\n```release-note\n[the-app] bump app to v1.1.0 (was v1.0.0)\n```\n"),
        "{}",
        pulls[0].body
    );
    let head = s.pushed().expect("the branch is on origin");
    let message = s.origin_git(&["log", "-1", "--format=%B", &head]);
    assert!(
        message.starts_with("chore(the-app): bump app to v1.1.0\n"),
        "{message}"
    );

    // An unknown placeholder is an error at its line, before anything is pushed.
    std::fs::write(
        s.repo.path().join(".revendor.toml"),
        "[pr]\n\ntitle = \"chore({scope}): x\"\n",
    )
    .unwrap();
    let out = rv.run(&["pr"]).expect(2);
    assert!(
        out.stderr
            .contains(".revendor.toml:3: [pr] title has the unknown placeholder `{scope}`"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_maintainers_commit_on_the_branch_survives_the_next_run() {
    let s = Setup::new();
    let rv = s.rv();
    rv.run(&["update"]).expect(0);
    rv.run(&["pr", "--create"]).expect(0);

    // A maintainer adds tests to the pull request's branch.
    let maintainer = s.maintainers_checkout();
    maintainer.commit(
        "test the upgrade",
        [("packages/app/tests/app_test.yaml", "suite: app\n")],
    );
    maintainer.git(&[
        "push",
        "--quiet",
        &format!("file://{}", s.origin.path().display()),
        BRANCH,
    ]);
    let theirs = maintainer.head();

    for _ in 0..2 {
        let out = rv.run(&["pr", "--create"]).expect(0);
        assert!(
            out.stderr.contains("left `revendor/app-v1.1.0` alone"),
            "{}",
            out.stderr
        );
        assert!(
            out.stderr.contains("\"test the upgrade\" by Test Author"),
            "{}",
            out.stderr
        );
        assert_eq!(
            s.pushed().as_deref(),
            Some(theirs.as_str()),
            "never pushed over"
        );
    }
    let comments = s.gh.comments(PLATFORM, 1);
    assert_eq!(
        comments.len(),
        1,
        "said once, not every night: {comments:?}"
    );
    assert!(
        comments[0].contains("revendor did not update"),
        "{}",
        comments[0]
    );
    assert_eq!(s.gh.pulls(PLATFORM).len(), 1);
}

/// Issue 21: the trailer alone does not make a commit revendor's. A maintainer amends the
/// bot's commit (the `Revendor-Package:` trailer survives the amend) and force-pushes; the
/// next run leaves the branch alone instead of pushing over the amend.
#[test]
fn a_maintainers_amend_that_keeps_the_trailer_survives_the_next_run() {
    let s = Setup::new();
    let rv = s.rv();
    rv.run(&["update"]).expect(0);
    rv.run(&["pr", "--create"]).expect(0);
    let ours = s.pushed().unwrap();

    let maintainer = s.maintainers_checkout();
    let message = maintainer.git(&["log", "-1", "--format=%B"]);
    assert!(
        message.contains("Revendor-Package: packages/app"),
        "{message}"
    );
    std::fs::write(
        maintainer.path().join("packages/app/README.md"),
        "reviewed by a maintainer\n",
    )
    .unwrap();
    maintainer.git(&["add", "packages/app/README.md"]);
    maintainer.git(&["commit", "--quiet", "--amend", "--no-edit"]);
    assert!(
        maintainer
            .git(&["log", "-1", "--format=%B"])
            .contains("Revendor-Package: packages/app"),
        "the amend keeps the trailer"
    );
    maintainer.git(&[
        "push",
        "--quiet",
        "--force",
        &format!("file://{}", s.origin.path().display()),
        BRANCH,
    ]);
    let theirs = maintainer.head();
    assert_ne!(theirs, ours);

    let out = rv.run(&["pr", "--create"]).expect(0);
    assert!(
        out.stderr.contains("left `revendor/app-v1.1.0` alone"),
        "{}",
        out.stderr
    );
    assert_eq!(
        s.pushed().as_deref(),
        Some(theirs.as_str()),
        "never pushed over the amend"
    );
}

#[test]
fn someone_elses_branch_without_a_pull_request_is_left_alone_and_fails() {
    let s = Setup::new();
    let rv = s.rv();
    rv.run(&["update"]).expect(0);
    let other = GitRepo::new();
    other.commit("unrelated work", [("notes.txt", "mine\n")]);
    other.git(&[
        "push",
        "--quiet",
        &format!("file://{}", s.origin.path().display()),
        &format!("main:refs/heads/{BRANCH}"),
    ]);
    let theirs = other.head();
    let out = rv.run(&["pr", "--create"]).expect(1);
    assert!(
        out.stderr.contains("has commits revendor did not make"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("\"unrelated work\""), "{}", out.stderr);
    assert_eq!(s.pushed().as_deref(), Some(theirs.as_str()));
    assert!(s.gh.pulls(PLATFORM).is_empty());
}

#[test]
fn a_failed_api_call_then_a_rerun_ends_with_one_pull_request() {
    let s = Setup::new();
    let rv = s.rv();
    rv.run(&["update"]).expect(0);
    let before = s.user_state();
    s.gh.fail_next_method("POST", &format!("/repos/{PLATFORM}/pulls"), 502, 1);
    let out = rv.run(&["pr", "--create"]).expect(3);
    assert!(
        out.stderr.contains(&format!(
            "failed to open the pull request of `{BRANCH}` into `main`"
        )),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("502"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("the push of `revendor/app-v1.1.0` was undone"),
        "{}",
        out.stderr
    );
    assert_eq!(s.pushed(), None, "origin is as it was");
    assert_eq!(s.user_state(), before);
    assert!(s.gh.pulls(PLATFORM).is_empty());

    let out = rv.run(&["pr", "--create"]).expect(0);
    assert!(out.stderr.contains("Opened"), "{}", out.stderr);
    assert_eq!(s.gh.pulls(PLATFORM).len(), 1);
    assert!(s.pushed().is_some());
}

/// issue 10: a rerun found the branch holding its change and said "nothing
/// changed" without opening anything. Here the pull request fails, the undo
/// is refused too, and the rerun opens the pull request on that commit.
#[test]
fn a_rerun_whose_branch_holds_the_change_opens_the_pull_request() {
    let s = Setup::new();
    let rv = s.rv();
    rv.run(&["update"]).expect(0);
    let hook = s.origin.path().join("hooks/pre-receive");
    std::fs::write(
        &hook,
        "#!/bin/sh\nwhile read old new ref; do\n  case $new in 0000000000000000000000000000000000000000)\n    echo 'branches are never deleted here' >&2; exit 1;;\n  esac\ndone\n",
    )
    .unwrap();
    make_executable(&hook);
    s.gh.fail_next_method("POST", &format!("/repos/{PLATFORM}/pulls"), 502, 1);
    let out = rv.run(&["pr", "--create"]).expect(3);
    assert!(
        out.stderr.contains("`revendor/app-v1.1.0` stays pushed at"),
        "{}",
        out.stderr
    );
    let head = s.pushed().expect("the undo was refused");

    let out = rv.run(&["pr", "--create"]).expect(0);
    assert!(
        out.stderr.contains("already holds this upgrade"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("Opened"), "{}", out.stderr);
    assert_eq!(
        s.pushed().as_deref(),
        Some(head.as_str()),
        "no second commit"
    );
    assert_eq!(s.gh.pulls(PLATFORM).len(), 1);

    // A checkout of the upgrade branch itself compares with what it was made on.
    s.repo.git(&["fetch", "--quiet", "origin"]);
    s.repo.git(&[
        "checkout",
        "--quiet",
        "--force",
        "-B",
        BRANCH,
        &format!("origin/{BRANCH}"),
    ]);
    let out = rv.run(&["pr"]).expect(0);
    assert!(
        out.stdout.contains("from `v1.0.0` to `v1.1.0`"),
        "{}",
        out.stdout
    );
    let out = rv.run(&["pr", "--create"]).expect(0);
    assert!(out.stderr.contains("Updated"), "{}", out.stderr);
    assert_eq!(s.pushed().as_deref(), Some(head.as_str()));
}

#[test]
fn every_refusal_is_clear_and_leaves_nothing_half_done() {
    struct Case {
        name: &'static str,
        code: i32,
        says: &'static [&'static str],
    }
    let cases = [
        Case {
            name: "no token",
            code: 2,
            says: &["there is no token", "set GITHUB_TOKEN (or GH_TOKEN)"],
        },
        Case {
            name: "push rejected",
            code: 3,
            says: &[
                "failed to push `revendor/app-v1.1.0` to origin",
                "remote: revendor/* is protected here",
                "pre-receive hook declined",
                "nothing was pushed and no pull request was opened",
            ],
        },
        Case {
            name: "API 422",
            code: 3,
            says: &[
                "failed to open the pull request of `revendor/app-v1.1.0` into `release-9`",
                "answered 422: Validation Failed",
                "the push of `revendor/app-v1.1.0` was undone",
            ],
        },
        Case {
            name: "API unreachable",
            code: 3,
            says: &[
                "failed to check example/platform and the token through the GitHub API",
                "127.0.0.1:9",
                "nothing was pushed and no pull request was opened",
            ],
        },
        Case {
            name: "read-only token",
            code: 2,
            says: &[
                "the token may not push to example/platform",
                "contents: write",
            ],
        },
        Case {
            name: "dirty package",
            code: 2,
            says: &[
                "the package has changes revendor did not make",
                "`packages/app/NOTES.md` is new",
                "packages/app/templates/app.yml:",
            ],
        },
    ];
    for case in cases {
        let s = Setup::new();
        let mut rv = s.rv();
        rv.run(&["update"]).expect(0);
        let mut args = vec!["pr", "--create"];
        match case.name {
            "no token" => rv = rv.env("GITHUB_TOKEN", "").env("GH_TOKEN", ""),
            "push rejected" => {
                let hook = s.origin.path().join("hooks/pre-receive");
                std::fs::write(
                    &hook,
                    "#!/bin/sh\necho 'revendor/* is protected here' >&2\nexit 1\n",
                )
                .unwrap();
                make_executable(&hook);
            }
            "API 422" => {
                s.repo.git(&["branch", "release-9"]);
                args.extend(["--base", "release-9"]);
            }
            "API unreachable" => rv = rv.env("GITHUB_API_URL", "http://127.0.0.1:9"),
            "read-only token" => {
                s.gh.repo(PLATFORM).read_only();
            }
            "dirty package" => {
                let pkg = s.repo.path().join("packages/app");
                std::fs::write(pkg.join("NOTES.md"), "todo\n").unwrap();
                let template = pkg.join("templates/app.yml");
                let text = std::fs::read_to_string(&template).unwrap();
                std::fs::write(&template, format!("{text}# a hand edit\n")).unwrap();
            }
            _ => unreachable!(),
        }
        let before = s.user_state();
        let out = rv.run(&args);
        assert_eq!(out.code, case.code, "{}: {}", case.name, out.all());
        for said in case.says {
            assert!(
                out.stderr.contains(said),
                "{}: `{said}` in\n{}",
                case.name,
                out.stderr
            );
        }
        assert!(out.stdout.is_empty(), "{}: {}", case.name, out.stdout);
        assert_eq!(s.pushed(), None, "{}: nothing left on origin", case.name);
        assert!(s.gh.pulls(PLATFORM).is_empty(), "{}", case.name);
        assert_eq!(
            s.user_state(),
            before,
            "{}: the user's repository untouched",
            case.name
        );
        assert!(
            !s.repo.git(&["branch", "--list"]).contains("revendor/"),
            "{}: no local branch",
            case.name
        );
    }
}

/// Issue 13: `pr --create` killed at a hundred random moments. Each round gets a fresh
/// origin and platform repository, so every kill meets the first run's state. Once the kill
/// settled (a `git push` the run started finishes on its own), HEAD, the index and the work tree are as they were, and origin holds no branch or the
/// upgrade's whole commit; after the next run there is one branch holding that commit, one
/// pull request, and no lock file in either repository.
#[test]
fn sigkill_during_pr_create_leaves_nothing_half_done() {
    let s = Setup::new();
    s.rv().run(&["update"]).expect(0);
    let before = s.user_state();
    let base = s.repo.head();
    let origins = tempfile::tempdir().unwrap();
    let git_on = |dir: &Path, args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .arg("--git-dir")
            .arg(dir)
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    // A fresh bare origin and platform repository for round `n`, and revendor aimed at them.
    let round = |n: usize| {
        let origin = origins.path().join(n.to_string());
        git_on(&origin, &["init", "--quiet", "--bare"]).unwrap();
        s.repo.git(&[
            "remote",
            "set-url",
            "origin",
            &format!("file://{}", origin.display()),
        ]);
        let platform = format!("{PLATFORM}-{n}");
        s.gh.repo(&platform).branch("main", &"1".repeat(40));
        let rv = s.rv().env("GITHUB_REPOSITORY", &platform);
        (origin, platform, rv)
    };
    let branch_tree = |origin: &Path| {
        let head = git_on(
            origin,
            &["rev-parse", "--verify", &format!("refs/heads/{BRANCH}")],
        )?;
        assert_eq!(
            git_on(origin, &["rev-parse", &format!("{head}^")]).as_deref(),
            Some(base.as_str()),
            "the upgrade commit sits on the base"
        );
        git_on(origin, &["rev-parse", &format!("{head}^{{tree}}")])
    };
    let locks = |dirs: &[&Path]| -> Vec<String> {
        dirs.iter()
            .flat_map(|d| support::package::read_tree(d).into_keys())
            .filter(|p| p.ends_with(".lock"))
            .collect()
    };

    // Three whole runs: the commit's tree, and how long a run takes.
    let mut spans = Vec::new();
    let mut tree = None;
    for n in 0..3 {
        let (origin, _, rv) = round(n);
        let started = std::time::Instant::now();
        rv.run(&["pr", "--create"]).expect(0);
        spans.push(started.elapsed());
        tree = branch_tree(&origin);
    }
    let tree = tree.expect("a whole run pushes the branch");
    spans.sort();
    let span_us = spans[1].as_micros() as u64;

    let mut rng = support::kill::Rng::new(0xbf58_476d_1ce4_e5b9);
    let (mut untouched, mut pushed, mut opened) = (0, 0, 0);
    let mut n = 3;
    while n < 103 || (n < 203 && (untouched == 0 || opened == 0)) {
        let (origin, platform, rv) = round(n);
        n += 1;
        // After the first hundred rounds, a busy machine may have made every run slower than
        // the three measured: the late kills then reach up to twice the span.
        let late = if n > 103 {
            span_us * 4 / 3
        } else {
            span_us * 2 / 5
        };
        let delay = if n % 2 == 0 {
            span_us * 2 / 3 + rng.below(late)
        } else {
            rng.below(span_us)
        };
        let child = rv.spawn(&["pr", "--create"]);
        std::thread::sleep(std::time::Duration::from_micros(delay));
        support::kill::kill(child);

        assert_eq!(
            s.user_state(),
            before,
            "round {n}: HEAD, index and work tree"
        );
        let pulls = s.gh.pulls(&platform).len();
        match branch_tree(&origin) {
            None => {
                assert_eq!(pulls, 0, "round {n}: a pull request without its branch");
                untouched += 1;
            }
            Some(t) => {
                assert_eq!(t, tree, "round {n}: the pushed commit holds the upgrade");
                if pulls == 0 { pushed += 1 } else { opened += 1 }
            }
        }

        let out = rv.run(&["pr", "--create"]);
        assert_eq!(out.code, 0, "round {n}: {}", out.stderr);
        assert_eq!(s.user_state(), before, "round {n}");
        assert_eq!(
            branch_tree(&origin).as_deref(),
            Some(tree.as_str()),
            "round {n}"
        );
        let pulls = s.gh.pulls(&platform);
        assert_eq!(pulls.len(), 1, "round {n}: {pulls:?}");
        assert_eq!(pulls[0].head, BRANCH);
        let git_dir = s.repo.path().join(".git");
        assert_eq!(
            locks(&[&git_dir, &origin]),
            Vec::<String>::new(),
            "round {n}"
        );
    }
    eprintln!(
        "pr --create: {:?} a run; {n} rounds: untouched {untouched}, pushed {pushed}, opened {opened}",
        spans[1]
    );
    assert!(
        untouched > 0 && opened > 0,
        "kills landed before and after the push"
    );
}

#[test]
fn pr_create_with_nothing_changed_is_a_quiet_success() {
    let s = Setup::new();
    let out = s.rv().run(&["pr", "--create"]).expect(0);
    assert!(
        out.stdout.contains("no pull request to propose"),
        "{}",
        out.stdout
    );
    assert!(s.gh.pulls(PLATFORM).is_empty());
    assert_eq!(s.pushed(), None);
}

#[cfg(unix)]
fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[cfg(not(unix))]
fn make_executable(_: &Path) {}

// ---- cozystack's multus package, v4.2.3 without a lock → v4.3.0 ----

/// The package's path in cozystack's repository.
const PKG: &str = "packages/system/multus";
const TEMPLATE: &str = "templates/multus-daemonset-thick.yml";
const PATCH: &str = "patches/customize-deployment.patch";
const GO_PATCH: &str = "images/multus-cni/patches/fix-del-without-cache.diff";
const DOCKERFILE: &str = "images/multus-cni/Dockerfile";
const COZYSTACK: &str = "cozystack/cozystack";
const GOLDEN: &str = "tests/snapshots/pr/multus-v4.2.3-to-v4.3.0.md";

/// cozystack's repository as it stood at v4.2.3, without a lock: the
/// manifest patch made against v4.2.3 without the multusMasterCNI line, a
/// template that has that line as a hand edit no patch carries, the Talos
/// installer profile and kube-ovn's values where the markers look.
fn cozystack_at_v4_2_3(rw: &Realworld) -> Vec<(String, Vec<u8>)> {
    let scratch = tempfile::tempdir().unwrap();
    let new = scratch.path().join("new.yml");
    std::fs::write(&new, rw.multus_manifest("v4.2.3")).unwrap();
    let status = Command::new("patch")
        .args(["-p4", "-s", "-F0"])
        .arg(&new)
        .arg(rw.root().join("cozystack-multus").join(PATCH))
        .status()
        .expect("GNU patch");
    assert!(status.success());
    let line = "        \"multusMasterCNI\": \"05-cilium.conflist\",\n";
    let edited = std::fs::read_to_string(&new).unwrap();
    std::fs::write(&new, edited.replacen(line, "", 1)).unwrap();
    let old = scratch.path().join("old.yml");
    std::fs::write(&old, rw.multus_manifest("v4.2.3")).unwrap();
    let label = format!("a/{PKG}/{TEMPLATE}");
    let patch = Command::new("diff")
        .args([
            "-u",
            "--label",
            &label,
            "--label",
            &label.replacen("a/", "b/", 1),
        ])
        .arg(&old)
        .arg(&new)
        .output()
        .expect("GNU diff")
        .stdout;
    let template = String::from_utf8(rw.read(&format!("cozystack-multus/{TEMPLATE}")))
        .unwrap()
        .replacen("      - nad\n", "", 1);
    let mut files: Vec<(String, Vec<u8>)> = ["Chart.yaml", "values.yaml", GO_PATCH]
        .iter()
        .map(|f| {
            (
                format!("{PKG}/{f}"),
                rw.read(&format!("cozystack-multus/{f}")),
            )
        })
        .collect();
    files.extend([
        (format!("{PKG}/{PATCH}"), patch),
        (format!("{PKG}/{TEMPLATE}"), template.into_bytes()),
        (
            format!("{PKG}/vendor.toml"),
            cozystack_vendor_toml("v4.2.3").into_bytes(),
        ),
        (
            format!("{PKG}/{DOCKERFILE}"),
            multus_dockerfile(rw, "v4.2.3").into_bytes(),
        ),
        (
            "packages/core/talos/images/talos/profiles/installer.yaml".into(),
            rw.read("cozystack-talos/installer.yaml"),
        ),
        (
            "packages/system/kubeovn/values.yaml".into(),
            format!(
                "global:\n  images:\n    kubeovn:\n      repository: kube-ovn\n      tag: {}@sha256:{}\n",
                rw.fact_str(&["kube-ovn", "vendored"]),
                "5".repeat(64)
            )
            .into_bytes(),
        ),
    ]);
    files
}

/// The done-when of issue 10 on the real package: `update --to v4.3.0
/// --adopt-edits`, `image pin` (as the nightly's `image build --push`
/// pins), then `pr --create --signoff`: one branch, one commit of the
/// package's files only, one pull request whose body carries every fact
/// (the golden file), updated in place by a second run.
#[test]
fn cozystacks_multus_upgrade_from_v4_2_3_without_a_lock_is_one_honest_pull_request() {
    let Some(rw) = Realworld::from_env() else {
        return;
    };
    if !have_registry("the realworld pull request") {
        return;
    }
    let gh = GitHub::start();
    rw.register_multus(&gh);
    rw.register_multus_source(&gh);
    rw.register_talos(&gh, rw.fact_str(&["talos", "shipped"]));
    rw.register_kube_ovn(&gh, rw.fact_str(&["kube-ovn", "vendored"]));
    gh.repo(COZYSTACK).branch("main", &"2".repeat(40));
    gh.accept_token(TOKEN);
    let registry = Registry::start(Auth::Anonymous);
    let image = multi_arch(
        &["linux/amd64", "linux/arm64"],
        "multus",
        MediaType::OciIndex,
    );
    registry.push_multi_arch("cozystack/cozystack/multus-cni", "v1.6.0", &image);

    let repo = GitRepo::new();
    repo.commit("multus at v4.2.3", cozystack_at_v4_2_3(&rw));
    let base = repo.head();
    let origin = tempfile::tempdir().unwrap();
    let init = Command::new("git")
        .args(["init", "--quiet", "--bare"])
        .arg(origin.path())
        .status()
        .unwrap();
    assert!(init.success());
    repo.git(&[
        "remote",
        "add",
        "origin",
        &format!("file://{}", origin.path().display()),
    ]);
    std::fs::write(repo.path().join("WIP-notes.txt"), "half a thought\n").unwrap();
    repo.git(&["add", "WIP-notes.txt"]);

    let docker = tempfile::tempdir().unwrap();
    let rv = Revendor::new(&repo.path().join(PKG), &gh)
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_REPOSITORY", COZYSTACK)
        .env(
            "REVENDOR_REGISTRY_MIRRORS",
            &format!("ghcr.io={}", registry.host),
        )
        .env("DOCKER_CONFIG", &docker.path().display().to_string())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "github-actions[bot]")
        .env(
            "GIT_AUTHOR_EMAIL",
            "41898282+github-actions[bot]@users.noreply.github.com",
        )
        .env("GIT_COMMITTER_NAME", "github-actions[bot]")
        .env(
            "GIT_COMMITTER_EMAIL",
            "41898282+github-actions[bot]@users.noreply.github.com",
        );
    rv.run(&["update", "--to", "v4.3.0", "--adopt-edits"])
        .expect(0);
    rv.run(&["image", "pin"]).expect(0);

    let out = rv.run(&["pr", "--create", "--signoff"]).expect(0);
    let url = format!("{}/{COZYSTACK}/pull/1", gh.server_url());
    assert_eq!(out.stdout, format!("{url}\n"));
    assert!(
        out.stderr.contains(&format!("Opened {url}")),
        "{}",
        out.stderr
    );
    let pulls = gh.pulls(COZYSTACK);
    assert_eq!(pulls.len(), 1);
    assert_eq!(
        pulls[0].title,
        "chore(packages/system/multus): bump multus-cni to v4.3.0"
    );
    assert_eq!(pulls[0].head, "revendor/multus-v4.3.0");
    let text = format!("{}\n\n{}", pulls[0].title, pulls[0].body)
        .replace(&gh.server_url(), "https://github.com");
    golden(GOLDEN, &text);

    // One commit on the base, with the package's files only.
    let origin_git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("--git-dir")
            .arg(origin.path())
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let head = origin_git(&["rev-parse", "refs/heads/revendor/multus-v4.3.0"]);
    assert_eq!(origin_git(&["rev-parse", &format!("{head}^")]), base);
    let files = origin_git(&["diff", "--name-only", &base, &head]);
    assert!(
        files.lines().all(|f| f.starts_with(&format!("{PKG}/"))),
        "{files}"
    );
    assert!(files.contains(&format!("{PKG}/{PATCH}")), "{files}");
    let message = origin_git(&["log", "-1", "--format=%B", &head]);
    assert!(
        message.contains(&format!("- {DOCKERFILE}: ARG VERSION v4.2.3 → v4.3.0")),
        "{message}"
    );
    assert!(
        message.ends_with(
            "Signed-off-by: github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>"
        ),
        "{message}"
    );
    assert_eq!(
        repo.git(&["diff", "--cached", "--name-only"]),
        "WIP-notes.txt"
    );

    // The JSON carries the facts the body was rendered from.
    let json = rv.run(&["pr", "--format", "json"]).expect(0).stdout;
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    crate::pr_upstreams::assert_documented(&report);
    let customize = &report["summary"]["patches"][0];
    assert_eq!(customize["name"], "customize-deployment");
    assert_eq!(
        customize["adopted"][0]["added"][0],
        "        \"multusMasterCNI\": \"05-cilium.conflist\","
    );
    assert_eq!(
        report["summary"]["patches"][1]["sections"][0]["moved"][0]["offset"],
        106
    );

    // Offline, nothing is claimed that was not verified.
    let offline = rv.run(&["--offline", "pr"]).expect(0).stdout;
    assert_eq!(
        offline.matches("; not re-verified (offline)").count(),
        2,
        "{offline}"
    );
    assert!(!offline.contains("re-verified online"), "{offline}");
    assert!(
        offline.contains("on `deployments/multus-daemonset-thick.yml`: not recomputed (the base commit holds no pristine copy"),
        "{offline}"
    );

    // The next night: the same pull request, updated, the branch as it was.
    let out = rv.run(&["pr", "--create", "--signoff"]).expect(0);
    assert!(
        out.stderr.contains(&format!("Updated {url}")),
        "{}",
        out.stderr
    );
    assert_eq!(gh.pulls(COZYSTACK).len(), 1);
    assert_eq!(
        origin_git(&["rev-parse", "refs/heads/revendor/multus-v4.3.0"]),
        head
    );
}

/// Compares `text` with the golden file at `rel`; `SNAPSHOTS=overwrite`
/// rewrites it (then read the diff).
fn golden(rel: &str, text: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    if std::env::var_os("SNAPSHOTS").is_some_and(|v| v == "overwrite") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        expected == text,
        "{rel} differs (SNAPSHOTS=overwrite to accept):\n{text}"
    );
}
