//! `revendor render`: rebuild the outputs from the pristine copies, the
//! patches, the rewrites and the locked pin, without the network.
//!
//! 1. Read the lock; each pristine copy under upstream/ must match its
//!    sha256 (a missing copy is taken from the download cache by that sha256).
//! 2. Apply the vendor patches strictly (offsets reported, no fuzz).
//! 3. Rewrite with the locked version, pin the locked image.
//! 4. Commit every output at once.

use super::Context;
use crate::config::Config;
use crate::config::lock::Lock;
use crate::error::{Error, Result};
use crate::image::Digest;
use crate::paths::{self, Transaction};
use crate::render::{self, PatchStep, Patches};

/// What `render` did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RenderReport {
    /// The locked version rendered.
    pub version: String,
    /// `(patch, target, result)` for each patch section.
    pub patches: Vec<(String, String, String)>,
    /// Files written.
    pub changed: Vec<String>,
}

/// Everything a render produces, before it is written.
#[derive(Debug, Clone)]
pub struct Rendering {
    /// The lock it was rendered from.
    pub lock: Lock,
    /// `(path, bytes)` of every output.
    pub files: Vec<(String, Vec<u8>)>,
    /// `(patch, target, step)` for each patch section.
    pub steps: Vec<(String, String, PatchStep)>,
}

/// Computes the outputs of the package at the locked version.
pub fn rendering(ctx: &Context, config: &Config) -> Result<Rendering> {
    let Some(lock) = Lock::load(&ctx.root)? else {
        return Err(Error::usage(
            "this package has no upstream/lock.toml yet",
            "run `revendor update` once to adopt it",
        ));
    };
    let patches = Patches::load(config)?;
    patches.check_targets(config)?;
    let version = lock.upstream.version.clone();
    let pin = lock.image.as_ref().map(|i| i.reference.clone());
    let mut files = Vec::new();
    let mut steps = Vec::new();
    for vendor in &config.vendor {
        let pristine = locked_pristine(ctx, &lock, vendor)?;
        let patched = patches.apply_strict(vendor, &pristine)?;
        steps.extend(
            patched
                .steps
                .into_iter()
                .map(|(p, step)| (p, vendor.to.clone(), step)),
        );
        files.push((
            vendor.to.clone(),
            render::finish(
                config,
                &vendor.to,
                &patched.content,
                &version,
                pin.as_deref(),
            )?,
        ));
    }
    files.extend(render::rewrite_in_place(config, &version, |f| {
        paths::read(&ctx.root.join(f))
    })?);
    Ok(Rendering { lock, files, steps })
}

/// The pristine copy of a vendored file at the locked version, verified.
pub fn locked_pristine(
    ctx: &Context,
    lock: &Lock,
    vendor: &crate::config::Vendor,
) -> Result<Vec<u8>> {
    let Some(sha) = lock.file_sha256(&vendor.from) else {
        return Err(Error::usage(
            format!("the lock records no sha256 for `{}`", vendor.from),
            "run `revendor update` to vendor it",
        ));
    };
    let path = vendor.pristine();
    match paths::read_opt(&ctx.root.join(&path))? {
        Some(bytes) if Digest::of(&bytes).hex() == sha => Ok(bytes),
        Some(bytes) => Err(Error::Conflict(format!(
            "`{path}` has sha256 {} but the lock says {sha}: the pristine copy was edited; restore it with `git checkout` or re-fetch it with `revendor update`",
            Digest::of(&bytes).hex()
        ))),
        None => ctx.cache.get(sha).ok_or_else(|| {
            Error::usage(
                format!("`{path}` is missing and not in the download cache"),
                "run `revendor update` to fetch the pristine copy",
            )
        }),
    }
}

/// Renders and writes the outputs.
pub fn render(ctx: &Context) -> Result<RenderReport> {
    let config = Config::load(&ctx.root)?;
    let r = rendering(ctx, &config)?;
    let mut txn = Transaction::new(&ctx.root);
    for (path, bytes) in &r.files {
        txn.stage(path, bytes.clone());
    }
    for vendor in &config.vendor {
        let path = vendor.pristine();
        if !ctx.root.join(&path).exists()
            && let Some(sha) = r.lock.file_sha256(&vendor.from)
            && let Some(bytes) = ctx.cache.get(sha)
        {
            txn.stage(&path, bytes);
        }
    }
    let changed = txn.commit()?;
    Ok(RenderReport {
        version: r.lock.upstream.version.clone(),
        patches: r
            .steps
            .into_iter()
            .map(|(p, t, s)| (p, t, s.to_string()))
            .collect(),
        changed,
    })
}
