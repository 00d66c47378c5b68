//! `revendor check` on a small synthetic package served by the GitHub
//! stand-in: usage and exit codes, each offline id on a mutation made for
//! it, the JSON document, and `image-exists` against the real registry.

use crate::support;

#[allow(dead_code)]
use crate::registry_support;

use revendor::image::MediaType;
use serde_json::Value;
use support::daemonset::{
    DOCKERFILE, FILE, LABELLED, LOCK, PATCH, PRISTINE, REPO, TEMPLATE, VendorToml,
};
use support::{GitHub, Revendor, Run, TempPackage};

use registry_support::content::{image, multi_arch};
use registry_support::{Auth, Registry, have_registry};

/// The package's vendor.toml: its image rewritten, built, pinned and held to a contract.
fn vendor_toml() -> String {
    VendorToml::new()
        .dockerfile_rewrite()
        .image()
        .pin()
        .contract()
        .text()
}

fn digest(fill: char) -> String {
    format!("sha256:{}", fill.to_string().repeat(64))
}

fn pinned(digest: &str) -> String {
    format!("ghcr.io/example/app:v1@{digest}")
}

/// The upstream with releases `tags`.
fn upstream(tags: &[&str]) -> GitHub {
    let gh = GitHub::start();
    for tag in tags {
        gh.repo(REPO)
            .file_at(tag, FILE, LABELLED.text())
            .file_at(tag, "go.mod", "module example.org/app\n\ngo 1.25.0\n")
            .release(tag, |r| r);
    }
    gh
}

/// The package at v1.0.0, adopted, its image pinned to `pin`.
fn adopted(gh: &GitHub, pin: &str, env: &[(&str, &str)]) -> (TempPackage, Revendor) {
    let pkg = TempPackage::new();
    pkg.write("vendor.toml", vendor_toml())
        .write(PATCH, LABELLED.namespace_patch())
        .write(
            DOCKERFILE,
            format!(
                "FROM golang:1.26@{} AS builder\nARG VERSION=v1.0.0\nRUN go build ./...\n",
                digest('0')
            ),
        )
        .write(TEMPLATE, LABELLED.rendered(pin));
    let mut rv = Revendor::new(pkg.path(), gh);
    for (k, v) in env {
        rv = rv.env(k, v);
    }
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    (pkg, rv)
}

fn findings(run: &Run) -> Vec<(String, String, String, usize)> {
    let doc: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", run.stdout, run.stderr));
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap().to_owned(),
                f["severity"].as_str().unwrap().to_owned(),
                f["file"].as_str().unwrap().to_owned(),
                f["line"].as_u64().unwrap() as usize,
            )
        })
        .collect()
}

fn json(rv: &Revendor, args: &[&str], code: i32) -> Run {
    let mut all = vec!["check", "--format", "json"];
    all.extend_from_slice(args);
    rv.run(&all).expect(code)
}

fn one(id: &str, severity: &str, file: &str, line: usize) -> Vec<(String, String, String, usize)> {
    vec![(id.to_owned(), severity.to_owned(), file.to_owned(), line)]
}

/// Rewrites the lock's sha256 `old` to that of `bytes`, as if the lock had
/// vouched for them.
fn vouch(pkg: &TempPackage, old: &[u8], new: &[u8]) {
    let lock = pkg.read_string(LOCK);
    let (old, new) = (
        support::github::sha256_hex(old),
        support::github::sha256_hex(new),
    );
    assert!(lock.contains(&old));
    pkg.write(LOCK, lock.replace(&old, &new));
}

#[test]
fn a_clean_package_has_no_findings_and_the_design_json() {
    let gh = upstream(&["v1.0.0"]);
    let (_pkg, rv) = adopted(&gh, &pinned(&digest('a')), &[]);
    let run = json(&rv, &[], 0);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["findings"], serde_json::json!([]));
    assert_eq!(
        doc["counts"],
        serde_json::json!({"error": 0, "warning": 0, "info": 0})
    );
    assert!(
        doc["package"]
            .as_str()
            .unwrap()
            .starts_with("revendor-package-")
    );
}

