//! What `pr --report` asks GitHub: the issues of a repository by state and
//! label (every page), opening one, and editing one's title, body and
//! state.
//!
//! The issues list also holds pull requests (GitHub counts them as issues);
//! [`Repo::issues`] leaves them out. Writes are sent once
//! (`net::Client::send_json` never retries them), so a lost answer is found
//! again by the next run's lookup instead of opening a second issue.

use serde::{Deserialize, Serialize};

use super::{Error, Repo, json};

/// Whether an issue is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IssueState {
    /// Open.
    Open,
    /// Closed.
    Closed,
}

impl IssueState {
    fn as_str(self) -> &'static str {
        match self {
            IssueState::Open => "open",
            IssueState::Closed => "closed",
        }
    }
}

/// An issue, the fields `pr --report` reads.
#[derive(Debug, Clone, Deserialize)]
pub struct Issue {
    /// Its number.
    pub number: u64,
    /// Its title.
    pub title: String,
    /// Its Markdown body; GitHub answers `null` for an empty one.
    #[serde(default)]
    pub body: Option<String>,
    /// Open or closed.
    pub state: IssueState,
    /// Its web page.
    pub html_url: String,
    /// Present when the "issue" is a pull request.
    #[serde(default)]
    pull_request: Option<serde_json::Value>,
}

impl Repo<'_> {
    /// The issues in `state` carrying every one of `labels` (any issue when
    /// empty), pull requests left out, every page.
    pub fn issues(&self, state: IssueState, labels: &[String]) -> Result<Vec<Issue>, Error> {
        let base = self.api_url("/issues");
        let url = match reqwest::Url::parse(&base) {
            Ok(mut url) => {
                let mut query = url.query_pairs_mut();
                query.append_pair("state", state.as_str());
                if !labels.is_empty() {
                    query.append_pair("labels", &labels.join(","));
                }
                query.append_pair("per_page", "100");
                drop(query);
                url.to_string()
            }
            Err(_) => format!("{base}?state={}&per_page=100", state.as_str()),
        };
        let issues: Vec<Issue> = self.get_pages(&url, "a list of issues")?;
        Ok(issues
            .into_iter()
            .filter(|i| i.pull_request.is_none())
            .collect())
    }

    /// Opens an issue.
    pub fn create_issue(&self, title: &str, body: &str, labels: &[String]) -> Result<Issue, Error> {
        let url = self.api_url("/issues");
        let value = serde_json::json!({"title": title, "body": body, "labels": labels});
        let answer = self.client.send_json("POST", &url, &value)?;
        json(&answer.body, "an issue", &url)
    }

    /// Sets the title, body and state of issue `number`.
    pub fn edit_issue(
        &self,
        number: u64,
        title: &str,
        body: &str,
        state: IssueState,
    ) -> Result<Issue, Error> {
        let url = self.api_url(&format!("/issues/{number}"));
        let value = serde_json::json!({"title": title, "body": body, "state": state.as_str()});
        let answer = self.client.send_json("PATCH", &url, &value)?;
        json(&answer.body, "an issue", &url)
    }
}
