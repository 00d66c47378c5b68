//! Read access to OCI registries: resolve tags to digests, fetch and verify manifests, and
//! check a pushed multi-platform image (`Client::resolve_index`).
//!
//! Modules: `client` (requests on `net::Transport`, which owns connections, retries, the
//! deadline and the http/https rule), `auth` (challenges and tokens),
//! `credentials` (Docker config and credential helpers), `mirror` (`REVENDOR_REGISTRY_MIRRORS`),
//! `verify` (index checks), `label` (one label of a pushed image's config), `error` (`Error`, spec codes), `secret` (redaction).
//!
//! Pushing is not here: builders (buildx, buildah) push, revendor reads back and verifies.
//!
//! Build a client with custom retry and timeout settings:
//!
//! ```no_run
//! use std::time::Duration;
//! use revendor::registry::Client;
//!
//! let client = Client::builder()
//!     .retries(5)
//!     .backoff(Duration::from_millis(200), Duration::from_secs(5))
//!     .timeout(Duration::from_secs(60))
//!     .build();
//! ```

mod auth;
mod client;
mod credentials;
mod error;
mod label;
mod mirror;
mod secret;
mod verify;

pub use client::{Client, ClientBuilder, FetchedManifest, MANIFEST_LIMIT};
pub use credentials::{Credential, Credentials};
pub use error::{ApiError, Error, ErrorCode};
pub use mirror::Mirrors;
pub use secret::Secret;
pub use verify::{KnownManifests, VerifiedIndex, metadata_digest};
