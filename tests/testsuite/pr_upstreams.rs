//! `revendor pr` on a package with two named upstreams and two images
//! (issue 12), through the real binary, the GitHub stand-in, a bare `origin`
//! over `file://` and the real CNCF registry: upstream `chart` vendors a
//! directory whose release adds one file and removes another, upstream
//! `tool` one file, and both images are pinned into values.yaml. The title,
//! the body, the branch, the commit and the JSON summary name each
//! upstream's versions, each image, and each file that arrived or went; each
//! file's adaptation line says its own upstream's versions.

use crate::registry_support::{self, Auth, Registry, have_registry};
use crate::support;

use std::process::Command;

use registry_support::content::multi_arch;
use revendor::image::MediaType;
use support::named_upstreams::{CHART_AND_TOOL, CHART_TAG_PIN, image};
use support::{GitHub, GitRepo, Revendor};

const PLATFORM: &str = "example/platform";
const TOKEN: &str = "ghp_prupstreams0123456789";
const BOTH: [&str; 2] = ["linux/amd64", "linux/arm64"];
const BRANCH: &str = "revendor/app-chart-v1.1.0-tool-v2.1.0";

/// Upstream `chart` (o/app) at `version`: v1.1.0 adds `templates/new.yaml`
/// and removes `templates/old.yaml`.
fn chart(version: &str) -> Vec<(&'static str, String)> {
    let mut files = vec![
        (
            "charts/app/Chart.yaml",
            format!("name: app\nversion: {version}\n"),
        ),
        (
            "charts/app/templates/deploy.yaml",
            "kind: Deployment\n".to_owned(),
        ),
    ];
    files.push(match version {
        "v1.0.0" => ("charts/app/templates/old.yaml", "kind: Old\n".to_owned()),
        _ => ("charts/app/templates/new.yaml", "kind: New\n".to_owned()),
    });
    files
}

/// Upstream `tool` (o/tool)'s one vendored file at `version`.
fn tool(version: &str) -> String {
    format!("kind: DaemonSet\nimage: tool:{version}\n")
}

fn vendor_toml(host: &str) -> String {
    let tool_pin = r#"[[pin]]
image = "tool"
file = "values.yaml"
yaml = { repository = "tool.image.repository", tag = "tool.image.tag" }
"#;
    [
        CHART_AND_TOOL,
        &image("chart", host, "v1"),
        &image("tool", host, "v2"),
        CHART_TAG_PIN,
        tool_pin,
        "[checks]\nbuilder-go = \"allow\"   # the images build nothing\n",
    ]
    .join("\n")
}

const VALUES: &str = "\
chart:
  image:
    tag: v0
tool:
  image:
    repository: example/tool
    tag: v0
";

