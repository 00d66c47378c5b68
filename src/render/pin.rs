//! `[[pin]]`: put the pinned image reference into every container `image:`
//! that names the pinned repository (or the upstream image it replaces).
//!
//! Sites are found by parsing, not by matching lines:
//!
//! 1. lines of diff3 conflict markers (`<<<<<<<`, `|||||||`, `=======`,
//!    `>>>>>>>`, left by `update --keep-conflicts`) are blanked, so every side
//!    of a conflict is read like a template branch;
//! 2. [`Manifest::parse`] reads the YAML, Helm lines and all, and
//!    [`Manifest::images`] gives the `image:` of every container and init
//!    container of every workload document, with the value's exact span;
//! 3. only the value's bytes are replaced: quotes, comments and line endings
//!    stay.
//!
//! The text of a `sh -c` script, a comment or an annotation is never a site,
//! however much it looks like one: it is not a container's `image` field.

use std::ops::Range;

use crate::config::Pin;
use crate::manifest::{self, Manifest};

/// Why the sites of a file could not be found or rewritten.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The file is not readable as (Helm-templated) YAML.
    #[error(transparent)]
    Manifest(#[from] manifest::Error),
    /// A site holds the value in a form that cannot be replaced in place
    /// (escapes, a block scalar).
    #[error(
        "the image at line {line} (`{value}`) is not written on one line as plain or quoted text"
    )]
    NotInPlace {
        /// 1-based line of the `image:` key.
        line: usize,
        /// The value as parsed.
        value: String,
    },
}

impl Error {
    /// The 1-based line the error points at.
    pub fn line(&self) -> usize {
        match self {
            Error::Manifest(e) => e.line(),
            Error::NotInPlace { line, .. } => *line,
        }
    }
}

/// One container `image:` field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// 1-based line.
    pub line: usize,
    /// The image reference as written (quotes removed).
    pub value: String,
    /// Byte range of the value (quotes excluded) within the whole text, when
    /// it is written verbatim on its line.
    span: Option<Range<usize>>,
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

/// Every container `image:` field of a YAML (or Helm-templated YAML) text,
/// in line order.
pub fn sites(text: &str) -> Result<Vec<Site>, Error> {
    let masked = mask_conflict_markers(text);
    let manifest = Manifest::parse(&masked)?;
    let starts = line_starts(text);
    let mut out: Vec<Site> = manifest
        .images()
        .into_iter()
        .map(|image| Site {
            span: image.span.and_then(|s| {
                let start = *starts.get(image.line.checked_sub(1)?)?;
                Some(start + s.start..start + s.end)
            }),
            line: image.line,
            value: image.value,
        })
        .collect();
    out.sort_by_key(|s| s.line);
    out.dedup_by_key(|s| s.line);
    Ok(out)
}

/// The sites of `pin` in `text`.
pub fn pin_sites(text: &str, pin: &Pin) -> Result<Vec<Site>, Error> {
    Ok(sites(text)?
        .into_iter()
        .filter(|s| pin.matches(s.repository()))
        .collect())
}

/// `text` with every site of `pin` set to `reference`.
pub fn apply(text: &str, pin: &Pin, reference: &str) -> Result<String, Error> {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for site in pin_sites(text, pin)? {
        let span = site.span.ok_or(Error::NotInPlace {
            line: site.line,
            value: site.value.clone(),
        })?;
        out.push_str(&text[last..span.start]);
        out.push_str(reference);
        last = span.end;
    }
    out.push_str(&text[last..]);
    Ok(out)
}

/// `text` with every diff3 marker line replaced by blanks of the same length.
fn mask_conflict_markers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        if is_conflict_marker(content) {
            out.push_str(&" ".repeat(content.len()));
            out.push_str(&line[content.len()..]);
        } else {
            out.push_str(line);
        }
    }
    out
}

/// Whether a line is a diff3 marker: seven marker characters, alone or
/// followed by a space and a label.
fn is_conflict_marker(line: &str) -> bool {
    ["<<<<<<<", "|||||||", "=======", ">>>>>>>"]
        .iter()
        .any(|m| {
            line.strip_prefix(m)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
        })
}

/// The byte offset where each line starts.
fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pin(replaces: &[&str]) -> Pin {
        Pin {
            image: None,
            file: "t.yml".into(),
            yaml: None,
            repository: "ghcr.io/cozystack/cozystack/multus-cni".into(),
            replaces: replaces.iter().map(|s| s.to_string()).collect(),
            line: 1,
        }
    }

    const YAML: &str = "\
kind: DaemonSet
metadata:
  name: ds
  annotations:
    image: ghcr.io/other/multus-cni:v1
spec:
  template:
    spec:
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
      initContainers:
{{- if .Values.extra }}
        - name: c
          image: docker.io/library/busybox:1
{{- end }}
        - name: d
          image: 'ghcr.io/k8snetworkplumbingwg/multus-cni:v4.3.0-thick'\r
";

    #[test]
    fn finds_container_fields_but_not_script_or_annotation_text() {
        let s = sites(YAML).unwrap();
        assert_eq!(
            s.iter().map(|s| s.line).collect::<Vec<_>>(),
            vec![11, 17, 22, 25]
        );
        assert_eq!(
            s[1].value,
            "ghcr.io/cozystack/cozystack/multus-cni:v1@sha256:00"
        );
        assert_eq!(s[2].repository(), "docker.io/library/busybox");
    }

    #[test]
    fn apply_replaces_only_pin_sites_keeping_quotes_and_comments() {
        let out = apply(YAML, &pin(&[]), "R:t@sha256:11").unwrap();
        assert!(out.contains("          image: R:t@sha256:11\n"), "{out}");
        assert!(out.contains("        - image: \"R:t@sha256:11\"  # pinned\n"));
        assert!(out.contains("          image: 'R:t@sha256:11'\r\n"));
        assert!(out.contains("echo image: ghcr.io/k8snetworkplumbingwg/multus-cni:snapshot"));
        assert!(out.contains("    image: ghcr.io/other/multus-cni:v1\n"));
        assert!(out.contains("busybox:1"));
        assert_eq!(out.lines().count(), YAML.lines().count());
    }

    #[test]
    fn explicit_replaces_limits_sites() {
        let p = pin(&["ghcr.io/other/multus-cni"]);
        assert_eq!(pin_sites(YAML, &p).unwrap().len(), 1);
    }

    #[test]
    fn every_side_of_a_conflict_is_pinned() {
        let text = "\
kind: Pod
spec:
  containers:
<<<<<<< patched v1
    - name: a
      image: x/multus-cni:old
||||||| v1
    - name: a
      image: x/multus-cni:base
=======
    - name: a
      image: x/multus-cni:new
>>>>>>> v2
";
        let out = apply(text, &pin(&[]), "R@sha256:11").unwrap();
        assert_eq!(out.matches("image: R@sha256:11\n").count(), 3, "{out}");
        assert!(out.contains("<<<<<<< patched v1\n") && out.contains(">>>>>>> v2\n"));
    }

    #[test]
    fn unreadable_yaml_and_escaped_values_are_errors() {
        let err = sites("kind: Pod\nspec: [\n").unwrap_err();
        assert!(matches!(err, Error::Manifest(_)), "{err:?}");
        let text = "kind: Pod\nspec:\n  containers:\n    - image: \"x/multus-\\u0063ni:v1\"\n";
        let err = apply(text, &pin(&[]), "R").unwrap_err();
        assert_eq!(
            err,
            Error::NotInPlace {
                line: 4,
                value: "x/multus-cni:v1".into()
            }
        );
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
