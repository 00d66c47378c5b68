//! `revendor patch refresh [NAME…]`: rewrite patch files with exact hunks
//! against the locked upstream, keeping each file's header style.
//!
//! A patch that applies at an offset comes back with corrected line numbers
//! and context; an exact patch comes back byte-identical, so refresh is
//! idempotent. The lock records the new sha256 of each refreshed file.

use crate::config::lock::{LOCK_PATH, Lock};
use crate::config::{AppliesTo, Config};
use crate::error::{Error, Result};
use crate::image::Digest;
use crate::patch;
use crate::paths::{self, Transaction};
use crate::render::{self, Package, Patches, Stamp};
use crate::upstream;
use crate::upstream::Pristine;
use crate::workspace::Context;

/// Flags of `patch refresh`.
#[derive(Debug, Clone, Default)]
pub struct RefreshOptions {
    /// Patch names; all patches when empty.
    pub names: Vec<String>,
}

/// Refreshes the named patches; returns the files that changed.
pub fn refresh(ctx: &Context, opts: &RefreshOptions) -> Result<Vec<String>> {
    let config = Config::load(&ctx.root)?;
    refuse_unknown(&config, &opts.names)?;
    let wanted = |name: &str| opts.names.is_empty() || opts.names.iter().any(|n| n == name);
    let Some(mut lock) = Lock::load(&ctx.root)? else {
        return Err(Error::usage(
            "this package has no upstream/lock.toml yet",
            "run `revendor update` first",
        ));
    };
    lock.require_source(&config)?;
    let mut txn = Transaction::new(&ctx.root);
    refresh_rendered(ctx, &config, &lock, &wanted, &mut txn)?;
    refresh_source(ctx, &config, &lock, &wanted, &mut txn)?;
    for lp in lock.patches.iter_mut() {
        if let Some(bytes) = config
            .patches
            .iter()
            .find(|p| p.name == lp.name)
            .and_then(|p| txn.staged(&p.file))
        {
            // Kept by its sha256 for the day the patch is removed
            // (ops/render/removed.rs reads it back).
            ctx.cache.put(bytes);
            lp.sha256 = Digest::of(bytes).hex().to_owned();
        }
    }
    let previous = paths::read_opt(&ctx.root.join(LOCK_PATH))?
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    txn.stage(LOCK_PATH, lock.to_toml(previous.as_deref()).into_bytes());
    txn.commit()
}

/// Every name must be a `[[patch]]` of vendor.toml.
fn refuse_unknown(config: &Config, names: &[String]) -> Result<()> {
    let Some(n) = names
        .iter()
        .find(|n| !config.patches.iter().any(|p| &p.name == *n))
    else {
        return Ok(());
    };
    let known: Vec<&str> = config.patches.iter().map(|p| p.name.as_str()).collect();
    Err(Error::usage(
        format!("no patch named `{n}` in vendor.toml"),
        format!("known patches: {}", known.join(", ")),
    ))
}

/// The wanted patches of rendered files, refreshed against the locked
/// pristine copies through the package pipeline, staged.
fn refresh_rendered(
    ctx: &Context,
    config: &Config,
    lock: &Lock,
    wanted: &dyn Fn(&str) -> bool,
    txn: &mut Transaction,
) -> Result<()> {
    let (patches, files) = render::load_locked(config, lock)?;
    let mut vendor = Package::new(config, Some(lock), Stamp::of_lock(config, lock), patches);
    for v in &files {
        let pristine = Pristine::read(&ctx.root, lock, v, &ctx.cache, None)?.verified(v)?;
        let walk = vendor.apply(v, &pristine);
        walk.output?;
        for step in walk.steps {
            if wanted(vendor.patch_name(step.id)) {
                vendor
                    .patches_mut()
                    .refresh_section(step.id, &step.input, step.outcome.content());
            }
        }
    }
    for p in vendor.patches().loaded().iter().filter(|p| wanted(&p.name)) {
        txn.stage(&p.file, patch::write(&p.set));
    }
    Ok(())
}

/// The wanted source patches of each upstream, refreshed against its
/// locked source tree (the one this machine kept, else fetched), staged.
fn refresh_source(
    ctx: &Context,
    config: &Config,
    lock: &Lock,
    wanted: &dyn Fn(&str) -> bool,
    txn: &mut Transaction,
) -> Result<()> {
    let mut source = Patches::load_kind(config, AppliesTo::Source)?.into_loaded();
    for up in &config.upstreams {
        let ours = |p: &&mut crate::render::LoadedPatch| wanted(&p.name) && p.upstream == up.name;
        if !source.iter_mut().any(|p| ours(&p)) {
            continue;
        }
        // require_source saw to it that the lock has every upstream.
        let version = lock
            .version(up.name.as_deref())
            .unwrap_or_default()
            .to_owned();
        let from = upstream::open(up, &ctx.env, &ctx.client);
        let locked = lock.upstream(up.name.as_deref());
        // The tree this machine kept first: a warm cache needs no request,
        // so no HTTP client and no trust store (issue 23).
        let kept = match locked {
            Some(locked) => from.kept_tree(locked, &ctx.cache)?,
            None => None,
        };
        let tree = match kept {
            Some(tree) => tree,
            None => upstream::fetch_tree(&*from, &version, locked)?,
        };
        for p in source.iter_mut().filter(ours) {
            for fp in p.set.files.iter_mut() {
                let path = fp.target_path(p.strip).unwrap_or_default();
                let base = tree.files.get(&path).cloned().unwrap_or_default();
                let applied = patch::apply(fp, &base).map_err(|e| {
                    Error::PatchConflict(format!(
                        "source patch `{}` ({}) does not apply to `{path}` at {version}: {e}",
                        p.name, p.file
                    ))
                })?;
                *fp = patch::refresh(fp, &base, &applied.content);
            }
            txn.stage(&p.file, patch::write(&p.set));
        }
    }
    Ok(())
}
