//! `revendor image build`: build the multi-platform image, push it, read it
//! back, verify it and pin it.
//!
//! 1. Check the recipe before spending a build on it: the golang builder
//!    stages are `golang:<image.go>` pinned by digest and not older than
//!    upstream's go.mod (`check`'s `builder-go`, with its advice), every `ARG VERSION`
//!    default equals the locked upstream version, and every source patch
//!    lies inside the build context. Any failure stops here, naming the file
//!    and line.
//! 2. Hash what goes into the image (`builder::content_hash`). When the lock
//!    already pins this repository and tag built from the same hash, and the
//!    pinned digest still resolves (offline: the hashes alone), there is
//!    nothing to do unless `--force`.
//! 3. Plan the builder's steps (`builder::plan`); `--dry-run` stops here and
//!    shows them. With `--push`, look the tag up first (`tag_guard`): an
//!    image built from the same content is pinned as it is, another one is
//!    never pushed over unless `--move-tag` or `PUBLISH_VERSIONED=1` says so
//!    (the builder is asked first whether it can run: `builder::probe`).
//!    Then run them.
//! 4. With `--push`: take the digest the builder reported, then read the tag
//!    back from the registry until it serves that digest (bounded retries:
//!    registries are eventually consistent) and verify it is an index of
//!    exactly the configured platforms (`registry::Client`).
//! 5. Pin it (`image_pin::write_pin`), recording the content hash and the
//!    pinned base images in the lock.
//!
//! The environment fits cozystack's `make image` (hack/common-envs.mk):
//! `REGISTRY` and `IMAGE_TAG` choose the reference (see
//! `image_pin::image_reference`), `PUBLISH_VERSIONED=1` also pushes `[image]
//! tag` and `PUBLISH_FLOATING=1` also `latest`. Only the first tag is read
//! back and pinned. Caches and the arguments after `--` go to the builder as
//! they are; the latter count in the content hash, since they may change
//! what is built, and so do buildx's `BUILDX_EXTRA_ARGS`. `BUILDER` (the
//! buildx instance) and `SBOM=1` go to buildx too, outside the hash, and with
//! `GITHUB_REPOSITORY` set the image is labelled with its source repository as
//! cozystack's builds are. `OCI_EXPORT_DIR` is refused: what is pinned is what
//! was read back from a registry.

use std::path::Path;

use super::image_pin::{
    PinReport, configured_tag, image_reference, platforms, require_lock, selected, write_pin,
};
use super::pin_base::{parse_dockerfile, pinned_bases};
use super::tag_guard::{self, Existing};
use crate::builder::{self, Build, Kind, LABEL, Step};
use crate::check;
use crate::config::lock::Lock;
use crate::config::{AppliesTo, Config, ConfigError, Image};
use crate::dockerfile::Dockerfile;
use crate::error::{Error, Result};
use crate::image::{Digest, Platform, Reference};
use crate::paths;
use crate::registry;
use crate::workspace::Context;

/// How many times the pushed tag is read back before the build is failed.
const READ_BACK_ATTEMPTS: u32 = 6;

/// Flags of `revendor image build`.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// The `[[image]]` to build; every image, one after the other, when `None`.
    pub image: Option<String>,
    /// Tag to build and push instead of vendor.toml's `[image] tag`.
    pub tag: Option<String>,
    /// Push, read back, verify and pin; without it the image is only built.
    pub push: bool,
    /// The builder instead of vendor.toml's `builder`.
    pub builder: Option<String>,
    /// Show the builder's command lines; run nothing, write nothing.
    pub dry_run: bool,
    /// Build even when the pinned image was built from the same content.
    pub force: bool,
    /// Push over a tag that already names an image built from other content.
    pub move_tag: bool,
    /// `--cache-from` values for the builder, in buildx's syntax.
    pub cache_from: Vec<String>,
    /// `--cache-to` values for the builder, in buildx's syntax.
    pub cache_to: Vec<String>,
    /// Arguments appended to the build command (after `--`).
    pub builder_args: Vec<String>,
}

/// How a build ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The pinned image was built from the same content; nothing ran.
    UpToDate,
    /// `--dry-run`: the steps were shown, not run.
    Planned,
    /// Built without `--push`: nothing pushed, nothing pinned.
    Built,
    /// Built, pushed, verified and pinned.
    Pinned,
    /// `--push` found the tag already holding an image built from the same
    /// content: verified and pinned, nothing built or pushed.
    Reused,
}

