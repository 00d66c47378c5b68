//! The vendored files an update moves: a directory `[[vendor]]` holds other
//! files at the target than at the locked version.
//!
//! 1. [`Vendored::new`] lists each vendored directory at its upstream's target
//!    ([`Source::list`]: files and their git blob ids). At the locked version
//!    the lock's `[[file]]` entries list it; a directory the lock has nothing
//!    of (adopting the package, or a `[[vendor]]` new in vendor.toml) is
//!    listed upstream at the locked version too, and adopting it compares the
//!    whole directory with what is committed ([`Vendored::strays`]).
//! 2. Each file is then in both (carried as a single file always was), only
//!    at the target (upstream added it: [`added`]), or only at the locked
//!    version (upstream removed it: [`removed`]). A file a vendor patch
//!    creates is in both, with empty pristine copies.
//! 3. A file's bytes at the target come from the cache by blob id when an
//!    earlier release had the same file, else they are downloaded as a raw
//!    file and checked against that id ([`Vendored::fetch`]).
//!
//! What upstream removed goes: its rendered file and its pristine copy, unless
//! a patch changes it or the rendered file has edits no patch carries, which
//! stop the update. What upstream added arrives, unless the package already
//! has another file at that path. A file that upstream removed and another it
//! added with the same bytes (of the same upstream) is reported as renamed;
//! each under its upstream's name ([`Moved`]).

use std::collections::{BTreeMap, HashSet};

use super::summary::{Renamed, UpdateReport};
use super::upstreams::{self, Move};
use crate::config::lock::Lock;
use crate::config::{Config, Vendor};
use crate::error::{Error, Result};
use crate::image::Digest;
use crate::ops::render::edits;
use crate::paths;
use crate::render::{self, Package, Patches};
use crate::upstream::{self, Listed, Pristine, Source, cache};

/// An upstream path with the name of its upstream (`None`: the unnamed
/// `[upstream]`): two upstreams may both have a `charts/`.
type Path = (Option<String>, String);
use crate::workspace::Context;

/// The vendored files at the locked version and at the target.
#[derive(Debug)]
pub(super) struct Vendored {
    /// The vendored files at the locked version ([`render::files`]).
    pub base: Vec<Vendor>,
    /// The vendored files at the target.
    pub target: Vec<Vendor>,
    /// Upstream's listing at the target, by upstream and path.
    listed: BTreeMap<Path, Listed>,
    /// Upstream's listing at the locked version, for the directories the
    /// lock has nothing of, by upstream and path.
    base_listed: BTreeMap<Path, Listed>,
    /// The `to` of each directory whose locked listing came from upstream.
    adopting: Vec<String>,
}

