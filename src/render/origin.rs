//! What each rendered output is made from, as the lock remembers it
//! (`[[output]]`), and what removing a `[[vendor]]` or a `[[patch]]` from
//! vendor.toml leaves behind.
//!
//! 1. [`outputs`] gives the lock's record: each output's upstream file and
//!    the vendor patches applied to it, in order.
//! 2. [`Removed::find`] compares that record with vendor.toml: an output
//!    that no `[[vendor]]` renders any more, a patch that no `[[patch]]`
//!    names any more.
//! 3. `render` and `update` undo them: the output and its pristine copy are
//!    deleted, or the output is rendered without the patch. [`restore`] puts
//!    a removed patch back into the stack that rendered the file on disk, so
//!    `update` tells the patch's changes from hand edits. `check` reports
//!    what is left as `render-drift`.
//!
//! A patch counts as removed when neither its name nor its file is in
//! vendor.toml any more: renaming a `[[patch]]` does not remove it.

use std::collections::HashSet;

use crate::config::lock::{Lock, LockedOutput, OutputPatch};
use crate::config::{AppliesTo, Config, Vendor};
use crate::error::{Error, Result};
use crate::image::Digest;
use crate::patch;

use super::{LoadedPatch, Patches};

/// The `[[output]]` record of every vendored file ([`super::files`]), as
/// vendor.toml and its vendor patches stand; a file its patches delete
/// renders nothing and has no record.
pub fn outputs(files: &[Vendor], patches: &Patches) -> Vec<LockedOutput> {
    files
        .iter()
        .filter(|vendor| !patches.stack(vendor, "").deletes())
        .map(|vendor| {
            let mut applied: Vec<OutputPatch> = Vec::new();
            // The version only names errors of a walk; nothing is walked here.
            for &id in patches.stack(vendor, "").sections() {
                let (p, _) = patches.section(id);
                if !applied.iter().any(|a| a.name == p.name) {
                    applied.push(OutputPatch {
                        name: p.name.clone(),
                        file: p.file.clone(),
                        strip: p.strip,
                    });
                }
            }
            LockedOutput {
                file: vendor.to.clone(),
                upstream: vendor.upstream.clone(),
                from: vendor.from.clone(),
                patches: applied,
            }
        })
        .collect()
}

/// The upstream files `files` read, by upstream and path: one set to look
/// each locked file up in, not a search of every file per locked file, which
/// a directory of 10,000 files made quadratic (issue 23).
pub fn upstream_files(files: &[Vendor]) -> HashSet<(&Option<String>, &str)> {
    files
        .iter()
        .map(|v| (&v.upstream, v.from.as_str()))
        .collect()
}

/// What the lock's `[[output]]` record has that vendor.toml no longer does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Removed<'a> {
    /// Outputs that no `[[vendor]]` renders any more.
    pub outputs: Vec<&'a LockedOutput>,
    /// `(output, patch)`: a patch the output was rendered with that no
    /// `[[patch]]` names any more.
    pub patches: Vec<(&'a LockedOutput, &'a OutputPatch)>,
}

impl<'a> Removed<'a> {
    /// Compares the lock's record with vendor.toml, whose vendored files
    /// at the locked version are `files` ([`super::files`]); nothing for a
    /// lock written before the record existed.
    pub fn find(config: &Config, files: &[Vendor], lock: &'a Lock) -> Removed<'a> {
        // Sets built once: a directory of 10,000 files has as many outputs
        // to look up, and a search of `files` for each was quadratic.
        let rendered: HashSet<&str> = files.iter().map(|v| v.to.as_str()).collect();
        let (mut names, mut patch_files) = (HashSet::new(), HashSet::new());
        for c in config.patches_for(AppliesTo::Vendor) {
            names.insert(c.name.as_str());
            patch_files.insert(c.file.as_str());
        }
        let mut removed = Removed::default();
        for output in &lock.outputs {
            if !rendered.contains(output.file.as_str()) {
                removed.outputs.push(output);
                continue;
            }
            for p in &output.patches {
                if !names.contains(p.name.as_str()) && !patch_files.contains(p.file.as_str()) {
                    removed.patches.push((output, p));
                }
            }
        }
        removed
    }

    /// Whether vendor.toml lost nothing the lock knows.
    pub fn is_empty(&self) -> bool {
        self.outputs.is_empty() && self.patches.is_empty()
    }

    /// The removed patches output `file` was rendered with, in order.
    pub fn patches_of(&self, file: &str) -> Vec<&'a OutputPatch> {
        self.patches
            .iter()
            .filter(|(o, _)| o.file == file)
            .map(|&(_, p)| p)
            .collect()
    }

    /// The files to delete: each removed output, and its pristine copy
    /// unless one of `files` still reads the same upstream file.
    pub fn deletions(&self, files: &[Vendor]) -> Vec<String> {
        let read = upstream_files(files);
        let mut out = Vec::new();
        for o in &self.outputs {
            out.push(o.file.clone());
            if !read.contains(&(&o.upstream, o.from.as_str())) {
                out.push(o.pristine());
            }
        }
        out
    }

