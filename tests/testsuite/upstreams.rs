//! Several upstreams and images in one package, and the ways a version is chosen, through the
//! real binary against the GitHub stand-in, real git repositories over `file://` and the real
//! CNCF registry (issue 12):
//!
//! - two `[[upstream]]`s vendoring the same upstream path and two `[[image]]`s pinned into
//!   values.yaml: one `update` moves both (each named in the summary and the lock), one
//!   `image pin` pins both, and adopting the package again reads both pins back from the keys;
//! - the default tag selection and a `tag-pattern` never take a chart-release tag
//!   (`kube-ovn-v1.15.24`) for a version; `{semver}` is the pattern's `version` group;
//! - `ref = "<branch>"`: the commit goes in the lock, `{commit}` fills a rewrite, and
//!   `check --online` says `upstream-newer` once the branch moves;
//! - a commit sha as `version` stays until `update --to` moves it;
//! - Dockerfile ARGs keep their quotes (kube-ovn's `ARG VERSION="1.15.10"` from `{semver}` and
//!   `ARG TAG="v1.15.10"` from `{version}`).

use crate::registry_support::{self, Auth, Registry, have_registry};
use crate::support;

use std::path::Path;

use registry_support::content::multi_arch;
use revendor::config::lock::Lock;
use revendor::image::MediaType;
use support::named_upstreams::{CHART_TAG_PIN, image};
use support::{GitHub, GitRepo, Revendor, TempPackage};

const FILE: &str = "deploy/app.yml";
const BOTH: [&str; 2] = ["linux/amd64", "linux/arm64"];

fn manifest(repo: &str, version: &str) -> String {
    format!(
        "kind: Deployment\nmetadata:\n  name: {repo}\n  namespace: default\nspec:\n  replicas: 1\n  paused: false\n# {repo} at {version}\n"
    )
}

fn lock(pkg: &TempPackage) -> Lock {
    Lock::parse(
        Path::new("upstream/lock.toml"),
        &pkg.read_string("upstream/lock.toml"),
    )
    .unwrap()
}

/// Lines that differ between two texts of the same length, 1-based.
fn changed_lines(before: &str, after: &str) -> Vec<usize> {
    assert_eq!(before.lines().count(), after.lines().count(), "{after}");
    before
        .lines()
        .zip(after.lines())
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .map(|(i, _)| i + 1)
        .collect()
}

const NAMESPACE_PATCH: &str = "--- a/templates/chart.yml
+++ b/templates/chart.yml
@@ -1,7 +1,7 @@
 kind: Deployment
 metadata:
   name: chart
-  namespace: default
+  namespace: cozy-chart
 spec:
   replicas: 1
   paused: false
";

const VALUES: &str = "\
# values of the package
chart:
  image:
    tag: v0.0.0   # written by revendor image pin
operator:
  image:
    pullPolicy: IfNotPresent
    repository: \"example/operator\"
    tag: \"latest\"
    digest: \"\"
";

fn two_upstreams_toml(host: &str) -> String {
    let tables = format!(
        r#"[[upstream]]
name = "chart"
github = "example/chart"
version = "v1.0.0"
track = ">=1.0.0, <2.0.0"

[[upstream]]
name = "operator"
github = "example/operator"
version = "v2.0.0"   # the operator
track = ">=2.0.0, <3.0.0"

[[vendor]]
upstream = "chart"
from = "{FILE}"
to = "templates/chart.yml"

[[vendor]]
upstream = "operator"
from = "{FILE}"
to = "templates/operator.yml"

[[patch]]
upstream = "chart"
name = "namespace"
file = "patches/namespace.patch"
applies-to = "vendor"

[[rewrite]]
upstream = "chart"
file = "images/chart/Dockerfile"
dockerfile-arg = "VERSION"
with = "{{semver}}"

[[rewrite]]
upstream = "chart"
file = "images/chart/Dockerfile"
dockerfile-arg = "TAG"
with = "{{version}}"

[[rewrite]]
upstream = "operator"
file = "images/operator/Dockerfile"
dockerfile-arg = "VERSION"
with = "{{version}}"
"#
    );
    let operator_pin = r#"[[pin]]
image = "operator"
file = "values.yaml"
yaml = { repository = "operator.image.repository", tag = "operator.image.tag", digest = "operator.image.digest" }

[checks]
builder-go = "allow"   # the stand-in recipes build nothing
"#;
    [
        tables,
        image("chart", host, "v1.1.0"),
        image("operator", host, "v2.1.0"),
        CHART_TAG_PIN.to_owned(),
        operator_pin.to_owned(),
    ]
    .join("\n")
}

