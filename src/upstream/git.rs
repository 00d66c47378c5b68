//! A git upstream, read through git2; over http(s), its requests go
//! through the one HTTP transport (`git_http`).
//!
//! Tags and branch heads are listed from the remote directly (`ls-remote`);
//! files are read from a bare mirror kept in the cache (`<cache>/git/<sha256
//! of url>`), into which only the tags (or commits) asked for are fetched. A
//! vendored directory is listed from the mirror's tree at the rev, each file
//! with its blob id, so nothing but the rev is fetched for it.

use std::cell::{OnceCell, RefCell};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use git2::{Direction, ObjectType, Repository, TreeWalkMode, TreeWalkResult};

use super::cache::Cache;
use super::tree_hash::{Mode, TreeHasher};
use super::{Listed, Pages, Release, Source, SourceTree, git_http};
use crate::config::is_commit;
use crate::config::lock::LockedUpstream;
use crate::error::{Error, Result};
use crate::image::Digest;
use crate::net::{Client, Transport};

/// The git file mode of a symlink, which is left out as archives leave it.
const SYMLINK_MODE: i32 = 0o120000;

/// A git repository as an upstream.
pub struct Git {
    url: String,
    mirror: PathBuf,
    transport: Arc<Transport>,
    offline: bool,
    /// The mirror, opened once a run: a directory of 10,000 files is read
    /// file by file, and opening it for each was most of the reading
    /// (issue 23).
    repo: OnceCell<Repository>,
    /// The revs the mirror is known to hold, so that each file read does
    /// not look its rev up again.
    held: RefCell<BTreeSet<String>>,
}

impl std::fmt::Debug for Git {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Git")
            .field("url", &crate::net::redact(&self.url))
            .field("offline", &self.offline)
            .finish_non_exhaustive()
    }
}

impl Git {
    /// The repository at `url`, mirrored under `cache_dir`, fetched over
    /// http(s) through `client`'s transport.
    pub fn new(url: &str, cache_dir: &Path, client: &Client) -> Git {
        let key = Digest::of(url.as_bytes()).hex().to_owned();
        Git {
            url: url.to_string(),
            mirror: cache_dir.join("git").join(key),
            transport: client.transport(),
            offline: client.offline(),
            repo: OnceCell::new(),
            held: RefCell::default(),
        }
    }

    /// Runs a libgit2 call that may reach the remote: over http(s) through
    /// the transport, its HTTP failure kept as the transport's error (a
    /// timeout is `unreachable`, naming the URL); any other failure worded
    /// by `what` and libgit2.
    fn remote_call<T>(
        &self,
        what: &str,
        call: impl FnOnce() -> std::result::Result<T, git2::Error>,
    ) -> Result<T> {
        git_http::fetching(Arc::clone(&self.transport), call).map_err(|failure| match failure {
            git_http::Failure::Http(e) => Error::Http(e),
            git_http::Failure::Git(e) => self.git2(what, e),
        })
    }

    /// libgit2's failure `e`, after `what` failed ("" when its words say it).
    fn git2(&self, what: &str, e: git2::Error) -> Error {
        Error::Git {
            url: crate::net::redact(&self.url),
            what: what.to_owned(),
            source: Some(e.into()),
        }
    }

    /// A refusal of what the repository holds, with no libgit2 failure.
    fn refused(&self, what: String) -> Error {
        Error::Git {
            url: crate::net::redact(&self.url),
            what,
            source: None,
        }
    }

    /// Refuses a fetch offline, and one over plain http to another machine
    /// (the scheme rule every HTTP request obeys: http only to loopback).
    fn may_fetch(&self) -> Result<()> {
        let url = crate::net::redact(&self.url);
        if self.offline {
            return Err(Error::usage(
                format!("reading git upstream `{url}` needs the network"),
                "run without --offline",
            ));
        }
        if let Some(rest) = self.url.strip_prefix("http://") {
            let host = rest.split('/').next().unwrap_or_default();
            let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
            if !crate::net::is_loopback(host) {
                return Err(Error::usage(
                    format!("git upstream `{url}` is plain http to another machine"),
                    "write it with https:// in vendor.toml: plain http is only for this machine",
                ));
            }
        }
        Ok(())
    }

