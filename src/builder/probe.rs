//! Whether a builder can run here, asked before anything is built.
//!
//! On a docker without the buildx plugin, `docker buildx build` falls through
//! to the legacy builder, which fails with `unknown flag: --platform`. That
//! message names neither buildx nor what to do about it. A missing buildah
//! only fails when the first step spawns. So before the first step, [`probe`]
//! runs the builder's version command (`docker buildx version`, `buildah
//! version`) with its output captured. A missing program or a failed answer
//! becomes [`Error::Unavailable`], which says what the probe saw, and whose
//! hint names the other builder.

use std::path::Path;
use std::process::{Command, Stdio};

use super::{Error, Kind};

/// How many lines of the probe's answer the error keeps.
const ANSWER_LINES: usize = 3;

/// Fails unless `kind` answers its version command, run in `dir`.
pub fn probe(kind: Kind, dir: &Path) -> Result<(), Error> {
    let argv: &[&str] = match kind {
        Kind::Buildx => &["docker", "buildx", "version"],
        Kind::Buildah => &["buildah", "version"],
    };
    ask(kind, argv, dir)
}

fn ask(kind: Kind, argv: &[&str], dir: &Path) -> Result<(), Error> {
    let output = Command::new(argv[0])
        .args(&argv[1..])
        .current_dir(dir)
        .stdin(Stdio::null())
        .output();
    let output = match output {
        Ok(output) => output,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::Unavailable {
                builder: kind,
                reason: format!("`{}` is not installed (not found on PATH)", argv[0]),
            });
        }
        Err(source) => {
            return Err(Error::Spawn {
                program: argv[0].to_owned(),
                source,
            });
        }
    };
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let answer = if stderr.trim().is_empty() {
        stdout
    } else {
        stderr
    };
    let lines: Vec<&str> = answer
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(ANSWER_LINES)
        .collect();
    let said = if lines.is_empty() {
        String::new()
    } else {
        format!(": {}", lines.join(" / "))
    };
    Err(Error::Unavailable {
        builder: kind,
        reason: format!("`{}` failed ({}){said}", argv.join(" "), output.status),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_builder_that_answers_is_available() {
        let dir = tempfile::tempdir().unwrap();
        ask(Kind::Buildah, &["true"], dir.path()).unwrap();
    }

    #[test]
    fn a_failed_answer_is_quoted() {
        let dir = tempfile::tempdir().unwrap();
        let err = ask(
            Kind::Buildx,
            &[
                "sh",
                "-c",
                "echo \"docker: unknown command: docker buildx\" >&2; echo >&2; echo 'Run docker --help' >&2; exit 1",
            ],
            dir.path(),
        )
        .unwrap_err();
        assert!(
            err.to_string().starts_with(
                "buildx cannot build here: `sh -c echo \"docker: unknown command: docker buildx\""
            ),
            "{err}"
        );
        assert!(
            err.to_string().ends_with(
                "failed (exit status: 1): docker: unknown command: docker buildx / Run docker --help"
            ),
            "{err}"
        );
        assert!(err.hint().unwrap().contains("`builder = \"buildah\"`"));
    }

    #[test]
    fn a_missing_program_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let err = ask(Kind::Buildah, &["revendor-no-such-builder"], dir.path()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "buildah cannot build here: `revendor-no-such-builder` is not installed (not found on PATH)"
        );
        assert!(err.hint().unwrap().contains("`builder = \"buildx\"`"));
    }
}