/// What `image build` did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BuildReport {
    /// `repository:tag` built.
    pub reference: String,
    /// The builder used.
    pub builder: Kind,
    /// The content hash of the build inputs.
    pub content_hash: String,
    /// How it ended.
    pub outcome: Outcome,
    /// The pinned reference when up to date.
    pub pinned: Option<String>,
    /// The builder's steps (planned or run).
    pub steps: Vec<Step>,
    /// The pin written after a push.
    pub pin: Option<PinReport>,
}

impl BuildReport {
    /// The report of a build of `reference` not yet run.
    fn planned(reference: &Reference, builder: Kind, content_hash: &Digest) -> BuildReport {
        BuildReport {
            reference: reference.to_string(),
            builder,
            content_hash: content_hash.to_string(),
            outcome: Outcome::Planned,
            pinned: None,
            steps: Vec::new(),
            pin: None,
        }
    }
}

impl BuildReport {
    /// Lines for people; with `--dry-run`, the exact commands, one per line
    /// (an optional step followed by `|| true`).
    pub fn human(&self) -> String {
        match self.outcome {
            Outcome::UpToDate => format!(
                "up to date: {} was built from content {}; nothing to do (--force rebuilds)\n",
                self.pinned.as_deref().unwrap_or(&self.reference),
                self.content_hash
            ),
            Outcome::Planned => self
                .steps
                .iter()
                .map(|s| {
                    if s.may_fail {
                        format!("{s} || true\n")
                    } else {
                        format!("{s}\n")
                    }
                })
                .collect(),
            Outcome::Built => format!(
                "built {} with {} (content {}); not pushed, nothing pinned\n",
                self.reference, self.builder, self.content_hash
            ),
            Outcome::Pinned => self.pin.as_ref().map(PinReport::human).unwrap_or_default(),
            Outcome::Reused => format!(
                "reused {}: the registry already holds it, built from content {}; nothing built\n{}",
                self.reference,
                self.content_hash,
                self.pin.as_ref().map(PinReport::human).unwrap_or_default()
            ),
        }
    }
}

/// Builds (and with `--push` pins) the configured images (or the one
/// named), one after the other; each is pinned as soon as it is verified.
pub fn build(ctx: &Context, opts: &BuildOptions) -> Result<Vec<BuildReport>> {
    if let Some(dir) = &ctx.env.oci_export_dir
        && !opts.dry_run
    {
        return Err(Error::usage(
            format!(
                "OCI_EXPORT_DIR={dir} asks for an archive instead of a push, and image build \
                 pins only what it read back from a registry"
            ),
            "unset OCI_EXPORT_DIR, or export the image with the builder itself",
        ));
    }
    let config = Config::load(&ctx.root)?;
    let images = selected(&config, opts.image.as_deref())?;
    if images.len() > 1 && opts.tag.is_some() {
        return Err(Error::usage(
            "--tag builds one image, and this package has several",
            "name the image: `revendor image build NAME --tag …`",
        ));
    }
    let mut reports = Vec::new();
    for image in images {
        reports.push(build_one(ctx, &config, image, opts)?);
    }
    Ok(reports)
}

fn build_one(
    ctx: &Context,
    config: &Config,
    image: &Image,
    opts: &BuildOptions,
) -> Result<BuildReport> {
    // Read for each image: the one before may have pinned into it.
    let lock = require_lock(ctx)?;
    let kind = builder_kind(config, image, opts.builder.as_deref())?;
    let reference = image_reference(ctx, config, &lock, image, opts.tag.as_deref())?;
    let extra_tags = extra_tags(ctx, config, &lock, image, &reference)?;
    let platform_list = platforms(config, image)?;
    let (df, version) = preflight(ctx, config, image, &lock)?;
    let build_args = vec![("VERSION".to_owned(), version)];
    let builder_args = builder_args(ctx, opts, kind);
    let content_hash = builder::content_hash(
        &ctx.root.join(&image.context),
        &ctx.root.join(&image.dockerfile),
        &build_args,
        &image.platforms,
        &builder_args,
    )?;
    let mut report = BuildReport::planned(&reference, kind, &content_hash);
    if !opts.force
        && let Some(pinned) = up_to_date(ctx, &lock, image, &reference, &content_hash)?
    {
        ctx.shell
            .status("Fresh", format!("{pinned} (content {content_hash})"));
        report.outcome = Outcome::UpToDate;
        report.pinned = Some(pinned);
        return Ok(report);
    }

    let build = build_spec(
        ctx,
        image,
        opts,
        kind,
        &content_hash,
        (reference.clone(), extra_tags),
        build_args,
        builder_args,
    );
    let digest_file = build.digest_file.clone();
    report.steps = builder::plan(kind, &build)?;
    if opts.dry_run {
        return Ok(report);
    }
    builder::probe(kind, &ctx.root)?;

    // The registry is needed after the build; fail before building when it
    // cannot be used (--offline, a broken docker config).
    let client = if opts.push {
        Some(ctx.registry()?)
    } else {
        None
    };
    let pin = |verified: &registry::VerifiedIndex| {
        write_pin(
            ctx,
            config,
            &lock,
            image,
            verified,
            Some(content_hash.to_string()),
            pinned_bases(&df),
        )
    };
    if let Some(client) = &client
        && let Some(verified) =
            reusable(ctx, client, opts, &reference, &content_hash, &platform_list)?
    {
        report.pin = Some(pin(&verified)?);
        report.outcome = Outcome::Reused;
        return Ok(report);
    }
    run_steps(ctx, &report, &digest_file)?;
    let Some(client) = client else {
        report.outcome = Outcome::Built;
        return Ok(report);
    };

    let verified = read_back(ctx, &client, kind, &digest_file, &reference, &platform_list)?;
    report.pin = Some(pin(&verified)?);
    report.outcome = Outcome::Pinned;
    Ok(report)
}