#[test]
fn usage_errors_exit_2() {
    let gh = upstream(&["v1.0.0"]);
    let pkg = TempPackage::new();
    pkg.write("vendor.toml", vendor_toml())
        .write(PATCH, LABELLED.namespace_patch());
    let rv = Revendor::new(pkg.path(), &gh);
    let run = rv.run(&["check"]).expect(2);
    assert!(
        run.stderr.contains("no upstream/lock.toml"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("help: run `revendor update` once"));

    let (_pkg, rv) = adopted(&gh, &pinned(&digest('a')), &[]);
    let run = rv.run(&["check", "--fix"]).expect(2);
    assert!(
        run.stderr.contains("`--fix` needs `--online`"),
        "{}",
        run.stderr
    );
    let run = rv.run(&["--offline", "check", "--online"]).expect(2);
    assert!(run.stderr.contains("contradict"), "{}", run.stderr);
}

#[test]
fn a_network_failure_online_exits_3() {
    let Some((_registry, gh, _pkg, rv)) = with_registry(push_index) else {
        return;
    };
    gh.fail_next("/repos/example/app/releases", 500, 20);
    let run = rv.run(&["check", "--online"]).expect(3);
    assert!(
        run.stderr.starts_with("error: ") && run.stderr.contains("/repos/example/app/releases"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_edited_pristine_copy_is_only_lock_integrity() {
    let gh = upstream(&["v1.0.0"]);
    let (pkg, rv) = adopted(&gh, &pinned(&digest('a')), &[]);
    pkg.write(PRISTINE, LABELLED.text().replace("64Mi", "65Mi"));
    let run = json(&rv, &[], 1);
    assert_eq!(findings(&run), one("lock-integrity", "error", PRISTINE, 1));
}

#[test]
fn a_missing_pristine_copy_comes_from_the_cache_or_online() {
    let Some((registry, gh, pkg, rv)) = with_registry(push_index) else {
        return;
    };
    pkg.remove(PRISTINE);
    json(&rv, &[], 0);
    let fresh = Revendor::new(pkg.path(), &gh).env(
        "REVENDOR_REGISTRY_MIRRORS",
        &format!("ghcr.io={}", registry.host),
    );
    let run = json(&fresh, &[], 1);
    assert_eq!(findings(&run), one("lock-integrity", "error", PRISTINE, 1));
    let run = json(&fresh, &["--online"], 0);
    assert_eq!(findings(&run), []);
}

#[test]
fn an_edited_patch_is_only_lock_integrity() {
    let gh = upstream(&["v1.0.0"]);
    let (pkg, rv) = adopted(&gh, &pinned(&digest('a')), &[]);
    let patch = pkg.read_string(PATCH);
    pkg.write(PATCH, format!("A note above the diff.\n{patch}"));
    let run = json(&rv, &[], 1);
    assert_eq!(findings(&run), one("lock-integrity", "error", PATCH, 1));
}

#[test]
fn a_hunk_at_an_offset_is_a_warning_at_its_line() {
    let gh = upstream(&["v1.0.0"]);
    let (pkg, rv) = adopted(&gh, &pinned(&digest('a')), &[]);
    let patch = pkg.read(PATCH);
    let moved = String::from_utf8(patch.clone())
        .unwrap()
        .replace("@@ -2,7 +2,7 @@", "@@ -4,7 +4,7 @@");
    pkg.write(PATCH, &moved);
    vouch(&pkg, &patch, moved.as_bytes());
    let run = json(&rv, &[], 0);
    assert_eq!(findings(&run), one("patch-offset", "warning", PATCH, 3));
    let human = rv.run(&["check"]).expect(0);
    assert!(
        human.stdout.contains(
            "patches/namespace.patch:3: warning: patch `namespace` applies to `templates/app.yml` only with offset (hunk 1 -2) (fix: run `revendor patch refresh namespace`)"
        ),
        "{}",
        human.stdout
    );
}

#[test]
fn checks_table_raises_lowers_and_allows_ids() {
    let gh = upstream(&["v1.0.0"]);
    let (pkg, rv) = adopted(&gh, &pinned(&digest('a')), &[]);
    let patch = pkg.read(PATCH);
    let moved = String::from_utf8(patch.clone())
        .unwrap()
        .replace("@@ -2,7 +2,7 @@", "@@ -4,7 +4,7 @@");
    pkg.write(PATCH, &moved);
    vouch(&pkg, &patch, moved.as_bytes());
    let toml = pkg.read_string("vendor.toml");

    pkg.write(
        "vendor.toml",
        format!("{toml}\n[checks]\npatch-offset = \"error\"\n"),
    );
    let run = json(&rv, &[], 1);
    assert_eq!(findings(&run), one("patch-offset", "error", PATCH, 3));

    pkg.write(
        "vendor.toml",
        format!("{toml}\n[checks]\npatch-offset = \"allow\"\n"),
    );
    let run = json(&rv, &[], 0);
    assert_eq!(findings(&run), vec![]);

    pkg.write(
        "vendor.toml",
        format!("{toml}\n[checks]\npatch-ofset = \"allow\"\n"),
    );
    let run = rv.run(&["check"]).expect(2);
    assert!(
        run.stderr
            .contains("`patch-ofset`, which is not a check id"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_change_upstream_already_has_is_patch_upstreamed() {
    let gh = upstream(&["v1.0.0"]);
    let (pkg, rv) = adopted(&gh, &pinned(&digest('a')), &[]);
    let old = pkg.read(PRISTINE);
    let merged = LABELLED
        .text()
        .replace("namespace: default", "namespace: cozy-app");
    pkg.write(PRISTINE, &merged);
    vouch(&pkg, &old, merged.as_bytes());
    let run = json(&rv, &[], 1);
    assert_eq!(findings(&run), one("patch-upstreamed", "error", PATCH, 3));
}

#[test]
fn a_patch_that_no_longer_applies_is_render_drift_at_its_hunk() {
    let gh = upstream(&["v1.0.0"]);
    let (pkg, rv) = adopted(&gh, &pinned(&digest('a')), &[]);
    let old = pkg.read(PRISTINE);
    let changed = LABELLED
        .text()
        .replace("namespace: default", "namespace: other");
    pkg.write(PRISTINE, &changed);
    vouch(&pkg, &old, changed.as_bytes());
    let run = json(&rv, &[], 1);
    assert_eq!(findings(&run), one("render-drift", "error", PATCH, 3));
}

#[test]
fn a_missing_rendered_file_is_one_render_drift() {
    let gh = upstream(&["v1.0.0"]);
    let (pkg, rv) = adopted(&gh, &pinned(&digest('a')), &[]);
    pkg.remove(TEMPLATE);
    let run = json(&rv, &[], 1);
    assert_eq!(findings(&run), one("render-drift", "error", TEMPLATE, 1));
}

#[test]
fn a_stale_version_is_version_sync_at_its_line() {
    let gh = upstream(&["v1.0.0"]);
    let (pkg, rv) = adopted(&gh, &pinned(&digest('a')), &[]);
    let text = pkg.read_string(DOCKERFILE);
    pkg.write(DOCKERFILE, text.replace("VERSION=v1.0.0", "VERSION=v0.9.0"));
    let run = json(&rv, &[], 1);
    assert_eq!(findings(&run), one("version-sync", "error", DOCKERFILE, 2));
    pkg.write(DOCKERFILE, text);
    let toml = pkg.read_string("vendor.toml");
    pkg.write(
        "vendor.toml",
        toml.replace("version = \"v1.0.0\"", "version = \"v1.1.0\""),
    );
    let run = json(&rv, &[], 1);
    assert_eq!(
        findings(&run),
        one("version-sync", "error", "vendor.toml", 3)
    );
}

#[test]
fn the_pinned_repository_in_a_script_block_is_image_pin() {
    let gh = upstream(&["v1.0.0"]);
    let (pkg, rv) = adopted(&gh, &pinned(&digest('a')), &[]);
    let text = pkg.read_string(TEMPLATE);
    let script = "          command:\n            - sh\n            - -c\n            - |\n              crictl pull ghcr.io/example/app:v1\n";
    pkg.write(TEMPLATE, format!("{text}{script}"));
    rv.run(&["update", "--to", "v1.0.0", "--adopt-edits"])
        .expect(0);
    let run = json(&rv, &[], 1);
    assert_eq!(findings(&run), one("image-pin", "error", TEMPLATE, 21));
}

#[test]
fn a_container_without_a_memory_limit_breaks_the_contract() {
    let gh = upstream(&["v1.0.0"]);
    let (pkg, rv) = adopted(&gh, &pinned(&digest('a')), &[]);
    let text = pkg.read_string(TEMPLATE);
    let sidecar = "        - name: sidecar\n          image: example.org/other:1\n";
    pkg.write(TEMPLATE, format!("{text}{sidecar}"));
    rv.run(&["update", "--to", "v1.0.0", "--adopt-edits"])
        .expect(0);
    let run = json(&rv, &[], 1);
    assert_eq!(
        findings(&run),
        one("contract:memory", "error", TEMPLATE, 17)
    );
}

/// Issue 22: Renovate moves the builder from golang:1.26 to 1.27. With
/// `go = ">=1.26"` that is no drift; an exact `go = "1.26"` keeps meaning
/// that minor only.
#[test]
fn a_newer_builder_is_clean_under_a_go_minimum_and_drift_under_an_exact_go() {
    let gh = upstream(&["v1.0.0"]);
    let (pkg, rv) = adopted(&gh, &pinned(&digest('a')), &[]);
    let dockerfile = pkg.read_string(DOCKERFILE);
    pkg.write(
        DOCKERFILE,
        dockerfile.replace("golang:1.26@", "golang:1.27@"),
    );
    let run = json(&rv, &[], 1);
    assert_eq!(findings(&run), one("builder-go", "error", DOCKERFILE, 1));
    let toml = pkg.read_string("vendor.toml");
    assert!(toml.contains("go = \"1.26\""));
    pkg.write(
        "vendor.toml",
        toml.replace("go = \"1.26\"", "go = \">=1.26\""),
    );
    let run = json(&rv, &[], 0);
    assert_eq!(findings(&run), []);
    // Older than the minimum is still drift, said as a minimum.
    pkg.write(
        DOCKERFILE,
        dockerfile.replace("golang:1.26@", "golang:1.25@"),
    );
    let human = rv.run(&["check"]).expect(1);
    assert!(
        human
            .stdout
            .contains("the builder uses golang:1.25, expected Go 1.26 or later"),
        "{}",
        human.stdout
    );
}

/// A real registry read as ghcr.io through a mirror; `rv` checks online.
fn with_registry(
    pin: impl Fn(&Registry) -> String,
) -> Option<(Registry, GitHub, TempPackage, Revendor)> {
    with_registry_auth(Auth::Anonymous, pin)
}

/// [`with_registry`] behind `auth`, with no credentials in DOCKER_CONFIG.
fn with_registry_auth(
    auth: Auth,
    pin: impl Fn(&Registry) -> String,
) -> Option<(Registry, GitHub, TempPackage, Revendor)> {
    if !have_registry("image-exists") {
        return None;
    }
    let registry = Registry::start(auth);
    let gh = upstream(&["v1.0.0"]);
    let reference = pin(&registry);
    let mirrors = format!("ghcr.io={}", registry.host);
    let (pkg, rv) = adopted(&gh, &reference, &[("REVENDOR_REGISTRY_MIRRORS", &mirrors)]);
    let rv = rv.env("DOCKER_CONFIG", &pkg.join(".docker").display().to_string());
    Some((registry, gh, pkg, rv))
}

/// Pushes a two-platform index and pins it.
fn push_index(r: &Registry) -> String {
    let index = multi_arch(&["linux/amd64", "linux/arm64"], "ok", MediaType::OciIndex);
    pinned(&r.push_multi_arch("example/app", "v1", &index).to_string())
}

#[test]
fn image_exists_accepts_a_multi_platform_index() {
    let Some((_registry, _gh, _pkg, rv)) = with_registry(push_index) else {
        return;
    };
    let run = json(&rv, &["--online"], 0);
    assert_eq!(findings(&run), []);
}

#[test]
fn image_exists_reports_a_digest_that_does_not_resolve() {
    let Some((_registry, _gh, _pkg, rv)) = with_registry(|_| pinned(&digest('b'))) else {
        return;
    };
    let run = json(&rv, &["--online"], 1);
    assert_eq!(findings(&run), one("image-exists", "error", TEMPLATE, 13));
    let human = rv.run(&["check", "--online"]).expect(1);
    assert!(
        human.stdout.contains("does not resolve"),
        "{}",
        human.stdout
    );
}

/// Issue "One owner for each concept": image-exists flattened the
/// registry's typed error into a string, so the "log in" hint was lost.
#[test]
fn image_exists_keeps_the_registrys_error_its_cause_and_its_hint() {
    let Some((_registry, _gh, _pkg, rv)) = with_registry_auth(Auth::Htpasswd, push_index) else {
        return;
    };
    let run = rv.run(&["check", "--online"]).expect(3);
    let lines: Vec<&str> = run.stderr.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("error: failed to verify the pinned image `"))
        .unwrap_or_else(|| panic!("{}", run.stderr));
    assert_eq!(lines.get(at + 1), Some(&"Caused by:"), "{}", run.stderr);
    assert!(
        lines[at + 2].starts_with("  not authorized for `"),
        "{}",
        run.stderr
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("  help: log in to the registry (docker login)")),
        "{}",
        run.stderr
    );
}

#[test]
fn image_exists_reports_a_single_platform_image() {
    let Some((_registry, _gh, _pkg, rv)) = with_registry(|r| {
        let single = image("linux/amd64", "single");
        pinned(&r.push_image("example/app", "v1", &single).to_string())
    }) else {
        return;
    };
    let human = rv.run(&["check", "--online"]).expect(1);
    assert!(
        human.stdout.contains("is not the index it should be"),
        "{}",
        human.stdout
    );
}

#[test]
fn a_newer_release_is_reported_with_its_dry_run() {
    let Some((_registry, gh, _pkg, rv)) = with_registry(push_index) else {
        return;
    };
    for tag in ["v1.1.0", "v2.0.0"] {
        gh.repo(REPO)
            .file_at(tag, FILE, LABELLED.text())
            .release(tag, |r| r);
    }
    let run = rv.run(&["check", "--online", "--format", "json"]).expect(1);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    let found = doc["findings"].as_array().unwrap();
    let messages: Vec<(&str, &str)> = found
        .iter()
        .filter(|f| f["id"] == "upstream-newer")
        .map(|f| {
            (
                f["severity"].as_str().unwrap(),
                f["message"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        messages,
        [
            (
                "info",
                "v2.0.0 is newer than the vendored v1.0.0, outside track `>=1.0.0, <2.0.0`"
            ),
            (
                "error",
                "v1.1.0 is newer than the vendored v1.0.0 (inside track `>=1.0.0, <2.0.0`); dry run: namespace on templates/app.yml: exact"
            ),
        ]
    );
    let dry_runs: Vec<&Value> = found.iter().map(|f| &f["dry_run"]).collect();
    assert_eq!(
        dry_runs,
        [
            &Value::Null,
            &serde_json::json!({
                "upstream": null,
                "from": "v1.0.0",
                "to": "v1.1.0",
                "outcome": "applies",
                "reason": null,
                "patches": [{
                    "patch": "namespace",
                    "target": "templates/app.yml",
                    "outcome": "exact",
                    "result": "exact",
                }],
                "command": "revendor update --to v1.1.0",
            }),
        ]
    );
    assert!(
        found
            .iter()
            .filter(|f| f["id"] != "upstream-newer")
            .all(|f| f.get("dry_run").is_none())
    );
}

/// Issue 22: a patch that would not re-apply makes the structured dry run a
/// `conflict` whose command keeps the conflicts, as the fix says.
#[test]
fn a_newer_release_that_conflicts_has_a_conflict_dry_run() {
    let Some((_registry, gh, _pkg, rv)) = with_registry(push_index) else {
        return;
    };
    let moved = LABELLED
        .text()
        .replace("namespace: default", "namespace: upstream");
    gh.repo(REPO)
        .file_at("v1.1.0", FILE, moved)
        .release("v1.1.0", |r| r);
    let run = json(&rv, &["--online"], 1);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    let newer = upstream_newer(&doc);
    let dry_run = &newer["dry_run"];
    assert_eq!(dry_run["outcome"], "conflict", "{dry_run:#}");
    assert_eq!(dry_run["patches"][0]["outcome"], "conflict");
    assert_eq!(dry_run["patches"][0]["target"], TEMPLATE);
    assert_eq!(
        dry_run["command"],
        "revendor update --to v1.1.0 --keep-conflicts"
    );
    assert_eq!(
        newer["fix"],
        format!(
            "run `revendor update --to v1.1.0 --keep-conflicts`, resolve the markers it writes in {TEMPLATE}, then run `revendor update --continue`"
        )
    );
}

/// Issue 22: a release whose files do not come is still reported, its dry
/// run `not-done` with the reason, beside the `unreachable` finding.
#[test]
fn a_newer_release_whose_files_do_not_come_has_a_not_done_dry_run() {
    let Some((_registry, gh, _pkg, rv)) = with_registry(push_index) else {
        return;
    };
    gh.repo(REPO)
        .file_at("v1.1.0", FILE, LABELLED.text())
        .release("v1.1.0", |r| r);
    gh.cut_next(&format!("{}/{REPO}/refs/tags/v1.1.0/", gh.raw_url()), 100);
    let run = json(&rv, &["--online"], 3);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    let newer = upstream_newer(&doc);
    assert_eq!(
        newer["dry_run"],
        serde_json::json!({
            "upstream": null,
            "from": "v1.0.0",
            "to": "v1.1.0",
            "outcome": "not-done",
            "reason": "the upstream did not answer",
            "patches": [],
            "command": "revendor update --to v1.1.0",
        })
    );
    assert!(
        doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["id"] == "unreachable"),
        "{}",
        run.stdout
    );
}

/// The one `upstream-newer` error of a check document.
fn upstream_newer(doc: &Value) -> &Value {
    let errors: Vec<&Value> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "upstream-newer" && f["severity"] == "error")
        .collect();
    assert_eq!(errors.len(), 1, "{doc:#}");
    errors[0]
}

/// The nightly workflow decides with scripts/triage-findings, which reads
/// this finding's structured dry run: the real report must give it the
/// release to update to, as the one job of its matrix.
#[test]
fn the_nightly_workflow_takes_a_release_every_patch_re_applies_to() {
    let Some((_registry, gh, pkg, rv)) = with_registry(push_index) else {
        return;
    };
    gh.repo(REPO)
        .file_at("v1.1.0", FILE, LABELLED.text())
        .release("v1.1.0", |r| r);
    let run = rv.run(&["check", "--online", "--format", "json"]).expect(1);
    pkg.write("check.json", &run.stdout);
    let triage = std::process::Command::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scripts/triage-findings"
    ))
    .args(["nightly", "check.json", "1"])
    .current_dir(pkg.path())
    .env_remove("GITHUB_OUTPUT")
    .env_remove("GITHUB_STEP_SUMMARY")
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&triage.stdout);
    assert!(
        triage.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&triage.stderr)
    );
    let outputs: Vec<&str> = stdout.lines().collect();
    assert_eq!(outputs.len(), 4, "{stdout}");
    assert_eq!(outputs[0], "errors=0");
    let updates: Value =
        serde_json::from_str(outputs[1].strip_prefix("updates=").unwrap()).unwrap();
    assert_eq!(updates[0]["path"], ".");
    assert_eq!(updates[0]["to"], "v1.1.0");
    assert_eq!(updates[0]["upstream"], Value::Null);
    assert_eq!(updates.as_array().unwrap().len(), 1);
    assert_eq!(outputs[3], "attention=0");
}

#[test]
fn check_help_names_its_flags() {
    let gh = upstream(&["v1.0.0"]);
    let pkg = TempPackage::new();
    let run = Revendor::new(pkg.path(), &gh)
        .run(&["check", "--help"])
        .expect(0);
    assert!(run.stdout.contains("--online"), "{}", run.stdout);
    assert!(run.stdout.contains("--fix"), "{}", run.stdout);
}

/// Issue 9: a vendor.toml error is reported in the asked format too: the
/// JSON document with the error as a finding-like entry, and an `::error`
/// annotation at vendor.toml's line (plus the step summary); exit 2.
#[test]
fn a_vendor_toml_error_is_reported_in_json_and_github_formats() {
    let gh = upstream(&["v1.0.0"]);
    let (pkg, rv) = adopted(&gh, &pinned(&digest('a')), &[]);
    let toml = pkg.read_string("vendor.toml");
    pkg.write(
        "vendor.toml",
        toml.replace("tag = \"v1\"", "tag = \"v1\"\ntagg = \"v2\""),
    );
    let line = 1 + pkg
        .read_string("vendor.toml")
        .lines()
        .position(|l| l.starts_with("tagg"))
        .unwrap();

    let run = rv.run(&["check", "--format", "json"]).expect(2);
    let doc: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", run.stdout, run.stderr));
    assert_eq!(doc["findings"], serde_json::json!([]));
    assert_eq!(
        doc["counts"],
        serde_json::json!({"error": 0, "warning": 0, "info": 0})
    );
    let error = &doc["error"];
    assert_eq!(
        (
            &error["kind"],
            &error["exit_code"],
            &error["file"],
            &error["line"]
        ),
        (
            &Value::from("configuration"),
            &Value::from(2),
            &Value::from("vendor.toml"),
            &Value::from(line)
        ),
        "{}",
        run.stdout
    );
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("unknown key `tagg`"),
        "{}",
        run.stdout
    );
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);

    let summary = pkg.join("summary.md");
    let run = rv
        .env("GITHUB_WORKSPACE", &pkg.path().display().to_string())
        .env("GITHUB_STEP_SUMMARY", &summary.display().to_string())
        .run(&["check", "--format", "github"])
        .expect(2);
    assert!(
        run.stdout.starts_with(&format!(
            "::error file=vendor.toml,line={line},title=revendor::"
        )) && run.stdout.contains("unknown key `tagg`"),
        "{}",
        run.stdout
    );
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(
        md.contains(&format!(
            "The check could not run (configuration error) at `vendor.toml:{line}`"
        )),
        "{md}"
    );
}