fn serve_two(gh: &GitHub) {
    for (repo, tags) in [
        ("example/chart", ["v1.0.0", "v1.1.0"]),
        ("example/operator", ["v2.0.0", "v2.1.0"]),
    ] {
        let name = repo.rsplit('/').next().unwrap();
        for tag in tags {
            gh.repo(repo)
                .file_at(tag, FILE, manifest(name, tag))
                .release(tag, |r| r);
        }
    }
}

#[test]
fn two_upstreams_and_two_images_are_updated_and_pinned_in_one_run() {
    if !have_registry("two_upstreams_and_two_images") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    let gh = GitHub::start();
    serve_two(&gh);
    let pkg = TempPackage::new();
    pkg.write("vendor.toml", two_upstreams_toml(&registry.host))
        .write("patches/namespace.patch", NAMESPACE_PATCH)
        .write(
            "images/chart/Dockerfile",
            "ARG VERSION=\"1.0.0\"\nFROM scratch\nARG TAG=\"v1.0.0\"\n",
        )
        .write(
            "images/operator/Dockerfile",
            "FROM scratch\nARG VERSION='v2.0.0'\n",
        )
        .write("values.yaml", VALUES);
    let rv = Revendor::new(pkg.path(), &gh)
        .env("DOCKER_CONFIG", &pkg.join(".docker").display().to_string());

    // Adopted at the versions vendor.toml names, then both moved by one update.
    rv.run(&["update", "--to", "chart=v1.0.0", "--to", "operator=v2.0.0"])
        .expect(0);
    let run = rv.run(&["update"]).expect(0);
    for line in [
        "upstream chart: v1.0.0 -> v1.1.0\n",
        "upstream operator: v2.0.0 -> v2.1.0\n",
    ] {
        assert!(run.stdout.contains(line), "{}", run.stdout);
    }
    assert!(
        run.stderr
            .contains("Updating chart (github:example/chart) v1.0.0 -> v1.1.0"),
        "{}",
        run.stderr
    );
    let lock_now = lock(&pkg);
    let versions: Vec<_> = lock_now
        .upstreams
        .iter()
        .map(|u| (u.name.clone().unwrap(), u.version.clone()))
        .collect();
    assert_eq!(
        versions,
        [
            ("chart".to_owned(), "v1.1.0".to_owned()),
            ("operator".to_owned(), "v2.1.0".to_owned())
        ]
    );
    assert_eq!(
        pkg.read_string("upstream/chart/deploy/app.yml"),
        manifest("chart", "v1.1.0")
    );
    assert_eq!(
        pkg.read_string("upstream/operator/deploy/app.yml"),
        manifest("operator", "v2.1.0")
    );
    assert_eq!(
        pkg.read_string("templates/chart.yml"),
        manifest("chart", "v1.1.0").replace("namespace: default", "namespace: cozy-chart")
    );
    assert_eq!(
        pkg.read_string("templates/operator.yml"),
        manifest("operator", "v2.1.0")
    );
    // The quotes of each ARG stay; {semver} has no `v`.
    assert_eq!(
        pkg.read_string("images/chart/Dockerfile"),
        "ARG VERSION=\"1.1.0\"\nFROM scratch\nARG TAG=\"v1.1.0\"\n"
    );
    assert_eq!(
        pkg.read_string("images/operator/Dockerfile"),
        "FROM scratch\nARG VERSION='v2.1.0'\n"
    );
    let toml = pkg.read_string("vendor.toml");
    assert_eq!(
        toml,
        two_upstreams_toml(&registry.host)
            .replace("version = \"v1.0.0\"", "version = \"v1.1.0\"")
            .replace("version = \"v2.0.0\"   #", "version = \"v2.1.0\"   #")
    );

    // One `image pin` pins both images, only the pinned lines of values.yaml changing.
    let chart = multi_arch(&BOTH, "chart", MediaType::OciIndex);
    let operator = multi_arch(&BOTH, "operator", MediaType::OciIndex);
    registry.push_multi_arch("team/chart", "v1.1.0", &chart);
    registry.push_multi_arch("team/operator", "v2.1.0", &operator);
    let run = rv.run(&["image", "pin"]).expect(0);
    assert!(run.stdout.contains("pinned chart: "), "{}", run.stdout);
    assert!(run.stdout.contains("pinned operator: "), "{}", run.stdout);
    let values = pkg.read_string("values.yaml");
    assert_eq!(changed_lines(VALUES, &values), [4, 8, 9, 10]);
    assert!(
        values.contains(&format!(
            "    tag: v1.1.0@{}   # written by revendor image pin\n",
            chart.index.digest
        )),
        "{values}"
    );
    assert!(
        values.contains(&format!(
            "    repository: \"{}/team/operator\"\n    tag: \"v2.1.0\"\n    digest: \"{}\"\n",
            registry.host, operator.index.digest
        )),
        "{values}"
    );
    let pinned: Vec<_> = lock(&pkg)
        .images
        .iter()
        .map(|i| (i.name.clone().unwrap(), i.reference.clone()))
        .collect();
    let chart_ref = format!("{}/team/chart:v1.1.0@{}", registry.host, chart.index.digest);
    let operator_ref = format!(
        "{}/team/operator:v2.1.0@{}",
        registry.host, operator.index.digest
    );
    assert_eq!(
        pinned,
        [
            ("chart".to_owned(), chart_ref.clone()),
            ("operator".to_owned(), operator_ref.clone())
        ]
    );
    rv.run(&["--offline", "check"]).expect(0);

    // A key edited by hand is image-pin's; render writes the locked pin back.
    pkg.write(
        "values.yaml",
        values.replace("tag: \"v2.1.0\"", "tag: \"v2.0.0\""),
    );
    let run = rv.run(&["--offline", "check"]).expect(1);
    assert!(
        run.stdout
            .contains("values.yaml:9: error: `operator.image.tag` is `v2.0.0`"),
        "{}",
        run.stdout
    );
    rv.run(&["render"]).expect(0);
    assert_eq!(pkg.read_string("values.yaml"), values);

    // Adopted again without a lock, the pins are read back from the keys.
    pkg.remove("upstream/lock.toml");
    rv.run(&["update", "--to", "chart=v1.1.0", "--to", "operator=v2.1.0"])
        .expect(0);
    let adopted: Vec<_> = lock(&pkg)
        .images
        .iter()
        .map(|i| (i.name.clone().unwrap(), i.reference.clone()))
        .collect();
    assert_eq!(
        adopted,
        [
            ("chart".to_owned(), chart_ref),
            ("operator".to_owned(), operator_ref)
        ]
    );
    assert_eq!(pkg.read_string("values.yaml"), values);

    // Several upstreams: a bare --to does not say which one.
    let run = rv.run(&["update", "--to", "v1.1.0"]).expect(2);
    assert!(run.stderr.contains("NAME=TAG"), "{}", run.stderr);
}

