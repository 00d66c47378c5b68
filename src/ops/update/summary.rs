//! [`UpdateReport`]: what `update` did, for the closing summary and JSON.

use serde::Serialize;

use crate::check::Finding;
use crate::ops::outcome::{EditReport, PatchResult};

/// One upstream of the update: where it comes from and where it went.
#[derive(Debug, Clone, Serialize)]
pub struct UpstreamMove {
    /// Its `name`; `None` for an unnamed `[upstream]`.
    pub name: Option<String>,
    /// `github:owner/name` or `git:URL`.
    pub source: String,
    /// The version before.
    pub from: String,
    /// The version after.
    pub to: String,
    /// The source the lock vendored from, when vendor.toml now names another.
    pub moved_from: Option<String>,
    /// This upstream had no lock entry and was adopted.
    pub adopted: bool,
    /// Files of its vendored directories that arrive (rendered paths).
    pub added: Vec<String>,
    /// Files of its vendored directories that go.
    pub removed: Vec<String>,
    /// Files it moved inside a vendored directory.
    pub renamed: Vec<Renamed>,
}

/// The adoption an update wrote before its move (issue 20): a package with
/// no lock whose target is another version than vendor.toml's is adopted at
/// that version first, and then moved, so that a conflict in the move
/// leaves an adopted package.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AdoptionStep {
    /// The adoption is written, whatever became of the move (`false` with
    /// `--dry-run`, which plans both steps as one).
    pub written: bool,
    /// The files the adoption wrote.
    pub changed: Vec<String>,
}

/// One finding of the check that closes an update.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClosingFinding {
    /// The finding, its fix being the next command.
    #[serde(flatten)]
    pub finding: Finding,
    /// An `error` the check before the update did not report.
    pub caused: bool,
}

/// One conflicting hunk.
#[derive(Debug, Clone, Serialize)]
pub struct ConflictReport {
    /// The patch name.
    pub patch: String,
    /// The file holding the conflict.
    pub file: String,
    /// First line of the conflict region in the marked file (1-based).
    pub start: usize,
    /// Last line of the conflict region.
    pub end: usize,
    /// The patched side's text.
    pub ours: String,
    /// The new upstream's text.
    pub theirs: String,
    /// Why the strict apply failed: hunk number, header, first line that no
    /// longer matches.
    pub strict: Option<String>,
    /// The file `--keep-conflicts` wrote the markers into: the rendered
    /// file for a vendor patch, the working copy under
    /// `upstream/.revendor-conflicts/` for a source patch; `None` when
    /// nothing was written.
    pub marked: Option<String>,
}

/// One hunk that, adopting the package, applied only with GNU patch's fuzz
/// or a recounted header, and was refreshed to exact.
#[derive(Debug, Clone, Serialize)]
pub struct FuzzyReport {
    /// The patch name.
    pub patch: String,
    /// The patch file.
    pub file: String,
    /// Line of the hunk's `@@` in the patch file as it was.
    pub line: usize,
    /// The rendered file it targets.
    pub target: String,
    /// 1-based hunk of the patch's section for `target`.
    pub hunk: usize,
    /// Why: `needed fuzz 2 (offset +10)`, a header that lies.
    pub why: String,
}

/// One patch section whose change upstream already has at the target.
#[derive(Debug, Clone, Serialize)]
pub struct UpstreamedReport {
    /// The patch name.
    pub patch: String,
    /// The patch file.
    pub file: String,
    /// The rendered file (or source file) the section targets.
    pub target: String,
    /// The section's index in the patch file.
    #[serde(skip)]
    pub section: usize,
    /// Every section of the patch is upstream: the whole patch can go.
    pub whole: bool,
    /// Taken out (`--drop-upstreamed`): the section, or the file and its
    /// `[[patch]]` when `whole`.
    pub dropped: bool,
}

/// A file of a vendored directory that upstream moved: removed at one path
/// and added with the same bytes at another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Renamed {
    /// The rendered file before.
    pub from: String,
    /// The rendered file now.
    pub to: String,
}

