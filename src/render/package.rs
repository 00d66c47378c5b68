//! [`Package`]: one package's render pipeline, the one place every command
//! goes through to turn a pristine copy into a rendered file.
//!
//! `render`, `update`, `check` and `pr` all need the same chain: the vendor
//! patches of a file ([`Patches::stack`]) walked over its pristine copy, then
//! finished ([`finish`]: rewrites and pins). They differ in the walk
//! ([`Stack`]'s doc lists the four) and in the versions they finish with,
//! nothing else, so they hold a `Package` and ask it rather than build a
//! stack of their own.
//!
//! 1. [`load_locked`] reads the vendor patches and lists the vendored files
//!    at the lock, checking that every patch targets one of them.
//! 2. [`Package::new`] ties them to vendor.toml, the lock (none while a
//!    package is adopted) and the [`Stamp`] of the locked versions and pins.
//! 3. [`Package::render`] (render), [`Package::expected`] (hand edits),
//!    [`Package::walk`] (check), [`Package::carry`] (update and its dry
//!    runs) and [`Package::fuzz`] (adoption) walk one file's stack;
//!    [`Package::deleted`] judges a file whose last section deletes it.
//!
//! The package never reads or writes a file: its callers hand it the bytes.

use std::borrow::Cow;

use super::{Landed, Patches, SectionError, SectionId, Stack, Stamp, Step, Walk, finish};
use crate::config::lock::Lock;
use crate::config::{Config, Vendor};
use crate::error::{Error, Result};
use crate::patch::Outcome;

/// vendor.toml's vendor patches, tied to the lock and to the versions and
/// pins its rendered files are made with.
#[derive(Debug, Clone)]
pub struct Package<'a> {
    config: &'a Config,
    lock: Option<&'a Lock>,
    stamp: Stamp,
    patches: Patches,
}

/// One file as the package expects it on disk ([`Package::expected`]).
#[derive(Debug, Clone)]
pub struct Expected {
    /// Each section's step, with the file it was given (for a caller that
    /// refreshes a section).
    pub steps: Vec<Step>,
    /// The pristine copy with every section applied.
    pub patched: Vec<u8>,
    /// `patched` finished: what the file on disk should be.
    pub output: Vec<u8>,
}

/// The vendor patches and the vendored files at the lock ([`super::files`]:
/// the lock lists each directory's files), every patch checked to target
/// one of them. A malformed patch is a configuration error.
pub fn load_locked(config: &Config, lock: &Lock) -> Result<(Patches, Vec<Vendor>)> {
    locked_files(config, lock, Patches::load(config)?)
}

/// [`load_locked`] for `render --adopt-edits`: a `[[patch]]` whose file does
/// not exist yet is loaded empty ([`Patches::load_starting`]).
pub fn load_locked_starting(config: &Config, lock: &Lock) -> Result<(Patches, Vec<Vendor>)> {
    locked_files(config, lock, Patches::load_starting(config)?)
}

fn locked_files(config: &Config, lock: &Lock, patches: Patches) -> Result<(Patches, Vec<Vendor>)> {
    let listing = lock
        .files
        .iter()
        .map(|f| (f.upstream.as_deref(), f.from.as_str()));
    let files = super::files(config, listing, &patches)?;
    patches.check_targets(config, &files)?;
    Ok((patches, files))
}

