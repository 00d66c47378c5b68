//! The one GitHub client: what revendor reads from a GitHub repository and
//! the pull requests it opens there, over the one [`net::Client`].
//!
//! | file | resource |
//! | --- | --- |
//! | `releases` | `GET /repos/{o}/{r}/releases`, paginated; one release's assets by tag, and their downloads |
//! | `commits` | `GET /repos/{o}/{r}/commits/{ref}`: a tag's or a branch's commit |
//! | `trees` | `GET /repos/{o}/{r}/git/trees/{ref}?recursive=1`: every file with its blob id |
//! | `contents` | raw files on `REVENDOR_RAW_URL`, at a tag or a commit |
//! | `archives` | a tag's or a commit's `tar.gz` on `GITHUB_SERVER_URL` |
//! | `pulls` | the repository, pull requests and their comments, for `pr --create` |
//! | `issues` | open and closed issues by label, paginated; opening and editing one, for `pr --report` |
//!
//! 1. Every URL is built here, from [`Env`]'s `GITHUB_API_URL`,
//!    `REVENDOR_RAW_URL` and `GITHUB_SERVER_URL`, so a check that reads
//!    another repository's file asks the same way an upstream does.
//! 2. Requests go through [`net::Client`]: ETag validators, the token (to
//!    GitHub's origins only), retries, the rate limit and a 401 are its
//!    rules, not this module's.
//! 3. A GET whose 304 answer comes from the validator cache and no longer
//!    parses (or unpacks) is sent again unconditionally, so a bad cached
//!    body heals instead of failing every run (issue 13).
//! 4. A failure is a [`Error`]: the request's [`HttpError`] (callers tell a
//!    404 or GitHub's 422 from the rest) or an answer that is not what it
//!    should be.
//!
//! [`net::Client`]: crate::net::Client

mod archives;
mod commits;
mod contents;
mod issues;
mod pulls;
mod releases;
mod trees;

pub use contents::{Rev, fetch_text, raw_file_url};
pub use issues::{Issue, IssueState};
pub use pulls::{Permissions, Pull, RepoInfo};
pub use releases::{Asset, Release, release_asset_url};
pub use trees::{SYMLINK_MODE, Tree, TreeEntry};

use crate::env::Env;
use crate::error;
use crate::net::{Client, HttpError, Response, next_link};

/// Most pages a listing may take; a guard against a server that keeps
/// answering with a `next` link.
const MAX_PAGES: usize = 100;

/// The `Accept` header of every API request.
const API_JSON: [(&str, &str); 1] = [("Accept", "application/vnd.github+json")];

/// One GitHub repository, `owner/name`, through `env`'s URLs.
#[derive(Debug)]
pub struct Repo<'a> {
    slug: String,
    env: &'a Env,
    client: &'a Client,
}

/// Why a GitHub request failed.
#[derive(Debug)]
pub enum Error {
    /// The request failed: no answer, or a status that is not a success.
    Request(HttpError),
    /// GitHub answered, but not with what was asked for
    /// ([`error::Error::Malformed`]).
    Answer(error::Error),
}

impl From<HttpError> for Error {
    fn from(e: HttpError) -> Error {
        Error::Request(e)
    }
}

impl Error {
    /// Whether GitHub refused to open a second pull request for a head
    /// that has one (422 "A pull request already exists").
    pub fn already_exists(&self) -> bool {
        matches!(self, Error::Request(HttpError::Status { status: 422, body, .. }) if body.contains("already exists"))
    }
}

impl<'a> Repo<'a> {
    /// The repository `slug` (`owner/name`) read through `env`'s URLs.
    pub fn new(slug: &str, env: &'a Env, client: &'a Client) -> Repo<'a> {
        Repo {
            slug: slug.to_owned(),
            env,
            client,
        }
    }

    /// `owner/name`.
    pub fn slug(&self) -> &str {
        &self.slug
    }

    /// The API URL of this repository, followed by `rest`.
    fn api_url(&self, rest: &str) -> String {
        format!("{}/repos/{}{rest}", self.env.api_url, self.slug)
    }

    /// A failure as the crate's error: a 404 as [`error::Error::NotFound`]
    /// naming `what` of this repository, anything else as it came.
    pub fn not_found(&self, e: Error, what: &str) -> error::Error {
        match e {
            Error::Request(HttpError::NotFound { url }) => error::Error::NotFound {
                what: format!("{what} of GitHub repository `{}`", self.slug),
                url,
            },
            Error::Request(e) => error::Error::Http(e),
            Error::Answer(e) => e,
        }
    }

    /// The JSON answer of the API at `url`, or [`Error::Answer`] naming
    /// `what` it should have been.
    fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        url: &str,
        what: &str,
    ) -> Result<(T, Response), Error> {
        self.get_usable(url, &API_JSON, what, |body| {
            serde_json::from_slice(body).map_err(|e| e.to_string())
        })
    }

    /// Every page of the JSON list at `first`, following the `Link`
    /// header's `next` as GitHub gives it (never rebuilt from a page
    /// number); [`Error::Answer`] naming `what` for a `Link` that loops or
    /// never ends.
    fn get_pages<T: serde::de::DeserializeOwned>(
        &self,
        first: &str,
        what: &str,
    ) -> Result<Vec<T>, Error> {
        let mut url = first.to_owned();
        let mut out = Vec::new();
        let mut read = std::collections::HashSet::new();
        for _ in 0..MAX_PAGES {
            if !read.insert(url.clone()) {
                let detail = "its `Link` header points back at a page already read";
                return Err(malformed(what, &url, detail.into()));
            }
            let (page, resp): (Vec<T>, _) = self.get_json(&url, what)?;
            out.extend(page);
            match resp.link.as_deref().and_then(next_link) {
                Some(next) => url = next,
                None => return Ok(out),
            }
        }
        let detail = format!("it still links a next page after {MAX_PAGES} pages");
        Err(malformed(what, &url, detail))
    }

    /// GETs `url` and reads the answer with `read`; a cached answer that
    /// `read` refuses is fetched again unconditionally (step 3 of the module
    /// doc). What `read` refuses of a fresh answer is [`Error::Answer`],
    /// naming `what` it should have been.
    fn get_usable<T>(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        what: &str,
        read: impl Fn(&[u8]) -> Result<T, String>,
    ) -> Result<(T, Response), Error> {
        let mut resp = self.client.get_with(url, headers)?;
        let mut value = read(&resp.body);
        if resp.not_modified && value.is_err() {
            resp = self.client.get_fresh_with(url, headers)?;
            value = read(&resp.body);
        }
        match value {
            Ok(value) => Ok((value, resp)),
            Err(detail) => Err(malformed(what, url, detail)),
        }
    }
}

/// GitHub's JSON answer from `url` to a write, or [`Error::Answer`] naming
/// `what` it should have been.
fn json<T: serde::de::DeserializeOwned>(body: &[u8], what: &str, url: &str) -> Result<T, Error> {
    serde_json::from_slice(body).map_err(|e| malformed(what, url, e.to_string()))
}

/// [`Error::Answer`]: `url` did not answer `what`.
fn malformed(what: &str, url: &str, detail: String) -> Error {
    Error::Answer(error::Error::Malformed {
        what: what.into(),
        url: crate::net::redact(url),
        detail,
    })
}
