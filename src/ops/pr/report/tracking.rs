//! The one tracking issue of `pr --report`, found by its marker and kept in
//! step with the rows.
//!
//! | issue found | rows | what is sent |
//! | --- | --- | --- |
//! | open, same title and body | some | nothing (`left-alone`) |
//! | open | some | `PATCH` title and body (`updated`) |
//! | open | none | `PATCH` state closed, a body saying so (`closed`) |
//! | none open, one closed | some | `PATCH` state open, title, body (`reopened`) |
//! | none | some | `POST` (`opened`) |
//! | none open | none | nothing (`left-alone`) |
//!
//! The issue is looked for among the issues carrying the `[report]` labels
//! (every page), by the marker at the start of its body, so a person may
//! retitle it. Writes are sent once: a lost answer is found again by the
//! next run's lookup.

use super::super::create::failed;
use super::body::{MARKER, closed_body};
use crate::config::repo::ReportConfig;
use crate::error::Result;
use crate::github::{self, Issue, IssueState};

/// What `pr --report` did to the issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IssueAction {
    /// Opened it.
    Opened,
    /// Changed its title or body.
    Updated,
    /// Reopened a closed one, with the new rows.
    Reopened,
    /// Closed it: no package needs a person.
    Closed,
    /// Sent nothing: it already says this (or there is none and nothing to
    /// say).
    LeftAlone,
}

/// What a failure leaves behind: every write is one request.
const UNCHANGED: &str = "the tracking issue is as it was";

/// Brings the issue in line with `body` (`needed`: some package needs a
/// person); its address, if there is one, and what was done.
pub(super) fn publish(
    api: &github::Repo<'_>,
    config: &ReportConfig,
    needed: bool,
    body: &str,
) -> Result<(Option<String>, IssueAction)> {
    let title = &config.title;
    let open = find(api, IssueState::Open, &config.labels)?;
    let edit = |issue: &Issue, body: &str, state: IssueState| {
        api.edit_issue(issue.number, title, body, state)
            .map_err(|e| failed(format!("edit issue #{}", issue.number), UNCHANGED, e))
    };
    let (issue, action) = match (open, needed) {
        (Some(issue), true) if issue.title == *title && same(issue.body.as_deref(), body) => {
            (Some(issue), IssueAction::LeftAlone)
        }
        (Some(issue), true) => (
            Some(edit(&issue, body, IssueState::Open)?),
            IssueAction::Updated,
        ),
        (Some(issue), false) => {
            let closed = edit(&issue, &closed_body(), IssueState::Closed)?;
            (Some(closed), IssueAction::Closed)
        }
        (None, false) => (None, IssueAction::LeftAlone),
        (None, true) => match find(api, IssueState::Closed, &config.labels)? {
            Some(issue) => (
                Some(edit(&issue, body, IssueState::Open)?),
                IssueAction::Reopened,
            ),
            None => {
                let opened = api
                    .create_issue(title, body, &config.labels)
                    .map_err(|e| failed("open the tracking issue".to_owned(), UNCHANGED, e))?;
                (Some(opened), IssueAction::Opened)
            }
        },
    };
    Ok((issue.map(|i| i.html_url), action))
}

/// The first issue in `state` with `labels` whose body starts with the
/// marker.
fn find(api: &github::Repo<'_>, state: IssueState, labels: &[String]) -> Result<Option<Issue>> {
    let which = match state {
        IssueState::Open => "open",
        IssueState::Closed => "closed",
    };
    let issues = api.issues(state, labels).map_err(|e| {
        failed(
            format!("list the {which} issues of {}", api.slug()),
            UNCHANGED,
            e,
        )
    })?;
    Ok(issues.into_iter().find(|i| {
        i.body
            .as_deref()
            .is_some_and(|b| b.trim_start().starts_with(MARKER))
    }))
}

/// Whether GitHub's copy of a body is `ours` (it may have turned `\n` into
/// `\r\n`, and trims the end).
fn same(theirs: Option<&str>, ours: &str) -> bool {
    theirs.unwrap_or_default().replace("\r\n", "\n").trim_end() == ours.trim_end()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_is_the_same_through_github_line_endings_and_trimming() {
        assert!(same(Some("a\r\nb"), "a\nb\n"));
        assert!(!same(Some("a\nc"), "a\nb\n"));
        assert!(!same(None, "a"));
    }
}
