//! One builder invocation: an argument vector, run without a shell.
//!
//! The builder's stdout (build progress) is passed to revendor's stderr, so
//! stdout stays revendor's data. Its stderr is copied there line by line and
//! the last lines are kept: when the builder fails, the error carries them.

use std::collections::VecDeque;
use std::fmt;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use super::Error;
use crate::image::Digest;

/// How many stderr lines a failure keeps.
const TAIL_LINES: usize = 20;

/// A program and its arguments, run in the package directory.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Step {
    /// The program first, then every argument, exactly as passed.
    pub argv: Vec<String>,
    /// Housekeeping whose failure does not matter (removing a local
    /// manifest list that may not exist); its output is discarded.
    pub may_fail: bool,
}

impl Step {
    /// A step that must succeed.
    pub fn new<S: Into<String>>(argv: impl IntoIterator<Item = S>) -> Step {
        Step {
            argv: argv.into_iter().map(Into::into).collect(),
            may_fail: false,
        }
    }

    /// A step whose exit status is ignored.
    pub fn optional<S: Into<String>>(argv: impl IntoIterator<Item = S>) -> Step {
        Step {
            may_fail: true,
            ..Step::new(argv)
        }
    }

    /// Runs the step in `dir` and waits for it. A program that cannot be
    /// started is an error even for an optional step.
    pub fn run(&self, dir: &Path) -> Result<(), Error> {
        self.run_echoing(dir, &mut std::io::stderr())
    }

    /// [`Step::run`], copying the builder's stderr to `echo`.
    fn run_echoing(&self, dir: &Path, echo: &mut dyn Write) -> Result<(), Error> {
        let Some((program, args)) = self.argv.split_first() else {
            return Ok(());
        };
        let mut command = Command::new(program);
        command.args(args).current_dir(dir).stdin(Stdio::null());
        let spawn_error = |source| Error::Spawn {
            program: program.clone(),
            source,
        };
        if self.may_fail {
            command.stdout(Stdio::null()).stderr(Stdio::null());
            command.status().map_err(spawn_error)?;
            return Ok(());
        }
        command
            .stdout(Stdio::from(std::io::stderr()))
            .stderr(Stdio::piped());
        let mut child = command.spawn().map_err(spawn_error)?;
        let mut tail: VecDeque<String> = VecDeque::with_capacity(TAIL_LINES);
        if let Some(stderr) = child.stderr.take() {
            let mut reader = BufReader::new(stderr);
            let mut line = Vec::new();
            while reader.read_until(b'\n', &mut line).unwrap_or(0) > 0 {
                let _ = echo.write_all(&line);
                if tail.len() == TAIL_LINES {
                    tail.pop_front();
                }
                tail.push_back(String::from_utf8_lossy(&line).trim_end().to_owned());
                line.clear();
            }
        }
        let status = child.wait().map_err(spawn_error)?;
        if status.success() {
            return Ok(());
        }
        Err(Error::Failed {
            command: self.to_string(),
            status: status.to_string(),
            stderr_tail: Vec::from(tail).join("\n"),
        })
    }
}

/// The command line as a POSIX shell would need it typed.
impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quoted: Vec<String> = self.argv.iter().map(|a| quote(a)).collect();
        f.write_str(&quoted.join(" "))
    }
}

/// `arg`, single-quoted unless it is made only of characters no shell treats
/// specially.
fn quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@%+".contains(c));
    if plain {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// The digest in a file holding one `sha256:…` line (buildah's `--digestfile`).
pub fn read_digest_file(path: &Path) -> Result<Digest, Error> {
    let invalid = |reason: String| Error::DigestFile {
        path: path.to_owned(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| invalid(e.to_string()))?;
    let text = text.trim();
    if text.is_empty() {
        return Err(invalid("it is empty".to_owned()));
    }
    Digest::parse(text).map_err(|e| invalid(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_quotes_only_what_a_shell_would_split() {
        let step = Step::new([
            "buildah",
            "build",
            "--label",
            "a b=it's",
            "",
            "x/y:z@sha256:00",
        ]);
        assert_eq!(
            step.to_string(),
            r"buildah build --label 'a b=it'\''s' '' x/y:z@sha256:00"
        );
    }

    #[test]
    fn run_passes_arguments_without_a_shell() {
        let dir = tempfile::tempdir().unwrap();
        let step = Step::new(["touch", "a b; rm -rf c", "$HOME"]);
        step.run(dir.path()).unwrap();
        assert!(dir.path().join("a b; rm -rf c").exists());
        assert!(dir.path().join("$HOME").exists());
    }

    #[test]
    fn failures_keep_the_stderr_tail() {
        let dir = tempfile::tempdir().unwrap();
        let step = Step::new([
            "sh",
            "-c",
            "for i in $(seq 1 30); do echo line $i >&2; done; exit 3",
        ]);
        let mut echoed = Vec::new();
        let Err(Error::Failed {
            status,
            stderr_tail,
            command,
        }) = step.run_echoing(dir.path(), &mut echoed)
        else {
            panic!("the step must fail");
        };
        assert_eq!(status, "exit status: 3");
        assert_eq!(stderr_tail.lines().count(), TAIL_LINES);
        assert!(stderr_tail.starts_with("line 11\n") && stderr_tail.ends_with("line 30"));
        assert!(command.starts_with("sh -c 'for i"), "{command}");
        assert_eq!(String::from_utf8(echoed).unwrap().lines().count(), 30);
    }

    #[test]
    fn optional_steps_ignore_their_status_but_not_a_missing_program() {
        let dir = tempfile::tempdir().unwrap();
        Step::optional(["false"]).run(dir.path()).unwrap();
        let err = Step::optional(["revendor-no-such-builder"])
            .run(dir.path())
            .unwrap_err();
        assert!(matches!(err, Error::Spawn { .. }), "{err:?}");
    }

    #[test]
    fn digest_files_must_hold_a_digest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("digest");
        let d = format!("sha256:{}", "a".repeat(64));
        std::fs::write(&path, format!("{d}\n")).unwrap();
        assert_eq!(read_digest_file(&path).unwrap().to_string(), d);
        std::fs::write(&path, "").unwrap();
        assert!(
            read_digest_file(&path)
                .unwrap_err()
                .to_string()
                .contains("it is empty")
        );
        std::fs::write(&path, "sha256:short").unwrap();
        assert!(read_digest_file(&path).is_err());
        assert!(read_digest_file(&dir.path().join("absent")).is_err());
    }
}
