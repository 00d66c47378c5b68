//! Which packages need a person, and why: one [`Row`] per package, decided
//! from its check alone.
//!
//! A package needs a person when its check failed (`error` in the
//! `check --all` document), when the dry run of a newer upstream is a
//! `conflict`, `upstreamed` or `not-done`, or when it has error findings
//! other than `upstream-newer`. A package that is clean, or whose update
//! applies, gets no row: its pull request is `pr --create`'s job.

use serde::{Deserialize, Serialize};

use crate::check::{DryRun, Finding, Severity, Verdict};
use crate::patch::result::Kind;

/// The id whose dry run decides; any other error finding blocks.
const UPSTREAM_NEWER: &str = "upstream-newer";

/// One package of a `check --all --format json` document, the keys
/// `pr --report` reads.
#[derive(Debug, Clone, Deserialize)]
pub struct Checked {
    /// Its directory relative to the checked ROOT: the name shown.
    pub package: String,
    /// Its directory relative to the repository: where commands run.
    #[serde(default)]
    pub path: Option<String>,
    /// Its findings.
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// Why it could not be checked.
    #[serde(default)]
    pub error: Option<Failed>,
}

/// A package whose check could not run.
#[derive(Debug, Clone, Deserialize)]
pub struct Failed {
    /// The error, one line.
    pub message: String,
    /// What to do about it.
    #[serde(default)]
    pub hint: Option<String>,
}

/// `check --all --format json`, the part read.
#[derive(Debug, Clone, Deserialize)]
pub struct Document {
    /// Every package checked.
    pub packages: Vec<Checked>,
}

/// One package that needs a person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    /// The package, as the check named it.
    pub package: String,
    /// What blocks it, for people (plain text).
    pub reason: String,
    /// The ids of the findings that block it.
    pub findings: Vec<String>,
    /// The command that resolves it, run from the repository root.
    pub command: String,
}

/// The rows of `packages`, in their order; a package with nothing for a
/// person to do has none.
pub fn rows(packages: &[Checked]) -> Vec<Row> {
    packages.iter().filter_map(row).collect()
}

/// `packages`'s row, or none.
fn row(checked: &Checked) -> Option<Row> {
    let revendor = revendor_in(checked.path.as_deref().unwrap_or(&checked.package));
    let check = format!("{revendor} check --online");
    let mut reasons = Vec::new();
    let mut commands = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    if let Some(failed) = &checked.error {
        let mut reason = format!("could not be checked: {}", failed.message);
        if let Some(hint) = &failed.hint {
            reason.push_str(&format!(" ({hint})"));
        }
        reasons.push(reason);
        commands.push(check.clone());
    }
    let errors = checked
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error);
    for f in errors {
        // An update that applies is `pr --create`'s; one that does not
        // blocks, with its own command.
        if f.id == UPSTREAM_NEWER {
            let Some(run) = &f.dry_run else { continue };
            let Some(reason) = blocked_update(run) else {
                continue;
            };
            reasons.push(reason);
            commands.push(run.command.replacen("revendor", &revendor, 1));
        }
        if !ids.contains(&f.id) {
            ids.push(f.id.clone());
        }
    }
    // Each other id with the fix of its first finding.
    let others: Vec<String> = ids
        .iter()
        .filter(|id| *id != UPSTREAM_NEWER)
        .map(
            |id| match errors_of(checked, id).find(|f| !f.fix.is_empty()) {
                Some(f) => format!("{id} ({})", f.fix),
                None => id.clone(),
            },
        )
        .collect();
    if !others.is_empty() {
        reasons.push(format!("error findings: {}", others.join(", ")));
        commands.push(check);
    }
    Some(Row {
        package: checked.package.clone(),
        reason: reasons.join("; "),
        findings: ids,
        command: commands.into_iter().next()?,
    })
}

/// The error findings of `checked` with id `id`; every one when `id` is
/// empty.
fn errors_of<'a>(checked: &'a Checked, id: &'a str) -> impl Iterator<Item = &'a Finding> {
    checked
        .findings
        .iter()
        .filter(move |f| f.severity == Severity::Error && (id.is_empty() || f.id == id))
}

