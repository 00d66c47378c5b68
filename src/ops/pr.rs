//! `revendor pr`: the title and body of the upgrade's pull request, and with
//! `--create`, the commit, the push and the pull request itself.
//!
//! 1. The lock at the base commit (HEAD, or `--base`) and the lock in the
//!    working tree say which versions the upgrade moves between.
//! 2. git says which files of the package changed; `pr::title` and
//!    `pr::body` turn that into text.
//! 3. `--create`: commit the package's changes on `revendor/<package>-<version>`,
//!    push it to `origin`, then open the pull request on `GITHUB_REPOSITORY`
//!    (or the repository `origin` names), or update the one already open.

use std::path::{Path, PathBuf};

use git2::{DiffOptions, Repository};
use serde::Deserialize;

use crate::config::lock::{LOCK_PATH, Lock};
use crate::config::{Config, Selection, Upstream, UpstreamSource};
use crate::error::{Error, Result};
use crate::pr::{self, Summary, UpstreamChange};
use crate::workspace::Context;

/// Flags of `revendor pr`.
#[derive(Debug, Clone, Default)]
pub struct PrOptions {
    /// Commit, push and open (or update) the pull request.
    pub create: bool,
    /// The branch the pull request merges into; the base of the comparison.
    pub base: Option<String>,
}

/// What `pr` produced.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PrReport {
    /// The pull request title.
    pub title: String,
    /// The Markdown body.
    pub body: String,
    /// The facts the text was built from.
    pub summary: Summary,
    /// The branch pushed, with `--create`.
    pub branch: Option<String>,
    /// The pull request's web address, with `--create`.
    pub url: Option<String>,
}

fn git_err(e: git2::Error) -> Error {
    Error::Git {
        url: "the package's repository".into(),
        message: e.message().to_string(),
    }
}

/// Builds the text, and with `create`, publishes it.
pub fn pr(ctx: &Context, opts: &PrOptions) -> Result<PrReport> {
    let config = Config::load(&ctx.root)?;
    let Some(lock) = Lock::load(&ctx.root)? else {
        return Err(Error::usage(
            "this package has no upstream/lock.toml yet",
            "run `revendor update` first",
        ));
    };
    let repo = Repository::discover(&ctx.root).map_err(|_| {
        Error::usage(
            format!("`{}` is not inside a git repository", ctx.root.display()),
            "run `revendor pr` in the repository that holds the package",
        )
    })?;
    let pkg_rel = package_path(&repo, &ctx.root)?;
    let base_tree = match &opts.base {
        Some(b) => Some(
            repo.revparse_single(b)
                .and_then(|o| o.peel_to_tree())
                .map_err(|_| {
                    Error::usage(
                        format!("`{b}` is not a branch or commit"),
                        "pass an existing branch to --base",
                    )
                })?,
        ),
        None => repo.head().ok().and_then(|h| h.peel_to_tree().ok()),
    };
    let old_lock = match &base_tree {
        Some(tree) => tree
            .get_path(&pkg_rel.join(LOCK_PATH))
            .ok()
            .and_then(|e| e.to_object(&repo).ok())
            .and_then(|o| o.peel_to_blob().ok())
            .and_then(|b| {
                Lock::parse(Path::new(LOCK_PATH), &String::from_utf8_lossy(b.content())).ok()
            }),
        None => None,
    };
    let files = changed_files(&repo, base_tree.as_ref(), &pkg_rel)?;
    let summary = summarize(ctx, &config, &lock, old_lock.as_ref(), files);
    let title = pr::title(&summary);
    let body = pr::body(&summary);
    let mut report = PrReport {
        title,
        body,
        summary,
        branch: None,
        url: None,
    };
    // Nothing changed (a night with no new release): nothing to propose,
    // and that is success, not an error.
    if opts.create && !report.summary.files.is_empty() {
        create(ctx, &repo, &pkg_rel, opts, &mut report)?;
    }
    Ok(report)
}

/// The package directory relative to the repository's work tree.
fn package_path(repo: &Repository, root: &Path) -> Result<PathBuf> {
    let workdir = repo
        .workdir()
        .ok_or_else(|| Error::usage("the repository is bare", "run `revendor pr` in a checkout"))?;
    let canon = |p: &Path| p.canonicalize().map_err(crate::paths::io("resolve", p));
    let (w, r) = (canon(workdir)?, canon(root)?);
    Ok(r.strip_prefix(&w)
        .map(Path::to_path_buf)
        .unwrap_or_default())
}

