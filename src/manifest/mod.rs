//! Read rendered Kubernetes manifests, Helm template lines and all, by parsing.
//!
//! `revendor check` asserts structure on files such as a chart's
//! `templates/multus-daemonset-thick.yml`: a field of a selected document, a
//! key of JSON held in a field, a key on every container. Grepping text cannot
//! tell a key from the same words in a script or a comment, so this parses:
//!
//! 1. `template::mask` blanks whole-line template actions (so the content of
//!    every conditional branch is read) and masks inline ones, keeping every
//!    line number and column;
//! 2. [`parse_documents`] parses the multi-document YAML into trees that
//!    keep the line of every node (duplicate keys from several branches kept);
//! 3. [`Document`] answers field, JSON, container and image questions, each
//!    with a 1-based line; [`Contract`] turns declared assertions into
//!    [`Violation`]s.
//!
//! Everything here is in memory; the caller reads the file.

mod contract;
mod json;
mod node;
mod template;
mod workload;

use std::ops::Range;
use std::sync::Arc;

pub use contract::{Contract, Select, Violation};
pub use node::{Found, Node, Scalar, ScalarStyle, Value, parse_documents};
pub use workload::{Container, ContainerKind, ImageField};

/// Why a manifest or one of its fields could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The text (after template masking) is not YAML.
    #[error("invalid YAML at line {line}, column {col}: {message}")]
    Yaml {
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        col: usize,
        /// The parser's description.
        message: String,
    },
    /// A template action that cannot be read without rendering.
    #[error("unreadable template action at line {line}: {message}")]
    Template {
        /// 1-based line where the action starts.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// The key path does not exist in the document.
    #[error("no field `{path}` in the document at line {line}")]
    MissingField {
        /// The path as written, keys joined by dots.
        path: String,
        /// The document's first line.
        line: usize,
    },
    /// The field exists but holds a mapping or a sequence where text is needed.
    #[error("field `{path}` at line {line} is not a string")]
    NotScalar {
        /// The field's path.
        path: String,
        /// The field's line.
        line: usize,
    },
    /// The field's text is not JSON.
    #[error("field `{path}` is not valid JSON at line {line}: {message}")]
    Json {
        /// The field's path.
        path: String,
        /// The line of the JSON error when it can be placed, else the field's.
        line: usize,
        /// serde_json's description.
        message: String,
    },
    /// The JSON parses but lacks the key path.
    #[error("the JSON in field `{path}` at line {line} has no key `{key}`")]
    MissingJsonKey {
        /// The field's path.
        path: String,
        /// The JSON key path, joined by dots.
        key: String,
        /// The field's line.
        line: usize,
    },
}

impl Error {
    /// The 1-based line the error points at.
    pub fn line(&self) -> usize {
        match self {
            Error::Yaml { line, .. }
            | Error::Template { line, .. }
            | Error::MissingField { line, .. }
            | Error::NotScalar { line, .. }
            | Error::Json { line, .. }
            | Error::MissingJsonKey { line, .. } => *line,
        }
    }
}

/// A parsed multi-document manifest.
#[derive(Debug, Clone)]
pub struct Manifest {
    documents: Vec<Document>,
}

/// One YAML document of a manifest (one Kubernetes object, usually).
#[derive(Debug, Clone)]
pub struct Document {
    /// 0-based position among the file's documents.
    pub index: usize,
    /// The document's tree; scalars hold the original template text.
    pub root: Node,
    source: Arc<str>,
}

/// A value read from JSON held in a YAML field.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonField {
    /// The value serde_json parsed at the key path.
    pub value: serde_json::Value,
    /// The line of the JSON key inside a literal block (`|`) field; for
    /// other scalar styles, where JSON lines cannot be mapped back, the
    /// field's line.
    pub line: usize,
    /// The line of the YAML field holding the JSON.
    pub field_line: usize,
}

