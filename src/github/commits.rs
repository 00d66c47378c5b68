//! `GET /repos/{o}/{r}/commits/{ref}`: the commit a tag or a branch names.

use serde::Deserialize;

use super::{Error, Repo, malformed};

#[derive(Deserialize)]
struct ApiCommit {
    sha: String,
}

impl Repo<'_> {
    /// The commit tag `tag` names.
    pub fn tag_commit(&self, tag: &str) -> Result<String, Error> {
        self.commit(&format!("/commits/{tag}"))
    }

    /// The commit at the head of branch `name`.
    pub fn branch_head(&self, name: &str) -> Result<String, Error> {
        self.commit(&format!("/commits/refs/heads/{name}"))
    }

    fn commit(&self, rest: &str) -> Result<String, Error> {
        let url = self.api_url(rest);
        let resp = self.client.get_with(&url, &super::API_JSON)?;
        commit_sha(&resp.body, &url)
    }
}

/// The `sha` of a commits-API answer from `url`, which must be a 40-hex
/// commit id: it goes into the lock and into raw and archive URLs.
fn commit_sha(body: &[u8], url: &str) -> Result<String, Error> {
    let malformed = |detail: String| malformed("a commit", url, detail);
    let commit: ApiCommit = serde_json::from_slice(body).map_err(|e| malformed(e.to_string()))?;
    if commit.sha.len() != 40 || !commit.sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(malformed(format!(
            "`sha` = \"{}\" is not a 40-hex commit id",
            commit.sha
        )));
    }
    Ok(commit.sha)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A branch's head and a tag's commit are read by one function: a `sha` that is no
    /// commit id is a malformed answer for both.
    #[test]
    fn a_commit_answer_must_name_a_40_hex_sha() {
        let sha = "d8c80cc3a1b2c3d4e5f60718293a4b5c6d7e8f90";
        let body = format!("{{\"sha\": \"{sha}\"}}");
        assert_eq!(commit_sha(body.as_bytes(), "u").unwrap(), sha);
        for bad in [r#"{"sha": "main"}"#, r#"{"sha": null}"#, "[]"] {
            let err = commit_sha(bad.as_bytes(), "https://api/x").unwrap_err();
            assert!(
                matches!(err, Error::Answer(crate::error::Error::Malformed { .. })),
                "{bad}: {err:?}"
            );
        }
    }
}
