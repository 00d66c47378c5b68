//! A tag's or a commit's source archive, `{server}/{o}/{r}/archive/{ref}.tar.gz`.
//!
//! A tag is asked for as `refs/tags/<tag>` so that no branch of the same
//! name can shadow it. The archive is read by the caller's unpacker here, so
//! a cached archive that does not unpack is fetched again (issue 13).

use super::{Error, Repo, Rev};

impl Repo<'_> {
    /// The archive at `rev` (a tag, or a full commit sha) read with
    /// `unpack`, its bytes, and the URL it came from.
    pub fn archive<T>(
        &self,
        rev: &str,
        unpack: impl Fn(&[u8]) -> Result<T, String>,
    ) -> Result<(T, Vec<u8>, String), Error> {
        let at = match Rev::of(rev) {
            Rev::Tag(tag) => format!("refs/tags/{tag}"),
            Rev::Commit(sha) => sha.to_owned(),
        };
        let url = format!("{}/{}/archive/{at}.tar.gz", self.env.server_url, self.slug);
        let (tree, resp) = self.get_usable(&url, &[], "a usable tar.gz archive", unpack)?;
        Ok((tree, resp.body, url))
    }
}
