//! revendor keeps a vendored upstream honest.
//!
//! A package directory holds `vendor.toml` (what is vendored, patched,
//! rewritten, built, pinned and checked), `upstream/lock.toml` (what was
//! vendored and verified), pristine copies under `upstream/`, patches, and the
//! rendered outputs; while an update waits for a person to resolve a source
//! patch's conflict, also the marked source files under
//! `upstream/.revendor-conflicts/`. The modules follow the data's path:
//!
//! | module | owns | reads / writes |
//! | --- | --- | --- |
//! | [`config`] | vendor.toml → `Config`, the lock | vendor.toml, upstream/lock.toml |
//! | [`upstream`] | releases, files, directory listings, source trees; the download cache | GitHub API (releases, git trees), raw files, archives, git |
//! | [`net`] | the one HTTP transport (scheme rule, deadline, retries), ETags and the token, cache file writes | the download cache |
//! | [`github`] | the one GitHub client: releases, commits, trees, raw files, archives, pull requests | GitHub API, raw files, archives |
//! | [`patch`] | parse, apply, 3-way merge, refresh — in memory | – |
//! | [`image`] | read-only OCI values: references, digests, manifests | – |
//! | [`registry`] | OCI distribution: auth, manifests, index verification | registries |
//! | [`builder`] | buildx and buildah command lines, the build's content hash | the build context |
//! | [`manifest`] | rendered YAML parsed (Helm lines tolerated), contracts | – |
//! | [`helm`] | `helm template` of a package's chart, cached by its inputs | the chart, `<cache>/helm/` |
//! | [`dockerfile`] | Dockerfile parsed: stages, ARGs, markers, CNI checksums | – |
//! | [`go`] | Go release versions: vendor.toml's `go`, golang tags, go.mod | – |
//! | [`marker`] | expected marker values and the online resolvers' formats | – |
//! | [`render`] | pin(rewrite(patches(upstream))): pristine copies, the patch stack, hand edits | upstream/ (read), the download cache |
//! | [`console`] | status on stderr, data on stdout | – |
//! | [`workspace`] | the run's `Context`: package, environment, network, console | – |
//! | [`check`] | the drift check: findings with stable ids | the package, upstream, registries |
//! | [`paths`] | the only writer: staged, all-or-nothing | the package tree |
//! | [`journal`] | an interrupted write's plan, and the package read as it leaves it | `.revendor-txn/` |
//! | [`pr`] | the upgrade's pull request text, a pure function | – |
//! | [`git`] | the package's own repository: read, commit (git2), push (the `git` command) | .git, `origin` |
//! | [`ops`] | one pipeline per command | – |
//! | [`report`] | findings as human lines, JSON, GitHub annotations | `$GITHUB_STEP_SUMMARY` |
//! | [`cli`] | flags, error rendering, exit codes | – |
//!
//! `main.rs` only calls [`cli::main`]. Which module may name which is
//! decided in one place, `tests/layers.rs`.

#![warn(missing_docs)]

pub mod builder;
pub mod check;
pub mod cli;
pub mod config;
pub mod console;
pub mod dockerfile;
pub mod env;
pub mod error;
pub mod git;
pub mod github;
pub mod go;
pub mod helm;
pub mod image;
pub mod journal;
pub mod manifest;
pub mod marker;
pub mod net;
pub mod ops;
pub mod patch;
pub mod paths;
pub mod pr;
pub mod registry;
pub mod render;
pub mod report;
pub mod upstream;
pub mod workspace;
