//! `revendor update` against a small synthetic upstream served by the GitHub
//! stand-in (or a local git repository): release selection, bad input,
//! network faults, all-or-nothing writes (kills: `kill.rs`).

use crate::support;

use std::time::Duration;

use support::{GitHub, GitRepo, Revendor, TempPackage};

const REPO: &str = "example/app";
const FILE: &str = "deploy/app.yml";

fn manifest(version: &str) -> String {
    let mut s =
        String::from("kind: Deployment\nmetadata:\n  name: app\n  namespace: default\nspec:\n");
    s.push_str("  template:\n    spec:\n      containers:\n        - name: app\n");
    s.push_str("          image: example.org/app:snapshot\n");
    s.push_str(&format!("          # built from {version}\n"));
    s.push_str("          resources:\n            limits:\n              memory: 64Mi\n");
    s
}

const PATCH: &str = "--- a/templates/app.yml
+++ b/templates/app.yml
@@ -1,7 +1,7 @@
 kind: Deployment
 metadata:
   name: app
-  namespace: default
+  namespace: cozy-app
 spec:
   template:
     spec:
";

fn vendor_toml(source: &str, version: &str) -> String {
    format!(
        r#"[upstream]
{source}
version = "{version}"
track = ">=1.0.0, <2.0.0"

[[vendor]]
from = "{FILE}"
to = "templates/app.yml"

[[patch]]
name = "namespace"
file = "patches/namespace.patch"
applies-to = "vendor"

[[rewrite]]
file = "templates/app.yml"
lines-containing = "example.org/app"
replace = "snapshot"
with = "{{version}}"

[[rewrite]]
file = "Dockerfile"
dockerfile-arg = "VERSION"
with = "{{version}}"
"#
    )
}

fn upstream(gh: &GitHub, tags: &[&str]) {
    for tag in tags {
        gh.repo(REPO)
            .file_at(tag, FILE, manifest(tag))
            .release(tag, |r| r);
    }
}

fn package(version: &str) -> TempPackage {
    let pkg = TempPackage::new();
    pkg.write(
        "vendor.toml",
        vendor_toml(&format!("github = \"{REPO}\""), version),
    )
    .write("patches/namespace.patch", PATCH)
    .write(
        "Dockerfile",
        format!("FROM scratch\nARG VERSION={version}\n"),
    );
    pkg
}

#[test]
fn highest_release_in_track_skipping_drafts_and_prereleases() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0", "v1.1.0", "v1.10.0", "v2.0.0"]);
    gh.repo(REPO)
        .file_at("v1.11.0", FILE, manifest("v1.11.0"))
        .release("v1.11.0", |r| r.draft(true))
        .file_at("v1.12.0-rc.1", FILE, manifest("v1.12.0-rc.1"))
        .release("v1.12.0-rc.1", |r| r.prerelease(true))
        .release("v1.10.0", |r| r.name(None));
    let pkg = package("v1.0.0");
    let rv = Revendor::new(pkg.path(), &gh);
    let out = rv.run(&["update"]).expect(0);
    assert!(
        out.stdout.contains("upstream: v1.0.0 -> v1.10.0"),
        "{}",
        out.stdout
    );
    let t = pkg.read_string("templates/app.yml");
    assert!(
        t.contains("namespace: cozy-app\n") && t.contains("image: example.org/app:v1.10.0\n"),
        "{t}"
    );
    assert_eq!(
        pkg.read_string("Dockerfile"),
        "FROM scratch\nARG VERSION=v1.10.0\n"
    );
    assert!(
        pkg.read_string("upstream/lock.toml")
            .contains("version = \"v1.10.0\"")
    );
}

