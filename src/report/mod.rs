//! Findings of `revendor check`, in the three formats of `--format`
//! ([`crate::console::Format`]); [`crate::console::Shell::out`] prints them.
//!
//! - human: findings grouped by id, one line each with `file:line`, the
//!   severity (coloured like `error:` and `warning:` when stdout has colour),
//!   the message and the fix, then the counts;
//! - json: DESIGN.md's document, `{"schema", "package", "findings": [{"id",
//!   "severity", "file", "line", "message", "fix"}], "counts"}`, made by
//!   [`document`] as every JSON document is;
//! - github: one workflow command per finding (`::error file=…,line=…::…`),
//!   plus a Markdown table for `$GITHUB_STEP_SUMMARY`.
//!
//! Paths in findings are relative to the package; the github format joins
//! them to [`annotation_dir`], the package as seen from the repository root,
//! because GitHub attaches an annotation to a pull request's diff only when
//! its path is relative to that root.
//!
//! A check that could not start (a malformed vendor.toml, no lock) is
//! reported in the same three formats, as a [`Failure`]: the error object
//! every failed command's JSON holds under `"error"`, one `::error`
//! annotation, one line in the step summary (docs/output.md).
//!
//! `all.rs` prints the same for many packages at once (`check --all`).

pub mod all;
mod document;
mod failure;
mod limit;

pub use document::{SCHEMA, document};
pub use failure::{Failure, github_failure, json_error, json_failure, markdown_failure};
pub use limit::{ANNOTATIONS_PER_KIND, SUMMARY_BYTES, cap_annotations};

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

use crate::check::{Finding, Severity};
use crate::console::{Paint, Style};
use crate::error::{Error, Result};

/// How many findings of each severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    /// `error` findings (exit 1 when any).
    pub error: usize,
    /// `warning` findings.
    pub warning: usize,
    /// `info` findings.
    pub info: usize,
}

impl Counts {
    /// Counts `findings`.
    pub fn of(findings: &[Finding]) -> Counts {
        let mut c = Counts::default();
        for f in findings {
            match f.severity {
                Severity::Error => c.error += 1,
                Severity::Warning => c.warning += 1,
                Severity::Info => c.info += 1,
            }
        }
        c
    }

    fn describe(&self) -> String {
        let plural = |n: usize, word: &str| {
            if n == 1 {
                format!("1 {word}")
            } else {
                format!("{n} {word}s")
            }
        };
        let mut parts = vec![plural(self.error, "error"), plural(self.warning, "warning")];
        if self.info > 0 {
            parts.push(format!("{} info", self.info));
        }
        parts.join(", ")
    }
}

/// One finding as the human format prints it (without indentation), its
/// severity painted as `error:` and `warning:` are on stderr.
pub fn human_line(f: &Finding, paint: Paint) -> String {
    let style = match f.severity {
        Severity::Error => Style::Error,
        Severity::Warning => Style::Warning,
        Severity::Info => Style::Note,
    };
    let severity = paint.paint(style, &f.severity.to_string());
    let mut line = format!("{}:{}: {severity}: {}", f.file, f.line, f.message);
    if !f.fix.is_empty() {
        line.push_str(&format!(" (fix: {})", f.fix));
    }
    line
}

/// The human report: findings grouped by id (ids sorted, findings in file
/// and line order), then a summary line.
pub fn human(package: &str, findings: &[Finding], paint: Paint) -> String {
    if findings.is_empty() {
        return format!("{package}: clean, no findings\n");
    }
    let mut groups: BTreeMap<&str, Vec<&Finding>> = BTreeMap::new();
    for f in findings {
        groups.entry(f.id.as_str()).or_default().push(f);
    }
    let mut out = String::new();
    for (id, mut list) in groups {
        list.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
        out.push_str(id);
        out.push('\n');
        for f in list {
            out.push_str("  ");
            out.push_str(&human_line(f, paint));
            out.push('\n');
        }
    }
    out.push_str(&format!(
        "\n{package}: {}\n",
        Counts::of(findings).describe()
    ));
    out
}

