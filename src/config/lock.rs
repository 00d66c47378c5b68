//! upstream/lock.toml: what was vendored and verified, written by revendor only.
//!
//! The lock is the memory between runs: the version the pristine copies are
//! at, their sha256, the hash of the upstream source tree when source patches
//! were verified against it, the sha256 of each patch file as it was verified,
//! the pinned image, and facts read from upstream at that version (its go.mod
//! `go` directive). `check` trusts nothing in the tree that the lock does not
//! vouch for.
//!
//! Two tables were added later and are optional, so older locks still read:
//! `[[output]]` says what each rendered file was made from (its upstream file
//! and the vendor patches applied to it), which is how a removed `[[vendor]]`
//! or `[[patch]]` is undone rather than mistaken for a hand edit; `[pending]`
//! is an update stopped by `update --keep-conflicts`, which
//! `update --continue` finishes.
//!
//! It is read with serde and written with toml_edit, so that a run that
//! changes one value leaves every other byte (and any comment) in place.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, value};

use super::lock_index::Lookups;
use super::lock_memo::Memo;
pub use super::lock_schema::{LOCK_SCHEMA, Schema};
use super::lock_schema::{stamp, unreadable};
use super::one_or_many::deserialize_entries;
use super::{Config, ConfigError, line_of};

/// Where the lock lives, relative to the package.
pub const LOCK_PATH: &str = "upstream/lock.toml";

/// Where `update --keep-conflicts` writes the upstream source files a
/// source patch conflicts on, with their markers, relative to the package:
/// `<dir>/<patch name>/<path in the source>`. Under `upstream/` (revendor's
/// own, never rendered or checked for strays) and hidden, so that no
/// vendored directory, image context or `check --all` walk takes it in.
pub const CONFLICTS_DIR: &str = "upstream/.revendor-conflicts";

/// The last lock text parsed in this process and its lock (`lock_memo.rs`);
/// its lookups are never built, so a clone of it copies rows only.
static PARSED: Memo<Lock> = Memo::new();

/// The parsed lock.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Lock {
    /// `schema = N`, the lock format ([`LOCK_SCHEMA`]); `None` in a lock
    /// written before the key existed, which is schema 1. Written by
    /// [`Lock::to_toml`], never taken from here.
    #[serde(default)]
    pub schema: Schema,
    /// Each upstream as vendored: `[upstream]`, or `[[upstream]]` with
    /// names when vendor.toml has several (or a named one).
    #[serde(rename = "upstream", deserialize_with = "deserialize_entries")]
    pub upstreams: Vec<LockedUpstream>,
    /// Each vendored file's pristine copy.
    #[serde(default, rename = "file")]
    pub files: Vec<LockedFile>,
    /// Each patch file as verified.
    #[serde(default, rename = "patch")]
    pub patches: Vec<LockedPatch>,
    /// Each pinned image: `[image]`, or `[[image]]` with names.
    #[serde(default, rename = "image", deserialize_with = "deserialize_entries")]
    pub images: Vec<LockedImage>,
    /// What each rendered output was made from (empty in older locks).
    #[serde(default, rename = "output")]
    pub outputs: Vec<LockedOutput>,
    /// An update written with conflict markers, waiting for `--continue`.
    pub pending: Option<Pending>,
    /// The rows by key, for the lookups made once per vendored file.
    #[serde(skip)]
    pub lookup: Lookups,
}

/// `[[output]]` of the lock: one rendered file and what it was made from.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LockedOutput {
    /// The rendered file, relative to the package.
    pub file: String,
    /// The upstream it comes from, when that upstream is named.
    pub upstream: Option<String>,
    /// Its upstream path (`[[vendor]] from`).
    pub from: String,
    /// The vendor patches applied to it, in order.
    #[serde(default, rename = "patch")]
    pub patches: Vec<OutputPatch>,
}

impl LockedOutput {
    /// Where its pristine copy was kept (as [`crate::config::Vendor::pristine`]).
    pub fn pristine(&self) -> String {
        pristine_path(self.upstream.as_deref(), &self.from)
    }
}

/// `[[output.patch]]`: a vendor patch as it was applied to an output; enough
/// to apply it again once its `[[patch]]` is gone from vendor.toml.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct OutputPatch {
    /// The patch name.
    pub name: String,
    /// Its file, relative to the package.
    pub file: String,
    /// Its `-p` level.
    pub strip: usize,
}

/// `[pending]`: an update that `--keep-conflicts` left with conflict
/// markers. The rest of the lock stays at the version before it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Pending {
    /// The release the update moves the unnamed upstream to.
    pub version: Option<String>,
    /// The release each named upstream moves to, by name.
    #[serde(default)]
    pub versions: BTreeMap<String, String>,
    /// Each output written with conflict markers.
    #[serde(default, rename = "conflict")]
    pub conflicts: Vec<PendingConflict>,
    /// Each upstream source file a source patch conflicts on, written with
    /// markers under [`CONFLICTS_DIR`].
    #[serde(default, rename = "source")]
    pub sources: Vec<PendingSource>,
}

