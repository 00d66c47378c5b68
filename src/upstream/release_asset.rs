//! A GitHub upstream whose `[[vendor]]`s take release assets (`asset =`):
//! the repository's [`Source`] with those names served from the release.
//!
//! 1. [`ReleaseAssets::file`] at a tag reads the release's `assets` list
//!    through the GitHub client ([`github::Repo::release_assets`]) and finds
//!    the asset by name; a name vendor.toml does not list as an asset is the
//!    repository's file, as for any GitHub upstream.
//! 2. The asset is downloaded from its `browser_download_url`: GitHub
//!    answers with a redirect to its storage host, which the transport
//!    follows under its rules (never from https to http, at most ten hops);
//!    the token goes only to the configured GitHub origins, so never to the
//!    storage host.
//! 3. With `checksums`, that asset of the same release (sha256sum format,
//!    [`listed_sha256`]) must list the asset, and the bytes must match it
//!    before anything is written. The lock records every vendored file's
//!    sha256 whatever the release publishes, so a release whose asset is
//!    replaced later is refused at the same version too.
//!
//! Releases are chosen as for any GitHub upstream (drafts never listed;
//! prereleases only with `allow-prerelease`): an asset exists only on a
//! release, so an upstream that follows a branch or a commit has none.

use super::cache::Cache;
use super::{Artifact, Listed, Newer, Pages, Release, Source, SourceTree};
use crate::config::lock::LockedUpstream;
use crate::config::{Asset, Upstream, is_commit};
use crate::env::Env;
use crate::error::{Error, Result};
use crate::github::{self, Asset as Published};
use crate::image::Digest;
use crate::net::Client;

/// A GitHub repository's [`Source`] that serves `assets` by name from the
/// release at a tag.
pub struct ReleaseAssets<'a> {
    repo: Box<dyn Source + 'a>,
    github: github::Repo<'a>,
    assets: Vec<Asset>,
    env: &'a Env,
}

impl<'a> ReleaseAssets<'a> {
    /// `repo` (the GitHub repository `name`, `owner/name`) with `assets`
    /// served from its releases.
    pub fn new(
        repo: Box<dyn Source + 'a>,
        name: &str,
        assets: Vec<Asset>,
        env: &'a Env,
        client: &'a Client,
    ) -> ReleaseAssets<'a> {
        ReleaseAssets {
            repo,
            github: github::Repo::new(name, env, client),
            assets,
            env,
        }
    }

    /// The asset `asset` of the release at `tag`, verified against its
    /// checksums asset when it names one.
    fn asset(&self, tag: &str, asset: &Asset) -> Result<Vec<u8>> {
        if is_commit(tag) {
            return Err(Error::usage(
                format!(
                    "`{}` is a release asset, and {tag} is a commit, not a release of github:{}",
                    asset.name,
                    self.github.slug()
                ),
                "vendor release assets from an upstream that follows release tags (`version`, `track`), not `ref`",
            ));
        }
        let listed = self
            .github
            .release_assets(tag)
            .map_err(|e| self.github.not_found(e, &format!("release {tag}")))?;
        let name = asset.name_at(tag);
        let bytes = self.download(tag, &listed, &name)?;
        if let Some(checksums) = asset.checksums_at(tag) {
            let text = self.download(tag, &listed, &checksums)?;
            let url = url_of(&listed, &checksums);
            let expected =
                listed_sha256(&String::from_utf8_lossy(&text), &name).map_err(|detail| {
                    Error::Malformed {
                        what: format!("the checksums asset `{checksums}`"),
                        url: url.clone(),
                        detail,
                    }
                })?;
            let Some(expected) = expected else {
                return Err(Error::Malformed {
                    what: format!("the checksums asset `{checksums}`"),
                    url,
                    detail: format!("it lists no sha256 for `{name}`"),
                });
            };
            let actual = Digest::of(&bytes).hex().to_owned();
            if actual != expected {
                return Err(Error::Checksum {
                    digest: "sha256",
                    what: format!("release asset `{name}` at {tag} (as `{checksums}` lists it)"),
                    expected,
                    actual,
                });
            }
        }
        Ok(bytes)
    }

    /// The asset `name` of `listed` (the release at `tag`), downloaded.
    fn download(&self, tag: &str, listed: &[Published], name: &str) -> Result<Vec<u8>> {
        let Some(asset) = listed.iter().find(|a| a.name == name) else {
            return Err(Error::NotFound {
                what: format!(
                    "release asset `{name}` of release {tag} of GitHub repository `{}` (it has {})",
                    self.github.slug(),
                    names(listed)
                ),
                url: format!(
                    "{}/{}/releases/tag/{tag}",
                    self.env.server_url,
                    self.github.slug()
                ),
            });
        };
        self.github.download(asset).map_err(|e| {
            self.github
                .not_found(e, &format!("release asset `{name}` at {tag}"))
        })
    }
}

