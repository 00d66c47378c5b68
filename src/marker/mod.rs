//! What a marker is compared with: expected values and resolver text.
//!
//! A Dockerfile marker (`# talos-cni-plugins-checked-against: v1.13.6`)
//! vouches that a pin was checked against a release. `revendor check` compares
//! it offline with a value read from the package (`expect`), and online with
//! what the release really ships (`resolver`). The fetching is the caller's;
//! this module only reads text, by parsing it:
//!
//! - [`expect_yaml`]: a YAML file and a dotted key path, optionally dropping
//!   an `@sha256:` digest from the value;
//! - [`talos_pkgs`] and [`pkgs_ref`]: which siderolabs/pkgs revision a Talos
//!   release's Makefile builds with, and the ref to fetch its Pkgfile at;
//! - [`pkgfile_cni_version`]: `cni_version` under the Pkgfile's `vars:`;
//! - [`kube_ovn_cni_version`]: `ARG CNI_PLUGINS_VERSION=` of kube-ovn's
//!   `dist/images/Dockerfile.base`;
//! - [`sidecar_sha256`]: the digest in a release asset's `.sha256` sidecar.
//!
//! Anything that no longer has the expected layout is a distinct error that
//! says so, never a guess.

mod expect;
mod kube_ovn;
mod make;
mod pkgfile;
mod sidecar;
mod talos;

pub use expect::{expect_yaml, strip_digest};
pub use kube_ovn::kube_ovn_cni_version;
pub use pkgfile::pkgfile_cni_version;
pub use sidecar::{cni_asset, sidecar_sha256};
pub use talos::{PkgsRef, TalosPkgs, pkgs_ref, talos_pkgs};

/// A value read from a file, with its 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineValue {
    /// The value.
    pub value: String,
    /// Where it was read.
    pub line: usize,
}

/// Why an expected or resolved value could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The YAML file does not parse (or its aliases expand past the bound):
    /// the parser's words, with their line and column.
    #[error("{0}")]
    Yaml(#[from] crate::manifest::Error),
    /// The Dockerfile does not parse.
    #[error("invalid Dockerfile")]
    Dockerfile(#[from] crate::dockerfile::Error),
    /// The key path is absent.
    #[error("no key `{key}` (the path ends at line {line})")]
    KeyMissing {
        /// The dotted key path.
        key: String,
        /// The line of the deepest part of the path that exists.
        line: usize,
    },
    /// The key holds a mapping or a sequence.
    #[error("key `{key}` at line {line} is not a string")]
    NotText {
        /// The dotted key path.
        key: String,
        /// The key's line.
        line: usize,
    },
    /// The key appears more than once with different values.
    #[error("key `{key}` has different values at lines {lines:?}")]
    Ambiguous {
        /// The dotted key path.
        key: String,
        /// Every line it appears at.
        lines: Vec<usize>,
    },
    /// The part after `@` is not `sha256:<64 hex>`.
    #[error("`{value}` at line {line} has a malformed digest")]
    Digest {
        /// The whole value.
        value: String,
        /// Its line.
        line: usize,
    },
    /// The Talos Makefile no longer pins pkgs the way this reads it.
    #[error("the Talos Makefile layout changed: {reason}")]
    TalosLayout {
        /// What differs.
        reason: String,
    },
    /// A pkgs version is neither a tag nor a `git describe`.
    #[error("`{value}` is neither a tag nor a git describe (`<tag>-<n>-g<hash>`)")]
    Describe {
        /// The value.
        value: String,
    },
    /// The pkgs Pkgfile no longer has `vars: cni_version:`.
    #[error("the pkgs Pkgfile layout changed: {reason}")]
    PkgfileLayout {
        /// What differs.
        reason: String,
    },
    /// kube-ovn's Dockerfile.base no longer pins `CNI_PLUGINS_VERSION`.
    #[error("kube-ovn's Dockerfile.base layout changed: {reason}")]
    KubeOvnLayout {
        /// What differs.
        reason: String,
    },
    /// A checksum sidecar line is not `<64 hex>  <file>`.
    #[error("malformed checksum line {line}: {reason}")]
    Sidecar {
        /// 1-based line in the sidecar.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// The sidecar does not name the asset it should.
    #[error("the checksum file names {found:?}, not `{expected}`")]
    SidecarAsset {
        /// The asset name expected.
        expected: String,
        /// The names it holds.
        found: Vec<String>,
    },
}
