//! A `[[patch]]` removed from vendor.toml, on the way through `render` and
//! `update` ([`render::origin`](crate::render::origin)).
//!
//! The rendered file on disk still has the removed patch's changes. They are
//! not hand edits: the lock says the file was rendered with the patch, so
//! the patch is put back into the stack ([`origin::restore`]) and the file
//! compared with what that stack renders. Equal: the changes are the
//! patch's, and the update renders the file without it. Different: there
//! are hand edits besides, and the update stops and names them.
//!
//! The removed patch's bytes are its file when it is still there as the lock
//! verified it, else the download cache, where every update keeps each vendor
//! patch it locks ([`remember`]). With neither, the update cannot tell the
//! patch's changes from hand edits, and says so.

use super::edits;
use crate::config::AppliesTo;
use crate::config::Vendor;
use crate::config::lock::{Lock, OutputPatch};
use crate::error::{Error, Result};
use crate::image::Digest;
use crate::paths::{self, Transaction};
use crate::render::Package;
use crate::render::origin::{self, Removed};
use crate::workspace::Context;

/// The file on disk as the hand-edit check should see it: `None` when it is
/// exactly what the lock's stack (removed patches included) renders, so the
/// removed patches' changes are reverted rather than taken for hand edits.
/// Borrowed, not copied: a large file is held once (issue 23).
pub(in crate::ops) fn settle<'c>(
    ctx: &Context,
    package: &Package<'_>,
    removed: &Removed<'_>,
    vendor: &Vendor,
    base: &[u8],
    current: Option<&'c [u8]>,
) -> Result<Option<&'c [u8]>> {
    let gone = removed.patches_of(&vendor.to);
    let (Some(lock), Some(record), Some(on_disk)) = (
        package.lock(),
        package.lock().and_then(|l| l.output(&vendor.to)),
        current,
    ) else {
        return Ok(current);
    };
    if gone.is_empty() {
        return Ok(current);
    }
    if package.expected(vendor, base)?.output == on_disk {
        return Ok(current);
    }
    let mut loaded = Vec::new();
    for p in &gone {
        loaded.push(origin::load_removed(
            p,
            vendor.upstream.clone(),
            bytes_of(ctx, lock, p, &vendor.to)?,
        )?);
    }
    let before = package.with_patches(origin::restore(package.patches(), record, loaded));
    let expected = before.expected(vendor, base)?.output;
    if expected == on_disk {
        return Ok(None);
    }
    let names: Vec<String> = gone.iter().map(|p| format!("`{}`", p.name)).collect();
    let found = edits::edited_lines(&vendor.to, &expected, on_disk);
    Err(Error::HandEdits(format!(
        "`{}` has hand edits besides the changes of patch {}, which vendor.toml no longer has: {}; \
         revert them, or put the [[patch]] back and fold them in with `revendor update --adopt-edits`",
        vendor.to,
        names.join(", "),
        edits::list(&found)
    )))
}

/// The bytes of removed patch `p` as the lock verified them: its file, or
/// the download cache.
fn bytes_of(ctx: &Context, lock: &Lock, p: &OutputPatch, to: &str) -> Result<Vec<u8>> {
    if let Some(sha) = lock.patch_sha256(&p.name) {
        if let Some(bytes) = paths::read_opt(&ctx.root.join(&p.file))?
            && Digest::of(&bytes).hex() == sha
        {
            return Ok(bytes);
        }
        if let Some(bytes) = ctx.cache.get(sha) {
            return Ok(bytes);
        }
    }
    Err(Error::PatchConflict(format!(
        "patch `{}` is no longer in vendor.toml, and neither `{}` nor the download cache holds it as the lock verified it: \
         revendor cannot tell its changes to `{to}` from hand edits; restore `{}` for this update \
         (`git checkout HEAD -- {}`), or make `{to}` what `revendor render` gives",
        p.name, p.file, p.file, p.file
    )))
}

/// Keeps every vendor patch staged in `txn` in the download cache, by the
/// sha256 the lock records for it, for the day its file is removed.
pub(in crate::ops) fn remember(ctx: &Context, config: &crate::config::Config, txn: &Transaction) {
    for p in config.patches_for(AppliesTo::Vendor) {
        if let Some(bytes) = txn.staged(&p.file) {
            ctx.cache.put(bytes);
        }
    }
}
