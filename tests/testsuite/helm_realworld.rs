//! issue 18: cozystack's real chart packages (REVENDOR_REALWORLD) adopted from a chart
//! repository as their Makefiles pull them. The committed charts are packaged by Helm's own
//! engine (with a `tests/` directory, which the Makefiles delete after `helm pull`) and served
//! by the test HTTP server at the versions facts.toml records.
//!
//! - coredns: adopted at 1.43.2 without a byte changing, updated to 1.46.0 exactly as
//!   cozystack's commit 03668bcd1 did, then rendered offline with the repository gone.
//! - external-secrets: its subcharts excluded and its `patch --forward -p4` patch adopted.
//! - kuberture: an OCI chart pinned by version and manifest digest, pushed by Helm into the
//!   real CNCF registry, its tag then pushed again with other files: adopted by the digest
//!   without a byte changing.

use crate::registry_support::{self, Auth, Registry, have_registry};
use crate::support;

use std::collections::BTreeMap;
use std::path::Path;

use support::chart_repo::ChartRepo;
use support::package::read_tree;
use support::{GitHub, Realworld, Revendor, TempPackage};

/// A `tests/` directory like the ones upstream charts ship and the Makefiles delete.
fn with_tests(chart: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = read_tree(chart);
    files.insert(
        "tests/deployment_test.yaml".into(),
        b"suite: upstream fixtures\ntests: []\n".to_vec(),
    );
    files
}

/// Copies the package at `rel` of the real-world data into `pkg`.
fn copy_package(rw: &Realworld, rel: &str, pkg: &TempPackage) {
    for (path, bytes) in read_tree(&rw.root().join(rel)) {
        pkg.write(&path, bytes);
    }
}

fn coredns_toml(repo: &str, version: &str) -> String {
    format!(
        "[upstream]\nhelm = \"{repo}\"\nchart = \"coredns\"\nversion = \"{version}\"\n\n\
         [[vendor]]\nfrom = \"./\"\nto = \"charts/coredns/\"\nexclude = [\"tests/**\"]\n"
    )
}

#[test]
fn coredns_is_adopted_at_its_chart_and_updated_byte_for_byte() {
    let Some(rw) = Realworld::from_env() else {
        return;
    };
    let bump = rw.fact_map(&["helm", "coredns", "bump"]);
    let (from, to) = (&bump["from"], &bump["to"]);
    let gh = GitHub::start();
    let repo = ChartRepo::start();
    let before = rw.root().join("cozystack-coredns-before");
    let after = rw.root().join("cozystack-coredns-after");
    repo.publish_files("coredns", &with_tests(&before.join("charts/coredns")));

    let pkg = TempPackage::new();
    copy_package(&rw, "cozystack-coredns-before", &pkg);
    pkg.write("vendor.toml", coredns_toml(&repo.url(), from));
    let rv = adopt_unchanged(&pkg, &gh);
    let lock = pkg.read_string("upstream/lock.toml");
    let app = rw.fact_map(&["helm", "coredns", "app-version"]);
    assert!(
        lock.contains(&format!("app-version = \"{}\"", app[from.as_str()])),
        "{lock}"
    );
    rv.run(&["check"]).expect(0);

    repo.publish_files("coredns", &with_tests(&after.join("charts/coredns")));
    rv.run(&["update"]).expect(0);
    assert_eq!(
        read_tree(&pkg.join("charts")),
        read_tree(&after.join("charts"))
    );
    assert!(
        pkg.read_string("vendor.toml")
            .contains(&format!("version = \"{to}\""))
    );

    drop(repo);
    std::fs::remove_dir_all(rv.cache()).unwrap();
    std::fs::remove_dir_all(pkg.join("charts")).unwrap();
    rv.run(&["--offline", "render"]).expect(0);
    assert_eq!(
        read_tree(&pkg.join("charts")),
        read_tree(&after.join("charts"))
    );
    rv.run(&["--offline", "check"]).expect(0);
}

#[test]
fn external_secrets_is_adopted_with_its_patch_and_without_its_subcharts() {
    let Some(rw) = Realworld::from_env() else {
        return;
    };
    let version = rw
        .fact_str(&["helm", "external-secrets", "version"])
        .to_owned();
    let gh = GitHub::start();
    let repo = ChartRepo::start();
    let pkg = TempPackage::new();
    copy_package(&rw, "cozystack-external-secrets", &pkg);

    // The chart as published: the committed one without the patch's change, with a
    // subchart under charts/ (the Makefile deletes it).
    let patch = pkg.read("patches/webhook-service-named-target-port.patch");
    let mut upstream = with_tests(
        &rw.root()
            .join("cozystack-external-secrets/charts/external-secrets"),
    );
    unpatch(&mut upstream, &patch);
    upstream.insert(
        "charts/bitwarden-sdk-server/Chart.yaml".into(),
        b"apiVersion: v2\nname: bitwarden-sdk-server\nversion: 0.1.0\n".to_vec(),
    );
    repo.publish_files("external-secrets", &upstream);

    pkg.write(
        "vendor.toml",
        format!(
            "[upstream]\nhelm = \"{}\"\nchart = \"external-secrets\"\nversion = \"{version}\"\n\n\
             [[vendor]]\nfrom = \"./\"\nto = \"charts/external-secrets/\"\nexclude = [\"charts/**\", \"tests/**\"]\n\n\
             [[patch]]\nname = \"webhook-service-named-target-port\"\nfile = \"patches/webhook-service-named-target-port.patch\"\napplies-to = \"vendor\"\nstrip = 4\n",
            repo.url()
        ),
    );
    let rv = adopt_unchanged(&pkg, &gh);
    assert!(!pkg.exists("upstream/charts/bitwarden-sdk-server/Chart.yaml"));
    rv.run(&["check"]).expect(0);
}

