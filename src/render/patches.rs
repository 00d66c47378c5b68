//! The patches of a package, parsed, with their file sections named by
//! [`SectionId`].
//!
//! A vendored file's patches are walked by [`Stack`]; this file
//! loads them, says which sections target which vendored file, and is the only
//! place a section is replaced ([`Patches::refresh_section`]).

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use crate::config::{AppliesTo, Config, ConfigError, Vendor};
use crate::error::{Error, Result};
use crate::image::Digest;
use crate::patch::{self, FilePatch, PatchSet};

use super::Stack;

/// One `[[patch]]` file, parsed.
#[derive(Debug, Clone)]
pub struct LoadedPatch {
    /// Its name in vendor.toml.
    pub name: String,
    /// Its file, relative to the package.
    pub file: String,
    /// The upstream it patches (`[[patch]] upstream`, resolved).
    pub upstream: Option<String>,
    /// `-p` level.
    pub strip: usize,
    /// The file's bytes as read.
    pub bytes: Vec<u8>,
    /// sha256 of `bytes`, for the lock.
    pub sha256: String,
    /// The parsed patch.
    pub set: PatchSet,
}

/// A hunk header of a loaded patch whose counts did not match its body,
/// read as its body says ([`Patches::load_recounted`]).
#[derive(Debug, Clone)]
pub struct RecountedHunk {
    /// The section holding the hunk.
    pub id: SectionId,
    /// The hunk, its header as written and the counts of its body.
    pub found: patch::Recounted,
}

/// Names one file section of one patch of a [`Patches`]: which `[[patch]]`
/// (in vendor.toml order) and which of its file sections.
///
/// Only [`Patches`] makes one, so an id always names a section that exists
/// in the `Patches` it came from; it means nothing in another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct SectionId {
    patch: usize,
    section: usize,
}

impl SectionId {
    /// Which file section of its patch this is (0-based), as the patch file
    /// lists them: what a caller that rewrites the file names it by.
    pub fn index(&self) -> usize {
        self.section
    }
}

/// Refuses, before anything is applied, a patch whose sections can never
/// apply as written: a binary section, a `strip` level that leaves no name,
/// or a name that climbs out of the tree with `..` or starts at `/`. Each
/// is named at the line that shows it, in the patch file or in vendor.toml.
fn check_sections(
    config: &Config,
    p: &crate::config::Patch,
    path: &std::path::Path,
    bytes: &[u8],
    set: &PatchSet,
) -> Result<()> {
    let mut cursor = Line::first(bytes);
    for fp in &set.files {
        let header = fp.new_line.as_deref().or(fp.old_line.as_deref());
        let line = header
            .and_then(|h| cursor.find(|l| l == h))
            .or_else(|| cursor.find(|l| l.starts_with(b"diff --git ")))
            .unwrap_or(cursor);
        cursor = line.next();
        let at = line.number;
        let name = fp.name();
        if fp.is_binary() {
            let binary = line
                .find(|l| l.starts_with(b"GIT binary patch") || l.starts_with(b"Binary files "))
                .unwrap_or(line);
            return Err(ConfigError::at(
                path,
                Some(binary.number + 1),
                format!("`{name}` is a binary patch; revendor applies text patches only"),
            )
            .hint("vendor the file as it is, or change it with a text patch (`git diff` without --binary)")
            .into());
        }
        let Some(target) = fp.target_path(p.strip) else {
            let parts = name.split('/').filter(|c| !c.is_empty()).count();
            return Err(ConfigError::at(
                config.path("vendor.toml"),
                Some(p.line),
                format!(
                    "[[patch]] `{}` has strip = {}, but `{name}` ({}:{}) has only {parts} path components, so no file is left to patch",
                    p.name,
                    p.strip,
                    p.file,
                    at + 1
                ),
            )
            .hint("set `strip` to the number of leading directories to drop: 1 for git's a/ and b/")
            .into());
        };
        let climbs = std::path::Path::new(&target).components().any(|c| {
            !matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        });
        let vendored_file = config
            .vendor
            .iter()
            .any(|v| !v.from.ends_with('/') && (v.from == target || v.to == target));
        if p.applies_to == AppliesTo::Vendor && fp.is_delete() && vendored_file {
            return Err(ConfigError::at(
                path,
                Some(at + 1),
                format!("`{name}` deletes `{target}`, the file a [[vendor]] renders"),
            )
            .hint("to stop vendoring it, remove its [[vendor]] from vendor.toml")
            .into());
        }
        if climbs {
            return Err(ConfigError::at(
                path,
                Some(at + 1),
                format!("`{name}` leaves the tree it patches (`..` or an absolute path)"),
            )
            .hint("name the file by its path inside the vendored tree")
            .into());
        }
    }
    Ok(())
}