impl Manifest {
    /// Parse `text`, a YAML stream that may hold Helm template actions.
    pub fn parse(text: &str) -> Result<Self, Error> {
        let masked = template::mask(text)?;
        let source: Arc<str> = Arc::from(text);
        let documents = node::parse_documents(&masked.text)?
            .into_iter()
            .enumerate()
            .map(|(index, mut root)| {
                restore(&mut root, &masked);
                Document {
                    index,
                    root,
                    source: Arc::clone(&source),
                }
            })
            .collect();
        Ok(Self { documents })
    }

    /// Parse `text`, YAML that Helm already rendered: no template masking,
    /// so a `{{` that a template printed literally is read as text.
    pub fn parse_rendered(text: &str) -> Result<Self, Error> {
        let source: Arc<str> = Arc::from(text);
        let documents = node::parse_documents(text)?
            .into_iter()
            .enumerate()
            .map(|(index, root)| Document {
                index,
                root,
                source: Arc::clone(&source),
            })
            .collect();
        Ok(Self { documents })
    }

    /// Every document, in file order.
    pub fn documents(&self) -> &[Document] {
        &self.documents
    }

    /// Documents whose `kind` equals `kind` and, when given, whose
    /// `metadata.name` equals `name`.
    pub fn select<'a>(
        &'a self,
        kind: &'a str,
        name: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Document> + 'a {
        self.documents
            .iter()
            .filter(move |d| d.kind() == Some(kind) && name.is_none_or(|n| d.name() == Some(n)))
    }

    /// Every `image:` of every container and init container of every
    /// workload document, in file order.
    pub fn images(&self) -> Vec<ImageField> {
        self.documents.iter().flat_map(Document::images).collect()
    }
}

fn restore(node: &mut Node, masked: &template::Masked) {
    match &mut node.value {
        Value::Scalar(s) => s.text = masked.restore(&s.text),
        Value::Map(pairs) => {
            for (k, v) in pairs {
                restore(k, masked);
                restore(v, masked);
            }
        }
        Value::Seq(items) => items.iter_mut().for_each(|n| restore(n, masked)),
    }
}

impl Document {
    /// The document's `kind`, if it is a mapping with a string kind.
    pub fn kind(&self) -> Option<&str> {
        self.root.get("kind").and_then(Node::as_str)
    }