/// `git` on the bare repository at `dir`: its trimmed stdout.
fn git_at(dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn pr_of_two_upstreams_and_two_images_names_each_with_its_own_versions() {
    if !have_registry("pr_of_two_upstreams_and_two_images") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    let gh = GitHub::start();
    for version in ["v1.0.0", "v1.1.0"] {
        let repo = gh.repo("o/app");
        for (path, text) in chart(version) {
            repo.file_at(version, path, text);
        }
        repo.release(version, |r| r);
    }
    for version in ["v2.0.0", "v2.1.0"] {
        gh.repo("o/tool")
            .file_at(version, "deploy/tool.yaml", tool(version))
            .release(version, |r| r);
    }
    gh.repo(PLATFORM).branch("main", &"1".repeat(40));
    gh.accept_token(TOKEN);
    let chart_was = multi_arch(&BOTH, "chart-1", MediaType::OciIndex);
    let tool_was = multi_arch(&BOTH, "tool-1", MediaType::OciIndex);
    registry.push_multi_arch("team/chart", "v1", &chart_was);
    registry.push_multi_arch("team/tool", "v2", &tool_was);

    let repo = GitRepo::new();
    repo.commit(
        "package",
        [
            ("packages/app/vendor.toml", vendor_toml(&registry.host)),
            ("packages/app/values.yaml", VALUES.to_owned()),
            (
                "packages/app/images/chart/Dockerfile",
                "FROM scratch\n".to_owned(),
            ),
            (
                "packages/app/images/tool/Dockerfile",
                "FROM scratch\n".to_owned(),
            ),
        ],
    );
    let docker = tempfile::tempdir().unwrap();
    let rv = Revendor::new(&repo.path().join("packages/app"), &gh)
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_REPOSITORY", PLATFORM)
        .env("DOCKER_CONFIG", &docker.path().display().to_string())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Nightly Bot")
        .env("GIT_AUTHOR_EMAIL", "bot@example.com")
        .env("GIT_COMMITTER_NAME", "Nightly Bot")
        .env("GIT_COMMITTER_EMAIL", "bot@example.com");
    rv.run(&["update", "--to", "chart=v1.0.0", "--to", "tool=v2.0.0"])
        .expect(0);
    rv.run(&["image", "pin"]).expect(0);
    let base = repo.commit("adopt", Vec::<(&str, &str)>::new());
    let origin = tempfile::tempdir().unwrap();
    let init = Command::new("git")
        .args(["init", "--quiet", "--bare"])
        .arg(origin.path())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .unwrap();
    assert!(init.success());
    repo.git(&[
        "remote",
        "add",
        "origin",
        &format!("file://{}", origin.path().display()),
    ]);

    // Both upstreams move in one update; both images are rebuilt and pinned.
    rv.run(&["update"]).expect(0);
    let chart_now = multi_arch(&BOTH, "chart-2", MediaType::OciIndex);
    let tool_now = multi_arch(&BOTH, "tool-2", MediaType::OciIndex);
    registry.push_multi_arch("team/chart", "v1", &chart_now);
    registry.push_multi_arch("team/tool", "v2", &tool_now);
    rv.run(&["image", "pin"]).expect(0);

    let server = gh.server_url();
    let title = "chore(packages/app): bump chart to v1.1.0, tool to v2.1.0";
    let text = rv.run(&["pr"]).expect(0).stdout;
    let (said_title, body) = text.split_once("\n\n").unwrap();
    assert_eq!(said_title, title);
    let image_line = |name: &str, now: &str, was: &str| {
        format!("- Pinned image `{name}`: `{now}` (was `{was}`)\n")
    };
    let reference = |repository: &str, tag: &str, image: &registry_support::content::MultiArch| {
        format!(
            "{}/team/{repository}:{tag}@{}",
            registry.host, image.index.digest
        )
    };
    for line in [
        format!("- `chart`, [app]({server}/o/app): `v1.0.0` → `v1.1.0`\n"),
        format!("  - upstream changes: {server}/o/app/compare/v1.0.0...v1.1.0\n"),
        format!("- `tool`, [tool]({server}/o/tool): `v2.0.0` → `v2.1.0`\n"),
        format!("  - upstream changes: {server}/o/tool/compare/v2.0.0...v2.1.0\n"),
        image_line(
            "chart",
            &reference("chart", "v1", &chart_now),
            &reference("chart", "v1", &chart_was),
        ),
        image_line(
            "tool",
            &reference("tool", "v2", &tool_now),
            &reference("tool", "v2", &tool_was),
        ),
        " charts/app/templates/new.yaml | +1 -0 (new)\n".into(),
        " charts/app/templates/old.yaml | +0 -1 (gone)\n".into(),
        " deploy/tool.yaml              | +1 -1\n".into(),
        "Files upstream `chart` added, vendored now:\n\n- `charts/app/templates/new.yaml`\n".into(),
        "Files upstream `chart` removed, deleted here:\n\n- `charts/app/templates/old.yaml`\n".into(),
        // Each file says its own upstream's versions (the bug: tool's said chart's).
        "- `templates/tool.yaml`: rendered from tool v2.1.0 with its patches, rewrites and pin (+1 -1)\n".into(),
        "- `charts/app/Chart.yaml`: rendered from chart v1.1.0 with its patches, rewrites and pin (+1 -1)\n".into(),
        "- `charts/app/templates/old.yaml`: removed: chart v1.1.0 no longer has `charts/app/templates/old.yaml`\n".into(),
        "- `upstream/tool/deploy/tool.yaml`: pristine copy of upstream `tool`'s `deploy/tool.yaml` at v2.1.0 (+1 -1)\n".into(),
        "- `upstream/chart/charts/app/templates/new.yaml`: pristine copy of upstream `chart`'s `charts/app/templates/new.yaml` at v1.1.0 (added)\n".into(),
        "- `upstream/chart/charts/app/templates/old.yaml`: pristine copy removed: chart v1.1.0 no longer has it\n".into(),
        "- `vendor.toml`: [[upstream]] chart version v1.0.0 → v1.1.0, [[upstream]] tool version v2.0.0 → v2.1.0\n".into(),
        "- `revendor check --offline` on the working tree: clean\n".into(),
    ] {
        assert!(body.contains(&line), "{line:?} not in:\n{body}");
    }
    // The chart's unchanged file says nothing.
    assert!(!body.contains("templates/deploy.yaml"), "{body}");
    assert!(
        body.contains(", tool version v2.0.0 → v2.1.0, ")
            && body.contains("no longer charts/app/templates/old.yaml"),
        "{body}"
    );

    // The JSON summary carries the same facts, as docs/json.md describes them.
    let json = rv.run(&["pr", "--format", "json"]).expect(0).stdout;
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["title"], title);
    assert_eq!(report["body"], body);
    assert_eq!(report["branch"], BRANCH);
    let summary = &report["summary"];
    let each: Vec<_> = summary["upstreams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["label"].as_str().unwrap(),
                u["from"].as_str().unwrap(),
                u["to"].as_str().unwrap(),
                u["added"].clone(),
                u["removed"].clone(),
            )
        })
        .collect();
    let none = serde_json::json!([]);
    assert_eq!(
        each,
        [
            (
                "chart",
                "v1.0.0",
                "v1.1.0",
                serde_json::json!(["charts/app/templates/new.yaml"]),
                serde_json::json!(["charts/app/templates/old.yaml"]),
            ),
            ("tool", "v2.0.0", "v2.1.0", none.clone(), none),
        ]
    );
    let images: Vec<_> = summary["images"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["name"].as_str().unwrap(),
                i["reference"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        images,
        [
            ("chart", reference("chart", "v1", &chart_now)),
            ("tool", reference("tool", "v2", &tool_now)),
        ]
    );
    assert_documented(&report);
    assert_eq!(
        summary["added"],
        serde_json::json!(["charts/app/templates/new.yaml"])
    );
    assert_eq!(
        summary["removed"],
        serde_json::json!(["charts/app/templates/old.yaml"])
    );

    // --create: one branch naming both versions, one commit naming both
    // moves, one pull request with the same title and body.
    let out = rv.run(&["pr", "--create"]).expect(0);
    let url = format!("{server}/{PLATFORM}/pull/1");
    assert_eq!(out.stdout, format!("{url}\n"));
    let pulls = gh.pulls(PLATFORM);
    assert_eq!(pulls.len(), 1);
    assert_eq!(pulls[0].head, BRANCH);
    assert_eq!(pulls[0].title, title);
    assert_eq!(pulls[0].body, body);
    let head = git_at(
        origin.path(),
        &["rev-parse", &format!("refs/heads/{BRANCH}")],
    );
    assert_eq!(
        git_at(origin.path(), &["rev-parse", &format!("{head}^")]),
        base
    );
    let message = git_at(origin.path(), &["log", "-1", "--format=%B", &head]);
    assert!(
        message.starts_with(&format!(
            "{title}\n\nchart v1.0.0 -> v1.1.0\n{server}/o/app/compare/v1.0.0...v1.1.0\n\
             tool v2.0.0 -> v2.1.0\n{server}/o/tool/compare/v2.0.0...v2.1.0\n"
        )),
        "{message}"
    );
    let files = git_at(origin.path(), &["diff", "--name-only", &base, &head]);
    assert_eq!(
        files,
        "packages/app/charts/app/Chart.yaml\npackages/app/charts/app/templates/new.yaml\n\
         packages/app/charts/app/templates/old.yaml\npackages/app/templates/tool.yaml\n\
         packages/app/upstream/chart/charts/app/Chart.yaml\n\
         packages/app/upstream/chart/charts/app/templates/new.yaml\n\
         packages/app/upstream/chart/charts/app/templates/old.yaml\n\
         packages/app/upstream/lock.toml\npackages/app/upstream/tool/deploy/tool.yaml\n\
         packages/app/values.yaml\npackages/app/vendor.toml"
    );
}