/// Everything `update` did or would do.
#[derive(Debug, Clone, Serialize)]
pub struct UpdateReport {
    /// The version before (of the first upstream, when there are several).
    pub from: String,
    /// The version after (of the first upstream, when there are several).
    pub to: String,
    /// Every upstream, in vendor.toml order.
    pub upstreams: Vec<UpstreamMove>,
    /// The source the lock vendored from, when vendor.toml now names another
    /// and the update moved the package to it.
    pub moved_from: Option<String>,
    /// The package had no lock and was adopted.
    pub adopted: bool,
    /// The adoption was a step of its own, before the move to another
    /// version; `None` when nothing moved after it (or nothing was adopted).
    pub adoption: Option<AdoptionStep>,
    /// Nothing was written.
    pub dry_run: bool,
    /// Each patch section's result (the same objects `render` reports).
    pub patches: Vec<PatchResult>,
    /// Conflicting hunks (the update stops when there are any).
    pub conflicts: Vec<ConflictReport>,
    /// Hand edits adopted into patches.
    pub edits: Vec<EditReport>,
    /// What else happened, one sentence each: a removed patch reverted, a
    /// removed output deleted.
    pub notes: Vec<String>,
    /// Files of vendored directories that arrive: upstream added them (or
    /// vendor.toml now selects them). Rendered paths, of every upstream
    /// (each [`UpstreamMove`] has its own).
    pub added: Vec<String>,
    /// Files of vendored directories that go: upstream removed them.
    pub removed: Vec<String>,
    /// Files upstream moved inside a vendored directory.
    pub renamed: Vec<Renamed>,
    /// Adopting: hunks that applied only with fuzz or a recount, refreshed.
    pub fuzzy: Vec<FuzzyReport>,
    /// Sections upstream already carries (the update stops on them unless
    /// it drops them).
    pub upstreamed: Vec<UpstreamedReport>,
    /// Files written (or that would be, with `--dry-run`), as `render`
    /// lists them.
    pub changed: Vec<String>,
    /// Of [`changed`](Self::changed), the files that were not there before:
    /// the summary says "created", not "updated" (issue 21).
    #[serde(skip)]
    pub created: Vec<String>,
    /// Of [`changed`](Self::changed), the files removed: "deleted".
    #[serde(skip)]
    pub deleted: Vec<String>,
    /// The offline check of the written result, each finding with its next
    /// command (empty with `--dry-run`).
    pub findings: Vec<ClosingFinding>,
}

impl UpdateReport {
    /// The report of an update of `upstreams` (at least one).
    pub(super) fn new(upstreams: Vec<UpstreamMove>, adopted: bool, dry_run: bool) -> UpdateReport {
        let first = &upstreams[0];
        UpdateReport {
            from: first.from.clone(),
            to: first.to.clone(),
            moved_from: first.moved_from.clone(),
            upstreams,
            adopted,
            adoption: None,
            dry_run,
            patches: Vec::new(),
            conflicts: Vec::new(),
            edits: Vec::new(),
            notes: Vec::new(),
            added: Vec::new(),
            removed: Vec::new(),
            renamed: Vec::new(),
            fuzzy: Vec::new(),
            upstreamed: Vec::new(),
            changed: Vec::new(),
            created: Vec::new(),
            deleted: Vec::new(),
            findings: Vec::new(),
        }
    }

    /// The upstream of that name in the report (the first for an unknown
    /// one, as [`crate::config::Config::upstream`] resolves it).
    pub(super) fn upstream_mut(&mut self, name: Option<&str>) -> &mut UpstreamMove {
        let i = self
            .upstreams
            .iter()
            .position(|u| u.name.as_deref() == name)
            .unwrap_or(0);
        &mut self.upstreams[i]
    }

    /// The closing findings this update caused (`error`s the check before
    /// it did not report): the update is written, and exits 1.
    pub fn caused(&self) -> impl Iterator<Item = &ClosingFinding> {
        self.findings.iter().filter(|f| f.caused)
    }

    /// The closing summary for people.
    pub fn human(&self) -> String {
        let mut s = String::new();
        self.moves(&mut s);
        for f in &self.fuzzy {
            s.push_str(&format!(
                "patch {} on {}: hunk {} ({}:{}) {}; refreshed to exact\n",
                f.patch, f.target, f.hunk, f.file, f.line, f.why
            ));
        }
        for u in &self.upstreams {
            let named = u.name.as_ref().map(|n| format!(" {n}")).unwrap_or_default();
            for f in &u.added {
                s.push_str(&format!("upstream{named} added {f}\n"));
            }
            for f in &u.removed {
                s.push_str(&format!("upstream{named} removed {f}\n"));
            }
            for r in &u.renamed {
                s.push_str(&format!("upstream{named} renamed {} -> {}\n", r.from, r.to));
            }
        }
        for p in &self.patches {
            s.push_str(&format!("{p}\n"));
        }
        let adopted_into = if self.dry_run {
            "would be adopted into"
        } else {
            "adopted into"
        };
        for e in &self.edits {
            if let Some(into) = &e.adopted_into {
                s.push_str(&format!(
                    "hand edit {}:{} {adopted_into} patch {into}: {}\n",
                    e.file,
                    e.line,
                    e.text.trim_end()
                ));
            }
        }
        for u in &self.upstreamed {
            s.push_str(&self.upstreamed_line(u));
        }
        for n in &self.notes {
            s.push_str(n);
            s.push('\n');
        }
        for c in &self.conflicts {
            s.push_str(&format!(
                "conflict in {} lines {}-{} (patch {})\n  ours:   {}\n  theirs: {}\n",
                c.file,
                c.start,
                c.end,
                c.patch,
                first_line(&c.ours),
                first_line(&c.theirs)
            ));
            if let Some(strict) = &c.strict {
                s.push_str(&format!("  strict apply: {strict}\n"));
            }
            if let Some(marked) = c.marked.as_ref().filter(|m| **m != c.file) {
                s.push_str(&format!("  markers written to {marked}\n"));
            }
        }
        if self.changed.is_empty() {
            s.push_str("no file changed\n");
        } else {
            for f in &self.changed {
                s.push_str(&format!("{} {f}\n", self.verb(f)));
            }
        }
        s
    }
}