/// DESIGN.md's JSON document, pretty-printed, led by `"schema"`.
pub fn json(package: &str, findings: &[Finding]) -> String {
    #[derive(serde::Serialize)]
    struct Doc<'a> {
        package: &'a str,
        findings: &'a [Finding],
        counts: Counts,
    }
    document(&Doc {
        package,
        findings,
        counts: Counts::of(findings),
    })
}

/// GitHub workflow commands, one per finding: `::error`, `::warning` or
/// `::notice`, with the file joined to `dir` ([`annotation_dir`]); at most
/// [`ANNOTATIONS_PER_KIND`] of each kind, then a line counting the rest
/// ([`cap_annotations`]), which the step summary lists.
pub fn github(dir: &Path, findings: &[Finding]) -> String {
    cap_annotations(&annotations(dir, findings))
}

/// One workflow command per finding, uncapped: for a report that caps
/// several packages' together (`check --all`).
fn annotations(dir: &Path, findings: &[Finding]) -> String {
    let mut out = String::new();
    for f in findings {
        let command = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let mut message = f.message.clone();
        if !f.fix.is_empty() {
            message.push_str(&format!("\nfix: {}", f.fix));
        }
        out.push_str(&format!(
            "::{command} file={},line={},title={}::{}\n",
            property(&workspace_path(dir, &f.file)),
            f.line,
            property(&f.id),
            data(&message)
        ));
    }
    out
}

/// The Markdown for `$GITHUB_STEP_SUMMARY`: a heading, the counts and a
/// table of the findings.
pub fn markdown(package: &str, dir: &Path, findings: &[Finding]) -> String {
    let mut out = format!("### revendor check: {package}\n\n");
    if findings.is_empty() {
        out.push_str("No findings.\n");
        return out;
    }
    out.push_str(&format!("{}\n\n", Counts::of(findings).describe()));
    out.push_str("| severity | id | location | message | fix |\n| --- | --- | --- | --- | --- |\n");
    for f in findings {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            f.severity,
            code_cell(&f.id),
            code_cell(&format!("{}:{}", workspace_path(dir, &f.file), f.line)),
            cell(&f.message),
            cell(&f.fix)
        ));
    }
    out
}

/// The package directory as annotations name it: relative to
/// `github_workspace` (`GITHUB_WORKSPACE`) when the package is inside it,
/// else to the root of the git work tree holding the package (found with
/// git2 from the package, as GitHub checks it out), else `package` as
/// given. `.` components and symlinks are resolved first, so `-C` from any
/// directory gives the same path.
pub fn annotation_dir(package: &Path, github_workspace: Option<&Path>) -> PathBuf {
    let Ok(absolute) = package.canonicalize() else {
        return package.to_path_buf();
    };
    let inside = |root: &Path| {
        let root = root.canonicalize().ok()?;
        absolute.strip_prefix(root).ok().map(Path::to_path_buf)
    };
    if let Some(relative) = github_workspace.and_then(inside) {
        return relative;
    }
    let git_root = git2::Repository::discover(&absolute)
        .ok()
        .and_then(|repo| repo.workdir().map(Path::to_path_buf));
    if let Some(relative) = git_root.as_deref().and_then(inside) {
        return relative;
    }
    package.to_path_buf()
}

/// Appends `markdown` to the step summary file, as much of it as fits in
/// GitHub's 1 MiB beside what the step already wrote there (cut at a line,
/// saying so).
pub fn append_summary(path: &Path, markdown: &str) -> Result<()> {
    let written = std::fs::metadata(path).map_or(0, |m| m.len());
    let text = limit::fit_summary(
        &format!("{markdown}\n"),
        SUMMARY_BYTES.saturating_sub(written),
    );
    if text.is_empty() {
        return Ok(());
    }
    append(path, text.as_bytes())
}

/// Appends `bytes` to a file GitHub Actions hands the step (the summary,
/// `$GITHUB_OUTPUT`), creating it when missing.
fn append(path: &Path, bytes: &[u8]) -> Result<()> {
    let io = |source| Error::Io {
        action: "append to",
        path: path.to_path_buf(),
        source,
    };
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| file.write_all(bytes))
        .map_err(io)
}

