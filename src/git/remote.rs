//! A repository's `origin`, through the `git` command: what its upgrade branch points at,
//! fetching it, and pushing or deleting it, each push leased on what the
//! branch was seen at.
//!
//! The git command, not git2, talks to the remote: it runs the remote's
//! hooks over `file://` (a refused push is refused here as on a server),
//! speaks ssh and uses the user's credential helpers. The token reaches it
//! only as an `http.<GITHUB_SERVER_URL>/.extraheader` (as `actions/checkout`
//! sends it) in a configuration file only this user can read, which the
//! child's configuration includes and which is removed when the run ends:
//! never in the child's environment or on its command line, where git's
//! own children (a detached `git maintenance`) would inherit it (issue 21).
//! git runs with automatic maintenance off, so no child outlives the run,
//! and the token is scrubbed from anything git prints.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine;
use git2::Oid;

use crate::env::Env;
use crate::error::{Error, Result};

/// `origin` of the repository at `workdir`.
pub struct Remote<'a> {
    workdir: &'a Path,
    token: &'a str,
    /// The file holding the token's header, included by every git run.
    auth: AuthFile,
    /// The `GIT_CONFIG_*` pairs the caller passes git, kept before ours.
    inherited: usize,
}

impl<'a> Remote<'a> {
    /// `origin` of the work tree at `workdir`; `token` is sent to
    /// `GITHUB_SERVER_URL` only.
    pub fn new(workdir: &'a Path, token: &'a str, env: &'a Env) -> Result<Remote<'a>> {
        Ok(Remote {
            workdir,
            token,
            auth: AuthFile::write(&env.server_url, token)?,
            inherited: env.git_config_count,
        })
    }

    fn git(&self, args: &[&str]) -> Command {
        // After whatever GIT_CONFIG_* entries the caller passed, so that the
        // file's empty value first clears the headers collected so far
        // (actions/checkout leaves its own for the same server in
        // .git/config, and GitHub refuses a request with two Authorization
        // headers), then adds ours.
        let inherited = self.inherited;
        let mut command = Command::new("git");
        command
            .args(["-c", "maintenance.auto=false", "-c", "gc.auto=0"])
            .arg("-C")
            .arg(self.workdir)
            .args(args)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_CONFIG_COUNT", (inherited + 1).to_string())
            .env(format!("GIT_CONFIG_KEY_{inherited}"), "include.path")
            .env(format!("GIT_CONFIG_VALUE_{inherited}"), &self.auth.path);
        command
    }

    /// Runs `git args`; its stdout, or what it said on stderr as the error
    /// of `action`.
    fn run(&self, action: &str, args: &[&str], state: &str) -> Result<String> {
        let output = self.git(args).output().map_err(|e| Error::Publish {
            action: action.to_owned(),
            message: Some(format!("cannot run git: {e}")),
            state: state.to_owned(),
            source: None,
        })?;
        if output.status.success() {
            return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
        }
        let said = crate::net::scrub(&String::from_utf8_lossy(&output.stderr), &[self.token]);
        let lines: Vec<&str> = said
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("hint:"))
            .take(12)
            .collect();
        Err(Error::Publish {
            action: action.to_owned(),
            message: Some(lines.join("; ")),
            state: state.to_owned(),
            source: None,
        })
    }

    /// The commit `branch` points at on origin; `None` when it has no such
    /// branch.
    pub fn head(&self, branch: &str) -> Result<Option<Oid>> {
        let refname = format!("refs/heads/{branch}");
        let out = self.run(
            &format!("ask origin for `{branch}`"),
            &["ls-remote", "--heads", "origin", &refname],
            "nothing was pushed",
        )?;
        Ok(out.lines().find_map(|line| {
            let (sha, name) = line.split_once('\t')?;
            (name.trim() == refname).then(|| Oid::from_str(sha.trim()).ok())?
        }))
    }

    /// Fetches `branch` into `refs/remotes/origin/<branch>`, so its commits
    /// can be read.
    pub fn fetch(&self, branch: &str) -> Result<()> {
        let refspec = format!("+refs/heads/{branch}:refs/remotes/origin/{branch}");
        self.run(
            &format!("fetch `{branch}` from origin"),
            &["fetch", "--quiet", "--no-tags", "origin", &refspec],
            "nothing was pushed",
        )
        .map(drop)
    }