/// The download URL `listed` gives for `name` (empty when not listed).
fn url_of(listed: &[Published], name: &str) -> String {
    listed
        .iter()
        .find(|a| a.name == name)
        .map(|a| a.browser_download_url.clone())
        .unwrap_or_default()
}

/// The names of `listed`, for a message: "`a`, `b`", or "no assets".
fn names(listed: &[Published]) -> String {
    if listed.is_empty() {
        return "no assets".into();
    }
    let names: Vec<String> = listed.iter().map(|a| format!("`{}`", a.name)).collect();
    names.join(", ")
}

/// The sha256 a sha256sum-format list gives `name`: lines `<64 hex>  <name>`
/// (or `<hex> *<name>` for binary mode); blank lines and `#` comments are
/// skipped. `None` when `name` is not listed; an error names the first line
/// that is not such a line, or a name listed twice with two sums.
pub fn listed_sha256(text: &str, name: &str) -> std::result::Result<Option<String>, String> {
    let mut found: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let parsed = line.split_once(' ').and_then(|(hex, rest)| {
            let file = rest.strip_prefix([' ', '*'])?;
            let hex_ok = hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit());
            (hex_ok && !file.is_empty()).then_some((hex, file))
        });
        let Some((hex, file)) = parsed else {
            return Err(format!(
                "line {} is not `<sha256>  <name>` (sha256sum's format)",
                i + 1
            ));
        };
        let file = file.strip_prefix("./").unwrap_or(file);
        if file != name {
            continue;
        }
        let hex = hex.to_ascii_lowercase();
        match &found {
            Some(other) if *other != hex => {
                return Err(format!("`{name}` is listed twice with two sha256s"));
            }
            _ => found = Some(hex),
        }
    }
    Ok(found)
}

impl Source for ReleaseAssets<'_> {
    fn describe(&self) -> String {
        self.repo.describe()
    }

    fn releases(&self) -> Result<Vec<Release>> {
        self.repo.releases()
    }

    fn branch(&self, name: &str) -> Result<String> {
        self.repo.branch(name)
    }

    fn commit(&self, rev: &str) -> Result<Option<String>> {
        self.repo.commit(rev)
    }

    fn newer(&self, up: &Upstream, locked: &LockedUpstream) -> Result<Newer> {
        self.repo.newer(up, locked)
    }

    /// A name vendor.toml lists as an asset comes from the release; any
    /// other path from the repository.
    fn file(&self, rev: &str, path: &str) -> Result<Vec<u8>> {
        match self.assets.iter().find(|a| a.name == path) {
            Some(asset) => self.asset(rev, asset),
            None => self.repo.file(rev, path),
        }
    }

    fn list(&self, rev: &str, dir: &str, cache: &Cache) -> Result<Vec<Listed>> {
        self.repo.list(rev, dir, cache)
    }

    fn tree(&self, rev: &str) -> Result<SourceTree> {
        self.repo.tree(rev)
    }

    fn kept_tree(&self, locked: &LockedUpstream, cache: &Cache) -> Result<Option<SourceTree>> {
        self.repo.kept_tree(locked, cache)
    }

    fn pages(&self, from: Option<&str>, to: &str, release: bool) -> Pages {
        self.repo.pages(from, to, release)
    }

    fn artifact(&self, rev: &str) -> Result<Option<Artifact>> {
        self.repo.artifact(rev)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "a3f1c0b6a7d9e2f4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8";
    const B: &str = "0000000000000000000000000000000000000000000000000000000000000001";

    #[test]
    fn a_sha256sum_list_gives_the_named_file_its_sum() {
        let text = format!("{B}  other.yaml\n\n# comment\n{A} *cdi-operator.yaml\r\n");
        assert_eq!(
            listed_sha256(&text, "cdi-operator.yaml").unwrap(),
            Some(A.to_owned())
        );
        assert_eq!(listed_sha256(&text, "missing.yaml").unwrap(), None);
        let dotted = format!("{}  ./x.yaml\n", A.to_uppercase());
        assert_eq!(
            listed_sha256(&dotted, "x.yaml").unwrap(),
            Some(A.to_owned())
        );
    }

    #[test]
    fn a_line_that_is_not_sha256sum_format_is_named() {
        let text = format!("{A}  a\nmd5 1234 b\n");
        assert_eq!(
            listed_sha256(&text, "a").unwrap_err(),
            "line 2 is not `<sha256>  <name>` (sha256sum's format)"
        );
        let short = "abc  a\n";
        assert!(listed_sha256(short, "a").is_err());
        let twice = format!("{A}  a\n{B}  a\n");
        assert!(listed_sha256(&twice, "a").unwrap_err().contains("twice"));
    }
}
