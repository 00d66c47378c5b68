//! `pr --create`: one branch, one commit, one pull request, updated in
//! place, and nothing half-done when a step fails.
//!
//! 1. Refuse before anything is written: no token, no repository to open
//!    the pull request on, a package file revendor does not write changed
//!    (or a rendered file edited by hand), no identity to commit as.
//! 2. Ask GitHub first: the repository (the token must be allowed to push)
//!    and the open pull request of `revendor/<package>-<version>`.
//! 3. Read the branch on origin. A commit on it that revendor did not make
//!    (`ownership.rs`: its trailer, author, committer and what it changes)
//!    means someone works there: leave the branch alone and say so on the
//!    pull request, or, without one, fail.
//! 4. Push the commit (made from the base tree and the package's files
//!    only) unless the branch already holds exactly it, leased on what the
//!    branch was seen at.
//! 5. Open the pull request, or update the one found in step 2. If that
//!    fails, the push of step 4 is undone, so a rerun starts from where
//!    this run started; a rerun after any failure converges on one branch
//!    and one pull request.
//!
//! `HEAD`, the index and the work tree are never touched.

use super::base::Base;
use super::facts::Gathered;
use super::ownership::{self, TRAILER};
use super::{Action, PrOptions, PrReport};
use crate::check::Severity;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::git::{Identity, Remote, Repo, Status, commit};
use crate::github::{self, Pull};
use crate::workspace::Context;

/// Commits, pushes and opens or updates the pull request of `report`.
pub(super) fn create(
    ctx: &Context,
    repo: &Repo,
    base: &Base,
    g: &Gathered,
    opts: &PrOptions,
    report: &mut PrReport,
) -> Result<()> {
    let (token, slug) = token_and_repository(ctx, report)?;
    refuse_dirty(repo, g)?;
    let who = Identity::of(repo, &ctx.env)?;
    let branch = report.branch.clone();

    let api = github::Repo::new(&slug, &ctx.env, &ctx.client);
    let info = api.info().map_err(|e| {
        failed(
            format!("check {slug} and the token through the GitHub API"),
            NOTHING_PUSHED,
            e,
        )
    })?;
    if info.permissions.as_ref().is_some_and(|p| !p.push) {
        return Err(Error::usage(
            format!("the token may not push to {slug}"),
            "give GITHUB_TOKEN (or GH_TOKEN) contents: write and pull-requests: write on the repository",
        ));
    }
    let into = opts
        .base
        .clone()
        .or_else(|| base.branch.clone())
        .unwrap_or(info.default_branch);
    let owner = slug.split('/').next().unwrap_or_default();
    let existing = open_pull(&api, owner, &branch)?;

    let tree = commit::tree(repo, base.commit, &g.changes, &ctx.root)?;
    let remote = Remote::new(&repo.workdir, token, &ctx.env)?;
    let seen = remote.head(&branch)?;
    if let Some(head) = seen {
        if repo.git.find_commit(head).is_err() {
            remote.fetch(&branch)?;
        }
        let foreign = ownership::foreign(repo, head, base.commit, &who)?;
        if !foreign.is_empty() {
            return left_alone(ctx, &api, existing, &branch, &foreign, tree, report);
        }
    }

    let mut trailers = vec![(TRAILER.to_owned(), ownership::trailer_value(&repo.package))];
    if opts.signoff {
        trailers.push(("Signed-off-by".to_owned(), who.signoff()));
    }
    let message = crate::pr::commit_message(&report.title, &report.summary, &trailers);
    let pushed = match seen {
        Some(head) if commit::is_same(repo, head, base.commit, tree, &message) => {
            ctx.shell.status(
                "Unchanged",
                format!("`{branch}` already holds this upgrade"),
            );
            None
        }
        _ => {
            let oid = commit::commit(repo, base.commit, tree, &who, &message)?;
            ctx.shell.status("Pushing", format!("{branch} to origin"));
            remote.push(oid, &branch, seen)?;
            Some(oid)
        }
    };

    match publish(&api, existing.as_ref(), owner, &branch, &into, report) {
        Ok((pull, action)) => {
            label(&api, &pull, &report.labels)?;
            report.url = Some(pull.html_url);
            report.action = Some(action);
            Ok(())
        }
        Err(e) => {
            let state = match pushed {
                None => "nothing was pushed".to_owned(),
                Some(oid) => undo(&remote, &branch, oid, seen),
            };
            let action = match existing {
                Some(p) => format!("update pull request #{}", p.number),
                None => format!("open the pull request of `{branch}` into `{into}`"),
            };
            Err(failed(action, &state, e))
        }
    }
}

