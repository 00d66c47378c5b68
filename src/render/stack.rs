//! [`Stack`]: the patch sections of one vendored file, walked in order over
//! its pristine copy, the one place that does so.
//!
//! Every command walks the same way: pristine → each section, on the output
//! of the ones before it → result. They differ only in what a section that
//! does not apply means:
//!
//! 1. [`Stack::apply`] (render, `patch refresh`, hand edits): nothing; the
//!    walk stops there with a [`SectionError`].
//! 2. [`Stack::walk`] (check): when the reverse applies, upstream already has
//!    the change; the step is [`Outcome::AlreadyUpstream`] and the walk goes
//!    on. Otherwise it stops as above. It keeps only how each section
//!    landed ([`Landed`]): `check` needs no section's input.
//! 3. [`Stack::carry`] (update, the `upstream-newer` dry run): each section
//!    is applied strictly to the locked side and rebased onto the new
//!    release, on the output of the sections before it on both sides.
//! 4. [`Stack::fuzz`] (adopting a package without a lock, nothing else):
//!    each section as `patch -F2` would apply it, for a caller that accepts
//!    the result only when it is the committed file.
//!
//! Each step of the others keeps the file it was given, so a caller can refresh the section
//! ([`Patches::refresh_section`]) or rebase it without walking again.

use std::borrow::Cow;

use crate::config::Vendor;
use crate::error::Error;
use crate::patch::{self, ApplyError, Labels, Landing, Outcome};

use super::{Patches, SectionId};

/// One vendored file's patch sections, in vendor.toml order, over its
/// pristine copy at the locked version. Made by [`Patches::stack`].
#[derive(Debug, Clone)]
pub struct Stack<'a> {
    patches: &'a Patches,
    vendor: &'a Vendor,
    version: &'a str,
    ids: Vec<SectionId>,
}

/// One section of a [`Walk`].
#[derive(Debug, Clone)]
pub struct Step {
    /// The section.
    pub id: SectionId,
    /// The file it was applied to: the output of the steps before it (for
    /// [`Stack::carry`], on the new release's side).
    pub input: Vec<u8>,
    /// How it landed; its content is the next step's input.
    pub outcome: Outcome,
}

/// A [`Stack`] walked over one file.
#[derive(Debug, Clone)]
pub struct Walk {
    /// One step per section that landed, in order.
    pub steps: Vec<Step>,
    /// The file after the last step, or the section that stopped the walk.
    pub output: Result<Vec<u8>, SectionError>,
}

/// A [`Stack`] applied by [`Stack::land`]: how each section landed, without
/// the file each was given.
#[derive(Debug, Clone)]
pub struct Landed {
    /// The sections that landed, in order, with their outcomes; each one's
    /// content is the next one's input.
    pub outcomes: Vec<(SectionId, Outcome)>,
    /// The section that stopped the walk, if one did.
    pub stopped: Option<SectionError>,
}

impl Landed {
    /// The file after the last section (`pristine` when none targets it), or
    /// the section that stopped the walk: [`Landed::into_output`] without a
    /// copy, for a caller that keeps the walk (`check`).
    pub fn output<'s>(&'s self, pristine: &'s [u8]) -> Result<&'s [u8], &'s SectionError> {
        match (&self.stopped, self.outcomes.last()) {
            (Some(error), _) => Err(error),
            (None, Some((_, outcome))) => Ok(outcome.content()),
            (None, None) => Ok(pristine),
        }
    }

    /// The file after the last section (`pristine` when none targets it), or
    /// the section that stopped the walk, as the conflict it is for a command
    /// that needs every section to apply.
    pub fn into_output(self, pristine: &[u8]) -> Result<Vec<u8>, Error> {
        if let Some(error) = self.stopped {
            return Err(error.into());
        }
        Ok(match self.outcomes.into_iter().next_back() {
            Some((_, outcome)) => outcome.into_content(),
            None => pristine.to_vec(),
        })
    }
}

