//! `revendor check [--online] [--fix]`: the drift check.
//!
//! 1. Load vendor.toml and the lock (a package without a lock has nothing to
//!    check against: a usage error).
//! 2. Run every check of [`check::CHECKS`] over one [`check::Input`]; the
//!    online ones only with `--online`.
//! 3. With `--fix`, commit the edits the checks staged, all at once.
//!
//! The findings come back to `cli`, which prints them in the chosen format
//! and turns an `error` finding into exit code 1, and a remote that did not
//! answer (the `unreachable` findings) into exit code 3.

use crate::check::{self, Finding, Input, Severity, Sink};
use crate::config::lock::Lock;
use crate::config::{Config, Level};
use crate::error::{Error, Outcome, Result};
use crate::paths::Transaction;
use crate::workspace::Context;

/// Flags of `revendor check`.
#[derive(Debug, Clone, Copy, Default)]
pub struct CheckOptions {
    /// Also ask the upstream, the registry and the marker resolvers.
    pub online: bool,
    /// Apply the fixes that need no decision (needs `online`).
    pub fix: bool,
}

/// What `check` found, and what `--fix` wrote.
#[derive(Debug, Clone)]
pub struct CheckReport {
    /// The package's name (its directory's).
    pub package: String,
    /// Every finding, in check order.
    pub findings: Vec<Finding>,
    /// Files `--fix` rewrote.
    pub changed: Vec<String>,
    /// The URLs that did not answer (none when `[checks]` allows
    /// `unreachable`).
    pub unreachable: Vec<String>,
}

impl CheckReport {
    /// How this package's check ended: incomplete when a remote a check
    /// needed did not answer, else findings for any error finding, else
    /// clean. `check` and `check --all` both end with it.
    pub fn outcome(&self) -> Outcome {
        if !self.unreachable.is_empty() {
            Outcome::Incomplete
        } else if self.findings.iter().any(|f| f.severity == Severity::Error) {
            Outcome::Findings
        } else {
            Outcome::Clean
        }
    }
}

impl CheckOptions {
    /// A usage error when the flags contradict each other or `--offline`
    /// (`offline`); `check --all` asks once, before any package runs.
    pub fn validate(&self, offline: bool) -> Result<()> {
        if self.online && offline {
            return Err(Error::usage(
                "`--online` and `--offline` contradict each other",
                "drop one of them",
            ));
        }
        if self.fix && !self.online {
            return Err(Error::usage(
                "`--fix` needs `--online`",
                "the fixes depend on what the new releases ship; run `revendor check --online --fix`",
            ));
        }
        Ok(())
    }
}

/// Runs the check.
pub fn check(ctx: &Context, opts: &CheckOptions) -> Result<CheckReport> {
    opts.validate(ctx.client.offline())?;
    let config = Config::load(&ctx.root)?;
    let Some(lock) = Lock::load(&ctx.root)? else {
        return Err(Error::usage(
            "this package has no upstream/lock.toml yet, so there is nothing to check against",
            "run `revendor update` once to adopt it",
        ));
    };
    let input = Input::new(ctx, &config, &lock, opts.online, opts.fix);
    let mut sink = Sink::new();
    check::run(&input, &mut sink)?;
    let mut changed = Vec::new();
    let edits = input.edits();
    if !edits.is_empty() {
        let mut txn = Transaction::new(&ctx.root);
        for (path, bytes) in edits {
            txn.stage(&path, bytes);
        }
        changed = txn.commit()?;
    }
    let unreachable = match config.level_for(check::UNREACHABLE.name) {
        Some(Level::Allow) => Vec::new(),
        _ => sink.unreachable().to_vec(),
    };
    if opts.online {
        let stats = ctx.client.stats();
        if stats.requests() > 0 && stats.not_modified() == stats.requests() {
            ctx.shell.verbose(format!(
                "nothing changed upstream: all {} requests were conditional and answered 304",
                stats.requests()
            ));
        }
    }
    Ok(CheckReport {
        package: package_name(ctx),
        findings: with_levels(&config, sink.into_findings()),
        changed,
        unreachable,
    })
}

/// The findings with `[checks]` applied: severities raised or lowered, and
/// `allow`ed ids dropped.
fn with_levels(config: &Config, findings: Vec<Finding>) -> Vec<Finding> {
    findings
        .into_iter()
        .filter_map(|mut f| {
            match config.level_for(&f.id) {
                Some(Level::Allow) => return None,
                Some(Level::Error) => f.severity = Severity::Error,
                Some(Level::Warning) => f.severity = Severity::Warning,
                Some(Level::Info) => f.severity = Severity::Info,
                None => {}
            }
            Some(f)
        })
        .collect()
}

/// The package directory's name, for reports (also of a check that could
/// not start).
pub fn package_name(ctx: &Context) -> String {
    ctx.root
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| ctx.root.display().to_string())
}
