//! Each patch's result, recomputed from the base commit and the working
//! tree alone, never from a report a run saved.
//!
//! 1. Vendor patches: the base commit's patches are carried from the old
//!    pristine copy to the new one ([`Package::carry`], as `update` does),
//!    which says, per section, `exact`, `offset` (which hunks moved, by how
//!    much), `merged`, `conflict` or `already-upstream`.
//! 2. Source patches: the base's patch is applied strictly to the file in
//!    the new source tree, and rebased from the old tree when that fails.
//! 3. Both: the base's patch and the working tree's are compared change by
//!    change (a change is a run of removed and added lines inside a hunk):
//!    one only the working tree's makes was adopted (a hand edit folded in,
//!    or written by someone), one only the base's made was dropped.
//!
//! A result that cannot be recomputed (no old copy offline, a tree that
//! cannot be fetched) says so in its note instead of guessing.

use std::collections::BTreeMap;

use crate::config::{AppliesTo, Config, Placeholders, Vendor};
use crate::error::Result;
use crate::patch::{self, FilePatch, Labels, LineKind, Outcome, PatchSet};
use crate::pr::{HunkChange, HunkMove, Patch, Section};
use crate::render::{LoadedPatch, Package, Patches, Stamp};
use crate::upstream::{Source, SourceTree};

/// One vendored file at both versions.
#[derive(Debug, Clone)]
pub(super) struct Copy {
    /// The file: a file `[[vendor]]`, or one file of a vendored directory
    /// (at either version).
    pub vendor: Vendor,
    /// The pristine copy at the old version, or why there is none.
    pub old: std::result::Result<Vec<u8>, String>,
    /// The pristine copy in the working tree, or why there is none.
    pub new: std::result::Result<Vec<u8>, String>,
}

/// Why a file has no pristine copy in the base commit: it was not vendored
/// there (new in vendor.toml, or a file upstream added to a directory).
pub(super) const NOT_BEFORE: &str = "not vendored in the base commit";

/// Why a file of a vendored directory has no pristine copy now: upstream
/// removed it.
pub(super) const NOT_NOW: &str = "upstream removed it";

impl Copy {
    /// Whether upstream removed this file of a vendored directory.
    pub fn removed_upstream(&self) -> bool {
        self.new.as_ref().is_err_and(|why| why == NOT_NOW)
    }
}

/// What the results are computed from.
pub(super) struct Inputs<'a> {
    /// The working tree's vendor.toml.
    pub config: &'a Config,
    /// The upstream whose patches these are (`None`: the unnamed one).
    pub upstream: Option<&'a str>,
    /// The base commit's (the working tree's when it has none that parses).
    pub base_config: &'a Config,
    /// Each patch's bytes at the base, by name.
    pub base_bytes: &'a BTreeMap<String, Vec<u8>>,
    /// The old version of `upstream`, when the base had it.
    pub from: Option<&'a str>,
    /// Its new version.
    pub to: &'a str,
    /// Each vendored file at both versions, in vendor.toml order (of every
    /// upstream: the `[[vendor]]`s of others are passed over).
    pub copies: &'a [Copy],
}

/// The upstream source trees at both versions, fetched once and only when a
/// source patch needs them.
pub(super) struct Trees<'a> {
    base_source: &'a dyn Source,
    source: &'a dyn Source,
    old: Option<std::result::Result<SourceTree, String>>,
    new: Option<std::result::Result<SourceTree, String>>,
}

impl<'a> Trees<'a> {
    /// The old version's tree from `base_source` (the base commit's
    /// upstream), the new one's from `source`; neither fetched yet.
    pub fn new(base_source: &'a dyn Source, source: &'a dyn Source) -> Trees<'a> {
        Trees {
            base_source,
            source,
            old: None,
            new: None,
        }
    }

    fn get(&mut self, old: bool, version: &str) -> &std::result::Result<SourceTree, String> {
        let source = if old { self.base_source } else { self.source };
        let slot = if old { &mut self.old } else { &mut self.new };
        slot.get_or_insert_with(|| {
            source
                .tree(version)
                .map_err(|e| format!("the source tree at {version} could not be read: {e}"))
        })
    }
}

