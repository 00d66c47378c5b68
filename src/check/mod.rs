//! The drift check: every way a package disagrees with its lock, its
//! upstream, its image or its own declarations, as findings with stable ids.
//!
//! 1. `ops::check` loads vendor.toml and the lock into an [`Input`], which
//!    reads each file of the package once and shares it between checks.
//! 2. [`run`] calls every check of [`CHECKS`] (sorted by name, one file
//!    each). A check reads what it needs through the [`Input`] and sends
//!    [`Finding`]s to the [`Sink`]; with `--online` it may also ask the
//!    upstream, the registry and the marker resolvers.
//! 3. With `--fix`, the few fixes that need no decision are staged as edits
//!    in the [`Input`] (and reported as `info` findings); `ops::check`
//!    commits them at once.
//!
//! A finding is not an error: a failed check is data for the report, and
//! only "could not do the job" (an unreadable file, a malformed vendor.toml, a
//! remote that refused us) is an `Err`. A remote that did not answer at all
//! is neither: it is the finding `unreachable` (`unreachable.rs`), and every
//! other check still runs. Ids are permanent: a check may gain ids,
//! but an id is never renamed or reused, because CI scripts and people filter
//! on them. Each id carries its documentation ([`Id::doc`], sections What,
//! Why and Example), from which docs/checks.md is generated.

mod builder_go;
mod cni_checksums;
mod contract;
mod dry_run;
mod image_exists;
mod image_pin;
mod image_pin_rename;
mod image_pin_yaml;
mod image_stale;
mod input;
mod lock_integrity;
mod marker;
mod patch_orphaned;
mod patches;
mod render_drift;
mod unreachable;
mod upstream_newer;
mod verdict;
mod version_sync;

pub use builder_go::{
    advice as builder_advice, command_name as builder_command_name, findings as builder_findings,
};
pub use dry_run::{DryRun, Verdict};
pub use image_stale::IMAGE_STALE;
pub use input::Input;
pub use patch_orphaned::{Orphan, orphans, removed_patch_files};
pub use unreachable::UNREACHABLE;

use crate::error::Result;

/// How much a finding matters. Only `error` makes `check` exit 1.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Drift or a broken promise: the check fails.
    Error,
    /// Worth fixing, but the package is still what the lock says.
    Warning,
    /// Information, such as a release outside `track`, or a fix applied.
    Info,
}

impl Severity {
    /// The lowercase name used in every output format.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding: an id, where, what, and what to do about it.
///
/// `file` is relative to the package directory (it may start with `../`
/// for an `expect.file` outside it); `line` is 1-based, and 1 where the
/// finding concerns a whole file.
///
/// It reads back from JSON too: `pr --report` takes the findings of a
/// `check --all --format json` document another job wrote.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Finding {
    /// The stable id, such as `render-drift` or `marker:talos`.
    pub id: String,
    /// How much it matters.
    pub severity: Severity,
    /// The file to look at.
    pub file: String,
    /// The line to look at.
    pub line: usize,
    /// What is wrong, naming the values involved.
    pub message: String,
    /// What to do about it.
    pub fix: String,
    /// For an `upstream-newer` that dry-ran the patches: the dry run, for
    /// scripts (the message says the same for people).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<Box<DryRun>>,
}

impl Finding {
    /// A finding of `severity`, without a fix yet.
    pub fn new(
        severity: Severity,
        id: impl Into<String>,
        file: impl Into<String>,
        line: usize,
        message: impl Into<String>,
    ) -> Finding {
        Finding {
            id: id.into(),
            severity,
            file: file.into(),
            line: line.max(1),
            message: message.into(),
            fix: String::new(),
            dry_run: None,
        }
    }

    /// An `error` finding.
    pub fn error(
        id: impl Into<String>,
        file: impl Into<String>,
        line: usize,
        message: impl Into<String>,
    ) -> Finding {
        Finding::new(Severity::Error, id, file, line, message)
    }

