//! Patches upstream already carries at the target (issue 9, item 4).
//!
//! A section whose change the new release already has lands as
//! [`Outcome::AlreadyUpstream`]. Kept, it would be locked as verified and
//! then fail where it is applied for real (`git apply` in the image build,
//! `render`). So:
//!
//! 1. Carrying (`carry.rs`, `source.rs`) records each such section.
//! 2. The update stops there, naming each, unless `--drop-upstreamed`.
//! 3. With it, [`remove_sections`] takes the sections out of their patch files; a patch
//!    left with none loses its file, its lock entry and its `[[patch]]` in
//!    vendor.toml (every other byte kept), and the summary says so.
//!
//! A patch only partly upstream (some hunks there, some not) is not
//! upstreamed: the 3-way merge carries the rest, as before, and [`describe`]
//! names the hunks upstream took.

use super::summary::{UpdateReport, UpstreamedReport};
use crate::config::Config;
use crate::config::lock::LockedPatch;
use crate::error::{Error, Result};
use crate::image::Digest;
use crate::patch::{self, FilePatch, Outcome};
use crate::paths::Transaction;

/// A section found upstream: section `section` of patch `patch` (in
/// `file`), which targets `target`.
pub(super) fn found(patch: &str, file: &str, target: &str, section: usize) -> UpstreamedReport {
    UpstreamedReport {
        patch: patch.to_owned(),
        file: file.to_owned(),
        target: target.to_owned(),
        section,
        whole: false,
        dropped: false,
    }
}

/// What a report prints for a section's outcome: the outcome, and for a
/// merge the hunks that upstream already has on their own.
pub(super) fn describe(fp: &FilePatch, input: &[u8], outcome: &Outcome) -> String {
    let Outcome::Merged { .. } = outcome else {
        return outcome.to_string();
    };
    let taken: Vec<String> = patch::hunks_already_applied(fp, input)
        .into_iter()
        .map(|i| (i + 1).to_string())
        .collect();
    match taken.as_slice() {
        [] => outcome.to_string(),
        [one] => format!("{outcome}; hunk {one} already upstream"),
        many => format!("{outcome}; hunks {} already upstream", many.join(", ")),
    }
}

/// Marks each upstreamed section whose patch has no other section left;
/// returns whether the update must stop (some are, and it is not dropping
/// them).
pub(super) fn settle(report: &mut UpdateReport, dropping: bool) -> bool {
    let sections = |name: &str, list: &[String]| list.iter().filter(|p| *p == name).count();
    let all: Vec<String> = report.patches.iter().map(|p| p.patch.clone()).collect();
    let upstream: Vec<String> = report.upstreamed.iter().map(|u| u.patch.clone()).collect();
    for u in &mut report.upstreamed {
        u.whole = sections(&u.patch, &all) == sections(&u.patch, &upstream);
    }
    !report.upstreamed.is_empty() && !dropping
}