    /// The mirror when this machine has one, opened on first use.
    fn kept(&self) -> Option<&Repository> {
        if self.repo.get().is_none()
            && let Ok(r) = Repository::open_bare(&self.mirror)
        {
            let _ = self.repo.set(r);
        }
        self.repo.get()
    }

    /// The mirror, created when this machine has none.
    fn repo(&self) -> Result<&Repository> {
        if let Some(r) = self.kept() {
            return Ok(r);
        }
        std::fs::create_dir_all(&self.mirror).map_err(crate::paths::io("create", &self.mirror))?;
        let created = Repository::init_bare(&self.mirror).map_err(|e| self.git2("", e))?;
        Ok(self.repo.get_or_init(|| created))
    }

    /// The mirror with `rev` present: `refs/tags/<tag>`, or the commit
    /// itself (fetched by its sha, which a branch's old head needs).
    fn with_tag(&self, rev: &str) -> Result<&Repository> {
        let repo = self.repo()?;
        if self.held.borrow().contains(rev) {
            return Ok(repo);
        }
        if !self.has(repo, rev) {
            let spec = if is_commit(rev) {
                rev.to_owned()
            } else {
                format!("+refs/tags/{rev}:refs/tags/{rev}")
            };
            self.may_fetch()?;
            let mut remote = repo
                .remote_anonymous(&self.url)
                .map_err(|e| self.git2("", e))?;
            let what = format!("cannot fetch {rev}: ");
            self.remote_call(&what, || remote.fetch(&[spec], None, None))?;
        }
        self.held.borrow_mut().insert(rev.to_owned());
        Ok(repo)
    }

    /// Whether the mirror holds `rev`: the tag's ref, or the commit.
    fn has(&self, repo: &Repository, rev: &str) -> bool {
        if is_commit(rev) {
            git2::Oid::from_str(rev).is_ok_and(|oid| repo.find_commit(oid).is_ok())
        } else {
            repo.find_reference(&format!("refs/tags/{rev}")).is_ok()
        }
    }

    fn object_at<'r>(&self, repo: &'r Repository, rev: &str) -> Result<git2::Object<'r>> {
        let spec = if is_commit(rev) {
            rev.to_owned()
        } else {
            format!("refs/tags/{rev}")
        };
        repo.revparse_single(&spec)
            .map_err(|e| self.git2(&format!("no {rev}: "), e))
    }

    fn tree_at<'r>(&self, repo: &'r Repository, rev: &str) -> Result<git2::Tree<'r>> {
        self.object_at(repo, rev)?
            .peel_to_tree()
            .map_err(|e| self.git2("", e))
    }

    /// The file `path` at `tag`: from `cache` by its blob id when given and
    /// there, else read from the mirror (and then kept in `cache`).
    fn blob_at(&self, tag: &str, path: &str, cache: Option<&Cache>) -> Result<Vec<u8>> {
        let repo = self.with_tag(tag)?;
        let tree = self.tree_at(repo, tag)?;
        let entry = tree
            .get_path(Path::new(path))
            .map_err(|_| Error::NotFound {
                what: format!("`{path}` at {tag}"),
                url: crate::net::redact(&self.url),
            })?;
        let id = entry.id().to_string();
        if entry.kind() == Some(ObjectType::Blob)
            && let Some(bytes) = cache.and_then(|c| c.get_blob(&id))
        {
            return Ok(bytes);
        }
        let blob = entry
            .to_object(repo)
            .and_then(|o| o.peel_to_blob())
            .map_err(|e| self.git2(&format!("`{path}` at {tag} is not a file: "), e))?;
        let bytes = blob.content().to_vec();
        if let Some(cache) = cache {
            cache.put_blob_named(&id, &bytes);
        }
        Ok(bytes)
    }

    /// Every ref the remote advertises, with the commit it names.
    fn remote_heads(&self) -> Result<Vec<(String, String)>> {
        self.may_fetch()?;
        let repo = self.repo()?;
        let mut remote = repo
            .remote_anonymous(&self.url)
            .map_err(|e| self.git2("", e))?;
        self.remote_call("", || {
            let conn = remote.connect_auth(Direction::Fetch, None, None)?;
            Ok(conn
                .list()?
                .iter()
                .map(|h| (h.name().to_owned(), h.oid().to_string()))
                .collect())
        })
    }
}

