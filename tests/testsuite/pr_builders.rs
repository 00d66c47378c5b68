//! `revendor pr` on a package of two images, each built from its own upstream (issue 12),
//! through the real binary and the GitHub stand-in: each image's golang builder stage is
//! compared with the go.mod of the upstream it is built from (the bug: every image was
//! compared with the first image's), named in the body and listed in the JSON's `builders`
//! as docs/json.md describes it, while `builder` keeps the first one's.

use crate::pr_upstreams::assert_documented;
use crate::support;

use support::{GitHub, GitRepo, Revendor};

const VENDOR_TOML: &str = r#"[[upstream]]
name = "chart"
github = "o/app"
version = "v1.0.0"

[[upstream]]
name = "tool"
github = "o/tool"
version = "v2.0.0"

[[vendor]]
upstream = "chart"
from = "deploy/app.yaml"
to = "templates/app.yaml"

[[vendor]]
upstream = "tool"
from = "deploy/tool.yaml"
to = "templates/tool.yaml"

[[rewrite]]
upstream = "chart"
file = "images/chart/Dockerfile"
dockerfile-arg = "VERSION"
with = "{version}"

[[rewrite]]
upstream = "tool"
file = "images/tool/Dockerfile"
dockerfile-arg = "VERSION"
with = "{version}"

[[image]]
name = "chart"
repository = "ghcr.io/o/chart"
tag = "v1"
context = "images/chart"
platforms = ["linux/amd64", "linux/arm64"]

[[image]]
name = "tool"
repository = "ghcr.io/o/tool"
tag = "v2"
context = "images/tool"
platforms = ["linux/amd64", "linux/arm64"]

[checks]
builder-go = "allow"   # the test's builders are not pinned
"#;

#[test]
fn pr_of_two_images_compares_each_builder_with_its_own_upstreams_go_mod() {
    let gh = GitHub::start();
    for (repo, file, versions) in [
        (
            "o/app",
            "deploy/app.yaml",
            [("v1.0.0", "1.24.0"), ("v1.1.0", "1.25.0")],
        ),
        (
            "o/tool",
            "deploy/tool.yaml",
            [("v2.0.0", "1.25.0"), ("v2.1.0", "1.26.2")],
        ),
    ] {
        for (version, go) in versions {
            gh.repo(repo)
                .file_at(version, file, format!("kind: Deployment\n# {version}\n"))
                .file_at(
                    version,
                    "go.mod",
                    format!("module example.com/{repo}\n\ngo {go}\n"),
                )
                .release(version, |r| r);
        }
    }
    let repo = GitRepo::new();
    repo.commit(
        "package",
        [
            ("packages/app/vendor.toml", VENDOR_TOML.to_owned()),
            (
                "packages/app/images/chart/Dockerfile",
                "FROM golang:1.26 AS build\nARG VERSION=v1.0.0\nFROM scratch\n".to_owned(),
            ),
            (
                "packages/app/images/tool/Dockerfile",
                "FROM golang:1.25 AS build\nARG VERSION=v2.0.0\nFROM scratch\n".to_owned(),
            ),
        ],
    );
    let rv = Revendor::new(&repo.path().join("packages/app"), &gh)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1");
    rv.run(&["update", "--to", "chart=v1.0.0", "--to", "tool=v2.0.0"])
        .expect(0);
    repo.commit("adopt", Vec::<(&str, &str)>::new());
    rv.run(&["update"]).expect(0);

    let body = rv.run(&["pr"]).expect(0).stdout;
    for line in [
        "- Builder of `chart`: `golang:1.26` in `images/chart/Dockerfile`, Go 1.26; upstream's go.mod: `go 1.25.0` (was `go 1.24.0`): satisfied\n",
        "- Builder of `tool`: `golang:1.25` in `images/tool/Dockerfile`, Go 1.25; upstream's go.mod: `go 1.26.2` (was `go 1.25.0`): **not satisfied**, the builder's Go is older\n",
    ] {
        assert!(body.contains(line), "{line:?} not in:\n{body}");
    }
    assert!(!body.contains("- Builder: "), "{body}");

    let json = rv.run(&["pr", "--format", "json"]).expect(0).stdout;
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let summary = &report["summary"];
    let builder =
        |name: &str, dockerfile: &str, go: &str, directive: &str, before: &str, ok: bool| {
            serde_json::json!({
                "name": name,
                "dockerfile": dockerfile,
                "image": format!("golang:{go}"),
                "image_before": null,
                "go": go,
                "go_directive": directive,
                "go_directive_before": before,
                "satisfied": ok,
            })
        };
    let chart = builder(
        "chart",
        "images/chart/Dockerfile",
        "1.26",
        "1.25.0",
        "1.24.0",
        true,
    );
    assert_eq!(
        summary["builders"],
        serde_json::json!([
            chart,
            builder(
                "tool",
                "images/tool/Dockerfile",
                "1.25",
                "1.26.2",
                "1.25.0",
                false
            ),
        ])
    );
    let mut first = chart.as_object().unwrap().clone();
    first.remove("name");
    assert_eq!(summary["builder"], serde_json::Value::Object(first));
    assert_documented(&report);
}