/// One upstream vendoring `FILE`, with a Dockerfile whose ARGs take `{version}`, `{semver}`.
fn single(source: &str, selection: &str, dockerfile: &str) -> TempPackage {
    let pkg = TempPackage::new();
    pkg.write(
        "vendor.toml",
        format!(
            r#"[upstream]
{source}
{selection}

[[vendor]]
from = "{FILE}"
to = "templates/app.yml"

[[rewrite]]
file = "Dockerfile"
dockerfile-arg = "VERSION"
with = "{{semver}}"

[[rewrite]]
file = "Dockerfile"
dockerfile-arg = "TAG"
with = "{{version}}"
"#
        ),
    )
    .write("Dockerfile", dockerfile);
    pkg
}

#[test]
fn chart_release_tags_are_not_versions_by_default_nor_by_tag_pattern() {
    let gh = GitHub::start();
    for tag in [
        "v1.15.10",
        "v1.15.11",
        "kube-ovn-v1.15.24",
        "kube-ovn-v2-v1.15.24",
        "edge-25.7.1",
        "edge-25.8.1",
    ] {
        gh.repo("kubeovn/kube-ovn")
            .file_at(tag, FILE, manifest("kube-ovn", tag))
            .release(tag, |r| r);
    }
    // kube-ovn: ARG VERSION without the `v`, ARG TAG with it, both quoted.
    let pkg = single(
        "github = \"kubeovn/kube-ovn\"",
        "version = \"v1.15.10\"\ntrack = \">=1.15.0, <1.16.0\"",
        "ARG VERSION=\"1.15.10\"\nFROM scratch\nARG TAG=\"v1.15.10\"\n",
    );
    let rv = Revendor::new(pkg.path(), &gh);
    let run = rv.run(&["update"]).expect(0);
    assert!(
        run.stdout.contains("upstream: v1.15.10 -> v1.15.11\n"),
        "{}",
        run.stdout
    );
    assert_eq!(
        pkg.read_string("Dockerfile"),
        "ARG VERSION=\"1.15.11\"\nFROM scratch\nARG TAG=\"v1.15.11\"\n"
    );

    // A tag pattern picks its own releases, and its `version` group is {semver}.
    let pkg = single(
        "github = \"kubeovn/kube-ovn\"",
        "version = \"edge-25.7.1\"\ntag-pattern = '^edge-(?P<version>\\d+\\.\\d+\\.\\d+)$'",
        "ARG VERSION=25.7.1\nARG TAG=edge-25.7.1\n",
    );
    let rv = Revendor::new(pkg.path(), &gh);
    let run = rv.run(&["update"]).expect(0);
    assert!(
        run.stdout
            .contains("upstream: edge-25.7.1 -> edge-25.8.1\n"),
        "{}",
        run.stdout
    );
    assert_eq!(
        pkg.read_string("Dockerfile"),
        "ARG VERSION=25.8.1\nARG TAG=edge-25.8.1\n"
    );
    rv.run(&["--offline", "check"]).expect(0);
}