impl Pending {
    /// The release the pending update moves upstream `name` to.
    pub fn version_of(&self, name: Option<&str>) -> Option<&str> {
        match name {
            Some(name) => self.versions.get(name).map(String::as_str),
            None => self.version.as_deref(),
        }
    }
}

/// `[[pending.conflict]]`: one output written with conflict markers.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PendingConflict {
    /// The rendered file, relative to the package.
    pub file: String,
    /// sha256 of the file as written, markers and all.
    pub sha256: String,
}

/// `[[pending.source]]`: one upstream source file a source patch conflicts
/// on at the pending release, written with markers to [`Self::copy`] for a
/// person to resolve; `update --continue` rebuilds the patch from it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PendingSource {
    /// The source patch's name.
    pub patch: String,
    /// The file's path in the upstream source tree.
    pub file: String,
    /// sha256 of the working copy as written, markers and all.
    pub sha256: String,
}

impl PendingSource {
    /// The working copy, relative to the package: [`CONFLICTS_DIR`], the
    /// patch name, the file's path in the source.
    pub fn copy(&self) -> String {
        conflict_copy(&self.patch, &self.file)
    }
}

/// Where the working copy of source file `file` conflicted on by source
/// patch `patch` lives (see [`CONFLICTS_DIR`]).
pub fn conflict_copy(patch: &str, file: &str) -> String {
    format!("{CONFLICTS_DIR}/{patch}/{file}")
}

/// `[upstream]` of the lock.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LockedUpstream {
    /// The `name` of its `[[upstream]]`; `None` for an unnamed `[upstream]`.
    pub name: Option<String>,
    /// `github:owner/name` or `git:URL`.
    pub source: String,
    /// The tag vendored (or the commit, for a commit or a branch).
    pub version: String,
    /// The commit the tag pointed to, when the source said.
    pub commit: Option<String>,
    /// The source-tree hash at `version` (see `upstream::tree_hash`), when
    /// source patches were verified against the tree; every later fetch of
    /// the tree at `version` must have it.
    pub source_tree_sha256: Option<String>,
    /// sha256 of the source archive, as locks written before the tree hash
    /// recorded it. Still read, never verified (GitHub's archive bytes are
    /// not stable) and no longer written by `update`.
    pub source_sha256: Option<String>,
    /// The `go` directive of upstream's go.mod at `version`.
    pub go_directive: Option<String>,
    /// Where the version's archive was downloaded (a chart's `.tgz`), for
    /// a kind that serves one archive per version.
    pub archive: Option<String>,
    /// sha256 of that archive, as verified against the repository's digest.
    pub archive_sha256: Option<String>,
    /// A chart's `appVersion` at `version`: `{app-version}` of a render.
    pub app_version: Option<String>,
}

/// `[[file]]` of the lock.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LockedFile {
    /// The upstream it comes from, when that upstream is named.
    pub upstream: Option<String>,
    /// Path in the upstream repository.
    pub from: String,
    /// sha256 of the pristine copy.
    pub sha256: String,
}

impl LockedFile {
    /// Where its pristine copy is kept (as [`crate::config::Vendor::pristine`]).
    pub fn pristine(&self) -> String {
        pristine_path(self.upstream.as_deref(), &self.from)
    }
}

/// `upstream/<from>`, or `upstream/<name>/<from>` for a named upstream.
fn pristine_path(upstream: Option<&str>, from: &str) -> String {
    match upstream {
        Some(name) => format!("upstream/{name}/{from}"),
        None => format!("upstream/{from}"),
    }
}

/// `[[patch]]` of the lock.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LockedPatch {
    /// The patch name from vendor.toml.
    pub name: String,
    /// sha256 of the patch file as it was verified.
    pub sha256: String,
}

/// `[image]` of the lock.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LockedImage {
    /// The `name` of its `[[image]]`; `None` for an unnamed `[image]`.
    pub name: Option<String>,
    /// `repository:tag@sha256:…` as pinned.
    pub reference: String,
    /// Per-platform child manifest digests.
    #[serde(default)]
    pub platforms: BTreeMap<String, String>,
    /// Content hash of what went into the build (context, args, platforms).
    pub content_hash: Option<String>,
    /// Base images pinned in the Dockerfile, `name:tag` → digest.
    #[serde(default)]
    pub bases: BTreeMap<String, String>,
}

