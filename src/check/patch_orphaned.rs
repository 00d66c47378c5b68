//! `patch-orphaned`: a patch file in an image's build context that no
//! `[[patch]]` names.
//!
//! cozystack's Dockerfiles copy `patches/` into the build and run `git apply
//! /patches/*.diff`: every `.diff` there is applied, declared or not. A source
//! `[[patch]]` deleted from vendor.toml whose file stays is still in the
//! image.
//!
//! 1. The directories looked at: each image's `<context>/patches/`, and the
//!    directory of each source `[[patch]]` file; only the files directly in
//!    them (what `/patches/*.diff` matches), ending in `.diff` or `.patch`.
//! 2. A file that no `[[patch]]` names is an orphan. When the lock records a
//!    patch that vendor.toml no longer has, with the file's sha256, the
//!    orphan is that removed patch: `update` and `render` delete it
//!    ([`orphans`]); any other orphan is left to a person.

use std::path::Path;

use super::{Check, Finding, Id, Input, Sink};
use crate::config::lock::Lock;
use crate::config::{AppliesTo, Config};
use crate::error::Result;
use crate::image::Digest;
use crate::paths;

/// `patch-orphaned`.
pub const PATCH_ORPHANED: Id = Id {
    name: "patch-orphaned",
    doc: "\
### What
A `.diff` or `.patch` file in an image's build context (`<context>/patches/`,
or the directory of a source patch) that no `[[patch]]` names. `update` and
`render` delete the file of a source `[[patch]]` removed from vendor.toml when
it is still as the lock verified it, and say so; this reports what is left.

### Why
The image recipe applies every patch file it finds (`git apply
/patches/*.diff`), declared or not: a patch deleted from vendor.toml but not
from the context is still built into the image, and nothing else says so.

### Example
```text
patch-orphaned
  images/kubeovn/patches/northd_probe.diff:1: error: `images/kubeovn/patches/northd_probe.diff` is in the build context of image `ghcr.io/cozystack/cozystack/kubeovn`, and no [[patch]] names it (fix: delete it, or declare it as a [[patch]] with applies-to = \"source\")
```
",
};

pub(super) const CHECK: Check = Check {
    name: "patch_orphaned",
    ids: &[PATCH_ORPHANED],
    online_only: false,
    run,
};

/// A patch file in a build context that no `[[patch]]` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Orphan {
    /// The file, package-relative.
    pub file: String,
    /// The directory whose image builds it: the image's repository, or the
    /// source patches' directory when no image's context holds it.
    pub context: String,
    /// The name of the patch the lock verified with this file's sha256 and
    /// vendor.toml no longer has: a removed source patch, safe to delete.
    pub removed: Option<String>,
}

fn run(input: &Input<'_>, sink: &mut Sink) -> Result<()> {
    for orphan in orphans(input.config, Some(input.lock), &input.ctx.root)? {
        sink.push(
            Finding::error(
                PATCH_ORPHANED.name,
                &orphan.file,
                1,
                format!(
                    "`{}` is in the build context of {}, and no [[patch]] names it",
                    orphan.file, orphan.context
                ),
            )
            .fix(match &orphan.removed {
                Some(_) => "run `revendor render`, which deletes the removed patch's file".into(),
                None => "delete it, or declare it as a [[patch]] with applies-to = \"source\""
                    .to_owned(),
            }),
        );
    }
    Ok(())
}

/// Every orphaned patch file of the package at `root`, sorted, each with the
/// removed patch it is when `lock` says so.
pub fn orphans(config: &Config, lock: Option<&Lock>, root: &Path) -> Result<Vec<Orphan>> {
    let mut dirs: Vec<(String, String)> = config
        .images
        .iter()
        .map(|i| {
            let dir = format!("{}/patches/", i.context.trim_end_matches('/'));
            (dir, format!("image `{}`", i.repository))
        })
        .collect();
    for p in config.patches_for(AppliesTo::Source) {
        let dir = match p.file.rsplit_once('/') {
            Some((dir, _)) => format!("{dir}/"),
            None => String::new(),
        };
        if !dirs.iter().any(|(d, _)| *d == dir) {
            dirs.push((dir.clone(), format!("the source patches in `{dir}`")));
        }
    }
    let mut out: Vec<Orphan> = Vec::new();
    for (dir, context) in dirs {
        for file in paths::list(root, &dir)? {
            let name = &file[dir.len()..];
            let is_patch = name.ends_with(".diff") || name.ends_with(".patch");
            if name.contains('/') || !is_patch || config.patches.iter().any(|p| p.file == file) {
                continue;
            }
            if out.iter().any(|o| o.file == file) {
                continue;
            }
            let removed = lock.and_then(|l| removed_patch(config, l, root, &file).transpose());
            out.push(Orphan {
                file,
                context: context.clone(),
                removed: removed.transpose()?,
            });
        }
    }
    out.sort_by(|a, b| a.file.cmp(&b.file));
    Ok(out)
}

impl Orphan {
    /// The sentence `update` and `render` say when they delete a removed
    /// source patch's file.
    pub fn deleted_note(&self) -> String {
        format!(
            "patch `{}` is no longer in vendor.toml: deleted `{}`, which the image build would still apply",
            self.removed.as_deref().unwrap_or_default(),
            self.file
        )
    }
}

/// The orphans that are removed patches' files, which `update` and
/// `render` delete.
pub fn removed_patch_files(config: &Config, lock: &Lock, root: &Path) -> Result<Vec<Orphan>> {
    let mut out = orphans(config, Some(lock), root)?;
    out.retain(|o| o.removed.is_some());
    Ok(out)
}

/// The lock's patch that vendor.toml no longer has and whose sha256 is
/// `file`'s, if any.
fn removed_patch(config: &Config, lock: &Lock, root: &Path, file: &str) -> Result<Option<String>> {
    let gone: Vec<_> = lock
        .patches
        .iter()
        .filter(|l| !config.patches.iter().any(|p| p.name == l.name))
        .collect();
    if gone.is_empty() {
        return Ok(None);
    }
    let sha = Digest::of(&paths::read(&root.join(file))?);
    Ok(gone
        .iter()
        .find(|l| l.sha256 == sha.hex())
        .map(|l| l.name.clone()))
}
