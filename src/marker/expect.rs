//! `expect = { file = …, yaml = "a.b.c", strip-digest = … }`: read the value a
//! marker must equal from a YAML file of the repository.
//!
//! The key path is vendor.toml's dotted string split on dots, so a key that
//! itself holds a dot cannot be named. Every document of the file is
//! searched; the key must resolve to one text value.

use super::{Error, LineValue};
use crate::image::Digest;
use crate::manifest::{self, Node};

/// Read the scalar at dotted `key` of YAML `text`; with `strip`, drop a
/// trailing `@sha256:<64 hex>` from it (see [`strip_digest`]).
pub fn expect_yaml(text: &str, key: &str, strip: bool) -> Result<LineValue, Error> {
    let path: Vec<&str> = key.split('.').collect();
    let docs = manifest::parse_documents(text)?;
    let found: Vec<_> = docs.iter().flat_map(|d| d.lookup(&path)).collect();
    let Some(first) = found.first() else {
        let line = docs.iter().map(|d| deepest(d, &path)).max().unwrap_or(1);
        return Err(Error::KeyMissing {
            key: key.to_owned(),
            line,
        });
    };
    let mut values = Vec::new();
    for f in &found {
        let text = f.node.as_str().ok_or_else(|| Error::NotText {
            key: key.to_owned(),
            line: f.line,
        })?;
        values.push(text);
    }
    if values.iter().any(|v| *v != values[0]) {
        return Err(Error::Ambiguous {
            key: key.to_owned(),
            lines: found.iter().map(|f| f.line).collect(),
        });
    }
    let found = LineValue {
        value: values[0].to_owned(),
        line: first.line,
    };
    if strip {
        strip_digest(found)
    } else {
        Ok(found)
    }
}

/// The line of the longest prefix of `path` that exists in `root`.
fn deepest(root: &Node, path: &[&str]) -> usize {
    (0..=path.len())
        .rev()
        .find_map(|n| root.lookup(&path[..n]).first().map(|f| f.line))
        .unwrap_or(root.line)
}

/// `v1.15.10@sha256:<64 hex>` → `v1.15.10`; a value without `@` is
/// returned as is; anything else after `@` is an error.
pub fn strip_digest(found: LineValue) -> Result<LineValue, Error> {
    let Some((head, digest)) = found.value.split_once('@') else {
        return Ok(found);
    };
    if Digest::parse(digest).is_err() || head.is_empty() {
        return Err(Error::Digest {
            value: found.value.clone(),
            line: found.line,
        });
    }
    Ok(LineValue {
        value: head.to_owned(),
        line: found.line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "1111111111111111111111111111111111111111111111111111111111111111";

    fn values() -> String {
        format!(
            "global:\n  images:\n    kubeovn:\n      repository: kubeovn\n      tag: v1.15.10@sha256:{DIGEST}\n    other:\n      tag: [a]\n"
        )
    }

    #[test]
    fn reads_a_dotted_path_with_and_without_the_digest() {
        let got = expect_yaml(&values(), "global.images.kubeovn.tag", true).unwrap();
        assert_eq!((got.value.as_str(), got.line), ("v1.15.10", 5));
        let got = expect_yaml(&values(), "global.images.kubeovn.tag", false).unwrap();
        assert_eq!(got.value, format!("v1.15.10@sha256:{DIGEST}"));
        let got = expect_yaml("# profile\nversion: v1.13.6\n", "version", true).unwrap();
        assert_eq!((got.value.as_str(), got.line), ("v1.13.6", 2));
    }

    #[test]
    fn missing_and_non_text_keys_are_errors_with_lines() {
        let err = expect_yaml(&values(), "global.images.kubeovn.version", false).unwrap_err();
        assert_eq!(
            err,
            Error::KeyMissing {
                key: "global.images.kubeovn.version".to_owned(),
                line: 3
            }
        );
        let err = expect_yaml(&values(), "global.images.other.tag", false).unwrap_err();
        assert!(matches!(err, Error::NotText { line: 7, .. }), "{err:?}");
        let err = expect_yaml("a: [\n", "a", false).unwrap_err();
        assert!(matches!(err, Error::Yaml(_)), "{err:?}");
    }

    #[test]
    fn duplicates_must_agree() {
        assert_eq!(expect_yaml("v: 1\nv: 1\n", "v", false).unwrap().line, 1);
        let err = expect_yaml("v: 1\n---\nv: 2\n", "v", false).unwrap_err();
        assert_eq!(
            err,
            Error::Ambiguous {
                key: "v".to_owned(),
                lines: vec![1, 3]
            }
        );
    }

    #[test]
    fn malformed_digests_are_errors() {
        for bad in ["v1@sha256:abc", "v1@md5:x", "@sha256:"] {
            let err = strip_digest(LineValue {
                value: bad.to_owned(),
                line: 4,
            })
            .unwrap_err();
            assert!(matches!(err, Error::Digest { line: 4, .. }), "{bad}");
        }
    }
}
