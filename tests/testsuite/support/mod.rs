//! Support shared by the integration tests: a GitHub stand-in on loopback ports, local git
//! repositories, temporary packages and the real-world data loader.
//!
//! | module | gives |
//! | --- | --- |
//! | `server` | the one HTTP/1.1 test server on `std::net` (also under `registry_support`) |
//! | `app` | a small upstream (`example/app`) and the package vendoring it |
//! | `daemonset` | the standard example package: its DaemonSet, namespace patch and vendor.toml |
//! | `helm` | the helm the tests render with, and a copy of the repository's own package |
//! | `github` | [`GitHub`]: API, raw files, archives, release assets, faults, request log |
//! | `realworld` | [`Realworld`]: the real multus upstream and the CNI plugins resolvers |
//! | `multus_dockerfile` | our multus Dockerfile in cozystack's shape, for the real-world tests |
//! | `git` | [`GitRepo`]: real git repositories reached by `file://` URL |
//! | `chart_repo` | [`chart_repo::ChartRepo`]: a chart repository of Helm-packaged charts, served over HTTP |
//! | `package` | [`TempPackage`]: a package directory to run the tool in and compare |
//! | `kill` | [`kill::Rounds`]: SIGKILL at seeded random moments of a run, and what must hold |
//! | `named_upstreams` | vendor.toml tables of packages with named upstreams and images |
//! | `run` | [`Revendor`]: the real binary, pointed at a package and the stand-in |
//! | `tls` | [`tls::TestCa`]: a fresh CA and loopback server certificate, and how a run trusts it |
//! | `tmux` | [`Tmux`]: a real terminal to run the binary in and read the screen of |
//!
//! Include it with `mod support;` and `use support::{GitHub, ...};`.

// Every integration test is its own crate and uses only part of this module; without this,
// each would warn about the items and the re-exports below that it leaves unused.
#![allow(dead_code, unused_imports)]

pub mod app;
pub mod chart_repo;
pub mod daemonset;
pub mod example_toml;
pub mod git;
pub mod github;
pub mod helm;
pub mod kill;
pub mod multus_dockerfile;
pub mod named_upstreams;
pub mod package;
pub mod realworld;
pub mod run;
pub mod server;
pub mod tls;
pub mod tmux;

pub use git::GitRepo;
pub use github::GitHub;
pub use package::TempPackage;
pub use realworld::Realworld;
pub use run::{Revendor, Run};
pub use tmux::Tmux;
