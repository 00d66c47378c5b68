//! `image-pin`: every pin site names exactly the locked
//! `repository:tag@sha256:<64 hex>`, and nothing else names the image.
//!
//! 1. The locked reference must be a full pin: repository, tag and digest.
//! 2. Every container `image:` field of the rendered file (found by parsing,
//!    [`manifest::Manifest::images`]) whose repository is a site of the
//!    `[[pin]]` must equal it.
//! 3. A `yaml` pin's keys must hold what the locked reference gives them
//!    (`image_pin_yaml`).
//! 4. Text a pin cannot reach is found line by line: a line naming an
//!    upstream image the pin replaces (taken from the pristine copy's own
//!    image fields and `replaces`), wherever it is, or a line naming the
//!    pinned repository that is not an `image:` field (a `sh -c` script, a
//!    comment). The image there would never be the pinned one.
//! 5. A site naming the locked digest under another tag is a rename (a
//!    release promotion), reported and fixed apart (`image_pin_rename`).

use std::collections::BTreeSet;

use super::image_pin_rename::{Renames, renamed};
use super::{Check, Finding, Id, Input, Sink};
use crate::config::Pin;
use crate::config::lock::LOCK_PATH;
use crate::error::Result;
use crate::image::Reference;
use crate::manifest::{ImageField, Manifest};
use crate::render::pin::repository_of;
use crate::upstream::Pristine;

/// `image-pin`.
pub const IMAGE_PIN: Id = Id {
    name: "image-pin",
    doc: "\
### What
A pin site (a container `image:` field naming the `[[pin]]` repository or
the upstream image it replaces) does not name the locked
`repository:tag@sha256:<64 hex>`; a line still names the upstream image; the
pinned repository appears outside an `image:` field (in a script block, where
no pin reaches); a key a `yaml` pin writes does not hold what the locked
reference gives it (`<tag>@sha256:…` at one key, or the split repository,
tag and digest keys), or is missing; or the lock's reference is not a full
pin. A package whose lock pins no image yet (before its first image build)
gets one warning per pin.

### Why
One image line left at upstream's `snapshot-thick` runs an image nobody
built or verified, on every node, and nothing fails until that container
misbehaves. A tag without a digest can be moved under the chart.

### Example
```text
image-pin
  templates/multus-daemonset-thick.yml:226: error: `ghcr.io/k8snetworkplumbingwg/multus-cni:snapshot-thick` is the upstream image, not the locked `ghcr.io/cozystack/cozystack/multus-cni:v1.6.0@sha256:0a92…` (fix: run `revendor render` to write the locked pin)
```
",
};

pub(super) const CHECK: Check = Check {
    name: "image_pin",
    ids: &[IMAGE_PIN],
    online_only: false,
    run: check,
};

fn check(input: &Input<'_>, sink: &mut Sink) -> Result<()> {
    let id = IMAGE_PIN.name;
    let mut reported = BTreeSet::new();
    let mut renames = Renames::default();
    for pin in &input.config.pins {
        let Some(image) = input.lock.image(pin.image.as_deref()) else {
            // Before the first image build there is nothing to pin: the
            // chart runs the upstream image, which the lock agrees with.
            sink.push(
                Finding::warning(
                    id,
                    "vendor.toml",
                    pin.line,
                    format!(
                        "no image of `{}` is pinned yet, so `{}` still runs the upstream image",
                        pin.repository, pin.file
                    ),
                )
                .fix(
                    "build and pin it with `revendor image build --push` (or `revendor image pin`)",
                ),
            );
            continue;
        };
        let locked = image.reference.as_str();
        let full =
            Reference::parse(locked).is_ok_and(|r| r.tag().is_some() && r.digest().is_some());
        if !full && reported.insert(locked.to_owned()) {
            sink.push(
                Finding::error(
                    id,
                    LOCK_PATH,
                    1,
                    format!("the locked image `{locked}` is not `repository:tag@sha256:<64 hex>`"),
                )
                .fix("pin it again with `revendor image pin`"),
            );
        }
        if repository_of(locked) != pin.repository {
            sink.push(
                Finding::error(
                    id,
                    "vendor.toml",
                    pin.line,
                    format!(
                        "the lock pins `{locked}`, not an image of `{}`",
                        pin.repository
                    ),
                )
                .fix("pin an image of that repository with `revendor image pin`"),
            );
        }
        match &pin.yaml {
            Some(keys) => {
                let at = (pin, locked);
                super::image_pin_yaml::check_keys(id, input, at, keys, &mut renames, sink)?
            }
            None => check_file(input, pin, locked, &mut renames, sink)?,
        }
    }
    renames.report(id, input, sink)
}

