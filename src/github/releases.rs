//! `GET /repos/{o}/{r}/releases`, every page; one release by its tag with
//! its assets (`GET /repos/{o}/{r}/releases/tags/{tag}`), and their
//! downloads.
//!
//! The release's `tag_name` is its version; `name` is free text that may be
//! null or renamed and is never read.

use serde::Deserialize;

use super::{Error, Repo};
use crate::env::Env;

/// One release as the API lists it.
#[derive(Debug, Clone, Deserialize)]
pub struct Release {
    /// Its tag, exactly as the repository spells it.
    pub tag_name: String,
    /// A draft is not published: nobody can download it.
    #[serde(default)]
    pub draft: bool,
    /// Marked as a prerelease on the release page.
    #[serde(default)]
    pub prerelease: bool,
}

/// The most bytes one release asset may have: one vendored into a package
/// is a manifest or a checksums list, not a binary distribution.
const MAX_ASSET: u64 = 100 * 1024 * 1024;

/// One asset of a release, as `releases/tags/{tag}` lists it.
#[derive(Debug, Clone, Deserialize)]
pub struct Asset {
    /// The file name it is published under.
    pub name: String,
    /// Where it downloads from: GitHub, which redirects to its storage
    /// host (followed under the transport's rules; the token stays on
    /// GitHub's origins).
    pub browser_download_url: String,
}

/// `releases/tags/{tag}`, the part read here.
#[derive(Deserialize)]
struct TaggedRelease {
    #[serde(default)]
    assets: Vec<Asset>,
}

/// The URL of the asset `name` of release `tag` of `repo`, on
/// `GITHUB_SERVER_URL`.
pub fn release_asset_url(env: &Env, repo: &str, tag: &str, name: &str) -> String {
    format!(
        "{}/{repo}/releases/download/{}/{}",
        env.server_url,
        crate::net::encode_path(tag),
        crate::net::encode_segment(name)
    )
}

impl Repo<'_> {
    /// Every release, drafts included, newest first as the API orders them,
    /// following the `Link` header's `next` page.
    pub fn releases(&self) -> Result<Vec<Release>, Error> {
        self.get_pages(
            &self.api_url("/releases?per_page=100"),
            "a list of releases",
        )
    }

    /// The assets of the release at `tag`.
    pub fn release_assets(&self, tag: &str) -> Result<Vec<Asset>, Error> {
        let url = self.api_url(&format!("/releases/tags/{tag}"));
        let (release, _): (TaggedRelease, _) = self.get_json(&url, "a release")?;
        Ok(release.assets)
    }

    /// The bytes of `asset`, at most 100 MiB of them.
    pub fn download(&self, asset: &Asset) -> Result<Vec<u8>, Error> {
        let resp = self
            .client
            .get_bounded(&asset.browser_download_url, &[], MAX_ASSET)?;
        Ok(resp.body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_assets_are_on_the_server() {
        let mut env = Env::from_process();
        env.server_url = "https://server.example".into();
        assert_eq!(
            release_asset_url(&env, "o/r", "v1.9.1", "a.tgz.sha256"),
            "https://server.example/o/r/releases/download/v1.9.1/a.tgz.sha256"
        );
    }
}
