//! Real git repositories in temporary directories, for `git = "file:///..."` upstreams.
//!
//! The `git` CLI builds them, so the tool under test (whatever git library it uses) reads
//! repositories written by the reference implementation. Every command runs with the user's
//! and the system's git configuration switched off and with fixed identities and dates, so a
//! test gets the same commit ids on every machine.
//!
//! [`http_backend`] serves such a repository over git's smart HTTP protocol through
//! `git http-backend`, so the GitHub stand-in can offer clones at `{server}/{owner}/{repo}.git`.

use std::cell::Cell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::server::{Request, Response};

/// 2026-01-01T00:00:00Z; each commit is a minute after the previous one.
const FIRST_COMMIT_EPOCH: u64 = 1_767_225_600;

/// A git repository with a work tree on branch `main`, deleted when dropped.
pub struct GitRepo {
    dir: tempfile::TempDir,
    clock: Cell<u64>,
}

impl Default for GitRepo {
    fn default() -> Self {
        GitRepo::new()
    }
}

impl GitRepo {
    /// `git init` on branch `main`, with no commits yet.
    pub fn new() -> GitRepo {
        let dir = tempfile::Builder::new()
            .prefix("revendor-git-")
            .tempdir()
            .expect("create a temporary git directory");
        let repo = GitRepo {
            dir,
            clock: Cell::new(FIRST_COMMIT_EPOCH),
        };
        repo.git(&["init", "--quiet", "--initial-branch=main"]);
        repo
    }

    /// The work tree (its `.git` is inside).
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `file:///...`, what `git = "..."` in vendor.toml receives.
    pub fn url(&self) -> String {
        format!("file://{}", self.path().display())
    }

    /// Writes `files` (relative path, contents), stages everything (including earlier
    /// [`GitRepo::remove`]s) and commits; returns the new commit's sha.
    pub fn commit<P, B>(&self, message: &str, files: impl IntoIterator<Item = (P, B)>) -> String
    where
        P: AsRef<str>,
        B: AsRef<[u8]>,
    {
        for (rel, bytes) in files {
            let path = self.path().join(rel.as_ref());
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .unwrap_or_else(|e| panic!("create `{}`: {e}", parent.display()));
            }
            std::fs::write(&path, bytes)
                .unwrap_or_else(|e| panic!("write `{}`: {e}", path.display()));
        }
        self.git(&["add", "--all"]);
        self.tick();
        self.git(&["commit", "--quiet", "--allow-empty", "-m", message]);
        self.head()
    }

    /// Deletes a file from the work tree; the next [`GitRepo::commit`] records the deletion.
    pub fn remove(&self, rel: &str) -> &Self {
        let path = self.path().join(rel);
        std::fs::remove_file(&path).unwrap_or_else(|e| panic!("remove `{}`: {e}", path.display()));
        self
    }

    /// A lightweight tag at `HEAD`.
    pub fn tag(&self, name: &str) -> &Self {
        self.git(&["tag", name]);
        self
    }

    /// An annotated tag at `HEAD` (a tag object that peels to the commit).
    pub fn annotated_tag(&self, name: &str, message: &str) -> &Self {
        self.tick();
        self.git(&["tag", "--annotate", "-m", message, name]);
        self
    }

    /// A new branch at `HEAD`, checked out.
    pub fn branch(&self, name: &str) -> &Self {
        self.git(&["checkout", "--quiet", "-b", name]);
        self
    }

    /// Checks out an existing branch, tag or commit.
    pub fn checkout(&self, rev: &str) -> &Self {
        self.git(&["checkout", "--quiet", rev]);
        self
    }

    /// The `.git` directory.
    pub fn git_dir(&self) -> PathBuf {
        self.path().join(".git")
    }

    /// The commit `HEAD` points at.
    pub fn head(&self) -> String {
        self.rev_parse("HEAD")
    }

    /// The commit `rev` names (tags are peeled).
    pub fn rev_parse(&self, rev: &str) -> String {
        self.git(&["rev-parse", "--verify", &format!("{rev}^{{commit}}")])
    }

    /// Runs `git` in the work tree with the isolated environment; panics with stderr if it
    /// fails and returns trimmed stdout.
    pub fn git(&self, args: &[&str]) -> String {
        let date = format!("@{} +0000", self.clock.get());
        let output = isolated_git(self.path())
            .args(args)
            .env("GIT_AUTHOR_NAME", "Test Author")
            .env("GIT_AUTHOR_EMAIL", "author@example.com")
            .env("GIT_COMMITTER_NAME", "Test Author")
            .env("GIT_COMMITTER_EMAIL", "author@example.com")
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date)
            .output()
            .unwrap_or_else(|e| panic!("run git {args:?}: {e}"));
        assert!(
            output.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).trim().to_string()
    }

    fn tick(&self) {
        self.clock.set(self.clock.get() + 60);
    }
}

/// `git` in `dir`, blind to the user's and the system's configuration and to any repository
/// the test process itself runs in.
fn isolated_git(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null");
    command
}

/// Answers a smart-HTTP git request for the repository at `git_dir` by running
/// `git http-backend` as a CGI program; `path_info` is the part after the repository, such
/// as `/info/refs` or `/git-upload-pack`. Pushes are refused, as to an anonymous client.
pub fn http_backend(git_dir: &Path, path_info: &str, request: &Request) -> Response {
    let query = request.target.split_once('?').map_or("", |(_, q)| q);
    let mut command = isolated_git(git_dir);
    command
        .arg("http-backend")
        .env("GIT_PROJECT_ROOT", git_dir)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("PATH_INFO", path_info)
        .env("REQUEST_METHOD", &request.method)
        .env("QUERY_STRING", query)
        .env("CONTENT_TYPE", request.header("content-type").unwrap_or(""))
        .env("CONTENT_LENGTH", request.body.len().to_string())
        .env("REMOTE_ADDR", "127.0.0.1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Protocol v2 and gzip-compressed negotiation reach the backend as CGI variables.
    for (header, variable) in [
        ("git-protocol", "GIT_PROTOCOL"),
        ("content-encoding", "HTTP_CONTENT_ENCODING"),
    ] {
        if let Some(value) = request.header(header) {
            command.env(variable, value);
        }
    }
    let Ok(mut child) = command.spawn() else {
        return Response::bytes(500, "text/plain", "cannot run git http-backend\n");
    };
    // Feed stdin from another thread: the backend may write before it has read everything.
    let body = request.body.clone();
    let stdin = child.stdin.take();
    let feeder = std::thread::spawn(move || {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(&body);
        }
    });
    let output = child.wait_with_output();
    let _ = feeder.join();
    match output {
        Ok(output) => cgi_response(&output.stdout),
        Err(_) => Response::bytes(500, "text/plain", "git http-backend failed\n"),
    }
}

/// Turns CGI output (headers, a blank line, the body) into a response; `Status:` sets the code.
fn cgi_response(output: &[u8]) -> Response {
    let split = output
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, i + 4))
        .or_else(|| {
            output
                .windows(2)
                .position(|w| w == b"\n\n")
                .map(|i| (i, i + 2))
        });
    let Some((head_end, body_start)) = split else {
        return Response::bytes(500, "text/plain", "malformed CGI output\n");
    };
    let mut response = Response::new(200).body(output[body_start..].to_vec());
    for line in String::from_utf8_lossy(&output[..head_end]).lines() {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("status") {
            let code = value.split_whitespace().next().and_then(|c| c.parse().ok());
            response.status = code.unwrap_or(500);
        } else {
            response = response.header(name.trim(), value);
        }
    }
    response
}
