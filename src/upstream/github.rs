//! A GitHub upstream: the releases API, raw files and tag archives.
//!
//! A vendored directory is listed with the git trees API (one request for
//! the whole tree of the tag, every file with its blob id) and its files
//! come as raw files, each only when the cache has no blob of that id: an
//! update downloads the files that changed and nothing of the rest of a
//! large repository. When the API says the tree is truncated (GitHub cuts
//! it past 100,000 entries or 7 MB), the tag archive is read instead, and
//! its files of the directory go into the cache by blob id.
//!
//! URLs come from [`Env`]: `GITHUB_API_URL` for the API, `REVENDOR_RAW_URL`
//! for raw files, `GITHUB_SERVER_URL` for archives and release assets, and
//! they are built here only ([`raw_file_url`], [`release_asset_url`]), so a
//! check that reads another repository's file (a marker resolver, a release
//! sidecar) asks the same way the upstream does. The release's `tag_name` is
//! the version; `name` is free text that may be null or renamed and is never
//! used.

use serde::Deserialize;

use super::cache::Cache;
use super::{Listed, Pages, Release, Source, SourceTree, archive};
use crate::config::lock::LockedUpstream;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::net::{Client, HttpError, encode_path, encode_segment, next_link};

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

/// `GET /repos/{o}/{r}/git/trees/{ref}?recursive=1`.
#[derive(Deserialize)]
struct ApiTree {
    #[serde(default)]
    truncated: bool,
    tree: Vec<ApiTreeEntry>,
}

#[derive(Deserialize)]
struct ApiTreeEntry {
    path: String,
    mode: String,
    #[serde(rename = "type")]
    kind: String,
    sha: String,
}

/// The git mode of a symlink; its blob is the link target, not a file.
const SYMLINK_MODE: &str = "120000";

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

/// The URL of the asset `name` of release `tag` of `repo`, on
/// `GITHUB_SERVER_URL`.
pub fn release_asset_url(env: &Env, repo: &str, tag: &str, name: &str) -> String {
    format!(
        "{}/{repo}/releases/download/{}/{}",
        env.server_url,
        encode_path(tag),
        encode_segment(name)
    )
}

/// The text at a raw-file or release-asset URL; `None` when it does not
/// exist (404), so a caller can say what that means. Conditional when
/// fetched before; bytes that are not UTF-8 are replaced, since the callers
/// read small text files and report what they cannot parse.
pub fn fetch_text(client: &Client, url: &str) -> Result<Option<String>> {
    match client.get(url) {
        Ok(r) => Ok(Some(String::from_utf8_lossy(&r.body).into_owned())),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(Error::Http(e)),
    }
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

    /// A 404 as [`Error::NotFound`], naming `what` of this repository;
    /// any other failure as it came.
    fn not_found(&self, e: HttpError, what: &str) -> Error {
        match e {
            HttpError::NotFound { url } => Error::NotFound {
                what: format!("{what} of GitHub repository `{}`", self.repo),
                url,
            },
            e => Error::Http(e),
        }
    }
}

