//! The image builders revendor drives, as exact command lines, and the
//! content hash that tells whether a build is needed at all.
//!
//! revendor does not build images itself. `image build`:
//!
//! 1. hashes what goes into the image ([`content_hash`]: the context files,
//!    the Dockerfile, the build arguments and the platforms);
//! 2. turns the build into [`Step`]s with [`plan`]: argument vectors for
//!    `docker buildx` (`buildx.rs`) or `buildah` (`buildah.rs`), shown as
//!    they are by `--dry-run`;
//! 3. asks the builder whether it can run at all ([`probe`]: `docker buildx
//!    version`, `buildah version`), so a docker without the buildx plugin is
//!    named as such instead of failing on `unknown flag: --platform`;
//! 4. runs each step with [`Step::run`]: no shell ever sees an argument, the
//!    builder's output goes to stderr, and a failure keeps the tail of its
//!    stderr for the error;
//! 5. reads the digest the builder says it pushed (buildx `--metadata-file`,
//!    buildah `--digestfile` via [`read_digest_file`]); the caller then reads
//!    the tag back from the registry rather than trusting it.
//!
//! Builders read their own environment, and revendor passes it through
//! untouched instead of growing flags for it: `DOCKER_CONFIG` and
//! `BUILDX_BUILDER` for buildx; `CONTAINERS_STORAGE_CONF` (storage driver,
//! root and run root), `BUILDAH_ISOLATION` (`chroot` where no OCI runtime can
//! run) and `REGISTRY_AUTH_FILE` for buildah. The command line is always the
//! one shown by `--dry-run`. The one thing revendor adds on its own is
//! `--tls-verify=false` when buildah pushes to a loopback registry: plain
//! http is allowed there and nowhere else, as for every registry read.
//!
//! What vendor.toml cannot know is passed in by the caller: extra tags,
//! `--cache-from`/`--cache-to` (buildx's syntax; buildah takes a registry
//! repository, so `type=registry,ref=R` becomes `R` and other cache types
//! are refused), and arguments for the build command itself, appended
//! verbatim (`Build::extra_args`).

mod buildah;
mod buildx;
mod command;
mod hash;
mod probe;

use std::path::PathBuf;

pub use command::{Step, read_digest_file};
pub use hash::{LABEL, content_hash};
pub use probe::probe;

use crate::image::Reference;

/// Why a build could not be planned, run or read back from the builder.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The builder program could not be started (not installed, not executable).
    #[error("failed to run `{program}`")]
    Spawn {
        /// The program, as named on the command line.
        program: String,
        /// The operating system's answer.
        source: std::io::Error,
    },
    /// The builder ran and failed.
    #[error("`{command}` failed ({status}){}", tail(stderr_tail))]
    Failed {
        /// The command line, quoted for a shell.
        command: String,
        /// How it ended: `exit status: 1`, `signal: 9`.
        status: String,
        /// The last lines it wrote to stderr.
        stderr_tail: String,
    },
    /// A file of the build context could not be read while hashing it.
    #[error("failed to read `{}` of the build context", path.display())]
    Context {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's answer.
        source: std::io::Error,
    },
    /// The builder is not there or cannot build: docker without the buildx
    /// plugin, a builder that does not answer its version command.
    #[error("{builder} cannot build here: {reason}")]
    Unavailable {
        /// The builder that was asked.
        builder: Kind,
        /// What the probe saw.
        reason: String,
    },
    /// The build asks for something this builder cannot do.
    #[error("{builder} cannot {what}")]
    Unsupported {
        /// The builder that was planned.
        builder: Kind,
        /// What it cannot do, naming the value.
        what: String,
    },
    /// The builder reported success but left no usable digest behind.
    #[error("the builder left no usable digest in `{}`: {reason}", path.display())]
    DigestFile {
        /// The digest file the builder was told to write.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

impl Error {
    /// What to do about it, when there is something to do.
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::Spawn { .. } => Some(
                "install the builder, or pick the other one with --builder (buildx, buildah)"
                    .into(),
            ),
            Error::Unavailable {
                builder: Kind::Buildx,
                ..
            } => Some(
                "install docker and its buildx plugin (in GitHub Actions: docker/setup-buildx-action), \
                 or build with buildah: set `builder = \"buildah\"` in vendor.toml's [image], \
                 or pass --builder buildah"
                    .into(),
            ),
            Error::Unavailable {
                builder: Kind::Buildah,
                ..
            } => Some(
                "install buildah, or build with docker buildx: set `builder = \"buildx\"` \
                 in vendor.toml's [image], or pass --builder buildx"
                    .into(),
            ),
            Error::Unsupported {
                builder: Kind::Buildah,
                ..
            } => Some(
                "buildah caches in a registry repository: pass --cache-from/--cache-to \
                 as `type=registry,ref=<repository>` or `<repository>`"
                    .into(),
            ),
            _ => None,
        }
    }
}

