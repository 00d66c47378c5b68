//! [`Failure`]: a command that could not do its job (a malformed
//! vendor.toml, no lock, a registry that refused us), in the machine formats,
//! so a script or a workflow reading stdout always gets a report: one shape
//! for every command and for each package of `check --all` (docs/json.md,
//! docs/output.md).

use std::path::Path;

use super::{Counts, cell, data, document, property, workspace_path};
use crate::check::Finding;
use crate::error::{Error, ExitCode};
use crate::pr::code;

/// Why a command could not do its job, as every machine format reports it:
/// the `"error"` object of a failed command's JSON document, of a package
/// `check --all` could not check, and the `::error` annotation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The error and its causes, on one line: what stderr's `error:` line
    /// and its `Caused by:` lines say.
    pub message: String,
    /// What to do about it (stderr's `help:`); `null` when there is no hint.
    pub hint: Option<String>,
    /// The exit code the command ends with for it (2 or 3; 1 for an edited
    /// pristine copy).
    pub exit_code: u8,
    /// `configuration` (exit 2: vendor.toml or another package file),
    /// `usage` (exit 2: the command line), `failure` (exit 3: the network, a
    /// registry, the disk) or `drift` (exit 1).
    pub kind: &'static str,
    /// The file at fault, relative to the package; `null` when none.
    pub file: Option<String>,
    /// Its 1-based line; `null` when the fault has none.
    pub line: Option<usize>,
}

// Written by hand for the two keys the earlier, finding-like `check` error
// object had: keys are added over time, never removed (docs/json.md), so
// `severity` (always `error`) and `fix` (the hint, empty when none) follow
// the keys every command shares.
impl serde::Serialize for Failure {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Failure", 8)?;
        s.serialize_field("message", &self.message)?;
        s.serialize_field("hint", &self.hint)?;
        s.serialize_field("exit_code", &self.exit_code)?;
        s.serialize_field("kind", self.kind)?;
        s.serialize_field("file", &self.file)?;
        s.serialize_field("line", &self.line)?;
        s.serialize_field("severity", "error")?;
        s.serialize_field("fix", self.hint.as_deref().unwrap_or_default())?;
        s.end()
    }
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
        let (file, line) = match e {
            Error::Config(c) => (Some(package_relative(root, &c.file)), c.line),
            Error::Render { file, line, .. } => (Some(file.clone()), *line),
            Error::PristineEdited { file, .. } => (Some(file.clone()), None),
            Error::ChangedDuringRun { path } => (Some(path.display().to_string()), None),
            _ => (None, None),
        };
        let mut message = e.to_string();
        for cause in e.causes() {
            message.push_str(": ");
            message.push_str(&cause.replace('\n', " "));
        }
        Failure {
            message,
            hint: e.hint(),
            exit_code: e.exit_code() as u8,
            kind,
            file,
            line,
        }
    }
}

/// The JSON document of a command that failed: `{"schema": 1, "error":
/// {…}}` ([`Failure`]).
pub fn json_error(failure: &Failure) -> String {
    #[derive(serde::Serialize)]
    struct Doc<'a> {
        error: &'a Failure,
    }
    document(&Doc { error: failure })
}

/// The JSON document of a check that could not run: the error document
/// with `check`'s own keys, no findings and zero counts, so a reader of
/// either finds what it looks for.
pub fn json_failure(package: &str, failure: &Failure) -> String {
    #[derive(serde::Serialize)]
    struct Doc<'a> {
        package: &'a str,
        findings: [Finding; 0],
        counts: Counts,
        error: &'a Failure,
    }
    document(&Doc {
        package,
        findings: [],
        counts: Counts::default(),
        error: failure,
    })
}