impl Lock {
    /// Reads the lock of the package at `dir`; `Ok(None)` when there is none yet.
    pub fn load(dir: &Path) -> Result<Option<Lock>, ConfigError> {
        let path = dir.join(LOCK_PATH);
        let text = match crate::journal::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(ConfigError::at(
                    &path,
                    None,
                    format!("cannot read the lock: {e}"),
                ));
            }
        };
        Lock::parse(&path, &text).map(Some)
    }

    /// Parses lock text; `path` is used in messages only. A text parsed
    /// before in this process is not parsed again (`lock_memo.rs`).
    pub fn parse(path: &Path, text: &str) -> Result<Lock, ConfigError> {
        if let Some(lock) = PARSED.recall(text) {
            return Ok(lock);
        }
        let lock = Lock::parse_anew(path, text)?;
        PARSED.remember(text, &lock);
        Ok(lock)
    }

    /// [`Lock::parse`] without the memo: the text read and checked.
    fn parse_anew(path: &Path, text: &str) -> Result<Lock, ConfigError> {
        let hint = "the lock is written by revendor; restore it from git or run `revendor update`";
        let lock: Lock = toml::from_str(text).map_err(|e| {
            // A newer lock may hold keys this one does not know: the schema
            // says why, where the unknown key would not.
            if let Some(e) = unreadable(path, text) {
                return e;
            }
            let line = e.span().map(|s| line_of(text, s.start));
            ConfigError::at(
                path,
                line,
                format!("malformed lock: {}", super::toml_message(e.message())),
            )
            .hint(hint)
        })?;
        if lock.schema.0.is_some_and(|n| n != LOCK_SCHEMA)
            && let Some(e) = unreadable(path, text)
        {
            return Err(e);
        }
        // A digest that is no digest would read as an edited file; it is the
        // lock that is wrong (issue 13).
        let digests = lock
            .files
            .iter()
            .map(|f| f.sha256.as_str())
            .chain(lock.patches.iter().map(|p| p.sha256.as_str()))
            .chain(lock.upstreams.iter().flat_map(|u| {
                [
                    u.source_sha256.as_deref(),
                    u.source_tree_sha256.as_deref(),
                    u.archive_sha256.as_deref(),
                ]
                .into_iter()
                .flatten()
            }));
        for sha in digests {
            if sha.len() != 64 || !sha.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
                let line = text.find(&format!("\"{sha}\"")).map(|at| line_of(text, at));
                return Err(ConfigError::at(
                    path,
                    line,
                    format!("malformed lock: \"{sha}\" is not a sha256 (64 lowercase hex digits)"),
                )
                .hint(hint));
            }
        }
        Ok(lock)
    }

    /// Refuses a lock vendored from another source than vendor.toml's
    /// `[upstream]` names, or without one of its upstreams: its pristine
    /// copies, patches and pin were verified against that other repository,
    /// so a command that works at the locked version (`render`, `patch
    /// refresh`) would present them as this one's. `update` moves the
    /// package to the new source instead.
    pub fn require_source(&self, config: &Config) -> Result<(), ConfigError> {
        for up in &config.upstreams {
            let at = || {
                ConfigError::at(
                    config.root.join("vendor.toml"),
                    Some(up.source_line),
                    String::new(),
                )
            };
            let Some(locked) = self.upstream(up.name.as_deref()) else {
                let mut e = at().hint("run `revendor update` to vendor it");
                e.message = format!("the lock has no upstream `{}` yet", up.label());
                return Err(e);
            };
            if !up.source.is(&locked.source) {
                let mut e = at().hint("run `revendor update` to move the package to the new source, or restore the old one in vendor.toml");
                e.message = format!(
                    "vendor.toml names {}, but the lock vendored {}",
                    up.source.describe(),
                    locked.source
                );
                return Err(e);
            }
        }
        Ok(())
    }

    /// The locked upstream of that name (`None`: the unnamed `[upstream]`).
    pub fn upstream(&self, name: Option<&str>) -> Option<&LockedUpstream> {
        self.upstreams.iter().find(|u| u.name.as_deref() == name)
    }

    /// The locked version of the upstream of that name.
    pub fn version(&self, name: Option<&str>) -> Option<&str> {
        self.upstream(name).map(|u| u.version.as_str())
    }

    /// The pinned image of that name (`None`: the unnamed `[image]`).
    pub fn image(&self, name: Option<&str>) -> Option<&LockedImage> {
        self.images.iter().find(|i| i.name.as_deref() == name)
    }

    /// The 1-based line of `key` in `[table]` of the lock text `text` (in
    /// the `[[table]]` of that `name`, when named), for an error about a
    /// value the lock holds.
    pub fn line_of_key(text: &str, table: &str, name: Option<&str>, key: &str) -> Option<usize> {
        let doc = toml_edit::Document::parse(text).ok()?;
        let item = doc.as_item().get(table)?;
        let span = match (name, item.as_array_of_tables()) {
            (Some(name), Some(all)) => all
                .iter()
                .find(|t| t.get("name").and_then(|n| n.as_str()) == Some(name))?
                .get(key)?
                .span()?,
            _ => item.get(key)?.span()?,
        };
        Some(line_of(text, span.start))
    }

    /// The locked sha256 of a vendored file of upstream `upstream`.
    pub fn file_sha256(&self, upstream: Option<&str>, from: &str) -> Option<&str> {
        let of_upstream = |f: &LockedFile| f.upstream.as_deref() == upstream;
        self.lookup
            .files
            .find(&self.files, |f| f.from.as_str(), from, of_upstream)
            .map(|f| f.sha256.as_str())
    }

    /// The sha256 a patch file was verified with.
    pub fn patch_sha256(&self, name: &str) -> Option<&str> {
        self.patches
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.sha256.as_str())
    }

    /// What the lock says output `file` was made from.
    pub fn output(&self, file: &str) -> Option<&LockedOutput> {
        self.lookup
            .outputs
            .find(&self.outputs, |o| o.file.as_str(), file, |_| true)
    }

    /// The pending conflict of output `file`, when there is one.
    pub fn pending_conflict(&self, file: &str) -> Option<&PendingConflict> {
        self.pending
            .as_ref()
            .and_then(|p| p.conflicts.iter().find(|c| c.file == file))
    }

    /// Serializes the lock, editing `previous` (the old lock text) in place so
    /// that unchanged bytes stay unchanged. A lock that changes (or is new)
    /// leads with `schema = 1`; one that does not is returned as it was.
    pub fn to_toml(&self, previous: Option<&str>) -> String {
        let mut doc: DocumentMut = previous.and_then(|p| p.parse().ok()).unwrap_or_else(|| {
            let mut d = DocumentMut::new();
            d.decor_mut().set_prefix(
                "# Written by revendor: what was vendored and verified. Do not edit by hand.\n",
            );
            d
        });

        let upstreams: Vec<(Option<&str>, _)> = self
            .upstreams
            .iter()
            .map(|u| (u.name.as_deref(), |t: &mut Table| upstream_fields(t, u)))
            .collect();
        write_entries(&mut doc, "upstream", &upstreams);

        if !files_in(&doc, &self.files) {
            let mut files = ArrayOfTables::new();
            for f in &self.files {
                let mut t = Table::new();
                if let Some(upstream) = &f.upstream {
                    t["upstream"] = value(upstream);
                }
                t["from"] = value(&f.from);
                t["sha256"] = value(&f.sha256);
                files.push(t);
            }
            set_array(&mut doc, "file", files);
        }

        let mut patches = ArrayOfTables::new();
        for p in &self.patches {
            let mut t = Table::new();
            t["name"] = value(&p.name);
            t["sha256"] = value(&p.sha256);
            patches.push(t);
        }
        replace_array(&mut doc, "patch", patches);

        let images: Vec<(Option<&str>, _)> = self
            .images
            .iter()
            .map(|i| (i.name.as_deref(), |t: &mut Table| image_fields(t, i)))
            .collect();
        write_entries(&mut doc, "image", &images);

        // The rows already there are compared as the document holds them: a
        // second parse of the old lock, for these two tables alone, was a
        // third of writing a 10,000-file lock (issue 23).
        if outputs_in(&doc).as_ref() != Some(&self.outputs) {
            let mut outputs = ArrayOfTables::new();
            for o in &self.outputs {
                outputs.push(output_table(o));
            }
            set_array(&mut doc, "output", outputs);
        }
        let pending_changed = match (doc.get("pending"), &self.pending) {
            (None, None) => false,
            (None, Some(_)) => true,
            (Some(_), _) => {
                let old: Option<Lock> = previous.and_then(|p| toml::from_str(p).ok());
                old.map(|o| o.pending) != Some(self.pending.clone())
            }
        };
        if pending_changed {
            match &self.pending {
                None => {
                    doc.remove("pending");
                }
                Some(p) => {
                    doc.insert("pending", Item::Table(pending_table(p)));
                }
            }
        }
        // An older lock gets its schema when something else in it changes
        // (lock_schema.rs says why).
        // A lock stamped already is final: rendering it again cost as much
        // as the comparison.
        let text = doc.to_string();
        if previous == Some(text.as_str()) || doc.contains_key("schema") {
            return text;
        }
        stamp(&mut doc);
        doc.to_string()
    }
}

