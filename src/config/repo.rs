//! `.revendor.toml`: what a whole repository decides for every package in it
//! (issue 22: cozystack's labeler and pull request template want their own
//! title scope, labels and a `release-note` block).
//!
//! 1. [`RepoConfig::find`] walks up from the package directory to the git
//!    root and reads the first `.revendor.toml` it meets; none is the
//!    default (today's title, no labels, no footer).
//! 2. Its `[pr]` table is checked whole when read: an unknown key or an
//!    unknown `{placeholder}` is an error at its line, before anything is
//!    pushed.
//! 3. `pr` fills the placeholders with [`Template::fill`].
//! 4. Its `[report]` table names the tracking issue `pr --report` keeps
//!    (title, labels), defaults [`ReportConfig::default`].
//! 5. Its `[all]` table names the directories `check --all` walks past
//!    ([`AllConfig`]): sample packages that are read, never adopted, such as
//!    this repository's `examples/`.
//!
//! ```toml
//! [pr]
//! title = "chore({component}): bump {upstream} to {version}"
//! labels = ["area/networking"]
//! footer = "```release-note\n[{component}] bump {upstream} to {version}\n```"
//! components = { "packages/system/kubeovn" = "kube-ovn" }
//!
//! [report]
//! title = "Vendored packages that need a person"
//! labels = ["dependencies"]
//!
//! [all]
//! exclude = ["examples/**"]
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use globset::GlobSet;
use serde::Deserialize;
use toml::Spanned;

use super::error::{ConfigError, line_of};
use super::select;

/// The file's name, looked for in the package directory and each parent up
/// to the git root.
pub const FILE: &str = ".revendor.toml";

/// The placeholders a title or footer may hold.
pub const PLACEHOLDERS: [&str; 6] = [
    "component",
    "package",
    "upstream",
    "version",
    "from",
    "summary",
];

/// `.revendor.toml`, read and checked; the default when there is none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepoConfig {
    /// Where it was read from, when there was one.
    pub path: Option<PathBuf>,
    /// The pull request title; `None`: revendor's own.
    pub title: Option<Template>,
    /// Labels every upgrade pull request gets.
    pub labels: Vec<String>,
    /// Markdown appended to every pull request body.
    pub footer: Option<Template>,
    /// `{component}` of a package path (relative to the git root) when it is
    /// not the package directory's name.
    pub components: BTreeMap<String, String>,
    /// The tracking issue of `pr --report`.
    pub report: ReportConfig,
    /// What `check --all` leaves out.
    pub all: AllConfig,
}

/// `[all]`: packages `check --all` does not check, by globs over their path
/// relative to the directory holding `.revendor.toml` (`*` stays inside one
/// path component, `**` spans any number, as `[[vendor]] exclude` reads
/// them).
#[derive(Debug, Clone, Default)]
pub struct AllConfig {
    /// The globs as written.
    pub exclude: Vec<String>,
    compiled: GlobSet,
}

// Two configurations are the same when they say the same globs; the compiled
// set is derived from them and has no equality of its own.
impl PartialEq for AllConfig {
    fn eq(&self, other: &AllConfig) -> bool {
        self.exclude == other.exclude
    }
}

impl Eq for AllConfig {}

impl AllConfig {
    /// Whether the package at `rel` (relative to `.revendor.toml`'s
    /// directory, `/`-separated) is left out.
    pub fn excludes(&self, rel: &str) -> bool {
        self.compiled.is_match(rel)
    }
}

/// `[report]`: the one tracking issue `pr --report` keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportConfig {
    /// The issue's title.
    pub title: String,
    /// Its labels; the issue is looked up among open issues carrying all of
    /// them.
    pub labels: Vec<String>,
}

impl Default for ReportConfig {
    /// "revendor: packages that need a person", labelled `revendor`.
    fn default() -> ReportConfig {
        ReportConfig {
            title: "revendor: packages that need a person".to_owned(),
            labels: vec!["revendor".to_owned()],
        }
    }
}