/// Files of the package that differ between the base tree and the work tree
/// (untracked ones included), relative to the package.
fn changed_files(
    repo: &Repository,
    base: Option<&git2::Tree<'_>>,
    pkg: &Path,
) -> Result<Vec<String>> {
    let mut opts = DiffOptions::new();
    opts.include_untracked(true).recurse_untracked_dirs(true);
    if !pkg.as_os_str().is_empty() {
        opts.pathspec(pkg);
    }
    let diff = repo
        .diff_tree_to_workdir_with_index(base, Some(&mut opts))
        .map_err(git_err)?;
    let mut files: Vec<String> = diff
        .deltas()
        .filter_map(|d| {
            d.new_file()
                .path()
                .or_else(|| d.old_file().path())
                .map(Path::to_path_buf)
        })
        .filter_map(|p| {
            p.strip_prefix(pkg)
                .ok()
                .map(|p| p.to_string_lossy().into_owned())
        })
        .collect();
    files.sort();
    files.dedup();
    Ok(files)
}

fn summarize(
    ctx: &Context,
    config: &Config,
    lock: &Lock,
    old: Option<&Lock>,
    files: Vec<String>,
) -> Summary {
    let package = ctx
        .root
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "package".into());
    let changes: Vec<UpstreamChange> = config
        .upstreams
        .iter()
        .map(|up| change(ctx, up, lock, old))
        .collect();
    let first = &changes[0];
    let upstream = &config.upstreams[0];
    let upstream_name = match &upstream.source {
        UpstreamSource::GitHub { repo } => repo.rsplit('/').next().unwrap_or(repo).to_string(),
        UpstreamSource::Git { url } => url
            .trim_end_matches('/')
            .trim_end_matches(".git")
            .rsplit('/')
            .next()
            .unwrap_or(url)
            .to_string(),
    };
    let patches = files
        .iter()
        .filter(|f| config.patches.iter().any(|p| &p.file == *f))
        .cloned()
        .collect();
    let pin_of = |l: Option<&Lock>, name: Option<&str>| {
        l.and_then(|l| l.image(name)).map(|i| i.reference.clone())
    };
    let first_image = config.images.first().and_then(|i| i.name.as_deref());
    Summary {
        package,
        source: first.source.clone(),
        upstream_name,
        from: first.from.clone(),
        to: first.to.clone(),
        compare_url: first.compare_url.clone(),
        release_url: first.release_url.clone(),
        commit: first.commit.clone(),
        go_directive: first.go_directive.clone(),
        image: (pin_of(old, first_image), pin_of(Some(lock), first_image)),
        patches,
        files,
        images: match config.images.as_slice() {
            [] | [_] => Vec::new(),
            all => all
                .iter()
                .map(|i| {
                    let name = i.name.as_deref();
                    (
                        name.unwrap_or_default().to_owned(),
                        pin_of(old, name),
                        pin_of(Some(lock), name),
                    )
                })
                .collect(),
        },
        upstreams: if changes.len() > 1 {
            changes
        } else {
            Vec::new()
        },
    }
}

/// What changed of one upstream between the base's lock and this one.
fn change(ctx: &Context, up: &Upstream, lock: &Lock, old: Option<&Lock>) -> UpstreamChange {
    let name = up.name.as_deref();
    let before = old.and_then(|o| o.upstream(name));
    let now = lock.upstream(name);
    let from = before.map(|o| o.version.clone());
    let to = now.map(|l| l.version.clone()).unwrap_or_default();
    let (compare_url, release_url) = match &up.source {
        UpstreamSource::GitHub { repo } => {
            let server = &ctx.env.server_url;
            let release = match &up.selection {
                Selection::Tags(_) => Some(format!("{server}/{repo}/releases/tag/{to}")),
                _ => None,
            };
            (
                from.as_ref()
                    .filter(|f| **f != to)
                    .map(|f| format!("{server}/{repo}/compare/{f}...{to}")),
                release,
            )
        }
        UpstreamSource::Git { .. } => (None, None),
    };
    UpstreamChange {
        name: up.label(),
        source: up.source.describe(),
        from,
        to,
        compare_url,
        release_url,
        commit: now.and_then(|l| l.commit.clone()),
        go_directive: (
            before.and_then(|o| o.go_directive.clone()),
            now.and_then(|l| l.go_directive.clone()),
        ),
    }
}

#[derive(Deserialize)]
struct ApiPull {
    number: u64,
    html_url: String,
}

#[derive(Deserialize)]
struct ApiRepo {
    default_branch: String,
}

