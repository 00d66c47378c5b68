//! `revendor render`: rebuild the outputs from the pristine copies, the
//! patches, the rewrites and the locked pin, without the network.
//!
//! 1. Read the lock: it must be of the source vendor.toml names, and its pin
//!    an image reference pinned by digest. Each pristine copy under
//!    upstream/ must match its sha256 (a missing copy is taken from the
//!    download cache by that sha256).
//! 2. Compare each rendered file on disk with what the package renders
//!    ([`edits::fold`], as `update` does): an edit no patch carries stops the
//!    render (exit 1, nothing written), or with `--adopt-edits` is folded
//!    into the last patch targeting the file, which the lock then records.
//! 3. Apply the vendor patches strictly (offsets reported, no fuzz).
//! 4. Rewrite with the locked version, pin the locked image.
//! 5. Commit every output at once.
//!
//! Two differences are not hand edits. A file still holding the markers of
//! an unfinished `update --keep-conflicts` is revendor's own output: render
//! puts back the render at the locked version and says so, which is how an
//! unwanted conflicted update is dropped. And when a patch targeting the
//! file is not the one the lock verified (edited since), the file on disk
//! holds that patch's old effect, which the lock cannot tell apart from an
//! edit: render follows the edited patch and names each line it replaced.

use std::path::Path;

use super::update::EditReport;
use super::update::edits;
use crate::config::lock::{LOCK_PATH, Lock};
use crate::config::{Config, ConfigError, Vendor};
use crate::error::{Error, Result};
use crate::image::Reference;
use crate::patch;
use crate::paths::{self, Transaction};
use crate::render::{self, Patches, Walk};
use crate::upstream::Pristine;
use crate::workspace::Context;

/// Flags of `revendor render`.
#[derive(Debug, Clone, Copy, Default)]
pub struct RenderOptions {
    /// Fold hand edits of rendered files into the patch targeting them.
    pub adopt_edits: bool,
}

/// What `render` did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RenderReport {
    /// The locked version rendered.
    pub version: String,
    /// `(patch, target, result)` for each patch section.
    pub patches: Vec<(String, String, String)>,
    /// Hand edits folded into patches, with `--adopt-edits`.
    pub edits: Vec<EditReport>,
    /// Files written.
    pub changed: Vec<String>,
}

/// Renders and writes the outputs; stops on a hand edit unless
/// `opts.adopt_edits`.
pub fn render(ctx: &Context, opts: &RenderOptions) -> Result<RenderReport> {
    let config = Config::load(&ctx.root)?;
    let Some(mut lock) = Lock::load(&ctx.root)? else {
        return Err(Error::usage(
            "this package has no upstream/lock.toml yet",
            "run `revendor update` once to adopt it",
        ));
    };
    lock.require_source(&config)?;
    let mut patches = Patches::load(&config)?;
    patches.check_targets(&config)?;
    let version = lock.upstream.version.clone();
    let pin = locked_pin(&ctx.root, &lock)?;

    let mut txn = Transaction::new(&ctx.root);
    let mut notes = Vec::new();
    let mut report = RenderReport {
        version: version.clone(),
        patches: Vec::new(),
        edits: Vec::new(),
        changed: Vec::new(),
    };
    for vendor in &config.vendor {
        let pristine =
            Pristine::read(&ctx.root, &lock, vendor, &ctx.cache, None)?.verified(vendor)?;
        let current = paths::read_opt(&ctx.root.join(&vendor.to))?;
        // One walk serves the hand-edit check and the output, unless edits are folded into
        // a patch: a second walk of a 100,000-line file was a third of render's time.
        let mut walk = patches.stack(vendor, &version).apply(&pristine);
        let mut rendered = finished(&config, vendor, &walk, &version, pin.as_deref())?;
        if let Some(current) = &current
            && has_hand_edits(
                &lock, &patches, vendor, &walk, &rendered, current, &mut notes,
            )
        {
            report.edits.extend(edits::fold(
                &config,
                &mut patches,
                vendor,
                &pristine,
                &version,
                pin.as_deref(),
                Some(current),
                opts.adopt_edits,
                "render",
            )?);
            walk = patches.stack(vendor, &version).apply(&pristine);
            rendered = finished(&config, vendor, &walk, &version, pin.as_deref())?;
        }
        for step in walk.steps {
            let name = patches.section(step.id).0.name.clone();
            report
                .patches
                .push((name, vendor.to.clone(), step.outcome.to_string()));
        }
        txn.stage(&vendor.to, rendered);
        let copy = vendor.pristine();
        if !ctx.root.join(&copy).exists() {
            txn.stage(&copy, pristine);
        }
    }
    for (file, bytes) in
        render::rewrite_in_place(&config, &version, |f| paths::read(&ctx.root.join(f)))?
    {
        txn.stage(&file, bytes);
    }
    if !report.edits.is_empty() {
        record_adopted(ctx, &config, &mut lock, &patches, &report.edits, &mut txn)?;
    }
    report.changed = txn.commit()?;
    // Said once the render is written, so that a render stopped by a hand
    // edit in another file does not claim what it did not do.
    for note in notes {
        ctx.shell.warn(note);
    }
    Ok(report)
}

