//! The structured dry run an `upstream-newer` finding carries in JSON
//! (`"dry_run"`, docs/json.md), so a nightly job branches on fields rather
//! than on the finding's English message.
//!
//! 1. `upstream_newer` carries every patch of the upstream to the newer
//!    release and keeps each result as a [`PatchResult`].
//! 2. [`DryRun::ran`] sums them up into one [`Verdict`] (`conflict` over
//!    `upstreamed` over `applies`) and the command that moves on from it;
//!    [`DryRun::not_done`] says why there is no result at all.
//!
//! The verdict and the finding's `fix` come from the same results, so the
//! command in the JSON is the one the human output names.

use serde::{Deserialize, Serialize};

use crate::patch::result::{Kind, PatchResult};

/// What the dry run says `update` will meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Every patch re-applies: `update` goes through on its own.
    Applies,
    /// Some patch would not re-apply: a person resolves it.
    Conflict,
    /// No conflict, but some patch is already upstream: a person decides
    /// to drop it.
    Upstreamed,
    /// The dry run could not be done (`reason` says why).
    NotDone,
}

/// The dry run of one upstream's patches against its newer release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DryRun {
    /// The `[[upstream]] name` in vendor.toml; `None` for an unnamed
    /// `[upstream]`.
    pub upstream: Option<String>,
    /// The locked version (or commit, for a branch).
    pub from: String,
    /// The version (or commit) the patches were carried to.
    pub to: String,
    /// The sum of the patch results.
    pub outcome: Verdict,
    /// Why the dry run was not done; `None` when it was.
    pub reason: Option<String>,
    /// One result per patch section, in the order they apply.
    pub patches: Vec<PatchResult>,
    /// What a person or a job runs next.
    pub command: String,
}

impl DryRun {
    /// The dry run of `patches` from `from` to `to`, whose update runs
    /// `update` (`revendor update --to v4.4.0`, or `revendor update` for a
    /// branch): the verdict, and the flags the update then needs.
    pub fn ran(
        upstream: Option<&str>,
        from: &str,
        to: &str,
        update: &str,
        patches: Vec<PatchResult>,
    ) -> DryRun {
        let any = |kind: Kind| patches.iter().any(|p| p.outcome == kind);
        let (conflict, upstreamed) = (any(Kind::Conflict), any(Kind::AlreadyUpstream));
        let outcome = match (conflict, upstreamed) {
            (true, _) => Verdict::Conflict,
            (false, true) => Verdict::Upstreamed,
            (false, false) => Verdict::Applies,
        };
        // `update` stops on a patch the release already carries unless told
        // to drop it, and on a conflict unless told to keep it.
        let mut command = update.to_owned();
        if upstreamed {
            command.push_str(" --drop-upstreamed");
        }
        if conflict {
            command.push_str(" --keep-conflicts");
        }
        DryRun {
            upstream: upstream.map(str::to_owned),
            from: from.to_owned(),
            to: to.to_owned(),
            outcome,
            reason: None,
            patches,
            command,
        }
    }

    /// A dry run that could not be done, for `reason`.
    pub fn not_done(
        upstream: Option<&str>,
        from: &str,
        to: &str,
        update: &str,
        reason: &str,
    ) -> DryRun {
        DryRun {
            upstream: upstream.map(str::to_owned),
            from: from.to_owned(),
            to: to.to_owned(),
            outcome: Verdict::NotDone,
            reason: Some(reason.to_owned()),
            patches: Vec::new(),
            command: update.to_owned(),
        }
    }

    /// The targets of the conflicting patches, each once, in order.
    pub fn conflicts(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for p in self.patches.iter().filter(|p| p.outcome == Kind::Conflict) {
            if !out.contains(&p.target.as_str()) {
                out.push(&p.target);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(target: &str, outcome: Kind) -> PatchResult {
        PatchResult::described("p", target, outcome, "words".to_owned())
    }

    #[test]
    fn a_conflict_outweighs_an_upstreamed_patch_and_asks_to_keep_conflicts() {
        let run = DryRun::ran(
            Some("tool"),
            "v1",
            "v2",
            "revendor update --to v2",
            vec![
                result("a.yml", Kind::AlreadyUpstream),
                result("b.yml", Kind::Conflict),
                result("b.yml", Kind::Conflict),
            ],
        );
        assert_eq!(run.outcome, Verdict::Conflict);
        assert_eq!(
            run.command,
            "revendor update --to v2 --drop-upstreamed --keep-conflicts"
        );
        assert_eq!(run.conflicts(), ["b.yml"]);
        let json = serde_json::to_value(&run).unwrap();
        assert_eq!(json["outcome"], "conflict");
        assert_eq!(json["upstream"], "tool");
        assert_eq!(json["reason"], serde_json::Value::Null);
        assert_eq!(json["patches"][1]["outcome"], "conflict");
    }

    #[test]
    fn clean_results_apply_and_an_upstreamed_one_is_its_own_verdict() {
        let clean = DryRun::ran(
            None,
            "v1",
            "v2",
            "revendor update --to v2",
            vec![result("a.yml", Kind::Exact), result("b.yml", Kind::Merged)],
        );
        assert_eq!(clean.outcome, Verdict::Applies);
        assert_eq!(clean.command, "revendor update --to v2");
        let none = DryRun::ran(None, "v1", "v2", "revendor update --to v2", Vec::new());
        assert_eq!(none.outcome, Verdict::Applies);
        let up = DryRun::ran(
            None,
            "v1",
            "v2",
            "revendor update --to v2",
            vec![result("a.yml", Kind::AlreadyUpstream)],
        );
        assert_eq!(up.outcome, Verdict::Upstreamed);
        assert_eq!(up.command, "revendor update --to v2 --drop-upstreamed");
    }

    #[test]
    fn not_done_says_why_and_names_the_plain_update() {
        let run = DryRun::not_done(None, "v1", "v2", "revendor update --to v2", "why");
        let json = serde_json::to_value(&run).unwrap();
        assert_eq!(json["outcome"], "not-done");
        assert_eq!(json["reason"], "why");
        assert_eq!(json["patches"], serde_json::json!([]));
        assert_eq!(json["command"], "revendor update --to v2");
    }
}