/// issue 20: seaweedfs tags its releases `4.00`…`4.09` (two-digit minors,
/// not semver): they are versions, ordered by value (`1.09` after `1.08`),
/// and the tag is written as upstream spells it.
#[test]
fn two_digit_minor_tags_are_releases_kept_as_written() {
    let gh = GitHub::start();
    upstream(&gh, &["1.07", "1.08", "1.09"]);
    let pkg = package("1.07");
    let rv = Revendor::new(pkg.path(), &gh);
    let out = rv.run(&["update", "--to", "1.08", "--dry-run"]).expect(0);
    assert!(!out.stderr.contains("semver"), "{}", out.stderr);
    let out = rv.run(&["update"]).expect(0);
    assert!(
        out.stdout.contains("upstream: 1.07 -> 1.09"),
        "{}",
        out.stdout
    );
    assert_eq!(
        pkg.read_string("Dockerfile"),
        "FROM scratch\nARG VERSION=1.09\n"
    );
    assert!(
        pkg.read_string("templates/app.yml")
            .contains("image: example.org/app:1.09\n")
    );
    assert!(
        pkg.read_string("upstream/lock.toml")
            .contains("version = \"1.09\"")
    );
}

#[test]
fn releases_are_read_across_pages() {
    let gh = GitHub::start();
    let tags: Vec<String> = (0..130).map(|i| format!("v1.{i}.0")).collect();
    let refs: Vec<&str> = tags.iter().map(String::as_str).collect();
    upstream(&gh, &refs);
    let pkg = package("v1.0.0");
    let out = Revendor::new(pkg.path(), &gh)
        .run(&["update", "--dry-run"])
        .expect(0);
    assert!(out.stdout.contains("-> v1.129.0"), "{}", out.stdout);
    // GitHub's `next` links name the repository by id, as the real one does.
    let reqs = gh.requests();
    let pages = reqs
        .targets()
        .iter()
        .filter(|t| t.contains("/releases?"))
        .count();
    assert_eq!(pages, 2, "{:?}", reqs.targets());
}

#[test]
fn to_outside_track_warns_and_unknown_tag_is_a_usage_error() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0", "v2.0.0"]);
    let pkg = package("v1.0.0");
    let rv = Revendor::new(pkg.path(), &gh);
    let out = rv.run(&["update", "--to", "v2.0.0", "--dry-run"]).expect(0);
    assert!(
        out.stderr.contains("warning: v2.0.0 is outside track"),
        "{}",
        out.stderr
    );
    let out = rv.run(&["update", "--to", "v9.9.9"]).expect(2);
    assert!(
        out.stderr
            .contains("`v9.9.9` is not a release of github:example/app"),
        "{}",
        out.stderr
    );
}

#[test]
fn dry_run_writes_nothing() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0", "v1.1.0"]);
    let pkg = package("v1.0.0");
    let before = pkg.snapshot();
    let out = Revendor::new(pkg.path(), &gh)
        .run(&["update", "--dry-run"])
        .expect(0);
    assert!(
        // issue 21: the package had no rendered file yet; the summary says so.
        out.stdout.contains("would create templates/app.yml"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("patch namespace on templates/app.yml: exact"),
        "{}",
        out.stdout
    );
    // Issue 9: a dry run adopts nothing, and says so; issue 20: at `version`, then the move.
    assert!(
        out.stdout.starts_with(
            "would adopt the package at v1.0.0 (no lock before), then move to v1.1.0\n"
        ),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("adopted"), "{}", out.stdout);
    assert_eq!(pkg.snapshot(), before);
}

/// Issue 9: an update to the locked version does not announce a move
/// (`v1.1.0 -> v1.1.0`); it says it is up to date.
#[test]
fn a_no_op_update_says_it_is_up_to_date() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0", "v1.1.0"]);
    let pkg = package("v1.0.0");
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update"]).expect(0);
    let out = rv.run(&["update", "--to", "v1.1.0"]).expect(0);
    assert!(!out.stderr.contains("Updating"), "{}", out.stderr);
    assert!(!out.all().contains("v1.1.0 -> v1.1.0"), "{}", out.all());
    assert!(
        out.stderr.contains("Checking github:example/app at v1.1.0"),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout.starts_with("upstream: up to date at v1.1.0\n")
            && out.stdout.ends_with("no file changed\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_second_update_with_nothing_new_makes_conditional_requests() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0", "v1.1.0"]);
    let pkg = package("v1.0.0");
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update"]).expect(0);
    gh.clear_requests();
    let before = pkg.snapshot();
    let out = rv.run(&["update", "-v"]).expect(0);
    assert!(out.stdout.contains("no file changed"), "{}", out.stdout);
    assert_eq!(pkg.snapshot(), before);
    let reqs = gh.requests();
    let releases = reqs.matching("/repos/example/app/releases");
    assert!(!releases.is_empty() && releases.iter().all(|r| r.conditional() && r.status == 304));
    assert!(
        out.stderr.contains("answered 304 Not Modified"),
        "{}",
        out.stderr
    );
}

