//! The crate's error type and the one mapping from errors to exit codes.
//!
//! Library code returns typed errors from the module that knows the failure
//! (`config::ConfigError`, `net::HttpError`, `patch::ApplyError`, ...); this
//! enum gathers them so `cli` can render each once and pick the exit code from
//! [`Error::exit_code`], the only place where DESIGN.md's four codes live.
//!
//! A finding (drift, a failed check) is not an error: it travels as a report
//! and becomes exit code 1 through [`Outcome`]. The exceptions are the
//! conflicts that stop a job before it writes (exit 1 too): each kind is its
//! own variant ([`Error::HandEdits`], [`Error::ChangedDuringRun`], [`Error::StrayFiles`],
//! [`Error::PatchConflict`], [`Error::PendingUpdate`],
//! [`Error::PinsDisagree`], [`Error::ForeignBranch`]) with its own `help:`,
//! because the user's next step differs; [`Error::Bug`] is revendor's own
//! invariant broken, never the user's doing.

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

/// How a command that did its job ended; [`exit_code`] turns it (or the
/// error that stopped the command) into the process's exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Done, or nothing to do.
    Clean,
    /// Done, and it reported findings or a conflict for a person to act on.
    Findings,
    /// Every check ran, but a remote one of them needed did not answer.
    Incomplete,
    /// Parts of the run failed and the output already reports each
    /// (`check --all`'s packages): it ends with their worst exit code.
    Reported(ExitCode),
}

/// The exit code a command ends with: the one mapping from a command's
/// result to DESIGN.md's codes. An error maps through
/// [`Error::exit_code`], except stdout closed by its reader (`| head`),
/// which ends the command quietly with 0, as ripgrep does.
pub fn exit_code(result: std::result::Result<Outcome, &Error>) -> ExitCode {
    match result {
        Ok(Outcome::Clean) => ExitCode::Clean,
        Ok(Outcome::Findings) => ExitCode::Findings,
        Ok(Outcome::Incomplete) => ExitCode::Failure,
        Ok(Outcome::Reported(code)) => code,
        Err(e) if e.is_closed_stdout() => ExitCode::Clean,
        Err(e) => e.exit_code(),
    }
}