    /// A `warning` finding.
    pub fn warning(
        id: impl Into<String>,
        file: impl Into<String>,
        line: usize,
        message: impl Into<String>,
    ) -> Finding {
        Finding::new(Severity::Warning, id, file, line, message)
    }

    /// An `info` finding.
    pub fn info(
        id: impl Into<String>,
        file: impl Into<String>,
        line: usize,
        message: impl Into<String>,
    ) -> Finding {
        Finding::new(Severity::Info, id, file, line, message)
    }

    /// The same finding with `fix` as what to do.
    pub fn fix(mut self, fix: impl Into<String>) -> Finding {
        self.fix = fix.into();
        self
    }

    /// The same finding carrying the dry run it reports.
    pub fn dry_run(mut self, run: DryRun) -> Finding {
        self.dry_run = Some(Box::new(run));
        self
    }
}

/// Where checks send their findings, in the order they are found, and the
/// URLs of the remotes that did not answer.
#[derive(Debug, Default)]
pub struct Sink {
    findings: Vec<Finding>,
    unreachable: Vec<String>,
}

impl Sink {
    /// An empty sink.
    pub fn new() -> Sink {
        Sink::default()
    }

    /// Records a finding.
    pub fn push(&mut self, finding: Finding) {
        self.findings.push(finding);
    }

    /// Records an `unreachable` finding and the URL that did not answer.
    fn push_unreachable(&mut self, finding: Finding, url: String) {
        self.findings.push(finding);
        if !self.unreachable.contains(&url) {
            self.unreachable.push(url);
        }
    }

    /// The URLs that did not answer, each once, in the order they failed.
    pub fn unreachable(&self) -> &[String] {
        &self.unreachable
    }

    /// The findings, consumed.
    pub fn into_findings(self) -> Vec<Finding> {
        self.findings
    }
}

/// A stable finding id and its documentation.
///
/// `name` is the id as reported; a family of ids, one per declared marker or
/// contract, is named with a placeholder (`marker:<name>`). `doc` is Markdown
/// with exactly the sections `### What`, `### Why` and `### Example`, in that
/// order (a unit test holds every id to it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Id {
    /// The id, or the family's pattern.
    pub name: &'static str,
    /// What / Why / Example.
    pub doc: &'static str,
}

impl Id {
    /// The id of one member of a family: `marker:<name>` with `talos` gives
    /// `marker:talos`.
    pub fn member(&self, name: &str) -> String {
        match self.name.split_once(':') {
            Some((family, _)) => format!("{family}:{name}"),
            None => self.name.to_owned(),
        }
    }
}

/// One check: the ids it may report and the function that runs it.
#[derive(Clone, Copy)]
pub struct Check {
    /// The check's name, which is also its file under `src/check/`.
    pub name: &'static str,
    /// Every id this check reports.
    pub ids: &'static [Id],
    /// Whether the check runs only with `--online`.
    pub online_only: bool,
    run: fn(&Input<'_>, &mut Sink) -> Result<()>,
}

impl std::fmt::Debug for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Check")
            .field("name", &self.name)
            .field("online_only", &self.online_only)
            .finish_non_exhaustive()
    }
}

/// Every check, sorted by name.
pub const CHECKS: &[Check] = &[
    builder_go::CHECK,
    cni_checksums::CHECK,
    contract::CHECK,
    image_exists::CHECK,
    image_pin::CHECK,
    image_stale::CHECK,
    lock_integrity::CHECK,
    marker::CHECK,
    patch_orphaned::CHECK,
    patches::CHECK,
    render_drift::CHECK,
    upstream_newer::CHECK,
    version_sync::CHECK,
];

/// Every id of every check, and `unreachable`, which any online check may
/// report; sorted.
pub fn ids() -> Vec<Id> {
    let mut all: Vec<Id> = CHECKS.iter().flat_map(|c| c.ids.iter().copied()).collect();
    all.push(UNREACHABLE);
    all.sort_by_key(|id| id.name);
    all
}

