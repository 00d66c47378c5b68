//! issue 12: a package with two named upstreams, one of them a vendored directory
//! (`from = "charts/app/"`), adopted and then updated in one run: the directory's release adds,
//! removes and renames files while the other upstream's single file moves too; each upstream's
//! files are locked, kept and told under its own name, and `check` sees a stray in the
//! directory.

use crate::support;

use std::collections::BTreeMap;

use support::named_upstreams::CHART_AND_TOOL;
use support::{GitHub, Revendor, TempPackage};

/// The chart of upstream `chart` (o/app) at `version`: v1.1.0 removed `templates/old.yaml`,
/// moved `templates/moved.yaml` to `templates/sub/moved.yaml` and added `templates/new.yaml`.
fn chart(version: &str) -> BTreeMap<&'static str, String> {
    let mut files = BTreeMap::from([
        (
            "charts/app/Chart.yaml",
            format!("name: app\nversion: {version}\n"),
        ),
        (
            "charts/app/values.yaml",
            "replicas: 1\nport: 80\n".to_owned(),
        ),
        (
            "charts/app/templates/deploy.yaml",
            "kind: Deployment\n".to_owned(),
        ),
        ("README.md", format!("# app {version}\n")),
    ]);
    if version == "v1.0.0" {
        files.insert("charts/app/templates/old.yaml", "kind: Old\n".into());
        files.insert("charts/app/templates/moved.yaml", "kind: Service\n".into());
    } else {
        files.insert(
            "charts/app/templates/sub/moved.yaml",
            "kind: Service\n".into(),
        );
        files.insert("charts/app/templates/new.yaml", "kind: New\n".into());
    }
    files
}

/// The one file of upstream `tool` (o/tool), which also has a `charts/app/` of its own.
fn tool(version: &str) -> BTreeMap<&'static str, String> {
    BTreeMap::from([
        (
            "deploy/tool.yaml",
            format!("kind: DaemonSet\nimage: tool:{version}\n"),
        ),
        ("charts/app/values.yaml", "not: vendored\n".to_owned()),
    ])
}

fn serve(gh: &GitHub) {
    let repo = gh.repo("o/app");
    for version in ["v1.0.0", "v1.1.0"] {
        for (path, text) in chart(version) {
            repo.file_at(version, path, text);
        }
        repo.release(version, |r| r);
    }
    let repo = gh.repo("o/tool");
    for version in ["v2.0.0", "v2.1.0"] {
        for (path, text) in tool(version) {
            repo.file_at(version, path, text);
        }
        repo.release(version, |r| r);
    }
}

const PORT_PATCH_TABLE: &str = r#"[[patch]]
name = "port"
upstream = "chart"
file = "patches/port.patch"
applies-to = "vendor"
"#;

fn vendor_toml() -> String {
    format!("{CHART_AND_TOOL}\n{PORT_PATCH_TABLE}")
}

/// Changes the chart's port and creates a file in the directory.
const PORT_PATCH: &str = "\
--- a/charts/app/values.yaml
+++ b/charts/app/values.yaml
@@ -1,2 +1,2 @@
 replicas: 1
-port: 80
+port: 8080
--- /dev/null
+++ b/charts/app/templates/extra.yaml
@@ -0,0 +1 @@
+kind: ConfigMap
";

/// What the package renders at `chart`'s and `tool`'s versions, pristine copies included.
fn expected(chart_version: &str, tool_version: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (path, text) in chart(chart_version) {
        if let Some(rel) = path.strip_prefix("charts/app/") {
            out.insert(format!("upstream/chart/charts/app/{rel}"), text.clone());
            out.insert(
                format!("charts/app/{rel}"),
                text.replace("port: 80\n", "port: 8080\n"),
            );
        }
    }
    out.insert(
        "charts/app/templates/extra.yaml".into(),
        "kind: ConfigMap\n".into(),
    );
    let tool_yaml = tool(tool_version)["deploy/tool.yaml"].clone();
    out.insert("upstream/tool/deploy/tool.yaml".into(), tool_yaml.clone());
    out.insert("templates/tool.yaml".into(), tool_yaml);
    out
}

fn tree(pkg: &TempPackage) -> BTreeMap<String, String> {
    pkg.snapshot()
        .into_iter()
        .filter(|(p, _)| p != "upstream/lock.toml")
        .filter(|(p, _)| {
            ["charts/", "templates/", "upstream/"]
                .iter()
                .any(|d| p.starts_with(d))
        })
        .map(|(p, b)| (p, String::from_utf8(b).unwrap()))
        .collect()
}

#[test]
fn two_named_upstreams_one_a_directory_are_updated_in_one_run() {
    let gh = GitHub::start();
    serve(&gh);
    let pkg = TempPackage::new();
    pkg.write("vendor.toml", vendor_toml())
        .write("patches/port.patch", PORT_PATCH);
    for (path, text) in expected("v1.0.0", "v2.0.0") {
        if !path.starts_with("upstream/") {
            pkg.write(&path, text);
        }
    }
    let rv = Revendor::new(pkg.path(), &gh);

    rv.run(&["update", "--to", "chart=v1.0.0", "--to", "tool=v2.0.0"])
        .expect(0);
    assert_eq!(tree(&pkg), expected("v1.0.0", "v2.0.0"));
    let lock = pkg.read_string("upstream/lock.toml");
    assert_eq!(
        lock.matches("upstream = \"chart\"\nfrom = \"charts/app/")
            .count(),
        5 + 6,
        "the chart's five files in [[file]], and in [[output]] with the one its patch creates: {lock}"
    );
    assert!(
        lock.contains("upstream = \"tool\"\nfrom = \"deploy/tool.yaml\""),
        "{lock}"
    );
    rv.run(&["check"]).expect(0);

    // One run moves both: the directory's files arrive, go and move under `chart`.
    let out = rv.run(&["update"]).expect(0);
    let said = &out.stdout;
    for line in [
        "upstream chart: v1.0.0 -> v1.1.0\n",
        "upstream tool: v2.0.0 -> v2.1.0\n",
        "upstream chart added charts/app/templates/new.yaml\n",
        "upstream chart removed charts/app/templates/old.yaml\n",
        "upstream chart renamed charts/app/templates/moved.yaml -> charts/app/templates/sub/moved.yaml\n",
        // issue 21: a file the run created or deleted is not called "updated".
        "created charts/app/templates/new.yaml\n",
        "deleted charts/app/templates/old.yaml\n",
    ] {
        assert!(said.contains(line), "{line:?} not in:\n{said}");
    }
    assert!(!said.contains("upstream tool added"), "{said}");
    assert_eq!(tree(&pkg), expected("v1.1.0", "v2.1.0"));
    let toml = pkg.read_string("vendor.toml");
    assert!(
        toml.contains("version = \"v1.1.0\"") && toml.contains("version = \"v2.1.0\""),
        "{toml}"
    );

    let json = rv
        .run(&["update", "--dry-run", "--format", "json"])
        .expect(0);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(report["upstreams"][0]["name"], "chart");
    assert_eq!(report["upstreams"][0]["added"], serde_json::json!([]));
    rv.run(&["check"]).expect(0);

    // A file in the directory that nothing renders is a stray of `chart`'s v1.1.0.
    pkg.write("charts/app/templates/stray.yaml", "kind: Stray\n");
    let out = rv.run(&["check"]).expect(1);
    assert!(
        out.stdout.contains("charts/app/templates/stray.yaml")
            && out
                .stdout
                .contains("upstream v1.1.0 has no `charts/app/templates/stray.yaml`"),
        "{}",
        out.stdout
    );
}
