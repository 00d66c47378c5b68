//! Helm charts as upstreams: a chart from an HTTP chart repository
//! ([`Repo`]) or an OCI registry ([`Oci`]), read as `helm pull --untar`
//! reads it.
//!
//! 1. [`index`] reads one chart's versions out of a repository's
//!    index.yaml without parsing the other charts;
//! 2. [`chart`] unpacks a verified archive into the chart's files, refusing
//!    what could write outside it or is not the chart asked for;
//! 3. [`Repo`] and [`Oci`] are the [`Source`](super::Source)s: versions,
//!    files, listings and the archive (or manifest) the lock records.
//!
//! Credentials for private repositories come from `REVENDOR_HELM_AUTH`
//! ([`auth`]).

pub mod auth;
pub mod chart;
pub mod index;
pub mod oci;
mod repo;

pub use oci::Oci;
pub use repo::{MAX_ARCHIVE, MAX_INDEX, Repo};