/// Whether `doc`'s `[[file]]` rows are `files` already, compared before a
/// new array of 10,000 tables is built only to be found equal.
fn files_in(doc: &DocumentMut, files: &[LockedFile]) -> bool {
    let Some(old) = doc.get("file").and_then(Item::as_array_of_tables) else {
        return false;
    };
    old.len() == files.len()
        && old.iter().zip(files).all(|(t, f)| {
            let at = |key: &str| t.get(key).and_then(Item::as_str);
            t.len() == 2 + usize::from(f.upstream.is_some())
                && at("upstream") == f.upstream.as_deref()
                && at("from") == Some(f.from.as_str())
                && at("sha256") == Some(f.sha256.as_str())
        })
}

/// The `[[output]]` rows of `doc` as the lock reads them (none when it has
/// no such key); `None` when they are not what a lock holds, so that they
/// are written anew.
fn outputs_in(doc: &DocumentMut) -> Option<Vec<LockedOutput>> {
    let Some(item) = doc.get("output") else {
        return Some(Vec::new());
    };
    let string = |t: &Table, key: &str| t.get(key).and_then(Item::as_str).map(str::to_owned);
    let only = |t: &Table, keys: &[&str]| t.iter().all(|(k, _)| keys.contains(&k));
    let patches = |t: &Table| -> Option<Vec<OutputPatch>> {
        let Some(item) = t.get("patch") else {
            return Some(Vec::new());
        };
        let all = item.as_array_of_tables()?;
        all.iter()
            .map(|p| {
                only(p, &["name", "file", "strip"]).then_some(())?;
                let strip = p.get("strip")?.as_integer()?;
                Some(OutputPatch {
                    name: string(p, "name")?,
                    file: string(p, "file")?,
                    strip: usize::try_from(strip).ok()?,
                })
            })
            .collect()
    };
    let all = item.as_array_of_tables()?;
    all.iter()
        .map(|t| {
            only(t, &["file", "upstream", "from", "patch"]).then_some(())?;
            if t.contains_key("upstream") && string(t, "upstream").is_none() {
                return None;
            }
            Some(LockedOutput {
                file: string(t, "file")?,
                upstream: string(t, "upstream"),
                from: string(t, "from")?,
                patches: patches(t)?,
            })
        })
        .collect()
}

