//! `revendor pr --report [ROOT]`: one tracking issue listing every package
//! under ROOT that needs a person, kept up to date, as Renovate's dependency
//! dashboard is.
//!
//! 1. The packages' checks: the `check --all --online --format json`
//!    document `--findings` names (the nightly checks once and passes it
//!    on, so the issue and the rest of the run agree), else the same check
//!    run here.
//! 2. [`rows()`] (`rows.rs`) decides which need a person; the body lists
//!    them under a hidden marker ([`MARKER`], `body.rs`: escaped cells, a
//!    bounded table), both pure functions.
//! 3. `tracking.rs` finds the issue by that marker and opens, updates,
//!    reopens or closes it, writing nothing when it already says this.
//!
//! `--dry-run` stops after step 2: no token, no network beyond the check.

mod body;
mod rows;
mod tracking;

pub use body::{MARKER, closed_body, open_body};
pub use rows::{Checked, Document, Failed, Row, rows};

use std::path::{Path, PathBuf};

use crate::config::ConfigError;
use crate::config::repo::RepoConfig;
use crate::error::{Error, Result};
use crate::ops::check::CheckOptions;
use crate::ops::check_all::{CheckAllOptions, Open, check_all};
use crate::workspace::Context;
pub use tracking::IssueAction;

/// Flags of `revendor pr --report`.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    /// Where the packages are; the `-C` directory when absent.
    pub root: Option<PathBuf>,
    /// A `check --all --online --format json` document to read instead of
    /// checking.
    pub findings: Option<PathBuf>,
    /// Print the issue, write nothing.
    pub dry_run: bool,
}

/// What `pr --report` did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ReportOutcome {
    /// The issue's web page; `None` with `--dry-run`, or when there is no
    /// issue and nothing to report.
    pub url: Option<String>,
    /// What was done to the issue; `None` with `--dry-run`.
    pub action: Option<IssueAction>,
    /// One per package that needs a person.
    pub rows: Vec<Row>,
    /// The issue's title.
    pub title: String,
    /// The issue's body as written (or, with `--dry-run`, as it would be).
    pub body: String,
}

/// Decides the rows, and unless `--dry-run`, publishes them; `open` opens a
/// package's [`Context`] when the check runs here.
pub fn report(ctx: &Context, opts: &ReportOptions, open: &Open<'_>) -> Result<ReportOutcome> {
    let root = opts.root.clone().unwrap_or_else(|| ctx.root.clone());
    let packages = match &opts.findings {
        Some(file) => read_findings(file)?,
        None => check(ctx, &root, open)?,
    };
    let rows = rows(&packages);
    let git = crate::git::Repo::open(&root).ok();
    let top = git
        .as_ref()
        .map_or_else(|| root.clone(), |g| g.workdir.clone());
    let within = root.canonicalize().unwrap_or_else(|_| root.clone());
    let config = RepoConfig::find(&within, &top)?.report;
    let body = if rows.is_empty() {
        closed_body()
    } else {
        open_body(&rows)
    };
    let mut out = ReportOutcome {
        url: None,
        action: None,
        rows,
        title: config.title.clone(),
        body,
    };
    if opts.dry_run {
        return Ok(out);
    }
    let repository = ctx.env.repository.clone().or_else(|| {
        let origin = git.as_ref()?.origin_url()?;
        super::origin_slug(&origin, &ctx.env.server_url)
    });
    let slug = token_and_repository(ctx, repository)?;
    let api = crate::github::Repo::new(&slug, &ctx.env, &ctx.client);
    let needed = !out.rows.is_empty();
    let (url, action) = tracking::publish(&api, &config, needed, &out.body)?;
    out.url = url;
    out.action = Some(action);
    Ok(out)
}

/// The packages of the `check --all --format json` document at `file`.
fn read_findings(file: &Path) -> Result<Vec<Checked>> {
    let bytes = crate::paths::read(file)?;
    let doc: Document = serde_json::from_slice(&bytes).map_err(|e| {
        let message = e.to_string();
        let message = message.split(" at line ").next().unwrap_or_default();
        ConfigError::at(
            file,
            Some(e.line()),
            format!("not a `check --all --format json` document: {message}"),
        )
        .hint("pass what `revendor check --all --online --format json` printed")
    })?;
    Ok(doc.packages)
}

/// `check --all --online` under `root`, run here.
fn check(ctx: &Context, root: &Path, open: &Open<'_>) -> Result<Vec<Checked>> {
    let opts = CheckAllOptions {
        root: Some(root.to_owned()),
        check: CheckOptions {
            online: true,
            fix: false,
        },
    };
    let all = check_all(ctx, &opts, open)?;
    Ok(all
        .packages
        .into_iter()
        .map(|p| {
            let (findings, error) = match p.outcome {
                Ok(report) => (report.findings, None),
                Err(e) => (
                    Vec::new(),
                    Some(Failed {
                        message: e.to_string(),
                        hint: e.hint(),
                    }),
                ),
            };
            Checked {
                package: p.package,
                path: Some(p.workspace_path),
                findings,
                error,
            }
        })
        .collect())
}

/// The repository the issue is on, once a token is there to write it.
fn token_and_repository(ctx: &Context, repository: Option<String>) -> Result<String> {
    if ctx.env.token.is_none() {
        return Err(Error::usage(
            "`pr --report` opens or edits an issue through the GitHub API, and there is no token",
            "set GITHUB_TOKEN (or GH_TOKEN) to a token that may write issues, or look first with --dry-run",
        ));
    }
    repository.ok_or_else(|| {
        Error::usage(
            "cannot tell which GitHub repository to keep the tracking issue on",
            "set GITHUB_REPOSITORY=owner/name",
        )
    })
}
