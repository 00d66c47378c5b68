//! Running the real `revendor` binary against a package and a GitHub stand-in.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::GitHub;

/// What one run printed and how it ended.
#[derive(Debug)]
pub struct Run {
    /// The exit code (`-1` when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// Panics with both streams unless the exit code is `code`.
    pub fn expect(self, code: i32) -> Run {
        assert_eq!(
            self.code, code,
            "expected exit {code}, got {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }

    /// Both streams, for searching.
    pub fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

/// A configured invocation of the binary: package dir, GitHub URLs, cache.
pub struct Revendor {
    dir: PathBuf,
    env: Vec<(String, String)>,
    cache: tempfile::TempDir,
}

impl Revendor {
    /// Runs in `dir` against `gh`, with a fresh download cache.
    pub fn new(dir: &Path, gh: &GitHub) -> Revendor {
        let env = gh
            .env()
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        Revendor {
            dir: dir.to_path_buf(),
            env,
            cache: tempfile::tempdir().expect("cache dir"),
        }
    }

    /// Adds an environment variable.
    pub fn env(mut self, key: &str, value: &str) -> Revendor {
        self.env.push((key.to_string(), value.to_string()));
        self
    }

    /// The cache directory this invocation uses.
    pub fn cache(&self) -> &Path {
        self.cache.path()
    }

    /// The command, ready to run.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_revendor"));
        cmd.arg("-C").arg(&self.dir).args(args);
        cmd.env_remove("GITHUB_TOKEN").env_remove("GH_TOKEN");
        // Annotation paths follow GITHUB_WORKSPACE; a test sets it itself.
        cmd.env_remove("GITHUB_WORKSPACE");
        // So are the image's source label and make image's variables.
        for key in [
            "GITHUB_REPOSITORY",
            "REGISTRY",
            "IMAGE_TAG",
            "PUBLISH_VERSIONED",
            "PUBLISH_FLOATING",
            "BUILDX_EXTRA_ARGS",
            "BUILDER",
            "SBOM",
            "OCI_EXPORT_DIR",
        ] {
            cmd.env_remove(key);
        }
        cmd.env("REVENDOR_CACHE_DIR", self.cache.path());
        cmd.env("NO_COLOR", "1");
        // Contracts with `helm` render with the tests' helm unless a test
        // says otherwise.
        if let Some(helm) = super::helm::configured() {
            cmd.env("REVENDOR_HELM", helm);
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd.stdin(Stdio::null());
        cmd
    }

    /// Runs to completion.
    pub fn run(&self, args: &[&str]) -> Run {
        let out = self.command(args).output().expect("run revendor");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// The findings with id `id` of `check --format json`, whatever its exit code.
    pub fn findings(&self, id: &str) -> Vec<serde_json::Value> {
        let out = self.run(&["check", "--format", "json"]);
        let report: serde_json::Value = serde_json::from_str(&out.stdout).expect(&out.stdout);
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["id"] == id)
            .cloned()
            .collect()
    }

    /// Starts without waiting (for kill tests), leading a process group of its own, so the
    /// children a killed run leaves running can be waited for ([`super::kill::settle`]).
    pub fn spawn(&self, args: &[&str]) -> Child {
        use std::os::unix::process::CommandExt;
        self.command(args)
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn revendor")
    }
}
