//! The report of `revendor check --all`: many packages, each checked or
//! failed, in the three formats.
//!
//! - human: one section per package (`== <package> ==`, then what
//!   [`super::human`] prints, or the rendered error), then the total;
//! - json: `{"schema", "packages": [{"package", "path", "findings",
//!   "counts"[, "error"]}], "counts", "failed"}` (docs/check-all.md), the
//!   `error` being the object of every failed command ([`Failure`]);
//! - github: the annotations of every package, paths from the workspace
//!   root; one Markdown table for `$GITHUB_STEP_SUMMARY`; and the job matrix
//!   line for `$GITHUB_OUTPUT` ([`matrix`]).
//!
//! Errors arrive already rendered: `cli` is the one place that renders them.

use std::path::Path;

use super::{
    Counts, Failure, annotations, cap_annotations, cell, code_cell, document, github_failure,
    workspace_path,
};
use crate::check::{Finding, Severity, Verdict};
use crate::console::Paint;
use crate::error::Result;

/// A package whose check could not run: its error as every failed command
/// reports it, and as `cli` rendered it for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failed {
    /// The error object of the JSON and the annotation.
    pub failure: Failure,
    /// Everything `cli` prints for it: `error:`, `Caused by:`, `help:`.
    pub rendered: String,
}

/// One package of the report.
#[derive(Debug, Clone)]
pub struct Package<'a> {
    /// Its directory relative to ROOT: the name shown.
    pub name: &'a str,
    /// Its directory relative to the workspace: where annotations point.
    pub dir: &'a str,
    /// Its findings, or why it could not be checked.
    pub outcome: std::result::Result<&'a [Finding], Failed>,
}

impl Package<'_> {
    fn findings(&self) -> &[Finding] {
        self.outcome.as_ref().map_or(&[], |f| f)
    }
}

