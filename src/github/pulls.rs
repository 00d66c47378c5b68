//! What `pr --create` asks GitHub: the repository and what the token may do
//! there, the open pull request of a branch, opening, updating and labelling
//! it, and commenting on it.
//!
//! Writes are sent once (`net::Client::send_json` never retries them), so a
//! timed-out write is found again by the next run's lookup instead of being
//! sent twice.

use serde::Deserialize;

use super::{Error, Repo, json};

/// `GET /repos/{slug}`, the fields `pr --create` needs.
#[derive(Debug, Deserialize)]
pub struct RepoInfo {
    /// Where a pull request merges by default.
    pub default_branch: String,
    /// What the token may do; absent for an anonymous request.
    pub permissions: Option<Permissions>,
}

/// The token's permissions on a repository.
#[derive(Debug, Deserialize)]
pub struct Permissions {
    /// Whether it may push branches.
    pub push: bool,
}

/// A pull request.
#[derive(Debug, Clone, Deserialize)]
pub struct Pull {
    /// Its number.
    pub number: u64,
    /// Its web page.
    pub html_url: String,
}

#[derive(Debug, Deserialize)]
struct Comment {
    body: Option<String>,
}

impl Repo<'_> {
    /// The repository, and whether the token may push there.
    pub fn info(&self) -> Result<RepoInfo, Error> {
        Ok(self.get_json(&self.api_url(""), "a repository")?.0)
    }

    /// The open pull request whose head is `owner:branch`, if any.
    pub fn open_pull(&self, owner: &str, branch: &str) -> Result<Option<Pull>, Error> {
        // Encoded: a version with build metadata (`v1.30.4+k3s1`) puts a `+`
        // in the branch, which a bare query would read as a space.
        let url = match reqwest::Url::parse(&self.api_url("/pulls")) {
            Ok(mut url) => {
                url.query_pairs_mut()
                    .append_pair("head", &format!("{owner}:{branch}"))
                    .append_pair("state", "open");
                url.to_string()
            }
            Err(_) => self.api_url(&format!("/pulls?head={owner}:{branch}&state=open")),
        };
        let (pulls, _): (Vec<Pull>, _) = self.get_json(&url, "a list of pull requests")?;
        Ok(pulls.into_iter().next())
    }

    /// Opens a pull request of `head` into `base`.
    pub fn create_pull(
        &self,
        title: &str,
        body: &str,
        head: &str,
        base: &str,
    ) -> Result<Pull, Error> {
        let url = self.api_url("/pulls");
        let value = serde_json::json!({"title": title, "body": body, "head": head, "base": base});
        let answer = self.client.send_json("POST", &url, &value)?;
        json(&answer.body, "a pull request", &url)
    }

    /// Sets the title and body of pull request `number`.
    pub fn update_pull(&self, number: u64, title: &str, body: &str) -> Result<Pull, Error> {
        let url = self.api_url(&format!("/pulls/{number}"));
        let value = serde_json::json!({"title": title, "body": body});
        let answer = self.client.send_json("PATCH", &url, &value)?;
        json(&answer.body, "a pull request", &url)
    }

    /// The bodies of the comments on pull request `number` (the first 100).
    pub fn comments(&self, number: u64) -> Result<Vec<String>, Error> {
        let url = self.api_url(&format!("/issues/{number}/comments?per_page=100"));
        let (comments, _): (Vec<Comment>, _) = self.get_json(&url, "a list of comments")?;
        Ok(comments.into_iter().filter_map(|c| c.body).collect())
    }

    /// Adds `labels` to pull request `number` (GitHub keeps the ones it has).
    pub fn add_labels(&self, number: u64, labels: &[String]) -> Result<(), Error> {
        let url = self.api_url(&format!("/issues/{number}/labels"));
        let value = serde_json::json!({ "labels": labels });
        self.client.send_json("POST", &url, &value)?;
        Ok(())
    }

    /// Comments `body` on pull request `number`.
    pub fn comment(&self, number: u64, body: &str) -> Result<(), Error> {
        let url = self.api_url(&format!("/issues/{number}/comments"));
        let value = serde_json::json!({"body": body});
        self.client.send_json("POST", &url, &value)?;
        Ok(())
    }
}
