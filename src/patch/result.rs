//! A patch section's result as reports print it: one shape for `render`,
//! `update` and the dry run of `check`'s `upstream-newer` (docs/json.md,
//! "Patch result"), so a script reads them alike.

use serde::{Deserialize, Serialize};

use super::Outcome;

/// How a patch section went, for scripts to branch on (`result` says it for
/// people, with hunk numbers and offsets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Every hunk applied where its header says.
    Exact,
    /// Every hunk applied, some at an offset.
    Offset,
    /// The strict apply failed, the 3-way merge is clean.
    Merged,
    /// The 3-way merge has conflicts.
    Conflict,
    /// Upstream already holds the change.
    AlreadyUpstream,
    /// Rebased onto a conflict resolved by hand (`update --continue`).
    Resolved,
}

impl From<&Outcome> for Kind {
    fn from(outcome: &Outcome) -> Kind {
        match outcome {
            Outcome::Exact { .. } => Kind::Exact,
            Outcome::Offset { .. } => Kind::Offset,
            Outcome::Merged { .. } => Kind::Merged,
            Outcome::Conflict { .. } => Kind::Conflict,
            Outcome::AlreadyUpstream { .. } => Kind::AlreadyUpstream,
        }
    }
}

/// One patch section applied to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatchResult {
    /// The patch's name in vendor.toml.
    pub patch: String,
    /// The file it applies to: a rendered file, or a path in the upstream
    /// source tree for a source patch.
    pub target: String,
    /// How it went.
    pub outcome: Kind,
    /// The same for people: `exact`, `offset (hunk 1 +9)`, `merged (3-way)`,
    /// `conflict (lines 4-9)`, `already upstream`.
    pub result: String,
}

impl PatchResult {
    /// The result of `outcome`, described as the outcome describes itself.
    pub fn new(patch: &str, target: &str, outcome: &Outcome) -> PatchResult {
        PatchResult::described(patch, target, Kind::from(outcome), outcome.to_string())
    }

    /// A result of `kind` with its own description (a conflict that names
    /// where each hunk lands instead of the merged lines).
    pub fn described(patch: &str, target: &str, kind: Kind, result: String) -> PatchResult {
        PatchResult {
            patch: patch.to_string(),
            target: target.to_string(),
            outcome: kind,
            result,
        }
    }
}

/// `patch <name> on <target>: <result>`, the line both summaries print.
impl std::fmt::Display for PatchResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "patch {} on {}: {}",
            self.patch, self.target, self.result
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_serializes_with_its_kind_and_its_words() {
        let outcome = Outcome::Offset {
            content: Vec::new(),
            offsets: vec![0, 9],
        };
        let r = PatchResult::new("ns", "templates/app.yml", &outcome);
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            serde_json::json!({
                "patch": "ns",
                "target": "templates/app.yml",
                "outcome": "offset",
                "result": "offset (hunk 2 +9)",
            })
        );
        assert_eq!(
            r.to_string(),
            "patch ns on templates/app.yml: offset (hunk 2 +9)"
        );
        let up = Outcome::AlreadyUpstream {
            content: Vec::new(),
        };
        assert_eq!(
            serde_json::to_value(Kind::from(&up)).unwrap(),
            "already-upstream"
        );
    }
}
