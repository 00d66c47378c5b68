//! `origin`, through the `git` command: what its upgrade branch points at,
//! fetching it, and pushing or deleting it, each push leased on what the
//! branch was seen at.
//!
//! The git command, not git2, talks to the remote: it runs the remote's
//! hooks over `file://` (a refused push is refused here as on a server),
//! speaks ssh and uses the user's credential helpers. The token reaches it
//! only as an `http.<GITHUB_SERVER_URL>/.extraheader` in the child's
//! environment (as `actions/checkout` does), never on its command line, and
//! is scrubbed from anything it prints.

use std::path::Path;
use std::process::Command;

use base64::Engine;
use git2::Oid;

use crate::error::{Error, Result};

/// `origin` of the repository at `workdir`.
pub(super) struct Remote<'a> {
    workdir: &'a Path,
    token: &'a str,
    server: &'a str,
}

impl<'a> Remote<'a> {
    /// `origin` of the work tree at `workdir`; `token` is sent to
    /// `server` (`GITHUB_SERVER_URL`) only.
    pub fn new(workdir: &'a Path, token: &'a str, server: &'a str) -> Remote<'a> {
        Remote {
            workdir,
            token,
            server,
        }
    }

    fn git(&self, args: &[&str]) -> Command {
        let header = base64::engine::general_purpose::STANDARD
            .encode(format!("x-access-token:{}", self.token));
        let mut command = Command::new("git");
        command
            .arg("-C")
            .arg(self.workdir)
            .args(args)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_CONFIG_COUNT", "1")
            .env(
                "GIT_CONFIG_KEY_0",
                format!("http.{}/.extraheader", self.server),
            )
            .env(
                "GIT_CONFIG_VALUE_0",
                format!("AUTHORIZATION: basic {header}"),
            );
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