/// The total line: packages clean, with error findings, failed; counts.
fn total(packages: &[Package<'_>]) -> String {
    let failed = packages.iter().filter(|p| p.outcome.is_err()).count();
    let findings = packages
        .iter()
        .filter(|p| Counts::of(p.findings()).error > 0)
        .count();
    let clean = packages.len() - failed - findings;
    let all: Vec<Finding> = packages
        .iter()
        .flat_map(|p| p.findings().iter().cloned())
        .collect();
    let noun = if packages.len() == 1 {
        "package"
    } else {
        "packages"
    };
    format!(
        "{} {noun}: {clean} clean, {findings} with errors, {failed} failed; {}",
        packages.len(),
        Counts::of(&all).describe()
    )
}

/// One section per package, then the total.
pub fn human(packages: &[Package<'_>]) -> String {
    let mut out = String::new();
    for p in packages {
        out.push_str(&format!("== {} ==\n", p.name));
        match &p.outcome {
            Ok(findings) => out.push_str(&super::human(p.name, findings, Paint::plain())),
            Err(failed) => out.push_str(&failed.rendered),
        }
        out.push('\n');
    }
    out.push_str(&total(packages));
    out.push('\n');
    out
}

/// The JSON document: every package with its findings and counts (and its
/// error when it failed), then the counts of all findings and how many
/// packages failed.
pub fn json(packages: &[Package<'_>]) -> String {
    #[derive(serde::Serialize)]
    struct Entry<'a> {
        package: &'a str,
        path: &'a str,
        findings: &'a [Finding],
        counts: Counts,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'a Failure>,
    }
    #[derive(serde::Serialize)]
    struct Doc<'a> {
        packages: Vec<Entry<'a>>,
        counts: Counts,
        failed: usize,
    }
    let entries: Vec<Entry<'_>> = packages
        .iter()
        .map(|p| Entry {
            package: p.name,
            path: p.dir,
            findings: p.findings(),
            counts: Counts::of(p.findings()),
            error: p.outcome.as_ref().err().map(|f| &f.failure),
        })
        .collect();
    let all: Vec<Finding> = packages
        .iter()
        .flat_map(|p| p.findings().iter().cloned())
        .collect();
    document(&Doc {
        packages: entries,
        counts: Counts::of(&all),
        failed: packages.iter().filter(|p| p.outcome.is_err()).count(),
    })
}

/// Every package's annotations; a failed package is one `::error` at the
/// file its error names (its vendor.toml line), or at the package. GitHub's
/// cap of annotations per kind is for the whole step: the first of each
/// kind in package order are written, the rest counted in a line
/// ([`cap_annotations`]) and listed in the summary.
pub fn github(packages: &[Package<'_>]) -> String {
    let mut out = String::new();
    for p in packages {
        match &p.outcome {
            Ok(findings) => out.push_str(&annotations(Path::new(p.dir), findings)),
            Err(failed) => out.push_str(&github_failure(
                Path::new(p.dir),
                &format!("revendor check {}", p.name),
                &failed.failure,
            )),
        }
    }
    cap_annotations(&out)
}

/// The step summary: the total, then one table with a row per finding, per
/// failed package and per clean package.
pub fn markdown(packages: &[Package<'_>]) -> String {
    let mut out = format!("### revendor check --all\n\n{}\n\n", total(packages));
    out.push_str(
        "| package | severity | id | location | message | fix |\n| --- | --- | --- | --- | --- | --- |\n",
    );
    for p in packages {
        match &p.outcome {
            Ok([]) => out.push_str(&format!("| {} | | | | clean | |\n", code_cell(p.name))),
            Ok(findings) => {
                for f in *findings {
                    let location =
                        format!("{}:{}", workspace_path(Path::new(p.dir), &f.file), f.line);
                    out.push_str(&format!(
                        "| {} | {} | {} | {} | {} | {} |\n",
                        code_cell(p.name),
                        f.severity,
                        code_cell(&f.id),
                        code_cell(&location),
                        cell(&f.message),
                        cell(&f.fix)
                    ));
                }
            }
            Err(Failed { failure, .. }) => {
                let location = match (&failure.file, failure.line) {
                    (Some(file), Some(line)) => {
                        format!("{}:{line}", workspace_path(Path::new(p.dir), file))
                    }
                    (Some(file), None) => workspace_path(Path::new(p.dir), file),
                    _ => p.dir.to_owned(),
                };
                out.push_str(&format!(
                    "| {} | {} | | {} | {} | {} |\n",
                    code_cell(p.name),
                    Severity::Error,
                    code_cell(&location),
                    cell(&failure.message),
                    cell(failure.hint.as_deref().unwrap_or_default())
                ));
            }
        }
    }
    out
}

/// The `$GITHUB_OUTPUT` line naming every package's workspace path, for a
/// job matrix: `matrix={"package":["packages/system/multus",…]}`.
pub fn matrix(packages: &[Package<'_>]) -> String {
    let dirs: Vec<&str> = packages.iter().map(|p| p.dir).collect();
    format!("matrix={}\n", serde_json::json!({ "package": dirs }))
}

/// One job of the update matrix (`check --all --matrix-out`): a package
/// whose newer upstream release inside `track` every patch re-applies to
/// (its dry run's outcome is `applies`), with no other error finding.
///
/// A package with a conflict, an upstreamed patch, another error or a
/// failed check is no job: a person has to decide, so it goes to
/// `revendor pr --report`'s tracking issue instead.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Update<'a> {
    /// The package's directory relative to ROOT.
    pub package: &'a str,
    /// The package's directory relative to the workspace: `revendor -C`'s argument.
    pub path: &'a str,
    /// The release to move to: `revendor update --to`'s argument.
    pub to: &'a str,
    /// The upstream's name when the package names its upstreams, else null:
    /// then `--to NAME=TAG`.
    pub upstream: Option<&'a str>,
}

/// The packages a nightly job updates: per package, the first newer
/// release (in the order of the findings) whose dry run `applies`, when no
/// other error is in the way. One job per package, so that two jobs never
/// push the same branch; a second upstream that applies waits for the next
/// run.
pub fn updates<'a>(packages: &[Package<'a>]) -> Vec<Update<'a>> {
    let mut jobs = Vec::new();
    for p in packages {
        let Ok(findings) = &p.outcome else { continue };
        let blocked = findings
            .iter()
            .any(|f| f.severity == Severity::Error && f.id != "upstream-newer");
        if blocked {
            continue;
        }
        let applies = findings
            .iter()
            .filter(|f| f.id == "upstream-newer" && f.severity == Severity::Error)
            .filter_map(|f| f.dry_run.as_deref())
            .find(|d| d.outcome == Verdict::Applies);
        if let Some(dry) = applies {
            jobs.push(Update {
                package: p.name,
                path: p.dir,
                to: &dry.to,
                upstream: dry.upstream.as_deref(),
            });
        }
    }
    jobs
}