#[test]
fn rate_limit_says_when_it_resets_and_how_to_lift_it() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0"]);
    gh.rate_limit(true);
    let pkg = package("v1.0.0");
    let before = pkg.snapshot();
    let out = Revendor::new(pkg.path(), &gh).run(&["update"]).expect(3);
    assert!(out.stderr.contains("rate limit exceeded"), "{}", out.stderr);
    assert!(
        out.stderr.contains("it resets at") && out.stderr.contains("UTC"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("GITHUB_TOKEN"), "{}", out.stderr);
    assert_eq!(pkg.snapshot(), before);
}

#[test]
fn unknown_repository_is_named() {
    let gh = GitHub::start();
    let pkg = package("v1.0.0");
    let out = Revendor::new(pkg.path(), &gh).run(&["update"]).expect(3);
    assert!(
        out.stderr
            .contains("GitHub repository `example/app` not found"),
        "{}",
        out.stderr
    );
}

#[test]
fn server_errors_are_retried_then_succeed() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0", "v1.1.0"]);
    gh.fail_next("/repos/example/app/releases", 503, 2);
    let pkg = package("v1.0.0");
    Revendor::new(pkg.path(), &gh).run(&["update"]).expect(0);
    assert_eq!(
        gh.requests().statuses("/repos/example/app/releases")[..2],
        [503, 503]
    );
}

#[test]
fn a_request_that_times_out_is_retried() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0", "v1.1.0"]);
    gh.hang_next("/repos/example/app/releases", Duration::from_secs(3), 1);
    let pkg = package("v1.0.0");
    let rv = Revendor::new(pkg.path(), &gh).env("REVENDOR_HTTP_TIMEOUT", "0.5");
    let out = rv.run(&["update"]).expect(0);
    assert!(out.stdout.contains("-> v1.1.0"), "{}", out.stdout);
    assert!(gh.requests().count("/repos/example/app/releases") >= 2);
}

#[test]
fn persistent_server_errors_end_with_exit_3() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0"]);
    gh.fail_next("/repos/example/app/releases", 502, 100);
    let pkg = package("v1.0.0");
    let out = Revendor::new(pkg.path(), &gh).run(&["update"]).expect(3);
    assert!(out.stderr.contains("answered 502"), "{}", out.stderr);
    assert_eq!(
        gh.requests().count("/repos/example/app/releases"),
        4,
        "1 try + 3 retries"
    );
}

#[test]
fn the_token_is_sent_but_never_printed() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0", "v1.1.0"]);
    let token = "ghp_supersecrettoken1234567890";
    gh.accept_token(token);
    let pkg = package("v1.0.0");
    let rv = Revendor::new(pkg.path(), &gh).env("GITHUB_TOKEN", token);
    let out = rv.run(&["update", "-v", "--format", "json"]).expect(0);
    assert!(!out.all().contains(token));
    let reqs = gh.requests();
    assert!(
        reqs.matching("/repos/")
            .iter()
            .all(|r| r.authorization_sent)
    );
    gh.fail_next("/repos/example/app/releases", 500, 100);
    let out = rv.run(&["update", "-v"]).expect(3);
    assert!(!out.all().contains(token));
}

#[test]
fn a_patch_that_no_longer_applies_names_its_hunk_and_changes_nothing() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0"]);
    gh.repo(REPO)
        .file_at(
            "v1.1.0",
            FILE,
            manifest("v1.1.0").replace("namespace: default", "namespace: other"),
        )
        .release("v1.1.0", |r| r);
    let pkg = package("v1.0.0");
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    let before = pkg.snapshot();
    let out = rv.run(&["update"]).expect(1);
    assert!(
        out.stdout.contains("hunk #1 `@@ -1,7 +1,7 @@`"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("namespace: default"), "{}", out.stdout);
    assert_eq!(pkg.snapshot(), before);
}