/// Whether the differences between `current` and the render of `vendor` are
/// hand edits for [`edits::fold`] to judge. Not when there are none, nor
/// when the file holds conflict markers or a targeting patch changed since
/// the lock verified it (see the module docs): the render is written over
/// it, and `notes` gets the warning that says so. `walk` is the stack applied
/// to the pristine copy, `expected` its finished render.
fn has_hand_edits(
    lock: &Lock,
    patches: &Patches,
    vendor: &Vendor,
    walk: &Walk,
    expected: &[u8],
    current: &[u8],
    notes: &mut Vec<String>,
) -> bool {
    let version = &lock.upstream.version;
    if expected == current {
        return false;
    }
    if let Some(line) = edits::conflict_marker_line(current) {
        notes.push(format!(
            "`{}` held the conflict markers of an unfinished `update --keep-conflicts` (line {line}); it is back at the render of {version}",
            vendor.to
        ));
        return false;
    }
    let mut changed: Vec<&str> = Vec::new();
    for step in &walk.steps {
        let p = patches.section(step.id).0;
        if lock.patch_sha256(&p.name) != Some(p.sha256.as_str()) && !changed.contains(&&*p.name) {
            changed.push(&p.name);
        }
    }
    if changed.is_empty() {
        return true;
    }
    let mut replaced = Vec::new();
    let (expected, current) = (
        String::from_utf8_lossy(expected),
        String::from_utf8_lossy(current),
    );
    for edit in render::hand_edits(&expected, &current) {
        for (i, text) in edit.added.iter().enumerate() {
            replaced.push(format!("{}:{} `{}`", vendor.to, edit.line + i, text.trim()));
        }
    }
    let more = replaced.len().saturating_sub(5);
    replaced.truncate(5);
    let what = match (replaced.is_empty(), more) {
        (true, _) => String::new(),
        (false, 0) => format!("; the lines it replaced: {}", replaced.join(", ")),
        (false, n) => format!(
            "; the lines it replaced: {} and {n} more",
            replaced.join(", ")
        ),
    };
    notes.push(format!(
        "patch `{}` changed since the lock verified it, so `{}` follows it now{what}",
        changed.join("`, `"),
        vendor.to,
    ));
    false
}

/// The finished render of `walk`'s output, or the section that stopped it.
fn finished(
    config: &Config,
    vendor: &Vendor,
    walk: &Walk,
    version: &str,
    pin: Option<&str>,
) -> Result<Vec<u8>> {
    let patched = walk.output.as_ref().map_err(|e| Error::from(e.clone()))?;
    render::finish(config, &vendor.to, patched, version, pin)
}

/// Stages the patch files that took hand edits and records their new
/// sha256 in the lock: each applies exactly at the locked version, which is
/// what the lock vouches for.
fn record_adopted(
    ctx: &Context,
    config: &Config,
    lock: &mut Lock,
    patches: &Patches,
    adopted: &[EditReport],
    txn: &mut Transaction,
) -> Result<()> {
    for p in patches.loaded() {
        if !adopted
            .iter()
            .any(|e| e.adopted_into.as_deref() == Some(&p.name))
        {
            continue;
        }
        let bytes = patch::write(&p.set);
        let sha = crate::image::Digest::of(&bytes).hex().to_owned();
        match lock.patches.iter_mut().find(|l| l.name == p.name) {
            Some(locked) => locked.sha256 = sha,
            None => lock.patches.push(crate::config::lock::LockedPatch {
                name: p.name.clone(),
                sha256: sha,
            }),
        }
        txn.stage(&p.file, bytes);
    }
    lock.patches
        .sort_by_key(|l| config.patches.iter().position(|p| p.name == l.name));
    let previous = paths::read_opt(&ctx.root.join(LOCK_PATH))?
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    txn.stage(LOCK_PATH, lock.to_toml(previous.as_deref()).into_bytes());
    Ok(())
}

/// The lock's pinned image reference, checked before anything writes it:
/// `repository:tag@sha256:…` by the distribution grammar. Anything else is
/// an error at its line of upstream/lock.toml.
pub(crate) fn locked_pin(root: &Path, lock: &Lock) -> Result<Option<String>> {
    let Some(image) = &lock.image else {
        return Ok(None);
    };
    let why = match Reference::parse(&image.reference) {
        Ok(r) if r.digest().is_some() => return Ok(Some(image.reference.clone())),
        Ok(_) => "it has no `@sha256:` digest".to_owned(),
        Err(e) => e.to_string(),
    };
    let path = root.join(LOCK_PATH);
    let line = paths::read_opt(&path)?
        .and_then(|b| Lock::line_of_key(&String::from_utf8_lossy(&b), "image", "reference"));
    Err(ConfigError::at(
        path,
        line,
        format!(
            "the pinned `reference` = \"{}\" is not an image reference pinned by digest: {why}",
            image.reference
        ),
    )
    .hint("the lock is written by revendor: restore it from git, or pin the image again with `revendor image pin`")
    .into())
}