/// One section of [`Stack::fuzz`].
#[derive(Debug, Clone)]
pub struct FuzzyStep {
    /// The section.
    pub id: SectionId,
    /// The file it was applied to: the output of the steps before it.
    pub input: Vec<u8>,
    /// The file after it.
    pub output: Vec<u8>,
    /// Where each of its hunks landed, and with what fuzz.
    pub landings: Vec<Landing>,
    /// Whether the strict apply lands it too.
    pub strict: bool,
}

/// A patch section that does not apply to the pristine copy at the locked
/// version: the one error every walk stops with.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "patch `{patch}` ({file}:{line}) does not apply to `{target}` at the locked version {version}: {error}"
)]
pub struct SectionError {
    /// The section.
    pub id: SectionId,
    /// Its patch's name.
    pub patch: String,
    /// Its patch's file, relative to the package.
    pub file: String,
    /// The 1-based line of the failing hunk's `@@` in that file (1 when the
    /// error names no hunk): where the user looks.
    pub line: usize,
    /// The vendored file's upstream path.
    pub target: String,
    /// The locked version.
    pub version: String,
    /// Which hunk failed and where.
    pub error: ApplyError,
}

impl SectionError {
    /// The 0-based hunk that failed, or 0 when the error names none (a file
    /// that should be new or deleted): where a finding points in the patch.
    pub fn hunk(&self) -> usize {
        match &self.error {
            ApplyError::Mismatch { hunk, .. }
            | ApplyError::LineEnding { hunk, .. }
            | ApplyError::EndOfFile { hunk, .. }
            | ApplyError::Overlap { hunk, .. }
            | ApplyError::OutOfRange { hunk, .. } => hunk.saturating_sub(1),
            _ => 0,
        }
    }
}

/// A command that needs every section to apply stops with a conflict (exit 1).
impl From<SectionError> for Error {
    fn from(e: SectionError) -> Error {
        Error::PatchDoesNotApply {
            patch: e.patch,
            file: e.file,
            line: e.line,
            target: e.target,
            version: e.version,
            error: Box::new(e.error),
        }
    }
}