#[test]
fn git_upstream_tags_are_versions_including_two_part_ones() {
    let repo = GitRepo::new();
    for tag in ["v1.0.0", "v1.2", "v1.3.0-alpha", "v2.0"] {
        repo.commit(tag, [(FILE, manifest(tag))]);
        repo.annotated_tag(tag, tag);
    }
    let gh = GitHub::start();
    let pkg = package("v1.0.0");
    pkg.write(
        "vendor.toml",
        vendor_toml(&format!("git = \"{}\"", repo.url()), "v1.0.0"),
    );
    let rv = Revendor::new(pkg.path(), &gh);
    let out = rv.run(&["update"]).expect(0);
    assert!(
        out.stdout.contains("upstream: v1.0.0 -> v1.2"),
        "{}",
        out.stdout
    );
    assert!(
        pkg.read_string("templates/app.yml")
            .contains("# built from v1.2\n")
    );
    assert!(
        pkg.read_string("upstream/lock.toml")
            .contains(&format!("commit = \"{}\"", repo.rev_parse("v1.2^{commit}")))
    );
}

/// A malformed vendor.toml → one line naming file:line and what is wrong, exit 2.
#[test]
fn configuration_errors_name_file_line_and_key() {
    let gh = GitHub::start();
    let cases: [(&str, &str, &str); 5] = [
        ("colour = \"red\"\n", ":25:", "unknown key `colour`"),
        ("", ":4:", "not a semver range"),
        ("", ":12:", "does not exist"),
        ("", ":8:", "leaves the package directory"),
        ("", ":27:", "duplicate patch name `namespace`"),
    ];
    for (i, (extra, line, message)) in cases.iter().enumerate() {
        let pkg = package("v1.0.0");
        let mut toml = vendor_toml(&format!("github = \"{REPO}\""), "v1.0.0") + extra;
        match i {
            1 => toml = toml.replace(">=1.0.0, <2.0.0", ">=one"),
            2 => toml = toml.replace("patches/namespace.patch", "patches/missing.patch"),
            3 => toml = toml.replace("to = \"templates/app.yml\"", "to = \"../outside.yml\""),
            4 => toml.push_str("\n[[patch]]\nname = \"namespace\"\nfile = \"patches/namespace.patch\"\napplies-to = \"vendor\"\n"),
            _ => {}
        }
        pkg.write("vendor.toml", toml);
        let out = Revendor::new(pkg.path(), &gh).run(&["update"]).expect(2);
        let first = out.stderr.lines().next().unwrap_or_default().to_string();
        assert!(
            first.starts_with("error: ") && first.contains("vendor.toml") && first.contains(line),
            "case {i}: {}",
            out.stderr
        );
        assert!(first.contains(message), "case {i}: {}", out.stderr);
    }
}

#[test]
fn a_malformed_patch_names_its_line() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0"]);
    let pkg = package("v1.0.0");
    pkg.write(
        "patches/namespace.patch",
        PATCH.replace("@@ -1,7 +1,7 @@", "@@ -1,9 +1,7 @@"),
    );
    let out = Revendor::new(pkg.path(), &gh).run(&["update"]).expect(2);
    assert!(
        out.stderr.contains("patches/namespace.patch:"),
        "{}",
        out.stderr
    );
}