impl Source for Git {
    fn describe(&self) -> String {
        format!("git:{}", self.url)
    }

    /// The tree at the locked version in the mirror, if the mirror has that
    /// rev; a mirror whose tree there is not the locked one is an
    /// [`Error::Checksum`] (the tag was moved upstream and fetched since).
    fn kept_tree(&self, locked: &LockedUpstream, _cache: &Cache) -> Result<Option<SourceTree>> {
        let Some(repo) = self.kept() else {
            return Ok(None);
        };
        if !self.has(repo, &locked.version) {
            return Ok(None);
        }
        let tree = self.read_tree(repo, &locked.version)?;
        super::verify_tree(tree, &locked.version, Some(locked)).map(Some)
    }

    /// A name from the URL's last part; a git server has no pages we know.
    fn pages(&self, _from: Option<&str>, _to: &str, _release: bool) -> Pages {
        let url = &self.url;
        let name = url.trim_end_matches('/').trim_end_matches(".git");
        Pages {
            name: name.rsplit('/').next().unwrap_or(url).to_owned(),
            ..Pages::default()
        }
    }

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
        self.blob_at(tag, path, None)
    }

    /// By the blob id the tree names, from `cache` when it holds those
    /// bytes: libgit2 would inflate the blob and hash it again (issue 23).
    /// Read from the mirror, it is put in `cache` by that id.
    fn file_cached(&self, tag: &str, path: &str, cache: &Cache) -> Result<Vec<u8>> {
        self.blob_at(tag, path, Some(cache))
    }

    /// By its blob id from the mirror: finding it by its path re-read and
    /// re-hashed the directory's tree for each file, quadratic in a
    /// directory of 10,000 files. An id the mirror lacks is read by path.
    fn listed_file(&self, tag: &str, listed: &Listed) -> Result<Vec<u8>> {
        let repo = self.with_tag(tag)?;
        let blob = git2::Oid::from_str(&listed.blob).and_then(|id| repo.find_blob(id));
        match blob {
            Ok(blob) => Ok(blob.content().to_vec()),
            Err(_) => self.file(tag, &listed.path),
        }
    }

    fn commit(&self, tag: &str) -> Result<Option<String>> {
        let repo = self.with_tag(tag)?;
        let commit = self
            .object_at(repo, tag)?
            .peel_to_commit()
            .map_err(|e| self.git2("", e))?;
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

    fn list(&self, tag: &str, dir: &str, _cache: &Cache) -> Result<Vec<Listed>> {
        let repo = self.with_tag(tag)?;
        let root = self.tree_at(repo, tag)?;
        let missing = || Error::NotFound {
            what: format!("directory `{dir}` at {tag}"),
            url: crate::net::redact(&self.url),
        };
        let tree = match dir.trim_end_matches('/') {
            "" => root,
            sub => root
                .get_path(Path::new(sub))
                .and_then(|e| e.to_object(repo))
                .and_then(|o| o.peel_to_tree())
                .map_err(|_| missing())?,
        };
        let mut listed = Vec::new();
        tree.walk(TreeWalkMode::PreOrder, |parent, entry| {
            if entry.kind() == Some(ObjectType::Blob) && entry.filemode() != SYMLINK_MODE {
                let name = entry.name().unwrap_or_default();
                listed.push(Listed {
                    path: format!("{dir}{parent}{name}"),
                    blob: entry.id().to_string(),
                });
            }
            TreeWalkResult::Ok
        })
        .map_err(|e| self.git2("", e))?;
        // As the GitHub source does: a tree naming `..`, an empty part or a
        // control character in a path is refused whole.
        if let Some(bad) = listed.iter().find(|l| !super::is_clean_path(&l.path)) {
            return Err(self.refused(format!(
                "the tree of {tag} lists `{}`, which is not a plain relative path",
                bad.path.escape_debug()
            )));
        }
        if listed.is_empty() {
            return Err(missing());
        }
        listed.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(listed)
    }

    /// The tag's tree as committed: `export-ignore` and `export-subst`
    /// apply to archives only, so a repository that uses them hashes
    /// differently here than in its GitHub archive.
    fn tree(&self, tag: &str) -> Result<SourceTree> {
        let repo = self.with_tag(tag)?;
        self.read_tree(repo, tag)
    }
}

