//! A GitHub upstream: its releases, raw files, git trees and tag archives,
//! asked through the one GitHub client ([`crate::github::Repo`]).
//!
//! A vendored directory is listed with the git trees API (one request for
//! the whole tree of the tag, every file with its blob id) and its files
//! come as raw files, each only when the cache has no blob of that id: an
//! update downloads the files that changed and nothing of the rest of a
//! large repository. When the API says the tree is truncated (GitHub cuts
//! it past 100,000 entries or 7 MB), the tag archive is read instead, and
//! its files of the directory go into the cache by blob id.

use super::cache::Cache;
use super::{Listed, Pages, Release, Source, SourceTree, archive};
use crate::config::lock::LockedUpstream;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::github::{self, SYMLINK_MODE};
use crate::net::Client;

/// A GitHub repository as an upstream.
#[derive(Debug)]
pub struct GitHub<'a> {
    repo: github::Repo<'a>,
    env: &'a Env,
}

impl<'a> GitHub<'a> {
    /// The repository `owner/name` read through `env`'s URLs.
    pub fn new(repo: &str, env: &'a Env, client: &'a Client) -> GitHub<'a> {
        GitHub {
            repo: github::Repo::new(repo, env, client),
            env,
        }
    }
}

impl Source for GitHub<'_> {
    fn describe(&self) -> String {
        format!("github:{}", self.repo.slug())
    }

    /// The archive the download cache keeps for the locked tree
    /// ([`Source::tree`] puts every archive there).
    fn kept_tree(&self, locked: &LockedUpstream, cache: &Cache) -> Result<Option<SourceTree>> {
        cached_tree(cache, locked)
    }

    fn pages(&self, from: Option<&str>, to: &str, release: bool) -> Pages {
        let (server, repo) = (&self.env.server_url, self.repo.slug());
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
        let releases = self
            .repo
            .releases()
            .map_err(|e| self.repo.not_found(e, "the releases"))?;
        let published = releases.into_iter().filter(|r| !r.draft);
        Ok(published
            .map(|r| Release {
                tag: r.tag_name,
                prerelease: r.prerelease,
            })
            .collect())
    }

    fn file(&self, tag: &str, path: &str) -> Result<Vec<u8>> {
        match self.repo.raw_file(tag, path, super::MAX_FILE) {
            Err(Error::Http(crate::net::HttpError::TooLarge { .. })) => {
                Err(super::too_large(&self.describe(), tag, path))
            }
            other => other,
        }
    }

    fn commit(&self, tag: &str) -> Result<Option<String>> {
        let commit = self.repo.tag_commit(tag);
        commit
            .map(Some)
            .map_err(|e| self.repo.not_found(e, &format!("tag {tag}")))
    }

    fn list(&self, tag: &str, dir: &str, cache: &Cache) -> Result<Vec<Listed>> {
        let (tree, url) = self
            .repo
            .tree(tag)
            .map_err(|e| self.repo.not_found(e, &format!("the tree of {tag}")))?;
        refuse_unclean(&tree, &url)?;
        let listed = if tree.truncated {
            let files = self.tree(tag)?.files;
            super::listed_from(&files, dir, cache)
        } else {
            listed_in(tree, dir)
        };
        if listed.is_empty() {
            return Err(Error::NotFound {
                what: format!(
                    "directory `{dir}` of GitHub repository `{}` at {tag}",
                    self.repo.slug()
                ),
                url,
            });
        }
        Ok(listed)
    }

    fn tree(&self, tag: &str) -> Result<SourceTree> {
        let unpack = |bytes: &[u8]| archive::unpack_tar_gz(bytes, true);
        let (tree, bytes, _) = self
            .repo
            .archive(tag, unpack)
            .map_err(|e| self.repo.not_found(e, &format!("the archive of {tag}")))?;
        // The archive is kept by its sha256 and found by the tree hash the
        // lock records: an offline `check` reads the locked tree from there
        // (`upstream::locked_tree`).
        let cache = super::cache::Cache::new(&self.env.cache_dir);
        let archive_sha256 = cache.put(&bytes);
        cache.put_tree(&tree.tree_sha256, &archive_sha256);
        Ok(tree)
    }

    fn branch(&self, name: &str) -> Result<String> {
        self.repo
            .branch_head(name)
            .map_err(|e| self.repo.not_found(e, &format!("branch {name}")))
    }
}

/// GitHub never lists a path that is not clean nor a blob id that is not
/// 40 hex digits: a tree that does is refused whole, not only where it
/// touches the directory (issue 13).
fn refuse_unclean(tree: &github::Tree, url: &str) -> Result<()> {
    let bad = tree.tree.iter().find(|e| {
        let blob = e.kind == "blob";
        !super::is_clean_path(&e.path)
            || (blob && (e.sha.len() != 40 || !e.sha.bytes().all(|b| b.is_ascii_hexdigit())))
    });
    match bad {
        Some(entry) => Err(Error::Malformed {
            what: "a git tree".into(),
            url: url.to_owned(),
            detail: format!(
                "entry `{}` is not a clean relative path with a blob id",
                entry.path.escape_debug()
            ),
        }),
        None => Ok(()),
    }
}

/// The regular files of `tree` under `dir`, by path; links are left out.
fn listed_in(tree: github::Tree, dir: &str) -> Vec<Listed> {
    let mut listed: Vec<Listed> = tree
        .tree
        .into_iter()
        .filter(|e| e.kind == "blob" && e.mode != SYMLINK_MODE && e.path.starts_with(dir))
        .map(|e| Listed {
            path: e.path,
            blob: e.sha,
        })
        .collect();
    listed.sort_by(|a, b| a.path.cmp(&b.path));
    listed
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
