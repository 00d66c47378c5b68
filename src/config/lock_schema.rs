//! `schema = N` at the top of upstream/lock.toml: the lock format a lock was
//! written in, so a lock from a newer revendor is refused in one line
//! instead of being misread.
//!
//! 1. Reading: a lock without `schema` is schema 1 (every lock written
//!    before the key existed); a schema above [`LOCK_SCHEMA`] is refused at
//!    its line, asking to upgrade revendor; one below 1 is malformed.
//! 2. Writing: [`stamp`] puts `schema = 1` first, under the lock's header
//!    comment, whenever revendor changes a lock. A run that leaves a lock's
//!    other bytes alone leaves an older lock without the key, so `patch
//!    refresh` or `render` with nothing to do never rewrites a committed lock
//!    for this alone.

use std::path::Path;

use serde::Deserialize;
use toml_edit::{DocumentMut, Item, value};

use super::{ConfigError, line_of};

/// The lock schema this revendor reads and writes.
pub const LOCK_SCHEMA: u32 = 1;

/// `schema = N` as a lock was read: its format, not its content, so two
/// locks that say the same are equal whichever schema each was written in
/// (a lock read back after `to_toml` stamped it equals the one written).
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(transparent)]
pub struct Schema(pub Option<u32>);

impl Schema {
    /// The schema of a lock this revendor makes.
    pub const CURRENT: Schema = Schema(Some(LOCK_SCHEMA));
}

impl PartialEq for Schema {
    fn eq(&self, _: &Schema) -> bool {
        true
    }
}

impl Eq for Schema {}

/// The error for a lock whose `schema` this revendor cannot read (newer
/// than [`LOCK_SCHEMA`], or below 1), at the key's line; `None` when the
/// schema is readable, absent, or not even an integer (the lock's own parse
/// error says that). Called only when the lock did not read as expected, so
/// the common path parses the lock once.
pub(super) fn unreadable(path: &Path, text: &str) -> Option<ConfigError> {
    #[derive(Deserialize)]
    struct Head {
        schema: Option<toml::Spanned<i64>>,
    }
    let schema = toml::from_str::<Head>(text).ok()?.schema?;
    let n = *schema.get_ref();
    if (1..=i64::from(LOCK_SCHEMA)).contains(&n) {
        return None;
    }
    let line = Some(line_of(text, schema.span().start));
    Some(if n > i64::from(LOCK_SCHEMA) {
        ConfigError::at(
            path,
            line,
            format!(
                "the lock is schema {n}, written by a newer revendor (this one reads schema {LOCK_SCHEMA}): upgrade revendor"
            ),
        )
        .hint(format!("upgrade revendor to a release that reads lock schema {n}"))
    } else {
        ConfigError::at(
            path,
            line,
            format!("malformed lock: schema {n} is not a lock schema (the first is 1)"),
        )
        .hint("the lock is written by revendor; restore it from git or run `revendor update`")
    })
}

/// Puts `schema = LOCK_SCHEMA` at the top of a lock document that has none,
/// below the comment that heads the file (it belonged to the first table).
pub(super) fn stamp(doc: &mut DocumentMut) {
    if doc.contains_key("schema") {
        return;
    }
    let first = doc
        .iter_mut()
        .filter_map(|(_, item)| match item {
            Item::Table(t) => Some(t),
            Item::ArrayOfTables(all) => all.iter_mut().next(),
            _ => None,
        })
        .min_by_key(|t| t.position());
    let header = first.and_then(|t| {
        let prefix = t.decor().prefix()?.as_str()?.to_owned();
        t.decor_mut().set_prefix("\n");
        Some(prefix)
    });
    doc.insert("schema", value(i64::from(LOCK_SCHEMA)));
    if let (Some(header), Some(mut key)) = (header, doc.key_mut("schema")) {
        key.leaf_decor_mut().set_prefix(header);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_goes_under_the_header_comment() {
        let text = "# Written by revendor.\n[upstream]\nsource = \"x\"\n\n[[file]]\nfrom = \"a\"\n";
        let mut doc: DocumentMut = text.parse().unwrap();
        stamp(&mut doc);
        assert_eq!(
            doc.to_string(),
            "# Written by revendor.\nschema = 1\n\n[upstream]\nsource = \"x\"\n\n[[file]]\nfrom = \"a\"\n"
        );
        let again = doc.to_string();
        let mut doc: DocumentMut = again.parse().unwrap();
        stamp(&mut doc);
        assert_eq!(doc.to_string(), again, "stamped once");
    }

    #[test]
    fn a_newer_schema_is_refused_at_its_line_and_a_known_one_is_not() {
        let path = Path::new("pkg/upstream/lock.toml");
        let newer = "# x\nschema = 2\n\n[upstream]\nsource = \"x\"\n";
        let e = unreadable(path, newer).unwrap();
        assert_eq!(
            e.to_string(),
            "pkg/upstream/lock.toml:2: the lock is schema 2, written by a newer revendor (this one reads schema 1): upgrade revendor"
        );
        let zero = unreadable(path, "schema = 0\n").unwrap();
        assert!(
            zero.to_string().contains(":1: malformed lock: schema 0"),
            "{zero}"
        );
        assert!(unreadable(path, "schema = 1\n").is_none());
        assert!(unreadable(path, "[upstream]\n").is_none());
        assert!(unreadable(path, "schema = \"one\"\n").is_none());
    }
}