    /// The document's `metadata.name`.
    pub fn name(&self) -> Option<&str> {
        self.root
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Node::as_str)
    }

    /// The document's first line.
    pub fn line(&self) -> usize {
        self.root.line
    }

    /// Every value at `path` (one per template branch that sets it).
    pub fn field<S: AsRef<str>>(&self, path: &[S]) -> Vec<Found<'_>> {
        self.root.lookup(path)
    }

    /// The text of the first value at `path`, with the line of its key.
    pub fn field_str<S: AsRef<str>>(&self, path: &[S]) -> Result<(&str, usize), Error> {
        let found = self.field(path);
        let first = found.first().ok_or_else(|| Error::MissingField {
            path: display_path(path),
            line: self.line(),
        })?;
        let text = first.node.as_str().ok_or_else(|| Error::NotScalar {
            path: display_path(path),
            line: first.line,
        })?;
        Ok((text, first.line))
    }

    /// Parse every value at `field` as JSON and read `key` (a path of object
    /// keys) from each; fails on the first field that is missing, not text,
    /// not JSON, or lacks the key.
    pub fn json<S: AsRef<str>>(&self, field: &[S], key: &[S]) -> Result<Vec<JsonField>, Error> {
        let found = self.field(field);
        if found.is_empty() {
            return Err(Error::MissingField {
                path: display_path(field),
                line: self.line(),
            });
        }
        found
            .iter()
            .map(|f| self.json_at(f, &display_path(field), key))
            .collect()
    }

    /// Read `key` from the JSON held by one found field; `path` names the
    /// field in errors.
    pub fn json_at<S: AsRef<str>>(
        &self,
        found: &Found<'_>,
        path: &str,
        key: &[S],
    ) -> Result<JsonField, Error> {
        let text = found.node.as_str().ok_or_else(|| Error::NotScalar {
            path: path.to_owned(),
            line: found.line,
        })?;
        let first_line = self.literal_first_line(found.node);
        let parsed: serde_json::Value = serde_json::from_str(text).map_err(|e| Error::Json {
            path: path.to_owned(),
            line: first_line.map_or(found.line, |l| l + e.line().saturating_sub(1)),
            message: e.to_string(),
        })?;
        let value = key
            .iter()
            .try_fold(&parsed, |v, k| v.as_object()?.get(k.as_ref()))
            .ok_or_else(|| Error::MissingJsonKey {
                path: path.to_owned(),
                key: display_path(key),
                line: found.line,
            })?;
        let line = first_line
            .zip(json::locate(text, key))
            .map(|(first, at)| first + text[..at].matches('\n').count())
            .filter(|line| {
                let name = key.last().map_or("", |k| k.as_ref());
                self.source_line(*line)
                    .is_some_and(|l| l.contains(&format!("\"{name}\"")))
            })
            .unwrap_or(found.line);
        Ok(JsonField {
            value: value.clone(),
            line,
            field_line: found.line,
        })
    }

    /// The source line holding the first content line of a literal block
    /// scalar, whose lines map one to one onto the value's lines.
    ///
    /// The parser marks a block scalar at its first non-empty content line;
    /// leading empty lines are in the value as `\n`s before it.
    fn literal_first_line(&self, node: &Node) -> Option<usize> {
        match &node.value {
            Value::Scalar(s) if s.style == ScalarStyle::Literal => {
                let leading = s.text.len() - s.text.trim_start_matches('\n').len();
                node.line.checked_sub(leading)
            }
            _ => None,
        }
    }

    /// The text of 1-based line `line` of the original source.
    pub fn source_line(&self, line: usize) -> Option<&str> {
        self.source.lines().nth(line.checked_sub(1)?)
    }

    /// The byte range of a single-line scalar's text within its source line
    /// (quotes excluded), or `None` when the value is not written verbatim
    /// there (escapes, folding, block scalars).
    pub fn scalar_span(&self, node: &Node) -> Option<Range<usize>> {
        let Value::Scalar(s) = &node.value else {
            return None;
        };
        let line = self.source_line(node.line)?;
        let start = match line.char_indices().nth(node.col) {
            Some((i, _)) => i,
            None if node.col == line.chars().count() => line.len(),
            None => return None,
        };
        let start = match s.style {
            ScalarStyle::Plain => start,
            ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => start + 1,
            ScalarStyle::Literal | ScalarStyle::Folded => return None,
        };
        let end = start + s.text.len();
        let verbatim = line.get(start..end) == Some(s.text.as_str());
        let closed = match s.style {
            ScalarStyle::SingleQuoted => line.get(end..end + 1) == Some("'"),
            ScalarStyle::DoubleQuoted => line.get(end..end + 1) == Some("\""),
            _ => true,
        };
        (verbatim && closed).then_some(start..end)
    }
}

