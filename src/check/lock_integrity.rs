//! `lock-integrity`: the files the lock vouches for are the files on disk.
//!
//! The lock records the sha256 of each pristine copy under `upstream/` and of
//! each patch file as `update` (or `patch refresh`) verified it. Everything
//! else `check` does trusts those files, so a copy edited by hand, a patch
//! changed without being verified, or a file the lock does not know is
//! reported first.

use super::{Check, Finding, Id, Input, Sink};
use crate::config::lock::LOCK_PATH;
use crate::error::Result;
use crate::image::Digest;
use crate::upstream::Pristine;

/// `lock-integrity`.
pub const LOCK_INTEGRITY: Id = Id {
    name: "lock-integrity",
    doc: "\
### What
A pristine copy under `upstream/` does not have the sha256 the lock records
for it (edited, missing, or not in the lock), a patch file is not the one
that was verified (edited since the last `update` or `patch refresh`),
vendor.toml's `[upstream]` names another repository than the lock's
`source` (pointed at a fork, say), an `[[upstream]]` the lock has nothing
of yet, or the lock records a `[[file]]` or `[[patch]]` twice (a hand edit
or a bad merge).

A moved source is fixed by `revendor update`: it treats the new repository
as a new upstream, the locked copies (from the old one) as the merge base,
and fetches the release from the new one even at the same version, so a
fork's own changes arrive like an upstream change and the lock then names
the fork. `render` and `patch refresh` refuse to work until then.

### Why
The lock is the memory of what was fetched and verified. A pristine copy
edited in place would make every later render quietly carry the edit as if
upstream had made it; a patch edited without being re-verified may not apply,
or may apply somewhere else.

### Example
```text
lock-integrity
  patches/customize-deployment.patch:1: error: `patches/customize-deployment.patch` has sha256 3f1c…, but patch `customize-deployment` was verified with 9a0b… (fix: run `revendor patch refresh customize-deployment` to verify it against the locked upstream and record it)
```
",
};

pub(super) const CHECK: Check = Check {
    name: "lock_integrity",
    ids: &[LOCK_INTEGRITY],
    online_only: false,
    run: check,
};

/// In order: the upstreams against the lock's, the vendored directories,
/// the pristine copies, the patch files, then entries the lock records twice.
fn check(input: &Input<'_>, sink: &mut Sink) -> Result<()> {
    upstreams(input, sink);
    directories(input, sink);
    pristine_copies(input, sink)?;
    patches(input, sink)?;
    duplicates(input, sink)
}

/// Each upstream of vendor.toml is in the lock, from the source it names.
fn upstreams(input: &Input<'_>, sink: &mut Sink) {
    let id = LOCK_INTEGRITY.name;
    for up in &input.config.upstreams {
        let Some(locked) = input.lock.upstream(up.name.as_deref()) else {
            sink.push(
                Finding::error(
                    id,
                    "vendor.toml",
                    up.source_line,
                    format!(
                        "the lock has no upstream `{}`: nothing of it was verified",
                        up.label()
                    ),
                )
                .fix("run `revendor update` to vendor it"),
            );
            continue;
        };
        if !up.source.is(&locked.source) {
            sink.push(
                Finding::error(
                    id,
                    "vendor.toml",
                    up.source_line,
                    format!(
                        "vendor.toml names {}, but the lock vendored {}: every pristine copy, patch and pin was verified against the other repository",
                        up.source.describe(),
                        locked.source
                    ),
                )
                .fix("run `revendor update` to move the package to the new source, or restore the old one in vendor.toml"),
            );
        }
    }
}

/// Each vendored directory has a file in the lock.
fn directories(input: &Input<'_>, sink: &mut Sink) {
    let id = LOCK_INTEGRITY.name;
    for dir in input.config.vendor.iter().filter(|v| v.is_dir()) {
        if !input
            .lock
            .files
            .iter()
            .any(|f| f.upstream == dir.upstream && dir.selects_from(&f.from).is_some())
        {
            sink.push(
                Finding::error(
                    id,
                    LOCK_PATH,
                    1,
                    format!(
                        "the lock records no file of the vendored directory `{}` (the [[vendor]] at vendor.toml:{})",
                        dir.to, dir.line
                    ),
                )
                .fix("run `revendor update` to vendor it"),
            );
        }
    }
}

