//! `revendor render`: rebuild the outputs from the pristine copies, the
//! patches, the rewrites and the locked pin, without the network.
//!
//! 1. Read the lock; each pristine copy under upstream/ must match its
//!    sha256 (a missing copy is taken from the download cache by that sha256).
//! 2. Apply the vendor patches strictly (offsets reported, no fuzz).
//! 3. Rewrite with the locked version, pin the locked image.
//! 4. Delete what a removed `[[vendor]]` rendered, and record in the lock
//!    what each output is now made from when a `[[vendor]]` or `[[patch]]`
//!    was removed ([`render::origin`]: a removed patch's changes are gone
//!    because the output is rendered without it).
//! 5. Commit every output at once.

use crate::config::Config;
use crate::config::lock::{LOCK_PATH, Lock, LockedOutput};
use crate::error::{Error, Result};
use crate::patch::Outcome;
use crate::paths::{self, Transaction};
use crate::render::origin::{self, Removed};
use crate::render::{self, Patches};
use crate::upstream::Pristine;
use crate::workspace::Context;

/// What `render` did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RenderReport {
    /// The locked version rendered.
    pub version: String,
    /// `(patch, target, result)` for each patch section.
    pub patches: Vec<(String, String, String)>,
    /// A removed patch reverted, a removed output deleted: one sentence each.
    pub notes: Vec<String>,
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
    /// `(patch, target, outcome)` for each patch section.
    pub steps: Vec<(String, String, Outcome)>,
    /// What each output is made from, for the lock.
    pub outputs: Vec<LockedOutput>,
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
        let pristine =
            Pristine::read(&ctx.root, &lock, vendor, &ctx.cache, None)?.verified(vendor)?;
        let walk = patches.stack(vendor, &version).apply(&pristine);
        let patched = walk.output?;
        steps.extend(walk.steps.into_iter().map(|step| {
            let name = patches.section(step.id).0.name.clone();
            (name, vendor.to.clone(), step.outcome)
        }));
        files.push((
            vendor.to.clone(),
            render::finish(config, &vendor.to, &patched, &version, pin.as_deref())?,
        ));
    }
    files.extend(render::rewrite_in_place(config, &version, |f| {
        paths::read(&ctx.root.join(f))
    })?);
    let outputs = origin::outputs(config, &patches);
    Ok(Rendering {
        lock,
        files,
        steps,
        outputs,
    })
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
    let removed = Removed::find(&config, &r.lock);
    for path in removed.deletions(&config) {
        txn.remove(&path);
    }
    if !removed.is_empty() {
        let next = origin::forget_removed(&r.lock, &config, r.outputs.clone());
        let previous = paths::read_opt(&ctx.root.join(LOCK_PATH))?
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        txn.stage(LOCK_PATH, next.to_toml(previous.as_deref()).into_bytes());
    }
    let notes = removed.notes();
    let changed = txn.commit()?;
    Ok(RenderReport {
        version: r.lock.upstream.version.clone(),
        patches: r
            .steps
            .into_iter()
            .map(|(p, t, s)| (p, t, s.to_string()))
            .collect(),
        notes,
        changed,
    })
}