/// `dir/file`, with `.` and resolvable `..` components removed and `/` as
/// the separator.
fn workspace_path(dir: &Path, file: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    let joined: PathBuf = dir.join(file);
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if parts.last().is_some_and(|p| p != ".." && !p.is_empty()) {
                    parts.pop();
                } else {
                    parts.push("..".to_owned());
                }
            }
            Component::RootDir => parts.push(String::new()),
            Component::Normal(n) => parts.push(n.to_string_lossy().into_owned()),
            Component::Prefix(p) => parts.push(p.as_os_str().to_string_lossy().into_owned()),
        }
    }
    match parts.as_slice() {
        [] => ".".to_owned(),
        [root] if root.is_empty() => "/".to_owned(),
        _ => parts.join("/"),
    }
}

/// Escapes a workflow command's message (GitHub's `escapeData`).
fn data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow command's property (GitHub's `escapeProperty`).
fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

/// A Markdown table cell of prose: pipes escaped, lines joined. Backticks
/// stay: messages mark commands and names as code on purpose, and a code
/// span cannot reach past its cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\r', '\n'], " ")
}

/// A Markdown table cell holding a name as code (an id, a path, a
/// package): a code span nothing in it can end ([`crate::pr::code`]), its
/// pipes escaped, as GitHub reads them inside a table even in code.
fn code_cell(s: &str) -> String {
    crate::pr::code(s).replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn findings() -> Vec<Finding> {
        vec![
            Finding::error("render-drift", "t.yml", 7, "line 7 differs: `a|b`")
                .fix("run `revendor render`"),
            Finding::warning("patch-offset", "p.patch", 3, "moved, 50%").fix("refresh"),
            Finding::error("marker:talos", "Dockerfile", 9, "says v1, wants v2"),
            Finding::error("render-drift", "t.yml", 2, "line 2 differs"),
        ]
    }

    #[test]
    fn human_groups_by_id_in_line_order() {
        let text = human("pkg", &findings(), Paint::plain());
        assert_eq!(
            text,
            "marker:talos\n  Dockerfile:9: error: says v1, wants v2\n\
             patch-offset\n  p.patch:3: warning: moved, 50% (fix: refresh)\n\
             render-drift\n  t.yml:2: error: line 2 differs\n  \
             t.yml:7: error: line 7 differs: `a|b` (fix: run `revendor render`)\n\
             \npkg: 3 errors, 1 warning\n"
        );
        assert_eq!(
            human("pkg", &[], Paint::plain()),
            "pkg: clean, no findings\n"
        );
    }

    #[test]
    fn human_paints_the_severity_only() {
        let text = human("pkg", &findings()[1..2], Paint::new(true));
        assert!(
            text.contains("  p.patch:3: \x1b[1;33mwarning\x1b[0m: moved, 50% (fix: refresh)\n"),
            "{text:?}"
        );
    }

    #[test]
    fn json_has_the_design_schema() {
        let value: serde_json::Value = serde_json::from_str(&json("pkg", &findings())).unwrap();
        assert!(json("pkg", &[]).starts_with("{\n  \"schema\": 1,\n  \"package\": \"pkg\""));
        assert_eq!(value["package"], "pkg");
        assert_eq!(
            value["counts"],
            serde_json::json!({"error": 3, "warning": 1, "info": 0})
        );
        let first = &value["findings"][0];
        let keys: Vec<&str> = first
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["file", "fix", "id", "line", "message", "severity"]);
        let text = json("pkg", &findings());
        let at = |k: &str| text.find(&format!("\"{k}\":")).unwrap();
        assert!(at("id") < at("severity") && at("severity") < at("file") && at("line") < at("fix"));
        assert_eq!(first["severity"], "error");
        assert_eq!(first["line"], 7);
    }

    #[test]
    fn github_annotations_escape_and_name_workspace_paths() {
        let text = github(Path::new("./packages/system/multus"), &findings()[..2]);
        assert_eq!(
            text,
            "::error file=packages/system/multus/t.yml,line=7,title=render-drift::line 7 differs: `a|b`%0Afix: run `revendor render`\n\
             ::warning file=packages/system/multus/p.patch,line=3,title=patch-offset::moved, 50%25%0Afix: refresh\n"
        );
        let f = Finding::error("marker:talos", "../../core/x.yaml", 1, "m");
        let text = github(Path::new("packages/system/multus"), &[f]);
        assert!(
            text.starts_with("::error file=packages/core/x.yaml,line=1,title=marker%3Atalos::"),
            "{text}"
        );
    }

    #[test]
    fn markdown_is_a_table_with_escaped_cells() {
        let text = markdown("pkg", Path::new("."), &findings()[..1]);
        assert!(text.starts_with("### revendor check: pkg\n\n1 error, 0 warnings\n\n"));
        assert!(text.contains(
            "| error | `render-drift` | `t.yml:7` | line 7 differs: `a\\|b` | run `revendor render` |\n"
        ));
        assert_eq!(
            markdown("pkg", Path::new("."), &[]),
            "### revendor check: pkg\n\nNo findings.\n"
        );
    }

    #[test]
    fn issue_22_a_cell_holds_its_pipes_newlines_and_backticks() {
        let f = Finding::error("render-drift", "a|b\nc`d.yml", 7, "x|y\nz `code`");
        let text = markdown("pkg", Path::new("."), &[f]);
        assert!(
            text.contains(
                "| error | `render-drift` | ``a\\|b\\u{a}c`d.yml:7`` | x\\|y z `code` |  |\n"
            ),
            "{text}"
        );
        let row = text.lines().last().unwrap();
        assert_eq!(row.matches(" | ").count(), 4, "five cells: {row}");
    }

    #[test]
    fn issue_22_twenty_five_error_findings_are_ten_annotations_and_a_line() {
        let findings: Vec<Finding> = (1..=25)
            .map(|i| Finding::error("render-drift", "t.yml", i, "differs"))
            .collect();
        let text = github(Path::new("."), &findings);
        assert_eq!(text.matches("::error ").count(), 10);
        assert!(
            text.ends_with("::error file=t.yml,line=10,title=render-drift::differs\nand 15 more errors: see the step summary (GitHub shows 10 of each kind per step)\n"),
            "{text}"
        );
        assert_eq!(
            markdown("pkg", Path::new("."), &findings)
                .matches("| error |")
                .count(),
            25,
            "the summary lists them all"
        );
    }

    #[test]
    fn the_summary_appended_fits_in_what_the_step_has_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.md");
        std::fs::write(&path, "x".repeat(SUMMARY_BYTES as usize - 500)).unwrap();
        let markdown: String = (0..100).map(|i| format!("| row {i} |\n")).collect();
        append_summary(&path, &markdown).unwrap();
        let len = std::fs::metadata(&path).unwrap().len();
        assert!(len <= SUMMARY_BYTES, "{len}");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.ends_with("`--format json` has every finding.\n"),
            "{}",
            &text[text.len() - 300..]
        );
    }

    #[test]
    fn annotations_are_relative_to_the_workspace_or_the_git_root() {
        let top = tempfile::tempdir().unwrap();
        let package = top.path().join("repo/packages/system/multus");
        std::fs::create_dir_all(&package).unwrap();
        let workspace = top.path().join("repo");
        assert_eq!(
            annotation_dir(&package, Some(&workspace)),
            Path::new("packages/system/multus")
        );
        // Not a git work tree, and outside the workspace: as given.
        let elsewhere = top.path().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        assert_eq!(annotation_dir(&package, Some(&elsewhere)), package);
        git2::Repository::init(&workspace).unwrap();
        let dotted = package.join("../multus/.");
        assert_eq!(
            annotation_dir(&dotted, Some(&elsewhere)),
            Path::new("packages/system/multus")
        );
        assert_eq!(annotation_dir(&workspace, None), Path::new(""));
    }
}
