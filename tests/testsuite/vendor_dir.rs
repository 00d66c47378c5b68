//! issue 12: a vendored directory (`from`/`to` ending in `/`) through adoption, an update
//! whose release adds, removes and renames files inside it, patches that create and delete
//! files there, and `check` catching a stray and a missing file.
//!
//! The upstream is synthetic and served by the GitHub stand-in (trees API, raw files); one test
//! serves it from a real git repository by `file://` URL instead.

use crate::support;

use std::collections::BTreeMap;

use support::{GitHub, GitRepo, Revendor, TempPackage};

pub(crate) const REPO: &str = "o/app";

const VALUES_1: &str =
    "replicas: 1\nimage: app:v1.0.0\nresources: {}\nnodeSelector: {}\ntolerations: []\nport: 80\n";
const VALUES_2: &str = "# values of app\nreplicas: 1\nimage: app:v1.1.0\nresources: {}\nnodeSelector: {}\ntolerations: []\nport: 80\n";
const DEPLOY: &str = "kind: Deployment\nname: app\n";
const MOVED: &str = "kind: Service\nname: app\n";

/// The chart at `version`: v1.0.0 has `templates/old.yaml` and `templates/moved.yaml`; v1.1.0
/// removed the first, moved the second to `templates/sub/moved.yaml` and added
/// `templates/new.yaml`. Both have tests (excluded by the package), a symlink and a file
/// outside the directory.
fn chart(version: &str) -> BTreeMap<String, String> {
    let mut files: BTreeMap<String, String> = [
        (
            "charts/app/Chart.yaml",
            format!("name: app\nversion: {version}\n"),
        ),
        ("charts/app/templates/deploy.yaml", DEPLOY.to_string()),
        (
            "charts/app/templates/unwanted.yaml",
            "kind: Unwanted\n".to_string(),
        ),
        (
            "charts/app/templates/tests/t.yaml",
            "kind: Pod\n".to_string(),
        ),
        ("docs/README.md", format!("# app {version}\n")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    if version == "v1.0.0" {
        files.insert("charts/app/values.yaml".into(), VALUES_1.into());
        files.insert("charts/app/templates/old.yaml".into(), "kind: Old\n".into());
        files.insert("charts/app/templates/moved.yaml".into(), MOVED.into());
    } else {
        files.insert("charts/app/values.yaml".into(), VALUES_2.into());
        files.insert("charts/app/templates/sub/moved.yaml".into(), MOVED.into());
        files.insert("charts/app/templates/new.yaml".into(), "kind: New\n".into());
    }
    files
}

pub(crate) fn serve(gh: &GitHub) {
    let repo = gh.repo(REPO);
    for version in ["v1.0.0", "v1.1.0"] {
        for (path, text) in chart(version) {
            repo.file_at(version, &path, text);
        }
        repo.symlink_at(version, "charts/app/link.yaml", "values.yaml")
            .release(version, |r| r);
    }
}

const LOCAL_PATCH: &str = "\
--- a/charts/app/values.yaml
+++ b/charts/app/values.yaml
@@ -3,4 +3,4 @@
 resources: {}
 nodeSelector: {}
 tolerations: []
-port: 80
+port: 8080
--- /dev/null
+++ b/charts/app/templates/extra.yaml
@@ -0,0 +1,2 @@
+kind: ConfigMap
+name: extra
";

const DROP_PATCH: &str = "\
--- a/charts/app/templates/unwanted.yaml
+++ /dev/null
@@ -1 +0,0 @@
-kind: Unwanted
";

fn vendor_toml(upstream: &str) -> String {
    format!(
        "{upstream}version = \"v1.0.0\"\n\n\
         [[vendor]]\nfrom = \"charts/app/\"\nto = \"charts/app/\"\nexclude = [\"templates/tests/**\"]\n\n\
         [[patch]]\nname = \"local\"\nfile = \"patches/local.patch\"\napplies-to = \"vendor\"\n\n\
         [[patch]]\nname = \"drop-unwanted\"\nfile = \"patches/drop.patch\"\napplies-to = \"vendor\"\n"
    )
}

/// What the user committed at v1.0.0: the chart with the patches applied (values.yaml changed,
/// extra.yaml created, unwanted.yaml deleted), nothing of the tests.
pub(crate) fn package(upstream: &str) -> TempPackage {
    let pkg = TempPackage::new();
    pkg.write("vendor.toml", vendor_toml(upstream))
        .write("patches/local.patch", LOCAL_PATCH)
        .write("patches/drop.patch", DROP_PATCH);
    for (path, text) in rendered("v1.0.0") {
        pkg.write(&path, text);
    }
    pkg
}

/// The rendered directory a user expects at `version`.
fn rendered(version: &str) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = chart(version)
        .into_iter()
        .filter(|(p, _)| {
            p.starts_with("charts/app/") && !p.contains("/tests/") && !p.ends_with("unwanted.yaml")
        })
        .collect();
    let values = out.get_mut("charts/app/values.yaml").unwrap();
    *values = values.replace("port: 80\n", "port: 8080\n");
    out.insert(
        "charts/app/templates/extra.yaml".into(),
        "kind: ConfigMap\nname: extra\n".into(),
    );
    out
}

/// The package's files under `charts/` and `upstream/`.
fn tree(pkg: &TempPackage) -> BTreeMap<String, String> {
    pkg.snapshot()
        .into_iter()
        .filter(|(p, _)| p.starts_with("charts/") || p.starts_with("upstream/charts/"))
        .map(|(p, b)| (p, String::from_utf8(b).unwrap()))
        .collect()
}

fn expected_tree(version: &str) -> BTreeMap<String, String> {
    let mut out = rendered(version);
    for (path, text) in chart(version) {
        if path.starts_with("charts/app/") && !path.contains("/tests/") {
            out.insert(format!("upstream/{path}"), text);
        }
    }
    out
}

#[test]
fn adopting_a_directory_locks_every_file_and_check_is_clean() {
    let gh = GitHub::start();
    serve(&gh);
    let pkg = package(&format!("[upstream]\ngithub = \"{REPO}\"\n"));
    let rv = Revendor::new(pkg.path(), &gh);
    let out = rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    assert!(
        out.stdout.contains("adopted the package at v1.0.0"),
        "{}",
        out.stdout
    );
    assert_eq!(tree(&pkg), expected_tree("v1.0.0"));

    let lock = pkg.read_string("upstream/lock.toml");
    let froms: Vec<&str> = lock
        .lines()
        .filter_map(|l| l.strip_prefix("from = \""))
        .collect();
    for f in [
        "charts/app/Chart.yaml\"",
        "charts/app/templates/deploy.yaml\"",
        "charts/app/templates/moved.yaml\"",
        "charts/app/templates/old.yaml\"",
        "charts/app/templates/unwanted.yaml\"",
        "charts/app/values.yaml\"",
    ] {
        assert!(froms.contains(&f), "{f} in\n{lock}");
    }
    assert!(
        !lock.contains("tests/t.yaml") && !lock.contains("link.yaml"),
        "{lock}"
    );
    // Every rendered file has its [[output]] record; the deleted one has none.
    for file in rendered("v1.0.0").keys() {
        assert!(
            lock.contains(&format!("file = \"{file}\"")),
            "{file} in\n{lock}"
        );
    }
    assert!(
        !lock.contains("file = \"charts/app/templates/unwanted.yaml\""),
        "{lock}"
    );

    rv.run(&["check"]).expect(0);
    // One trees request lists the directory; each file is one raw download.
    let requests = gh.requests();
    assert_eq!(
        requests.count("/repos/o/app/git/trees/v1.0.0"),
        1,
        "{:?}",
        requests.targets()
    );
    assert_eq!(
        requests.count("/o/app/archive/"),
        0,
        "{:?}",
        requests.targets()
    );
}

#[test]
fn an_update_brings_added_files_removes_removed_ones_and_follows_renames() {
    let gh = GitHub::start();
    serve(&gh);
    let pkg = package(&format!("[upstream]\ngithub = \"{REPO}\"\n"));
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    gh.clear_requests();

    let out = rv.run(&["update"]).expect(0);
    let said = &out.stdout;
    assert!(said.contains("upstream: v1.0.0 -> v1.1.0"), "{said}");
    assert!(
        said.contains("upstream added charts/app/templates/new.yaml\n"),
        "{said}"
    );
    assert!(
        said.contains("upstream removed charts/app/templates/old.yaml\n"),
        "{said}"
    );
    assert!(
        said.contains(
            "upstream renamed charts/app/templates/moved.yaml -> charts/app/templates/sub/moved.yaml\n"
        ),
        "{said}"
    );
    assert_eq!(
        tree(&pkg),
        expected_tree("v1.1.0"),
        "exactly the files a user expects"
    );
    assert!(
        !pkg.dirs().iter().any(|d| d.ends_with("templates/old")),
        "no empty directory is left"
    );
    // The patch came back exact at v1.1.0, its created file unchanged.
    let patch = pkg.read_string("patches/local.patch");
    assert!(patch.contains("@@ -4,4 +4,4 @@\n"), "{patch}");
    assert!(patch.ends_with("+++ b/charts/app/templates/extra.yaml\n@@ -0,0 +1,2 @@\n+kind: ConfigMap\n+name: extra\n"), "{patch}");
    assert_eq!(pkg.read_string("patches/drop.patch"), DROP_PATCH);

    // Only what changed was downloaded: files with a blob id the cache had were not.
    let requests = gh.requests();
    let raw: Vec<&str> = requests
        .matching(&gh.raw_url())
        .iter()
        .map(|r| r.target.as_str())
        .collect();
    assert_eq!(
        raw,
        [
            "/o/app/refs/tags/v1.1.0/charts/app/Chart.yaml",
            "/o/app/refs/tags/v1.1.0/charts/app/templates/new.yaml",
            "/o/app/refs/tags/v1.1.0/charts/app/values.yaml",
        ]
    );

    let json = rv
        .run(&["--format", "json", "update", "--dry-run"])
        .expect(0);
    assert!(json.stdout.contains("\"added\": []"), "{}", json.stdout);
    rv.run(&["check"]).expect(0);
}

#[test]
fn check_catches_a_stray_and_a_missing_file_and_leaves_the_users_own_alone() {
    let gh = GitHub::start();
    serve(&gh);
    let pkg = package(&format!("[upstream]\ngithub = \"{REPO}\"\n"));
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);

    pkg.write("charts/app/templates/stray.yaml", "kind: Stray\n")
        .write(
            "charts/app/templates/tests/mine.yaml",
            "excluded: the user's own\n",
        )
        .remove("charts/app/templates/deploy.yaml")
        .write("charts/app/templates/unwanted.yaml", "kind: Unwanted\n");
    let out = rv.run(&["check"]).expect(1);
    let said = out.all();
    assert!(
        said.contains("charts/app/templates/stray.yaml:1: error: `charts/app/templates/stray.yaml` is in the vendored directory `charts/app/` but nothing renders it"),
        "{said}"
    );
    assert!(
        said.contains("`charts/app/templates/deploy.yaml` is missing"),
        "{said}"
    );
    assert!(
        said.contains(
            "`charts/app/templates/unwanted.yaml` is there, but patch `drop-unwanted` deletes it"
        ),
        "{said}"
    );
    assert!(!said.contains("mine.yaml"), "{said}");

    // render puts back what is missing and deletes what a patch deletes; a stray is the
    // user's to delete.
    rv.run(&["render"]).expect(0);
    assert_eq!(pkg.read_string("charts/app/templates/deploy.yaml"), DEPLOY);
    assert!(!pkg.exists("charts/app/templates/unwanted.yaml"));
    let out = rv.run(&["check"]).expect(1);
    assert!(out.all().contains("stray.yaml"), "{}", out.all());
    pkg.remove("charts/app/templates/stray.yaml");
    rv.run(&["check"]).expect(0);
}