    /// Points `branch` on origin at `commit`, provided it still points at
    /// `seen` (`None`: it must not exist), whatever it pointed at.
    pub fn push(&self, commit: Oid, branch: &str, seen: Option<Oid>) -> Result<()> {
        let lease = format!(
            "--force-with-lease=refs/heads/{branch}:{}",
            seen.map(|o| o.to_string()).unwrap_or_default()
        );
        let refspec = format!("{commit}:refs/heads/{branch}");
        self.run(
            &format!("push `{branch}` to origin"),
            &["push", "--quiet", &lease, "origin", &refspec],
            "origin refused the push, so nothing was pushed and no pull request was opened or changed",
        )
        .map(drop)
    }

    /// Deletes `branch` on origin, provided it still points at `seen`.
    pub fn delete(&self, branch: &str, seen: Oid) -> Result<()> {
        let lease = format!("--force-with-lease=refs/heads/{branch}:{seen}");
        let refspec = format!(":refs/heads/{branch}");
        self.run(
            &format!("delete `{branch}` on origin again"),
            &["push", "--quiet", &lease, "origin", &refspec],
            "the branch stays pushed; run again to open its pull request, or delete it",
        )
        .map(drop)
    }
}

/// The token's `extraheader` in a file of its own, readable by this user
/// only, removed when dropped.
struct AuthFile {
    path: PathBuf,
}

impl AuthFile {
    /// Writes the header for `server` into a new file in the temporary
    /// directory (created exclusively: never an existing file or link).
    fn write(server: &str, token: &str) -> Result<AuthFile> {
        let header =
            base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{token}"));
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let path =
            std::env::temp_dir().join(format!("revendor-git-auth-{}-{stamp}", std::process::id()));
        let section = format!("{server}/")
            .replace('\\', "\\\\")
            .replace('"', "\\\"");
        let text = format!(
            "[http \"{section}\"]\n\textraheader =\n\textraheader = AUTHORIZATION: basic {header}\n"
        );
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = AuthFile { path };
        options
            .open(&file.path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(crate::paths::io("write", &file.path))?;
        Ok(file)
    }
}

impl Drop for AuthFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// On a default actions/checkout, `.git/config` already holds an Authorization header for
    /// the server; git must send ours alone (GitHub answers 400 to two). Checked on the
    /// request real git sends to a listener on this machine.
    #[test]
    fn only_our_authorization_header_is_sent() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let server = format!("http://{}", listener.local_addr().unwrap());
        let served = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut request = Vec::new();
            let mut buf = [0; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = stream.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                request.extend_from_slice(&buf[..n]);
            }
            let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
            String::from_utf8_lossy(&request).into_owned()
        });
        let dir = tempfile::tempdir().unwrap();
        let init = Command::new("git")
            .args(["init", "-q"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(init.success());
        let set = Command::new("git")
            .arg("-C")
            .arg(dir.path())
            .args([
                "config",
                &format!("http.{server}/.extraheader"),
                "AUTHORIZATION: basic checkout",
            ])
            .status()
            .unwrap();
        assert!(set.success());
        let env = Env {
            server_url: server.clone(),
            git_config_count: 0,
            ..Env::from_process()
        };
        let remote = Remote::new(dir.path(), "t0ken", &env).unwrap();
        let command = remote.git(&["ls-remote", &format!("{server}/o/r.git")]);
        let ours = base64::engine::general_purpose::STANDARD.encode("x-access-token:t0ken");
        // Issue 21: neither the environment nor the command line holds the token.
        for text in command
            .get_envs()
            .filter_map(|(_, v)| v)
            .chain(command.get_args())
        {
            let text = text.to_string_lossy();
            assert!(!text.contains("t0ken") && !text.contains(&ours), "{text}");
        }
        let auth = remote.auth.path.clone();
        let _ = { command }.output().unwrap();
        drop(remote);
        assert!(
            !auth.exists(),
            "the header's file is removed with the remote"
        );
        let request = served.join().unwrap();
        let auth: Vec<&str> = request
            .lines()
            .filter(|l| l.to_ascii_lowercase().starts_with("authorization:"))
            .collect();
        assert_eq!(auth, [format!("AUTHORIZATION: basic {ours}")], "{request}");
    }
}
