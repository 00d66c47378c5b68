//! issue 18: a Helm chart from an HTTP chart repository as an upstream. The charts are
//! packaged and indexed by Helm's own engine and served by the test HTTP server; revendor's
//! pristine copy must equal what Helm's own `pull --untar` writes, and everything a GitHub
//! directory gets (patches, rewrites, the lock, `check --online`, offline render) works.

use crate::support;

use std::collections::BTreeMap;

use support::chart_repo::ChartRepo;
use support::{GitHub, Revendor, TempPackage};

const PATCH: &str = "--- a/values.yaml\n+++ b/values.yaml\n@@ -1,2 +1,2 @@\n-replicas: 1\n+replicas: 3\n image: demo\n";

/// The demo chart at `version`, with `appVersion` `app`: 1.1.0 adds a template and drops one.
fn demo(version: &str, app: &str) -> BTreeMap<String, Vec<u8>> {
    let mut files: BTreeMap<String, Vec<u8>> = [
        (
            "Chart.yaml",
            format!("apiVersion: v2\nname: demo\nversion: {version}\nappVersion: \"{app}\"\nhome: https://demo.example\n"),
        ),
        ("values.yaml", "replicas: 1\nimage: demo\n".into()),
        ("templates/deploy.yaml", "kind: Deployment\n".into()),
        ("tests/test-connection.yaml", "kind: Pod\n".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.into_bytes()))
    .collect();
    let extra = if version == "1.0.0" {
        "templates/old.yaml"
    } else {
        "templates/new.yaml"
    };
    files.insert(extra.into(), format!("kind: {version}\n").into_bytes());
    files
}

fn vendor_toml(repo: &str) -> String {
    format!(
        "[upstream]\nhelm = \"{repo}\"\nchart = \"demo\"\nversion = \"1.0.0\"\ntrack = \"1\"\n\n\
         [[vendor]]\nfrom = \"./\"\nto = \"charts/demo/\"\nexclude = [\"tests/**\"]\n\n\
         [[patch]]\nname = \"replicas\"\nfile = \"patches/replicas.patch\"\napplies-to = \"vendor\"\nstrip = 1\n\n\
         [[rewrite]]\nfile = \"images/demo/Dockerfile\"\ndockerfile-arg = \"VERSION\"\nwith = \"v{{app-version}}-chart-{{version}}\"\n"
    )
}

/// A package vendoring the demo chart from `repo`, not yet adopted.
fn package(repo: &ChartRepo) -> TempPackage {
    let pkg = TempPackage::new();
    pkg.write("vendor.toml", vendor_toml(&repo.url()))
        .write("patches/replicas.patch", PATCH)
        .write("images/demo/Dockerfile", "ARG VERSION=v0\nFROM scratch\n");
    pkg
}

fn dockerfile(pkg: &TempPackage) -> String {
    pkg.read_string("images/demo/Dockerfile")
}

/// The pristine copies: `upstream/` without the lock.
fn pristine(pkg: &TempPackage) -> BTreeMap<String, Vec<u8>> {
    let mut files = support::package::read_tree(&pkg.join("upstream"));
    files.remove("lock.toml");
    files
}

