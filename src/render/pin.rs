//! `[[pin]]`: put the pinned image reference into every `image:` field that
//! names the pinned repository (or the upstream image it replaces).
//!
//! Sites are found by reading the YAML structure line by line: a key named
//! `image` holding a scalar, outside any block scalar. The text of a
//! `sh -c` script (a `|` block) is never a site, however much it looks like
//! one. Only the value's bytes are replaced; quotes, comments and line
//! endings stay.

use crate::config::Pin;

/// One `image:` field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// 1-based line.
    pub line: usize,
    /// The image reference as written (quotes removed).
    pub value: String,
    /// Byte range of the value (quotes included) within the whole text.
    span: (usize, usize),
    quote: Option<char>,
}

impl Site {
    /// The repository the reference names (no tag, no digest).
    pub fn repository(&self) -> &str {
        repository_of(&self.value)
    }
}

/// The repository part of `host/path/name:tag@sha256:…`.
pub fn repository_of(reference: &str) -> &str {
    let no_digest = reference.split('@').next().unwrap_or(reference);
    let last_slash = no_digest.rfind('/').map(|i| i + 1).unwrap_or(0);
    match no_digest[last_slash..].find(':') {
        Some(colon) => &no_digest[..last_slash + colon],
        None => no_digest,
    }
}

/// Every `image:` field of a YAML (or Helm-templated YAML) text.
pub fn sites(text: &str) -> Vec<Site> {
    let mut out = Vec::new();
    let mut block_indent: Option<usize> = None;
    let mut offset = 0;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let line_start = offset;
        offset += raw.len();
        let line = raw.trim_end_matches(['\n', '\r']);
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if let Some(bi) = block_indent {
            if trimmed.is_empty() || indent > bi {
                continue;
            }
            block_indent = None;
        }
        if trimmed.starts_with("{{") || trimmed.starts_with('#') || trimmed.is_empty() {
            continue;
        }
        // `- key: value` in a sequence: the key starts after the dash.
        let (key_part, key_offset) = match trimmed.strip_prefix("- ") {
            Some(rest) => (
                rest.trim_start(),
                indent + (trimmed.len() - rest.trim_start().len()),
            ),
            None => (trimmed, indent),
        };
        let Some(colon) = find_key_colon(key_part) else {
            continue;
        };
        let key = key_part[..colon].trim().trim_matches(['"', '\'']);
        let value_raw = strip_comment(&key_part[colon + 1..]);
        let value = value_raw.trim();
        if value.starts_with('|') || value.starts_with('>') {
            block_indent = Some(indent);
            continue;
        }
        if key != "image" || value.is_empty() {
            continue;
        }
        let value_off = key_offset + colon + 1 + (value_raw.len() - value_raw.trim_start().len());
        let quote = match value.chars().next() {
            Some(q @ ('"' | '\'')) if value.len() >= 2 && value.ends_with(q) => Some(q),
            _ => None,
        };
        let unquoted = if quote.is_some() {
            &value[1..value.len() - 1]
        } else {
            value
        };
        out.push(Site {
            line: i + 1,
            value: unquoted.to_string(),
            span: (line_start + value_off, line_start + value_off + value.len()),
            quote,
        });
    }
    out
}

/// The sites of `pin` in `text`.
pub fn pin_sites(text: &str, pin: &Pin) -> Vec<Site> {
    sites(text)
        .into_iter()
        .filter(|s| pin.matches(s.repository()))
        .collect()
}

/// `text` with every site of `pin` set to `reference`.
pub fn apply(text: &str, pin: &Pin, reference: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for site in pin_sites(text, pin) {
        out.push_str(&text[last..site.span.0]);
        match site.quote {
            Some(q) => out.push_str(&format!("{q}{reference}{q}")),
            None => out.push_str(reference),
        }
        last = site.span.1;
    }
    out.push_str(&text[last..]);
    out
}

/// The colon ending a plain YAML key, if this line is `key: …`.
fn find_key_colon(s: &str) -> Option<usize> {
    let first = s.chars().next()?;
    if matches!(first, '[' | '{' | '&' | '*' | '!' | '|' | '>' | '-') {
        return None;
    }
    let bytes = s.as_bytes();
    (0..bytes.len()).find(|&i| {
        bytes[i] == b':' && (i + 1 == bytes.len() || bytes[i + 1] == b' ' || bytes[i + 1] == b'\t')
    })
}

/// The value without a trailing ` # comment` (quotes respected).
fn strip_comment(v: &str) -> &str {
    let mut quote = None;
    let bytes = v.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match (quote, b) {
            (None, b'"' | b'\'') => quote = Some(b),
            (Some(q), c) if c == q => quote = None,
            (None, b'#') if i == 0 || bytes[i - 1] == b' ' || bytes[i - 1] == b'\t' => {
                return &v[..i];
            }
            _ => {}
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pin(replaces: &[&str]) -> Pin {
        Pin {
            file: "t.yml".into(),
            repository: "ghcr.io/cozystack/cozystack/multus-cni".into(),
            replaces: replaces.iter().map(|s| s.to_string()).collect(),
            line: 1,
        }
    }

    const YAML: &str = "\
containers:
  - name: a
    image: ghcr.io/k8snetworkplumbingwg/multus-cni:v4.3.0-thick
    command:
      - sh
      - -c
      - |
        echo image: ghcr.io/k8snetworkplumbingwg/multus-cni:snapshot
  - image: \"ghcr.io/cozystack/cozystack/multus-cni:v1@sha256:00\"  # pinned
    name: b
  - name: c
    image: docker.io/library/busybox:1
";

    #[test]
    fn finds_fields_but_not_script_text() {
        let s = sites(YAML);
        assert_eq!(s.iter().map(|s| s.line).collect::<Vec<_>>(), vec![3, 9, 12]);
        assert_eq!(
            s[1].value,
            "ghcr.io/cozystack/cozystack/multus-cni:v1@sha256:00"
        );
        assert_eq!(s[2].repository(), "docker.io/library/busybox");
    }

    #[test]
    fn apply_replaces_only_pin_sites() {
        let out = apply(YAML, &pin(&[]), "R:t@sha256:11");
        assert!(out.contains("    image: R:t@sha256:11\n"));
        assert!(out.contains("  - image: \"R:t@sha256:11\"  # pinned\n"));
        assert!(out.contains("echo image: ghcr.io/k8snetworkplumbingwg/multus-cni:snapshot"));
        assert!(out.contains("busybox:1"));
    }

    #[test]
    fn explicit_replaces_limits_sites() {
        let p = pin(&["ghcr.io/other/multus-cni"]);
        assert_eq!(pin_sites(YAML, &p).len(), 1);
    }

    #[test]
    fn repository_of_strips_tag_and_digest() {
        assert_eq!(
            repository_of("localhost:5000/a/b:v1@sha256:00"),
            "localhost:5000/a/b"
        );
        assert_eq!(repository_of("localhost:5000/a/b"), "localhost:5000/a/b");
        assert_eq!(repository_of("golang:1.26"), "golang");
    }
}
