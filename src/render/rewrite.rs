//! `[[rewrite]]`: the text substitutions applied after the patches.
//!
//! Two forms, both line-based and both keeping every other byte (line endings
//! included): on lines containing a needle, replace a string; or set the
//! default of a Dockerfile `ARG`.

use crate::config::{Rewrite, RewriteKind};

/// What a rewrite did to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewriteResult {
    /// The new contents.
    pub text: String,
    /// 1-based lines that matched the rewrite (changed or already right).
    pub lines: Vec<usize>,
}

/// Applies one rewrite with `{version}` = `version`.
pub fn apply(rewrite: &Rewrite, text: &str, version: &str) -> RewriteResult {
    let value = rewrite.value(version);
    let mut lines = Vec::new();
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split_inclusive('\n').enumerate() {
        match &rewrite.kind {
            RewriteKind::Lines { needle, replace } if line.contains(needle.as_str()) => {
                if line.contains(replace.as_str()) || line.contains(value.as_str()) {
                    lines.push(i + 1);
                }
                out.push_str(&line.replace(replace.as_str(), &value));
            }
            RewriteKind::DockerfileArg { name } => match set_arg(line, name, &value) {
                Some(new) => {
                    lines.push(i + 1);
                    out.push_str(&new);
                }
                None => out.push_str(line),
            },
            _ => out.push_str(line),
        }
    }
    RewriteResult { text: out, lines }
}

/// `ARG <name>=<old>` → `ARG <name>=<value>`, keeping indentation, the
/// instruction's case, quotes and the line ending. `None` if the line is not
/// that ARG.
pub fn set_arg(line: &str, name: &str, value: &str) -> Option<String> {
    let (body, ending) = split_ending(line);
    let arg = parse_arg(body, name)?;
    let new_value = match arg.quote {
        Some(q) => format!("{q}{value}{q}"),
        None => value.to_string(),
    };
    Some(format!(
        "{}{new_value}{}{ending}",
        &body[..arg.start],
        &body[arg.end..]
    ))
}

/// The value of `ARG <name>=` in a Dockerfile, with its 1-based line.
pub fn arg_value(text: &str, name: &str) -> Option<(usize, String)> {
    text.lines().enumerate().find_map(|(i, line)| {
        let arg = parse_arg(line, name)?;
        let raw = &line[arg.start..arg.end];
        let value = match arg.quote {
            Some(_) => &raw[1..raw.len() - 1],
            None => raw,
        };
        Some((i + 1, value.to_string()))
    })
}

/// Where the value of `ARG <name>=value` sits in a line (without its ending).
struct ArgSpan {
    start: usize,
    end: usize,
    quote: Option<char>,
}

fn parse_arg(body: &str, name: &str) -> Option<ArgSpan> {
    let rest = body.trim_start();
    if rest.len() < 4
        || !rest.is_char_boundary(3)
        || !rest[..3].eq_ignore_ascii_case("ARG")
        || !rest[3..].starts_with([' ', '\t'])
    {
        return None;
    }
    let after = rest[3..].trim_start();
    let eq = after.find('=')?;
    if after[..eq] != *name {
        return None;
    }
    let start = body.len() - after.len() + eq + 1;
    let value = body[start..].trim_end();
    let quote = match value.chars().next() {
        Some(q @ ('"' | '\'')) if value.len() >= 2 && value.ends_with(q) => Some(q),
        _ => None,
    };
    Some(ArgSpan {
        start,
        end: start + value.len(),
        quote,
    })
}

fn split_ending(line: &str) -> (&str, &str) {
    if let Some(b) = line.strip_suffix("\r\n") {
        (b, "\r\n")
    } else if let Some(b) = line.strip_suffix('\n') {
        (b, "\n")
    } else {
        (line, "")
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
        let out = apply(&r, text, "v4.3.0");
        assert_eq!(
            out.text,
            "image: ghcr.io/x/multus-cni:v4.3.0-thick\nother: snapshot-thick\r\n"
        );
        assert_eq!(out.lines, vec![1]);
    }

    #[test]
    fn dockerfile_arg_keeps_everything_else() {
        assert_eq!(
            set_arg("ARG VERSION=v4.2.3\n", "VERSION", "v4.3.0").unwrap(),
            "ARG VERSION=v4.3.0\n"
        );
        assert_eq!(
            set_arg("  arg VERSION=\"v1\"  \r\n", "VERSION", "v2").unwrap(),
            "  arg VERSION=\"v2\"  \r\n"
        );
        assert_eq!(set_arg("ARG VERSIONS=v1\n", "VERSION", "v2"), None);
        assert_eq!(set_arg("ARG VERSION\n", "VERSION", "v2"), None);
        assert_eq!(set_arg("ENV VERSION=v1\n", "VERSION", "v2"), None);
    }

    #[test]
    fn arg_value_reads_back() {
        let text = "FROM x\nARG VERSION=\"v4.3.0\"\n";
        assert_eq!(arg_value(text, "VERSION"), Some((2, "v4.3.0".into())));
        assert_eq!(arg_value(text, "OTHER"), None);
    }
}