fn upstream_fields(t: &mut Table, u: &LockedUpstream) {
    set_str(t, "source", Some(&u.source));
    set_str(t, "version", Some(&u.version));
    set_str(t, "commit", u.commit.as_deref());
    set_str(t, "source-tree-sha256", u.source_tree_sha256.as_deref());
    set_str(t, "source-sha256", u.source_sha256.as_deref());
    set_str(t, "go-directive", u.go_directive.as_deref());
    set_str(t, "archive", u.archive.as_deref());
    set_str(t, "archive-sha256", u.archive_sha256.as_deref());
    set_str(t, "app-version", u.app_version.as_deref());
}

fn image_fields(t: &mut Table, i: &LockedImage) {
    set_str(t, "reference", Some(&i.reference));
    set_str(t, "content-hash", i.content_hash.as_deref());
    set_map(t, "platforms", &i.platforms);
    set_map(t, "bases", &i.bases);
}

/// Writes `[key]` (one unnamed entry) or `[[key]]` (named entries), editing
/// the tables already there in place so that unchanged bytes stay; no
/// entry removes the key.
fn write_entries<F: Fn(&mut Table)>(
    doc: &mut DocumentMut,
    key: &str,
    entries: &[(Option<&str>, F)],
) {
    // Switching between the two forms, the new first table takes the old
    // one's place in the file and the comments above it.
    let look = match doc.get(key) {
        Some(Item::Table(t)) => Some((t.position(), t.decor().clone())),
        Some(Item::ArrayOfTables(all)) => all.get(0).map(|t| (t.position(), t.decor().clone())),
        _ => None,
    };
    let keep_look = |t: &mut Table| {
        if let Some((position, decor)) = &look {
            t.set_position(*position);
            *t.decor_mut() = decor.clone();
        }
    };
    match entries {
        [] => {
            doc.remove(key);
        }
        [(None, fields)] => {
            if doc.get(key).is_some_and(|i| !i.is_table()) {
                let mut t = Table::new();
                keep_look(&mut t);
                doc.insert(key, Item::Table(t));
            }
            fields(table_mut(doc, key));
        }
        _ => {
            let names: Vec<Option<&str>> = entries.iter().map(|(n, _)| *n).collect();
            let same_names = doc
                .get(key)
                .and_then(|i| i.as_array_of_tables())
                .is_some_and(|all| {
                    all.iter()
                        .map(|t| t.get("name").and_then(|n| n.as_str()))
                        .eq(names.iter().copied())
                });
            if !same_names {
                let mut all = ArrayOfTables::new();
                for (i, (name, _)) in entries.iter().enumerate() {
                    let mut t = Table::new();
                    if i == 0 {
                        keep_look(&mut t);
                    }
                    if let Some(name) = name {
                        t["name"] = value(*name);
                    }
                    all.push(t);
                }
                doc.insert(key, Item::ArrayOfTables(all));
            }
            let all = doc[key]
                .as_array_of_tables_mut()
                .expect("just made an array of tables");
            for (t, (_, fields)) in all.iter_mut().zip(entries) {
                fields(t);
            }
        }
    }
}

fn output_table(o: &LockedOutput) -> Table {
    let mut t = Table::new();
    t["file"] = value(&o.file);
    if let Some(upstream) = &o.upstream {
        t["upstream"] = value(upstream);
    }
    t["from"] = value(&o.from);
    let mut patches = ArrayOfTables::new();
    for p in &o.patches {
        let mut pt = Table::new();
        pt["name"] = value(&p.name);
        pt["file"] = value(&p.file);
        pt["strip"] = value(p.strip as i64);
        patches.push(pt);
    }
    if !patches.is_empty() {
        t.insert("patch", Item::ArrayOfTables(patches));
    }
    t
}

fn pending_table(p: &Pending) -> Table {
    let mut t = Table::new();
    if let Some(version) = &p.version {
        t["version"] = value(version);
    }
    if !p.versions.is_empty() {
        let mut versions = Table::new();
        for (name, version) in &p.versions {
            versions[name.as_str()] = value(version);
        }
        t.insert("versions", Item::Table(versions));
    }
    let mut conflicts = ArrayOfTables::new();
    for c in &p.conflicts {
        let mut ct = Table::new();
        ct["file"] = value(&c.file);
        ct["sha256"] = value(&c.sha256);
        conflicts.push(ct);
    }
    if !conflicts.is_empty() {
        t.insert("conflict", Item::ArrayOfTables(conflicts));
    }
    let mut sources = ArrayOfTables::new();
    for s in &p.sources {
        let mut st = Table::new();
        st["patch"] = value(&s.patch);
        st["file"] = value(&s.file);
        st["sha256"] = value(&s.sha256);
        sources.push(st);
    }
    if !sources.is_empty() {
        t.insert("source", Item::ArrayOfTables(sources));
    }
    t
}

