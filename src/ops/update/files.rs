//! The vendored files an update moves: a directory `[[vendor]]` holds other
//! files at the target than at the locked version.
//!
//! 1. [`Plan::new`] lists each vendored directory at the target
//!    ([`Source::list`]: files and their git blob ids). At the locked version
//!    the lock's `[[file]]` entries list it; a directory the lock has nothing
//!    of (adopting the package, or a `[[vendor]]` new in vendor.toml) is
//!    listed upstream at the locked version too, and adopting it compares the
//!    whole directory with what is committed ([`Plan::strays`]).
//! 2. Each file is then in both (carried as a single file always was), only
//!    at the target (upstream added it: [`added`]), or only at the locked
//!    version (upstream removed it: [`removed`]). A file a vendor patch
//!    creates is in both, with empty pristine copies.
//! 3. A file's bytes at the target come from the cache by blob id when an
//!    earlier release had the same file, else they are downloaded as a raw
//!    file and checked against that id ([`Plan::fetch`]).
//!
//! What upstream removed goes: its rendered file and its pristine copy, unless
//! a patch changes it or the rendered file has edits no patch carries, which
//! stop the update. What upstream added arrives, unless the package already
//! has another file at that path. A file that upstream removed and another it
//! added with the same bytes is reported as renamed.

use std::collections::BTreeMap;

use super::edits;
use super::locked::Locked;
use super::summary::{Renamed, UpdateReport};
use crate::config::lock::Lock;
use crate::config::{Config, Vendor};
use crate::error::{Error, Result};
use crate::image::Digest;
use crate::paths;
use crate::render::{self, Patches};
use crate::upstream::{self, Listed, Source};
use crate::workspace::Context;

/// The vendored files at the locked version and at the target.
#[derive(Debug)]
pub(super) struct Plan {
    /// The vendored files at the locked version ([`render::files`]).
    pub base: Vec<Vendor>,
    /// The vendored files at the target.
    pub target: Vec<Vendor>,
    /// Upstream's listing at the target, by path.
    listed: BTreeMap<String, Listed>,
    /// Upstream's listing at the locked version, for the directories the
    /// lock has nothing of, by path.
    base_listed: BTreeMap<String, Listed>,
    /// The `to` of each directory whose locked listing came from upstream.
    adopting: Vec<String>,
}

/// The versions an update moves between, and where each is read.
#[derive(Clone, Copy)]
pub(super) struct Between<'a> {
    /// The locked version (vendor.toml's when there is no lock).
    pub base_version: &'a str,
    /// The release the update moves to.
    pub target: &'a str,
    /// Where the locked version is read (the old repository when
    /// vendor.toml moved to another one).
    pub base_source: &'a dyn Source,
    /// Where the target is read.
    pub source: &'a dyn Source,
    /// The target is the locked release of the same repository.
    pub same_release: bool,
}

impl Plan {
    /// Lists every vendored directory (see the module docs).
    pub fn new(
        ctx: &Context,
        config: &Config,
        lock: Option<&Lock>,
        patches: &Patches,
        at: Between<'_>,
    ) -> Result<Plan> {
        let mut listed = BTreeMap::new();
        let mut base_listed = BTreeMap::new();
        let mut adopting = Vec::new();
        let mut base_paths: Vec<String> = lock
            .map(|l| l.files.iter().map(|f| f.from.clone()).collect())
            .unwrap_or_default();
        let mut lists: BTreeMap<&str, Vec<Listed>> = BTreeMap::new();
        for dir in config.vendor.iter().filter(|v| v.is_dir()) {
            let shown = if dir.from.is_empty() { "./" } else { &dir.from };
            if !lists.contains_key(dir.from.as_str()) {
                ctx.shell
                    .status("Listing", format!("{shown} at {}", at.target));
                let found = at.source.list(at.target, &dir.from, &ctx.cache)?;
                lists.insert(&dir.from, found);
            }
            let at_target = &lists[dir.from.as_str()];
            let locked =
                lock.is_some_and(|l| l.files.iter().any(|f| dir.selects_from(&f.from).is_some()));
            if !locked {
                let at_base = if at.same_release {
                    at_target.clone()
                } else {
                    ctx.shell
                        .status("Listing", format!("{shown} at {}", at.base_version));
                    at.base_source
                        .list(at.base_version, &dir.from, &ctx.cache)?
                };
                for l in at_base {
                    base_paths.push(l.path.clone());
                    base_listed.insert(l.path.clone(), l);
                }
                adopting.push(dir.to.clone());
            }
            for l in at_target {
                listed.insert(l.path.clone(), l.clone());
            }
        }
        let base = render::files(config, base_paths.iter().map(String::as_str), patches)?;
        let target = render::files(config, listed.keys().map(String::as_str), patches)?;
        Ok(Plan {
            base,
            target,
            listed,
            base_listed,
            adopting,
        })
    }