impl<'a> Package<'a> {
    /// The package of `config` whose rendered files were made with `stamp`;
    /// `lock` is `None` while a package is adopted.
    pub fn new(
        config: &'a Config,
        lock: Option<&'a Lock>,
        stamp: Stamp,
        patches: Patches,
    ) -> Package<'a> {
        Package {
            config,
            lock,
            stamp,
            patches,
        }
    }

    /// The same package with other patches (the lock's, a removed
    /// `[[patch]]` put back), to render a file as it was.
    pub fn with_patches(&self, patches: Patches) -> Package<'a> {
        Package {
            patches,
            stamp: self.stamp.clone(),
            ..*self
        }
    }

    /// vendor.toml.
    pub fn config(&self) -> &'a Config {
        self.config
    }

    /// The lock; `None` while the package is adopted.
    pub fn lock(&self) -> Option<&'a Lock> {
        self.lock
    }

    /// The versions and pins the rendered files are made with.
    pub fn stamp(&self) -> &Stamp {
        &self.stamp
    }

    /// The vendor patches.
    pub fn patches(&self) -> &Patches {
        &self.patches
    }

    /// The vendor patches, for a caller that refreshes a section (a carry,
    /// folded hand edits).
    pub fn patches_mut(&mut self) -> &mut Patches {
        &mut self.patches
    }

    /// The name of the patch holding section `id`.
    pub fn patch_name(&self, id: SectionId) -> &str {
        &self.patches.section(id).0.name
    }

    /// The version of `vendor`'s upstream the rendered files are made with.
    pub fn version(&self, vendor: &Vendor) -> &str {
        self.stamp.version(vendor.upstream.as_deref())
    }

    /// The sections targeting `vendor`, in the order they apply.
    pub fn sections(&self, vendor: &Vendor) -> Vec<SectionId> {
        self.stack(vendor).sections().to_vec()
    }

    /// Whether `vendor`'s last section deletes it (`+++ /dev/null`).
    pub fn deletes(&self, vendor: &Vendor) -> bool {
        self.stack(vendor).deletes()
    }

    /// `patched` finished as output `to` with the package's stamp: borrowed
    /// when nothing changes it, for a caller that only compares.
    pub fn finish<'b>(&self, to: &str, patched: &'b [u8]) -> Result<Cow<'b, [u8]>> {
        finish(self.config, to, patched, &self.stamp)
    }

    /// `patched` finished as output `to` with `stamp` (another release's).
    pub fn finish_with<'b>(
        &self,
        to: &str,
        patched: impl Into<Cow<'b, [u8]>>,
        stamp: &Stamp,
    ) -> Result<Vec<u8>> {
        finish(self.config, to, patched, stamp).map(Cow::into_owned)
    }

    /// `vendor` rendered from `pristine`: every section applied strictly,
    /// then finished. `each` is told how each section landed before its
    /// result is consumed: no section's file is kept or copied
    /// ([`Stack::land`]), which is what lets `render` take a 100,000-line
    /// file in one pass. A section that does not apply is the error.
    pub fn render(
        &self,
        vendor: &Vendor,
        pristine: &[u8],
        mut each: impl FnMut(SectionId, &Outcome),
    ) -> Result<Vec<u8>> {
        let landed = self.stack(vendor).land(pristine);
        for (id, outcome) in &landed.outcomes {
            each(*id, outcome);
        }
        let patched = landed.into_output(pristine)?;
        self.finish_with(&vendor.to, patched, &self.stamp)
    }

    /// `vendor` as it should be on disk, rendered from `pristine` with each
    /// step kept ([`Stack::apply`]).
    pub fn expected(&self, vendor: &Vendor, pristine: &[u8]) -> Result<Expected> {
        let walk = self.stack(vendor).apply(pristine);
        let patched = walk.output?;
        let output = self.finish(&vendor.to, &patched)?.into_owned();
        Ok(Expected {
            steps: walk.steps,
            patched,
            output,
        })
    }

    /// `vendor`'s sections applied strictly to `pristine`, each step kept,
    /// not finished ([`Stack::apply`]): for a caller that compares patched
    /// text, not rendered files.
    pub fn apply(&self, vendor: &Vendor, pristine: &[u8]) -> Walk {
        self.stack(vendor).apply(pristine)
    }

    /// `vendor`'s stack walked over `pristine` as `check` sees it: a section
    /// upstream already has is a step, not the end ([`Stack::walk`]).
    pub fn walk(&self, vendor: &Vendor, pristine: &[u8]) -> Landed {
        self.stack(vendor).walk(pristine)
    }

    /// `vendor`'s sections carried from `base`, its pristine copy at the
    /// package's version, to `theirs`, the file at release `target`
    /// ([`Stack::carry`]: a side given by value is not copied).
    pub fn carry(
        &self,
        vendor: &Vendor,
        base: Cow<'_, [u8]>,
        theirs: Cow<'_, [u8]>,
        target: &str,
    ) -> Walk {
        self.stack(vendor).carry(base, theirs, target)
    }

    /// `vendor`'s sections applied to `pristine` as GNU `patch -F2` would
    /// ([`Stack::fuzz`]): for adoption only.
    pub fn fuzz(
        &self,
        vendor: &Vendor,
        pristine: &[u8],
    ) -> std::result::Result<Vec<super::FuzzyStep>, Box<SectionError>> {
        self.stack(vendor).fuzz(pristine)
    }

    /// A vendored file whose last section deletes it (`+++ /dev/null`): the
    /// walk's steps, once `current` (the file on disk, if any) is known to be
    /// what that section deletes, so that no hand edit is lost.
    pub fn deleted(
        &self,
        vendor: &Vendor,
        pristine: &[u8],
        current: Option<&[u8]>,
    ) -> Result<Vec<Step>> {
        let walk = self.stack(vendor).apply(pristine);
        walk.output?;
        let last = walk.steps.last().expect("a deleting stack has a section");
        if let Some(current) = current
            && *self.finish(&vendor.to, &last.input)? != *current
        {
            let name = self.patch_name(last.id);
            return Err(Error::HandEdits(format!(
                "patch `{name}` deletes `{}`, but the file there is not the one it deletes: it has edits no patch carries; \
                 move them into a file of your own, or delete `{}` yourself",
                vendor.to, vendor.to
            )));
        }
        Ok(walk.steps)
    }

    fn stack<'s>(&'s self, vendor: &'s Vendor) -> Stack<'s> {
        self.patches.stack(vendor, self.version(vendor))
    }
}