/// A line of a patch file, by its 0-based number and where it starts: what
/// [`check_sections`] looks for each section's header from, line by line from
/// the previous one, without splitting the whole file first (issue 23). Past
/// the last line it is empty.
#[derive(Debug, Clone, Copy)]
struct Line<'a> {
    bytes: &'a [u8],
    number: usize,
    at: usize,
}

impl<'a> Line<'a> {
    fn first(bytes: &'a [u8]) -> Line<'a> {
        Line {
            bytes,
            number: 0,
            at: 0,
        }
    }

    /// The line's bytes, with its newline.
    fn text(&self) -> &'a [u8] {
        let rest = &self.bytes[self.at..];
        &rest[..memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1)]
    }

    /// The line after it (past the last line, an empty one).
    fn next(&self) -> Line<'a> {
        Line {
            number: self.number + 1,
            at: self.at + self.text().len(),
            ..*self
        }
    }

    /// The first line from this one on whose bytes `needle` accepts.
    fn find(self, needle: impl Fn(&[u8]) -> bool) -> Option<Line<'a>> {
        let mut line = self;
        while line.at < line.bytes.len() {
            if needle(line.text()) {
                return Some(line);
            }
            line = line.next();
        }
        None
    }
}

/// All patches of one kind of a package.
#[derive(Debug, Clone)]
pub struct Patches {
    /// In vendor.toml order.
    loaded: Vec<LoadedPatch>,
    /// Which sections target which path, built by the first
    /// [`Patches::stack`] and dropped when a section is added or renamed.
    targets: OnceLock<Targets>,
}

/// The sections of each upstream's patches by the path each targets after
/// its patch's `strip`, in vendor.toml order: every header is read once per
/// run, not once per vendored file, which made a directory package of
/// 10,000 files quadratic (issue 23).
type Targets = HashMap<Option<String>, HashMap<String, Vec<SectionId>>>;

impl Patches {
    /// Reads and parses every `applies-to = "vendor"` patch.
    pub fn load(config: &Config) -> Result<Patches> {
        Self::load_kind(config, AppliesTo::Vendor)
    }

    /// Reads and parses every patch of one kind.
    pub fn load_kind(config: &Config, kind: AppliesTo) -> Result<Patches> {
        Ok(Self::read(config, kind, false, |p| {
            crate::paths::read(&config.path(&p.file)).map(Some)
        })?
        .0)
    }

    /// [`Patches::load`] for `--adopt-edits`: a `[[patch]]` whose file does
    /// not exist yet is an empty patch, which the hand edits of a vendored
    /// file no patch targets start ([`Patches::start_section`]).
    pub fn load_starting(config: &Config) -> Result<Patches> {
        let found = Self::load_with(config, AppliesTo::Vendor, |p| {
            crate::paths::read_opt(&config.path(&p.file))
        })?;
        let mut found = found.loaded.into_iter().peekable();
        let mut loaded = Vec::new();
        for p in config.patches_for(AppliesTo::Vendor) {
            match found.next_if(|l| l.name == p.name) {
                Some(l) => loaded.push(l),
                None => loaded.push(LoadedPatch {
                    name: p.name.clone(),
                    file: p.file.clone(),
                    upstream: p.upstream.clone(),
                    strip: p.strip,
                    bytes: Vec::new(),
                    sha256: Digest::of(b"").hex().to_owned(),
                    set: PatchSet {
                        preamble: Vec::new(),
                        files: Vec::new(),
                        trailer: Vec::new(),
                    },
                }),
            }
        }
        Ok(Patches::from_loaded(loaded))
    }