/// `pr --format json`'s `report` has the shape docs/json.md's example has,
/// key for key at every depth (an element of a list as the example's first,
/// an object the example has may be `null`, a `detail` may be absent), and
/// the doc's table names every key of the example's top level and summary.
pub(crate) fn assert_documented(report: &serde_json::Value) {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/json.md")).unwrap();
    let section = doc
        .split_once("\n## revendor pr\n")
        .expect("docs/json.md has `## revendor pr`")
        .1;
    let example = section
        .split_once("```json\n")
        .unwrap()
        .1
        .split_once("```")
        .unwrap()
        .0;
    let example: serde_json::Value = serde_json::from_str(example).expect("the example is JSON");
    same_shape(&example, report, "");
    let table = section.split_once("| key | meaning |").unwrap().1;
    for (prefix, object) in [("", &example), ("summary.", &example["summary"])] {
        for key in object.as_object().unwrap().keys() {
            assert!(
                table.contains(&format!("`{prefix}{key}`")),
                "docs/json.md's pr table does not name `{prefix}{key}`"
            );
        }
    }
}

fn same_shape(doc: &serde_json::Value, got: &serde_json::Value, at: &str) {
    use serde_json::Value;
    match (doc, got) {
        (Value::Object(_), Value::Null) => {}
        (Value::Object(d), Value::Object(g)) => {
            for key in g.keys() {
                assert!(d.contains_key(key), "`{at}.{key}` is not in docs/json.md");
            }
            for (key, value) in d {
                match g.get(key) {
                    Some(v) => same_shape(value, v, &format!("{at}.{key}")),
                    None => assert_eq!(key, "detail", "`{at}.{key}` is documented, not printed"),
                }
            }
        }
        (Value::Array(d), Value::Array(g)) => {
            if let Some(first) = d.first() {
                for (i, v) in g.iter().enumerate() {
                    same_shape(first, v, &format!("{at}[{i}]"));
                }
            }
        }
        (Value::Object(_) | Value::Array(_), _) | (_, Value::Object(_) | Value::Array(_)) => {
            panic!("`{at}` is {got}, docs/json.md has {doc}")
        }
        _ => {}
    }
}
