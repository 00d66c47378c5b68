//! issue 18: the chart packages of `examples/cozystack/` (each written from cozystack's
//! Makefile) adopt their charts. Each chart repository the example names is served by the test
//! HTTP server, holding a Helm-packaged fixture chart at the example's version with a `tests/`,
//! `charts/` and `changelog/` directory (what the Makefiles delete) and a `values.yaml` line
//! for each of the example's patches to change; the example's vendor.toml is used as written,
//! its repository URLs pointed at the local servers. coredns and external-secrets also adopt
//! cozystack's real committed charts (helm_realworld.rs).

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;

use support::chart_repo::ChartRepo;
use support::example_toml;
use support::{GitHub, Revendor, TempPackage};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/cozystack");

const CHART_EXAMPLES: [&str; 12] = [
    "cert-manager",
    "coredns",
    "external-secrets-operator",
    "ingress-nginx",
    "linstor-scheduler",
    "metallb",
    "monitoring-agents",
    "opencost",
    "postgres-operator",
    "velero",
    "vertical-pod-autoscaler",
    "victoria-metrics-operator",
];

/// The fixture chart `name` at `version`: one `values.yaml` line per patch (`line0: 1`, …).
fn fixture(name: &str, version: &str, patches: usize) -> BTreeMap<String, Vec<u8>> {
    let values: String = (0..patches.max(1))
        .map(|i| format!("line{i}: 1\n"))
        .collect();
    [
        (
            "Chart.yaml".to_owned(),
            format!("apiVersion: v2\nname: {name}\nversion: {version}\nappVersion: \"1.0\"\n"),
        ),
        ("values.yaml".to_owned(), values),
        (
            "templates/deploy.yaml".to_owned(),
            "kind: Deployment\n".to_owned(),
        ),
        ("tests/t.yaml".to_owned(), "kind: Pod\n".to_owned()),
        ("changelog/v1.md".to_owned(), "# changes\n".to_owned()),
        (
            "charts/sub/Chart.yaml".to_owned(),
            "apiVersion: v2\nname: sub\nversion: 0.1.0\n".to_owned(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k, v.into_bytes()))
    .collect()
}

/// Patch `index` of a package: `line<index>: 1` → `2` in `to`'s values.yaml, its path under
/// `strip` leading directories as the Makefile's `patch -p<strip>` reads it.
fn patch(to: &str, index: usize, strip: usize) -> String {
    let prefix: String = (0..strip).map(|i| format!("d{i}/")).collect();
    format!(
        "--- {prefix}{to}values.yaml\n+++ {prefix}{to}values.yaml\n@@ -{n} +{n} @@\n-line{index}: 1\n+line{index}: 2\n",
        n = index + 1
    )
}

fn adopt_example(name: &str) {
    let text = std::fs::read_to_string(Path::new(ROOT).join(name).join("vendor.toml")).unwrap();
    let doc: toml::Table = text.parse().unwrap();
    let one = |key: &str| example_toml::tables(&doc, key);
    let (upstreams, vendors, patches) = (one("upstream"), one("vendor"), one("patch"));
    let str_of = example_toml::value;

    let mut repos: BTreeMap<String, ChartRepo> = BTreeMap::new();
    let mut patched: Vec<(String, usize)> = Vec::new();
    let mut toml_text = text.clone();
    let pkg = TempPackage::new();
    for up in &upstreams {
        let (url, chart) = (str_of(up, "helm").unwrap(), str_of(up, "chart").unwrap());
        let version = str_of(up, "version").unwrap();
        let vendor = vendors
            .iter()
            .find(|v| str_of(v, "upstream") == str_of(up, "name"))
            .expect("a [[vendor]] of the chart");
        let to = str_of(vendor, "to").unwrap();
        let mine: Vec<&toml::Table> = patches
            .iter()
            .filter(|p| str_of(p, "upstream") == str_of(up, "name") || upstreams.len() == 1)
            .collect();
        for (i, p) in mine.iter().enumerate() {
            let strip = p["strip"].as_integer().unwrap() as usize;
            pkg.write(&str_of(p, "file").unwrap(), patch(&to, i, strip));
        }
        patched.push((to.clone(), mine.len()));
        let repo = repos.entry(url.clone()).or_insert_with(ChartRepo::start);
        repo.publish_files(&chart, &fixture(&chart, &version, mine.len()));
        toml_text = toml_text.replace(&format!("\"{url}\""), &format!("\"{}\"", repo.url()));
    }
    pkg.write("vendor.toml", &toml_text);
    let gh = GitHub::start();
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update"]).expect(0);
    for vendor in &vendors {
        let to = str_of(vendor, "to").unwrap();
        let excluded = vendor
            .get("exclude")
            .and_then(|e| e.as_array())
            .cloned()
            .unwrap_or_default();
        for (dir, file) in [
            ("tests/**", "tests/t.yaml"),
            ("changelog/**", "changelog/v1.md"),
            ("charts/**", "charts/sub/Chart.yaml"),
        ] {
            let kept = !excluded.iter().any(|e| e.as_str() == Some(dir));
            assert_eq!(
                pkg.exists(&format!("{to}{file}")),
                kept,
                "{name}: {to}{file}"
            );
        }
    }
    for (to, count) in patched {
        let values = pkg.read_string(&format!("{to}values.yaml"));
        for i in 0..count {
            assert!(
                values.contains(&format!("line{i}: 2\n")),
                "{name}: {to}values.yaml\n{values}"
            );
        }
    }
    rv.run(&["--offline", "check"]).expect(0);
}

#[test]
fn every_chart_example_adopts_its_charts_from_their_repositories() {
    for name in CHART_EXAMPLES {
        adopt_example(name);
    }
}