    /// [`Patches::load`] reading hunk headers as `git apply --recount` does
    /// ([`patch::parse_recounted`]), with every header whose counts lie:
    /// for adopting a package only, whose result is checked against the
    /// committed files.
    pub fn load_recounted(config: &Config) -> Result<(Patches, Vec<RecountedHunk>)> {
        Self::read(config, AppliesTo::Vendor, true, |p| {
            crate::paths::read(&config.path(&p.file)).map(Some)
        })
    }

    /// Parses every patch of one kind from the bytes `read` gives for it,
    /// leaving out those it gives none for: how `pr` reads the patches of the
    /// base commit, which are in git, not on disk.
    pub fn load_with(
        config: &Config,
        kind: AppliesTo,
        read: impl FnMut(&crate::config::Patch) -> Result<Option<Vec<u8>>>,
    ) -> Result<Patches> {
        Ok(Self::read(config, kind, false, read)?.0)
    }

    fn read(
        config: &Config,
        kind: AppliesTo,
        recount: bool,
        mut read: impl FnMut(&crate::config::Patch) -> Result<Option<Vec<u8>>>,
    ) -> Result<(Patches, Vec<RecountedHunk>)> {
        let mut loaded = Vec::new();
        let mut recounted = Vec::new();
        for p in config.patches_for(kind) {
            let path = config.path(&p.file);
            let Some(bytes) = read(p)? else {
                continue;
            };
            let parsed = if recount {
                patch::parse_recounted(&bytes)
            } else {
                patch::parse(&bytes).map(|set| (set, Vec::new()))
            };
            let (set, found) = parsed.map_err(|e| {
                // The parser's message starts with "line N: "; the line goes
                // into the location instead.
                let text = e.to_string();
                let text = text.trim_start_matches(&format!("line {}: ", e.line()));
                let hint = match e {
                    patch::ParseError::NoHunks { .. } | patch::ParseError::NothingChanged { .. } => {
                        "a patch without hunks changes nothing: put its hunks back (regenerate it with `diff -u` or `git diff`), or remove its [[patch]] from vendor.toml"
                    }
                    _ => "regenerate the patch with `diff -u` or `git diff`",
                };
                Error::Config(
                    ConfigError::at(&path, Some(e.line()), format!("malformed patch: {text}"))
                        .hint(hint),
                )
            })?;
            check_sections(config, p, &path, &bytes, &set)?;
            recounted.extend(found.into_iter().map(|found| RecountedHunk {
                id: SectionId {
                    patch: loaded.len(),
                    section: found.file,
                },
                found,
            }));
            loaded.push(LoadedPatch {
                name: p.name.clone(),
                file: p.file.clone(),
                upstream: p.upstream.clone(),
                strip: p.strip,
                sha256: Digest::of(&bytes).hex().to_owned(),
                bytes,
                set,
            });
        }
        Ok((Patches::from_loaded(loaded), recounted))
    }

    /// Patches already loaded, in the order given: how [`super::origin`] puts
    /// a removed patch back among the others.
    pub(super) fn from_loaded(loaded: Vec<LoadedPatch>) -> Patches {
        Patches {
            loaded,
            targets: OnceLock::new(),
        }
    }

    /// Every patch, in vendor.toml order.
    pub fn loaded(&self) -> &[LoadedPatch] {
        &self.loaded
    }

    /// Every patch, in vendor.toml order, for a caller that edits them as
    /// whole source trees rather than as per-file stacks.
    pub fn into_loaded(self) -> Vec<LoadedPatch> {
        self.loaded
    }

