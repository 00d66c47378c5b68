//! `revendor render`: rebuild the outputs from the pristine copies, the
//! patches, the rewrites and the locked pin, without the network.
//!
//! 1. Read the lock; each pristine copy under upstream/ must match its
//!    sha256 (a missing copy is taken from the download cache by that sha256).
//! 2. Apply the vendor patches strictly (offsets reported, no fuzz).
//! 3. Rewrite with the locked version, pin the locked image.
//! 4. Commit every output at once.

use crate::config::Config;
use crate::config::lock::Lock;
use crate::error::{Error, Result};
use crate::ops::outcome::PatchResult;
use crate::patch::Outcome;
use crate::paths::{self, Transaction};
use crate::render::{self, Patches};
use crate::upstream::Pristine;
use crate::workspace::Context;

/// What `render` did; `--format json` prints it (docs/json.md).
#[derive(Debug, Clone, serde::Serialize)]
pub struct RenderReport {
    /// The locked version rendered.
    pub version: String,
    /// Each patch section's result (the same objects `update` reports).
    pub patches: Vec<PatchResult>,
    /// Files written, as `update` lists them.
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
        ctx.shell.step(
            "Verified",
            format!("{} against the lock", vendor.pristine()),
        );
        let walk = patches.stack(vendor, &version).apply(&pristine);
        let patched = walk.output?;
        for step in walk.steps {
            let name = patches.section(step.id).0.name.clone();
            ctx.shell.step(
                "Applying",
                PatchResult::new(&name, &vendor.to, &step.outcome),
            );
            steps.push((name, vendor.to.clone(), step.outcome));
        }
        files.push((
            vendor.to.clone(),
            render::finish(config, &vendor.to, &patched, &version, pin.as_deref())?,
        ));
    }
    files.extend(render::rewrite_in_place(config, &version, |f| {
        paths::read(&ctx.root.join(f))
    })?);
    Ok(Rendering { lock, files, steps })
}

/// Renders and writes the outputs.
pub fn render(ctx: &Context) -> Result<RenderReport> {
    ctx.shell
        .step("Reading", "vendor.toml and upstream/lock.toml");
    let config = Config::load(&ctx.root)?;
    let r = rendering(ctx, &config)?;
    let patches = r
        .steps
        .iter()
        .map(|(p, t, outcome)| PatchResult::new(p, t, outcome))
        .collect();
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
        patches,
        changed,
    })
}