    /// Every vendored file of either version as `(at the locked version, at
    /// the target)`: the target's files in order, then the ones upstream
    /// removed. The two differ for a file a patch created that upstream now
    /// has.
    pub fn files(&self) -> Vec<(Option<&Vendor>, Option<&Vendor>)> {
        let base: BTreeMap<&str, &Vendor> = self.base.iter().map(|b| (b.to.as_str(), b)).collect();
        let target: BTreeMap<&str, &Vendor> =
            self.target.iter().map(|t| (t.to.as_str(), t)).collect();
        let mut out: Vec<(Option<&Vendor>, Option<&Vendor>)> = self
            .target
            .iter()
            .map(|v| (base.get(v.to.as_str()).copied(), Some(v)))
            .collect();
        out.extend(
            self.base
                .iter()
                .filter(|v| !target.contains_key(v.to.as_str()))
                .map(|v| (Some(v), None)),
        );
        out
    }

    /// Upstream's listing of `from` at the locked version, when it was
    /// listed there.
    pub fn base_listed(&self, from: &str) -> Option<&Listed> {
        self.base_listed.get(from)
    }

    /// `vendor`'s bytes at the target: empty for a file a patch creates,
    /// by blob id for a file of a listed directory, else the file at the tag.
    pub fn fetch(
        &self,
        ctx: &Context,
        source: &dyn Source,
        vendor: &Vendor,
        target: &str,
    ) -> Result<Vec<u8>> {
        if vendor.created {
            return Ok(Vec::new());
        }
        match self.listed.get(&vendor.from) {
            Some(listed) => {
                ctx.shell
                    .step("Fetching", format!("{} at {target}", vendor.from));
                upstream::fetch_listed(source, &ctx.cache, target, listed)
            }
            None => {
                ctx.shell
                    .status("Fetching", format!("{} at {target}", vendor.from));
                upstream::fetch_file(source, &ctx.cache, target, &vendor.from, None)
            }
        }
    }

    /// Adopting a directory compares all of it with what is committed: a
    /// file it selects that upstream does not have at `version` and no patch
    /// creates stops the update, for it would be neither rendered nor
    /// deleted, only reported by every `check` after. A file the lock
    /// records as rendered is not a stray: it is carried, or removed with
    /// its `[[vendor]]`.
    pub fn strays(
        &self,
        ctx: &Context,
        config: &Config,
        lock: Option<&Lock>,
        version: &str,
    ) -> Result<()> {
        let mut strays = Vec::new();
        for dir in config
            .vendor
            .iter()
            .filter(|v| self.adopting.contains(&v.to))
        {
            for path in paths::list(&ctx.root, &dir.to)? {
                let known = self.base.iter().any(|b| b.to == path)
                    || lock.is_some_and(|l| l.output(&path).is_some());
                if dir.selects_to(&path).is_some() && !known {
                    strays.push(format!("`{path}`"));
                }
            }
        }
        if strays.is_empty() {
            return Ok(());
        }
        let (verb, them) = if strays.len() == 1 {
            ("is", "it")
        } else {
            ("are", "them")
        };
        Err(Error::Conflict(format!(
            "{} {verb} in a vendored directory, but upstream {version} does not have {them} and no patch creates {them}; \
             nothing was written: delete {them}, carry each in a patch that creates it (`--- /dev/null`), \
             or leave {them} out of the directory with `exclude`",
            strays.join(", ")
        )))
    }
}

