//! The `builder-go` question: is every Go builder stage `golang:<go>` pinned
//! by digest?
//!
//! A builder stage is one whose base is Docker Hub's official `golang` image.
//! Its tag must name the Go release vendor.toml declares: exactly `<go>`, a
//! patch release of it (`<go>.3`) or a variant of either (`<go>-bookworm`),
//! as [`go::Version::is_release_of`] reads it; with `go = ">=1.26"` a later
//! minor too ([`go::Requirement::admits`]). `golang:1.26` alone floats;
//! only `@sha256:<64 hex>` makes the build reproducible.

use std::fmt;

use super::{Base, Dockerfile};
use crate::go;
use crate::image::Reference;

/// One way the Go builder stages fall short.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuilderProblem {
    /// No stage builds on `golang`.
    NoGolangStage,
    /// A golang stage's tag is missing or names another Go release.
    GoVersion {
        /// The FROM line.
        line: usize,
        /// The tag found, if any.
        found: Option<String>,
        /// The Go release expected.
        expected: String,
    },
    /// A golang stage has no digest, or one that is not `sha256:<64 hex>`.
    NotPinned {
        /// The FROM line.
        line: usize,
        /// The reference as resolved.
        image: String,
    },
}

impl BuilderProblem {
    /// The line a finding should name (1 when no stage exists).
    pub fn line(&self) -> usize {
        match self {
            BuilderProblem::NoGolangStage => 1,
            BuilderProblem::GoVersion { line, .. } | BuilderProblem::NotPinned { line, .. } => {
                *line
            }
        }
    }
}

impl fmt::Display for BuilderProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuilderProblem::NoGolangStage => f.write_str("no build stage uses the golang image"),
            BuilderProblem::GoVersion {
                found: Some(tag),
                expected,
                ..
            } => write!(f, "the builder uses golang:{tag}, expected Go {expected}"),
            BuilderProblem::GoVersion {
                found: None,
                expected,
                ..
            } => write!(
                f,
                "the builder uses golang without a tag, expected Go {expected}"
            ),
            BuilderProblem::NotPinned { image, .. } => {
                write!(
                    f,
                    "the builder image `{image}` is not pinned by @sha256:<64 hex>"
                )
            }
        }
    }
}

/// Check every golang stage of `df`: pinned by digest, and, when vendor.toml
/// names one, on a Go release `go` admits (`1.26`, or `>=1.26`).
pub fn check_builder(df: &Dockerfile, go: Option<&go::Requirement>) -> Vec<BuilderProblem> {
    let golang: Vec<(usize, &Reference)> = df
        .stages
        .iter()
        .filter_map(|s| match &s.base {
            Base::Image(r) if r.is_docker_official("golang") => Some((s.line, r)),
            _ => None,
        })
        .collect();
    if golang.is_empty() {
        return vec![BuilderProblem::NoGolangStage];
    }
    let mut out = Vec::new();
    for (line, image) in golang {
        if let Some(go) = go {
            let tag = image.tag();
            let on_go = tag
                .and_then(go::Version::from_tag)
                .is_some_and(|(version, _)| go.admits(&version));
            if !on_go {
                let expected = match go.minimum {
                    true => format!("{} or later", go.minor),
                    false => go.minor.to_string(),
                };
                out.push(BuilderProblem::GoVersion {
                    line,
                    found: tag.map(str::to_owned),
                    expected,
                });
            }
        }
        if image.digest().is_none() {
            out.push(BuilderProblem::NotPinned {
                line,
                image: image.to_string(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Vec<BuilderProblem> {
        let go = go::Requirement::parse("1.26").unwrap();
        check_builder(&Dockerfile::parse(text).unwrap(), Some(&go))
    }

    #[test]
    fn pinned_golang_of_the_right_release_passes() {
        let d = "0".repeat(64);
        for tag in ["1.26", "1.26.3", "1.26-bookworm", "1.26.3-alpine"] {
            let text = format!("FROM golang:{tag}@sha256:{d} AS build\nFROM scratch\n");
            assert_eq!(check(&text), [], "{tag}");
        }
    }

    #[test]
    fn other_releases_and_missing_tags_are_reported() {
        let d = "0".repeat(64);
        for tag in ["1.2", "1.260", "1.25", "1.26rc1", "1.26."] {
            let text = format!("FROM docker.io/library/golang:{tag}@sha256:{d}\n");
            let problems = check(&text);
            assert!(
                matches!(
                    problems.as_slice(),
                    [BuilderProblem::GoVersion { line: 1, .. }]
                ),
                "{tag}: {problems:?}"
            );
        }
        let problems = check(&format!("FROM golang@sha256:{d}\n"));
        assert_eq!(
            problems[0].to_string(),
            "the builder uses golang without a tag, expected Go 1.26"
        );
    }

    #[test]
    fn unpinned_or_short_digests_are_reported() {
        let problems =
            check("ARG GO=1.26\nFROM golang:${GO} AS build\nFROM golang:1.26@sha256:abc\n");
        assert_eq!(problems.len(), 2);
        assert_eq!(problems[0].line(), 2);
        assert_eq!(
            problems[0].to_string(),
            "the builder image `golang:1.26` is not pinned by @sha256:<64 hex>"
        );
        assert_eq!(problems[1].line(), 3);
    }

    #[test]
    fn without_a_go_release_only_the_digest_is_checked() {
        let df = Dockerfile::parse("FROM golang:1.20\n").unwrap();
        assert!(matches!(
            check_builder(&df, None).as_slice(),
            [BuilderProblem::NotPinned { line: 1, .. }]
        ));
    }

    #[test]
    fn no_golang_stage_is_reported() {
        assert_eq!(
            check("FROM ghcr.io/x/golang:1.26\n"),
            [BuilderProblem::NoGolangStage]
        );
    }
}