impl Vendored {
    /// Lists every vendored directory, each at its upstream's versions in
    /// `moves` (see the module docs).
    pub fn new(
        ctx: &Context,
        config: &Config,
        lock: Option<&Lock>,
        patches: &Patches,
        moves: &[Move<'_>],
    ) -> Result<Vendored> {
        let mut listed = BTreeMap::new();
        let mut base_listed = BTreeMap::new();
        let mut adopting = Vec::new();
        let mut base_paths: Vec<Path> = lock
            .map(|l| {
                l.files
                    .iter()
                    .map(|f| (f.upstream.clone(), f.from.clone()))
                    .collect()
            })
            .unwrap_or_default();
        let mut lists: BTreeMap<Path, Vec<Listed>> = BTreeMap::new();
        for dir in config.vendor.iter().filter(|v| v.is_dir()) {
            let mv = upstreams::of(moves, dir.upstream.as_deref());
            let shown = if dir.from.is_empty() { "./" } else { &dir.from };
            let key = (dir.upstream.clone(), dir.from.clone());
            if !lists.contains_key(&key) {
                ctx.shell
                    .status("Listing", format!("{shown} at {}", mv.target));
                let found = mv
                    .source
                    .list(&mv.target, &dir.from, &ctx.cache)
                    .map_err(|e| not_in_upstream(ctx, dir, &mv.target, e))?;
                lists.insert(key.clone(), found);
            }
            let at_target = &lists[&key];
            let locked = lock.is_some_and(|l| {
                l.files
                    .iter()
                    .any(|f| f.upstream == dir.upstream && dir.selects_from(&f.from).is_some())
            });
            if !locked {
                let at_base = if mv.same_release {
                    at_target.clone()
                } else {
                    ctx.shell
                        .status("Listing", format!("{shown} at {}", mv.base_version));
                    mv.base_source()
                        .list(&mv.base_version, &dir.from, &ctx.cache)
                        .map_err(|e| not_in_upstream(ctx, dir, &mv.base_version, e))?
                };
                for l in at_base {
                    base_paths.push((dir.upstream.clone(), l.path.clone()));
                    base_listed.insert((dir.upstream.clone(), l.path.clone()), l);
                }
                adopting.push(dir.to.clone());
            }
            for l in at_target {
                listed.insert((dir.upstream.clone(), l.path.clone()), l.clone());
            }
        }
        fn pair((u, p): &Path) -> (Option<&str>, &str) {
            (u.as_deref(), p.as_str())
        }
        let base = render::files(config, base_paths.iter().map(pair), patches)?;
        let target = render::files(config, listed.keys().map(pair), patches)?;
        Ok(Vendored {
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

    /// Upstream's listing of `vendor`'s file at the locked version, when it
    /// was listed there.
    pub fn base_listed(&self, vendor: &Vendor) -> Option<&Listed> {
        self.base_listed
            .get(&(vendor.upstream.clone(), vendor.from.clone()))
    }

    /// `vendor`'s bytes at the target: empty for a file a patch creates,
    /// by blob id for a file of a listed directory (`base`, the locked copy,
    /// when it has that id: most of a directory is the same in two
    /// releases, and reading each file again from the cache was most of an
    /// update's reading, issue 23), else the file at the tag.
    pub fn fetch(
        &self,
        ctx: &Context,
        source: &dyn Source,
        vendor: &Vendor,
        target: &str,
        base: &[u8],
    ) -> Result<FileBytes> {
        if vendor.created {
            return Ok(FileBytes::unhashed(Vec::new()));
        }
        match self
            .listed
            .get(&(vendor.upstream.clone(), vendor.from.clone()))
        {
            Some(listed) => {
                ctx.shell
                    .step("Fetching", format!("{} at {target}", vendor.from));
                if cache::blob_id(base) == listed.blob {
                    return Ok(FileBytes::unhashed(base.to_vec()));
                }
                upstream::fetch_listed_hashed(source, &ctx.cache, target, listed)
                    .map(|(bytes, sha256)| FileBytes::hashed(bytes, sha256))
            }
            None => {
                ctx.shell
                    .status("Fetching", format!("{} at {target}", vendor.from));
                vendored_file(ctx, source, vendor, target, None)
            }
        }
    }

    /// Adopting a directory compares all of it with what is committed: a
    /// file it selects that its upstream does not have at the locked version
    /// (in `moves`) and no patch
    /// creates stops the update, for it would be neither rendered nor
    /// deleted, only reported by every `check` after. A file the lock
    /// records as rendered is not a stray: it is carried, or removed with
    /// its `[[vendor]]`.
    pub fn strays(
        &self,
        ctx: &Context,
        config: &Config,
        lock: Option<&Lock>,
        moves: &[Move<'_>],
    ) -> Result<()> {
        let base: HashSet<&str> = self.base.iter().map(|b| b.to.as_str()).collect();
        for dir in config
            .vendor
            .iter()
            .filter(|v| self.adopting.contains(&v.to))
        {
            let mut strays = Vec::new();
            for path in paths::list(&ctx.root, &dir.to)? {
                let known =
                    base.contains(path.as_str()) || lock.is_some_and(|l| l.output(&path).is_some());
                if dir.selects_to(&path).is_some() && !known {
                    strays.push(format!("`{path}`"));
                }
            }
            let version = &upstreams::of(moves, dir.upstream.as_deref()).base_version;
            stray_error(&strays, version)?;
        }
        Ok(())
    }
}

/// The error of a directory adopted with `strays` (upstream has none of
/// them at `version`), if there are any.
fn stray_error(strays: &[String], version: &str) -> Result<()> {
    if strays.is_empty() {
        return Ok(());
    }
    let (verb, them) = if strays.len() == 1 {
        ("is", "it")
    } else {
        ("are", "them")
    };
    Err(Error::StrayFiles(format!(
        "{} {verb} in a vendored directory, but upstream {version} does not have {them} and no patch creates {them}; \
         nothing was written: delete {them}, carry each in a patch that creates it (`--- /dev/null`), \
         or leave {them} out of the directory with `exclude`",
        strays.join(", ")
    )))
}

/// A file upstream removed at `target`: it goes, unless a patch changes it
/// or `on_disk` (the rendered file, as the hand-edit check sees it) is not
/// the render of `base` (its pristine copy at the locked version).
pub(super) fn removed(
    package: &Package<'_>,
    vendor: &Vendor,
    base: &[u8],
    on_disk: Option<&[u8]>,
    target: &str,
) -> Result<()> {
    if let Some(&id) = package.sections(vendor).first() {
        let (p, _) = package.patches().section(id);
        return Err(Error::PatchConflict(format!(
            "upstream {target} no longer has `{}`, which patch `{}` ({}) changes; nothing was written: \
             take the section for `{}` out of the patch (or its [[patch]] out of vendor.toml), then update again",
            vendor.from, p.name, p.file, vendor.to
        )));
    }
    let Some(current) = on_disk else {
        return Ok(());
    };
    let expected = package.finish(&vendor.to, base)?;
    if *expected == *current {
        return Ok(());
    }
    let found = edits::edited_lines(&vendor.to, &expected, current);
    Err(Error::HandEdits(format!(
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
        Some(current) if current != rendered => Err(Error::StrayFiles(format!(
            "upstream {target} adds `{}`, but the package already has another file at `{}`; nothing was written: \
             move it out of the way, then update again",
            vendor.from, vendor.to
        ))),
        _ => Ok(()),
    }
}

/// The files of vendored directories that upstream added and removed, each
/// with its upstream and the sha256 of its pristine copy: what the summary
/// and the pull-request body say arrived, went, or moved.
#[derive(Debug, Default)]
pub(super) struct Moved {
    added: Vec<(Option<String>, String, String)>,
    removed: Vec<(Option<String>, String, String)>,
}

impl Moved {
    /// `vendor` arrives, its pristine copy `bytes`.
    pub fn arrived(&mut self, vendor: &Vendor, bytes: &[u8]) {
        self.added.push(entry(vendor, bytes));
    }

    /// `vendor` goes, its pristine copy at the locked version `bytes`.
    pub fn gone(&mut self, vendor: &Vendor, bytes: &[u8]) {
        self.removed.push(entry(vendor, bytes));
    }

    /// Records them in `report` (by their rendered paths), in the report's
    /// lists and under each upstream: a removed and an added file of the
    /// same upstream with the same bytes as a rename.
    pub fn report(self, report: &mut UpdateReport) {
        let mut added = self.added;
        for (upstream, to, sha) in self.removed {
            let renamed = added
                .iter()
                .position(|(u, _, s)| *u == upstream && *s == sha);
            let up = report.upstream_mut(upstream.as_deref());
            match renamed {
                Some(i) => {
                    let (_, new, _) = added.remove(i);
                    up.renamed.push(Renamed { from: to, to: new });
                }
                None => up.removed.push(to),
            }
        }
        for (upstream, to, _) in added {
            report.upstream_mut(upstream.as_deref()).added.push(to);
        }
        for up in &report.upstreams {
            report.added.extend(up.added.iter().cloned());
            report.removed.extend(up.removed.iter().cloned());
            report.renamed.extend(up.renamed.iter().cloned());
        }
    }
}

fn entry(vendor: &Vendor, bytes: &[u8]) -> (Option<String>, String, String) {
    (
        vendor.upstream.clone(),
        vendor.to.clone(),
        Digest::of(bytes).hex().to_owned(),
    )
}

/// A pristine copy's bytes with their sha256 when reading them learnt it
/// (verified against the lock, or hashed for the download cache), so that
/// the lock and the cache do not hash the same bytes again (issue 23).
#[derive(Debug)]
pub(super) struct FileBytes {
    /// The file's bytes.
    pub bytes: Vec<u8>,
    /// Their sha256, when known.
    sha256: Option<String>,
}

impl FileBytes {
    /// `bytes`, whose sha256 nobody computed yet.
    pub fn unhashed(bytes: Vec<u8>) -> FileBytes {
        FileBytes {
            bytes,
            sha256: None,
        }
    }

    /// `bytes` with the sha256 learnt of them, if any.
    pub fn hashed(bytes: Vec<u8>, sha256: Option<String>) -> FileBytes {
        FileBytes { bytes, sha256 }
    }

    /// The sha256 of the bytes: the one learnt, else computed now.
    pub fn sha256(&self) -> String {
        match &self.sha256 {
            Some(sha) => sha.clone(),
            None => Digest::of(&self.bytes).hex().to_owned(),
        }
    }

    /// The sha256 the bytes were verified with, if any.
    pub fn known_sha256(&self) -> Option<&str> {
        self.sha256.as_deref()
    }
}

/// The pristine copy of `vendor` at the locked version: the verified copy
/// when there is one ([`Pristine::read`]), else downloaded (and verified when
/// the lock names its sha256; by its blob id when `vendored` listed it), which
/// also restores an edited copy. The flag says whether the copy on disk holds
/// these bytes ([`Pristine::read_kept`]).
pub(super) fn locked_copy(
    ctx: &Context,
    source: &dyn Source,
    lock: Option<&Lock>,
    vendored: &Vendored,
    vendor: &Vendor,
    version: &str,
) -> Result<(FileBytes, bool)> {
    if vendor.created {
        return Ok((FileBytes::unhashed(Vec::new()), false));
    }
    let expected = lock.and_then(|l| l.file_sha256(vendor.upstream.as_deref(), &vendor.from));
    if let Some(lock) = lock
        && let (Pristine::Verified(bytes), on_disk) =
            Pristine::read_kept(&ctx.root, lock, vendor, &ctx.cache, None)?
    {
        ctx.shell.step(
            "Verified",
            format!("{} against the lock", vendor.pristine()),
        );
        let verified = FileBytes::hashed(bytes, expected.map(str::to_owned));
        return Ok((verified, on_disk));
    }
    if let (Some(listed), None) = (vendored.base_listed(vendor), expected) {
        ctx.shell
            .step("Fetching", format!("{} at {version}", vendor.from));
        let (bytes, sha256) = upstream::fetch_listed_hashed(source, &ctx.cache, version, listed)?;
        return Ok((FileBytes::hashed(bytes, sha256), false));
    }
    ctx.shell
        .status("Fetching", format!("{} at {version}", vendor.from));
    let bytes = vendored_file(ctx, source, vendor, version, expected)?;
    Ok((bytes, false))
}

/// `vendor`'s upstream file at `tag` ([`upstream::fetch_file`]), a 404
/// blamed on vendor.toml ([`not_in_upstream`]).
fn vendored_file(
    ctx: &Context,
    source: &dyn Source,
    vendor: &Vendor,
    tag: &str,
    expected: Option<&str>,
) -> Result<FileBytes> {
    upstream::fetch_file_hashed(source, &ctx.cache, tag, &vendor.from, expected)
        .map(|(bytes, sha)| FileBytes::hashed(bytes, Some(sha)))
        .map_err(|e| not_in_upstream(ctx, vendor, tag, e))
}

/// An upstream that answers it has no `vendor`'s `from` (a file, or a
/// directory with no file) at `tag` names vendor.toml's `[[vendor]]`, exit
/// 2: the fix is in vendor.toml (the path, or the release), not in the
/// network (issue 13). Any other failure stays as it came.
fn not_in_upstream(ctx: &Context, vendor: &Vendor, tag: &str, e: Error) -> Error {
    let Error::NotFound { .. } = e else {
        return e;
    };
    let shown = if vendor.from.is_empty() {
        "./"
    } else {
        &vendor.from
    };
    let key = if vendor.asset.is_some() {
        "asset"
    } else {
        "from"
    };
    crate::config::ConfigError::at(
        ctx.root.join("vendor.toml"),
        Some(vendor.line),
        format!("[[vendor]] `{key}` = \"{shown}\" is not in the upstream at {tag}: {e}"),
    )
    .hint(format!(
        "fix `{key}`, or move to a release that has it with `--to`"
    ))
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upstream(name: Option<&str>) -> super::super::UpstreamMove {
        super::super::UpstreamMove {
            name: name.map(str::to_owned),
            source: "github:o/r".into(),
            from: "v1".into(),
            to: "v2".into(),
            moved_from: None,
            adopted: false,
            added: Vec::new(),
            removed: Vec::new(),
            renamed: Vec::new(),
        }
    }

    fn file(upstream: Option<&str>, to: &str, sha: &str) -> (Option<String>, String, String) {
        (upstream.map(str::to_owned), to.into(), sha.into())
    }

    #[test]
    fn a_removed_and_an_added_file_with_the_same_bytes_are_a_rename() {
        let mut r = UpdateReport::new(vec![upstream(None)], false, false);
        Moved {
            added: vec![
                file(None, "c/new.yaml", "1"),
                file(None, "c/moved.yaml", "2"),
            ],
            removed: vec![
                file(None, "c/gone.yaml", "3"),
                file(None, "c/old.yaml", "2"),
            ],
        }
        .report(&mut r);
        assert_eq!(r.added, ["c/new.yaml"]);
        assert_eq!(r.removed, ["c/gone.yaml"]);
        assert_eq!(
            r.renamed,
            [Renamed {
                from: "c/old.yaml".into(),
                to: "c/moved.yaml".into()
            }]
        );
        assert_eq!(r.upstreams[0].added, ["c/new.yaml"]);
    }

    #[test]
    fn files_are_told_under_their_upstream_and_renamed_within_it_only() {
        let mut r = UpdateReport::new(vec![upstream(Some("a")), upstream(Some("b"))], false, false);
        Moved {
            added: vec![file(Some("b"), "b/new.yaml", "1")],
            removed: vec![file(Some("a"), "a/old.yaml", "1")],
        }
        .report(&mut r);
        assert!(r.renamed.is_empty());
        assert_eq!(r.upstreams[0].removed, ["a/old.yaml"]);
        assert_eq!(r.upstreams[1].added, ["b/new.yaml"]);
        let human = r.human();
        assert!(human.contains("upstream a removed a/old.yaml\n"), "{human}");
        assert!(human.contains("upstream b added b/new.yaml\n"), "{human}");
    }
}