#[test]
fn adopting_stops_on_a_committed_file_upstream_does_not_have() {
    let gh = GitHub::start();
    serve(&gh);
    let pkg = package(&format!("[upstream]\ngithub = \"{REPO}\"\n"));
    pkg.write("charts/app/templates/local.yaml", "kind: Local\n");
    let before = pkg.snapshot();
    let rv = Revendor::new(pkg.path(), &gh);
    let out = rv.run(&["update", "--to", "v1.0.0"]).expect(1);
    assert!(
        out.all().contains("`charts/app/templates/local.yaml` is in a vendored directory, but upstream v1.0.0 does not have it"),
        "{}",
        out.all()
    );
    assert_eq!(pkg.snapshot(), before, "nothing was written");
}

#[test]
fn a_truncated_tree_is_read_from_the_archive() {
    let gh = GitHub::start();
    serve(&gh);
    gh.truncate_trees(3);
    let pkg = package(&format!("[upstream]\ngithub = \"{REPO}\"\n"));
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    rv.run(&["update"]).expect(0);
    assert_eq!(tree(&pkg), expected_tree("v1.1.0"));
    let requests = gh.requests();
    assert_eq!(
        requests.count("/o/app/archive/refs/tags/"),
        2,
        "{:?}",
        requests.targets()
    );
    assert!(
        requests.matching(&gh.raw_url()).is_empty(),
        "{:?}",
        requests.targets()
    );
}

