//! Rewrite a value in a Dockerfile and leave every other byte as it was.
//!
//! The file is parsed to find the value's exact byte range, then only that
//! range is replaced: quotes, spacing, continuations and comments around it
//! survive, so the diff a user reviews is the value and nothing else.

use std::ops::Range;

use super::{Dockerfile, Error};

/// Rewrite the default of every `ARG name=…` declaration to `value`
/// (keeping any quotes around the old value, and an `@sha256:` suffix it
/// had when the value does not move: see [`kept_digest`]).
///
/// Fails when no declaration of `name` carries a default, when `value`
/// cannot be written bare (empty, or holding blanks, quotes, `\`, `` ` ``,
/// `$` or `#`), or when a declaration pins another value by digest and
/// `value` names none ([`Error::StaleDigest`]: the caller resolves the new
/// digest and passes `value@sha256:…`).
pub fn rewrite_arg(text: &str, name: &str, value: &str) -> Result<String, Error> {
    check_bare(value)?;
    let df = Dockerfile::parse(text)?;
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    for a in df.arg_values(name) {
        let Some(span) = a.span.clone() else {
            continue;
        };
        let old = a.value.as_deref().unwrap_or_default();
        let new = kept_digest(old, value);
        if let Some(digest) = digest_suffix(old)
            && !new.contains('@')
        {
            return Err(Error::StaleDigest {
                name: name.to_owned(),
                line: a.line,
                old: old.to_owned(),
                was: old[..old.len() - digest.len()].to_owned(),
                new: new.clone(),
            });
        }
        edits.push((span, new));
    }
    if edits.is_empty() {
        return Err(Error::ArgNotFound {
            name: name.to_owned(),
        });
    }
    Ok(splice(text, &edits))
}

/// `new` for an ARG whose value was `old`: when `old` ends in an
/// `@sha256:` digest, `new` names none and is `old` without it (the value
/// does not move), the digest stays, so rewriting `ARG IMAGE=repo:v1@sha256:…`
/// to `repo:v1` keeps the pin beside it. A moved value is `new` alone: the
/// old digest names the old image, never the new tag's (issue 20: cilium's
/// `ARG VERSION=v1.19.1@sha256:…`).
pub fn kept_digest(old: &str, new: &str) -> String {
    match digest_suffix(old) {
        Some(digest) if !new.contains('@') && old[..old.len() - digest.len()] == *new => {
            old.to_owned()
        }
        _ => new.to_owned(),
    }
}