/// Everything that can stop a revendor command.
///
/// Variants are typed where callers branch on them ([`Error::NotFound`]
/// means "upstream has no such file", [`Error::Registry`] keeps the spec
/// code and its hint). A variant's message names the attempt and its
/// object; the reason, when another error holds it, is its
/// [`source`](std::error::Error::source), which `cli` prints as
/// `Caused by:` lines.
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
    /// A git upstream could not be read: libgit2 failed (its error kept as
    /// the cause), or the repository holds what revendor refuses.
    #[error("failed to read git upstream `{url}`: {what}{}", source.as_ref().map(ToString::to_string).unwrap_or_default())]
    Git {
        /// The repository URL, credentials removed.
        url: String,
        /// What failed, before libgit2's words: "cannot fetch v1.2.0: ";
        /// the whole message when libgit2 had none.
        what: String,
        /// What libgit2 said.
        #[source]
        source: Option<LibGit2Error>,
    },
    /// A file could not be read or written.
    #[error("failed to {action} `{}`", path.display())]
    Io {
        /// What was attempted: "read", "write", "rename", ...
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The operating system's answer.
        source: std::io::Error,
    },
    /// What the command printed could not be written to stdout (a full
    /// disk, a closed pipe).
    #[error("failed to write to stdout")]
    Stdout(#[source] std::io::Error),
    /// A killed run committed a write (its plan, `.revendor-txn/plan`) that
    /// could not be finished, so no new write may start: the files on disk
    /// mix old and new until it is.
    #[error("an interrupted write in `{}` must be finished first, and could not be", package.display())]
    Unfinished {
        /// The package directory.
        package: PathBuf,
        /// Why finishing it failed.
        source: Box<Error>,
    },
    /// Another process holds the package (DESIGN.md, "One writer at a
    /// time") for longer than `REVENDOR_LOCK_TIMEOUT` allows this one to
    /// wait.
    #[error("`{}` is held by {holder}; gave up after waiting {seconds}s", package.display())]
    Locked {
        /// The package directory.
        package: PathBuf,
        /// Who holds it: "revendor update (pid 1234)", or what is known.
        holder: String,
        /// How long this process waited, in seconds.
        seconds: f64,
    },
    /// An input is past one of revendor's size bounds (docs/reference.md lists
    /// its limits): a remote's answer (exit 3) or a file of the package
    /// (exit 2), refused before it can exhaust memory or the disk.
    #[error("{what} is larger than revendor accepts: {limit}")]
    TooLarge {
        /// What was being read: "the body of `https://…`", "`values.yaml`".
        what: String,
        /// The bound and its value: "at most 64 MiB".
        limit: String,
        /// Whether a remote sent it (else the package's own files hold it).
        remote: bool,
    },
    /// A download did not match the digest it must have.
    #[error("`{what}` has {digest} {actual}, expected {expected}")]
    Checksum {
        /// The URL or cache entry.
        what: String,
        /// Which digest: "sha256", "git blob id", "tree hash".
        digest: &'static str,
        /// The recorded digest.
        expected: String,
        /// The digest of what arrived.
        actual: String,
    },
    /// The upstream has no such repository, tag, file or archive. `update`
    /// reads a missing go.mod as "no go directive" by matching on this.
    #[error("{what} not found at `{url}`")]
    NotFound {
        /// What was looked for: "`go.mod` of o/r at v1.0.0".
        what: String,
        /// Where it was looked for, credentials removed.
        url: String,
    },
    /// No release of the upstream is inside the configured `track`.
    #[error("no release of {upstream} is inside track `{track}`")]
    NoRelease {
        /// The upstream, as `github:owner/name` or `git:url`.
        upstream: String,
        /// The range, `*` when there is none.
        track: String,
    },
    /// A remote answered, but not with what was asked for.
    #[error("`{url}` did not answer {what}: {detail}")]
    Malformed {
        /// What was expected: "a list of releases", "a usable tar.gz archive".
        what: String,
        /// The URL that answered.
        url: String,
        /// Why the answer cannot be used.
        detail: String,
    },
    /// A rendered output of the package cannot be made from its pristine
    /// copy, patches, rewrites and pins: the package's own files are at
    /// fault, not the network.
    #[error("{file}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Render {
        /// The output file, relative to the package, as vendor.toml names it.
        file: String,
        /// 1-based line, when the fault has one.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },
    /// A pristine copy under `upstream/` is not what the lock recorded: it
    /// was edited, and rendering from it would hide the edit.
    #[error(
        "`{file}` has sha256 {actual} but the lock says {expected}: the pristine copy was edited"
    )]
    PristineEdited {
        /// The pristine copy, relative to the package.
        file: String,
        /// The lock's sha256.
        expected: String,
        /// The sha256 on disk.
        actual: String,
    },
    /// A patch section does not apply strictly where it must (render,
    /// refresh, the locked side of an update); the hunk error is the cause.
    #[error(
        "patch `{patch}` ({file}:{line}) does not apply to `{target}` at the locked version {version}"
    )]
    PatchDoesNotApply {
        /// The patch's name in vendor.toml.
        patch: String,
        /// The patch file, relative to the package.
        file: String,
        /// The 1-based line in it of the hunk that fails.
        line: usize,
        /// The vendored file's upstream path.
        target: String,
        /// The locked version.
        version: String,
        /// Which hunk failed and where (boxed: it carries the hunk's lines).
        #[source]
        error: Box<crate::patch::ApplyError>,
    },
    /// A file revendor renders holds edits no patch carries; nothing was
    /// written, because revendor never overwrites them.
    #[error("{0}")]
    HandEdits(String),
    /// A file the command read to judge it (the hand-edit check) changed
    /// before the command wrote over it: someone edited it while revendor
    /// ran. Nothing was written.
    #[error("`{}` changed while revendor was running; nothing was written", path.display())]
    ChangedDuringRun {
        /// The file, relative to the package.
        path: PathBuf,
    },
    /// A vendored directory holds a file that neither upstream nor a patch
    /// accounts for, or one in the way of a file upstream adds.
    #[error("{0}")]
    StrayFiles(String),
    /// A patch cannot be carried to the upstream it must now apply to.
    #[error("{0}")]
    PatchConflict(String),
    /// The state `update --keep-conflicts` left (markers, a resolution)
    /// stops the command: it is finished with `update --continue` first.
    #[error("{0}")]
    PendingUpdate(String),
    /// The `[[pin]]` sites of one image hold different references, so which
    /// image the package pins cannot be told.
    #[error("{0}")]
    PinsDisagree(String),
    /// The upgrade branch on origin has commits revendor did not make and no
    /// pull request to say so on: `pr --create` left it alone.
    #[error(
        "`{branch}` on origin has commits revendor did not make ({commits}) and no open pull request: \
         left it alone, nothing was pushed"
    )]
    ForeignBranch {
        /// The upgrade branch, `revendor/<package>-<version>`.
        branch: String,
        /// The foreign commits, `abc1234 "subject" by Name`, comma-separated.
        commits: String,
    },
    /// An invariant of revendor itself does not hold: a bug to report, not
    /// something the package or the network did.
    #[error("{0}")]
    Bug(String),
    /// A registry could not be read, or what it served failed verification.
    #[error(transparent)]
    Registry(#[from] crate::registry::Error),
    /// The registry conversation about the locked image failed (`check
    /// --online`), as opposed to the image being wrong, which is a finding.
    #[error("failed to verify the pinned image `{reference}`")]
    PinnedImage {
        /// The locked `repository:tag@digest`.
        reference: String,
        /// What the registry conversation ended with.
        source: crate::registry::Error,
    },
    /// An image builder could not run or failed.
    #[error(transparent)]
    Builder(#[from] crate::builder::Error),
    /// `check` ran every check, but some needed a remote that did not
    /// answer: the report, with an `unreachable` finding for each, is
    /// already printed; this ends the run with exit code 3.
    #[error(
        "the check is incomplete: {} did not answer ({})",
        if urls.len() == 1 { "1 remote".to_owned() } else { format!("{} remotes", urls.len()) },
        urls.iter().map(|u| format!("`{u}`")).collect::<Vec<_>>().join(", ")
    )]
    Unreachable {
        /// The URLs that did not answer, credentials removed.
        urls: Vec<String>,
    },
    /// The package's own git repository could not be read or written
    /// (`pr`): a local failure, never the remote's.
    #[error("failed to {action} in the package's repository")]
    Repository {
        /// What was attempted: "read the base commit".
        action: String,
        /// What libgit2 said.
        source: LibGit2Error,
    },
    /// `pr --create` could not publish the upgrade: a push, a fetch or a
    /// GitHub API call failed. `state` says what was left behind (nothing
    /// pushed, a push undone), because the user decides from it whether to
    /// simply run again.
    #[error("failed to {action}{}", message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Publish {
        /// What was attempted: "push `revendor/multus-v4.3.0` to origin".
        action: String,
        /// What the remote said, when it was not an HTTP answer.
        message: Option<String>,
        /// What the repository and GitHub are left with.
        state: String,
        /// The API's answer, when it was one.
        #[source]
        source: Option<Box<crate::net::HttpError>>,
    },
}