impl Git {
    /// The tree at `tag` in `repo`, every blob read (see [`Source::tree`]).
    fn read_tree(&self, repo: &Repository, tag: &str) -> Result<SourceTree> {
        let tree = self.tree_at(repo, tag)?;
        let mut files = std::collections::BTreeMap::new();
        let mut links = std::collections::BTreeMap::new();
        let mut hasher = TreeHasher::new();
        let mut failure = None;
        let walked = tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() != Some(ObjectType::Blob) {
                return TreeWalkResult::Ok;
            }
            let path = format!("{dir}{}", entry.name().unwrap_or_default());
            let mode = match entry.filemode() {
                0o120000 => Mode::Symlink,
                bits => Mode::of_permissions(bits as u32),
            };
            let added = entry
                .to_object(repo)
                .and_then(|o| o.peel_to_blob())
                .map_err(|e| self.git2("", e))
                .and_then(|blob| {
                    hasher
                        .add(&path, mode, blob.content())
                        .map_err(|e| self.refused(e.to_string()))?;
                    if mode == Mode::Symlink {
                        let target = String::from_utf8_lossy(blob.content());
                        links.insert(path, format!("a symlink to `{target}`"));
                    } else {
                        files.insert(path, blob.content().to_vec());
                    }
                    Ok(())
                });
            match added {
                Ok(()) => TreeWalkResult::Ok,
                Err(e) => {
                    failure = Some(e);
                    TreeWalkResult::Abort
                }
            }
        });
        // An aborted walk reports only that it was aborted; the cause is ours.
        if let Some(e) = failure {
            return Err(e);
        }
        walked.map_err(|e| self.git2("", e))?;
        Ok(SourceTree {
            files,
            links,
            tree_sha256: hasher.finish(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// libgit2's failure is the error's cause, shown once: in the message,
    /// without git2's class and code, and not again under `Caused by:`.
    #[test]
    fn a_libgit2_failure_is_kept_as_the_cause() {
        let dir = tempfile::tempdir().unwrap();
        let client = Client::new(crate::net::ClientOptions {
            token: None,
            token_origins: Vec::new(),
            cache_dir: dir.path().to_owned(),
            offline: true,
            retries: 0,
            timeout: std::time::Duration::from_secs(1),
        });
        let git = Git::new("https://u:p@example.invalid/x.git", dir.path(), &client);
        let err = git.git2("cannot fetch v1: ", git2::Error::from_str("no such ref"));
        assert_eq!(
            err.to_string(),
            "failed to read git upstream `https://<redacted>@example.invalid/x.git`: cannot fetch v1: no such ref"
        );
        let cause = std::error::Error::source(&err).expect("a cause");
        assert_eq!(cause.to_string(), "no such ref");
        assert!(err.causes().is_empty());
        let refused = git.refused("a bad path".into());
        assert!(std::error::Error::source(&refused).is_none());
    }

    #[test]
    fn plain_http_is_fetched_only_from_this_machine() {
        let dir = tempfile::tempdir().unwrap();
        let client = |offline: bool| {
            Client::new(crate::net::ClientOptions {
                token: None,
                token_origins: Vec::new(),
                cache_dir: dir.path().to_owned(),
                offline,
                retries: 0,
                timeout: std::time::Duration::from_secs(1),
            })
        };
        let online = client(false);
        let git = |url: &str| Git::new(url, dir.path(), &online).may_fetch();
        let err = git("http://example.invalid/x.git").unwrap_err();
        assert!(
            err.to_string().contains("plain http to another machine"),
            "{err}"
        );
        assert!(git("http://user@example.invalid/x.git").is_err());
        git("http://127.0.0.1:8080/x.git").unwrap();
        git("http://localhost/x.git").unwrap();
        git("https://example.invalid/x.git").unwrap();
        git("file:///tmp/x.git").unwrap();
        assert!(
            Git::new("https://x/y", dir.path(), &client(true))
                .may_fetch()
                .is_err()
        );
    }
}