/// Issue 9, "annotations that land on the diff": `--format github` names
/// files from the repository root (the git root, found from the package,
/// or GITHUB_WORKSPACE), whatever the current directory and `-C` are.
#[test]
fn annotations_are_relative_to_the_git_root_or_github_workspace_with_c_from_elsewhere() {
    let gh = upstream(&["v1.0.0"]);
    let (pkg, _rv) = adopted(&gh, &pinned(&digest('a')), &[]);
    let repo = support::GitRepo::new();
    let files: Vec<(String, Vec<u8>)> = pkg
        .snapshot()
        .into_iter()
        .map(|(path, bytes)| (format!("packages/app/{path}"), bytes))
        .collect();
    repo.commit("the app package", files);
    std::fs::remove_file(repo.path().join("packages/app").join(TEMPLATE)).unwrap();
    let elsewhere = TempPackage::new();
    let package = repo.path().join("packages/app");
    let relative = format!(
        "../{}/packages/app",
        repo.path().file_name().unwrap().to_string_lossy()
    );
    let expected = format!("::error file=packages/app/{TEMPLATE},line=1,title=render-drift::");
    for dir in [package.display().to_string(), relative] {
        let rv = Revendor::new(std::path::Path::new(&dir), &gh);
        let out = rv
            .command(&["check", "--format", "github"])
            .current_dir(elsewhere.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.starts_with(&expected), "-C {dir}: {stdout}");
    }
    let rv = Revendor::new(&package, &gh).env(
        "GITHUB_WORKSPACE",
        &repo.path().join("packages").display().to_string(),
    );
    let out = rv
        .command(&["check", "--format", "github"])
        .current_dir(elsewhere.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with(&format!("::error file=app/{TEMPLATE},line=1,")),
        "{stdout}"
    );
}