#[test]
fn a_chart_is_vendored_as_helm_untars_it_then_updated_patched_and_rendered_offline() {
    let gh = GitHub::start();
    let repo = ChartRepo::start();
    repo.publish_files("demo", &demo("1.0.0", "2.0.0"));
    let pkg = package(&repo);
    let rv = Revendor::new(pkg.path(), &gh);

    rv.run(&["update"]).expect(0);
    // The pristine copy is Helm's own untar, less what `exclude` drops.
    let mut helms = repo.helm_pull("demo", "1.0.0");
    helms.remove("tests/test-connection.yaml");
    assert_eq!(pristine(&pkg), helms);
    let values = pkg.read_string("charts/demo/values.yaml");
    assert_eq!(values, "replicas: 3\nimage: demo\n");
    assert!(!pkg.exists("charts/demo/tests/test-connection.yaml"));
    assert_eq!(
        dockerfile(&pkg),
        "ARG VERSION=v2.0.0-chart-1.0.0\nFROM scratch\n"
    );
    let lock = pkg.read_string("upstream/lock.toml");
    let digest =
        support::github::sha256_hex(&std::fs::read(repo.dir().join("demo-1.0.0.tgz")).unwrap());
    for expected in [
        format!("source = \"helm:{}#demo\"", repo.url()),
        format!("archive = \"{}/demo-1.0.0.tgz\"", repo.url()),
        format!("archive-sha256 = \"{digest}\""),
        "app-version = \"2.0.0\"".to_owned(),
    ] {
        assert!(lock.contains(&expected), "{expected}\n{lock}");
    }
    rv.run(&["check"]).expect(0);

    // A newer chart: `check --online` says so, `update` moves to it with the patch.
    repo.publish_files("demo", &demo("1.1.0", "2.1.0"));
    let newer = rv.run(&["check", "--online"]).expect(1);
    assert!(newer.all().contains("upstream-newer"), "{}", newer.all());
    assert!(newer.all().contains("1.1.0"), "{}", newer.all());
    rv.run(&["update"]).expect(0);
    assert!(pkg.exists("charts/demo/templates/new.yaml"));
    assert!(!pkg.exists("charts/demo/templates/old.yaml"));
    assert_eq!(
        pkg.read_string("charts/demo/values.yaml"),
        "replicas: 3\nimage: demo\n"
    );
    assert_eq!(
        dockerfile(&pkg),
        "ARG VERSION=v2.1.0-chart-1.1.0\nFROM scratch\n"
    );
    let mut helms = repo.helm_pull("demo", "1.1.0");
    helms.remove("tests/test-connection.yaml");
    assert_eq!(pristine(&pkg), helms);

    // Nothing new: the nightly's check sends conditional requests only.
    let before = repo.server().requests().len();
    rv.run(&["check", "--online"]).expect(0);
    let asked = &repo.server().requests()[before..];
    assert!(!asked.is_empty());
    assert!(
        asked.iter().all(|r| r.header("if-none-match").is_some()),
        "{:?}",
        asked.iter().map(|r| &r.target).collect::<Vec<_>>()
    );

    // The repository gone and the cache empty: render and check still work.
    drop(repo);
    std::fs::remove_dir_all(rv.cache()).unwrap();
    std::fs::remove_file(pkg.join("charts/demo/values.yaml")).unwrap();
    rv.run(&["--offline", "render"]).expect(0);
    assert_eq!(
        pkg.read_string("charts/demo/values.yaml"),
        "replicas: 3\nimage: demo\n"
    );
    rv.run(&["--offline", "check"]).expect(0);
}

#[test]
fn an_archive_that_is_not_the_indexed_one_fails_the_update_and_writes_nothing() {
    let gh = GitHub::start();
    let repo = ChartRepo::start();
    let archive = repo.publish_files("demo", &demo("1.0.0", "2.0.0"));
    let pkg = package(&repo);
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update"]).expect(0);
    let before = pkg.snapshot();

    // 1.1.0's archive replaced after indexing: its digest no longer matches.
    let newer = repo.publish_files("demo", &demo("1.1.0", "2.1.0"));
    let scratch = tempfile::tempdir().unwrap();
    support::chart_repo::write_chart(&scratch.path().join("demo"), &demo("1.1.0", "9.9.9"));
    let other = support::chart_repo::helm(&[
        "package",
        scratch.path().join("demo").to_str().unwrap(),
        scratch.path().to_str().unwrap(),
    ]);
    std::fs::copy(other, repo.dir().join(&newer)).unwrap();
    let run = rv.run(&["update"]).expect(3);
    assert!(
        run.stderr.contains("index's digest of demo 1.1.0"),
        "{}",
        run.stderr
    );
    assert_eq!(pkg.snapshot(), before, "nothing written");
    assert!(std::fs::metadata(repo.dir().join(archive)).is_ok());
}

#[test]
fn a_bare_track_means_its_patch_releases_and_prereleases_need_opt_in() {
    let gh = GitHub::start();
    let repo = ChartRepo::start();
    for v in ["1.0.0", "1.0.5", "1.1.0", "1.0.6-rc.1"] {
        repo.publish_files("demo", &demo(v, "2.0.0"));
    }
    let pkg = package(&repo);
    let toml = vendor_toml(&repo.url()).replace("track = \"1\"", "track = \"1.0\"");
    pkg.write("vendor.toml", &toml);
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update"]).expect(0);
    rv.run(&["update"]).expect(0);
    assert!(
        pkg.read_string("upstream/lock.toml")
            .contains("version = \"1.0.5\"")
    );
    pkg.write(
        "vendor.toml",
        toml.replace(
            "track = \"1.0\"",
            "track = \"1.0\"\nallow-prerelease = true",
        ),
    );
    rv.run(&["update"]).expect(0);
    assert!(
        pkg.read_string("upstream/lock.toml")
            .contains("version = \"1.0.6-rc.1\"")
    );
}
