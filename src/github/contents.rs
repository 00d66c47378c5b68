//! Raw files on `REVENDOR_RAW_URL`, at a tag or at a commit: what an
//! upstream reads one file at a time, and what a check reads of another
//! repository (a marker resolver, a release sidecar).

use super::Repo;
use crate::env::Env;
use crate::error;
use crate::net::{Client, encode_path};

/// The revision a raw file is read at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rev<'a> {
    /// A tag, addressed as `refs/tags/<tag>` so that no branch of the same
    /// name can shadow it.
    Tag(&'a str),
    /// A commit, full or abbreviated.
    Commit(&'a str),
}

impl<'a> Rev<'a> {
    /// A full commit sha as a commit, anything else as a tag.
    pub fn of(rev: &'a str) -> Rev<'a> {
        if crate::config::is_commit(rev) {
            Rev::Commit(rev)
        } else {
            Rev::Tag(rev)
        }
    }
}

/// The URL of `path` in `repo` (`owner/name`) at `rev`, on `REVENDOR_RAW_URL`.
/// Each segment of `path` and of a tag is percent-encoded ([`encode_path`]): a file named
/// `a#b.yaml` is asked for as itself, not as `a` (issue 21).
pub fn raw_file_url(env: &Env, repo: &str, rev: Rev<'_>, path: &str) -> String {
    let path = encode_path(path);
    match rev {
        Rev::Tag(tag) => format!(
            "{}/{repo}/refs/tags/{}/{path}",
            env.raw_url,
            encode_path(tag)
        ),
        Rev::Commit(commit) => format!("{}/{repo}/{commit}/{path}", env.raw_url),
    }
}

/// The text at a raw-file or release-asset URL; `None` when it does not
/// exist (404), so a caller can say what that means. Conditional when
/// fetched before; bytes that are not UTF-8 are replaced, since the callers
/// read small text files and report what they cannot parse.
pub fn fetch_text(client: &Client, url: &str) -> error::Result<Option<String>> {
    match client.get(url) {
        Ok(r) => Ok(Some(String::from_utf8_lossy(&r.body).into_owned())),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(error::Error::Http(e)),
    }
}

impl Repo<'_> {
    /// The bytes of `path` at `rev` (a tag, or a full commit sha), at most
    /// `limit` of them (else [`crate::net::HttpError::TooLarge`], refused as
    /// it downloads); a 404 as [`error::Error::NotFound`] naming the file.
    pub fn raw_file(&self, rev: &str, path: &str, limit: u64) -> error::Result<Vec<u8>> {
        let url = raw_file_url(self.env, &self.slug, Rev::of(rev), path);
        match self.client.get_bounded(&url, &[], limit) {
            Ok(r) => Ok(r.body),
            Err(crate::net::HttpError::NotFound { url }) => Err(error::Error::NotFound {
                what: format!("`{path}` of {} at {rev}", self.slug),
                url,
            }),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_files_are_read_at_a_tag_or_a_commit() {
        let mut env = Env::from_process();
        env.raw_url = "https://raw.example".into();
        assert_eq!(
            raw_file_url(&env, "o/r", Rev::Tag("v1.2"), "dist/Makefile"),
            "https://raw.example/o/r/refs/tags/v1.2/dist/Makefile"
        );
        assert_eq!(
            raw_file_url(&env, "o/r", Rev::Commit("d8c80cc"), "Pkgfile"),
            "https://raw.example/o/r/d8c80cc/Pkgfile"
        );
    }
}