/// A file upstream removed at `target`: it goes, unless a patch changes it
/// or `on_disk` (the rendered file, as the hand-edit check sees it) is not
/// the render of `base` (its pristine copy at the locked version).
pub(super) fn removed(
    locked: &Locked<'_>,
    patches: &Patches,
    vendor: &Vendor,
    base: &[u8],
    on_disk: Option<&[u8]>,
    target: &str,
) -> Result<()> {
    let stack = patches.stack(vendor, locked.version);
    if let Some(&id) = stack.sections().first() {
        let (p, _) = patches.section(id);
        return Err(Error::Conflict(format!(
            "upstream {target} no longer has `{}`, which patch `{}` ({}) changes; nothing was written: \
             take the section for `{}` out of the patch (or its [[patch]] out of vendor.toml), then update again",
            vendor.from, p.name, p.file, vendor.to
        )));
    }
    let Some(current) = on_disk else {
        return Ok(());
    };
    let expected = locked.finish(&vendor.to, base, locked.version)?;
    if expected == current {
        return Ok(());
    }
    let found = edits::edited_lines(&vendor.to, &expected, current);
    Err(Error::Conflict(format!(
        "upstream {target} no longer has `{}`, and `{}` has edits no patch carries: {}; nothing was written: \
         move them out of the vendored directory, or revert them, then update again",
        vendor.from,
        vendor.to,
        edits::list(&found)
    )))
}

/// A file upstream added at `target`, rendered as `rendered`: the package
/// may not already hold another file there.
pub(super) fn added(
    vendor: &Vendor,
    rendered: &[u8],
    on_disk: Option<&[u8]>,
    target: &str,
) -> Result<()> {
    match on_disk {
        Some(current) if current != rendered => Err(Error::Conflict(format!(
            "upstream {target} adds `{}`, but the package already has another file at `{}`; nothing was written: \
             move it out of the way, then update again",
            vendor.from, vendor.to
        ))),
        _ => Ok(()),
    }
}

/// Records in `report` the files that upstream added and removed (by their
/// rendered paths), a removed and an added file with the same bytes as a
/// rename. `added` and `removed` are `(to, sha256 of the pristine copy)`.
pub(super) fn report(
    report: &mut UpdateReport,
    added: Vec<(String, String)>,
    removed: Vec<(String, String)>,
) {
    let mut added = added;
    for (to, sha) in removed {
        match added.iter().position(|(_, s)| *s == sha) {
            Some(i) => {
                let (new, _) = added.remove(i);
                report.renamed.push(Renamed { from: to, to: new });
            }
            None => report.removed.push(to),
        }
    }
    report.added.extend(added.into_iter().map(|(to, _)| to));
}

/// The sha256 of a pristine copy, for [`report`].
pub(super) fn sha(bytes: &[u8]) -> String {
    Digest::of(bytes).hex().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removed_and_an_added_file_with_the_same_bytes_are_a_rename() {
        let mut r = UpdateReport::new("v1", "v2", false, false);
        report(
            &mut r,
            vec![
                ("c/new.yaml".into(), "1".into()),
                ("c/moved.yaml".into(), "2".into()),
            ],
            vec![
                ("c/gone.yaml".into(), "3".into()),
                ("c/old.yaml".into(), "2".into()),
            ],
        );
        assert_eq!(r.added, ["c/new.yaml"]);
        assert_eq!(r.removed, ["c/gone.yaml"]);
        assert_eq!(
            r.renamed,
            [Renamed {
                from: "c/old.yaml".into(),
                to: "c/moved.yaml".into()
            }]
        );
    }
}