/// The builder's own arguments: the command line's after `--`, and for
/// buildx `BUILDX_EXTRA_ARGS` as `make image` passes it.
fn builder_args(ctx: &Context, opts: &BuildOptions, kind: Kind) -> Vec<String> {
    let mut args = opts.builder_args.clone();
    if kind == Kind::Buildx {
        args.extend(ctx.env.buildx_extra_args.iter().cloned());
    }
    args
}

/// Reads the pushed image back from the registry by the digest the builder
/// says it pushed, retrying while the registry catches up.
fn read_back(
    ctx: &Context,
    client: &registry::Client,
    kind: Kind,
    digest_file: &Path,
    reference: &Reference,
    platforms: &[crate::image::Platform],
) -> Result<registry::VerifiedIndex> {
    let claimed = pushed_digest(kind, digest_file)?;
    ctx.shell.status(
        "Verifying",
        format!("{reference} is {claimed} in the registry"),
    );
    Ok(
        client.resolve_index_with_retry(
            reference,
            platforms,
            Some(&claimed),
            READ_BACK_ATTEMPTS,
        )?,
    )
}

/// What the builder is asked to do for `image`: its context, Dockerfile,
/// platforms, arguments and labels, the tags it pushes, and where it writes
/// the pushed digest (a directory of the cache named by the content hash).
#[allow(clippy::too_many_arguments)] // each is one part of the build, named at the call
fn build_spec(
    ctx: &Context,
    image: &Image,
    opts: &BuildOptions,
    kind: Kind,
    content_hash: &Digest,
    (reference, extra_tags): (Reference, Vec<Reference>),
    build_args: Vec<(String, String)>,
    builder_args: Vec<String>,
) -> Build {
    let work = ctx
        .env
        .cache_dir
        .join("image-build")
        .join(content_hash.hex());
    let digest_file = work.join(match kind {
        Kind::Buildx => "metadata.json",
        Kind::Buildah => "digest",
    });
    let default_dockerfile = format!("{}/Dockerfile", image.context);
    Build {
        context: image.context.clone(),
        dockerfile: (image.dockerfile != default_dockerfile).then(|| image.dockerfile.clone()),
        platforms: image.platforms.clone(),
        build_args,
        labels: labels(ctx, content_hash),
        reference,
        extra_tags,
        cache_from: opts.cache_from.clone(),
        cache_to: opts.cache_to.clone(),
        extra_args: unhashed_args(ctx, kind, builder_args),
        push: opts.push,
        provenance: image.provenance,
        digest_file,
    }
}

/// Runs the planned builder steps of `report`, after clearing the digest
/// file a run before may have left (the next push writes it afresh).
fn run_steps(ctx: &Context, report: &BuildReport, digest_file: &Path) -> Result<()> {
    if let Some(work) = digest_file.parent() {
        std::fs::create_dir_all(work).map_err(paths::io("create", work))?;
    }
    match std::fs::remove_file(digest_file) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(paths::io("remove", digest_file)(e));
        }
        _ => {}
    }
    ctx.shell.status(
        "Building",
        format!(
            "{} with {} (content {})",
            report.reference, report.builder, report.content_hash
        ),
    );
    for step in &report.steps {
        ctx.shell.verbose(step);
        step.run(&ctx.root)?;
    }
    Ok(())
}

