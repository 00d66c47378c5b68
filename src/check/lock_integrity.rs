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
that was verified (edited since the last `update` or `patch refresh`), or
vendor.toml's `[upstream]` names another repository than the lock's
`source` (pointed at a fork, say), or an `[[upstream]]` the lock has nothing
of yet.

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

fn check(input: &Input<'_>, sink: &mut Sink) -> Result<()> {
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
    for vendor in input.files()?.iter().filter(|v| !v.created) {
        let version = input.stamp.version(vendor.upstream.as_deref());
        let path = vendor.pristine();
        let finding = match input.pristine(vendor)? {
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