/// issue 21: a FIFO named vendor.toml hung `check` until something wrote to
/// it; it is refused at once as not a regular file (exit 2), and nothing is
/// left waiting.
#[test]
fn a_fifo_named_vendor_toml_is_refused_without_waiting() {
    let pkg = TempPackage::new();
    let made = std::process::Command::new("mkfifo")
        .arg(pkg.path().join("vendor.toml"))
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let gh = GitHub::start();
    let run = Revendor::new(pkg.path(), &gh)
        .run(&["check", "--offline"])
        .expect(2);
    assert!(
        run.stderr.contains("vendor.toml") && run.stderr.contains("not a regular file"),
        "{}",
        run.stderr
    );
}

/// issue 21: a FIFO where a patch file is expected was reported as a
/// missing patch; it is named for what it is, at the `file` line, without
/// waiting on it.
#[test]
fn a_fifo_where_a_patch_is_expected_is_not_a_regular_file() {
    let gh = upstream(&["v1.0.0"]);
    let (pkg, rv) = adopted(&gh, &pinned(&digest('a')), &[]);
    let patch = pkg.path().join(PATCH);
    std::fs::remove_file(&patch).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&patch)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let run = rv.run(&["check", "--offline"]).expect(2);
    assert!(
        run.stderr
            .contains("patch file `patches/namespace.patch` is not a regular file"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("does not exist"), "{}", run.stderr);
}

