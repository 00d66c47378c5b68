//! A git upstream, read through git2.
//!
//! Tags and branch heads are listed from the remote directly (`ls-remote`);
//! files are read from a bare mirror kept in the cache (`<cache>/git/<sha256
//! of url>`), into which only the tags (or commits) asked for are fetched.

use std::path::{Path, PathBuf};

use git2::{Direction, ObjectType, Repository, TreeWalkMode, TreeWalkResult};

use super::{Release, Source, SourceTree};
use crate::config::is_commit;
use crate::error::{Error, Result};
use crate::image::Digest;

/// A git repository as an upstream.
#[derive(Debug)]
pub struct Git {
    url: String,
    mirror: PathBuf,
    offline: bool,
}

impl Git {
    /// The repository at `url`, mirrored under `cache_dir`.
    pub fn new(url: &str, cache_dir: &Path, offline: bool) -> Git {
        let key = Digest::of(url.as_bytes()).hex().to_owned();
        Git {
            url: url.to_string(),
            mirror: cache_dir.join("git").join(key),
            offline,
        }
    }

    fn err(&self, e: impl std::fmt::Display) -> Error {
        Error::Git {
            url: crate::net::redact(&self.url),
            message: e.to_string(),
        }
    }

    fn offline_guard(&self) -> Result<()> {
        if self.offline {
            return Err(Error::usage(
                format!(
                    "reading git upstream `{}` needs the network",
                    crate::net::redact(&self.url)
                ),
                "run without --offline",
            ));
        }
        Ok(())
    }

    fn repo(&self) -> Result<Repository> {
        match Repository::open_bare(&self.mirror) {
            Ok(r) => Ok(r),
            Err(_) => {
                std::fs::create_dir_all(&self.mirror)
                    .map_err(crate::paths::io("create", &self.mirror))?;
                Repository::init_bare(&self.mirror).map_err(|e| self.err(e))
            }
        }
    }

    /// The mirror with `rev` present: `refs/tags/<tag>`, or the commit
    /// itself (fetched by its sha, which a branch's old head needs).
    fn with_tag(&self, rev: &str) -> Result<Repository> {
        let repo = self.repo()?;
        let (present, spec) = if is_commit(rev) {
            let present = git2::Oid::from_str(rev).is_ok_and(|oid| repo.find_commit(oid).is_ok());
            (present, rev.to_owned())
        } else {
            let refname = format!("refs/tags/{rev}");
            (
                repo.find_reference(&refname).is_ok(),
                format!("+{refname}:{refname}"),
            )
        };
        if !present {
            self.offline_guard()?;
            let mut remote = repo.remote_anonymous(&self.url).map_err(|e| self.err(e))?;
            remote
                .fetch(&[spec], None, None)
                .map_err(|e| self.err(format!("cannot fetch {rev}: {}", e.message())))?;
        }
        Ok(repo)
    }

    fn object_at<'r>(&self, repo: &'r Repository, rev: &str) -> Result<git2::Object<'r>> {
        let spec = if is_commit(rev) {
            rev.to_owned()
        } else {
            format!("refs/tags/{rev}")
        };
        repo.revparse_single(&spec)
            .map_err(|e| self.err(format!("no {rev}: {}", e.message())))
    }

    fn tree_at<'r>(&self, repo: &'r Repository, rev: &str) -> Result<git2::Tree<'r>> {
        self.object_at(repo, rev)?
            .peel_to_tree()
            .map_err(|e| self.err(e))
    }

    /// Every ref the remote advertises, with the commit it names.
    fn remote_heads(&self) -> Result<Vec<(String, String)>> {
        self.offline_guard()?;
        let repo = self.repo()?;
        let mut remote = repo.remote_anonymous(&self.url).map_err(|e| self.err(e))?;
        let conn = remote
            .connect_auth(Direction::Fetch, None, None)
            .map_err(|e| self.err(e.message().to_string()))?;
        let heads = conn.list().map_err(|e| self.err(e))?;
        Ok(heads
            .iter()
            .map(|h| (h.name().to_owned(), h.oid().to_string()))
            .collect())
    }
}

impl Source for Git {
    fn releases(&self) -> Result<Vec<Release>> {
        let heads = self.remote_heads()?;
        let mut out: Vec<Release> = heads
            .iter()
            .filter_map(|(name, _)| name.strip_prefix("refs/tags/"))
            .filter(|t| !t.ends_with("^{}"))
            .map(|t| Release {
                tag: t.to_string(),
                prerelease: false,
            })
            .collect();
        out.dedup();
        Ok(out)
    }

    fn file(&self, tag: &str, path: &str) -> Result<Vec<u8>> {
        let repo = self.with_tag(tag)?;
        let tree = self.tree_at(&repo, tag)?;
        let entry = tree
            .get_path(Path::new(path))
            .map_err(|_| Error::NotFound {
                what: format!("`{path}` at {tag}"),
                url: crate::net::redact(&self.url),
            })?;
        let blob = entry
            .to_object(&repo)
            .and_then(|o| o.peel_to_blob())
            .map_err(|e| self.err(format!("`{path}` at {tag} is not a file: {}", e.message())))?;
        Ok(blob.content().to_vec())
    }

    fn commit(&self, tag: &str) -> Result<Option<String>> {
        let repo = self.with_tag(tag)?;
        let commit = self
            .object_at(&repo, tag)?
            .peel_to_commit()
            .map_err(|e| self.err(e))?;
        Ok(Some(commit.id().to_string()))
    }

    fn branch(&self, name: &str) -> Result<String> {
        let wanted = format!("refs/heads/{name}");
        self.remote_heads()?
            .into_iter()
            .find(|(r, _)| *r == wanted)
            .map(|(_, oid)| oid)
            .ok_or_else(|| Error::NotFound {
                what: format!("branch `{name}`"),
                url: crate::net::redact(&self.url),
            })
    }

    fn tree(&self, tag: &str) -> Result<SourceTree> {
        let repo = self.with_tag(tag)?;
        let tree = self.tree_at(&repo, tag)?;
        let mut files = std::collections::BTreeMap::new();
        let mut failure = None;
        tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() == Some(ObjectType::Blob) && entry.filemode() != 0o120000 {
                match entry.to_object(&repo).and_then(|o| o.peel_to_blob()) {
                    Ok(blob) => {
                        let name = entry.name().unwrap_or_default();
                        files.insert(format!("{dir}{name}"), blob.content().to_vec());
                    }
                    Err(e) => {
                        failure = Some(e);
                        return TreeWalkResult::Abort;
                    }
                }
            }
            TreeWalkResult::Ok
        })
        .map_err(|e| self.err(e))?;
        if let Some(e) = failure {
            return Err(self.err(e));
        }
        Ok(SourceTree {
            files,
            archive_sha256: None,
        })
    }
}