impl Source for GitHub<'_> {
    fn describe(&self) -> String {
        format!("github:{}", self.repo)
    }

    /// The archive the download cache keeps for the locked tree
    /// ([`Source::tree`] puts every archive there).
    fn kept_tree(&self, locked: &LockedUpstream, cache: &Cache) -> Result<Option<SourceTree>> {
        cached_tree(cache, locked)
    }

    fn pages(&self, from: Option<&str>, to: &str, release: bool) -> Pages {
        let (server, repo) = (&self.env.server_url, &self.repo);
        Pages {
            name: repo.rsplit('/').next().unwrap_or(repo).to_owned(),
            url: Some(format!("{server}/{repo}")),
            release_notes: release.then(|| format!("{server}/{repo}/releases/tag/{to}")),
            compare: from
                .filter(|f| *f != to)
                .map(|f| format!("{server}/{repo}/compare/{f}...{to}")),
        }
    }

    fn releases(&self) -> Result<Vec<Release>> {
        let mut url = format!(
            "{}/repos/{}/releases?per_page=100",
            self.env.api_url, self.repo
        );
        let mut out = Vec::new();
        let mut read = std::collections::HashSet::new();
        for _ in 0..MAX_PAGES {
            if !read.insert(url.clone()) {
                return Err(Error::Malformed {
                    what: "a list of releases".into(),
                    url,
                    detail: "its `Link` header points back at a page already read".into(),
                });
            }
            let accept = [("Accept", "application/vnd.github+json")];
            let mut resp = self
                .client
                .get_with(&url, &accept)
                .map_err(|e| self.not_found(e, "the releases"))?;
            let parse = |body: &[u8]| serde_json::from_slice::<Vec<ApiRelease>>(body);
            if resp.not_modified && parse(&resp.body).is_err() {
                // A cached page that no longer parses is fetched again.
                resp = self
                    .client
                    .get_fresh_with(&url, &accept)
                    .map_err(|e| self.not_found(e, "the releases"))?;
            }
            let page = parse(&resp.body).map_err(|e| Error::Malformed {
                what: "a list of releases".into(),
                url: url.clone(),
                detail: e.to_string(),
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
        Err(Error::Malformed {
            what: "a list of releases".into(),
            url,
            detail: format!("it still links a next page after {MAX_PAGES} pages"),
        })
    }

    fn file(&self, tag: &str, path: &str) -> Result<Vec<u8>> {
        let url = raw_file_url(self.env, &self.repo, Rev::of(tag), path);
        match self.client.get_bounded(&url, &[], super::MAX_FILE) {
            Ok(r) => Ok(r.body),
            Err(HttpError::NotFound { url }) => Err(Error::NotFound {
                what: format!("`{path}` of {} at {tag}", self.repo),
                url,
            }),
            Err(HttpError::TooLarge { .. }) => Err(super::too_large(&self.repo, tag, path)),
            Err(e) => Err(e.into()),
        }
    }

    fn commit(&self, tag: &str) -> Result<Option<String>> {
        let url = format!("{}/repos/{}/commits/{tag}", self.env.api_url, self.repo);
        let resp = self
            .client
            .get_with(&url, &[("Accept", "application/vnd.github+json")])
            .map_err(|e| self.not_found(e, &format!("tag {tag}")))?;
        commit_sha(&resp.body, &url).map(Some)
    }

    fn list(&self, tag: &str, dir: &str, cache: &Cache) -> Result<Vec<Listed>> {
        let url = format!(
            "{}/repos/{}/git/trees/{tag}?recursive=1",
            self.env.api_url, self.repo
        );
        let accept = [("Accept", "application/vnd.github+json")];
        let what = format!("the tree of {tag}");
        let mut resp = self
            .client
            .get_with(&url, &accept)
            .map_err(|e| self.not_found(e, &what))?;
        let parse = |body: &[u8]| serde_json::from_slice::<ApiTree>(body);
        if resp.not_modified && parse(&resp.body).is_err() {
            // A cached tree that no longer parses is fetched again.
            resp = self
                .client
                .get_fresh_with(&url, &accept)
                .map_err(|e| self.not_found(e, &what))?;
        }
        let tree = parse(&resp.body).map_err(|e| Error::Malformed {
            what: "a git tree".into(),
            url: url.clone(),
            detail: e.to_string(),
        })?;
        // GitHub never lists a path that is not clean nor a blob id that is
        // not 40 hex digits: a tree that does is refused whole, not only
        // where it touches the directory (issue 13).
        let bad = tree.tree.iter().find(|e| {
            let blob = e.kind == "blob";
            !super::is_clean_path(&e.path)
                || (blob && (e.sha.len() != 40 || !e.sha.bytes().all(|b| b.is_ascii_hexdigit())))
        });
        if let Some(entry) = bad {
            return Err(Error::Malformed {
                what: "a git tree".into(),
                url,
                detail: format!(
                    "entry `{}` is not a clean relative path with a blob id",
                    entry.path.escape_debug()
                ),
            });
        }
        let listed = if tree.truncated {
            let files = self.tree(tag)?.files;
            super::listed_from(&files, dir, cache)
        } else {
            let mut listed = Vec::new();
            for entry in tree.tree {
                let file = entry.kind == "blob" && entry.mode != SYMLINK_MODE;
                if !file || !entry.path.starts_with(dir) {
                    continue;
                }
                listed.push(Listed {
                    path: entry.path,
                    blob: entry.sha,
                });
            }
            listed.sort_by(|a, b| a.path.cmp(&b.path));
            listed
        };
        if listed.is_empty() {
            return Err(Error::NotFound {
                what: format!(
                    "directory `{dir}` of GitHub repository `{}` at {tag}",
                    self.repo
                ),
                url,
            });
        }
        Ok(listed)
    }

    fn tree(&self, tag: &str) -> Result<SourceTree> {
        let at = match Rev::of(tag) {
            Rev::Tag(tag) => format!("refs/tags/{tag}"),
            Rev::Commit(sha) => sha.to_owned(),
        };
        let url = format!("{}/{}/archive/{at}.tar.gz", self.env.server_url, self.repo);
        let what = format!("the archive of {tag}");
        let mut resp = self
            .client
            .get(&url)
            .map_err(|e| self.not_found(e, &what))?;
        let mut tree = archive::unpack_tar_gz(&resp.body, true);
        if resp.not_modified && tree.is_err() {
            // A cached archive that does not unpack is fetched again, so it
            // heals instead of failing every run (issue 13).
            resp = self
                .client
                .get_fresh_with(&url, &[])
                .map_err(|e| self.not_found(e, &what))?;
            tree = archive::unpack_tar_gz(&resp.body, true);
        }
        let tree = tree.map_err(|detail| Error::Malformed {
            what: "a usable tar.gz archive".into(),
            url,
            detail,
        })?;
        // The archive is kept by its sha256 and found by the tree hash the
        // lock records: an offline `check` reads the locked tree from there
        // (`upstream::locked_tree`).
        let cache = super::cache::Cache::new(&self.env.cache_dir);
        let archive_sha256 = cache.put(&resp.body);
        cache.put_tree(&tree.tree_sha256, &archive_sha256);
        Ok(tree)
    }

    fn branch(&self, name: &str) -> Result<String> {
        let url = format!(
            "{}/repos/{}/commits/refs/heads/{name}",
            self.env.api_url, self.repo
        );
        let resp = self
            .client
            .get_with(&url, &[("Accept", "application/vnd.github+json")])
            .map_err(|e| self.not_found(e, &format!("branch {name}")))?;
        commit_sha(&resp.body, &url)
    }
}

/// The locked tree from an archive in the download cache: found by the
/// lock's tree hash and kept only if it unpacks to that tree, or, for a lock
/// written before the tree hash, by the archive's sha256 it recorded.
fn cached_tree(cache: &Cache, up: &LockedUpstream) -> Result<Option<SourceTree>> {
    let found = match (&up.source_tree_sha256, &up.source_sha256) {
        (Some(tree), _) => cache.tree_archive(tree),
        (None, Some(sha)) => cache.get(sha).map(|bytes| (sha.clone(), bytes)),
        (None, None) => None,
    };
    let Some((sha, bytes)) = found else {
        return Ok(None);
    };
    let tree = archive::unpack_tar_gz(&bytes, true).map_err(|detail| Error::Malformed {
        what: "a usable tar.gz archive".into(),
        url: format!("the download cache entry {sha}"),
        detail,
    })?;
    let locked = up
        .source_tree_sha256
        .as_ref()
        .is_none_or(|expected| *expected == tree.tree_sha256);
    Ok(locked.then_some(tree))
}

/// The `sha` of a commits-API answer from `url`, which must be a 40-hex
/// commit id: it goes into the lock and into raw and archive URLs.
fn commit_sha(body: &[u8], url: &str) -> Result<String> {
    let malformed = |detail: String| Error::Malformed {
        what: "a commit".into(),
        url: url.to_owned(),
        detail,
    };
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

    fn env() -> Env {
        let mut env = Env::from_process();
        env.raw_url = "https://raw.example".into();
        env.server_url = "https://server.example".into();
        env
    }

    /// A GitHub-style archive of one file, `go.mod`, under `r-1.0/`.
    fn archive(go_mod: &[u8]) -> Vec<u8> {
        let mut tar = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_ustar();
        h.set_mode(0o664);
        h.set_size(go_mod.len() as u64);
        tar.append_data(&mut h, "r-1.0/go.mod", go_mod).unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &tar.into_inner().unwrap()).unwrap();
        gz.finish().unwrap()
    }

    fn lock(tree: Option<&str>, archive: Option<&str>) -> LockedUpstream {
        LockedUpstream {
            source_tree_sha256: tree.map(str::to_owned),
            source_sha256: archive.map(str::to_owned),
            ..LockedUpstream::default()
        }
    }

    #[test]
    fn the_cached_tree_is_found_by_the_locked_tree_hash_and_only_if_it_is_that_tree() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let (good, other) = (archive(b"module good\n"), archive(b"module other\n"));
        let good_tree = archive::unpack_tar_gz(&good, true).unwrap().tree_sha256;
        let good_sha = cache.put(&good);
        assert!(
            cached_tree(&cache, &lock(Some(&good_tree), None))
                .unwrap()
                .is_none()
        );

        cache.put_tree(&good_tree, &good_sha);
        let tree = cached_tree(&cache, &lock(Some(&good_tree), None))
            .unwrap()
            .unwrap();
        assert_eq!(tree.files["go.mod"], b"module good\n");

        // An entry naming another archive is not the locked tree.
        cache.put_tree(&good_tree, &cache.put(&other));
        assert!(
            cached_tree(&cache, &lock(Some(&good_tree), None))
                .unwrap()
                .is_none()
        );

        // A lock from before the tree hash finds the archive by its sha256.
        let old = cached_tree(&cache, &lock(None, Some(&good_sha)))
            .unwrap()
            .unwrap();
        assert_eq!(old.tree_sha256, good_tree);
    }

    /// A branch's head and a tag's commit are read by one function: a `sha` that is no
    /// commit id is a malformed answer for both.
    #[test]
    fn a_commit_answer_must_name_a_40_hex_sha() {
        let sha = "d8c80cc3a1b2c3d4e5f60718293a4b5c6d7e8f90";
        let body = format!("{{\"sha\": \"{sha}\"}}");
        assert_eq!(commit_sha(body.as_bytes(), "u").unwrap(), sha);
        for bad in [r#"{"sha": "main"}"#, r#"{"sha": null}"#, "[]"] {
            let err = commit_sha(bad.as_bytes(), "https://api/x").unwrap_err();
            assert!(matches!(err, Error::Malformed { .. }), "{bad}: {err}");
        }
    }

    #[test]
    fn raw_files_are_read_at_a_tag_or_a_commit() {
        let env = env();
        assert_eq!(
            raw_file_url(&env, "o/r", Rev::Tag("v1.2"), "dist/Makefile"),
            "https://raw.example/o/r/refs/tags/v1.2/dist/Makefile"
        );
        assert_eq!(
            raw_file_url(&env, "o/r", Rev::Commit("d8c80cc"), "Pkgfile"),
            "https://raw.example/o/r/d8c80cc/Pkgfile"
        );
    }

    #[test]
    fn release_assets_are_on_the_server() {
        assert_eq!(
            release_asset_url(&env(), "o/r", "v1.9.1", "a.tgz.sha256"),
            "https://server.example/o/r/releases/download/v1.9.1/a.tgz.sha256"
        );
    }
}