impl<'a> Stack<'a> {
    pub(super) fn new(
        patches: &'a Patches,
        vendor: &'a Vendor,
        version: &'a str,
        ids: Vec<SectionId>,
    ) -> Stack<'a> {
        Stack {
            patches,
            vendor,
            version,
            ids,
        }
    }

    /// The sections, in the order they are applied.
    pub fn sections(&self) -> &[SectionId] {
        &self.ids
    }

    /// Whether the last section deletes the file (`+++ /dev/null`): its
    /// output is then not written, and a file there is a stray.
    pub fn deletes(&self) -> bool {
        self.ids
            .last()
            .is_some_and(|&id| self.patches.section(id).1.is_delete())
    }

    /// Applies every section strictly to `pristine`; the first that does not
    /// apply stops the walk, even when upstream already has its change.
    pub fn apply(&self, pristine: &[u8]) -> Walk {
        self.run(pristine, false)
    }

    /// Like [`Stack::land`], but a section that only reverse-applies is an
    /// [`Outcome::AlreadyUpstream`] step and the walk goes on past it. No
    /// section's input is kept and the output is not copied: `check` keeps
    /// the walk beside the pristine copy, and each copy of a 1M-line file
    /// was 50 MB at its peak (issue 23).
    pub fn walk(&self, pristine: &[u8]) -> Landed {
        self.land_on(pristine, true)
    }

    /// Carries every section from `base`, the pristine copy at the locked
    /// version, to `theirs`, the file at release `target`
    /// ([`patch::rebase`]). Steps are on the `theirs` side; a conflict's
    /// marked file is the next step's input, so every section is reported.
    /// `output` is the carried file, or the section that does not apply to
    /// `base`.
    ///
    /// Each side is only read until a section's result replaces it: a
    /// `base` given by value goes once the first section is rebased, and a
    /// `theirs` given by value is the first step's input, not a copy of it.
    /// The last patched base goes before the result is copied, so the walk
    /// holds at most four copies of the file, the merge's own included
    /// (issue 23).
    pub fn carry(&self, base: Cow<'_, [u8]>, theirs: Cow<'_, [u8]>, target: &str) -> Walk {
        let ours_label = format!("patched {}", self.version);
        let labels = Labels {
            ours: &ours_label,
            base: self.version,
            theirs: target,
        };
        let mut b = base;
        let mut t = theirs;
        let mut steps = Vec::new();
        for &id in &self.ids {
            let (_, fp) = self.patches.section(id);
            let ours = match patch::apply(fp, &b) {
                Ok(applied) => applied.content,
                Err(error) => {
                    return Walk {
                        steps,
                        output: Err(self.error(id, error)),
                    };
                }
            };
            let outcome = patch::rebase_applied(&b, &ours, fp, &t, &labels);
            b = Cow::Owned(ours);
            if steps.len() + 1 == self.ids.len() {
                // Assigned, not bound: the last patched base goes now.
                b = Cow::Borrowed(&[]);
            }
            let next = Cow::Owned(outcome.content().to_vec());
            steps.push(Step {
                id,
                input: std::mem::replace(&mut t, next).into_owned(),
                outcome,
            });
        }
        Walk {
            steps,
            output: Ok(t.into_owned()),
        }
    }

    /// Applies every section to `pristine` as GNU `patch -F2` would
    /// ([`patch::apply_fuzzy`]); the first that finds no place even so stops
    /// the walk. For adoption only: see the module doc.
    pub fn fuzz(&self, pristine: &[u8]) -> Result<Vec<FuzzyStep>, Box<SectionError>> {
        let mut text = pristine.to_vec();
        let mut steps = Vec::new();
        for &id in &self.ids {
            let (_, fp) = self.patches.section(id);
            let fuzzed =
                patch::apply_fuzzy(fp, &text, 2).map_err(|e| Box::new(self.error(id, e)))?;
            let strict = patch::apply(fp, &text).is_ok();
            steps.push(FuzzyStep {
                id,
                input: std::mem::replace(&mut text, fuzzed.content.clone()),
                output: fuzzed.content,
                landings: fuzzed.landings,
                strict,
            });
        }
        Ok(steps)
    }

    /// [`Stack::apply`] without keeping the file each section was given:
    /// each section reads the one before it in place, and the result is the
    /// last one's content ([`Landed::into_output`]), so nothing is copied but
    /// what the patches write (`render` of a large file).
    pub fn land(&self, pristine: &[u8]) -> Landed {
        self.land_on(pristine, false)
    }

    fn land_on(&self, pristine: &[u8], upstreamed_goes_on: bool) -> Landed {
        let mut outcomes: Vec<(SectionId, Outcome)> = Vec::new();
        for &id in &self.ids {
            let (_, fp) = self.patches.section(id);
            let text = outcomes.last().map_or(pristine, |(_, o)| o.content());
            let outcome = match patch::apply(fp, text) {
                Ok(applied) => Outcome::from(applied),
                Err(_) if upstreamed_goes_on && patch::apply_reverse(fp, text).is_ok() => {
                    Outcome::AlreadyUpstream {
                        content: text.to_vec(),
                    }
                }
                Err(error) => {
                    return Landed {
                        outcomes,
                        stopped: Some(self.error(id, error)),
                    };
                }
            };
            outcomes.push((id, outcome));
        }
        Landed {
            outcomes,
            stopped: None,
        }
    }

    fn run(&self, pristine: &[u8], upstreamed_goes_on: bool) -> Walk {
        let landed = self.land_on(pristine, upstreamed_goes_on);
        let mut steps: Vec<Step> = Vec::with_capacity(landed.outcomes.len());
        let last = |steps: &[Step]| {
            steps
                .last()
                .map_or(pristine, |s| s.outcome.content())
                .to_vec()
        };
        for (id, outcome) in landed.outcomes {
            let input = last(&steps);
            steps.push(Step { id, input, outcome });
        }
        let output = match landed.stopped {
            Some(error) => Err(error),
            None => Ok(last(&steps)),
        };
        Walk { steps, output }
    }

    fn error(&self, id: SectionId, error: ApplyError) -> SectionError {
        let (p, _) = self.patches.section(id);
        let mut e = SectionError {
            id,
            patch: p.name.clone(),
            file: p.file.clone(),
            line: 1,
            target: self.vendor.from.clone(),
            version: self.version.to_owned(),
            error,
        };
        e.line = self.patches.hunk_line(id, e.hunk());
        e
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::Config;

    /// Changes `c` to `C` (hunk 1) and adds `g` after `f` (hunk 2).
    const FIRST: &str =
        "--- a/a.yml\n+++ b/a.yml\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n@@ -6,2 +6,3 @@\n f\n+g\n h\n";
    /// Changes `C` (the first patch's line) to `CC`.
    const SECOND: &str = "--- a/t/a.yml\n+++ b/t/a.yml\n@@ -2,3 +2,3 @@\n b\n-C\n+CC\n d\n";
    /// Targets another file: never part of `a.yml`'s stack.
    const OTHER: &str = "--- a/b.yml\n+++ b/b.yml\n@@ -1 +1 @@\n-x\n+y\n";

    const PRISTINE: &[u8] = b"a\nb\nc\nd\ne\nf\nh\n";

    fn vendor() -> Vendor {
        let config = Config::parse(
            Path::new("."),
            Path::new("vendor.toml"),
            "[upstream]\ngithub = \"o/r\"\nversion = \"v1\"\n[[vendor]]\nfrom = \"a.yml\"\nto = \"t/a.yml\"\n",
        )
        .unwrap();
        config.vendor[0].clone()
    }

    fn names(patches: &Patches, walk: &Walk) -> Vec<String> {
        walk.steps
            .iter()
            .map(|s| format!("{} {}", patches.section(s.id).0.name, s.outcome))
            .collect()
    }

    fn landed_names(patches: &Patches, landed: &Landed) -> Vec<String> {
        landed
            .outcomes
            .iter()
            .map(|(id, outcome)| format!("{} {outcome}", patches.section(*id).0.name))
            .collect()
    }

    #[test]
    fn sections_are_walked_in_order_each_on_the_output_before_it() {
        let p = Patches::parsed(&[("first", FIRST), ("other", OTHER), ("second", SECOND)]);
        let v = vendor();
        let walk = p.stack(&v, "v1").apply(PRISTINE);
        assert_eq!(names(&p, &walk), ["first exact", "second exact"]);
        assert_eq!(walk.steps[0].input, PRISTINE);
        assert_eq!(walk.steps[1].input, b"a\nb\nC\nd\ne\nf\ng\nh\n");
        assert_eq!(walk.output.unwrap(), b"a\nb\nCC\nd\ne\nf\ng\nh\n");
    }

    #[test]
    fn outcomes_name_how_each_section_landed() {
        let p = Patches::parsed(&[("first", FIRST)]);
        let v = vendor();
        let stack = p.stack(&v, "v1");

        let moved = stack.walk(b"x\na\nb\nc\nd\ne\nf\nh\n");
        assert_eq!(
            landed_names(&p, &moved),
            ["first offset (hunk 1 +1, hunk 2 +1)"]
        );

        let upstream = b"a\nb\nC\nd\ne\nf\ng\nh\n";
        let walk = stack.walk(upstream);
        assert_eq!(landed_names(&p, &walk), ["first already upstream"]);
        assert_eq!(walk.output(b"unused").unwrap(), upstream);
        // A strict apply does not step over it.
        let strict = stack.apply(upstream);
        assert!(strict.steps.is_empty());
        assert!(strict.output.is_err());
    }

    #[test]
    fn a_failing_section_stops_the_walk_with_one_error() {
        let p = Patches::parsed(&[("first", FIRST), ("second", SECOND)]);
        let v = vendor();
        let walk = p.stack(&v, "v1").walk(PRISTINE);
        assert_eq!(walk.outcomes.len(), 2);
        assert_eq!(walk.output(PRISTINE).unwrap(), b"a\nb\nCC\nd\ne\nf\ng\nh\n");
        // A stack of no section leaves the pristine copy as it is.
        let none = Patches::parsed(&[("other", OTHER)]);
        let unpatched = none.stack(&v, "v1").walk(PRISTINE);
        assert_eq!(unpatched.output(PRISTINE).unwrap(), PRISTINE);

        let walk = p.stack(&v, "v1").walk(b"a\nb\nX\nd\ne\nf\nh\n");
        assert!(walk.outcomes.is_empty());
        let e = walk.output(PRISTINE).unwrap_err();
        assert_eq!(e.id, p.stack(&v, "v1").ids[0]);
        assert_eq!(e.hunk(), 0);
        assert_eq!(
            e.to_string(),
            "patch `first` (first.patch:3) does not apply to `a.yml` at the locked version v1: \
             hunk #1 `@@ -2,3 +2,3 @@` does not apply: line 3 is \"X\", expected \"c\""
        );
    }

    #[test]
    fn fuzz_walks_each_section_on_the_output_before_it() {
        let p = Patches::parsed(&[("first", FIRST), ("second", SECOND)]);
        let v = vendor();
        // `b` above the first hunk changed: strict fails, fuzz 1 lands it.
        let drifted = b"a\nB\nc\nd\ne\nf\nh\n";
        assert!(p.stack(&v, "v1").apply(drifted).output.is_err());
        let steps = p.stack(&v, "v1").fuzz(drifted).unwrap();
        let fuzz: Vec<Vec<usize>> = steps
            .iter()
            .map(|s| s.landings.iter().map(|l| l.fuzz).collect())
            .collect();
        assert_eq!(fuzz, [vec![1, 0], vec![1]]);
        assert!(!steps[0].strict);
        assert_eq!(steps[1].input, steps[0].output);
        assert_eq!(steps[1].output, b"a\nB\nCC\nd\ne\nf\ng\nh\n");
        let e = p.stack(&v, "v1").fuzz(b"x\ny\n").unwrap_err();
        assert_eq!(e.patch, "first");
    }

    #[test]
    fn carry_rebases_each_section_onto_the_new_release() {
        let p = Patches::parsed(&[("first", FIRST), ("second", SECOND)]);
        let v = vendor();
        let stack = p.stack(&v, "v1");

        let moved = b"0\na\nb\nc\nd\ne\nf\nh\n";
        let walk = stack.carry(PRISTINE[..].into(), moved[..].into(), "v2");
        assert_eq!(
            names(&p, &walk),
            [
                "first offset (hunk 1 +1, hunk 2 +1)",
                "second offset (hunk 1 +1)"
            ]
        );
        assert_eq!(walk.steps[0].input, moved);
        assert_eq!(walk.steps[1].input, walk.steps[0].outcome.content());
        assert_eq!(walk.output.unwrap(), walk.steps[1].outcome.content());
        assert_eq!(
            walk.steps[1].outcome.content(),
            b"0\na\nb\nCC\nd\ne\nf\ng\nh\n"
        );

        let changed = b"a\nb\ncc\nd\ne\nf\nh\n";
        let walk = stack.carry(PRISTINE[..].into(), changed[..].into(), "v2");
        let Outcome::Conflict { marked, .. } = &walk.steps[0].outcome else {
            panic!("{:?}", names(&p, &walk));
        };
        assert!(
            String::from_utf8_lossy(marked).contains(">>>>>>> theirs (v2)"),
            "the labels name both versions"
        );
        assert_eq!(walk.steps.len(), 2, "a conflict does not stop the carry");

        let walk = stack.carry(b"a\nb\nX\n"[..].into(), moved[..].into(), "v2");
        assert!(
            walk.output.is_err(),
            "a section must apply to the locked side"
        );
    }

    #[test]
    fn carry_keeps_a_new_release_given_by_value_as_the_first_input() {
        let p = Patches::parsed(&[("first", FIRST), ("second", SECOND)]);
        let v = vendor();
        let stack = p.stack(&v, "v1");
        let theirs = b"0\na\nb\nc\nd\ne\nf\nh\n".to_vec();
        let at = theirs.as_ptr();
        let walk = stack.carry(PRISTINE.to_vec().into(), theirs.into(), "v2");
        assert_eq!(walk.steps[0].input.as_ptr(), at, "moved in, not copied");
        assert_eq!(walk.output.unwrap(), walk.steps[1].outcome.content());
    }
}