/// A title or footer with `{placeholder}`s, each one of [`PLACEHOLDERS`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template(String);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    #[serde(default)]
    pr: Option<RawPr>,
    #[serde(default)]
    report: Option<RawReport>,
    #[serde(default)]
    all: Option<RawAll>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAll {
    #[serde(default)]
    exclude: Vec<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReport {
    title: Option<String>,
    labels: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPr {
    title: Option<Spanned<String>>,
    #[serde(default)]
    labels: Vec<String>,
    footer: Option<Spanned<String>>,
    #[serde(default)]
    components: BTreeMap<String, String>,
}

impl RepoConfig {
    /// The first `.revendor.toml` in `package` or a parent of it, up to and
    /// including `root` (the git root); the default when there is none.
    pub fn find(package: &Path, root: &Path) -> Result<RepoConfig, ConfigError> {
        for dir in package.ancestors() {
            let path = dir.join(FILE);
            if path.is_file() {
                return RepoConfig::read(&path);
            }
            if dir == root {
                break;
            }
        }
        Ok(RepoConfig::default())
    }

    /// Reads and checks the file at `path`.
    pub fn read(path: &Path) -> Result<RepoConfig, ConfigError> {
        let text = crate::journal::read_to_string(path).map_err(|e| {
            ConfigError::at(path, None, format!("cannot read {FILE}: {e}"))
                .hint(format!("make {FILE} readable UTF-8 text, or remove it"))
        })?;
        RepoConfig::parse(path, &text)
    }

    /// Checks `text`, the contents of `path`.
    pub fn parse(path: &Path, text: &str) -> Result<RepoConfig, ConfigError> {
        let raw: Raw = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| line_of(text, s.start));
            ConfigError::at(path, line, e.message().trim().to_owned())
                .hint("see the `.revendor.toml` section of docs/reference.md")
        })?;
        let mut config = RepoConfig {
            path: Some(path.to_owned()),
            ..RepoConfig::default()
        };
        if let Some(all) = raw.all {
            config.all = all_config(path, text, all)?;
        }
        if let Some(report) = raw.report {
            let default = ReportConfig::default();
            config.report = ReportConfig {
                title: report.title.unwrap_or(default.title),
                labels: report.labels.unwrap_or(default.labels),
            };
        }
        let Some(pr) = raw.pr else {
            return Ok(config);
        };
        let template = |value: Option<Spanned<String>>, key: &str| {
            value
                .map(|v| {
                    Template::parse(v.get_ref()).map_err(|name| {
                        ConfigError::at(
                            path,
                            Some(line_of(text, v.span().start)),
                            format!("[pr] {key} has the unknown placeholder `{{{name}}}`"),
                        )
                        .hint(format!("use one of {{{}}}", PLACEHOLDERS.join("}, {")))
                    })
                })
                .transpose()
        };
        Ok(RepoConfig {
            title: template(pr.title, "title")?,
            labels: pr.labels,
            footer: template(pr.footer, "footer")?,
            components: pr.components,
            ..config
        })
    }
}

/// `[all]` compiled; a glob that does not compile is an error at its line.
fn all_config(path: &Path, text: &str, raw: RawAll) -> Result<AllConfig, ConfigError> {
    let exclude: Vec<String> = raw.exclude.iter().map(|g| g.get_ref().clone()).collect();
    let compiled = select::compile(&exclude).map_err(|bad| {
        let line = raw
            .exclude
            .get(bad.index)
            .map(|g| line_of(text, g.span().start));
        ConfigError::at(
            path,
            line,
            format!(
                "[all] exclude: `{}` is not a glob: {}",
                exclude[bad.index], bad.reason
            ),
        )
        .hint("write a glob such as \"examples/**\" (`*` inside one directory, `**` across them)")
    })?;
    Ok(AllConfig { exclude, compiled })
}

