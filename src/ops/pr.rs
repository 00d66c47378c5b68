//! `revendor pr`: the title and body of the upgrade's pull request, and with
//! `--create`, the commit, the push and the pull request itself.
//!
//! 1. [`git::Repo`](crate::git::Repo) finds the repository; `base.rs`
//!    the base commit (`--base`, else the merge-base with origin's default
//!    branch, else `HEAD`).
//! 2. `facts.rs` gathers every fact from the base commit and the working
//!    tree alone (`patches.rs` recomputes each patch's result,
//!    `adaptations.rs` says what changed in each file); `pr::title` and
//!    `pr::body` render them.
//! 3. `--create` (`create.rs`): commit the package's files only
//!    ([`git::commit`](crate::git::commit)), never over a commit revendor
//!    did not make (`ownership.rs`), push `revendor/<package>-<version>` to
//!    origin ([`git::Remote`](crate::git::Remote)), and open the pull
//!    request on `GITHUB_REPOSITORY` (or the repository `origin` names), or
//!    update the one already open (through [`crate::github::Repo`]).
//!
//! `--report` (`report/`) is another job: the one
//! tracking issue of every package under a root that needs a person.
//!
//! Why from the base and not from what `update` reported: a package adopted
//! without a lock, a rerun after a failure and a nightly job on a fresh
//! checkout all have the same two trees, and nothing else.

mod adaptations;
mod base;
mod create;
mod facts;
mod ownership;
mod patches;
pub mod report;

pub use report::IssueAction;

use crate::config::repo::RepoConfig;
use crate::error::Result;
use crate::git::Repo;
use crate::pr::{self, Summary};
use crate::workspace::Context;

/// Flags of `revendor pr`.
#[derive(Debug, Clone, Default)]
pub struct PrOptions {
    /// Commit, push and open (or update) the pull request.
    pub create: bool,
    /// The branch the pull request merges into; the base of the comparison.
    pub base: Option<String>,
    /// Sign the commit off (`Signed-off-by:`, for DCO) as its committer.
    pub signoff: bool,
}

/// What `--create` did with the pull request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Opened a new one.
    Opened,
    /// Updated the open one in place.
    Updated,
    /// Left its branch alone: it has commits revendor did not make.
    LeftAlone,
}

/// What `pr` produced.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PrReport {
    /// The pull request title.
    pub title: String,
    /// The Markdown body.
    pub body: String,
    /// Labels the pull request gets (`.revendor.toml`'s `[pr] labels`).
    pub labels: Vec<String>,
    /// The facts the text was rendered from.
    pub summary: Summary,
    /// The upgrade branch, `revendor/<package>-<version>`.
    pub branch: String,
    /// `owner/name` the pull request is opened on, when known.
    pub repository: Option<String>,
    /// The pull request's web address, with `--create`.
    pub url: Option<String>,
    /// What `--create` did.
    pub action: Option<Action>,
}

impl PrReport {
    /// Whether the package differs from the base at all: when it does not,
    /// there is nothing to propose.
    pub fn is_empty(&self) -> bool {
        self.summary.adaptations.is_empty()
    }
}

/// Builds the text, and with `create`, publishes it.
pub fn pr(ctx: &Context, opts: &PrOptions) -> Result<PrReport> {
    let repo = Repo::open(&ctx.root)?;
    let base = base::base(&repo, opts.base.as_deref())?;
    let repository = ctx
        .env
        .repository
        .clone()
        .or_else(|| origin_slug(&repo.origin_url()?, &ctx.env.server_url));
    let name = match repo.package.rsplit('/').next().filter(|n| !n.is_empty()) {
        Some(n) => n.to_owned(),
        // The repository is the package: name it as GitHub does, so every
        // checkout (whatever its directory) pushes the same branch.
        None => repository
            .as_deref()
            .and_then(|s| s.rsplit('/').next())
            .map(str::to_owned)
            .or_else(|| {
                repo.workdir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
            })
            .unwrap_or_else(|| "package".into()),
    };
    let scope = if repo.package.is_empty() {
        name.clone()
    } else {
        repo.package.clone()
    };
    let gathered = facts::gather(ctx, &repo, base.commit, &scope)?;
    let repo_config = RepoConfig::find(&ctx.root, &repo.workdir)?;
    let (title, body) = text(&repo_config, &repo.package, &name, &gathered.summary);
    let mut report = PrReport {
        title,
        body,
        labels: repo_config.labels.clone(),
        branch: branch(&name, &gathered.summary),
        summary: gathered.summary.clone(),
        repository,
        url: None,
        action: None,
    };
    // Nothing changed (a night with no new release): nothing to propose,
    // and that is success, not an error.
    if opts.create && !report.is_empty() {
        create::create(ctx, &repo, &base, &gathered, opts, &mut report)?;
    }
    Ok(report)
}

/// The title and body of `summary`, as `.revendor.toml` shapes them (its
/// title template, its footer), else revendor's own.
fn text(config: &RepoConfig, package: &str, name: &str, summary: &Summary) -> (String, String) {
    let own = pr::title(summary);
    let each = match summary.upstreams.as_slice() {
        [] => std::slice::from_ref(&summary.upstream),
        several => several,
    };
    let join =
        |f: &dyn Fn(&pr::Upstream) -> String| each.iter().map(f).collect::<Vec<_>>().join(", ");
    let upstream = join(&|u| u.called().to_owned());
    let version = join(&|u| u.to.clone());
    let from = join(&|u| u.from.clone().unwrap_or_default());
    let component = config.components.get(package).map_or(name, String::as_str);
    let scope = if package.is_empty() { name } else { package };
    let described = own.split_once("): ").map_or(own.as_str(), |(_, d)| d);
    let values = [
        ("component", component),
        ("package", scope),
        ("upstream", upstream.as_str()),
        ("version", version.as_str()),
        ("from", from.as_str()),
        ("summary", described),
    ];
    let title = config.title.as_ref().map(|t| t.fill(&values));
    let footer = config.footer.as_ref().map(|t| t.fill(&values));
    (
        title.unwrap_or_else(|| own.clone()),
        pr::body_with_footer(summary, footer.as_deref().unwrap_or_default()),
    )
}

/// `revendor/<package>-<version>`; with several upstreams, each one's name
/// and version (`revendor/app-chart-v1.1.0-tool-v2.1.0`), so a move of any
/// of them is a new branch, as a new version of one upstream is.
fn branch(name: &str, s: &Summary) -> String {
    if s.upstreams.is_empty() {
        return format!("revendor/{name}-{}", s.upstream.to);
    }
    let each: Vec<String> = s
        .upstreams
        .iter()
        .map(|u| format!("{}-{}", u.called(), u.to))
        .collect();
    format!("revendor/{name}-{}", each.join("-"))
}

/// `owner/name` of `origin` when it is a GitHub URL (https, ssh, or under
/// `GITHUB_SERVER_URL`).
fn origin_slug(url: &str, server: &str) -> Option<String> {
    let url = url.trim_end_matches(".git");
    let path = url
        .strip_prefix(&format!("{server}/"))
        .or_else(|| url.strip_prefix("https://github.com/"))
        .or_else(|| url.strip_prefix("git@github.com:"))
        .or_else(|| url.strip_prefix("ssh://git@github.com/"))?;
    let mut parts = path.split('/');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(o), Some(n), None) if !o.is_empty() && !n.is_empty() => Some(format!("{o}/{n}")),
        _ => None,
    }
}