#[test]
fn a_branch_is_followed_by_its_commit_and_upstream_newer_says_when_it_moves() {
    let git = GitRepo::new();
    let first = git.commit("first", [(FILE, manifest("app", "first"))]);
    let gh = GitHub::start();
    let pkg = single(
        &format!("git = \"{}\"", git.url()),
        "ref = \"main\"",
        "ARG VERSION=x\nARG TAG=x\n",
    );
    pkg.write(
        "vendor.toml",
        pkg.read_string("vendor.toml")
            .replace("with = \"{semver}\"", "with = \"{commit}\""),
    );
    let toml = pkg.read_string("vendor.toml");
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update"]).expect(0);
    let locked = lock(&pkg).upstreams[0].clone();
    assert_eq!(locked.version, first);
    assert_eq!(locked.commit.as_deref(), Some(first.as_str()));
    assert_eq!(
        pkg.read_string("vendor.toml"),
        toml,
        "a branch moves in the lock only"
    );
    assert_eq!(
        pkg.read_string("Dockerfile"),
        format!("ARG VERSION={first}\nARG TAG={first}\n")
    );
    rv.run(&["check", "--online"]).expect(0);

    let second = git.commit("second", [(FILE, manifest("app", "second"))]);
    let run = rv.run(&["check", "--online"]).expect(1);
    assert!(
        run.stdout.contains(&format!(
            "vendor.toml:3: error: branch `main` of git:{} moved to {second}; the vendored commit is {first}",
            git.url()
        )),
        "{}",
        run.stdout
    );
    rv.run(&["update"]).expect(0);
    assert_eq!(lock(&pkg).upstreams[0].version, second);
    assert_eq!(
        pkg.read_string("upstream/deploy/app.yml"),
        manifest("app", "second")
    );
    rv.run(&["check", "--online"]).expect(0);
}

#[test]
fn a_commit_as_version_stays_until_to_moves_it() {
    let git = GitRepo::new();
    let first = git.commit("first", [(FILE, manifest("app", "first"))]);
    let second = git.commit("second", [(FILE, manifest("app", "second"))]);
    let gh = GitHub::start();
    let pkg = single(
        &format!("git = \"{}\"", git.url()),
        &format!("version = \"{first}\""),
        "ARG VERSION=x\nARG TAG=x\n",
    );
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update"]).expect(0);
    assert_eq!(
        pkg.read_string("templates/app.yml"),
        manifest("app", "first")
    );
    assert_eq!(lock(&pkg).upstreams[0].version, first);
    let run = rv.run(&["update"]).expect(0);
    assert!(
        run.stdout.contains(&format!("up to date at {first}")),
        "{}",
        run.stdout
    );

    rv.run(&["update", "--to", &second]).expect(0);
    assert_eq!(
        pkg.read_string("templates/app.yml"),
        manifest("app", "second")
    );
    assert!(
        pkg.read_string("vendor.toml")
            .contains(&format!("version = \"{second}\"")),
    );
    assert_eq!(
        pkg.read_string("Dockerfile"),
        format!("ARG VERSION={second}\nARG TAG={second}\n")
    );
}