/// The tags pushed besides `primary`'s: `[image] tag` (its placeholders
/// filled in) with
/// `PUBLISH_VERSIONED=1`, `latest` with `PUBLISH_FLOATING=1`, each once and
/// only when it is not `primary`'s own.
fn extra_tags(
    ctx: &Context,
    config: &Config,
    lock: &Lock,
    image: &Image,
    primary: &Reference,
) -> Result<Vec<Reference>> {
    let configured = configured_tag(config, lock, image)?;
    let mut tags: Vec<&str> = Vec::new();
    if ctx.env.publish_versioned {
        tags.push(&configured);
    }
    if ctx.env.publish_floating {
        tags.push("latest");
    }
    tags.dedup();
    tags.into_iter()
        .filter(|tag| primary.tag() != Some(*tag))
        .map(|tag| {
            let text = format!("{}:{tag}", primary.name());
            Reference::parse(&text).map_err(|e| {
                ConfigError::at(
                    config.root.join("vendor.toml"),
                    Some(image.line),
                    format!("[image] `{text}` (PUBLISH_VERSIONED) is not an image reference: {e}"),
                )
                .hint("fix `tag`")
                .into()
            })
        })
        .collect()
}

/// The image's labels: the content hash, and with `GITHUB_REPOSITORY` set the
/// source repository (`org.opencontainers.image.source`, as cozystack's
/// `make image` labels every image). Neither counts in the content hash.
fn labels(ctx: &Context, content_hash: &Digest) -> Vec<(String, String)> {
    let mut labels = vec![(LABEL.to_owned(), content_hash.to_string())];
    if let Some(repository) = &ctx.env.repository {
        labels.push((
            "org.opencontainers.image.source".to_owned(),
            format!("{}/{repository}", ctx.env.server_url),
        ));
    }
    labels
}

/// `hashed` followed by what changes how buildx runs but not what it builds:
/// `--builder=$BUILDER` and `--sbom=true` with `SBOM=1`.
fn unhashed_args(ctx: &Context, kind: Kind, mut hashed: Vec<String>) -> Vec<String> {
    if kind == Kind::Buildx {
        if let Some(instance) = &ctx.env.buildx_instance {
            hashed.push(format!("--builder={instance}"));
        }
        if ctx.env.sbom {
            hashed.push("--sbom=true".to_owned());
        }
    }
    hashed
}

/// `--builder`, else vendor.toml's `builder`.
fn builder_kind(config: &Config, image: &Image, flag: Option<&str>) -> Result<Kind> {
    match flag {
        Some(name) => Kind::parse(name).ok_or_else(|| {
            Error::usage(
                format!("--builder `{name}` is not a builder"),
                "pass --builder buildx or --builder buildah",
            )
        }),
        None => Kind::parse(&image.builder).ok_or_else(|| {
            ConfigError::at(
                config.root.join("vendor.toml"),
                Some(image.line),
                format!("`builder` = \"{}\" is not buildx or buildah", image.builder),
            )
            .into()
        }),
    }
}

/// The checks of step 1; the parsed Dockerfile and the `VERSION` it is
/// built with when they pass: the value the `dockerfile-arg = "VERSION"`
/// rewrite of the Dockerfile gives at the locked version (`{semver}` for a
/// recipe that wants it without the `v`), else the locked version of the
/// image's upstream.
fn preflight(
    ctx: &Context,
    config: &Config,
    image: &Image,
    lock: &Lock,
) -> Result<(Dockerfile, String)> {
    let path = ctx.root.join(&image.dockerfile);
    let text = String::from_utf8(paths::read(&path)?)
        .map_err(|_| ConfigError::at(&path, None, "the Dockerfile is not UTF-8 text"))?;
    let df = parse_dockerfile(&path, &text)?;
    let name = config.image_upstream(image);
    let Some(upstream) = lock.upstream(name) else {
        return Err(Error::usage(
            format!(
                "the lock has no upstream `{}` yet, which the image is built from",
                config.upstream(name).label()
            ),
            "run `revendor update` to vendor it",
        ));
    };
    if image.go.is_some()
        && let Some(f) = check::builder_findings(
            &df,
            &image.dockerfile,
            image.go.as_ref(),
            upstream.go_directive.as_deref(),
            &upstream.version,
            check::builder_command_name(config, image),
        )
        .into_iter()
        .next()
    {
        return Err(ConfigError::at(&path, Some(f.line), f.message)
            .hint(f.fix)
            .into());
    }

    let locked = crate::render::Stamp::of_lock(config, lock).version_arg(config, image);
    version_arg_is(&path, &df, &locked)?;
    source_patches_inside(ctx, config, image, name)?;
    Ok((df, locked))
}