/// What a failure before the push leaves behind.
const NOTHING_PUSHED: &str = "nothing was pushed and no pull request was opened";

/// The token `pr --create` pushes with and the `owner/name` it opens the
/// pull request on, or why it cannot start.
fn token_and_repository<'c>(ctx: &'c Context, report: &PrReport) -> Result<(&'c str, String)> {
    let Some(token) = ctx.env.token.as_deref() else {
        return Err(Error::usage(
            "`pr --create` pushes a branch and opens a pull request through the GitHub API, and there is no token",
            "set GITHUB_TOKEN (or GH_TOKEN) to a token that may push branches and open pull requests",
        ));
    };
    let Some(slug) = report.repository.clone() else {
        return Err(Error::usage(
            "cannot tell which GitHub repository to open the pull request on",
            "set GITHUB_REPOSITORY=owner/name",
        ));
    };
    Ok((token, slug))
}

/// Adds `labels` (from `.revendor.toml`) to the opened pull request.
fn label(api: &github::Repo<'_>, pull: &Pull, labels: &[String]) -> Result<()> {
    if labels.is_empty() {
        return Ok(());
    }
    api.add_labels(pull.number, labels).map_err(|e| {
        failed(
            format!("label pull request #{}", pull.number),
            "the pull request is open without them",
            e,
        )
    })
}

/// The open pull request of `branch`, looked up before anything is pushed.
fn open_pull(api: &github::Repo<'_>, owner: &str, branch: &str) -> Result<Option<Pull>> {
    api.open_pull(owner, branch).map_err(|e| {
        failed(
            format!("look for the open pull request of `{branch}`"),
            NOTHING_PUSHED,
            e,
        )
    })
}

/// The error of `action` that failed with `e`, with `state` saying what
/// was left behind; an answer that did not parse as it came.
pub(super) fn failed(action: String, state: &str, e: github::Error) -> Error {
    match e {
        github::Error::Request(e) => Error::Publish {
            action,
            message: None,
            state: state.to_owned(),
            source: Some(Box::new(e)),
        },
        github::Error::Answer(e) => e,
    }
}

/// Updates `existing`, or opens the pull request of `branch` into `into`.
fn publish(
    api: &github::Repo<'_>,
    existing: Option<&Pull>,
    owner: &str,
    branch: &str,
    into: &str,
    report: &PrReport,
) -> Result<(Pull, Action), github::Error> {
    let (title, body) = (&report.title, &report.body);
    if let Some(pull) = existing {
        return Ok((api.update_pull(pull.number, title, body)?, Action::Updated));
    }
    match api.create_pull(title, body, branch, into) {
        // Opened by a run whose answer was lost: find it and update it.
        Err(e) if e.already_exists() => {
            match open_pull(api, owner, branch).map_err(github::Error::Answer)? {
                Some(pull) => Ok((api.update_pull(pull.number, title, body)?, Action::Updated)),
                None => Err(e),
            }
        }
        other => Ok((other?, Action::Opened)),
    }
}

