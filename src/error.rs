//! The crate's error type and the one mapping from errors to exit codes.
//!
//! Library code returns typed errors from the module that knows the failure
//! (`config::ConfigError`, `net::HttpError`, `patch::ApplyError`, ...); this
//! enum gathers them so `cli` can render each once and pick the exit code from
//! [`Error::exit_code`], the only place where DESIGN.md's four codes live.
//!
//! A finding (drift, a failed check) is not an error: it travels as a report
//! and becomes exit code 1 in `cli`. The one exception is a patch conflict in
//! `update`, which stops the job and is an [`Error::Conflict`].

use std::path::PathBuf;

/// Exit codes of the public contract (DESIGN.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// Done, or nothing to do.
    Clean = 0,
    /// Drift, findings or a patch conflict.
    Findings = 1,
    /// Usage or configuration error.
    Usage = 2,
    /// Network, registry, builder or I/O failure.
    Failure = 3,
}

/// Everything that can stop a revendor command.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// vendor.toml, the lock or another input file is malformed.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// The command line asks for something impossible.
    #[error("{message}")]
    Usage {
        /// What is wrong.
        message: String,
        /// What to do about it.
        hint: Option<String>,
    },
    /// An HTTP request failed after its retries.
    #[error(transparent)]
    Http(#[from] crate::net::HttpError),
    /// A git upstream could not be read.
    #[error("failed to read git upstream `{url}`: {message}")]
    Git {
        /// The repository URL.
        url: String,
        /// What git2 said.
        message: String,
    },
    /// A file could not be read or written.
    #[error("failed to {action} `{}`: {source}", path.display())]
    Io {
        /// What was attempted: "read", "write", "rename", ...
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The operating system's answer.
        source: std::io::Error,
    },
    /// A download did not match the sha256 it must have.
    #[error("`{what}` has sha256 {actual}, expected {expected}")]
    Checksum {
        /// The URL or cache entry.
        what: String,
        /// The recorded sha256.
        expected: String,
        /// The sha256 of what arrived.
        actual: String,
    },
    /// A patch could not be carried to the new upstream; nothing was written.
    #[error("{0}")]
    Conflict(String),
    /// An upstream or registry answer could not be understood.
    #[error("{0}")]
    Upstream(String),
    /// A registry could not be read, or what it served failed verification.
    #[error(transparent)]
    Registry(#[from] crate::registry::Error),
    /// An image builder could not run or failed.
    #[error(transparent)]
    Builder(#[from] crate::builder::Error),
}

impl Error {
    /// The exit code this error ends the process with.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            Error::Config(_) | Error::Usage { .. } => ExitCode::Usage,
            Error::Conflict(_) => ExitCode::Findings,
            Error::Http(_)
            | Error::Git { .. }
            | Error::Io { .. }
            | Error::Checksum { .. }
            | Error::Upstream(_)
            | Error::Registry(_)
            | Error::Builder(_) => ExitCode::Failure,
        }
    }

    /// What the user can do about it, printed after the message.
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::Config(e) => e.hint.clone(),
            Error::Usage { hint, .. } => hint.clone(),
            Error::Http(e) => e.hint(),
            Error::Builder(crate::builder::Error::Spawn { .. }) => Some(
                "install the builder, or pick the other one with --builder (buildx, buildah)".into(),
            ),
            Error::Registry(crate::registry::Error::Unauthorized { .. }) => Some(
                "log in to the registry (docker login) or set DOCKER_CONFIG to a config holding its credentials".into(),
            ),
            _ => None,
        }
    }

    /// A usage error with a hint.
    pub fn usage(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Error::Usage {
            message: message.into(),
            hint: Some(hint.into()),
        }
    }
}

/// Result with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