/// Issue 22: cozystack's release promotion rewrites `:v1-rc.1@sha256:X` to
/// `:v1@sha256:X` in the charts. Same digest, another tag: a rename, which
/// `check` warns about (exit 0) and `check --online --fix` records in the
/// lock, after which the check is clean.
#[test]
fn a_promoted_tag_with_the_same_digest_is_a_rename_recorded_by_fix() {
    let index = multi_arch(
        &["linux/amd64", "linux/arm64"],
        "promoted",
        MediaType::OciIndex,
    );
    let Some((registry, _gh, pkg, rv)) = with_registry(|r| {
        let d = r
            .push_multi_arch("example/app", "v1-rc.1", &index)
            .to_string();
        format!("ghcr.io/example/app:v1-rc.1@{d}")
    }) else {
        return;
    };
    let d = registry
        .push_multi_arch("example/app", "v1", &index)
        .to_string();
    let (rc, promoted) = (
        format!("ghcr.io/example/app:v1-rc.1@{d}"),
        format!("ghcr.io/example/app:v1@{d}"),
    );
    let template = pkg.read_string(TEMPLATE);
    assert!(template.contains(&rc), "{template}");
    pkg.write(TEMPLATE, template.replace(&rc, &promoted));

    let run = json(&rv, &[], 0);
    assert_eq!(findings(&run), one("image-pin", "warning", TEMPLATE, 13));
    let human = rv.run(&["check"]).expect(0);
    assert!(
        human.stdout.contains(&format!(
            "`{promoted}` renames the locked `{rc}`: the same digest under tag `v1` (a release promotion), not drift"
        )),
        "{}",
        human.stdout
    );

    let run = json(&rv, &["--online", "--fix"], 0);
    assert_eq!(findings(&run), one("image-pin", "info", LOCK, 1));
    assert!(pkg.read_string(LOCK).contains(&promoted));
    assert!(!pkg.read_string(LOCK).contains(&rc));
    let run = json(&rv, &["--online"], 0);
    assert_eq!(findings(&run), []);
    // render now writes the promoted tag too: nothing to change.
    rv.run(&["render"]).expect(0);
    assert_eq!(pkg.read_string(TEMPLATE), template.replace(&rc, &promoted));
}
