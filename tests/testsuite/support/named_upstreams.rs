//! vendor.toml tables of the packages with named upstreams, written once: the chart-and-tool
//! package (upstream `chart`, o/app, vendoring the directory `charts/app/`, and upstream
//! `tool`, o/tool, one file) and the `[[image]]` and `[[pin]]` tables of a package whose
//! images are each named after the upstream they build.

/// The chart-and-tool package's `[[upstream]]`s, at v1.0.0 and v2.0.0, and their
/// `[[vendor]]`s.
pub const CHART_AND_TOOL: &str = r#"[[upstream]]
name = "chart"
github = "o/app"
version = "v1.0.0"

[[upstream]]
name = "tool"
github = "o/tool"
version = "v2.0.0"

[[vendor]]
upstream = "chart"
from = "charts/app/"
to = "charts/app/"

[[vendor]]
upstream = "tool"
from = "deploy/tool.yaml"
to = "templates/tool.yaml"
"#;

/// Image `name`: `<host>/team/<name>:<tag>`, built from `images/<name>` for linux/amd64 and
/// linux/arm64.
pub fn image(name: &str, host: &str, tag: &str) -> String {
    format!(
        r#"[[image]]
name = "{name}"
repository = "{host}/team/{name}"
tag = "{tag}"
context = "images/{name}"
platforms = ["linux/amd64", "linux/arm64"]
"#
    )
}

/// Image `chart`'s tag pinned at `chart.image.tag` in values.yaml.
pub const CHART_TAG_PIN: &str = r#"[[pin]]
image = "chart"
file = "values.yaml"
yaml = "chart.image.tag"
"#;
