//! `revendor image pin`: resolve an image that already exists, verify it and
//! pin it; `image build` ends with the same pin.
//!
//! 1. Resolve `repository:tag` (or `repository:tag@digest` with `--digest`;
//!    `REGISTRY` and `IMAGE_TAG` move it as they move `image build`'s)
//!    and verify it with `registry::Client::resolve_index`: an index holding
//!    exactly the configured platforms, every child a distinct image.
//! 2. Write `repository:tag@sha256:<index>` into every `[[pin]]` site of the
//!    image (`render::pin`: container `image:` fields found by parsing; or
//!    its YAML keys, `render::yaml_pin`) and record the reference and the
//!    per-platform child digests in the lock.
//! 3. Every image of the package (or the one named) is pinned in the same
//!    transaction, committed at once: nothing is written unless every file
//!    could be pinned.
//!
//! The lock's content hash says which build inputs the pinned image came
//! from; pinning another digest than the locked one drops it, since nothing
//! vouches for the new image's inputs.

use std::collections::BTreeMap;

use crate::config::lock::{LOCK_PATH, Lock, LockedImage};
use crate::config::{Config, ConfigError, Image, Pin, YamlPin};
use crate::error::{Error, Result};
use crate::image::{Digest, Platform, Reference};
use crate::paths::{self, Transaction};
use crate::registry::VerifiedIndex;
use crate::render::{pin, yaml_pin};
use crate::workspace::Context;

/// Flags of `revendor image pin`.
#[derive(Debug, Clone, Default)]
pub struct PinOptions {
    /// The `[[image]]` to pin; every image when `None`.
    pub image: Option<String>,
    /// Resolve this tag instead of vendor.toml's `[image] tag`.
    pub tag: Option<String>,
    /// Pin this index digest (verified) instead of what the tag points to.
    pub digest: Option<String>,
}

/// What a pin wrote.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PinReport {
    /// The image's `name`, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
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
        let mut s = self.pinned();
        s.push_str(&self.written());
        s
    }

    /// Lines for people about several pins written at once: what each
    /// pinned, then the files written (once).
    pub fn human_all(reports: &[PinReport]) -> String {
        let mut s: String = reports.iter().map(PinReport::pinned).collect();
        if let Some(first) = reports.first() {
            s.push_str(&first.written());
        }
        s
    }

    fn pinned(&self) -> String {
        let mut s = match &self.image {
            Some(name) => format!("pinned {name}: {}\n", self.reference),
            None => format!("pinned {}\n", self.reference),
        };
        for (platform, digest) in &self.platforms {
            s.push_str(&format!("  {platform} {digest}\n"));
        }
        for (file, line) in &self.sites {
            s.push_str(&format!("  at {file}:{line}\n"));
        }
        s
    }

    fn written(&self) -> String {
        let mut s = String::new();
        if self.changed.is_empty() {
            s.push_str("no file changed\n");
        }
        for f in &self.changed {
            s.push_str(&format!("wrote {f}\n"));
        }
        s
    }
}

/// Resolves, verifies and pins the configured images (or the one named),
/// all in one transaction.
pub fn pin(ctx: &Context, opts: &PinOptions) -> Result<Vec<PinReport>> {
    let config = Config::load(&ctx.root)?;
    let images = selected(&config, opts.image.as_deref())?;
    if images.len() > 1 && (opts.tag.is_some() || opts.digest.is_some()) {
        return Err(Error::usage(
            "--tag and --digest pin one image, and this package has several",
            "name the image: `revendor image pin NAME --digest …`",
        ));
    }
    let mut lock = require_lock(ctx)?;
    let client = ctx.registry()?;
    let mut txn = Transaction::new(&ctx.root);
    let mut reports = Vec::new();
    for image in images {
        let mut reference = image_reference(ctx, &config, &lock, image, opts.tag.as_deref())?;
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
        let previous = lock.image(image.name.as_deref());
        let same_image = previous
            .and_then(|i| Reference::parse(&i.reference).ok())
            .is_some_and(|r| r == verified.pinned());
        let content_hash = previous
            .filter(|_| same_image)
            .and_then(|i| i.content_hash.clone());
        let bases = previous.map(|i| i.bases.clone()).unwrap_or_default();
        reports.push(stage_pin(
            ctx,
            &config,
            &mut lock,
            image,
            &verified,
            content_hash,
            bases,
            &mut txn,
        )?);
    }
    let changed = commit(ctx, &lock, txn)?;
    for r in &mut reports {
        r.changed.clone_from(&changed);
    }
    Ok(reports)
}

