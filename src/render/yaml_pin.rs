//! `[[pin]] yaml = …`: the pinned image written at YAML keys (a chart's
//! values.yaml), keeping every other byte and comment of the file.
//!
//! 1. [`values`] says what each key gets for `repository:tag@sha256:<d>`:
//!    one key, `<tag>@sha256:<d>`; split keys, the repository, the tag
//!    (`<tag>@sha256:<d>` when there is no digest key, the tag alone when
//!    there is) and `sha256:<d>`.
//! 2. [`sites`] finds each key by parsing ([`Manifest::parse`]: Helm lines
//!    tolerated, every document searched), with the byte span of its
//!    scalar on its line.
//! 3. [`apply`] replaces those spans only: the file is never serialized
//!    again, so quotes, comments, ordering and line endings stay.
//!
//! [`read`] turns the keys back into a reference, which is how a package
//! adopted without a lock tells what it pins.

use std::ops::Range;

use crate::config::YamlPin;
use crate::image::Reference;
use crate::manifest::{self, Manifest};

/// Why a pin's keys cannot be read or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The file is not readable as (Helm-templated) YAML.
    #[error(transparent)]
    Manifest(#[from] manifest::Error),
    /// No document has the key.
    #[error("no key `{key}` (the longest part of it there is at line {line})")]
    MissingKey {
        /// The dotted key.
        key: String,
        /// The line of its longest existing prefix.
        line: usize,
    },
    /// The key holds a mapping, a sequence, or text that is not on one line
    /// as written (escapes, a block scalar).
    #[error("the key `{key}` at line {line} does not hold text written on one line")]
    NotInPlace {
        /// The dotted key.
        key: String,
        /// The key's line.
        line: usize,
    },
    /// The reference to write is not `repository:tag@sha256:<digest>`.
    #[error("`{0}` is not a reference with a tag and a digest")]
    Reference(String),
}

impl Error {
    /// The 1-based line the error points at (1 for a bad reference).
    pub fn line(&self) -> usize {
        match self {
            Error::Manifest(e) => e.line(),
            Error::MissingKey { line, .. } | Error::NotInPlace { line, .. } => *line,
            Error::Reference(_) => 1,
        }
    }
}

/// One occurrence of a key: its value and where the value's text is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// 1-based line of the key.
    pub line: usize,
    /// The value as parsed.
    pub value: String,
    /// Byte range of the value's text (quotes excluded) in the whole file.
    span: Option<Range<usize>>,
}

/// What each key of `pin` gets for `reference`, in the order of
/// [`YamlPin::keys`].
pub fn values<'p>(pin: &'p YamlPin, reference: &str) -> Result<Vec<(&'p str, String)>, Error> {
    let bad = || Error::Reference(reference.to_owned());
    let parsed = Reference::parse(reference).map_err(|_| bad())?;
    let (Some(tag), Some(digest)) = (parsed.tag(), parsed.digest()) else {
        return Err(bad());
    };
    let joined = format!("{tag}@{digest}");
    Ok(match pin {
        YamlPin::Joined(key) => vec![(key.as_str(), joined)],
        YamlPin::Split {
            repository,
            tag: tag_key,
            digest: None,
        } => vec![
            (repository.as_str(), parsed.name().to_owned()),
            (tag_key.as_str(), joined),
        ],
        YamlPin::Split {
            repository,
            tag: tag_key,
            digest: Some(digest_key),
        } => vec![
            (repository.as_str(), parsed.name().to_owned()),
            (tag_key.as_str(), tag.to_owned()),
            (digest_key.as_str(), digest.to_string()),
        ],
    })
}

/// Every occurrence of the dotted `key` in `text`, in line order.
pub fn sites(text: &str, key: &str) -> Result<Vec<Site>, Error> {
    let manifest = Manifest::parse(text)?;
    let path: Vec<&str> = key.split('.').collect();
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let mut out = Vec::new();
    let mut deepest = 1;
    for doc in manifest.documents() {
        deepest = deepest.max(
            (0..path.len())
                .rev()
                .find_map(|n| doc.field(&path[..n]).first().map(|f| f.line))
                .unwrap_or(1),
        );
        for found in doc.field(&path) {
            let Some(value) = found.node.as_str() else {
                return Err(Error::NotInPlace {
                    key: key.to_owned(),
                    line: found.line,
                });
            };
            let span = doc.scalar_span(found.node).and_then(|s| {
                let start = *starts.get(found.node.line.checked_sub(1)?)?;
                Some(start + s.start..start + s.end)
            });
            out.push(Site {
                line: found.line,
                value: value.to_owned(),
                span,
            });
        }
    }
    if out.is_empty() {
        return Err(Error::MissingKey {
            key: key.to_owned(),
            line: deepest,
        });
    }
    Ok(out)
}