fn table_mut<'a>(doc: &'a mut DocumentMut, key: &str) -> &'a mut Table {
    if !doc.contains_table(key) {
        doc.insert(key, Item::Table(Table::new()));
    }
    doc[key].as_table_mut().expect("just inserted as a table")
}

fn set_str(t: &mut Table, key: &str, v: Option<&str>) {
    match v {
        Some(v) if t.get(key).and_then(|i| i.as_str()) == Some(v) => {}
        Some(v) => {
            t[key] = value(v);
        }
        None => {
            t.remove(key);
        }
    }
}

fn set_map(t: &mut Table, key: &str, map: &BTreeMap<String, String>) {
    if map.is_empty() {
        t.remove(key);
        return;
    }
    let mut inner = Table::new();
    for (k, v) in map {
        inner[k.as_str()] = value(v);
    }
    let same = t.get(key).and_then(|i| i.as_table()).is_some_and(|old| {
        old.len() == map.len()
            && map
                .iter()
                .all(|(k, v)| old.get(k).and_then(|i| i.as_str()) == Some(v))
    });
    if !same {
        t.insert(key, Item::Table(inner));
    }
}

fn replace_array(doc: &mut DocumentMut, key: &str, new: ArrayOfTables) {
    let same = doc
        .get(key)
        .and_then(|i| i.as_array_of_tables())
        .is_some_and(|old| {
            old.len() == new.len()
                && old.iter().zip(new.iter()).all(|(a, b)| {
                    a.len() == b.len()
                        && b.iter()
                            .all(|(k, v)| a.get(k).and_then(|i| i.as_str()) == v.as_str())
                })
        });
    if !same {
        set_array(doc, key, new);
    }
}