#[test]
fn kuberture_is_adopted_from_the_registry_by_version_and_digest() {
    let Some(rw) = Realworld::from_env() else {
        return;
    };
    if !have_registry("kuberture") {
        return;
    }
    let facts = |key: &str| rw.fact_str(&["helm", "kuberture", key]).to_owned();
    let (version, chart) = (facts("version"), facts("chart"));
    let real = facts("repository");
    let path = real
        .strip_prefix("oci://ghcr.io/")
        .expect("a ghcr.io repository");
    // The media types the real registry serves are the ones Helm pushes and revendor requires.
    let types = rw.fact_map(&["helm", "kuberture", "media-types"]);
    assert_eq!(
        types["config"],
        revendor::upstream::helm::oci::CONFIG_MEDIA_TYPE
    );
    assert_eq!(
        types["chart"],
        revendor::upstream::helm::oci::CHART_MEDIA_TYPE
    );

    let registry = Registry::start(Auth::Anonymous);
    let remote = format!("oci://{}/{path}", registry.host);
    let committed = rw.root().join("cozystack-kuberture/charts/kuberture");
    support::chart_repo::push_files(&chart, &with_tests(&committed), &remote);
    let reference =
        revendor::image::Reference::parse(&format!("{}/{path}/{chart}:{version}", registry.host))
            .unwrap();
    let client = registry_support::client(revendor::registry::Credentials::none());
    let pinned = client.head_manifest(&reference).unwrap().to_string();
    // The publisher pushes the tag again: the pin must still read the first push.
    let mut repushed = with_tests(&committed);
    repushed.insert("templates/extra.yaml".into(), b"kind: Extra\n".to_vec());
    support::chart_repo::push_files(&chart, &repushed, &remote);
    assert_ne!(
        client.head_manifest(&reference).unwrap().to_string(),
        pinned
    );

    let gh = GitHub::start();
    let pkg = TempPackage::new();
    copy_package(&rw, "cozystack-kuberture", &pkg);
    pkg.write(
        "vendor.toml",
        format!(
            "[upstream]\nhelm = \"{remote}\"\nchart = \"{chart}\"\nversion = \"{version}@{pinned}\"\n\n\
             [[vendor]]\nfrom = \"./\"\nto = \"charts/{chart}/\"\nexclude = [\"tests/**\"]\n"
        ),
    );
    let rv = adopt_unchanged(&pkg, &gh);
    let lock = pkg.read_string("upstream/lock.toml");
    assert!(
        lock.contains(&format!(
            "archive-sha256 = \"{}\"",
            &pinned["sha256:".len()..]
        )),
        "{lock}"
    );
    rv.run(&["check", "--online"]).expect(0);
    drop(registry);
    rv.run(&["--offline", "check"]).expect(0);
}

/// Adopts the package's chart with `update`, which must leave every byte of `charts/` as it
/// was committed.
fn adopt_unchanged(pkg: &TempPackage, gh: &GitHub) -> Revendor {
    let committed = read_tree(&pkg.join("charts"));
    let rv = Revendor::new(pkg.path(), gh);
    rv.run(&["update"]).expect(0);
    assert_eq!(
        read_tree(&pkg.join("charts")),
        committed,
        "adoption changed the chart"
    );
    rv
}

/// Reverses the patch's one-line changes in `files` (paths under the chart: `-p4` and the
/// chart's two directories): what the
/// chart held before cozystack patched it.
fn unpatch(files: &mut BTreeMap<String, Vec<u8>>, patch: &[u8]) {
    let text = String::from_utf8_lossy(patch);
    let mut target = None;
    let (mut minus, mut plus) = (Vec::new(), Vec::new());
    for line in text.lines() {
        if let Some(path) = line.strip_prefix("+++ ") {
            let path = path.split('\t').next().unwrap();
            target = Some(path.splitn(7, '/').nth(6).unwrap().to_owned());
        } else if let Some(old) = line.strip_prefix('-').filter(|_| !line.starts_with("---")) {
            minus.push(format!("{old}\n"));
        } else if let Some(new) = line.strip_prefix('+') {
            plus.push(format!("{new}\n"));
        }
    }
    let target = target.expect("the patch names a file");
    let file = files
        .get_mut(&target)
        .expect("the patched file is in the chart");
    let mut text = String::from_utf8(file.clone()).unwrap();
    for (new, old) in plus.iter().zip(&minus) {
        assert!(text.contains(new.as_str()), "{new:?} in {target}");
        text = text.replacen(new.as_str(), old, 1);
    }
    *file = text.into_bytes();
}
