//! issue 18: the OCI chart packages of `examples/cozystack/` (each written from cozystack's
//! Makefile) adopt their charts from the real CNCF registry. Each chart is a Helm-packaged
//! fixture at the example's version with a `tests/` directory (what the pinned Makefiles
//! delete), pushed by Helm under the example's registry path; the example's vendor.toml is
//! used as written, its registry pointed at the local one and a pinned digest replaced by the
//! fixture's. redis-operator's second upstream, the operator's source with a source patch, is
//! a release of the GitHub stand-in.

use crate::registry_support::{self, Auth, Registry, have_registry};
use crate::support;

use std::collections::BTreeMap;
use std::path::Path;

use revendor::image::Reference;
use revendor::registry::Credentials;
use support::chart_repo::push_files;
use support::example_toml;
use support::{GitHub, Revendor, TempPackage};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/cozystack");

const OCI_EXAMPLES: [&str; 5] = [
    "hetzner-robotlb",
    "kafka-operator",
    "kuberture",
    "ouroboros",
    "redis-operator",
];

/// The fixture chart `name` at `version`, with the `tests/` the Makefiles delete.
fn fixture(name: &str, version: &str) -> BTreeMap<String, Vec<u8>> {
    [
        (
            "Chart.yaml",
            format!("apiVersion: v2\nname: {name}\nversion: {version}\nappVersion: \"1.0\"\n"),
        ),
        ("values.yaml", "replicas: 1\n".to_owned()),
        ("templates/deploy.yaml", "kind: Deployment\n".to_owned()),
        ("tests/t.yaml", "kind: Pod\n".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.into_bytes()))
    .collect()
}

const MAIN_GO: &str = "package main\n\nfunc main() {\n\tprintln(\"redis-operator\")\n}\n";
const SOURCE_PATCH: &str = "--- a/main.go\n+++ b/main.go\n@@ -1,5 +1,5 @@\n package main\n \n func main() {\n-\tprintln(\"redis-operator\")\n+\tprintln(\"redis-operator, labels kept\")\n }\n";

/// What the example's other files need: the operator's release and the image recipe, source
/// patch and pinned values key of redis-operator.
fn extras(name: &str, pkg: &TempPackage, gh: &GitHub) {
    if name != "redis-operator" {
        return;
    }
    gh.repo("freshworks-oss/redis-operator")
        .file_at("v3.3.5", "main.go", MAIN_GO)
        .file_at(
            "v3.3.5",
            "go.mod",
            "module example.org/redis-operator\n\ngo 1.25.0\n",
        )
        .release("v3.3.5", |r| r);
    let digest = "a".repeat(64);
    pkg.write(
        "images/redis-operator/Dockerfile",
        format!("FROM golang:1.26@sha256:{digest} AS builder\nARG VERSION=v3.3.5\nFROM scratch\n"),
    )
    .write("images/redis-operator/patches/labels.diff", SOURCE_PATCH)
    .write(
        "values.yaml",
        format!(
            "redis-operator:\n  image:\n    repository: ghcr.io/cozystack/cozystack/redis-operator\n    tag: v3.3.5@sha256:{digest}\n"
        ),
    );
}

fn adopt_example(name: &str, registry: &Registry) {
    let text = std::fs::read_to_string(Path::new(ROOT).join(name).join("vendor.toml")).unwrap();
    let doc: toml::Table = text.parse().unwrap();
    let tables = |key: &str| example_toml::tables(&doc, key);
    let str_of = example_toml::value;
    let mut toml_text = text.clone();
    for up in tables("upstream") {
        let Some(url) = str_of(&up, "helm") else {
            continue;
        };
        let chart = str_of(&up, "chart").unwrap();
        let written = str_of(&up, "version").unwrap();
        let (version, pin) = match written.split_once('@') {
            Some((v, pin)) => (v.to_owned(), Some(pin.to_owned())),
            None => (written.clone(), None),
        };
        let path = url
            .strip_prefix("oci://")
            .unwrap()
            .split_once('/')
            .unwrap()
            .1;
        let local = format!("oci://{}/{path}", registry.host);
        push_files(&chart, &fixture(&chart, &version), &local);
        toml_text = toml_text.replace(&url, &local);
        if let Some(pin) = pin {
            let tag = version.replace('+', "_");
            let reference =
                Reference::parse(&format!("{}/{path}/{chart}:{tag}", registry.host)).unwrap();
            let pushed = registry_support::client(Credentials::none())
                .head_manifest(&reference)
                .unwrap();
            toml_text = toml_text.replace(&pin, &pushed.to_string());
        }
    }
    let pkg = TempPackage::new();
    pkg.write("vendor.toml", &toml_text);
    let gh = GitHub::start();
    extras(name, &pkg, &gh);
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update"]).expect(0);
    for vendor in tables("vendor") {
        let to = str_of(&vendor, "to").unwrap();
        let excluded = vendor
            .get("exclude")
            .and_then(|e| e.as_array())
            .is_some_and(|e| e.iter().any(|d| d.as_str() == Some("tests/**")));
        assert!(pkg.exists(&format!("{to}Chart.yaml")), "{name}: {to}");
        assert_eq!(
            pkg.exists(&format!("{to}tests/t.yaml")),
            !excluded,
            "{name}: {to}tests/"
        );
    }
    let check = rv.run(&["--offline", "check"]);
    assert_eq!(check.code, 0, "{name}:\n{}", check.all());
}

#[test]
fn every_oci_chart_example_adopts_its_chart_from_the_registry() {
    if !have_registry("examples_oci") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    for name in OCI_EXAMPLES {
        adopt_example(name, &registry);
    }
}