impl Template {
    /// `text` when every `{name}` in it is a placeholder; else the first
    /// unknown name.
    pub fn parse(text: &str) -> Result<Template, String> {
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            let after = &rest[open + 1..];
            let Some(close) = after.find('}') else { break };
            let name = &after[..close];
            if !PLACEHOLDERS.contains(&name) {
                return Err(name.to_owned());
            }
            rest = &after[close + 1..];
        }
        Ok(Template(text.to_owned()))
    }

    /// The text with each placeholder replaced by its value in `values`
    /// (an absent one by nothing).
    pub fn fill(&self, values: &[(&str, &str)]) -> String {
        let mut out = self.0.clone();
        for name in PLACEHOLDERS {
            let value = values
                .iter()
                .find(|(n, _)| *n == name)
                .map_or("", |(_, v)| v);
            out = out.replace(&format!("{{{name}}}"), value);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<RepoConfig, ConfigError> {
        RepoConfig::parse(Path::new(".revendor.toml"), text)
    }

    #[test]
    fn a_title_labels_footer_and_components() {
        let c = parse(
            "[pr]\ntitle = \"chore({component}): bump {upstream} to {version}\"\n\
             labels = [\"area/networking\"]\nfooter = \"```release-note\\n{summary}\\n```\"\n\
             components = { \"packages/system/kubeovn\" = \"kube-ovn\" }\n",
        )
        .unwrap();
        let values = [
            ("component", "kube-ovn"),
            ("upstream", "kube-ovn"),
            ("version", "v1.14.11"),
            ("summary", "bump kube-ovn to v1.14.11"),
        ];
        assert_eq!(
            c.title.unwrap().fill(&values),
            "chore(kube-ovn): bump kube-ovn to v1.14.11"
        );
        assert_eq!(
            c.footer.unwrap().fill(&values),
            "```release-note\nbump kube-ovn to v1.14.11\n```"
        );
        assert_eq!(c.labels, ["area/networking"]);
        assert_eq!(c.components["packages/system/kubeovn"], "kube-ovn");
    }

    #[test]
    fn unknown_keys_and_placeholders_name_their_line() {
        let e = parse("[pr]\n\ntitle = \"chore({scope}): x\"\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("`{scope}`"), "{}", e.message);
        let e = parse("[pr]\ncolour = 1\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("colour"), "{}", e.message);
        assert_eq!(parse("").unwrap().title, None);
        let e = parse("[report]\ntitle = \"t\"\nlabel = [\"x\"]\n").unwrap_err();
        assert_eq!(e.line, Some(3));
    }

    #[test]
    fn the_report_table_names_the_tracking_issue_else_the_defaults() {
        assert_eq!(parse("").unwrap().report, ReportConfig::default());
        let c = parse("[report]\ntitle = \"Vendored\"\n").unwrap();
        assert_eq!(c.report.title, "Vendored");
        assert_eq!(c.report.labels, ["revendor"]);
        let c = parse("[report]\nlabels = []\n[pr]\nlabels = [\"a\"]\n").unwrap();
        assert_eq!(c.report.labels, Vec::<String>::new());
        assert_eq!(c.labels, ["a"]);
    }

    #[test]
    fn the_all_table_excludes_packages_by_glob_and_names_a_bad_one() {
        let c = parse("[all]\nexclude = [\"examples/**\", \"packages/*/old\"]\n").unwrap();
        assert!(c.all.excludes("examples/cozystack/kamaji"));
        assert!(c.all.excludes("packages/system/old"));
        assert!(
            !c.all.excludes("packages/system/deep/old"),
            "`*` is one directory"
        );
        assert!(!c.all.excludes("."));
        assert!(!parse("").unwrap().all.excludes("examples/x"));
        let e = parse("[all]\nexclude = [\n  \"ok/**\",\n  \"bad/[\",\n]\n").unwrap_err();
        assert_eq!(e.line, Some(4));
        assert!(e.message.contains("`bad/[`"), "{}", e.message);
    }

    #[test]
    fn found_walking_up_to_the_git_root_and_no_further() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        let package = root.join("packages/system/multus");
        std::fs::create_dir_all(&package).unwrap();
        std::fs::write(dir.path().join(FILE), "[pr]\nlabels = [\"outside\"]\n").unwrap();
        assert_eq!(
            RepoConfig::find(&package, &root).unwrap(),
            RepoConfig::default()
        );
        std::fs::write(root.join(FILE), "[pr]\nlabels = [\"root\"]\n").unwrap();
        assert_eq!(RepoConfig::find(&package, &root).unwrap().labels, ["root"]);
    }
}