    /// Sections that target none of `files` (the vendored files,
    /// [`super::files`]): a patch naming a file that is not vendored is a
    /// configuration error.
    pub fn check_targets(&self, config: &Config, files: &[Vendor]) -> Result<()> {
        let named: HashSet<(&Option<String>, &str)> = files
            .iter()
            .flat_map(|v| [(&v.upstream, v.from.as_str()), (&v.upstream, v.to.as_str())])
            .collect();
        for p in &self.loaded {
            for fp in &p.set.files {
                let target = fp.target_path(p.strip).unwrap_or_default();
                if !named.contains(&(&p.upstream, target.as_str())) {
                    let inside = config
                        .vendor
                        .iter()
                        .any(|v| v.upstream == p.upstream && v.renders(&target));
                    let what = if inside {
                        "which the vendored directory does not hold at the locked version"
                    } else {
                        "which no [[vendor]] names"
                    };
                    return Err(ConfigError::at(
                        config.path(&p.file),
                        None,
                        format!(
                            "patch `{}` targets `{target}` (after strip {}), {what}",
                            p.name, p.strip
                        ),
                    )
                    .hint("fix `strip` or the paths in the patch, or add the file to [[vendor]]")
                    .into());
                }
            }
        }
        Ok(())
    }

    /// The patch stack of `vendor`: every section of a patch of its
    /// upstream that targets it (by its upstream path or its rendered path),
    /// in vendor.toml order, over its pristine copy at the locked `version`.
    pub fn stack<'a>(&'a self, vendor: &'a Vendor, version: &'a str) -> Stack<'a> {
        let targets = self.targets.get_or_init(|| self.targets());
        let mut ids = Vec::new();
        if let Some(paths) = targets.get(&vendor.upstream) {
            for path in [&vendor.from, &vendor.to] {
                ids.extend(paths.get(path.as_str()).into_iter().flatten());
            }
        }
        ids.sort_unstable();
        ids.dedup();
        Stack::new(self, vendor, version, ids)
    }

    /// Every section with a target, by its upstream and target path.
    fn targets(&self) -> Targets {
        let mut targets = Targets::new();
        for id in self.sections() {
            let (p, fp) = self.section(id);
            if let Some(target) = fp.target_path(p.strip) {
                let paths = targets.entry(p.upstream.clone()).or_default();
                paths.entry(target).or_default().push(id);
            }
        }
        targets
    }

    /// Every section of every patch, in order: for a caller that walks
    /// patches on their own rather than per vendored file (source patches).
    pub fn sections(&self) -> impl Iterator<Item = SectionId> + '_ {
        self.loaded.iter().enumerate().flat_map(|(patch, p)| {
            (0..p.set.files.len()).map(move |section| SectionId { patch, section })
        })
    }

    /// One section and the patch holding it.
    pub fn section(&self, id: SectionId) -> (&LoadedPatch, &FilePatch) {
        let p = &self.loaded[id.patch];
        (p, &p.set.files[id.section])
    }

    /// Replaces a section by one that turns `before` into `after` with exact
    /// hunks, in the section's header style: how `patch refresh`, `update`'s
    /// carry and `--adopt-edits` rewrite a patch.
    pub fn refresh_section(&mut self, id: SectionId, before: &[u8], after: &[u8]) {
        let strip = self.loaded[id.patch].strip;
        let fp = &mut self.loaded[id.patch].set.files[id.section];
        let target = fp.target_path(strip);
        *fp = patch::refresh(fp, before, after);
        if fp.target_path(strip) != target {
            self.targets = OnceLock::new();
        }
    }

    /// The patch that the hand edits of `vendor` start when no patch targets
    /// it: the one patch of its upstream whose file did not exist
    /// ([`Patches::load_starting`]; the edits of several files may start it). `Err` names the candidates
    /// when there are several.
    pub fn started(&self, vendor: &Vendor) -> std::result::Result<Option<usize>, Vec<String>> {
        let empty: Vec<usize> = (0..self.loaded.len())
            .filter(|&i| {
                let p = &self.loaded[i];
                p.bytes.is_empty() && p.upstream == vendor.upstream
            })
            .collect();
        match empty.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(*one)),
            several => Err(several
                .iter()
                .map(|&i| self.loaded[i].name.clone())
                .collect()),
        }
    }

    /// Adds to patch `patch` a section turning `before` into `after` for
    /// `vendor`'s rendered path, with git's `a/` and `b/` (strip 1) or no
    /// prefix (strip 0); `None` for another strip, whose prefix revendor
    /// cannot know.
    pub fn start_section(
        &mut self,
        patch: usize,
        vendor: &Vendor,
        before: &[u8],
        after: &[u8],
    ) -> Option<SectionId> {
        let p = &mut self.loaded[patch];
        let (old, new) = match p.strip {
            0 => (String::new(), String::new()),
            1 => ("a/".to_owned(), "b/".to_owned()),
            _ => return None,
        };
        let template = FilePatch {
            header: Vec::new(),
            old_line: Some(format!("--- {old}{}\n", vendor.to).into_bytes()),
            new_line: Some(format!("+++ {new}{}\n", vendor.to).into_bytes()),
            hunks: Vec::new(),
        };
        p.set.files.push(patch::refresh(&template, before, after));
        self.targets = OnceLock::new();
        Some(SectionId {
            patch,
            section: p.set.files.len() - 1,
        })
    }

    /// The 1-based line of hunk `hunk` (0-based) of a section in its patch
    /// file: its `@@` line, or 1 when it cannot be found. Findings about a
    /// section point there.
    pub fn hunk_line(&self, id: SectionId, hunk: usize) -> usize {
        let p = &self.loaded[id.patch];
        let before: usize = p.set.files[..id.section]
            .iter()
            .map(|f| f.hunks.len())
            .sum();
        p.bytes
            .split(|&b| b == b'\n')
            .enumerate()
            .filter(|(_, l)| l.starts_with(b"@@ -"))
            .nth(before + hunk)
            .map_or(1, |(i, _)| i + 1)
    }

    /// Patches parsed from `(name, text)` pairs, `-p1`, for the tests of the
    /// stack.
    #[cfg(test)]
    pub(super) fn parsed(patches: &[(&str, &str)]) -> Patches {
        let loaded = patches
            .iter()
            .map(|(name, text)| LoadedPatch {
                name: (*name).to_owned(),
                file: format!("{name}.patch"),
                upstream: None,
                strip: 1,
                bytes: text.as_bytes().to_vec(),
                sha256: Digest::of(text.as_bytes()).hex().to_owned(),
                set: patch::parse(text.as_bytes()).unwrap(),
            })
            .collect();
        Patches::from_loaded(loaded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_FILES: &str = "--- a/a.yml\n+++ b/a.yml\n@@ -1 +1 @@\n-a\n+A\n\
                             --- a/b.yml\n+++ b/b.yml\n@@ -1 +1 @@\n-b\n+B\n@@ -3 +3 @@\n-d\n+D\n";

    #[test]
    fn hunk_lines_count_in_the_patch_file() {
        let p = Patches::parsed(&[("p", TWO_FILES)]);
        let b = SectionId {
            patch: 0,
            section: 1,
        };
        assert_eq!(p.hunk_line(b, 0), 8);
        assert_eq!(p.hunk_line(b, 1), 11);
        assert_eq!(p.hunk_line(b, 2), 1);
    }

    #[test]
    fn a_refreshed_section_turns_before_into_after_exactly() {
        let mut p = Patches::parsed(&[("p", TWO_FILES)]);
        let a = SectionId {
            patch: 0,
            section: 0,
        };
        p.refresh_section(a, b"x\na\n", b"x\nA\n");
        let (_, fp) = p.section(a);
        let applied = patch::apply(fp, b"x\na\n").unwrap();
        assert_eq!(applied.content, b"x\nA\n");
        assert_eq!(applied.offsets, [0]);
    }
}