/// Every patch's result of `inputs.upstream`: the working tree's patches in
/// vendor.toml order, then those only the base had.
pub(super) fn results(inputs: &Inputs<'_>, trees: &mut Trees<'_>) -> Result<Vec<Patch>> {
    let ours = |p: &&LoadedPatch| p.upstream.as_deref() == inputs.upstream;
    let read_base = |p: &crate::config::Patch| Ok(inputs.base_bytes.get(&p.name).cloned());
    let base_vendor = Patches::load_with(inputs.base_config, AppliesTo::Vendor, read_base)?;
    let base_source = Patches::load_with(inputs.base_config, AppliesTo::Source, read_base)?;
    let work_vendor = Patches::load(inputs.config)?;
    let work_source = Patches::load_kind(inputs.config, AppliesTo::Source)?;
    // Without an old version nothing is carried: the base's package is
    // then only asked for its patches.
    let from = inputs.from.unwrap_or(inputs.to);
    let base_vendor = Package::new(inputs.base_config, None, at(inputs, from), base_vendor);
    let work_vendor = Package::new(inputs.config, None, at(inputs, inputs.to), work_vendor);
    let vendor_sections = vendor_sections(inputs, &base_vendor, &work_vendor);
    let (base_vendor, work_vendor) = (base_vendor.patches(), work_vendor.patches());

    let mut out = Vec::new();
    let mut seen = Vec::new();
    for (base, work, kind) in [
        (base_vendor, work_vendor, "vendor"),
        (&base_source, &work_source, "source"),
    ] {
        for w in work.loaded().iter().filter(ours) {
            let sides = match base.loaded().iter().find(|b| b.name == w.name) {
                Some(b) => Sides::Both(b, w),
                None => Sides::New(w),
            };
            seen.push(w.name.clone());
            out.push(result(inputs, kind, sides, &vendor_sections, trees));
        }
    }
    for (base, kind) in [(base_vendor, "vendor"), (&base_source, "source")] {
        for b in base
            .loaded()
            .iter()
            .filter(ours)
            .filter(|b| !seen.contains(&b.name))
        {
            out.push(result(
                inputs,
                kind,
                Sides::Removed(b),
                &vendor_sections,
                trees,
            ));
        }
    }
    out.sort_by_key(|r| {
        inputs
            .config
            .patches
            .iter()
            .position(|p| p.name == r.name)
            .unwrap_or(usize::MAX)
    });
    Ok(out)
}

/// `inputs.upstream` at `version`, to carry or apply its vendor patches
/// there: no rewrite or pin is asked of the packages built with it.
fn at(inputs: &Inputs<'_>, version: &str) -> Stamp {
    let values = Placeholders {
        version: version.to_owned(),
        ..Placeholders::default()
    };
    Stamp::new(
        vec![(inputs.upstream.map(str::to_owned), values)],
        Vec::new(),
    )
}