/// The `@sha256:<64 hex>` at the very end of `value`, if any. Only a whole
/// digest at the very end counts: anything after it would be carried into a
/// new value (found by fuzzing: a quoted value running on into ` AS builder`).
pub fn digest_suffix(value: &str) -> Option<&str> {
    value
        .rfind("@sha256:")
        .map(|at| &value[at..])
        .filter(|suffix| {
            let hex = &suffix["@sha256:".len()..];
            hex.len() == 64
                && hex
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
}

/// Reject values that would need quoting or would change the meaning of the
/// line: empty, blanks, quotes, escapes, `$`, control characters.
pub(crate) fn check_bare(value: &str) -> Result<(), Error> {
    let bad = value.is_empty()
        || value
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "\"'\\`$#".contains(c));
    if bad {
        return Err(Error::InvalidValue {
            value: value.to_owned(),
        });
    }
    Ok(())
}

/// `text` with every range (non-overlapping, any order) replaced by its text.
pub(crate) fn splice(text: &str, edits: &[(Range<usize>, String)]) -> String {
    let mut sorted: Vec<&(Range<usize>, String)> = edits.iter().collect();
    sorted.sort_by_key(|(r, _)| r.start);
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    for (span, new) in sorted {
        out.push_str(&text[cursor..span.start]);
        out.push_str(new);
        cursor = span.end;
    }
    out.push_str(&text[cursor..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_and_the_digest_of_an_unmoved_value_are_kept() {
        let digest = format!("@sha256:{}", "0a".repeat(32));
        let text = format!("ARG VERSION=\"1.15.10\"\nARG TAG='v1.15.10'\nARG BASE=x:v1{digest}\n");
        let out = rewrite_arg(&text, "VERSION", "1.15.11").unwrap();
        let out = rewrite_arg(&out, "TAG", "v1.15.11").unwrap();
        let out = rewrite_arg(&out, "BASE", "x:v1").unwrap();
        assert_eq!(
            out,
            format!("ARG VERSION=\"1.15.11\"\nARG TAG='v1.15.11'\nARG BASE=x:v1{digest}\n")
        );
        assert_eq!(kept_digest("a@sha256:1", "b@sha256:2"), "b@sha256:2");
    }

    /// Issue 20: cilium's `ARG VERSION=v1.19.1@sha256:…` moved to v1.19.2 would have named
    /// the old image under the new tag. A moved value needs its own digest, given whole.
    #[test]
    fn a_moved_value_never_keeps_the_old_digest() {
        let old = format!("@sha256:{}", "0a".repeat(32));
        let new = format!("@sha256:{}", "0b".repeat(32));
        let text = format!("ARG VERSION=v1.19.1{old}\nFROM quay.io/cilium/cilium:${{VERSION}}\n");
        let err = rewrite_arg(&text, "VERSION", "v1.19.2").unwrap_err();
        assert_eq!(
            err,
            Error::StaleDigest {
                name: "VERSION".into(),
                line: 1,
                old: format!("v1.19.1{old}"),
                was: "v1.19.1".into(),
                new: "v1.19.2".into(),
            }
        );
        assert_eq!(err.line(), Some(1));
        let out = rewrite_arg(&text, "VERSION", &format!("v1.19.2{new}")).unwrap();
        assert!(
            out.starts_with(&format!("ARG VERSION=v1.19.2{new}\n")),
            "{out}"
        );
        assert_eq!(kept_digest(&format!("v1{old}"), "v2"), "v2");
    }

    /// Found by fuzzing: a quoted value that runs on past a digest into ` AS builder` kept
    /// everything after `@sha256:` as if it were the digest, and the rewritten line no longer
    /// parsed. Only a whole digest at the value's end is kept.
    #[test]
    fn only_a_whole_digest_at_the_end_is_kept() {
        let digest = format!("@sha256:{}", "0a".repeat(32));
        assert_eq!(kept_digest(&format!("x:v1{digest} AS b"), "x:v1"), "x:v1");
        assert_eq!(kept_digest("x:v1@sha256:0a", "x:v1"), "x:v1");
        assert_eq!(
            kept_digest(&format!("x:v1{digest}"), "x:v1"),
            format!("x:v1{digest}")
        );
        let text = format!("FROM a\nARG VERSION=\"x{digest} AS b\u{1}ARG VERSION=v1\n");
        let out = rewrite_arg(&text, "VERSION", "v9").unwrap();
        assert_eq!(out, "FROM a\nARG VERSION=v9\n");
        Dockerfile::parse(&out).unwrap();
    }

    #[test]
    fn rewrites_only_the_value() {
        let text = "ARG VERSION=v4.2.3\nFROM x\n# ARG VERSION=v0\nARG  VERSION=\"v4.2.3\"  OTHER=1 \\\n  LAST=2\n";
        let out = rewrite_arg(text, "VERSION", "v4.3.0").unwrap();
        assert_eq!(
            out,
            "ARG VERSION=v4.3.0\nFROM x\n# ARG VERSION=v0\nARG  VERSION=\"v4.3.0\"  OTHER=1 \\\n  LAST=2\n"
        );
        let out = rewrite_arg(text, "LAST", "3").unwrap();
        assert!(out.ends_with("  LAST=3\n"), "{out}");
    }

    /// Fuzzing (issue 13, fuzz/corpus/dockerfile/arg-*): an empty default before a `\` at the
    /// end of the file was written before the ARG's name, and a default running across a
    /// continuation was replaced only up to the `\`, leaving its rest as an instruction.
    /// Every rewrite reads back as a Dockerfile with the new value.
    #[test]
    fn a_value_at_the_end_or_across_a_continuation_is_replaced_whole() {
        for (text, rewritten) in [
            ("ARG VERSION=\\", "ARG VERSION=v2\\"),
            ("ARG VERSION=\\\n", "ARG VERSION=v2\\\n"),
            ("ARG VERSION=\"\"\n", "ARG VERSION=\"v2\"\n"),
            ("ARG VERSION=\"\\\n.", "ARG VERSION=v2"),
        ] {
            let out = rewrite_arg(text, "VERSION", "v2").unwrap();
            assert_eq!(out, rewritten, "{text:?}");
            let df = Dockerfile::parse(&out).unwrap();
            assert_eq!(df.args[0].value.as_deref(), Some("v2"), "{text:?}");
        }
    }

    #[test]
    fn missing_arg_and_unsafe_values_are_errors() {
        let text = "ARG VERSION\nFROM x\n";
        assert_eq!(
            rewrite_arg(text, "VERSION", "v1").unwrap_err(),
            Error::ArgNotFound {
                name: "VERSION".to_owned()
            }
        );
        for bad in ["", "a b", "a\"", "$X", "a\nb"] {
            assert!(matches!(
                rewrite_arg("ARG VERSION=v1\n", "VERSION", bad),
                Err(Error::InvalidValue { .. })
            ));
        }
    }
}
