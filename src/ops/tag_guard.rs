//! `image build --push` never moves a tag that already names another image
//! unless it is told to (issue 22: the nightly pushed an unreviewed build over
//! the tag a release ships and pins).
//!
//! Before the builder runs, the tag it would push is looked up in the
//! registry:
//!
//! 1. absent: the build pushes it;
//! 2. present, labelled with this build's content hash (`builder::LABEL`):
//!    built from the same inputs, so it is pinned as it is and nothing is
//!    built (a build is not reproducible to the byte: pushing again would move
//!    the tag to another digest of the same thing);
//! 3. present, anything else: refused, naming the digest it holds and the two
//!    ways on: a tag of the build's own (`IMAGE_TAG`, `--tag`), or permission
//!    to move it (`--move-tag`, or `PUBLISH_VERSIONED=1`, cozystack's release
//!    build). With permission the move is said as a warning.
//!
//! Only the tag that is built, read back and pinned is looked up: the extra
//! tags (`PUBLISH_VERSIONED`, `PUBLISH_FLOATING`) are pushed only when asked,
//! which is the permission.

use crate::builder::LABEL;
use crate::error::{Error, Result};
use crate::image::{Digest, Reference};
use crate::registry::{self, Client};
use crate::workspace::Context;

/// What the registry holds under the tag about to be pushed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Existing {
    /// Nothing, or another image the caller allowed to be moved: build and push.
    Free,
    /// An image built from the same content: pin this digest, build nothing.
    SameContent(Digest),
}

/// Looks `reference` up before a push of content `content_hash`; an error
/// when it names another image and `may_move` is false.
pub(crate) fn existing(
    ctx: &Context,
    client: &Client,
    reference: &Reference,
    content_hash: &Digest,
    may_move: bool,
) -> Result<Existing> {
    let held = match client.head_manifest(reference) {
        Ok(digest) => digest,
        Err(registry::Error::ManifestUnknown { .. }) => return Ok(Existing::Free),
        Err(e) => return Err(e.into()),
    };
    let label = client.image_label(&reference.with_digest(held.clone()), LABEL)?;
    if label.as_deref() == Some(content_hash.to_string().as_str()) {
        return Ok(Existing::SameContent(held));
    }
    if may_move {
        ctx.shell.warn(format!(
            "moving {reference} away from {held}, an image built from other content \
             (--move-tag or PUBLISH_VERSIONED=1)"
        ));
        return Ok(Existing::Free);
    }
    Err(Error::usage(
        format!(
            "{reference} already exists in the registry as {held}, built from other content; \
             pushing would move that tag, so nothing was built"
        ),
        "push a tag of this build's own (IMAGE_TAG, --tag), or pass --move-tag \
         (or PUBLISH_VERSIONED=1) to move it",
    ))
}