/// Takes every upstreamed section out of its staged patch file; a file left
/// with no section is removed instead, with its lock entry. Returns the names
/// of the patches removed whole, whose `[[patch]]` must go too.
pub(super) fn remove_sections(
    config: &Config,
    txn: &mut Transaction,
    locked: &mut Vec<LockedPatch>,
    upstreamed: &mut [UpstreamedReport],
) -> Result<Vec<String>> {
    let mut removed = Vec::new();
    for p in &config.patches {
        let sections: Vec<usize> = upstreamed
            .iter()
            .filter(|u| u.patch == p.name)
            .map(|u| u.section)
            .collect();
        if sections.is_empty() {
            continue;
        }
        let staged = txn.staged(&p.file).ok_or_else(|| {
            Error::Conflict(format!("patch `{}` ({}) was not staged", p.name, p.file))
        })?;
        let mut set = patch::parse(staged)
            .map_err(|e| Error::Conflict(format!("patch `{}` ({}): {e}", p.name, p.file)))?;
        let mut index = 0;
        set.files.retain(|_| {
            index += 1;
            !sections.contains(&(index - 1))
        });
        if set.files.is_empty() {
            txn.remove(&p.file);
            locked.retain(|l| l.name != p.name);
            removed.push(p.name.clone());
        } else {
            let bytes = patch::write(&set);
            if let Some(l) = locked.iter_mut().find(|l| l.name == p.name) {
                l.sha256 = Digest::of(&bytes).hex().to_owned();
            }
            txn.stage(&p.file, bytes);
        }
        for u in upstreamed.iter_mut().filter(|u| u.patch == p.name) {
            u.dropped = true;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::outcome::{Kind, PatchResult};

    const SERIES: &str = "--- a/a.yml\n+++ b/a.yml\n@@ -1 +1 @@\n-a\n+A\n--- a/b.yml\n+++ b/b.yml\n@@ -1 +1 @@\n-b\n+B\n";

    fn upstreamed(section: usize) -> UpstreamedReport {
        found("p", "p.patch", "b.yml", section)
    }

    #[test]
    fn a_patch_is_whole_when_every_section_is_upstream() {
        let upstream = super::super::summary::UpstreamMove {
            name: None,
            source: "github:o/r".into(),
            from: "v1".into(),
            to: "v2".into(),
            moved_from: None,
            adopted: false,
            added: Vec::new(),
            removed: Vec::new(),
            renamed: Vec::new(),
        };
        let mut report = UpdateReport::new(vec![upstream], false, false);
        for target in ["a.yml", "b.yml"] {
            report.patches.push(PatchResult::described(
                "p",
                target,
                Kind::AlreadyUpstream,
                String::new(),
            ));
        }
        assert!(!settle(&mut report, false), "nothing upstream: go on");
        report.upstreamed.push(upstreamed(1));
        assert!(settle(&mut report, false), "stop");
        assert!(!report.upstreamed[0].whole);
        assert!(!settle(&mut report, true), "dropping: go on");
        report.upstreamed.push(upstreamed(0));
        settle(&mut report, true);
        assert!(report.upstreamed.iter().all(|u| u.whole));
    }

    #[test]
    fn dropping_takes_sections_out_and_a_patch_left_empty_goes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("p.patch"), SERIES).unwrap();
        let text = "[upstream]\ngithub = \"o/r\"\nversion = \"v1\"\n[[vendor]]\nfrom = \"a.yml\"\nto = \"a.yml\"\n[[vendor]]\nfrom = \"b.yml\"\nto = \"b.yml\"\n[[patch]]\nname = \"p\"\nfile = \"p.patch\"\napplies-to = \"vendor\"\n";
        let config = Config::parse(dir.path(), &dir.path().join("vendor.toml"), text).unwrap();
        let lock = || {
            vec![LockedPatch {
                name: "p".into(),
                sha256: "old".into(),
            }]
        };

        let mut txn = Transaction::new(dir.path());
        txn.stage("p.patch", SERIES.as_bytes().to_vec());
        let mut locked = lock();
        let mut one = [upstreamed(1)];
        let gone = remove_sections(&config, &mut txn, &mut locked, &mut one).unwrap();
        assert!(gone.is_empty() && one[0].dropped);
        let left = txn.staged("p.patch").unwrap().to_vec();
        assert_eq!(left, SERIES.split("--- a/b.yml").next().unwrap().as_bytes());
        assert_eq!(locked[0].sha256, Digest::of(&left).hex());

        let mut txn = Transaction::new(dir.path());
        txn.stage("p.patch", SERIES.as_bytes().to_vec());
        let mut locked = lock();
        let mut both = [upstreamed(0), upstreamed(1)];
        let gone = remove_sections(&config, &mut txn, &mut locked, &mut both).unwrap();
        assert_eq!(gone, ["p"]);
        assert!(locked.is_empty() && txn.staged("p.patch").is_none());
    }

    const TWO_HUNKS: &str =
        "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -7,3 +7,3 @@\n g\n-h\n+H\n i\n";

    #[test]
    fn a_merge_names_the_hunks_upstream_took() {
        let fp = patch::parse(TWO_HUNKS.as_bytes()).unwrap().files.remove(0);
        let upstream = b"a\nB\nc\nd\ne\nf\ng\nh\ni\n";
        let merged = Outcome::Merged {
            content: Vec::new(),
        };
        assert_eq!(
            describe(&fp, upstream, &merged),
            "merged (3-way); hunk 1 already upstream"
        );
        assert_eq!(describe(&fp, b"a\nb\nc\n", &merged), "merged (3-way)");
        let exact = Outcome::Exact {
            content: Vec::new(),
        };
        assert_eq!(describe(&fp, upstream, &exact), "exact");
    }
}
