//! `[[rewrite]]`: the text substitutions applied after the patches.
//!
//! Two forms, both line-based and both keeping every other byte (line endings
//! included): on lines containing a needle, replace a string; or set the
//! default of a Dockerfile `ARG`.

use crate::config::{Placeholders, Rewrite, RewriteKind};
use crate::dockerfile::Dockerfile;

/// What a rewrite did to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewriteResult {
    /// The new contents.
    pub text: String,
    /// 1-based lines that matched the rewrite (changed or already right).
    pub lines: Vec<usize>,
}

/// Applies one rewrite with its upstream's placeholders.
///
/// A Dockerfile `ARG` is found by parsing the Dockerfile (continuations,
/// stages, quotes), not by matching lines, and only the value's bytes change
/// (an `@sha256:` suffix stays, see [`crate::dockerfile::kept_digest`]).
pub fn apply(
    rewrite: &Rewrite,
    text: &str,
    values: &Placeholders,
) -> Result<RewriteResult, crate::dockerfile::Error> {
    let value = rewrite.value(values);
    match &rewrite.kind {
        RewriteKind::Lines { needle, replace } => {
            let mut lines = Vec::new();
            let mut out = String::with_capacity(text.len());
            for (i, line) in text.split_inclusive('\n').enumerate() {
                if line.contains(needle.as_str()) {
                    if line.contains(replace.as_str()) || line.contains(value.as_str()) {
                        lines.push(i + 1);
                    }
                    out.push_str(&line.replace(replace.as_str(), &value));
                } else {
                    out.push_str(line);
                }
            }
            Ok(RewriteResult { text: out, lines })
        }
        RewriteKind::DockerfileArg { name } => {
            let df = Dockerfile::parse(text)?;
            let lines: Vec<usize> = df
                .arg_values(name)
                .filter(|a| a.span.is_some())
                .map(|a| a.line)
                .collect();
            if lines.is_empty() {
                return Ok(RewriteResult {
                    text: text.to_string(),
                    lines,
                });
            }
            Ok(RewriteResult {
                text: crate::dockerfile::rewrite_arg(text, name, &value)?,
                lines,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw(kind: RewriteKind, with: &str) -> Rewrite {
        Rewrite {
            upstream: None,
            file: "f".into(),
            kind,
            with: with.into(),
            line: 1,
        }
    }

    #[test]
    fn lines_containing_touch_only_matching_lines() {
        let r = rw(
            RewriteKind::Lines {
                needle: "multus-cni".into(),
                replace: "snapshot-thick".into(),
            },
            "{version}-thick",
        );
        let text = "image: ghcr.io/x/multus-cni:snapshot-thick\nother: snapshot-thick\r\n";
        let out = apply(&r, text, &at("v4.3.0")).unwrap();
        assert_eq!(
            out.text,
            "image: ghcr.io/x/multus-cni:v4.3.0-thick\nother: snapshot-thick\r\n"
        );
        assert_eq!(out.lines, vec![1]);
    }

    #[test]
    fn dockerfile_arg_changes_only_the_value() {
        let r = rw(
            RewriteKind::DockerfileArg {
                name: "VERSION".into(),
            },
            "{version}",
        );
        let text = "FROM x AS b\n  arg VERSION=\"v4.2.3\"\r\nARG VERSIONS=v1\n";
        let out = apply(&r, text, &at("v4.3.0")).unwrap();
        assert_eq!(
            out.text,
            "FROM x AS b\n  arg VERSION=\"v4.3.0\"\r\nARG VERSIONS=v1\n"
        );
        assert_eq!(out.lines, vec![2]);
        let none = apply(&r, "FROM x\nENV VERSION=v1\n", &at("v2")).unwrap();
        assert!(none.lines.is_empty());
    }

    /// kube-ovn's Dockerfile: `ARG VERSION` without the `v`, `ARG TAG` with
    /// it, both quoted, and the quotes kept.
    #[test]
    fn semver_and_version_placeholders_keep_the_quotes() {
        let text = "ARG VERSION=\"1.15.10\"\nFROM x\nARG TAG=\"v1.15.10\"\n";
        let version = rw(
            RewriteKind::DockerfileArg {
                name: "VERSION".into(),
            },
            "{semver}",
        );
        let tag = rw(
            RewriteKind::DockerfileArg { name: "TAG".into() },
            "{version}",
        );
        let out = apply(&version, text, &at("v1.15.11")).unwrap();
        let out = apply(&tag, &out.text, &at("v1.15.11")).unwrap();
        assert_eq!(
            out.text,
            "ARG VERSION=\"1.15.11\"\nFROM x\nARG TAG=\"v1.15.11\"\n"
        );
    }

    fn at(tag: &str) -> Placeholders {
        Placeholders {
            version: tag.into(),
            semver: tag.trim_start_matches('v').into(),
            commit: None,
            app_version: None,
        }
    }
}