    /// One sentence per removal, for the command's summary.
    pub fn notes(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .patches
            .iter()
            .map(|(o, p)| {
                format!(
                    "patch `{}` is no longer in vendor.toml: its changes to {} were reverted",
                    p.name, o.file
                )
            })
            .collect();
        out.extend(self.outputs.iter().map(|o| {
            format!(
                "`{}` is no longer vendored (no [[vendor]] renders `{}`): deleted it and its pristine copy",
                o.file, o.from
            )
        }));
        out
    }
}

/// `lock` once the removals are undone: `outputs` as the record, and no
/// pristine copy (of `files`, the vendored files) or patch that vendor.toml
/// no longer names. How `render` records them; `update` writes a whole new
/// lock anyway.
pub fn forget_removed(
    lock: &Lock,
    config: &Config,
    files: &[Vendor],
    outputs: Vec<LockedOutput>,
) -> Lock {
    let mut next = lock.clone();
    let read = upstream_files(files);
    next.files
        .retain(|f| read.contains(&(&f.upstream, f.from.as_str())));
    next.patches
        .retain(|p| config.patches.iter().any(|c| c.name == p.name));
    next.outputs = outputs;
    next
}

/// A removed patch of upstream `upstream` (the one of the output it was
/// applied to), parsed from `bytes` (its file as the lock verified it).
pub fn load_removed(
    p: &OutputPatch,
    upstream: Option<String>,
    bytes: Vec<u8>,
) -> Result<LoadedPatch> {
    let set = patch::parse(&bytes).map_err(|e| Error::Render {
        file: p.file.clone(),
        line: Some(e.line()),
        message: format!(
            "patch `{}` (no longer in vendor.toml) is malformed: {e}",
            p.name
        ),
    })?;
    Ok(LoadedPatch {
        name: p.name.clone(),
        file: p.file.clone(),
        upstream,
        strip: p.strip,
        sha256: Digest::of(&bytes).hex().to_owned(),
        bytes,
        set,
    })
}

/// `patches` with the `removed` ones put back where `record` had them
/// (each after the patch it followed): the stack that rendered the file on
/// disk.
pub fn restore(patches: &Patches, record: &LockedOutput, removed: Vec<LoadedPatch>) -> Patches {
    let mut loaded = patches.loaded().to_vec();
    let mut at = 0;
    for rp in &record.patches {
        if let Some(i) = loaded
            .iter()
            .position(|l| l.name == rp.name || l.file == rp.file)
        {
            at = i + 1;
        } else if let Some(r) = removed.iter().find(|r| r.name == rp.name) {
            loaded.insert(at, r.clone());
            at += 1;
        }
    }
    Patches::from_loaded(loaded)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    const TOML: &str = "[upstream]\ngithub = \"o/r\"\nversion = \"v1\"\n\
        [[vendor]]\nfrom = \"a.yml\"\nto = \"t/a.yml\"\n\
        [[patch]]\nname = \"first\"\nfile = \"first.patch\"\napplies-to = \"vendor\"\nstrip = 1\n";

    fn record(file: &str, from: &str, patches: &[&str]) -> LockedOutput {
        LockedOutput {
            file: file.into(),
            upstream: None,
            from: from.into(),
            patches: patches
                .iter()
                .map(|n| OutputPatch {
                    name: (*n).into(),
                    file: format!("{n}.patch"),
                    strip: 1,
                })
                .collect(),
        }
    }

    #[test]
    fn removed_outputs_and_patches_are_found_and_said() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("first.patch"), "").unwrap();
        let config = Config::parse(dir.path(), Path::new("vendor.toml"), TOML).unwrap();
        let lock = Lock {
            outputs: vec![
                record("t/a.yml", "a.yml", &["first", "second"]),
                record("t/b.yml", "b.yml", &[]),
            ],
            ..Lock::default()
        };
        let removed = Removed::find(&config, &config.vendor, &lock);
        assert_eq!(removed.outputs, [&lock.outputs[1]]);
        assert_eq!(removed.patches_of("t/a.yml"), [&lock.outputs[0].patches[1]]);
        assert_eq!(
            removed.deletions(&config.vendor),
            ["t/b.yml", "upstream/b.yml"]
        );
        assert_eq!(
            removed.notes(),
            [
                "patch `second` is no longer in vendor.toml: its changes to t/a.yml were reverted",
                "`t/b.yml` is no longer vendored (no [[vendor]] renders `b.yml`): deleted it and its pristine copy"
            ]
        );
        assert!(Removed::find(&config, &config.vendor, &Lock::default()).is_empty());
    }

    #[test]
    fn a_removed_patch_goes_back_after_the_one_it_followed() {
        let p = Patches::parsed(&[
            (
                "zero",
                "--- a/t/a.yml\n+++ b/t/a.yml\n@@ -1 +1 @@\n-a\n+A\n",
            ),
            (
                "second",
                "--- a/t/a.yml\n+++ b/t/a.yml\n@@ -2 +2 @@\n-b\n+B\n",
            ),
        ]);
        let gone = load_removed(
            &OutputPatch {
                name: "first".into(),
                file: "first.patch".into(),
                strip: 1,
            },
            None,
            b"--- a/t/a.yml\n+++ b/t/a.yml\n@@ -3 +3 @@\n-c\n+C\n".to_vec(),
        )
        .unwrap();
        let restored = restore(
            &p,
            &record("t/a.yml", "a.yml", &["zero", "first", "second"]),
            vec![gone],
        );
        let names: Vec<&str> = restored.loaded().iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["zero", "first", "second"]);
    }
}