/// A key path for messages: keys joined by dots, a key holding a dot quoted.
pub(crate) fn display_path<S: AsRef<str>>(path: &[S]) -> String {
    path.iter()
        .map(|k| {
            let k = k.as_ref();
            if k.contains('.') {
                format!("\"{k}\"")
            } else {
                k.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = "\
kind: ConfigMap
metadata:
  name: cfg
data:
  conf.json: |
    {
        \"master\": \"a.conflist\",
        \"other\": 1
    }
  inline: '{\"master\": \"b\"}'
---
kind: ConfigMap
metadata:
  name: second
";

    #[test]
    fn selects_by_kind_and_name() {
        let m = Manifest::parse(CONFIG).unwrap();
        assert_eq!(m.select("ConfigMap", None).count(), 2);
        let names: Vec<_> = m
            .select("ConfigMap", Some("second"))
            .map(|d| (d.index, d.line()))
            .collect();
        assert_eq!(names, [(1, 12)]);
        assert_eq!(m.select("Secret", None).count(), 0);
    }

    #[test]
    fn json_key_line_is_the_key_inside_a_literal_block() {
        let m = Manifest::parse(CONFIG).unwrap();
        let doc = m.select("ConfigMap", Some("cfg")).next().unwrap();
        let got = doc.json(&["data", "conf.json"], &["master"]).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].value, serde_json::json!("a.conflist"));
        assert_eq!((got[0].line, got[0].field_line), (7, 5));
    }

    #[test]
    fn json_in_a_quoted_field_falls_back_to_the_field_line() {
        let m = Manifest::parse(CONFIG).unwrap();
        let doc = &m.documents()[0];
        let got = doc.json(&["data", "inline"], &["master"]).unwrap();
        assert_eq!(got[0].value, serde_json::json!("b"));
        assert_eq!(got[0].line, 10);
    }

    #[test]
    fn json_errors_name_path_and_line() {
        let text = "data:\n  c: |\n    {\n      \"a\": 1,\n    }\n";
        let m = Manifest::parse(text).unwrap();
        let err = m.documents()[0].json(&["data", "c"], &["a"]).unwrap_err();
        assert!(matches!(err, Error::Json { line: 5, .. }), "{err:?}");
        let err = m.documents()[0].json(&["data", "x"], &["a"]).unwrap_err();
        assert!(
            matches!(err, Error::MissingField { line: 1, .. }),
            "{err:?}"
        );
        let m = Manifest::parse("data:\n  c: '{\"b\": 1}'\n").unwrap();
        let err = m.documents()[0].json(&["data", "c"], &["a"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the JSON in field `data.c` at line 2 has no key `a`"
        );
    }

    #[test]
    fn field_str_reads_text_and_rejects_maps() {
        let m = Manifest::parse(CONFIG).unwrap();
        let doc = &m.documents()[0];
        assert_eq!(doc.field_str(&["metadata", "name"]).unwrap(), ("cfg", 3));
        let err = doc.field_str(&["data"]).unwrap_err();
        assert!(matches!(err, Error::NotScalar { line: 4, .. }), "{err:?}");
    }

    #[test]
    fn rendered_text_is_read_without_masking() {
        let text = "kind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  t: '{{ .Kept }}'\n";
        let m = Manifest::parse_rendered(text).unwrap();
        let doc = &m.documents()[0];
        assert_eq!(doc.field_str(&["data", "t"]).unwrap(), ("{{ .Kept }}", 5));
    }

    #[test]
    fn template_values_read_back_as_written() {
        let text = "kind: Pod\nmetadata:\n  name: {{ .Release.Name }}-pod\n";
        let m = Manifest::parse(text).unwrap();
        assert_eq!(m.documents()[0].name(), Some("{{ .Release.Name }}-pod"));
    }

    #[test]
    fn scalar_spans_cover_the_text_only() {
        let text = "a: plain\nb: 'single'\nc: \"dou\\\"ble\"\nd: ü{{ .X }}\n";
        let m = Manifest::parse(text).unwrap();
        let doc = &m.documents()[0];
        let span = |k: &str| doc.scalar_span(doc.root.get(k).unwrap());
        assert_eq!(span("a"), Some(3..8));
        assert_eq!(span("b"), Some(4..10));
        assert_eq!(span("c"), None);
        let line = doc.source_line(4).unwrap();
        assert_eq!(&line[span("d").unwrap()], "ü{{ .X }}");
    }

    #[test]
    fn display_path_quotes_dotted_keys() {
        assert_eq!(
            display_path(&["data", "daemon-config.json"]),
            "data.\"daemon-config.json\""
        );
    }
}
