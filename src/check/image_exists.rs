//! `image-exists` (online): the locked image digest resolves in its registry
//! and is a multi-platform index of exactly `[image] platforms`.
//!
//! [`registry::Client::resolve_index`] reads the index by its digest and
//! checks it: an OCI index or Docker manifest list, one child per configured
//! platform, every child distinct from the others and from the index, every
//! child a single-platform image manifest that exists. Each manifest read by
//! `GET` is kept in the download cache by its digest, so the next run (a
//! nightly check with nothing new) asks by `HEAD` only, and reads by `GET`
//! again only from a registry that announces no `Docker-Content-Digest`.
//! Credentials come from
//! `DOCKER_CONFIG`, mirrors from `REVENDOR_REGISTRY_MIRRORS`. A registry that
//! does not answer is the finding `unreachable`; one that refuses us is a
//! failure (exit 3), not a finding: an [`Error::PinnedImage`] that keeps the
//! registry's typed error (and so its hint, such as logging in) as its
//! source.

use super::{Check, Finding, Id, Input, Sink, unreachable};
use crate::error::{Error, Result};
use crate::image::{Digest, Platform, Reference};
use crate::registry;
use crate::render::pin::repository_of;
use crate::upstream::cache::Cache;

/// `image-exists`.
pub const IMAGE_EXISTS: Id = Id {
    name: "image-exists",
    doc: "\
### What
With `--online`: the pinned image digest does not resolve in its registry, or
is not a multi-platform index holding exactly one distinct, existing image
for every platform of `[image] platforms`.

### Why
A registry's retention policy deletes untagged or old images, and a
single-platform push replaces an index under the same tag. A chart pinned to
a digest that is gone fails on the next node that pulls it; one that misses
an architecture fails only on those nodes.

### Example
```text
image-exists
  templates/multus-daemonset-thick.yml:159: error: the pinned `ghcr.io/cozystack/cozystack/multus-cni:v1.6.0@sha256:0a92…` does not resolve: manifest `…` not found at `…` (fix: rebuild and pin it with `revendor image build --push`, or pin an existing digest with `revendor image pin`)
```
",
};

pub(super) const CHECK: Check = Check {
    name: "image_exists",
    ids: &[IMAGE_EXISTS],
    online_only: true,
    run: check,
};

fn check(input: &Input<'_>, sink: &mut Sink) -> Result<()> {
    for image in &input.config.images {
        if let Some(locked) = input.lock.image(image.name.as_deref()) {
            check_image(input, image, locked, sink)?;
        }
    }
    Ok(())
}

fn check_image(
    input: &Input<'_>,
    image: &crate::config::Image,
    locked: &crate::config::lock::LockedImage,
    sink: &mut Sink,
) -> Result<()> {
    let Ok(reference) = Reference::parse(&locked.reference) else {
        return Ok(());
    };
    let Some(digest) = reference.digest().cloned() else {
        return Ok(());
    };
    let platforms: Vec<Platform> = image
        .platforms
        .iter()
        .filter_map(|p| Platform::parse(p).ok())
        .collect();
    let client = input.ctx.registry()?;
    let (file, line) =
        site(input, &locked.reference)?.unwrap_or(("vendor.toml".to_owned(), image.line));
    match client.resolve_index_known(&reference, &platforms, Some(&digest), &input.ctx.cache) {
        Ok(index) => {
            input.ctx.shell.verbose(format!(
                "image-exists: {} is an index of {}",
                locked.reference,
                index
                    .children
                    .iter()
                    .map(|(p, _)| p.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            Ok(())
        }
        Err(e) if is_finding(&e) => {
            let what = if matches!(e, registry::Error::ManifestUnknown { .. }) {
                "does not resolve"
            } else {
                "is not the index it should be"
            };
            sink.push(
                Finding::error(
                    IMAGE_EXISTS.name,
                    file,
                    line,
                    format!("the pinned `{}` {what}: {e}", locked.reference),
                )
                .fix("rebuild and pin it with `revendor image build --push`, or pin an existing digest with `revendor image pin`"),
            );
            Ok(())
        }
        Err(source) => {
            let what = format!(
                "{} could not verify `{}`",
                IMAGE_EXISTS.name, locked.reference
            );
            let failed = Err(Error::Registry(source));
            match unreachable::answered::<()>(failed, sink, &what, &file, line) {
                Err(Error::Registry(source)) => Err(Error::PinnedImage {
                    reference: locked.reference.clone(),
                    source,
                }),
                other => other.map(drop),
            }
        }
    }
}

/// Manifests are kept in the content-addressed download cache, by their
/// sha256: a nightly check asks the registry for the pinned index and its
/// children by `HEAD` only.
impl registry::KnownManifests for Cache {
    fn get(&self, digest: &Digest) -> Option<Vec<u8>> {
        Cache::get(self, digest.hex())
    }

    fn keep(&self, body: &[u8]) {
        self.put(body);
    }
}

/// Whether the registry answered and the answer is wrong (a finding), as
/// opposed to the conversation failing (an error).
fn is_finding(e: &registry::Error) -> bool {
    use registry::Error as E;
    matches!(
        e,
        E::ManifestUnknown { .. }
            | E::DigestMismatch { .. }
            | E::Manifest { .. }
            | E::NotAnIndex { .. }
            | E::Platforms { .. }
            | E::DuplicatePlatform { .. }
            | E::ChildWithoutPlatform { .. }
            | E::DuplicateChild { .. }
            | E::ChildNotImage { .. }
            | E::UnexpectedDigest { .. }
    )
}

/// The first pin site naming the locked reference, to point a finding at.
fn site(input: &Input<'_>, locked: &str) -> Result<Option<(String, usize)>> {
    for pin in &input.config.pins {
        let Some(parsed) = input.manifest(&pin.file)? else {
            continue;
        };
        let Ok(manifest) = parsed.as_ref() else {
            continue;
        };
        if let Some(field) = manifest
            .images()
            .into_iter()
            .find(|f| f.value == locked || pin.matches(repository_of(&f.value)))
        {
            return Ok(Some((pin.file.clone(), field.line)));
        }
    }
    Ok(None)
}