/// Why the update a dry run foresaw needs a person; `None` when it applies.
fn blocked_update(run: &DryRun) -> Option<String> {
    let release = match &run.upstream {
        Some(name) => format!("{name} {}", run.to),
        None => run.to.clone(),
    };
    let on = |kind: Kind| {
        run.patches
            .iter()
            .filter(|p| p.outcome == kind)
            .map(|p| format!("{} on {}", p.patch, p.target))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match run.outcome {
        Verdict::Applies => None,
        Verdict::Conflict => Some(format!(
            "{release}: {} would conflict; resolve the conflict, then run revendor update --continue",
            on(Kind::Conflict)
        )),
        Verdict::Upstreamed => Some(format!(
            "{release} already carries {}: drop the patch",
            on(Kind::AlreadyUpstream)
        )),
        Verdict::NotDone => Some(format!(
            "{release}: the dry run was not done ({})",
            run.reason.as_deref().unwrap_or("no reason given")
        )),
    }
}

/// `revendor -C <dir>`, the directory quoted for a shell when it needs it;
/// plain `revendor` for the repository root.
fn revendor_in(dir: &str) -> String {
    if dir.is_empty() || dir == "." {
        return "revendor".to_owned();
    }
    let plain = dir
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._/-+@".contains(c));
    if plain {
        format!("revendor -C {dir}")
    } else {
        format!("revendor -C '{}'", dir.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::result::PatchResult;

    fn newer(run: DryRun) -> Finding {
        Finding::error(UPSTREAM_NEWER, "vendor.toml", 3, "newer").dry_run(run)
    }

    fn checked(package: &str, findings: Vec<Finding>) -> Checked {
        Checked {
            package: package.to_owned(),
            path: Some(format!("packages/{package}")),
            findings,
            error: None,
        }
    }

    fn patch(kind: Kind) -> PatchResult {
        PatchResult::described("ns", "templates/app.yml", kind, "words".into())
    }

    #[test]
    fn a_clean_package_and_an_update_that_applies_get_no_row() {
        let applies = DryRun::ran(
            None,
            "v1",
            "v2",
            "revendor update --to v2",
            vec![patch(Kind::Exact)],
        );
        let info = Finding::info(UPSTREAM_NEWER, "vendor.toml", 3, "outside track");
        let packages = [
            checked("clean", vec![]),
            checked("newer", vec![newer(applies), info]),
        ];
        assert_eq!(rows(&packages), []);
    }

    #[test]
    fn a_conflict_names_its_patches_and_the_keep_conflicts_command_in_the_package() {
        let run = DryRun::ran(
            Some("tool"),
            "v1",
            "v2",
            "revendor update --to v2",
            vec![patch(Kind::Conflict)],
        );
        let got = rows(&[checked("multus", vec![newer(run)])]);
        assert_eq!(got, [Row {
            package: "multus".into(),
            reason: "tool v2: ns on templates/app.yml would conflict; resolve the conflict, then run revendor update --continue".into(),
            findings: vec![UPSTREAM_NEWER.into()],
            command: "revendor -C packages/multus update --to v2 --keep-conflicts".into(),
        }]);
    }

    #[test]
    fn a_failure_comes_first_then_the_dry_run_then_other_errors() {
        let run = DryRun::not_done(None, "v1", "v2", "revendor update --to v2", "no answer");
        let mut c = checked(
            "odd dir",
            vec![
                Finding::error("render-drift", "t.yml", 1, "differs"),
                newer(run),
                Finding::error("render-drift", "t.yml", 2, "differs").fix("run revendor render"),
                Finding::warning("patch-offset", "p.patch", 1, "moved"),
            ],
        );
        c.path = Some("packages/it's".into());
        let got = rows(std::slice::from_ref(&c));
        assert_eq!(
            got[0].reason,
            "v2: the dry run was not done (no answer); error findings: render-drift (run revendor render)"
        );
        assert_eq!(got[0].findings, ["render-drift", UPSTREAM_NEWER]);
        assert_eq!(
            got[0].command,
            r"revendor -C 'packages/it'\''s' update --to v2"
        );
        c.error = Some(Failed {
            message: "vendor.toml:4: unknown key".into(),
            hint: Some("fix it".into()),
        });
        let got = rows(&[c]);
        assert!(
            got[0]
                .reason
                .starts_with("could not be checked: vendor.toml:4: unknown key (fix it); v2:"),
            "{}",
            got[0].reason
        );
        assert_eq!(
            got[0].command,
            r"revendor -C 'packages/it'\''s' check --online"
        );
    }

    #[test]
    fn an_upstreamed_patch_asks_to_drop_it() {
        let run = DryRun::ran(
            None,
            "v1",
            "v2",
            "revendor update --to v2",
            vec![patch(Kind::AlreadyUpstream)],
        );
        let mut c = checked(".", vec![newer(run)]);
        c.path = Some(".".into());
        let got = rows(&[c]);
        assert_eq!(got[0].command, "revendor update --to v2 --drop-upstreamed");
        assert_eq!(
            got[0].reason,
            "v2 already carries ns on templates/app.yml: drop the patch"
        );
    }
}