/// Puts `branch` on origin back where this run found it; says what origin
/// is left with.
fn undo(remote: &Remote<'_>, branch: &str, pushed: git2::Oid, seen: Option<git2::Oid>) -> String {
    let undone = match seen {
        None => remote.delete(branch, pushed),
        Some(old) => remote.push(old, branch, Some(pushed)),
    };
    match undone {
        Ok(()) => {
            format!("the push of `{branch}` was undone, so origin is as it was; run again to retry")
        }
        Err(e) => format!(
            "`{branch}` stays pushed at {} ({e}); run again to open its pull request",
            &pushed.to_string()[..12]
        ),
    }
}

/// Someone else's commits are on the branch: never push over them. With a
/// pull request, say so there once per change (a marker names the tree
/// this run would have pushed); without one, fail.
fn left_alone(
    ctx: &Context,
    api: &github::Repo<'_>,
    existing: Option<Pull>,
    branch: &str,
    foreign: &[String],
    tree: git2::Oid,
    report: &mut PrReport,
) -> Result<()> {
    let list = foreign.join(", ");
    let Some(pull) = existing else {
        return Err(Error::ForeignBranch {
            branch: branch.to_owned(),
            commits: list,
        });
    };
    let marker = format!("<!-- revendor: {tree} -->");
    const LEFT_ALONE: &str = "the branch was left alone";
    let comments = api.comments(pull.number).map_err(|e| {
        let action = format!("read the comments of pull request #{}", pull.number);
        failed(action, LEFT_ALONE, e)
    })?;
    if !comments.iter().any(|c| c.contains(&marker)) {
        let text = format!(
            "revendor did not update `{branch}`: it has commits revendor did not make ({list}), \
             and revendor never pushes over them. The upgrade it would have pushed:\n\n\
             <details><summary>{}</summary>\n\n{}\n</details>\n\n\
             To let revendor update the branch again, rebase those commits away or close this pull request.\n\n{marker}\n",
            report.title, report.body
        );
        api.comment(pull.number, &text).map_err(|e| {
            let action = format!("comment on pull request #{}", pull.number);
            failed(action, LEFT_ALONE, e)
        })?;
    }
    ctx.shell.warn(format!(
        "left `{branch}` alone: it has commits revendor did not make ({list}); said so on {}",
        pull.html_url
    ));
    report.url = Some(pull.html_url);
    report.action = Some(Action::LeftAlone);
    Ok(())
}

/// The files revendor writes in a package: vendor.toml, `upstream/`, the
/// rendered outputs (each file a vendored directory selects), the patches, and the files rewrites, pins and markers
/// name.
fn managed(config: &Config, path: &str) -> bool {
    path == "vendor.toml"
        || path.starts_with("upstream/")
        || config.vendor.iter().any(|v| v.renders(path))
        || config.patches.iter().any(|p| p.file == path)
        || config.rewrites.iter().any(|r| r.file == path)
        || config.pins.iter().any(|p| p.file == path)
        || config.markers.iter().any(|m| m.file == path)
        || config.images.iter().any(|i| i.dockerfile == path)
}

/// A change revendor did not make would go into its commit: refuse. That is
/// a changed file revendor does not write, or a finding that the tree is not
/// what revendor wrote (a hand edit of a rendered file, a pristine copy or
/// patch that differs from the lock).
fn refuse_dirty(repo: &Repo, g: &Gathered) -> Result<()> {
    let mut problems: Vec<String> = g
        .changes
        .iter()
        .filter(|c| !managed(&g.config, &c.path))
        .map(|c| {
            let how = match c.status {
                Status::Added => "is new",
                Status::Modified => "changed",
                Status::Deleted => "was deleted",
            };
            format!("`{}` {how}", repo.full(&c.path))
        })
        .collect();
    problems.extend(
        g.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .filter(|f| f.id == "render-drift" || f.id == "lock-integrity")
            .map(|f| format!("{}:{}: {}", repo.full(&f.file), f.line, f.message)),
    );
    if problems.is_empty() {
        return Ok(());
    }
    Err(Error::usage(
        format!(
            "the package has changes revendor did not make, and `pr --create` would commit them: {}",
            problems.join("; ")
        ),
        "commit them on their own (or revert them), then run again; nothing was committed or pushed",
    ))
}