fn set_array(doc: &mut DocumentMut, key: &str, new: ArrayOfTables) {
    if new.is_empty() {
        doc.remove(key);
    } else {
        doc.insert(key, Item::ArrayOfTables(new));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Lock {
        Lock {
            schema: Schema::CURRENT,
            upstreams: vec![LockedUpstream {
                name: None,
                source: "github:o/r".into(),
                version: "v1.0.0".into(),
                commit: Some("abc".into()),
                source_tree_sha256: Some("4".repeat(64)),
                source_sha256: None,
                go_directive: Some("1.25.0".into()),
                archive: Some("https://charts.example/r-1.0.0.tgz".into()),
                archive_sha256: Some("5".repeat(64)),
                app_version: Some("1.2".into()),
            }],
            files: vec![LockedFile {
                upstream: None,
                from: "a.yml".into(),
                sha256: "0".repeat(64),
            }],
            patches: vec![LockedPatch {
                name: "p".into(),
                sha256: "1".repeat(64),
            }],
            images: vec![LockedImage {
                name: None,
                reference: "r/x:v1@sha256:22".into(),
                platforms: [("linux/amd64".to_string(), "sha256:33".to_string())].into(),
                content_hash: None,
                bases: BTreeMap::new(),
            }],
            outputs: vec![LockedOutput {
                file: "t/a.yml".into(),
                upstream: None,
                from: "a.yml".into(),
                patches: vec![OutputPatch {
                    name: "p".into(),
                    file: "p.patch".into(),
                    strip: 1,
                }],
            }],
            pending: None,
            lookup: Lookups::default(),
        }
    }

    /// issue 13: a digest that is no digest read as an edited pristine copy.
    #[test]
    fn a_digest_that_is_not_one_is_a_malformed_lock() {
        let text = "[upstream]\nsource = \"github:o/r\"\nversion = \"v1\"\n\n[[file]]\nfrom = \"a.yml\"\nsha256 = \"zz\"\n";
        let e = Lock::parse(Path::new("lock.toml"), text).unwrap_err();
        assert_eq!(e.line, Some(7), "{e}");
        assert!(e.message.contains("\"zz\" is not a sha256"), "{e}");
    }

    #[test]
    fn round_trips() {
        let lock = sample();
        let text = lock.to_toml(None);
        assert_eq!(Lock::parse(Path::new("lock.toml"), &text).unwrap(), lock);
    }

    #[test]
    fn rewriting_an_unchanged_lock_keeps_its_bytes() {
        let text = sample().to_toml(None);
        let edited = text.replace("# Written", "# a comment a human added\n# Written");
        assert_eq!(sample().to_toml(Some(&edited)), edited);
    }

    #[test]
    fn changing_the_version_touches_only_that_line() {
        let text = sample().to_toml(None);
        let mut newer = sample();
        newer.upstreams[0].version = "v1.1.0".into();
        let out = newer.to_toml(Some(&text));
        assert_eq!(out, text.replace("v1.0.0\"", "v1.1.0\""));
    }

    /// Locks written before the tree hash hold only the archive's sha256.
    #[test]
    fn reads_a_lock_with_only_the_archive_sha256() {
        let (archive, tree) = ("5".repeat(64), "6".repeat(64));
        let text = format!(
            "[upstream]\nsource = \"github:o/r\"\nversion = \"v1.0.0\"\nsource-sha256 = \"{archive}\"\n"
        );
        let lock = Lock::parse(Path::new("lock.toml"), &text).unwrap();
        assert_eq!(lock.upstreams[0].source_sha256, Some(archive));
        assert_eq!(lock.upstreams[0].source_tree_sha256, None);
        let mut updated = lock.clone();
        updated.upstreams[0].source_sha256 = None;
        updated.upstreams[0].source_tree_sha256 = Some(tree.clone());
        let out = updated.to_toml(Some(&text));
        assert!(
            out.contains(&format!("source-tree-sha256 = \"{tree}\"\n")),
            "{out}"
        );
        assert!(!out.contains("source-sha256"), "{out}");
    }

    #[test]
    fn a_value_is_found_at_its_line() {
        let text = sample().to_toml(None);
        let line = Lock::line_of_key(&text, "image", None, "reference").unwrap();
        assert!(
            text.lines()
                .nth(line - 1)
                .unwrap()
                .starts_with("reference = "),
            "{text}"
        );
        assert_eq!(Lock::line_of_key(&text, "image", None, "nothing"), None);
    }

    #[test]
    fn outputs_and_pending_are_written_as_tables_and_read_back() {
        let mut lock = sample();
        lock.pending = Some(Pending {
            version: Some("v1.1.0".into()),
            versions: BTreeMap::new(),
            conflicts: vec![PendingConflict {
                file: "t/a.yml".into(),
                sha256: "44".into(),
            }],
            sources: vec![PendingSource {
                patch: "fix".into(),
                file: "pkg/a.go".into(),
                sha256: "55".into(),
            }],
        });
        let text = lock.to_toml(None);
        assert!(
            text.contains(
                "[[pending.source]]\npatch = \"fix\"\nfile = \"pkg/a.go\"\nsha256 = \"55\"\n"
            ),
            "{text}"
        );
        assert_eq!(
            lock.pending.as_ref().unwrap().sources[0].copy(),
            "upstream/.revendor-conflicts/fix/pkg/a.go"
        );
        assert!(
            text.contains(
                "[[output]]\nfile = \"t/a.yml\"\nfrom = \"a.yml\"\n\n[[output.patch]]\nname = \"p\"\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("[pending]\nversion = \"v1.1.0\"\n\n[[pending.conflict]]\n"),
            "{text}"
        );
        assert_eq!(Lock::parse(Path::new("lock.toml"), &text).unwrap(), lock);

        // Clearing the pending update removes its table and nothing else.
        let pending = lock.pending.take();
        let cleared = lock.to_toml(Some(&text));
        assert_eq!(cleared, sample().to_toml(None));
        lock.pending = pending;
        assert_eq!(lock.to_toml(Some(&text)), text, "unchanged, byte for byte");
    }

    #[test]
    fn outputs_are_compared_as_the_old_lock_holds_them() {
        let lock = sample();
        assert!(!lock.outputs.is_empty() && !lock.outputs[0].patches.is_empty());
        let text = lock.to_toml(None);
        let doc: DocumentMut = text.parse().unwrap();
        assert_eq!(outputs_in(&doc), Some(lock.outputs.clone()));
        assert!(files_in(&doc, &lock.files));
        let mut other = lock.clone();
        other.outputs[0].patches[0].strip = 2;
        other.files[0].sha256 = "1".repeat(64);
        assert!(!files_in(&doc, &other.files));
        let written = other.to_toml(Some(&text));
        assert!(written.contains("strip = 2\n"), "{written}");
        assert_eq!(
            Lock::parse(Path::new("lock.toml"), &written).unwrap(),
            other
        );
        // A row that is not a lock's is written anew.
        let odd: DocumentMut = "[[output]]\nfile = \"a\"\nfrom = \"b\"\nextra = 1\n"
            .parse()
            .unwrap();
        assert_eq!(outputs_in(&odd), None);
        let none: DocumentMut = "".parse().unwrap();
        assert_eq!(outputs_in(&none), Some(Vec::new()));
    }

    #[test]
    fn an_older_lock_gets_its_schema_only_when_it_changes() {
        let stamped = sample().to_toml(None);
        assert!(
            stamped.starts_with("# Written by revendor: what was vendored and verified. Do not edit by hand.\nschema = 1\n\n[upstream]\n"),
            "{stamped}"
        );
        let older = stamped.replace("schema = 1\n\n", "");
        let path = Path::new("lock.toml");
        assert_eq!(Lock::parse(path, &older).unwrap().schema.0, None);
        assert_eq!(Lock::parse(path, &stamped).unwrap().schema.0, Some(1));
        assert_eq!(
            sample().to_toml(Some(&older)),
            older,
            "nothing else changed"
        );
        let mut moved = sample();
        moved.upstreams[0].version = "v2.0.0".into();
        assert_eq!(
            moved.to_toml(Some(&older)),
            stamped.replace("v1.0.0", "v2.0.0")
        );
    }

    /// Several upstreams and images: `[[upstream]]` and `[[image]]` with
    /// names, files by upstream; a single unnamed one stays a table.
    fn named() -> Lock {
        let mut lock = sample();
        let mut second = lock.upstreams[0].clone();
        lock.upstreams[0].name = Some("a".into());
        second.name = Some("b".into());
        second.source = "git:file:///b".into();
        lock.upstreams.push(second);
        lock.files[0].upstream = Some("a".into());
        lock.files.push(LockedFile {
            upstream: Some("b".into()),
            from: "a.yml".into(),
            sha256: "5".repeat(64),
        });
        let mut image = lock.images[0].clone();
        lock.images[0].name = Some("x".into());
        image.name = Some("y".into());
        image.reference = "r/y:v1@sha256:66".into();
        lock.images.push(image);
        lock
    }

    #[test]
    fn named_upstreams_and_images_are_arrays_of_tables_and_read_back() {
        let lock = named();
        let text = lock.to_toml(None);
        assert!(
            text.contains("[[upstream]]\nname = \"a\"\nsource = \"github:o/r\"\n"),
            "{text}"
        );
        assert!(
            text.contains("[[image]]\nname = \"y\"\nreference = \"r/y:v1@sha256:66\"\n"),
            "{text}"
        );
        assert!(
            text.contains("[[file]]\nupstream = \"b\"\nfrom = \"a.yml\"\n"),
            "{text}"
        );
        let back = Lock::parse(Path::new("lock.toml"), &text).unwrap();
        assert_eq!(back, lock);
        assert_eq!(back.version(Some("b")), Some("v1.0.0"));
        assert_eq!(back.version(None), None);
        assert_eq!(
            back.file_sha256(Some("b"), "a.yml"),
            Some("5".repeat(64).as_str())
        );
        assert_eq!(back.image(Some("y")).unwrap().reference, "r/y:v1@sha256:66");
        let line = Lock::line_of_key(&text, "image", Some("y"), "reference").unwrap();
        assert!(
            text.lines().nth(line - 1).unwrap().contains("r/y:v1"),
            "{text}"
        );

        // One upstream moved: only its line changes.
        let mut newer = lock.clone();
        newer.upstreams[1].version = "v2.0.0".into();
        let out = newer.to_toml(Some(&text));
        let changed: Vec<_> = text
            .lines()
            .zip(out.lines())
            .filter(|(a, b)| a != b)
            .collect();
        assert_eq!(changed, [("version = \"v1.0.0\"", "version = \"v2.0.0\"")]);
        assert_eq!(out.lines().count(), text.lines().count());

        // Back to one unnamed upstream and image: the single tables again,
        // first in the file and under the header, as they were.
        let single = sample().to_toml(Some(&text));
        assert!(single.starts_with("# Written by revendor"), "{single}");
        assert!(
            single.contains("Do not edit by hand.\nschema = 1\n\n[upstream]\n"),
            "{single}"
        );
        assert_eq!(
            Lock::parse(Path::new("lock.toml"), &single).unwrap(),
            sample()
        );
    }

    #[test]
    fn a_pending_update_of_named_upstreams_keeps_each_target() {
        let mut lock = named();
        lock.pending = Some(Pending {
            version: None,
            versions: [("a".to_owned(), "v1.1.0".to_owned())].into(),
            conflicts: Vec::new(),
            sources: Vec::new(),
        });
        let text = lock.to_toml(None);
        assert!(
            text.contains("[pending.versions]\na = \"v1.1.0\"\n"),
            "{text}"
        );
        let back = Lock::parse(Path::new("lock.toml"), &text).unwrap();
        let pending = back.pending.unwrap();
        assert_eq!(pending.version_of(Some("a")), Some("v1.1.0"));
        assert_eq!(pending.version_of(Some("b")), None);
        assert_eq!(pending.version_of(None), None);
    }

    #[test]
    fn a_lock_without_the_later_tables_still_reads() {
        let lock = Lock::parse(
            Path::new("lock.toml"),
            "[upstream]\nsource = \"github:o/r\"\nversion = \"v1\"\n\n[[file]]\nfrom = \"a.yml\"\nsha256 = \"0000000000000000000000000000000000000000000000000000000000000000\"\n",
        )
        .unwrap();
        assert!(lock.outputs.is_empty() && lock.pending.is_none());
        assert_eq!(lock.output("t/a.yml"), None);
    }

    #[test]
    fn malformed_lock_names_its_line() {
        let e = Lock::parse(
            Path::new("upstream/lock.toml"),
            "[upstream]\nsource = \"x\"\nversion = 1\n",
        )
        .unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
    }

    #[test]
    fn a_text_parsed_again_is_the_same_lock_and_another_text_its_own() {
        let path = Path::new("upstream/lock.toml");
        let a = sample().to_toml(None);
        let mut other = sample();
        other.files[0].from = "parsed/again.yaml".into();
        let b = other.to_toml(None);
        for _ in 0..2 {
            assert_eq!(Lock::parse(path, &a).unwrap(), sample());
            assert_eq!(Lock::parse(path, &b).unwrap(), other);
        }
        let broken = a.replace("schema = 1", "schema = \"one\"");
        assert!(Lock::parse(path, &broken).is_err());
        assert!(
            Lock::parse(path, &broken).is_err(),
            "a failed parse is not remembered"
        );
        assert_eq!(Lock::parse(path, &a).unwrap(), sample());
    }
}
