//! The GitHub API calls of `pr --create`: the repository and what the token
//! may do there, the open pull request of a branch, opening and updating it,
//! and commenting on it.
//!
//! Writes are sent once (`net::Client::send_json` never retries them), so a
//! timed-out write is found again by the next run's lookup instead of being
//! sent twice.

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::net::HttpError;
use crate::workspace::Context;

/// One repository's pull requests, through the API at `GITHUB_API_URL`.
pub(super) struct Api<'a> {
    ctx: &'a Context,
    slug: &'a str,
}

/// `GET /repos/{slug}`, the fields `pr --create` needs.
#[derive(Debug, Deserialize)]
pub(super) struct RepoInfo {
    /// Where a pull request merges by default.
    pub default_branch: String,
    /// What the token may do; absent for an anonymous request.
    pub permissions: Option<Permissions>,
}

/// The token's permissions on a repository.
#[derive(Debug, Deserialize)]
pub(super) struct Permissions {
    /// Whether it may push branches.
    pub push: bool,
}

/// A pull request.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct Pull {
    /// Its number.
    pub number: u64,
    /// Its web page.
    pub html_url: String,
}

#[derive(Debug, Deserialize)]
struct Comment {
    body: Option<String>,
}

impl<'a> Api<'a> {
    /// The API of repository `slug` (`owner/name`).
    pub fn new(ctx: &'a Context, slug: &'a str) -> Api<'a> {
        Api { ctx, slug }
    }

    fn url(&self, rest: &str) -> String {
        format!("{}/repos/{}{rest}", self.ctx.env.api_url, self.slug)
    }

    /// The repository, and whether the token may push there.
    pub fn repo(&self) -> Result<RepoInfo> {
        let url = self.url("");
        let answer = self.ctx.client.get(&url).map_err(|e| {
            failed(
                format!("check {} and the token through the GitHub API", self.slug),
                "nothing was pushed and no pull request was opened",
                e,
            )
        })?;
        json(&answer.body, "a repository", &url)
    }

    /// The open pull request whose head is `owner:branch`, if any.
    pub fn open_pull(&self, owner: &str, branch: &str) -> Result<Option<Pull>> {
        // Encoded: a version with build metadata (`v1.30.4+k3s1`) puts a `+`
        // in the branch, which a bare query would read as a space.
        let url = match reqwest::Url::parse(&self.url("/pulls")) {
            Ok(mut url) => {
                url.query_pairs_mut()
                    .append_pair("head", &format!("{owner}:{branch}"))
                    .append_pair("state", "open");
                url.to_string()
            }
            Err(_) => self.url(&format!("/pulls?head={owner}:{branch}&state=open")),
        };
        let answer = self.ctx.client.get(&url).map_err(|e| {
            failed(
                format!("look for the open pull request of `{branch}`"),
                "nothing was pushed and no pull request was opened",
                e,
            )
        })?;
        let pulls: Vec<Pull> = json(&answer.body, "a list of pull requests", &url)?;
        Ok(pulls.into_iter().next())
    }

    /// Opens a pull request of `head` into `base`.
    pub fn create(&self, title: &str, body: &str, head: &str, base: &str) -> Result<Pull, Http> {
        let url = self.url("/pulls");
        let value = serde_json::json!({"title": title, "body": body, "head": head, "base": base});
        let answer = self.ctx.client.send_json("POST", &url, &value)?;
        json(&answer.body, "a pull request", &url).map_err(Http::Answer)
    }

    /// Sets the title and body of pull request `number`.
    pub fn update(&self, number: u64, title: &str, body: &str) -> Result<Pull, Http> {
        let url = self.url(&format!("/pulls/{number}"));
        let value = serde_json::json!({"title": title, "body": body});
        let answer = self.ctx.client.send_json("PATCH", &url, &value)?;
        json(&answer.body, "a pull request", &url).map_err(Http::Answer)
    }

    /// The bodies of the comments on pull request `number` (the first 100).
    pub fn comments(&self, number: u64) -> Result<Vec<String>> {
        let url = self.url(&format!("/issues/{number}/comments?per_page=100"));
        let answer = self.ctx.client.get(&url).map_err(|e| {
            failed(
                format!("read the comments of pull request #{number}"),
                "the branch was left alone",
                e,
            )
        })?;
        let comments: Vec<Comment> = json(&answer.body, "a list of comments", &url)?;
        Ok(comments.into_iter().filter_map(|c| c.body).collect())
    }

    /// Adds `labels` to pull request `number` (GitHub keeps the ones it has).
    pub fn add_labels(&self, number: u64, labels: &[String]) -> Result<()> {
        let url = self.url(&format!("/issues/{number}/labels"));
        self.ctx
            .client
            .send_json("POST", &url, &serde_json::json!({ "labels": labels }))
            .map(drop)
            .map_err(|e| {
                failed(
                    format!("label pull request #{number}"),
                    "the pull request is open without them",
                    e,
                )
            })
    }

    /// Comments `body` on pull request `number`.
    pub fn comment(&self, number: u64, body: &str) -> Result<()> {
        let url = self.url(&format!("/issues/{number}/comments"));
        self.ctx
            .client
            .send_json("POST", &url, &serde_json::json!({"body": body}))
            .map(drop)
            .map_err(|e| {
                failed(
                    format!("comment on pull request #{number}"),
                    "the branch was left alone",
                    e,
                )
            })
    }
}

/// Why a write failed: GitHub's answer (or none), or an answer that is not
/// what it should be.
#[derive(Debug)]
pub(super) enum Http {
    /// The request failed.
    Request(HttpError),
    /// The answer did not parse.
    Answer(Error),
}

impl From<HttpError> for Http {
    fn from(e: HttpError) -> Http {
        Http::Request(e)
    }
}

impl Http {
    /// Whether GitHub refused to open a second pull request for a head
    /// that has one (422 "A pull request already exists").
    pub fn already_exists(&self) -> bool {
        matches!(self, Http::Request(HttpError::Status { status: 422, body, .. }) if body.contains("already exists"))
    }

    /// The error of `action`, with `state` saying what was left behind.
    pub fn into_error(self, action: String, state: &str) -> Error {
        match self {
            Http::Request(e) => failed(action, state, e),
            Http::Answer(e) => e,
        }
    }
}

fn failed(action: String, state: &str, e: HttpError) -> Error {
    Error::Publish {
        action,
        message: None,
        state: state.to_owned(),
        source: Some(Box::new(e)),
    }
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
