//! Dockerfile ARGs that pin their value by digest, moved with the version.
//!
//! cilium declares `ARG VERSION=v1.19.1@sha256:…` and builds `FROM
//! quay.io/cilium/cilium:${VERSION}`. A `dockerfile-arg` rewrite that moves
//! such a value must not keep the old digest (it names the old image), so
//! before the rewrites run:
//!
//! 1. Find each `dockerfile-arg` rewrite of a package file whose ARG carries
//!    a digest and whose value moves at the target.
//! 2. Name the image the `FROM` lines using the ARG build on at the new value
//!    (`dockerfile::arg_image`), and resolve its digest through the registry
//!    client; when the Dockerfile is an image's, the digest must be an index
//!    holding every platform of it (as `image pin-base` verifies).
//! 3. Write `new@sha256:…` into the ARG; the rewrite then finds the value in
//!    place and keeps that digest.
//!
//! Offline (the registry client refuses), or when no single `FROM` names the
//! image, the update stops with the command (or the edit) that gets the
//! digest. `render` and `check`, offline, never resolve: the rewrite refuses a
//! moved value that would keep the old digest (`dockerfile::Error::StaleDigest`).

use crate::config::{Config, ConfigError, Rewrite, RewriteKind};
use crate::dockerfile::{self, Dockerfile, arg_image, digest_suffix, kept_digest};
use crate::error::Result;
use crate::image::{Digest, Reference};
use crate::ops::image_pin::platforms;
use crate::ops::pin_base::resolve_base;
use crate::registry;
use crate::render::Stamp;
use crate::workspace::Context;

/// What [`repin`] wrote: files with their new contents, a note for each ARG.
#[derive(Debug, Default)]
pub(super) struct Repinned {
    /// `(file, contents)` of each Dockerfile whose pinned ARG moved.
    pub files: Vec<(String, Vec<u8>)>,
    /// One sentence per ARG, for the summary.
    pub notes: Vec<String>,
}

/// The package files whose pinned ARGs move at `stamp`, with the new value
/// and its resolved digest written in. `read` gives a file's current
/// contents.
pub(super) fn repin(
    ctx: &Context,
    config: &Config,
    stamp: &Stamp,
    read: impl Fn(&str) -> Result<Vec<u8>>,
) -> Result<Repinned> {
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut notes = Vec::new();
    let mut client: Option<registry::Client> = None;
    for r in config.rewrites.iter().filter(|r| in_place_arg(config, r)) {
        let RewriteKind::DockerfileArg { name } = &r.kind else {
            continue;
        };
        let current = match files.iter().find(|(f, _)| *f == r.file) {
            Some((_, bytes)) => bytes.clone(),
            None => read(&r.file)?,
        };
        // Text the rewrite cannot read is reported by the rewrite itself.
        let Ok(text) = String::from_utf8(current) else {
            continue;
        };
        let value = r.value(stamp.values(r.upstream.as_deref()));
        let Some(line) = moved_pin(&text, name, &value) else {
            continue;
        };
        let image = image_of(config, r, &text, name, &value, line)?;
        if client.is_none() {
            client = Some(ctx.registry()?);
        }
        let Some(client) = &client else {
            continue;
        };
        let digest = resolve(config, client, r, &image)?;
        let written = format!("{value}@{digest}");
        let text = dockerfile::rewrite_arg(&text, name, &written)
            .map_err(|e| ConfigError::at(config.root.join(&r.file), e.line(), e.to_string()))?;
        notes.push(format!(
            "{}:{line}: ARG {name} moved to {value} pinned at {digest} (the digest of {image}, read from the registry)",
            r.file
        ));
        match files.iter_mut().find(|(f, _)| *f == r.file) {
            Some(entry) => entry.1 = text.into_bytes(),
            None => files.push((r.file.clone(), text.into_bytes())),
        }
    }
    Ok(Repinned { files, notes })
}

/// A `dockerfile-arg` rewrite of a file of the package (not a rendered one).
fn in_place_arg(config: &Config, r: &Rewrite) -> bool {
    matches!(r.kind, RewriteKind::DockerfileArg { .. })
        && config.vendor_rendering(&r.file).is_none()
}

/// The line of the first `ARG name` whose value carries a digest and moves
/// to `value` (which names none).
fn moved_pin(text: &str, name: &str, value: &str) -> Option<usize> {
    if value.contains('@') {
        return None;
    }
    let df = Dockerfile::parse(text).ok()?;
    df.arg_values(name)
        .find(|a| {
            let old = a.value.as_deref().unwrap_or_default();
            digest_suffix(old).is_some() && digest_suffix(&kept_digest(old, value)).is_none()
        })
        .map(|a| a.line)
}

/// The image whose digest the moved ARG must carry.
fn image_of(
    config: &Config,
    r: &Rewrite,
    text: &str,
    name: &str,
    value: &str,
    line: usize,
) -> Result<Reference> {
    let path = config.root.join(&r.file);
    arg_image(text, name, value)
        .map_err(|e| ConfigError::at(&path, e.line(), e.to_string()))?
        .ok_or_else(|| {
            ConfigError::at(
                &path,
                Some(line),
                format!(
                    "`ARG {name}` pins its value by digest and moves to `{value}`, but no single FROM line names the image that digest is of"
                ),
            )
            .hint(format!(
                "write `ARG {name}={value}@sha256:<its digest>` (or drop the digest), then run the update again"
            ))
            .into()
        })
}

/// The digest `image` resolves to; for an image's Dockerfile, verified to be
/// an index holding every platform of each image built from it.
fn resolve(
    config: &Config,
    client: &registry::Client,
    r: &Rewrite,
    image: &Reference,
) -> Result<Digest> {
    let mut wanted = Vec::new();
    for built in config.images.iter().filter(|i| i.dockerfile == r.file) {
        for p in platforms(config, built)? {
            if !wanted.contains(&p) {
                wanted.push(p);
            }
        }
    }
    if wanted.is_empty() {
        return Ok(client.head_manifest(image)?);
    }
    resolve_base(client, image, image, &wanted)
}