/// Runs every check that applies (the online ones only when
/// `input.online`), in [`CHECKS`] order. A check that stops because a
/// remote did not answer leaves an `unreachable` finding, and the next
/// check runs.
pub fn run(input: &Input<'_>, sink: &mut Sink) -> Result<()> {
    for check in CHECKS {
        if check.online_only && !input.online {
            continue;
        }
        let ids: Vec<&str> = check.ids.iter().map(|i| i.name).collect();
        let what = format!("{} could not finish", ids.join(", "));
        unreachable::answered((check.run)(input, sink), sink, &what, "vendor.toml", 1)?;
    }
    Ok(())
}

/// Runs the one check named `name` (a [`Check::name`]), online or not as
/// `input` says: how `pr` re-verifies the markers online without asking the
/// upstream or the registry anything else.
pub fn run_one(name: &str, input: &Input<'_>, sink: &mut Sink) -> Result<()> {
    for check in CHECKS.iter().filter(|c| c.name == name) {
        (check.run)(input, sink)?;
    }
    Ok(())
}

/// docs/checks.md: one `##` heading per id with its documentation.
pub fn docs_markdown() -> String {
    let mut out = String::from(
        "# revendor check: finding ids\n\n\
         Generated from the ids' documentation in `src/check/` (the test \
         `check::tests::docs_are_current` keeps it in step). Ids are \
         permanent: never renamed, never reused.\n",
    );
    for id in ids() {
        out.push_str(&format!("\n## {}\n\n{}\n", id.name, id.doc.trim()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids are a public contract: this list only ever grows.
    #[test]
    fn the_ids_are_pinned() {
        let names: Vec<&str> = ids().iter().map(|i| i.name).collect();
        assert_eq!(
            names,
            [
                "builder-go",
                "cni-checksums",
                "contract:<name>",
                "image-exists",
                "image-pin",
                "image-stale",
                "lock-integrity",
                "marker:<name>",
                "patch-offset",
                "patch-orphaned",
                "patch-upstreamed",
                "render-drift",
                "unreachable",
                "upstream-newer",
                "version-sync",
            ]
        );
    }

    #[test]
    fn checks_are_sorted_and_ids_unique() {
        let names: Vec<&str> = CHECKS.iter().map(|c| c.name).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
        let mut all: Vec<&str> = ids().iter().map(|i| i.name).collect();
        all.dedup();
        assert_eq!(all.len(), ids().len());
    }

    #[test]
    fn every_id_has_what_why_and_example() {
        for id in ids() {
            let headings: Vec<&str> = id
                .doc
                .lines()
                .filter(|l| l.starts_with('#'))
                .map(str::trim)
                .collect();
            assert_eq!(
                headings,
                ["### What", "### Why", "### Example"],
                "doc of `{}`",
                id.name
            );
            for section in id.doc.split("### ").skip(1) {
                let body = section.split_once('\n').map_or("", |(_, b)| b);
                assert!(
                    !body.trim().is_empty(),
                    "empty section in `{}`: {section}",
                    id.name
                );
            }
        }
    }

    #[test]
    fn docs_are_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/checks.md");
        let on_disk = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            on_disk == docs_markdown(),
            "docs/checks.md is stale; regenerate it from `check::docs_markdown()` \
             (e.g. `cargo test --lib check::tests::write_docs -- --ignored`)"
        );
        let headings: Vec<&str> = on_disk
            .lines()
            .filter_map(|l| l.strip_prefix("## "))
            .collect();
        let names: Vec<&str> = ids().iter().map(|i| i.name).collect();
        assert_eq!(headings, names);
    }

    /// Regenerates docs/checks.md; run by hand after changing an id's doc.
    #[test]
    #[ignore = "writes docs/checks.md"]
    fn write_docs() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/checks.md");
        std::fs::write(path, docs_markdown()).unwrap();
    }

    #[test]
    fn family_members_take_the_name() {
        let id = Id {
            name: "marker:<name>",
            doc: "",
        };
        assert_eq!(id.member("talos"), "marker:talos");
        let plain = Id {
            name: "image-pin",
            doc: "",
        };
        assert_eq!(plain.member("x"), "image-pin");
    }
}
