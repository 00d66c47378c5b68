//! `image-stale`: the pinned image was built from other inputs than the
//! package now holds (issue 22).
//!
//! `image build` records the content hash of what went into the image
//! (`builder::content_hash`: the Dockerfile, the context, the `VERSION`
//! argument, the platforms) in the lock, to skip a build whose inputs did
//! not move. The same hash, taken again over the package on disk, says
//! whether the pinned image still is what the recipe builds: a bot's
//! digest-only bump of a `FROM` line, an edited source patch or a moved
//! `VERSION` all change it, while `image-pin` still sees a well-formed pin.
//!
//! 1. Only an image whose lock entry has a content hash is compared (one
//!    pinned by `image pin` alone was never built here).
//! 2. The hash is taken as `image build` takes it without pass-through
//!    builder arguments (`image build -- <args>`), which the lock does not
//!    keep: an image built with them is reported too, and `[checks]` can
//!    lower the id for such a package.
//! 3. When the lock records the base digests the image was built on, the
//!    finding names the first `FROM` that moved; else the Dockerfile.

use super::{Check, Finding, Id, Input, Sink};
use crate::config::Image;
use crate::config::lock::LockedImage;
use crate::dockerfile::{Base, Dockerfile};
use crate::error::Result;

/// `image-stale`.
pub const IMAGE_STALE: Id = Id {
    name: "image-stale",
    doc: "\
### What
The inputs of an image (its Dockerfile, its build context, the `VERSION` it
is built with, its platforms) hash to another content hash than the lock
records for the pinned image, which `image build` wrote when it built it.

### Why
A digest-only bump of a `FROM` line (a bot's), an edited source patch or a
new version leaves a well-formed pin behind: the chart still runs the image
built from the old bases and sources, and nothing else says so.

### Example
```text
image-stale
  images/multus-cni/Dockerfile:1: error: the pinned `ghcr.io/cozystack/cozystack/multus-cni:v1.6.0@sha256:0a92…` was built on `golang:1.26@sha256:aaaa…`, and this FROM now names `sha256:bbbb…` (fix: rebuild and pin it: `revendor image build --push`)
```
",
};

pub(super) const CHECK: Check = Check {
    name: "image_stale",
    ids: &[IMAGE_STALE],
    online_only: false,
    run: check,
};

fn check(input: &Input<'_>, sink: &mut Sink) -> Result<()> {
    for image in &input.config.images {
        let Some(locked) = input.lock.image(image.name.as_deref()) else {
            continue;
        };
        let Some(recorded) = locked.content_hash.as_deref() else {
            continue;
        };
        // A missing recipe or context is builder-go's and the build's to report.
        let context = input.ctx.root.join(&image.context);
        let dockerfile = input.ctx.root.join(&image.dockerfile);
        if !context.is_dir() || !dockerfile.is_file() {
            continue;
        }
        let version = input.stamp.version_arg(input.config, image);
        let now = crate::builder::content_hash(
            &context,
            &dockerfile,
            &[("VERSION".to_owned(), version)],
            &image.platforms,
            &[],
        )?;
        if now.to_string() == recorded {
            continue;
        }
        let df = input.dockerfile(&image.dockerfile)?.map(|(_, df)| df);
        sink.push(finding(
            image,
            locked,
            df.as_ref(),
            recorded,
            &now.to_string(),
        ));
    }
    Ok(())
}

/// The finding for `image`, whose inputs hash to `now` where the lock says
/// `recorded`: at the first `FROM` whose digest moved from the base the
/// image was built on, else at the Dockerfile's first line.
fn finding(
    image: &Image,
    locked: &LockedImage,
    df: Option<&Dockerfile>,
    recorded: &str,
    now: &str,
) -> Finding {
    let pinned = &locked.reference;
    let fix = "rebuild and pin it: `revendor image build --push`";
    let moved = df.into_iter().flat_map(|df| &df.stages).find_map(|stage| {
        let Base::Image(r) = &stage.base else {
            return None;
        };
        let key = format!("{}:{}", r.name(), r.tag()?);
        let built_on = locked.bases.get(&key)?;
        let digest = r.digest()?.to_string();
        (*built_on != digest).then(|| (stage.line, key, built_on.clone(), digest))
    });
    let (line, message) = match moved {
        Some((line, key, built_on, digest)) => (
            line,
            format!(
                "the pinned `{pinned}` was built on `{key}@{built_on}`, and this FROM now names `{digest}`"
            ),
        ),
        None => (
            1,
            format!(
                "the pinned `{pinned}` was built from other inputs (content {recorded}) than the package now holds (content {now})"
            ),
        ),
    };
    Finding::error(IMAGE_STALE.name, &image.dockerfile, line, message).fix(fix)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image() -> Image {
        Image {
            name: None,
            repository: "r".into(),
            tag: "v1".into(),
            context: "images/app".into(),
            dockerfile: "images/app/Dockerfile".into(),
            platforms: Vec::new(),
            go: None,
            builder: "buildx".into(),
            provenance: false,
            line: 1,
        }
    }

    #[test]
    fn the_finding_names_the_from_that_moved() {
        let (a, b) = ("a".repeat(64), "b".repeat(64));
        let df = Dockerfile::parse(&format!(
            "FROM debian:stable@sha256:{a}\nFROM golang:1.26@sha256:{b} AS build\n"
        ))
        .unwrap();
        let mut locked = LockedImage {
            reference: "r:v1@sha256:00".into(),
            ..LockedImage::default()
        };
        locked
            .bases
            .insert("debian:stable".into(), format!("sha256:{a}"));
        locked
            .bases
            .insert("golang:1.26".into(), format!("sha256:{a}"));
        let f = finding(&image(), &locked, Some(&df), "sha256:1", "sha256:2");
        assert_eq!((f.file.as_str(), f.line), ("images/app/Dockerfile", 2));
        assert!(
            f.message.contains(&format!("now names `sha256:{b}`")),
            "{}",
            f.message
        );
        locked.bases.clear();
        let f = finding(&image(), &locked, Some(&df), "sha256:1", "sha256:2");
        assert_eq!(f.line, 1);
        assert!(f.message.contains("(content sha256:1)"), "{}", f.message);
    }
}
