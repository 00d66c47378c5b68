//! `[[rewrite]]`: the text substitutions applied after the patches.
//!
//! Two forms, both line-based and both keeping every other byte (line endings
//! included): on lines containing a needle, replace a string; or set the
//! default of a Dockerfile `ARG`.

use crate::config::{Rewrite, RewriteKind};
use crate::dockerfile::Dockerfile;

/// What a rewrite did to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewriteResult {
    /// The new contents.
    pub text: String,
    /// 1-based lines that matched the rewrite (changed or already right).
    pub lines: Vec<usize>,
}

/// Applies one rewrite with `{version}` = `version`.
///
/// A Dockerfile `ARG` is found by parsing the Dockerfile (continuations,
/// stages, quotes), not by matching lines, and only the value's bytes change.
pub fn apply(
    rewrite: &Rewrite,
    text: &str,
    version: &str,
) -> Result<RewriteResult, crate::dockerfile::Error> {
    let value = rewrite.value(version);
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
        let out = apply(&r, text, "v4.3.0").unwrap();
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
        let out = apply(&r, text, "v4.3.0").unwrap();
        assert_eq!(
            out.text,
            "FROM x AS b\n  arg VERSION=\"v4.3.0\"\r\nARG VERSIONS=v1\n"
        );
        assert_eq!(out.lines, vec![2]);
        let none = apply(&r, "FROM x\nENV VERSION=v1\n", "v2").unwrap();
        assert!(none.lines.is_empty());
    }
}