/// Issue "One owner for each concept": a render failure in the package's
/// own files was `Error::Upstream` and exited 3, which is for the network.
/// It is the package's to fix: exit 2, naming the file.
#[test]
fn a_render_failure_in_the_packages_own_files_exits_2_naming_it() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0"]);
    let cases = [
        (
            "a dockerfile-arg rewrite of a rendered YAML file",
            "\n[[rewrite]]\nfile = \"templates/app.yml\"\ndockerfile-arg = \"VERSION\"\nwith = \"{version}\"\n",
            None,
            "cannot apply the [[rewrite]] at vendor.toml:26",
        ),
        (
            "a pin into a rendered file that is not YAML",
            "\n[[pin]]\nfile = \"templates/app.yml\"\nrepository = \"example.org/app\"\n",
            Some("kind: [Deployment\n"),
            "cannot pin images",
        ),
    ];
    for (case, extra, rendered, message) in cases {
        let pkg = package("v1.0.0");
        pkg.write(
            "vendor.toml",
            vendor_toml(&format!("github = \"{REPO}\""), "v1.0.0") + extra,
        );
        if let Some(text) = rendered {
            pkg.write("templates/app.yml", text);
        }
        let before = pkg.snapshot();
        let out = Revendor::new(pkg.path(), &gh).run(&["update"]).expect(2);
        let error = out.stderr.lines().find(|l| l.starts_with("error: "));
        assert!(
            error.is_some_and(|l| l.starts_with("error: templates/app.yml:")),
            "{case}: {}",
            out.stderr
        );
        assert!(out.stderr.contains(message), "{case}: {}", out.stderr);
        assert!(out.stderr.contains("help: "), "{case}: {}", out.stderr);
        assert_eq!(pkg.snapshot(), before, "{case}: nothing is written");
    }
}

/// issue 21: a vendored file named `a#b c.yaml` was fetched from `…/a`
/// (raw URLs were not percent-encoded); each path segment is encoded now,
/// so the file arrives as itself, and so do a directory's files.
#[test]
fn file_names_with_hash_and_space_are_fetched_as_themselves() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0"]);
    gh.repo(REPO)
        .file_at("v1.0.0", "deploy/a#b c.yaml", "kind: A\n")
        .file_at("v1.0.0", "deploy/a", "kind: Wrong\n")
        .file_at("v1.0.0", "crds/50% off.yaml", "kind: C\n")
        .release("v1.0.0", |r| r);
    let pkg = package("v1.0.0");
    let toml = pkg.read_string("vendor.toml");
    pkg.write(
        "vendor.toml",
        format!(
            "{toml}\n[[vendor]]\nfrom = \"deploy/a#b c.yaml\"\nto = \"extra/ab.yaml\"\n\n[[vendor]]\nfrom = \"crds/\"\nto = \"crds/\"\n"
        ),
    );
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    assert_eq!(pkg.read_string("extra/ab.yaml"), "kind: A\n");
    assert_eq!(pkg.read_string("crds/50% off.yaml"), "kind: C\n");
    assert!(
        gh.requests()
            .targets()
            .iter()
            .any(|t| t.ends_with("/deploy/a%23b%20c.yaml")),
        "{:?}",
        gh.requests().targets()
    );
}

/// issue 21: files whose names differ only by case or Unicode
/// normalisation were vendored side by side without a word; a macOS or
/// Windows checkout holds one of each pair. The update still vendors them
/// (Linux keeps both) and warns, naming both files of each pair.
#[test]
fn names_differing_only_by_case_or_normalisation_are_warned_about() {
    let composed = "caf\u{e9}.yaml";
    let decomposed = "cafe\u{301}.yaml";
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0"]);
    gh.repo(REPO)
        .file_at("v1.0.0", "docs/README.md", "upper\n")
        .file_at("v1.0.0", "docs/readme.md", "lower\n")
        .file_at("v1.0.0", &format!("docs/{composed}"), "nfc\n")
        .file_at("v1.0.0", &format!("docs/{decomposed}"), "nfd\n")
        .release("v1.0.0", |r| r);
    let pkg = package("v1.0.0");
    let toml = pkg.read_string("vendor.toml");
    pkg.write(
        "vendor.toml",
        format!("{toml}\n[[vendor]]\nfrom = \"docs/\"\nto = \"docs/\"\n"),
    );
    let rv = Revendor::new(pkg.path(), &gh);
    let out = rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    let warnings: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning:") && l.contains("differ only by case"))
        .collect();
    assert_eq!(warnings.len(), 2, "{}", out.stderr);
    assert!(
        warnings[0].contains("`docs/README.md` and `docs/readme.md`"),
        "{}",
        out.stderr
    );
    assert!(
        warnings[1].contains(&format!("`docs/{composed}`"))
            && warnings[1].contains(&format!("`docs/{decomposed}`")),
        "{}",
        out.stderr
    );
    assert_eq!(pkg.read_string("docs/readme.md"), "lower\n");
}

