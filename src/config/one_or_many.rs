//! `[table]` or `[[table]]`: one entry, or several, as vendor.toml and the
//! lock spell `upstream` and `image`.
//!
//! The two spellings are told apart by what the TOML deserializer hands
//! over, a map or a sequence, so nothing is buffered: every value inside is
//! still read by toml itself, and an error keeps the line it points at
//! (serde's untagged enums would buffer the input and lose both the spans
//! and `Spanned`).

use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use toml::Spanned;

/// One table (`[upstream]`) or an array of tables (`[[upstream]]`).
#[derive(Debug)]
pub enum OneOrMany<T> {
    /// `[table]`.
    One(T),
    /// `[[table]]`, each entry with its span.
    Many(Vec<Spanned<T>>),
}

impl<T> OneOrMany<T> {
    /// Every entry with its span; the single table gets `whole`, the span
    /// of the whole value.
    pub fn entries(whole: &Spanned<OneOrMany<T>>) -> Vec<(Range<usize>, &T)> {
        match whole.get_ref() {
            OneOrMany::One(t) => vec![(whole.span(), t)],
            OneOrMany::Many(all) => all.iter().map(|t| (t.span(), t.get_ref())).collect(),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OneOrMany<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(OneOrManyVisitor(PhantomData))
    }
}

struct OneOrManyVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for OneOrManyVisitor<T> {
    type Value = OneOrMany<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a table or an array of tables")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map)).map(OneOrMany::One)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Vec::deserialize(SeqAccessDeserializer::new(seq)).map(OneOrMany::Many)
    }
}

/// `deserialize_with` for a lock field read from `[table]` or `[[table]]`:
/// the entries, in file order.
pub fn deserialize_entries<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(match OneOrMany::<T>::deserialize(d)? {
        OneOrMany::One(t) => vec![t],
        OneOrMany::Many(all) => all.into_iter().map(Spanned::into_inner).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Entry {
        name: Option<String>,
        version: Spanned<String>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Doc {
        upstream: Spanned<OneOrMany<Entry>>,
    }

    #[test]
    fn a_table_and_an_array_of_tables_both_read_with_their_spans() {
        let text = "[upstream]\nversion = \"v1\"\n";
        let doc: Doc = toml::from_str(text).unwrap();
        let entries = OneOrMany::entries(&doc.upstream);
        assert!(matches!(doc.upstream.get_ref(), OneOrMany::One(_)));
        assert_eq!(entries.len(), 1);
        assert_eq!(&text[entries[0].0.clone()], "[upstream]");
        let version = &entries[0].1.version;
        assert_eq!(&text[version.span()], "\"v1\"");

        let text = "[[upstream]]\nname = \"a\"\nversion = \"v1\"\n\n[[upstream]]\nname = \"b\"\nversion = \"v2\"\n";
        let doc: Doc = toml::from_str(text).unwrap();
        let entries = OneOrMany::entries(&doc.upstream);
        assert!(matches!(doc.upstream.get_ref(), OneOrMany::Many(_)));
        let names: Vec<_> = entries.iter().map(|e| e.1.name.clone().unwrap()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(&text[entries[1].1.version.span()], "\"v2\"");
    }

    #[test]
    fn errors_inside_either_form_keep_their_line() {
        for text in [
            "[upstream]\nversion = \"v1\"\ncolour = 1\n",
            "[[upstream]]\nversion = \"v1\"\ncolour = 1\n",
        ] {
            let e = toml::from_str::<Doc>(text).unwrap_err();
            let at = e.span().expect("a span");
            assert_eq!(crate::config::line_of(text, at.start), 3, "{text}: {e}");
            assert!(e.message().contains("unknown field `colour`"), "{e}");
        }
        let text = "[upstream]\nversion = 1\n";
        let e = toml::from_str::<Doc>(text).unwrap_err();
        assert_eq!(crate::config::line_of(text, e.span().unwrap().start), 2);
    }
}