/// The image `reference` already holds, verified, when it was built from
/// the same `content_hash`: pushing it again would change nothing. A tag
/// holding other content is an error unless it may move
/// ([`tag_guard::existing`]).
fn reusable(
    ctx: &Context,
    client: &registry::Client,
    opts: &BuildOptions,
    reference: &Reference,
    content_hash: &Digest,
    platform_list: &[Platform],
) -> Result<Option<registry::VerifiedIndex>> {
    let may_move = opts.move_tag || ctx.env.publish_versioned;
    let Existing::SameContent(digest) =
        tag_guard::existing(ctx, client, reference, content_hash, may_move)?
    else {
        return Ok(None);
    };
    ctx.shell.status(
        "Reusing",
        format!("{reference} ({digest}), built from content {content_hash}"),
    );
    Ok(Some(client.resolve_index(
        reference,
        platform_list,
        Some(&digest),
    )?))
}

/// The Dockerfile at `path` declares `ARG VERSION`, and every default it
/// gives is the `locked` version (a digest it pins kept).
fn version_arg_is(path: &Path, df: &Dockerfile, locked: &str) -> Result<()> {
    if !df.args.iter().any(|a| a.name == "VERSION") {
        return Err(ConfigError::at(
            path,
            None,
            format!(
                "the Dockerfile declares no `ARG VERSION`, so the build cannot use the locked version {locked}"
            ),
        )
        .hint(format!("declare `ARG VERSION={locked}` in the stage that fetches the source"))
        .into());
    }
    if let Some(arg) = df.arg_values("VERSION").find(|a| {
        let value = a.value.as_deref().unwrap_or_default();
        value != crate::dockerfile::kept_digest(value, locked)
    }) {
        return Err(ConfigError::at(
            path,
            Some(arg.line),
            format!(
                "`ARG VERSION={}` but the lock says {locked}",
                arg.value.as_deref().unwrap_or_default()
            ),
        )
        .hint("run `revendor render` to rewrite it to the locked version")
        .into());
    }
    Ok(())
}

/// Each source patch of the image's upstream (`name`) lies inside its build
/// context, where the build can apply it.
fn source_patches_inside(
    ctx: &Context,
    config: &Config,
    image: &Image,
    name: Option<&str>,
) -> Result<()> {
    // Compared as real paths: `images/x/../../patches/p.diff` is not in `images/x`.
    let real = |rel: &str| {
        let path = ctx.root.join(rel);
        path.canonicalize().map_err(paths::io("resolve", &path))
    };
    let context = real(&image.context)?;
    for patch in config
        .patches_for(AppliesTo::Source)
        .filter(|p| p.upstream.as_deref() == name)
    {
        if !real(&patch.file)?.starts_with(&context) {
            return Err(ConfigError::at(
                config.root.join("vendor.toml"),
                Some(patch.line),
                format!(
                    "source patch `{}` is outside the build context `{}`, so the build cannot apply it",
                    patch.file, image.context
                ),
            )
            .hint("move the patch under the context and update `file`")
            .into());
        }
    }
    Ok(())
}

/// The pinned reference when the lock pins `reference`'s repository and tag,
/// built from `content_hash`, and the registry still serves it (offline: the
/// lock's word is enough).
fn up_to_date(
    ctx: &Context,
    lock: &Lock,
    image: &Image,
    reference: &Reference,
    content_hash: &Digest,
) -> Result<Option<String>> {
    let Some(locked) = lock.image(image.name.as_deref()) else {
        return Ok(None);
    };
    if locked.content_hash.as_deref() != Some(content_hash.to_string().as_str()) {
        return Ok(None);
    }
    let Ok(pinned) = Reference::parse(&locked.reference) else {
        return Ok(None);
    };
    let same_name = pinned.registry() == reference.registry()
        && pinned.repository() == reference.repository()
        && pinned.tag() == reference.tag();
    if !same_name || pinned.digest().is_none() {
        return Ok(None);
    }
    if ctx.client.offline() {
        return Ok(Some(locked.reference.clone()));
    }
    match ctx.registry()?.head_manifest(&pinned) {
        Ok(_) => Ok(Some(locked.reference.clone())),
        Err(registry::Error::ManifestUnknown { .. }) => {
            ctx.shell.warn(format!(
                "the pinned {} is gone from the registry; rebuilding",
                locked.reference
            ));
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

/// The digest the builder says it pushed.
fn pushed_digest(kind: Kind, path: &Path) -> Result<Digest> {
    Ok(match kind {
        Kind::Buildx => registry::metadata_digest(path)?,
        Kind::Buildah => builder::read_digest_file(path)?,
    })
}