/// The update matrix as `--matrix-out` writes it: a JSON list of
/// [`Update`]s on one line, `[]` when there is nothing to do.
pub fn updates_json(packages: &[Package<'_>]) -> String {
    let mut text = serde_json::to_string(&updates(packages)).unwrap_or_default();
    text.push('\n');
    text
}

/// Writes `text` to `path` whole (`--json-out`, `--matrix-out`), replacing
/// what was there.
pub fn write_file(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|source| crate::error::Error::Io {
        action: "write",
        path: path.to_path_buf(),
        source,
    })
}

/// Appends `line` to the `$GITHUB_OUTPUT` file.
pub fn append_output(path: &Path, line: &str) -> Result<()> {
    super::append(path, line.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure() -> Failed {
        Failed {
            failure: Failure {
                message: "pkgs/c/vendor.toml:3: unknown key `x`".into(),
                hint: Some("remove it".into()),
                exit_code: 2,
                kind: "configuration",
                file: Some("vendor.toml".into()),
                line: Some(3),
            },
            rendered: "error: pkgs/c/vendor.toml:3: unknown key `x`\n  help: remove it\n".into(),
        }
    }

    fn packages(findings: &[Finding]) -> Vec<Package<'_>> {
        vec![
            Package {
                name: "a",
                dir: "pkgs/a",
                outcome: Ok(&[]),
            },
            Package {
                name: "b",
                dir: "pkgs/b",
                outcome: Ok(findings),
            },
            Package {
                name: "c",
                dir: "pkgs/c",
                outcome: Err(failure()),
            },
        ]
    }

    fn findings() -> Vec<Finding> {
        vec![
            Finding::error("render-drift", "t.yml", 7, "line 7 differs").fix("run render"),
            Finding::warning("patch-offset", "p.patch", 3, "moved"),
        ]
    }

    #[test]
    fn human_has_a_section_per_package_and_a_total() {
        let found = findings();
        assert_eq!(
            human(&packages(&found)),
            "== a ==\na: clean, no findings\n\n\
             == b ==\npatch-offset\n  p.patch:3: warning: moved\n\
             render-drift\n  t.yml:7: error: line 7 differs (fix: run render)\n\nb: 1 error, 1 warning\n\n\
             == c ==\nerror: pkgs/c/vendor.toml:3: unknown key `x`\n  help: remove it\n\n\
             3 packages: 1 clean, 1 with errors, 1 failed; 1 error, 1 warning\n"
        );
    }

    #[test]
    fn json_lists_packages_with_their_counts_and_errors() {
        let found = findings();
        let value: serde_json::Value = serde_json::from_str(&json(&packages(&found))).unwrap();
        assert_eq!(value["schema"], 1);
        assert_eq!(
            value["counts"],
            serde_json::json!({"error": 1, "warning": 1, "info": 0})
        );
        assert_eq!(value["failed"], 1);
        let list = value["packages"].as_array().unwrap();
        assert_eq!(list.len(), 3);
        assert_eq!(list[0]["package"], "a");
        assert_eq!(list[0]["path"], "pkgs/a");
        assert!(list[0].get("error").is_none());
        assert_eq!(list[1]["findings"][0]["id"], "render-drift");
        assert_eq!(list[1]["counts"]["warning"], 1);
        assert_eq!(
            list[2]["error"],
            serde_json::json!({
                "message": "pkgs/c/vendor.toml:3: unknown key `x`",
                "hint": "remove it",
                "exit_code": 2,
                "kind": "configuration",
                "file": "vendor.toml",
                "line": 3,
                "severity": "error",
                "fix": "remove it"
            })
        );
        assert_eq!(list[2]["findings"], serde_json::json!([]));
    }

    #[test]
    fn github_annotates_findings_and_failures_from_the_workspace_root() {
        let found = findings();
        let text = github(&packages(&found));
        assert_eq!(
            text,
            "::error file=pkgs/b/t.yml,line=7,title=render-drift::line 7 differs%0Afix: run render\n\
             ::warning file=pkgs/b/p.patch,line=3,title=patch-offset::moved\n\
             ::error file=pkgs/c/vendor.toml,line=3,title=revendor check c::pkgs/c/vendor.toml:3: unknown key `x`%0Afix: remove it\n"
        );
        let mut unlocated = packages(&found);
        if let Err(f) = &mut unlocated[2].outcome {
            f.failure.file = None;
        }
        assert!(
            github(&unlocated).ends_with("::error title=revendor check c::pkgs/c/vendor.toml:3: unknown key `x`%0Afix: remove it\n")
        );
    }

    #[test]
    fn markdown_is_one_table() {
        let found = findings();
        let text = markdown(&packages(&found));
        assert!(text.starts_with(
            "### revendor check --all\n\n3 packages: 1 clean, 1 with errors, 1 failed; 1 error, 1 warning\n\n"
        ));
        assert_eq!(text.matches("| package |").count(), 1);
        assert!(text.contains("| `a` | | | | clean | |\n"));
        assert!(text.contains(
            "| `b` | error | `render-drift` | `pkgs/b/t.yml:7` | line 7 differs | run render |\n"
        ));
        assert!(text.contains(
            "| `c` | error | | `pkgs/c/vendor.toml:3` | pkgs/c/vendor.toml:3: unknown key `x` | remove it |\n"
        ));
    }

    /// An `upstream-newer` error whose dry run has `outcome`.
    fn newer(upstream: Option<&str>, to: &str, outcome: Verdict) -> Finding {
        Finding::error("upstream-newer", "vendor.toml", 3, format!("{to} is newer")).dry_run(
            crate::check::DryRun {
                upstream: upstream.map(str::to_owned),
                from: "v1.0.0".into(),
                to: to.into(),
                outcome,
                reason: None,
                patches: Vec::new(),
                command: format!("revendor update --to {to}"),
            },
        )
    }

    #[test]
    fn the_update_matrix_holds_one_job_per_package_whose_release_applies() {
        let applies = [newer(None, "v1.1.0", Verdict::Applies)];
        let conflict = [newer(None, "v2.0.0", Verdict::Conflict)];
        let blocked = [
            newer(None, "v1.1.0", Verdict::Applies),
            Finding::error("render-drift", "t.yml", 7, "differs"),
        ];
        let two = [
            newer(Some("chart"), "v3.0.0", Verdict::Conflict),
            newer(Some("operator"), "v1.2.0", Verdict::Applies),
            newer(Some("crds"), "v1.3.0", Verdict::Applies),
        ];
        let mut outside = newer(None, "v9.0.0", Verdict::Applies);
        outside.severity = Severity::Info;
        let outside = [outside];
        let list = [
            ("a", &applies[..]),
            ("b", &conflict[..]),
            ("c", &blocked[..]),
            ("d", &two[..]),
            ("e", &outside[..]),
        ];
        let mut packages: Vec<Package<'_>> = list
            .iter()
            .map(|(name, findings)| Package {
                name,
                dir: name,
                outcome: Ok(findings),
            })
            .collect();
        packages.push(Package {
            name: "f",
            dir: "pkgs/f",
            outcome: Err(failure()),
        });
        assert_eq!(
            updates_json(&packages),
            "[{\"package\":\"a\",\"path\":\"a\",\"to\":\"v1.1.0\",\"upstream\":null},\
             {\"package\":\"d\",\"path\":\"d\",\"to\":\"v1.2.0\",\"upstream\":\"operator\"}]\n"
        );
        assert_eq!(updates_json(&packages[1..3]), "[]\n");
    }

    #[test]
    fn the_matrix_lists_every_package_for_github_output() {
        let found = findings();
        assert_eq!(
            matrix(&packages(&found)),
            "matrix={\"package\":[\"pkgs/a\",\"pkgs/b\",\"pkgs/c\"]}\n"
        );
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("output");
        std::fs::write(&out, "before=1\n").unwrap();
        append_output(&out, &matrix(&packages(&found))).unwrap();
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "before=1\nmatrix={\"package\":[\"pkgs/a\",\"pkgs/b\",\"pkgs/c\"]}\n"
        );
    }
}