/// Each pristine copy under `upstream/` has the sha256 the lock records.
fn pristine_copies(input: &Input<'_>, sink: &mut Sink) -> Result<()> {
    let id = LOCK_INTEGRITY.name;
    for vendor in input.files()?.iter().filter(|v| !v.created) {
        let version = input.stamp.version(vendor.upstream.as_deref());
        let path = vendor.pristine();
        let finding = match &*input.pristine(vendor)? {
            Pristine::Verified(_) => continue,
            Pristine::NotLocked => Finding::error(
                id,
                LOCK_PATH,
                1,
                format!("the lock records no sha256 for `{}`", vendor.from),
            )
            .fix("run `revendor update` to vendor it"),
            Pristine::Edited { expected, actual } => Finding::error(
                id,
                &path,
                1,
                format!(
                    "`{path}` has sha256 {actual}, but the lock says {expected}: the pristine copy was edited"
                ),
            )
            .fix(format!(
                "restore it with `git checkout -- {path}`, or re-fetch it with `revendor update --to {version}`"
            )),
            Pristine::Missing => Finding::error(
                id,
                &path,
                1,
                format!("`{path}` is missing and not in the download cache"),
            )
            .fix("run `revendor check --online` to fetch it by its locked sha256, or `revendor update`"),
            Pristine::Unverifiable(message) => Finding::error(
                id,
                &path,
                1,
                format!("upstream no longer serves the locked `{}` at {version}: {message}", vendor.from),
            )
            .fix("find out why the tag's file changed upstream before trusting it; `revendor update` re-vendors it"),
        };
        sink.push(finding);
    }
    Ok(())
}

/// Each patch file is the one the lock records as verified.
fn patches(input: &Input<'_>, sink: &mut Sink) -> Result<()> {
    let id = LOCK_INTEGRITY.name;
    for p in &input.config.patches {
        let Some(bytes) = input.read(&p.file)? else {
            sink.push(
                Finding::error(
                    id,
                    &p.file,
                    1,
                    format!("patch file `{}` is missing", p.file),
                )
                .fix("restore it, or remove its [[patch]] from vendor.toml"),
            );
            continue;
        };
        let actual = Digest::of(&bytes).hex().to_owned();
        match input.lock.patch_sha256(&p.name) {
            None => sink.push(
                Finding::error(
                    id,
                    &p.file,
                    1,
                    format!("patch `{}` is not in the lock: it was never verified", p.name),
                )
                .fix(format!(
                    "run `revendor patch refresh {}` (or `revendor update`) to verify and record it",
                    p.name
                )),
            ),
            Some(sha) if sha != actual => sink.push(
                Finding::error(
                    id,
                    &p.file,
                    1,
                    format!(
                        "`{}` has sha256 {actual}, but patch `{}` was verified with {sha}",
                        p.file, p.name
                    ),
                )
                .fix(format!(
                    "run `revendor patch refresh {}` to verify it against the locked upstream and record it",
                    p.name
                )),
            ),
            Some(_) => {}
        }
    }
    Ok(())
}

/// A lock entry as it must be unique: its upstream (files only) and its
/// path or name.
type Entry<'a> = (Option<&'a str>, &'a str);

/// A `[[file]]` or `[[patch]]` the lock records twice: a hand edit or a bad
/// merge, and no way to tell which sha256 vouches (issue 13: it passed).
fn duplicates(input: &Input<'_>, sink: &mut Sink) -> Result<()> {
    let text = input
        .read(LOCK_PATH)?
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    // A [[file]] is its upstream's and its path: two upstreams may each
    // vendor a file of the same path.
    let tables: [(&str, &str, Vec<Entry<'_>>); 2] = [
        (
            "[[file]]",
            "from",
            input
                .lock
                .files
                .iter()
                .map(|f| (f.upstream.as_deref(), f.from.as_str()))
                .collect(),
        ),
        (
            "[[patch]]",
            "name",
            input
                .lock
                .patches
                .iter()
                .map(|p| (None, p.name.as_str()))
                .collect(),
        ),
    ];
    for (table, key, entries) in tables {
        let mut seen = std::collections::HashSet::new();
        for (i, entry) in entries.iter().enumerate() {
            if seen.insert(*entry) {
                continue;
            }
            let name = entry.1;
            // The entry's own line: the key line of the same name as often
            // as that name came before it.
            let before = entries[..i].iter().filter(|(_, n)| *n == name).count();
            let line = text
                .lines()
                .enumerate()
                .filter(|(_, l)| {
                    l.split_once('=')
                        .is_some_and(|(k, v)| k.trim() == key && v.trim() == format!("\"{name}\""))
                })
                .nth(before)
                .map_or(1, |(i, _)| i + 1);
            sink.push(
                Finding::error(
                    LOCK_INTEGRITY.name,
                    LOCK_PATH,
                    line,
                    format!(
                        "the lock records {table} `{name}` twice: which sha256 vouches for it cannot be told"
                    ),
                )
                .fix("restore the lock from git: revendor writes each entry once"),
            );
        }
    }
    Ok(())
}