/// `text` with every key of `pin` set to its value for `reference`.
pub fn apply(text: &str, pin: &YamlPin, reference: &str) -> Result<String, Error> {
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    for (key, value) in values(pin, reference)? {
        for site in sites(text, key)? {
            let span = site.span.ok_or_else(|| Error::NotInPlace {
                key: key.to_owned(),
                line: site.line,
            })?;
            edits.push((span, value.clone()));
        }
    }
    edits.sort_by_key(|(span, _)| span.start);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (span, value) in edits {
        out.push_str(&text[at..span.start]);
        out.push_str(&value);
        at = span.end;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

/// The lines of every key of `pin`, for messages and `image pin`'s report.
pub fn lines(text: &str, pin: &YamlPin) -> Result<Vec<usize>, Error> {
    let mut out = Vec::new();
    for key in pin.keys() {
        out.extend(sites(text, key)?.into_iter().map(|s| s.line));
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The reference the keys of `pin` hold, `repository` standing for the
/// repository where no key holds it; `None` when they hold no pin (no
/// digest), or their occurrences disagree.
pub fn read(text: &str, pin: &YamlPin, repository: &str) -> Result<Option<String>, Error> {
    let one = |key: &str| -> Result<Option<String>, Error> {
        let found = sites(text, key)?;
        let first = found[0].value.clone();
        Ok(found.iter().all(|s| s.value == first).then_some(first))
    };
    let reference = match pin {
        YamlPin::Joined(key) => one(key)?.map(|tag| format!("{repository}:{tag}")),
        YamlPin::Split {
            repository,
            tag,
            digest,
        } => {
            let (Some(repository), Some(tag)) = (one(repository)?, one(tag)?) else {
                return Ok(None);
            };
            match digest {
                Some(key) => one(key)?.map(|d| format!("{repository}:{tag}@{d}")),
                None => Some(format!("{repository}:{tag}")),
            }
        }
    };
    Ok(reference
        .filter(|r| Reference::parse(r).is_ok_and(|r| r.tag().is_some() && r.digest().is_some())))
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";

    fn reference() -> String {
        format!("ghcr.io/cozystack/cozystack/kamaji:v1.0.0@{D}")
    }

    const VALUES: &str = "\
# top comment
kamaji:
  image:
    pullPolicy: IfNotPresent   # kept
    repository: \"clastix/kamaji\"
    tag: 'edge-25.7.1'
    digest: \"\"
global:
  images:
    kubeovn:
      repository: kubeovn
      tag: v1.15.10@sha256:0000000000000000000000000000000000000000000000000000000000000000
";

    fn changed_lines(before: &str, after: &str) -> Vec<usize> {
        before
            .lines()
            .zip(after.lines())
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .map(|(i, _)| i + 1)
            .collect()
    }

    #[test]
    fn a_joined_key_gets_tag_and_digest() {
        let pin = YamlPin::Joined("global.images.kubeovn.tag".into());
        let out = apply(VALUES, &pin, &reference()).unwrap();
        assert!(out.contains(&format!("      tag: v1.0.0@{D}\n")), "{out}");
        assert_eq!(changed_lines(VALUES, &out), [12]);
        assert_eq!(
            read(&out, &pin, "ghcr.io/cozystack/cozystack/kamaji").unwrap(),
            Some(reference())
        );
    }

    #[test]
    fn split_keys_keep_their_quotes_and_comments() {
        let pin = YamlPin::Split {
            repository: "kamaji.image.repository".into(),
            tag: "kamaji.image.tag".into(),
            digest: None,
        };
        let out = apply(VALUES, &pin, &reference()).unwrap();
        assert!(
            out.contains("    repository: \"ghcr.io/cozystack/cozystack/kamaji\"\n"),
            "{out}"
        );
        assert!(out.contains(&format!("    tag: 'v1.0.0@{D}'\n")), "{out}");
        assert_eq!(changed_lines(VALUES, &out), [5, 6]);
        assert_eq!(read(&out, &pin, "x").unwrap(), Some(reference()));

        let pin = YamlPin::Split {
            repository: "kamaji.image.repository".into(),
            tag: "kamaji.image.tag".into(),
            digest: Some("kamaji.image.digest".into()),
        };
        let out = apply(VALUES, &pin, &reference()).unwrap();
        assert!(out.contains("    tag: 'v1.0.0'\n"), "{out}");
        assert!(out.contains(&format!("    digest: \"{D}\"\n")), "{out}");
        assert_eq!(changed_lines(VALUES, &out), [5, 6, 7]);
        assert_eq!(read(&out, &pin, "x").unwrap(), Some(reference()));
        assert_eq!(read(VALUES, &pin, "x").unwrap(), None);
        assert_eq!(lines(&out, &pin).unwrap(), [5, 6, 7]);
    }

    #[test]
    fn a_missing_key_and_a_mapping_are_errors_at_their_line() {
        let err = apply(
            VALUES,
            &YamlPin::Joined("kamaji.image.name".into()),
            &reference(),
        )
        .unwrap_err();
        assert_eq!(
            err,
            Error::MissingKey {
                key: "kamaji.image.name".into(),
                line: 3
            }
        );
        let err = apply(
            VALUES,
            &YamlPin::Joined("kamaji.image".into()),
            &reference(),
        )
        .unwrap_err();
        assert_eq!(err.line(), 3);
        let err = apply(VALUES, &YamlPin::Joined("kamaji.image.tag".into()), "x:v1").unwrap_err();
        assert!(matches!(err, Error::Reference(_)), "{err:?}");
    }
}
