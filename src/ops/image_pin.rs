//! `revendor image pin`: resolve an image that already exists, verify it and
//! pin it; `image build` ends with the same pin.
//!
//! 1. Resolve `repository:tag` (or `repository:tag@digest` with `--digest`;
//!    `REGISTRY` and `IMAGE_TAG` move it as they move `image build`'s)
//!    and verify it with `registry::Client::resolve_index`: an index holding
//!    exactly the configured platforms, every child a distinct image.
//! 2. Write `repository:tag@sha256:<index>` into every `[[pin]]` site
//!    (`render::pin`: container `image:` fields found by parsing) and record
//!    the reference and the per-platform child digests in the lock.
//! 3. Stage all of it and commit it at once: nothing is written unless every
//!    file could be pinned.
//!
//! The lock's content hash says which build inputs the pinned image came
//! from; pinning another digest than the locked one drops it, since nothing
//! vouches for the new image's inputs.

use std::collections::BTreeMap;

use crate::config::lock::{LOCK_PATH, Lock, LockedImage};
use crate::config::{Config, ConfigError, Image, Pin};
use crate::error::{Error, Result};
use crate::image::{Digest, Platform, Reference};
use crate::paths::{self, Transaction};
use crate::registry::VerifiedIndex;
use crate::render::pin;
use crate::workspace::Context;

/// Flags of `revendor image pin`.
#[derive(Debug, Clone, Default)]
pub struct PinOptions {
    /// Resolve this tag instead of vendor.toml's `[image] tag`.
    pub tag: Option<String>,
    /// Pin this index digest (verified) instead of what the tag points to.
    pub digest: Option<String>,
}

/// What a pin wrote.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PinReport {
    /// `repository:tag@sha256:…` as written.
    pub reference: String,
    /// Configured platform → child manifest digest.
    pub platforms: BTreeMap<String, String>,
    /// Every site written, as `(file, line)`.
    pub sites: Vec<(String, usize)>,
    /// Files whose bytes changed.
    pub changed: Vec<String>,
}

impl PinReport {
    /// Lines for people.
    pub fn human(&self) -> String {
        let mut s = format!("pinned {}\n", self.reference);
        for (platform, digest) in &self.platforms {
            s.push_str(&format!("  {platform} {digest}\n"));
        }
        for (file, line) in &self.sites {
            s.push_str(&format!("  at {file}:{line}\n"));
        }
        if self.changed.is_empty() {
            s.push_str("no file changed\n");
        }
        for f in &self.changed {
            s.push_str(&format!("wrote {f}\n"));
        }
        s
    }
}

/// Resolves, verifies and pins the configured image.
pub fn pin(ctx: &Context, opts: &PinOptions) -> Result<PinReport> {
    let config = Config::load(&ctx.root)?;
    let image = image_config(&config)?;
    let lock = require_lock(ctx)?;
    let client = ctx.registry()?;
    let mut reference = image_reference(ctx, &config, image, opts.tag.as_deref())?;
    if let Some(digest) = &opts.digest {
        let digest = Digest::parse(digest).map_err(|e| {
            Error::usage(
                format!("--digest `{digest}` is not a digest: {e}"),
                "pass the index digest as sha256:<64 hex>",
            )
        })?;
        reference = reference.with_digest(digest);
    }
    ctx.shell.status("Resolving", &reference);
    let verified = client.resolve_index(&reference, &platforms(&config, image)?, None)?;
    let previous = lock.image.as_ref();
    let same_image = previous
        .and_then(|i| Reference::parse(&i.reference).ok())
        .is_some_and(|r| r == verified.pinned());
    let content_hash = previous
        .filter(|_| same_image)
        .and_then(|i| i.content_hash.clone());
    let bases = previous.map(|i| i.bases.clone()).unwrap_or_default();
    write_pin(ctx, &config, &lock, image, &verified, content_hash, bases)
}