/// Where a patch is: in the base commit and the working tree, only in the
/// working tree, or only in the base commit.
#[derive(Clone, Copy)]
enum Sides<'p> {
    Both(&'p LoadedPatch, &'p LoadedPatch),
    New(&'p LoadedPatch),
    Removed(&'p LoadedPatch),
}

fn result(
    inputs: &Inputs<'_>,
    kind: &str,
    sides: Sides<'_>,
    vendor_sections: &BTreeMap<String, Vec<Section>>,
    trees: &mut Trees<'_>,
) -> Patch {
    // The base's patch is what was carried to the new upstream; a new one
    // only has its own.
    let (shown, carried) = match sides {
        Sides::Both(b, w) => (w, b),
        Sides::New(w) => (w, w),
        Sides::Removed(b) => (b, b),
    };
    let mut sections = match kind {
        "vendor" => vendor_sections
            .get(&shown.name)
            .cloned()
            .unwrap_or_default(),
        _ => source_sections(inputs, carried, trees),
    };
    let (adopted, dropped) = match sides {
        Sides::Both(b, w) => compare(b, w),
        Sides::New(_) => (Vec::new(), Vec::new()),
        Sides::Removed(b) => (Vec::new(), changes(b)),
    };
    if let Sides::Removed(_) = sides {
        sections.push(Section {
            target: shown.file.clone(),
            result: "removed".into(),
            moved: Vec::new(),
            note: Some("no longer in vendor.toml".into()),
        });
    }
    Patch {
        name: shown.name.clone(),
        file: shown.file.clone(),
        applies_to: kind.to_owned(),
        sections,
        adopted,
        dropped,
        new: matches!(sides, Sides::New(_)),
    }
}

/// The vendor patches' sections by patch name: the base's carried from the
/// old copy to the new, a patch new in this change applied to the new copy.
fn vendor_sections(
    inputs: &Inputs<'_>,
    base: &Package<'_>,
    work: &Package<'_>,
) -> BTreeMap<String, Vec<Section>> {
    let mut out: BTreeMap<String, Vec<Section>> = BTreeMap::new();
    for copy in inputs
        .copies
        .iter()
        .filter(|c| c.vendor.upstream.as_deref() == inputs.upstream)
    {
        for (name, sections) in copy_sections(inputs, copy, base, work) {
            out.entry(name).or_default().extend(sections);
        }
    }
    out
}

/// The sections of one vendored file `copy`, by patch name.
fn copy_sections(
    inputs: &Inputs<'_>,
    copy: &Copy,
    base: &Package<'_>,
    work: &Package<'_>,
) -> BTreeMap<String, Vec<Section>> {
    let vendor = &copy.vendor;
    let mut found: BTreeMap<String, Vec<Section>> = BTreeMap::new();
    let section = |result: &str, moved, note: Option<String>| Section {
        target: vendor.from.clone(),
        result: result.to_owned(),
        moved,
        note,
    };
    let why_not = match (&copy.old, &copy.new, inputs.from) {
        (_, Err(why), _) | (Err(why), _, _) => Some(why.clone()),
        (_, _, None) => Some("the base commit has no such package".to_owned()),
        _ => None,
    };
    if let (Ok(old), Ok(new), Some(_)) = (&copy.old, &copy.new, inputs.from) {
        let walk = base.carry(vendor, old.into(), new.into(), inputs.to);
        for step in &walk.steps {
            let name = base.patch_name(step.id);
            found.entry(name.to_owned()).or_default().push(section(
                step.outcome.kind(),
                moved(&step.outcome),
                None,
            ));
        }
        if let Err(e) = &walk.output {
            found.entry(e.patch.clone()).or_default().push(section(
                "not-recomputed",
                Vec::new(),
                Some(format!(
                    "the base's patch does not apply to the base's copy: {}",
                    e.error
                )),
            ));
        }
    }
    for name in targets(base.patches(), vendor) {
        found.entry(name).or_insert_with(|| {
            vec![section(
                "not-recomputed",
                Vec::new(),
                Some(
                    why_not
                        .clone()
                        .unwrap_or_else(|| "a patch before it does not apply".into()),
                ),
            )]
        });
    }
    let new_names: Vec<String> = targets(work.patches(), vendor)
        .into_iter()
        .filter(|n| !base.patches().loaded().iter().any(|b| b.name == *n))
        .collect();
    if !new_names.is_empty() {
        new_sections(copy, work, &new_names, &mut found);
    }
    found
}

/// The names of the patches in `set` that target `vendor`.
fn targets(set: &Patches, vendor: &Vendor) -> Vec<String> {
    set.loaded()
        .iter()
        .filter(|p| p.upstream == vendor.upstream)
        .filter(|p| {
            p.set.files.iter().any(|fp| {
                fp.target_path(p.strip)
                    .is_some_and(|t| t == vendor.from || t == vendor.to)
            })
        })
        .map(|p| p.name.clone())
        .collect()
}

/// The sections of the patches `new_names`, new in this change, applied
/// to `copy`'s new pristine copy, added to `found`.
fn new_sections(
    copy: &Copy,
    work: &Package<'_>,
    new_names: &[String],
    found: &mut BTreeMap<String, Vec<Section>>,
) {
    let section = |result: &str, moved, note: Option<String>| Section {
        target: copy.vendor.from.clone(),
        result: result.to_owned(),
        moved,
        note,
    };
    let new = match &copy.new {
        Ok(new) => new,
        Err(why) => {
            for name in new_names {
                found.entry(name.clone()).or_default().push(section(
                    "not-recomputed",
                    Vec::new(),
                    Some(why.clone()),
                ));
            }
            return;
        }
    };
    let walk = work.apply(&copy.vendor, new);
    for step in &walk.steps {
        let name = work.patch_name(step.id).to_owned();
        if new_names.contains(&name) {
            found.entry(name).or_default().push(section(
                step.outcome.kind(),
                moved(&step.outcome),
                None,
            ));
        }
    }
    if let Err(e) = &walk.output
        && new_names.contains(&e.patch)
    {
        found.entry(e.patch.clone()).or_default().push(section(
            "conflict",
            Vec::new(),
            Some(e.error.to_string()),
        ));
    }
}

/// A source patch's sections: each file it patches, in the new source tree.
fn source_sections(inputs: &Inputs<'_>, p: &LoadedPatch, trees: &mut Trees<'_>) -> Vec<Section> {
    let mut out = Vec::new();
    for fp in &p.set.files {
        let target = fp.target_path(p.strip).unwrap_or_default();
        let section = |result: &str, moved, note: Option<String>| Section {
            target: target.clone(),
            result: result.to_owned(),
            moved,
            note,
        };
        let new = match trees.get(false, inputs.to) {
            Ok(tree) => tree.files.get(&target).cloned(),
            Err(why) => {
                out.push(section("not-recomputed", Vec::new(), Some(why.clone())));
                continue;
            }
        };
        let Some(new) = new.or_else(|| fp.is_new().then(Vec::new)) else {
            out.push(section(
                "conflict",
                Vec::new(),
                Some(format!("`{target}` is not in the source at {}", inputs.to)),
            ));
            continue;
        };
        let outcome = match patch::apply(fp, &new) {
            Ok(applied) => Ok(Outcome::from(applied)),
            Err(strict) => rebase_source(inputs, fp, &target, &new, trees)
                .map_err(|(result, why)| (result, format!("{strict}; {why}"))),
        };
        out.push(match outcome {
            Ok(o) => section(o.kind(), moved(&o), None),
            Err((result, why)) => section(result, Vec::new(), Some(why)),
        });
    }
    out
}

/// The 3-way rebase of a source section from the old tree onto `new`, or
/// the section's result (`not-recomputed`, `conflict`) and why.
fn rebase_source(
    inputs: &Inputs<'_>,
    fp: &FilePatch,
    target: &str,
    new: &[u8],
    trees: &mut Trees<'_>,
) -> std::result::Result<Outcome, (&'static str, String)> {
    let Some(from) = inputs.from else {
        return Err((
            "not-recomputed",
            "the base commit has no such package to merge from".into(),
        ));
    };
    let old = match trees.get(true, from) {
        Ok(tree) => tree.files.get(target).cloned().unwrap_or_default(),
        Err(why) => return Err(("not-recomputed", why.clone())),
    };
    let ours = format!("patched {from}");
    let labels = Labels {
        ours: &ours,
        base: from,
        theirs: inputs.to,
    };
    patch::rebase(&old, fp, new, &labels).map_err(|e| ("conflict", e.to_string()))
}

/// The hunks an `offset` outcome moved, 1-based.
fn moved(outcome: &Outcome) -> Vec<HunkMove> {
    match outcome {
        Outcome::Offset { offsets, .. } => offsets
            .iter()
            .enumerate()
            .filter(|(_, o)| **o != 0)
            .map(|(i, o)| HunkMove {
                hunk: i + 1,
                offset: *o,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The changes only `work` makes (adopted) and only `base` made (dropped),
/// each matched at most once, so a change made twice counts twice.
fn compare(base: &LoadedPatch, work: &LoadedPatch) -> (Vec<HunkChange>, Vec<HunkChange>) {
    let mut unmatched = changes(base);
    let mut adopted = Vec::new();
    for change in changes(work) {
        match unmatched.iter().position(|b| same(b, &change)) {
            Some(i) => {
                unmatched.remove(i);
            }
            None => adopted.push(change),
        }
    }
    (adopted, unmatched)
}

fn same(a: &HunkChange, b: &HunkChange) -> bool {
    a.target == b.target && a.removed == b.removed && a.added == b.added
}

/// Every change of a patch: each maximal run of removed and added lines of
/// each hunk, in order.
fn changes(p: &LoadedPatch) -> Vec<HunkChange> {
    set_changes(&p.set, p.strip)
}

fn set_changes(set: &PatchSet, strip: usize) -> Vec<HunkChange> {
    let mut out = Vec::new();
    for fp in &set.files {
        let target = fp.target_path(strip).unwrap_or_default();
        for hunk in &fp.hunks {
            let mut current: Option<HunkChange> = None;
            for line in hunk.lines.iter().chain(std::iter::once(&CONTEXT)) {
                let text = || {
                    String::from_utf8_lossy(&line.text)
                        .trim_end_matches(['\n', '\r'])
                        .to_owned()
                };
                match line.kind {
                    LineKind::Context => out.extend(current.take()),
                    kind => {
                        let c = current.get_or_insert_with(|| HunkChange {
                            target: target.clone(),
                            header: hunk.header(),
                            removed: Vec::new(),
                            added: Vec::new(),
                        });
                        if kind == LineKind::Remove {
                            c.removed.push(text());
                        } else {
                            c.added.push(text());
                        }
                    }
                }
            }
        }
    }
    out
}

/// A context line that ends every hunk's walk, closing its last change.
static CONTEXT: patch::Line = patch::Line {
    kind: LineKind::Context,
    text: Vec::new(),
};

#[cfg(test)]
mod tests {
    use super::*;

    fn loaded(text: &str) -> LoadedPatch {
        LoadedPatch {
            name: "p".into(),
            file: "p.patch".into(),
            upstream: None,
            strip: 1,
            bytes: text.as_bytes().to_vec(),
            sha256: String::new(),
            set: patch::parse(text.as_bytes()).unwrap(),
        }
    }

    #[test]
    fn a_change_only_the_working_patch_makes_is_adopted_and_moves_are_not() {
        let base = loaded("--- a/t.yml\n+++ b/t.yml\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
        // The same change two lines further down, and one more.
        let work = loaded(
            "--- a/t.yml\n+++ b/t.yml\n@@ -3,3 +3,3 @@\n a\n-b\n+B\n c\n@@ -9,2 +9,3 @@\n x\n+y\n z\n",
        );
        let (adopted, dropped) = compare(&base, &work);
        assert!(dropped.is_empty());
        assert_eq!(adopted.len(), 1);
        assert_eq!(adopted[0].added, ["y"]);
        assert_eq!(adopted[0].header, "@@ -9,2 +9,3 @@");
        let (adopted, dropped) = compare(&work, &base);
        assert!(adopted.is_empty());
        assert_eq!(dropped[0].added, ["y"]);
    }

    #[test]
    fn changes_are_split_at_context_lines() {
        let p = loaded("--- a/t\n+++ b/t\n@@ -1,3 +1,3 @@\n-a\n+A\n b\n-c\n+C\n");
        let c = changes(&p);
        assert_eq!(c.len(), 2);
        assert_eq!(
            (c[0].removed.clone(), c[0].added.clone()),
            (vec!["a".into()], vec!["A".into()])
        );
        assert_eq!(c[1].target, "t");
    }
}