/// A `[[pin]]` of a whole manifest (no `yaml` keys): it parses, its image
/// fields are the locked reference, and no other line names the upstream
/// or the pinned repository.
fn check_file(
    input: &Input<'_>,
    pin: &Pin,
    locked: &str,
    renames: &mut Renames,
    sink: &mut Sink,
) -> Result<()> {
    let id = IMAGE_PIN.name;
    let Some(text) = input.text(&pin.file)? else {
        return Ok(());
    };
    let Some(parsed) = input.manifest(&pin.file)? else {
        return Ok(());
    };
    let manifest = match parsed.as_ref() {
        Ok(m) => m,
        Err(e) => {
            sink.push(
                Finding::error(
                    id,
                    &pin.file,
                    e.line(),
                    format!("cannot read `{}`: {e}", pin.file),
                )
                .fix("fix the YAML so it parses"),
            );
            return Ok(());
        }
    };
    let upstream = upstream_repositories(input, pin)?;
    let images = manifest.images();
    let reported = image_fields(pin, locked, &images, renames, sink);
    let fields: BTreeSet<usize> = images.iter().map(|f| f.line).collect();
    mentions(pin, &text, &upstream, &reported, &fields, sink);
    Ok(())
}

/// Each `image:` field of the pin's repository (or one it replaces) is the
/// locked reference: a renamed tag is left to `renames`, anything else is a
/// finding. Returns the lines reported.
fn image_fields(
    pin: &Pin,
    locked: &str,
    images: &[ImageField],
    renames: &mut Renames,
    sink: &mut Sink,
) -> BTreeSet<usize> {
    let id = IMAGE_PIN.name;
    let mut reported = BTreeSet::new();
    for field in images {
        let repository = repository_of(&field.value);
        if !pin.matches(repository) || field.value == locked {
            continue;
        }
        if let Some(tag) = renamed(locked, &field.value) {
            reported.insert(field.line);
            let at = (pin.file.as_str(), field.line);
            renames.push(pin.image.as_deref(), locked, at, &field.value, tag);
            continue;
        }
        let message = if repository == pin.repository {
            format!("`{}` is not the locked `{locked}`", field.value)
        } else {
            format!(
                "`{}` is the upstream image, not the locked `{locked}`",
                field.value
            )
        };
        reported.insert(field.line);
        sink.push(
            Finding::error(id, &pin.file, field.line, message)
                .fix("run `revendor render` to write the locked pin"),
        );
    }
    reported
}

/// Lines of `text` not `reported` yet that still name an `upstream`
/// repository, or name the pin's repository outside the image `fields`
/// (a script block or comment, where no pin reaches).
fn mentions(
    pin: &Pin,
    text: &str,
    upstream: &[String],
    reported: &BTreeSet<usize>,
    fields: &BTreeSet<usize>,
    sink: &mut Sink,
) {
    let id = IMAGE_PIN.name;
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        if reported.contains(&number) {
            continue;
        }
        if let Some(up) = upstream.iter().find(|u| line.contains(u.as_str())) {
            sink.push(
                Finding::error(
                    id,
                    &pin.file,
                    number,
                    format!("line {number} still names the upstream image `{up}`"),
                )
                .fix(format!(
                    "use the pinned `{}` in an `image:` field, or drop the reference",
                    pin.repository
                )),
            );
        } else if line.contains(pin.repository.as_str()) && !fields.contains(&number) {
            sink.push(
                Finding::error(
                    id,
                    &pin.file,
                    number,
                    format!(
                        "`{}` appears outside a container `image:` field (a script block or comment), where no pin reaches",
                        pin.repository
                    ),
                )
                .fix("name the image only in `image:` fields, so the pin covers every use"),
            );
        }
    }
}

/// The upstream repositories `pin` replaces: its `replaces`, and the image
/// fields of the pristine copy rendered into the pin's file that are sites
/// of the pin.
fn upstream_repositories(input: &Input<'_>, pin: &Pin) -> Result<Vec<String>> {
    let mut out: BTreeSet<String> = pin.replaces.iter().cloned().collect();
    for vendor in input.files()?.iter().filter(|v| v.to == pin.file) {
        let pristine = input.pristine(vendor)?;
        let Pristine::Verified(bytes) = &*pristine else {
            continue;
        };
        let Ok(manifest) = Manifest::parse(&String::from_utf8_lossy(bytes)) else {
            continue;
        };
        for field in manifest.images() {
            let repository = repository_of(&field.value);
            if pin.matches(repository) && repository != pin.repository {
                out.insert(repository.to_owned());
            }
        }
    }
    Ok(out.into_iter().collect())
}