impl Error {
    /// The exit code this error ends the process with: the one mapping from
    /// errors to DESIGN.md's codes. A fault in the package's own files is
    /// 1 (an edit or a conflict to resolve) or 2 (a file to fix), never 3,
    /// which is for the network, registries, builders and the disk.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            Error::Config(_)
            | Error::Usage { .. }
            | Error::NoRelease { .. }
            | Error::Render { .. }
            | Error::TooLarge { remote: false, .. }
            | Error::Builder(crate::builder::Error::Unsupported { .. }) => ExitCode::Usage,
            Error::HandEdits(_)
            | Error::ChangedDuringRun { .. }
            | Error::StrayFiles(_)
            | Error::PatchConflict(_)
            | Error::PendingUpdate(_)
            | Error::PinsDisagree(_)
            | Error::ForeignBranch { .. }
            | Error::PatchDoesNotApply { .. }
            | Error::PristineEdited { .. } => ExitCode::Findings,
            Error::Http(_)
            | Error::Git { .. }
            | Error::Io { .. }
            | Error::Stdout(_)
            | Error::Unfinished { .. }
            | Error::Locked { .. }
            | Error::TooLarge { remote: true, .. }
            | Error::Checksum { .. }
            | Error::NotFound { .. }
            | Error::Malformed { .. }
            | Error::Registry(_)
            | Error::PinnedImage { .. }
            | Error::Builder(_)
            | Error::Unreachable { .. }
            | Error::Repository { .. }
            | Error::Publish { .. }
            | Error::Bug(_) => ExitCode::Failure,
        }
    }

    /// What the user can do about it, printed after the message.
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::Config(e) => e.hint.clone(),
            Error::Usage { hint, .. } => hint.clone(),
            Error::Http(e) => e.hint(),
            Error::NotFound { .. } => Some(
                "check `[upstream]` and the paths in vendor.toml; a private GitHub repository also needs GITHUB_TOKEN".into(),
            ),
            Error::NoRelease { .. } => Some(
                "widen `track` in vendor.toml, or name the release with `--to`".into(),
            ),
            Error::Render { .. } => Some(
                "fix the patch, [[rewrite]] or [[pin]] of that file, or the file itself".into(),
            ),
            Error::PristineEdited { .. } => Some(
                "restore it with `git checkout`, or re-fetch it with `revendor update`".into(),
            ),
            Error::Unfinished { .. } => Some(
                "make the package writable and run any revendor command there: it finishes the interrupted write before anything else".into(),
            ),
            Error::Locked { .. } => Some(
                "wait for that process to finish and run again, or raise REVENDOR_LOCK_TIMEOUT (seconds)".into(),
            ),
            Error::TooLarge { remote: true, .. } => Some(
                "this is not what the upstream normally serves; check `[upstream]` and the URL".into(),
            ),
            Error::TooLarge { remote: false, .. } => Some(
                "revendor does not read a file this large; shrink it, or take it out of vendor.toml".into(),
            ),
            Error::Builder(e) => e.hint(),
            Error::Registry(e) | Error::PinnedImage { source: e, .. } => registry_hint(e),
            Error::Unreachable { .. } => Some(
                "every other check ran and its findings are above; run the check again once the remote answers".into(),
            ),
            Error::ChangedDuringRun { .. } => Some(
                "revendor never writes over a file it did not judge: finish the edit, then run the command again (an edit no patch carries then stops it, as any hand edit does)".into(),
            ),
            Error::HandEdits(_) => Some(
                "a rendered file is what `revendor render` makes of upstream and the patches: carry each edit in a patch (`--adopt-edits` folds it into the file's patch) or revert it".into(),
            ),
            Error::StrayFiles(_) => Some(
                "a vendored directory holds upstream's files and the ones a patch creates, nothing else; `exclude` leaves a path out of it".into(),
            ),
            Error::PatchConflict(_) => Some(
                "make the patch apply to that upstream (for a vendored file, `revendor update --keep-conflicts` writes diff3 markers to resolve), or take it out of vendor.toml".into(),
            ),
            Error::PendingUpdate(_) => Some(
                "an update stopped by `--keep-conflicts` is finished by resolving its markers and running `revendor update --continue`".into(),
            ),
            Error::PinsDisagree(_) => Some(
                "make every [[pin]] of the image hold the same reference: `revendor image pin` writes them all".into(),
            ),
            Error::ForeignBranch { .. } => Some("merge or delete that branch, then run again".into()),
            Error::Bug(_) => Some(
                "this is a bug in revendor: please report it with the command that led to it".into(),
            ),
            Error::Publish { state, source, .. } => Some(match source.as_ref().and_then(|e| e.hint()) {
                Some(hint) => format!("{state}; {hint}"),
                None => state.clone(),
            }),
            _ => None,
        }
    }

    /// The URL of the remote that could not be asked, when that is why this
    /// failed: no connection (refused, DNS, TLS), a timeout, a body cut
    /// short, a 5xx, a rate limit, or an HTTP 401 (a token it refused).
    /// `check` reports these as `unreachable` and goes on; anything else (a
    /// 404, a registry refusing credentials, a malformed answer, a
    /// configuration error) is an answer, and stays an error.
    pub fn unreachable_url(&self) -> Option<&str> {
        use crate::registry::Error as R;
        match self {
            Error::Http(h) => http_unreachable(h),
            Error::Registry(e) | Error::PinnedImage { source: e, .. } => match e {
                R::Transport(h) => http_unreachable(h),
                R::Status { url, status, .. } if busy(*status) => Some(url),
                R::Token {
                    realm,
                    status: Some(status),
                    ..
                } if busy(*status) => Some(realm),
                _ => None,
            },
            _ => None,
        }
    }

    /// The causes under the message, outermost first, as `cli` prints them
    /// under `Caused by:`: each [`source`](std::error::Error::source) of
    /// the chain, except one whose text the line above already holds (an
    /// error that prints its source in its own message).
    pub fn causes(&self) -> Vec<String> {
        let mut above = self.to_string();
        let mut causes = Vec::new();
        let mut source = std::error::Error::source(self);
        while let Some(cause) = source {
            let text = cause.to_string();
            if !above.contains(&text) {
                causes.push(text.clone());
            }
            above = text;
            source = cause.source();
        }
        causes
    }

    /// The section of docs/reference.md that explains what this error is
    /// about: `cli` ends every `help:` line with it, so the next step is
    /// always one link away (the anchors are GitHub's heading slugs; a test
    /// in `cli` checks each one exists).
    pub fn reference(&self) -> &'static str {
        match self {
            Error::Config(c) => {
                let file = c.file.to_string_lossy();
                if file.ends_with("lock.toml") {
                    "upstreamlocktoml"
                } else if file.ends_with(".patch") || file.ends_with(".diff") {
                    "patch"
                } else if file.ends_with("Dockerfile") {
                    "image"
                } else if file.ends_with(".json") {
                    // The findings `pr --report --findings` reads.
                    "revendor-pr"
                } else {
                    "vendortoml"
                }
            }
            Error::Usage { .. } => "commands",
            Error::NoRelease { .. } => "upstream",
            Error::Http(_)
            | Error::Git { .. }
            | Error::NotFound { .. }
            | Error::Malformed { .. }
            | Error::Unreachable { .. }
            | Error::Locked { .. } => "environment",
            Error::TooLarge { .. } => "exit-codes",
            Error::Checksum { .. } | Error::PristineEdited { .. } => "upstreamlocktoml",
            Error::Render { .. } => "rewrite",
            Error::PatchDoesNotApply { .. }
            | Error::HandEdits(_)
            | Error::ChangedDuringRun { .. }
            | Error::StrayFiles(_)
            | Error::PatchConflict(_)
            | Error::PendingUpdate(_) => "revendor-update",
            Error::PinsDisagree(_) => "revendor-image-pin",
            Error::ForeignBranch { .. } => "revendor-pr",
            Error::Bug(_) => "exit-codes",
            Error::Registry(_) | Error::PinnedImage { .. } => "revendor-image-pin",
            Error::Builder(_) => "revendor-image-build",
            Error::Repository { .. } | Error::Publish { .. } => "revendor-pr",
            Error::Io { .. } | Error::Stdout(_) => "exit-codes",
            Error::Unfinished { .. } => "package-layout",
        }
    }

    /// Whether this is stdout closed by its reader: not a failure, the
    /// reader has what it wanted (`revendor check | head -1`).
    pub fn is_closed_stdout(&self) -> bool {
        matches!(self, Error::Stdout(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
    }

    /// A usage error with a hint.
    pub fn usage(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Error::Usage {
            message: message.into(),
            hint: Some(hint.into()),
        }
    }
}

/// A status that says the remote is there but not answering now.
fn busy(status: u16) -> bool {
    status >= 500 || status == 429
}

/// The URL of an HTTP failure that means "did not answer" (see
/// [`Error::unreachable_url`]).
fn http_unreachable(h: &crate::net::HttpError) -> Option<&str> {
    use crate::net::HttpError as H;
    match h {
        H::Transport { url, .. } | H::TimedOut { url, .. } | H::RateLimited { url, .. } => {
            Some(url)
        }
        // A certificate that cannot be trusted blinds the check as an outage
        // does: the other checks still run and report.
        H::Untrusted { url, .. } => Some(url),
        // A refused token (expired, revoked) blinds every online check the
        // same way an outage does; the nightly must still report the rest.
        H::Status { url, status, .. } if busy(*status) || *status == 401 => Some(url),
        _ => None,
    }
}

/// What to do about a registry failure, wherever it is wrapped.
fn registry_hint(e: &crate::registry::Error) -> Option<String> {
    match e {
        crate::registry::Error::Unauthorized { .. } => Some(
            "log in to the registry (docker login) or set DOCKER_CONFIG to a config holding its credentials".into(),
        ),
        crate::registry::Error::NotAnIndex { .. } => Some(
            "use an index holding every platform of [image] platforms (`revendor image build --push` pushes one), or change `platforms`".into(),
        ),
        _ => None,
    }
}

/// A libgit2 failure kept as the cause it is, printed as libgit2's message
/// alone: git2's own `Display` appends class and code numbers that say
/// nothing to a user.
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.message())]
pub struct LibGit2Error(#[from] pub git2::Error);

/// Result with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_stdout_ends_quietly_and_a_full_one_is_a_failure() {
        let closed = Error::Stdout(std::io::ErrorKind::BrokenPipe.into());
        assert!(closed.is_closed_stdout());
        assert_eq!(exit_code(Err(&closed)), ExitCode::Clean);
        let full = Error::Stdout(std::io::Error::from_raw_os_error(28));
        assert!(!full.is_closed_stdout());
        assert_eq!(exit_code(Err(&full)), ExitCode::Failure);
        assert_eq!(exit_code(Ok(Outcome::Incomplete)), ExitCode::Failure);
        assert_eq!(exit_code(Ok(Outcome::Findings)), ExitCode::Findings);
    }

    /// A fault in the package's own files is never exit 3.
    #[test]
    fn the_packages_own_files_are_never_a_network_failure() {
        let render = Error::Render {
            file: "templates/app.yml".into(),
            line: Some(3),
            message: "cannot pin images: not YAML".into(),
        };
        assert_eq!(render.exit_code(), ExitCode::Usage);
        assert_eq!(
            render.to_string(),
            "templates/app.yml:3: cannot pin images: not YAML"
        );
        let edited = Error::PristineEdited {
            file: "upstream/a.yml".into(),
            expected: "aa".into(),
            actual: "bb".into(),
        };
        assert_eq!(edited.exit_code(), ExitCode::Findings);
        assert!(edited.hint().is_some_and(|h| h.contains("git checkout")));
        let track = Error::NoRelease {
            upstream: "github:o/r".into(),
            track: ">=9".into(),
        };
        assert_eq!(track.exit_code(), ExitCode::Usage);
    }

    #[test]
    fn an_upstream_that_lacks_a_file_is_a_remote_failure() {
        let e = Error::NotFound {
            what: "`go.mod` of o/r at v1".into(),
            url: "https://raw.example/o/r/refs/tags/v1/go.mod".into(),
        };
        assert_eq!(e.exit_code(), ExitCode::Failure);
        assert_eq!(
            e.to_string(),
            "`go.mod` of o/r at v1 not found at `https://raw.example/o/r/refs/tags/v1/go.mod`"
        );
    }
}