/// The images `name` selects: that one, or every one.
pub(crate) fn selected<'c>(config: &'c Config, name: Option<&str>) -> Result<Vec<&'c Image>> {
    image_config(config)?;
    let Some(name) = name else {
        return Ok(config.images.iter().collect());
    };
    match config
        .images
        .iter()
        .find(|i| i.name.as_deref() == Some(name))
    {
        Some(image) => Ok(vec![image]),
        None => Err(Error::usage(
            format!("vendor.toml has no [[image]] named `{name}`"),
            format!(
                "known images: {}",
                config
                    .images
                    .iter()
                    .filter_map(|i| i.name.as_deref())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
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
    let mut lock = lock.clone();
    let mut txn = Transaction::new(&ctx.root);
    let mut report = stage_pin(
        ctx,
        config,
        &mut lock,
        image,
        verified,
        content_hash,
        bases,
        &mut txn,
    )?;
    report.changed = commit(ctx, &lock, txn)?;
    Ok(report)
}

/// Stages `lock` beside what `txn` holds and commits it all.
fn commit(ctx: &Context, lock: &Lock, mut txn: Transaction) -> Result<Vec<String>> {
    let previous = paths::read_opt(&ctx.root.join(LOCK_PATH))?
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    txn.stage(LOCK_PATH, lock.to_toml(previous.as_deref()).into_bytes());
    txn.commit()
}

/// Stages the verified index at every pin site of `image` in `txn` and
/// records it in `lock`; the report's `changed` is left for the commit.
#[allow(clippy::too_many_arguments)] // two call sites, every argument a different fact
fn stage_pin(
    ctx: &Context,
    config: &Config,
    lock: &mut Lock,
    image: &Image,
    verified: &VerifiedIndex,
    content_hash: Option<String>,
    bases: BTreeMap<String, String>,
    txn: &mut Transaction,
) -> Result<PinReport> {
    let reference = verified.pinned().to_string();
    let mut sites = Vec::new();
    for p in config.pins.iter().filter(|p| p.image == image.name) {
        let current = match txn.staged(&p.file) {
            Some(bytes) => bytes.to_vec(),
            None => paths::read(&ctx.root.join(&p.file))?,
        };
        let text = String::from_utf8(current).map_err(|_| {
            ConfigError::at(ctx.root.join(&p.file), None, "not UTF-8 text; cannot pin")
        })?;
        let (lines, pinned) = pinned_text(ctx, config, p, verified, &text, &reference)?;
        sites.extend(lines.into_iter().map(|l| (p.file.clone(), l)));
        txn.stage(&p.file, pinned.into_bytes());
    }
    let platforms: BTreeMap<String, String> = image
        .platforms
        .iter()
        .zip(&verified.children)
        .map(|(p, (_, digest))| (p.clone(), digest.to_string()))
        .collect();
    let locked = LockedImage {
        name: image.name.clone(),
        reference: reference.clone(),
        platforms: platforms.clone(),
        content_hash,
        bases,
    };
    match lock.images.iter_mut().find(|i| i.name == image.name) {
        Some(entry) => *entry = locked,
        None => {
            lock.images.push(locked);
            lock.images.sort_by_key(|i| {
                config
                    .images
                    .iter()
                    .position(|c| c.name == i.name)
                    .unwrap_or(usize::MAX)
            });
        }
    }
    Ok(PinReport {
        image: image.name.clone(),
        reference,
        platforms,
        sites,
        changed: Vec::new(),
    })
}

/// `text`, the file of pin `p`, with `reference` written at its sites (its
/// `yaml` keys, or the image fields of its repository), and the lines
/// written. A whole-file pin that finds no site is a configuration error.
fn pinned_text(
    ctx: &Context,
    config: &Config,
    p: &Pin,
    verified: &VerifiedIndex,
    text: &str,
    reference: &str,
) -> Result<(Vec<usize>, String)> {
    if let Some(keys) = &p.yaml {
        return pin_keys(ctx, p, keys, text, reference);
    }
    let sites_of = moved(p, &verified.reference);
    let found = pin::pin_sites(text, &sites_of).map_err(|e| pin_error(ctx, &p.file, &e))?;
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
    let pinned = pin::apply(text, &sites_of, reference).map_err(|e| pin_error(ctx, &p.file, &e))?;
    Ok((found.iter().map(|s| s.line).collect(), pinned))
}

/// `text` with `keys` set for `reference`, and the lines written.
fn pin_keys(
    ctx: &Context,
    p: &Pin,
    keys: &YamlPin,
    text: &str,
    reference: &str,
) -> Result<(Vec<usize>, String)> {
    let at = |e: yaml_pin::Error| -> Error {
        ConfigError::at(ctx.root.join(&p.file), Some(e.line()), e.to_string())
            .hint("the keys must exist and hold text on one line to be pinned (fix `yaml`, or the file)")
            .into()
    };
    let pinned = yaml_pin::apply(text, keys, reference).map_err(at)?;
    let lines = yaml_pin::lines(&pinned, keys).map_err(at)?;
    Ok((lines, pinned))
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

/// The `[image]` table, which every `image` command needs (the first, when
/// there are several).
pub(crate) fn image_config(config: &Config) -> Result<&Image> {
    config.images.first().ok_or_else(|| {
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

/// `[image] tag` with its placeholders (`{version}`, `{semver}`, `{commit}`)
/// filled in from the lock's version of the image's upstream, so that an image
/// built from a release is named after it; a literal tag is itself. A
/// placeholder of an upstream the lock lacks is a usage error (nothing was
/// vendored to name the image after).
pub(crate) fn configured_tag(config: &Config, lock: &Lock, image: &Image) -> Result<String> {
    if !image.tag.contains('{') {
        return Ok(image.tag.clone());
    }
    let name = config.image_upstream(image);
    let Some(locked) = lock.upstream(name) else {
        return Err(Error::usage(
            format!(
                "[image] tag `{}` names the version of `{}`, which the lock does not have yet",
                image.tag,
                config.upstream(name).label()
            ),
            "run `revendor update` to vendor it",
        ));
    };
    let values = config
        .upstream(name)
        .placeholders(&locked.version, locked.commit.as_deref());
    Ok(values.fill(&image.tag))
}

/// `repository:tag` as cozystack's `make image` names it: the tag is `tag`
/// (`--tag`), else `IMAGE_TAG`, else `[image] tag` ([`configured_tag`]); with
/// `REGISTRY` set, the repository is `$REGISTRY/<last path component of
/// [image] repository>`.
pub(crate) fn image_reference(
    ctx: &Context,
    config: &Config,
    lock: &Lock,
    image: &Image,
    tag: Option<&str>,
) -> Result<Reference> {
    // A tag from the command line or the environment is a usage error there,
    // not a fault of vendor.toml (issue 13: `--tag` was blamed on `[image]`).
    let given = match (tag, &ctx.env.image_tag) {
        (Some(flag), _) => Some(("--tag", flag)),
        (None, Some(env)) => Some(("IMAGE_TAG", env.as_str())),
        (None, None) => None,
    };
    if let Some((from, given)) = given
        && let Err(crate::image::Error::Reference { reason, .. }) =
            Reference::parse(&format!("example.org/image:{given}"))
    {
        return Err(Error::usage(
            format!("{from} `{given}` is not an image tag: {reason}"),
            format!("pass another {from}"),
        ));
    }
    let tag = match tag.or(ctx.env.image_tag.as_deref()) {
        Some(tag) => tag.to_owned(),
        None => configured_tag(config, lock, image)?,
    };
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