#[test]
fn a_git_upstream_lists_the_directory_from_its_mirror() {
    let git = GitRepo::new();
    for version in ["v1.0.0", "v1.1.0"] {
        for path in chart("v1.0.0").keys() {
            if git.path().join(path).exists() {
                git.remove(path);
            }
        }
        git.commit(version, chart(version));
        git.tag(version);
    }
    let gh = GitHub::start();
    let pkg = package(&format!("[upstream]\ngit = \"{}\"\n", git.url()));
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    assert_eq!(tree(&pkg), expected_tree("v1.0.0"));
    let out = rv.run(&["update", "--to", "v1.1.0"]).expect(0);
    assert!(
        out.stdout
            .contains("upstream added charts/app/templates/new.yaml"),
        "{}",
        out.stdout
    );
    assert_eq!(tree(&pkg), expected_tree("v1.1.0"));
    rv.run(&["check"]).expect(0);
}

#[test]
fn the_pull_request_lists_the_files_upstream_added_and_removed() {
    let gh = GitHub::start();
    serve(&gh);
    let repo = GitRepo::new();
    let pkg = package(&format!("[upstream]\ngithub = \"{REPO}\"\n"));
    let files: Vec<(String, Vec<u8>)> = pkg
        .snapshot()
        .into_iter()
        .map(|(p, b)| (format!("packages/app/{p}"), b))
        .collect();
    repo.commit("package", files);
    let dir = repo.path().join("packages/app");
    let rv = Revendor::new(&dir, &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    repo.commit("adopt", Vec::<(&str, &str)>::new());
    rv.run(&["update"]).expect(0);

    let out = rv.run(&["pr"]).expect(0);
    assert!(
        out.stdout.contains(
            "Files upstream added, vendored now:\n\n- `charts/app/templates/new.yaml`\n- `charts/app/templates/sub/moved.yaml`\n\n\
             Files upstream removed, deleted here:\n\n- `charts/app/templates/moved.yaml`\n- `charts/app/templates/old.yaml`\n"
        ),
        "{}",
        out.stdout
    );
}

#[test]
fn check_online_dry_runs_the_patches_of_a_directory_and_the_lock_vouches_for_each_file() {
    let gh = GitHub::start();
    serve(&gh);
    let pkg = package(&format!("[upstream]\ngithub = \"{REPO}\"\n"));
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);

    let out = rv.run(&["check", "--online"]).expect(1);
    let said = out.all();
    assert!(
        said.contains("v1.1.0 is newer than the vendored v1.0.0")
            && said.contains("local on charts/app/values.yaml: offset")
            && said.contains("drop-unwanted on charts/app/templates/unwanted.yaml: exact")
            && said.contains("local on charts/app/templates/extra.yaml: exact"),
        "{said}"
    );

    pkg.write(
        "upstream/charts/app/templates/deploy.yaml",
        "kind: Edited\n",
    );
    let out = rv.run(&["check"]).expect(1);
    assert!(
        out.all()
            .contains("`upstream/charts/app/templates/deploy.yaml` has sha256"),
        "{}",
        out.all()
    );

    // A directory vendor.toml names that the lock has nothing of yet.
    let toml = pkg.read_string("vendor.toml");
    pkg.write(
        "vendor.toml",
        format!("{toml}\n[[vendor]]\nfrom = \"docs/\"\nto = \"docs/\"\n"),
    );
    let out = rv.run(&["check"]).expect(1);
    assert!(
        out.all()
            .contains("the lock records no file of the vendored directory `docs/`"),
        "{}",
        out.all()
    );
    pkg.write("upstream/charts/app/templates/deploy.yaml", DEPLOY);
    let out = rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    // Adopted as a directory new to the lock: vendored, not "added upstream".
    assert!(
        out.stdout.contains("created docs/README.md\n"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("upstream added"), "{}", out.stdout);
    rv.run(&["check"]).expect(0);
}

#[test]
fn removing_the_directory_from_vendor_toml_deletes_what_it_rendered() {
    let gh = GitHub::start();
    serve(&gh);
    let pkg = package(&format!("[upstream]\ngithub = \"{REPO}\"\n"));
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    let before = pkg.snapshot();
    rv.run(&["patch", "refresh"]).expect(0);
    assert_eq!(
        pkg.snapshot(),
        before,
        "refresh right after an update is a no-op"
    );

    pkg.write(
        "vendor.toml",
        format!("[upstream]\ngithub = \"{REPO}\"\nversion = \"v1.0.0\"\n"),
    )
    .remove("patches/local.patch")
    .remove("patches/drop.patch");
    let out = rv.run(&["render"]).expect(0);
    assert!(
        out.stdout
            .contains("`charts/app/values.yaml` is no longer vendored"),
        "{}",
        out.stdout
    );
    assert!(tree(&pkg).is_empty(), "{:?}", tree(&pkg).keys());
    assert!(!pkg.exists("charts") && !pkg.exists("upstream/charts"));
    rv.run(&["check"]).expect(0);
}

/// Issue 13: an update of a vendored directory (files added, removed and moved) killed at a
/// hundred random moments: the directory is the old one or the new one once the next command
/// has run, never files of both, and nothing is left behind.
#[test]
fn sigkill_during_a_directory_update_leaves_the_old_tree_or_the_new_one() {
    let gh = GitHub::start();
    serve(&gh);
    let pkg = package(&format!("[upstream]\ngithub = \"{REPO}\"\n"));
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    let old = support::kill::state(pkg.path(), &[]);
    let rounds = support::kill::Rounds {
        name: "directory update",
        dir: pkg.path(),
        ignore: &[],
        cache: Some(rv.cache()),
        min: 100,
        seed: 0x6a09_e667_f3bc_c909,
    };
    rounds.run(
        || {
            rv.run(&["update", "--to", "v1.1.0"]).expect(0);
        },
        || rv.spawn(&["update", "--to", "v1.1.0"]),
        || {
            let run = rv.run(&["check", "--offline"]);
            assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
        },
        || support::kill::restore(pkg.path(), &old, &[]),
    );
}
