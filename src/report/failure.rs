//! [`Failure`]: a check that could not run (a malformed vendor.toml, no
//! lock, a registry that refused us), in the three formats of the findings,
//! so a script or a workflow reading the report always gets one
//! (docs/output.md).

use std::path::Path;

use super::{Counts, cell, data, property, workspace_path};
use crate::check::{Finding, Severity};
use crate::error::{Error, ExitCode};

/// Why a check could not run, as a finding-like entry: what kind of error
/// it is, where (package-relative, when the error names a file) and what to
/// do.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Failure {
    /// `configuration` (exit 2: vendor.toml or another package file),
    /// `usage` (exit 2: the command line), `failure` (exit 3: the network, a
    /// registry, the disk) or `drift` (exit 1).
    pub kind: &'static str,
    /// Always `error`, as for the findings.
    pub severity: Severity,
    /// The file at fault, relative to the package; `null` when none.
    pub file: Option<String>,
    /// Its 1-based line; `null` when the fault has none.
    pub line: Option<usize>,
    /// The error and its causes, on one line.
    pub message: String,
    /// What to do about it; empty when there is no hint.
    pub fix: String,
}

impl Failure {
    /// The entry for `e`, with paths made relative to the package at `root`.
    pub fn of(root: &Path, e: &Error) -> Failure {
        let kind = match (e, e.exit_code()) {
            (Error::Usage { .. }, _) => "usage",
            (_, ExitCode::Usage) => "configuration",
            (_, ExitCode::Findings) => "drift",
            _ => "failure",
        };
        let (file, line, message) = match e {
            Error::Config(c) => (
                Some(package_relative(root, &c.file)),
                c.line,
                c.message.clone(),
            ),
            Error::Render {
                file,
                line,
                message,
            } => (Some(file.clone()), *line, message.clone()),
            Error::PristineEdited { file, .. } => (Some(file.clone()), None, e.to_string()),
            _ => (None, None, e.to_string()),
        };
        let mut message = message;
        for cause in e.causes() {
            message.push_str(": ");
            message.push_str(&cause.replace('\n', " "));
        }
        Failure {
            kind,
            severity: Severity::Error,
            file,
            line,
            message,
            fix: e.hint().unwrap_or_default(),
        }
    }
}

/// The JSON document of a check that could not run: no findings, zero
/// counts, and the [`Failure`] under `"error"`.
pub fn json_failure(package: &str, failure: &Failure) -> String {
    #[derive(serde::Serialize)]
    struct Doc<'a> {
        package: &'a str,
        findings: [Finding; 0],
        counts: Counts,
        error: &'a Failure,
    }
    let doc = Doc {
        package,
        findings: [],
        counts: Counts::default(),
        error: failure,
    };
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

/// The `::error` annotation of a check that could not run, at its file and
/// line when it has them (joined to `dir`, as for findings).
pub fn github_failure(dir: &Path, failure: &Failure) -> String {
    let mut message = failure.message.clone();
    if !failure.fix.is_empty() {
        message.push_str(&format!("\nfix: {}", failure.fix));
    }
    let mut properties = Vec::new();
    if let Some(file) = &failure.file {
        properties.push(format!("file={}", property(&workspace_path(dir, file))));
        if let Some(line) = failure.line {
            properties.push(format!("line={line}"));
        }
    }
    properties.push("title=revendor".to_owned());
    format!("::error {}::{}\n", properties.join(","), data(&message))
}

/// The step summary of a check that could not run.
pub fn markdown_failure(package: &str, dir: &Path, failure: &Failure) -> String {
    let location = match (&failure.file, failure.line) {
        (Some(file), Some(line)) => format!(" at `{}:{line}`", workspace_path(dir, file)),
        (Some(file), None) => format!(" at `{}`", workspace_path(dir, file)),
        _ => String::new(),
    };
    let mut out = format!(
        "### revendor check: {package}\n\nThe check could not run ({} error){location}: {}\n",
        failure.kind,
        cell(&failure.message)
    );
    if !failure.fix.is_empty() {
        out.push_str(&format!("\nFix: {}\n", cell(&failure.fix)));
    }
    out
}

/// `path` (as an error names it: joined to the package directory) relative
/// to the package at `root`.
fn package_relative(root: &Path, path: &Path) -> String {
    let relative = path
        .strip_prefix(root)
        .ok()
        .map(Path::to_path_buf)
        .or_else(|| {
            let root = root.canonicalize().ok()?;
            let path = path.canonicalize().ok()?;
            path.strip_prefix(root).ok().map(Path::to_path_buf)
        });
    match relative {
        Some(r) => workspace_path(Path::new(""), &r.to_string_lossy()),
        None => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fault in a package file (a vendor.toml error is checked with the
    /// binary, in tests/check.rs).
    fn config_error() -> Error {
        Error::Render {
            file: "vendor.toml".into(),
            line: Some(12),
            message: "unknown key `tagg`".into(),
        }
    }

    #[test]
    fn a_check_that_could_not_run_is_one_finding_like_entry() {
        let failure = Failure::of(Path::new("pkg"), &config_error());
        assert_eq!(
            failure,
            Failure {
                kind: "configuration",
                severity: Severity::Error,
                file: Some("vendor.toml".into()),
                line: Some(12),
                message: "unknown key `tagg`".into(),
                fix: "fix the patch, [[rewrite]] or [[pin]] of that file, or the file itself"
                    .into(),
            }
        );
        let value: serde_json::Value =
            serde_json::from_str(&json_failure("pkg", &failure)).unwrap();
        assert_eq!(
            value,
            serde_json::json!({
                "package": "pkg",
                "findings": [],
                "counts": {"error": 0, "warning": 0, "info": 0},
                "error": {
                    "kind": "configuration", "severity": "error", "file": "vendor.toml",
                    "line": 12, "message": "unknown key `tagg`",
                    "fix": "fix the patch, [[rewrite]] or [[pin]] of that file, or the file itself"
                }
            })
        );
        let usage = Failure::of(Path::new("pkg"), &Error::usage("no lock, yet", "run it"));
        assert_eq!((usage.kind, usage.file, usage.line), ("usage", None, None));
    }

    #[test]
    fn a_failure_is_annotated_at_its_file_and_summarized() {
        let failure = Failure::of(Path::new("pkg"), &config_error());
        assert_eq!(
            github_failure(Path::new("packages/system/multus"), &failure),
            "::error file=packages/system/multus/vendor.toml,line=12,title=revendor::unknown key `tagg`%0Afix: fix the patch, [[rewrite]] or [[pin]] of that file, or the file itself\n"
        );
        let usage = Failure::of(Path::new("pkg"), &Error::usage("no lock, yet", "run it"));
        assert_eq!(
            github_failure(Path::new("."), &usage),
            "::error title=revendor::no lock, yet%0Afix: run it\n"
        );
        assert_eq!(
            markdown_failure("multus", Path::new("p"), &failure),
            "### revendor check: multus\n\nThe check could not run (configuration error) at `p/vendor.toml:12`: unknown key `tagg`\n\nFix: fix the patch, [[rewrite]] or [[pin]] of that file, or the file itself\n"
        );
    }
}