impl UpdateReport {
    /// What happened to the changed file `f`, for the summary.
    fn verb(&self, f: &String) -> &'static str {
        match (
            self.dry_run,
            self.created.contains(f),
            self.deleted.contains(f),
        ) {
            (false, true, _) => "created",
            (false, _, true) => "deleted",
            (false, ..) => "updated",
            (true, true, _) => "would create",
            (true, _, true) => "would delete",
            (true, ..) => "would update",
        }
    }

    /// The lines of each upstream's move: adopted, moved to another
    /// source, its versions.
    fn moves(&self, s: &mut String) {
        let several = self.upstreams.len() > 1;
        if self.adopted {
            s.push_str(&self.adoption_line(several));
        }
        let adopt = if self.dry_run {
            "would adopt"
        } else {
            "adopted"
        };
        for u in &self.upstreams {
            let named = u.name.as_ref().map(|n| format!(" {n}")).unwrap_or_default();
            if u.adopted && !self.adopted {
                s.push_str(&format!(
                    "{adopt} upstream{named} at {} (not in the lock before)\n",
                    u.from
                ));
            }
            if let Some(old) = &u.moved_from {
                s.push_str(&format!(
                    "upstream{named} source: moved from {old} (the locked copies are the merge base)\n"
                ));
            }
            if u.from == u.to {
                s.push_str(&format!("upstream{named}: up to date at {}\n", u.to));
            } else {
                s.push_str(&format!("upstream{named}: {} -> {}\n", u.from, u.to));
            }
        }
    }

    /// "adopted the package at X (no lock before)", and when it then moved,
    /// ", then moved to Y" or "; the move to Y conflicts: …" (issue 20).
    fn adoption_line(&self, several: bool) -> String {
        let (adopt, moved, conflicts, stops) = if self.dry_run {
            ("would adopt", "move", "would conflict", "would stop")
        } else {
            ("adopted", "moved", "conflicts", "stops")
        };
        let first = &self.upstreams[0];
        let (at, to) = match several {
            true => (String::new(), String::new()),
            false => (format!(" at {}", first.from), format!(" to {}", first.to)),
        };
        let kept = self.upstreamed.iter().any(|u| !u.dropped);
        let then = match &self.adoption {
            None => String::new(),
            Some(_) if !self.conflicts.is_empty() => format!(
                "; the move{to} {conflicts}: {} conflicting hunk(s), below",
                self.conflicts.len()
            ),
            Some(_) if kept => {
                format!("; the move{to} {stops}: upstream already carries a patch, below")
            }
            Some(_) => format!(", then {moved}{to}"),
        };
        format!("{adopt} the package{at} (no lock before){then}\n")
    }

    fn upstreamed_line(&self, u: &UpstreamedReport) -> String {
        let to = &self.to;
        let (dropped, removed) = if self.dry_run {
            ("would drop", "would remove")
        } else {
            ("dropped", "removed")
        };
        match (u.dropped, u.whole) {
            (true, true) => format!(
                "{dropped} patch {}: upstream {to} already has it; {removed} {} and its [[patch]] from vendor.toml\n",
                u.patch, u.file
            ),
            (true, false) => format!(
                "{dropped} the section for {} from patch {} ({}): upstream {to} already has it\n",
                u.target, u.patch, u.file
            ),
            (false, _) => format!(
                "upstream {to} already has patch {}'s change to {}; `revendor update --drop-upstreamed` drops it\n",
                u.patch, u.target
            ),
        }
    }
}

fn first_line(s: &str) -> &str {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}