/// The upstream file of [`a_large_file_is_compared_on_disk_after_the_carry`]:
/// the manifest, then `filler` lines, the one at `changed` (if any) reworded.
fn large_manifest(version: &str, changed: Option<usize>) -> String {
    let mut s = manifest(version);
    for i in 0..40_000 {
        let word = if Some(i) == changed {
            "changed"
        } else {
            "filler"
        };
        s.push_str(&format!("# {word} line {i:05} of the upstream manifest\n"));
    }
    s
}

/// A file over 1 MiB is not held through the carry: the commit compares the
/// result with the file on disk. A hand edit is still found, a changed
/// result is written, and an unchanged one is left alone.
#[test]
fn a_large_file_is_compared_on_disk_after_the_carry() {
    let repo = GitRepo::new();
    let v1 = large_manifest("v1.0.0", None);
    let v2 = large_manifest("v1.0.0", Some(30_000));
    assert!(v1.len() > 1 << 20, "the file is large");
    repo.commit("v1.0.0", [(FILE, v1.as_str())]);
    repo.tag("v1.0.0");
    repo.commit("v1.1.0", [(FILE, v2.as_str())]);
    repo.tag("v1.1.0");
    repo.commit("v1.2.0", [(FILE, v2.as_str()), ("NEWS", "same manifest\n")]);
    repo.tag("v1.2.0");
    let patched = |text: &str| text.replacen("namespace: default", "namespace: cozy-app", 1);
    let gh = GitHub::start();
    let pkg = TempPackage::new();
    pkg.write(
        "vendor.toml",
        format!(
            "[upstream]\ngit = \"{}\"\nversion = \"v1.0.0\"\n\n\
             [[vendor]]\nfrom = \"{FILE}\"\nto = \"templates/app.yml\"\n\n\
             [[patch]]\nname = \"namespace\"\nfile = \"patches/namespace.patch\"\n\
             applies-to = \"vendor\"\n",
            repo.url()
        ),
    )
    .write("patches/namespace.patch", PATCH)
    .write("templates/app.yml", patched(&v1));
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);

    let edited = patched(&v1).replace("line 00007 ", "line 7 ");
    pkg.write("templates/app.yml", &edited);
    let out = rv.run(&["update", "--to", "v1.1.0"]).expect(1);
    assert!(
        out.stderr
            .contains("has 2 hand edits that no patch carries"),
        "{}",
        out.stderr
    );
    assert_eq!(pkg.read_string("templates/app.yml"), edited);

    pkg.write("templates/app.yml", patched(&v1));
    let out = rv.run(&["update", "--to", "v1.1.0"]).expect(0);
    assert!(
        out.stdout.contains("updated templates/app.yml"),
        "{}",
        out.stdout
    );
    assert_eq!(pkg.read_string("templates/app.yml"), patched(&v2));

    let out = rv.run(&["update", "--to", "v1.2.0"]).expect(0);
    assert!(
        out.stdout.contains("upstream: v1.1.0 -> v1.2.0"),
        "{}",
        out.stdout
    );
    assert!(
        !out.stdout.contains("updated templates/app.yml"),
        "the same result is not written again: {}",
        out.stdout
    );
    assert_eq!(pkg.read_string("templates/app.yml"), patched(&v2));
}

