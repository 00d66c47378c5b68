//! Read-only OCI values: [`Digest`], [`Reference`], [`Platform`] and the manifest kinds.
//!
//! Nothing here touches the network or the disk; `registry` fetches bytes and hands them to
//! [`Manifest::parse`], and callers hash bodies with [`Digest::of`] before trusting them.

mod digest;
mod error;
mod manifest;
mod platform;
mod reference;

pub use digest::{Digest, Hasher};
pub use error::Error;
pub use manifest::{Descriptor, ImageManifest, Index, Manifest, MediaType};
pub use platform::Platform;
pub use reference::{DOCKER_HUB, Reference, canonical_registry};