fn create(
    ctx: &Context,
    repo: &Repository,
    pkg: &Path,
    opts: &PrOptions,
    report: &mut PrReport,
) -> Result<()> {
    let Some(token) = ctx.env.token.as_ref() else {
        return Err(Error::usage(
            "`pr --create` opens a pull request and needs a token",
            "set GITHUB_TOKEN (or GH_TOKEN)",
        ));
    };
    let slug = match ctx
        .env
        .repository
        .clone()
        .or_else(|| origin_slug(repo, &ctx.env.server_url))
    {
        Some(s) => s,
        None => {
            return Err(Error::usage(
                "cannot tell which GitHub repository to open the pull request on",
                "set GITHUB_REPOSITORY=owner/name",
            ));
        }
    };
    let branch = format!("revendor/{}-{}", report.summary.package, report.summary.to);
    let refname = format!("refs/heads/{branch}");

    // Commit the package's changes on the branch and move HEAD there; the
    // work tree already holds exactly what the commit records.
    let mut index = repo.index().map_err(git_err)?;
    let workdir = repo.workdir().unwrap_or(Path::new("."));
    for f in &report.summary.files {
        let rel = pkg.join(f);
        if workdir.join(&rel).exists() {
            index.add_path(&rel).map_err(git_err)?;
        } else {
            index.remove_path(&rel).map_err(git_err)?;
        }
    }
    index.write().map_err(git_err)?;
    let tree = repo
        .find_tree(index.write_tree().map_err(git_err)?)
        .map_err(git_err)?;
    let sig = repo
        .signature()
        .or_else(|_| git2::Signature::now("revendor", "revendor@users.noreply.github.com"))
        .map_err(git_err)?;
    let parent = repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(git_err)?;
    let message = format!("{}\n\n{}", report.title, report.body);
    let oid = repo
        .commit(None, &sig, &sig, &message, &tree, &[&parent])
        .map_err(git_err)?;
    repo.reference(&refname, oid, true, "revendor pr")
        .map_err(git_err)?;
    repo.set_head(&refname).map_err(git_err)?;

    ctx.shell.status("Pushing", format!("{branch} to origin"));
    let mut remote = repo.find_remote("origin").map_err(git_err)?;
    let mut callbacks = git2::RemoteCallbacks::new();
    let token_for_git = token.clone();
    callbacks.credentials(move |_, _, _| {
        git2::Cred::userpass_plaintext("x-access-token", &token_for_git)
    });
    let mut push = git2::PushOptions::new();
    push.remote_callbacks(callbacks);
    remote
        .push(&[format!("+{refname}:{refname}")], Some(&mut push))
        .map_err(|e| Error::Git {
            url: "origin".into(),
            message: format!("push of {branch} failed: {}", e.message()),
        })?;

    let api = &ctx.env.api_url;
    let owner = slug.split('/').next().unwrap_or_default();
    let base = match &opts.base {
        Some(b) => b.clone(),
        None => {
            let url = format!("{api}/repos/{slug}");
            let r = ctx.client.get(&url)?;
            json::<ApiRepo>(&r.body, "a repository", &url)?.default_branch
        }
    };
    let url = format!("{api}/repos/{slug}/pulls?head={owner}:{branch}&state=open");
    let existing = ctx.client.get(&url)?;
    let open: Vec<ApiPull> = json(&existing.body, "a list of pull requests", &url)?;
    let (method, url, body) = match open.first() {
        Some(p) => (
            "PATCH",
            format!("{api}/repos/{slug}/pulls/{}", p.number),
            serde_json::json!({"title": report.title, "body": report.body}),
        ),
        None => (
            "POST",
            format!("{api}/repos/{slug}/pulls"),
            serde_json::json!({"title": report.title, "body": report.body, "head": branch, "base": base}),
        ),
    };
    let answer = ctx.client.send_json(method, &url, &body)?;
    let pull: ApiPull = json(&answer.body, "a pull request", &url)?;
    report.branch = Some(branch);
    report.url = Some(pull.html_url);
    Ok(())
}

/// GitHub's JSON answer from `url`, or [`Error::Malformed`] naming `what`
/// it should have been.
fn json<T: serde::de::DeserializeOwned>(body: &[u8], what: &str, url: &str) -> Result<T> {
    serde_json::from_slice(body).map_err(|e| Error::Malformed {
        what: what.into(),
        url: crate::net::redact(url),
        detail: e.to_string(),
    })
}

/// `owner/name` of `origin` when it is a GitHub URL (https, ssh, or under
/// `GITHUB_SERVER_URL`).
fn origin_slug(repo: &Repository, server: &str) -> Option<String> {
    let remote = repo.find_remote("origin").ok()?;
    let url = remote.url().ok()?.trim_end_matches(".git").to_string();
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