fn tail(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!(":\n{text}")
    }
}

/// The builders of vendor.toml's `builder` key and `--builder`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// `docker buildx build`: what users have; needs a docker engine.
    Buildx,
    /// `buildah build` and `buildah manifest push`: daemonless.
    Buildah,
}

impl Kind {
    /// The builder named `name` (`buildx`, `buildah`).
    pub fn parse(name: &str) -> Option<Kind> {
        match name {
            "buildx" => Some(Kind::Buildx),
            "buildah" => Some(Kind::Buildah),
            _ => None,
        }
    }

    /// The name vendor.toml uses.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Buildx => "buildx",
            Kind::Buildah => "buildah",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One build, as every builder needs it. Paths in `context` and `dockerfile`
/// are relative to the package, where the steps run.
#[derive(Debug, Clone)]
pub struct Build {
    /// The build context, relative to the package.
    pub context: String,
    /// The Dockerfile when it is not `<context>/Dockerfile`.
    pub dockerfile: Option<String>,
    /// Platforms, `os/arch[/variant]`, in the configured order.
    pub platforms: Vec<String>,
    /// `--build-arg NAME=value`, in order.
    pub build_args: Vec<(String, String)>,
    /// `--label NAME=value`, in order.
    pub labels: Vec<(String, String)>,
    /// `repository:tag` the image is tagged (and pushed) as, and read back.
    pub reference: Reference,
    /// More tags pushed with it (cozystack's `PUBLISH_VERSIONED`,
    /// `PUBLISH_FLOATING`); never read back or pinned.
    pub extra_tags: Vec<Reference>,
    /// `--cache-from` values, in buildx's syntax.
    pub cache_from: Vec<String>,
    /// `--cache-to` values, in buildx's syntax.
    pub cache_to: Vec<String>,
    /// Arguments appended to the build command as they are (`image build --
    /// <args>`).
    pub extra_args: Vec<String>,
    /// Whether to push the multi-platform image to the registry.
    pub push: bool,
    /// Whether buildx attaches provenance attestations.
    pub provenance: bool,
    /// Where the builder writes the digest it pushed: buildx's metadata JSON
    /// or buildah's digest file.
    pub digest_file: PathBuf,
}

/// The steps that run `build` with `kind`, in order; an error when the
/// build asks for what `kind` cannot do.
pub fn plan(kind: Kind, build: &Build) -> Result<Vec<Step>, Error> {
    match kind {
        Kind::Buildx => Ok(buildx::plan(build)),
        Kind::Buildah => buildah::plan(build),
    }
}

/// `NAME=value` for `--build-arg` and `--label`.
fn pair((name, value): &(String, String)) -> String {
    format!("{name}={value}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_their_names() {
        for kind in [Kind::Buildx, Kind::Buildah] {
            assert_eq!(Kind::parse(kind.name()), Some(kind));
        }
        assert_eq!(Kind::parse("kaniko"), None);
    }

    #[test]
    fn failures_show_the_stderr_tail_after_the_command() {
        let e = Error::Failed {
            command: "buildah build .".into(),
            status: "exit status: 125".into(),
            stderr_tail: "Error: no space left".into(),
        };
        assert_eq!(
            e.to_string(),
            "`buildah build .` failed (exit status: 125):\nError: no space left"
        );
    }
}
