//! A GitHub upstream: the releases API, raw files and tag archives.
//!
//! URLs come from [`Env`]: `GITHUB_API_URL` for the API, `REVENDOR_RAW_URL`
//! for raw files, `GITHUB_SERVER_URL` for archives. The release's `tag_name`
//! is the version; `name` is free text that may be null or renamed and is
//! never used.

use serde::Deserialize;

use super::{Release, Source, SourceTree, archive};
use crate::env::Env;
use crate::error::{Error, Result};
use crate::image::Digest;
use crate::net::{Client, HttpError, next_link};

/// Most pages a release listing may take; a guard against a server that
/// keeps answering with a `next` link.
const MAX_PAGES: usize = 100;

/// A GitHub repository as an upstream.
#[derive(Debug)]
pub struct GitHub<'a> {
    repo: String,
    env: &'a Env,
    client: &'a Client,
}

#[derive(Deserialize)]
struct ApiRelease {
    tag_name: String,
    #[serde(default)]
    draft: bool,
    #[serde(default)]
    prerelease: bool,
}

#[derive(Deserialize)]
struct ApiCommit {
    sha: String,
}

impl<'a> GitHub<'a> {
    /// The repository `owner/name` read through `env`'s URLs.
    pub fn new(repo: &str, env: &'a Env, client: &'a Client) -> GitHub<'a> {
        GitHub {
            repo: repo.to_string(),
            env,
            client,
        }
    }

    fn not_found(&self, e: HttpError, what: &str) -> Error {
        if e.is_not_found() {
            Error::Upstream(format!(
                "{what} of GitHub repository `{}` not found at {} (is the repository name right, and public or reachable with GITHUB_TOKEN?)",
                self.repo, self.env.api_url
            ))
        } else {
            Error::Http(e)
        }
    }
}

impl Source for GitHub<'_> {
    fn releases(&self) -> Result<Vec<Release>> {
        let mut url = format!(
            "{}/repos/{}/releases?per_page=100",
            self.env.api_url, self.repo
        );
        let mut out = Vec::new();
        for _ in 0..MAX_PAGES {
            let resp = self
                .client
                .get_with(&url, &[("Accept", "application/vnd.github+json")])
                .map_err(|e| self.not_found(e, "the releases"))?;
            let page: Vec<ApiRelease> = serde_json::from_slice(&resp.body).map_err(|e| {
                Error::Upstream(format!("`{url}` did not answer a list of releases: {e}"))
            })?;
            out.extend(page.into_iter().filter(|r| !r.draft).map(|r| Release {
                tag: r.tag_name,
                prerelease: r.prerelease,
            }));
            match resp.link.as_deref().and_then(next_link) {
                Some(next) => url = next,
                None => return Ok(out),
            }
        }
        Err(Error::Upstream(format!(
            "the releases of `{}` span more than {MAX_PAGES} pages",
            self.repo
        )))
    }

    fn file(&self, tag: &str, path: &str) -> Result<Vec<u8>> {
        let url = format!("{}/{}/refs/tags/{tag}/{path}", self.env.raw_url, self.repo);
        match self.client.get(&url) {
            Ok(r) => Ok(r.body),
            Err(e) if e.is_not_found() => Err(Error::Upstream(format!(
                "`{path}` does not exist in {} at {tag} ({url})",
                self.repo
            ))),
            Err(e) => Err(e.into()),
        }
    }

    fn commit(&self, tag: &str) -> Result<Option<String>> {
        let url = format!("{}/repos/{}/commits/{tag}", self.env.api_url, self.repo);
        let resp = self
            .client
            .get_with(&url, &[("Accept", "application/vnd.github+json")])
            .map_err(|e| self.not_found(e, &format!("tag {tag}")))?;
        let commit: ApiCommit = serde_json::from_slice(&resp.body)
            .map_err(|e| Error::Upstream(format!("`{url}` did not answer a commit: {e}")))?;
        Ok(Some(commit.sha))
    }

    fn tree(&self, tag: &str) -> Result<SourceTree> {
        let url = format!(
            "{}/{}/archive/refs/tags/{tag}.tar.gz",
            self.env.server_url, self.repo
        );
        let resp = self
            .client
            .get(&url)
            .map_err(|e| self.not_found(e, &format!("the archive of {tag}")))?;
        let sha = Digest::of(&resp.body).hex().to_owned();
        let files = archive::unpack_tar_gz(&resp.body, true)
            .map_err(|e| Error::Upstream(format!("the archive `{url}` is unusable: {e}")))?;
        Ok(SourceTree {
            files,
            archive_sha256: Some(sha),
        })
    }
}