/// The `::error` annotation of a command that could not run, titled
/// `title`, at its file and line when it has them (joined to `dir`, as for
/// findings).
pub fn github_failure(dir: &Path, title: &str, failure: &Failure) -> String {
    let mut message = failure.message.clone();
    if let Some(hint) = &failure.hint {
        message.push_str(&format!("\nfix: {hint}"));
    }
    let mut properties = Vec::new();
    if let Some(file) = &failure.file {
        properties.push(format!("file={}", property(&workspace_path(dir, file))));
        if let Some(line) = failure.line {
            properties.push(format!("line={line}"));
        }
    }
    properties.push(format!("title={}", property(title)));
    format!("::error {}::{}\n", properties.join(","), data(&message))
}

/// The step summary of a check that could not run.
pub fn markdown_failure(package: &str, dir: &Path, failure: &Failure) -> String {
    let location = match (&failure.file, failure.line) {
        (Some(file), Some(line)) => format!(
            " at {}",
            code(&format!("{}:{line}", workspace_path(dir, file)))
        ),
        (Some(file), None) => format!(" at {}", code(&workspace_path(dir, file))),
        _ => String::new(),
    };
    let mut out = format!(
        "### revendor check: {package}\n\nThe check could not run ({} error){location}: {}\n",
        failure.kind,
        cell(&failure.message)
    );
    if let Some(hint) = &failure.hint {
        out.push_str(&format!("\nFix: {}\n", cell(hint)));
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

    const HINT: &str = "fix the patch, [[rewrite]] or [[pin]] of that file, or the file itself";

    #[test]
    fn a_command_that_could_not_run_is_one_error_object() {
        let failure = Failure::of(Path::new("pkg"), &config_error());
        let message = config_error().to_string();
        assert_eq!(
            failure,
            Failure {
                message: message.clone(),
                hint: Some(HINT.into()),
                exit_code: 2,
                kind: "configuration",
                file: Some("vendor.toml".into()),
                line: Some(12),
            }
        );
        let error = serde_json::json!({
            "message": message, "hint": HINT, "exit_code": 2,
            "kind": "configuration", "file": "vendor.toml", "line": 12,
            "severity": "error", "fix": HINT
        });
        let text = json_error(&failure);
        assert!(text.starts_with("{\n  \"schema\": 1,\n  \"error\": {\n    \"message\""));
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value, serde_json::json!({"schema": 1, "error": error}));
        let value: serde_json::Value =
            serde_json::from_str(&json_failure("pkg", &failure)).unwrap();
        assert_eq!(
            value,
            serde_json::json!({
                "schema": 1,
                "package": "pkg",
                "findings": [],
                "counts": {"error": 0, "warning": 0, "info": 0},
                "error": error
            })
        );
        let usage = Failure::of(Path::new("pkg"), &Error::usage("no lock, yet", "run it"));
        assert_eq!((usage.kind, usage.file, usage.line), ("usage", None, None));
        let edited = Error::ChangedDuringRun {
            path: "templates/app.yml".into(),
        };
        let edited = Failure::of(Path::new("pkg"), &edited);
        assert_eq!(
            (edited.kind, edited.file.as_deref(), edited.exit_code),
            ("drift", Some("templates/app.yml"), 1)
        );
    }

    #[test]
    fn a_failure_is_annotated_at_its_file_and_summarized() {
        let failure = Failure::of(Path::new("pkg"), &config_error());
        assert_eq!(
            github_failure(Path::new("packages/system/multus"), "revendor", &failure),
            format!(
                "::error file=packages/system/multus/vendor.toml,line=12,title=revendor::{}%0Afix: {HINT}\n",
                data(&failure.message)
            )
        );
        let usage = Failure::of(Path::new("pkg"), &Error::usage("no lock, yet", "run it"));
        assert_eq!(
            github_failure(Path::new("."), "revendor check a:b", &usage),
            "::error title=revendor check a%3Ab::no lock, yet%0Afix: run it\n"
        );
        assert_eq!(
            markdown_failure("multus", Path::new("p"), &failure),
            format!(
                "### revendor check: multus\n\nThe check could not run (configuration error) at `p/vendor.toml:12`: {}\n\nFix: {HINT}\n",
                failure.message
            )
        );
    }
}
