//! Issues on the stand-in, as GitHub serves them: `GET /repos/{o}/{r}/issues` (`state`
//! `open` by default, `closed` or `all`; `labels` a comma-separated list the issue must all
//! carry; newest first; pull requests listed too, with a `pull_request` key), `POST …/issues`
//! (422 without a title) and `PATCH …/issues/{n}` (404 for a number that is no issue, 422 for
//! an unknown state).

use serde_json::{Value, json};

use super::{GitHub, Repo, RepoState, Request, Response, Urls, not_found_json, paginate_keeping};

/// An issue as the stand-in keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issue {
    /// Its number, shared with pull requests.
    pub number: u64,
    /// Its title.
    pub title: String,
    /// Its Markdown body.
    pub body: String,
    /// `open` or `closed`.
    pub state: String,
    /// Its labels.
    pub labels: Vec<String>,
}

impl GitHub {
    /// The issues of `repo` (`owner/name`), in the order opened.
    pub fn issues(&self, repo: &str) -> Vec<Issue> {
        self.state()
            .repos
            .get(repo)
            .map(|r| r.issues.clone())
            .unwrap_or_default()
    }
}

impl Repo<'_> {
    /// An issue opened before the run, in `state` with `labels`.
    pub fn issue(&self, title: &str, body: &str, state: &str, labels: &[&str]) -> &Self {
        self.with(|repo, _| {
            let number = repo.next_number();
            repo.issues.push(Issue {
                number,
                title: title.to_owned(),
                body: body.to_owned(),
                state: state.to_owned(),
                labels: labels.iter().map(|l| (*l).to_owned()).collect(),
            });
        });
        self
    }
}

/// `GET /repos/{o}/{r}/issues`.
pub(super) fn list(urls: &Urls, repo: &RepoState, request: &Request, link_base: &str) -> Response {
    let state = request.query("state").unwrap_or_else(|| "open".to_owned());
    let wanted: Vec<String> = request
        .query("labels")
        .map(|l| {
            l.split(',')
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let fits = |s: &str, labels: &[String]| {
        (state == "all" || state == s) && wanted.iter().all(|w| labels.contains(w))
    };
    let mut items: Vec<(u64, Value)> = repo
        .issues
        .iter()
        .filter(|i| fits(&i.state, &i.labels))
        .map(|i| (i.number, issue_json(urls, repo, i)))
        .collect();
    for pull in repo.pulls.iter().filter(|p| fits("open", &p.labels)) {
        let mut value = super::pull_json(urls, repo, pull);
        value["pull_request"] = json!({"url": value["url"].clone()});
        value["labels"] = json!(
            pull.labels
                .iter()
                .map(|l| json!({"name": l}))
                .collect::<Vec<_>>()
        );
        items.push((pull.number, value));
    }
    items.sort_by_key(|item| std::cmp::Reverse(item.0));
    let items = items.into_iter().map(|(_, v)| v).collect();
    let link_path = format!("/repositories/{}/issues", repo.id);
    paginate_keeping(link_base, request, &link_path, &["state", "labels"], items)
}

/// `POST /repos/{o}/{r}/issues`.
pub(super) fn create(urls: &Urls, repo: &mut RepoState, body: &Value) -> Response {
    let Some(title) = body.get("title").and_then(Value::as_str) else {
        return Response::json(422, &json!({"message": "Validation Failed"}));
    };
    let labels = body
        .get("labels")
        .and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let issue = Issue {
        number: repo.next_number(),
        title: title.to_owned(),
        body: text(body, "body").unwrap_or_default(),
        state: "open".to_owned(),
        labels,
    };
    let answer = issue_json(urls, repo, &issue);
    repo.issues.push(issue);
    Response::json(201, &answer)
}

/// `PATCH /repos/{o}/{r}/issues/{n}`.
pub(super) fn edit(urls: &Urls, repo: &mut RepoState, number: &str, body: &Value) -> Response {
    let Some(index) = repo
        .issues
        .iter()
        .position(|i| number.parse() == Ok(i.number))
    else {
        return not_found_json();
    };
    if let Some(state) = text(body, "state") {
        if state != "open" && state != "closed" {
            return Response::json(422, &json!({"message": "Validation Failed"}));
        }
        repo.issues[index].state = state;
    }
    if let Some(title) = text(body, "title") {
        repo.issues[index].title = title;
    }
    if let Some(text) = text(body, "body") {
        repo.issues[index].body = text;
    }
    Response::json(200, &issue_json(urls, repo, &repo.issues[index]))
}

fn text(body: &Value, key: &str) -> Option<String> {
    body.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn issue_json(urls: &Urls, repo: &RepoState, issue: &Issue) -> Value {
    let full = repo.full_name();
    json!({
        "number": issue.number,
        "state": issue.state,
        "title": issue.title,
        // GitHub answers `null` for an empty body.
        "body": (!issue.body.is_empty()).then_some(&issue.body),
        "labels": issue.labels.iter().map(|l| json!({"name": l})).collect::<Vec<_>>(),
        "html_url": format!("{}/{full}/issues/{}", urls.server, issue.number),
        "url": format!("{}/repos/{full}/issues/{}", urls.api, issue.number),
    })
}