/// An error the package had before the update is reported when it ends, but not as one the
/// update caused, while one the update brings is: the update is written and exits 1 for the
/// new one alone. (The check of the tree before the update runs before it reads a file; one
/// that saw nothing would take both for the update's, one that ran after would see neither
/// as new.)
#[test]
fn an_error_the_package_had_before_is_not_one_the_update_caused() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0"]);
    let unlimited = manifest("v1.1.0").replace(
        "          resources:\n            limits:\n              memory: 64Mi\n",
        "",
    );
    gh.repo(REPO)
        .file_at("v1.1.0", FILE, unlimited)
        .release("v1.1.0", |r| r);
    let pkg = package("v1.0.0");
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    let added = "\n[image]\nrepository = \"example.org/app\"\ntag = \"{version}\"\n\
                 context = \"images/app\"\nplatforms = [\"linux/amd64\"]\n\n\
                 [[contract]]\nname = \"limits\"\nfile = \"templates/app.yml\"\n\
                 select = { kind = \"Deployment\" }\n\
                 every-container = [\"resources\", \"limits\", \"memory\"]\n";
    let toml = pkg.read_string("vendor.toml") + added;
    pkg.write("vendor.toml", &toml);
    let missing = "warning: builder-go: images/app/Dockerfile:1: error: the image recipe \
                   `images/app/Dockerfile` is missing\n";
    let before = rv.run(&["check"]).expect(1).stdout;
    assert!(
        before.contains("is missing") && !before.contains("limits"),
        "{before}"
    );

    let run = rv.run(&["update", "--to", "v1.1.0"]).expect(1);
    assert!(run.stderr.contains(missing), "{}", run.stderr);
    let caused: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("(caused by"))
        .collect();
    assert!(
        caused.len() == 1
            && caused[0].contains("limits")
            && caused[0].ends_with("(caused by this update)"),
        "{}",
        run.stderr
    );
    assert!(
        pkg.read_string("upstream/lock.toml")
            .contains("version = \"v1.1.0\"")
    );
}

/// Runs `update` with `args`, holds its request for the new upstream file (made after it
/// read the package and checked it for hand edits), appends a line to `file` meanwhile, and
/// checks that the commit stopped: exit 1 naming the file, the edit kept, the lock as it was.
fn edit_during_update(gh: &GitHub, pkg: &TempPackage, args: &[&str], file: &str) {
    let before = pkg.read_string("upstream/lock.toml");
    let gate = gh.hold_next(&format!("/{REPO}/refs/tags/v1.1.0/{FILE}"));
    let mut run = Revendor::new(pkg.path(), gh)
        .command(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    while !gate.arrived() {
        assert!(
            run.try_wait().unwrap().is_none(),
            "{:?}",
            gh.requests().targets()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let edited = pkg.read_string(file) + "# edited during the update\n";
    pkg.write(file, &edited);
    gate.release();
    let out = run.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let said = format!("`{file}` changed while revendor was running; nothing was written");
    assert!(stderr.contains(&said), "{stderr}");
    assert_eq!(pkg.read_string(file), edited);
    assert_eq!(pkg.read_string("upstream/lock.toml"), before);
    assert!(!pkg.path().join(".revendor-txn").exists());
}

/// A hand edit made while `update` runs, after its hand-edit check read the file, is not
/// written over: the commit finds the file changed since, writes nothing, and says so
/// (exit 1). So with a patch file, which the update rewrites when it refreshes the patch.
#[test]
fn an_edit_made_during_the_update_stops_its_commit() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0", "v1.1.0"]);
    let pkg = package("v1.0.0");
    Revendor::new(pkg.path(), &gh)
        .run(&["update", "--to", "v1.0.0"])
        .expect(0);
    let update = ["update", "--to", "v1.1.0"];
    edit_during_update(&gh, &pkg, &update, "templates/app.yml");
    pkg.write(
        "templates/app.yml",
        pkg.read_string("templates/app.yml")
            .replace("# edited during the update\n", ""),
    );
    edit_during_update(&gh, &pkg, &update, "patches/namespace.patch");
}

/// The same with `--keep-conflicts`, where the update stops on a conflict and commits the
/// file with its markers instead: the edit made after the hand-edit check is not replaced by
/// the markers either.
#[test]
fn an_edit_made_during_an_update_that_keeps_conflicts_stops_its_commit() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0"]);
    let moved = manifest("v1.1.0").replace("namespace: default", "namespace: elsewhere");
    gh.repo(REPO)
        .file_at("v1.1.0", FILE, moved)
        .release("v1.1.0", |r| r);
    let pkg = package("v1.0.0");
    Revendor::new(pkg.path(), &gh)
        .run(&["update", "--to", "v1.0.0"])
        .expect(0);
    let update = ["update", "--to", "v1.1.0", "--keep-conflicts"];
    edit_during_update(&gh, &pkg, &update, "templates/app.yml");
}