/// Writes the verified index into every pin site and the lock, all at once.
pub(crate) fn write_pin(
    ctx: &Context,
    config: &Config,
    lock: &Lock,
    image: &Image,
    verified: &VerifiedIndex,
    content_hash: Option<String>,
    bases: BTreeMap<String, String>,
) -> Result<PinReport> {
    let reference = verified.pinned().to_string();
    let mut txn = Transaction::new(&ctx.root);
    let mut sites = Vec::new();
    for p in &config.pins {
        let sites_of = moved(p, &verified.reference);
        let current = match txn.staged(&p.file) {
            Some(bytes) => bytes.to_vec(),
            None => paths::read(&ctx.root.join(&p.file))?,
        };
        let text = String::from_utf8(current).map_err(|_| {
            ConfigError::at(ctx.root.join(&p.file), None, "not UTF-8 text; cannot pin")
        })?;
        let found = pin::pin_sites(&text, &sites_of).map_err(|e| pin_error(ctx, &p.file, &e))?;
        if found.is_empty() {
            return Err(ConfigError::at(
                config.root.join("vendor.toml"),
                Some(p.line),
                format!(
                    "[[pin]] of `{}` matches no container image: field naming `{}`",
                    p.file, p.repository
                ),
            )
            .hint("fix the pin's `repository`/`replaces`, or render the file first")
            .into());
        }
        sites.extend(found.iter().map(|s| (p.file.clone(), s.line)));
        let pinned =
            pin::apply(&text, &sites_of, &reference).map_err(|e| pin_error(ctx, &p.file, &e))?;
        txn.stage(&p.file, pinned.into_bytes());
    }
    let platforms: BTreeMap<String, String> = image
        .platforms
        .iter()
        .zip(&verified.children)
        .map(|(p, (_, digest))| (p.clone(), digest.to_string()))
        .collect();
    let mut new_lock = lock.clone();
    new_lock.image = Some(LockedImage {
        reference: reference.clone(),
        platforms: platforms.clone(),
        content_hash,
        bases,
    });
    let previous = paths::read_opt(&ctx.root.join(LOCK_PATH))?
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    txn.stage(
        LOCK_PATH,
        new_lock.to_toml(previous.as_deref()).into_bytes(),
    );
    let changed = txn.commit()?;
    Ok(PinReport {
        reference,
        platforms,
        sites,
        changed,
    })
}

/// `p` for writing `reference`: when `REGISTRY` moved the image away from
/// `p.repository`, the sites already naming the moved repository (an earlier
/// pin of it) are sites too, besides those `p` names.
fn moved(p: &Pin, reference: &Reference) -> Pin {
    let mut moved = p.clone();
    if reference.name() != p.repository {
        if !moved.replaces.is_empty() {
            moved.replaces.push(p.repository.clone());
        }
        moved.repository = reference.name().to_owned();
    }
    moved
}

fn pin_error(ctx: &Context, file: &str, e: &pin::Error) -> Error {
    ConfigError::at(ctx.root.join(file), Some(e.line()), e.to_string())
        .hint("the file must be YAML with its images on single lines to be pinned")
        .into()
}

/// The `[image]` table, which every `image` command needs.
pub(crate) fn image_config(config: &Config) -> Result<&Image> {
    config.image.as_ref().ok_or_else(|| {
        ConfigError::at(
            config.root.join("vendor.toml"),
            None,
            "vendor.toml has no [image] table",
        )
        .hint("declare the image (repository, tag, context, platforms) to build or pin it")
        .into()
    })
}

/// The lock, which `image build` and `image pin` need.
pub(crate) fn require_lock(ctx: &Context) -> Result<Lock> {
    Lock::load(&ctx.root)?.ok_or_else(|| {
        Error::usage(
            "this package has no upstream/lock.toml yet",
            "run `revendor update` once to adopt it",
        )
    })
}

/// `repository:tag` as cozystack's `make image` names it: the tag is `tag`
/// (`--tag`), else `IMAGE_TAG`, else `[image] tag`; with `REGISTRY` set, the
/// repository is `$REGISTRY/<last path component of [image] repository>`.
pub(crate) fn image_reference(
    ctx: &Context,
    config: &Config,
    image: &Image,
    tag: Option<&str>,
) -> Result<Reference> {
    let tag = tag.or(ctx.env.image_tag.as_deref()).unwrap_or(&image.tag);
    let repository = match &ctx.env.registry {
        Some(registry) => {
            let name = image.repository.rsplit('/').next().unwrap_or_default();
            format!("{registry}/{name}")
        }
        None => image.repository.clone(),
    };
    let text = format!("{repository}:{tag}");
    Reference::parse(&text).map_err(|e| {
        let from_env = [
            ctx.env.registry.as_ref().map(|r| format!("REGISTRY={r}")),
            ctx.env.image_tag.as_ref().map(|t| format!("IMAGE_TAG={t}")),
        ];
        let from_env: Vec<String> = from_env.into_iter().flatten().collect();
        let hint = if from_env.is_empty() {
            "fix `repository` and `tag` (or --tag)".to_owned()
        } else {
            format!(
                "fix `repository` and `tag` (or --tag), or the environment's {}",
                from_env.join(", ")
            )
        };
        ConfigError::at(
            config.root.join("vendor.toml"),
            Some(image.line),
            format!("[image] `{text}` is not an image reference: {e}"),
        )
        .hint(hint)
        .into()
    })
}

/// The configured platforms, parsed.
pub(crate) fn platforms(config: &Config, image: &Image) -> Result<Vec<Platform>> {
    image
        .platforms
        .iter()
        .map(|p| {
            Platform::parse(p).map_err(|e| {
                ConfigError::at(
                    config.root.join("vendor.toml"),
                    Some(image.line),
                    e.to_string(),
                )
                .into()
            })
        })
        .collect()
}
