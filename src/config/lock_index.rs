//! Lookups of the lock's `[[file]]` and `[[output]]` rows by key in
//! constant time (issue 23): check, render and update ask once per vendored
//! file, and a search of every row per file made a 10,000-file directory
//! package quadratic.
//!
//! The index is built on the first lookup and never trusted blindly: the
//! rows are public and some runs edit a lock they read (`retain`, `push`),
//! so a hit is confirmed against the row it points at, and a miss or a
//! stale hit falls back to the plain search, which is what the lock holds.
//! A lookup allocates nothing: it borrows the row's key and tells rows with
//! one key apart by a test of the row, where building a key per lookup and
//! per row compared (a `String` each) was most of its cost, and a miss (a
//! file upstream added) allocated once per row of the lock.

use std::collections::HashMap;
use std::sync::OnceLock;

/// Row numbers by key, built once from a list of rows: several rows may
/// share a key (two upstreams' files at one path), in their order.
#[derive(Debug, Default, Clone)]
pub struct RowIndex(OnceLock<HashMap<String, Vec<usize>>>);

impl RowIndex {
    /// The first row of `rows` whose key (by `key`) is `wanted` and that
    /// `is` accepts.
    pub fn find<'r, T>(
        &self,
        rows: &'r [T],
        key: impl Fn(&T) -> &str,
        wanted: &str,
        is: impl Fn(&T) -> bool,
    ) -> Option<&'r T> {
        let index = self.0.get_or_init(|| {
            let mut map: HashMap<String, Vec<usize>> = HashMap::with_capacity(rows.len());
            for (n, row) in rows.iter().enumerate() {
                map.entry(key(row).to_owned()).or_default().push(n);
            }
            map
        });
        let matches = |row: &&T| key(row) == wanted && is(row);
        let indexed = index.get(wanted).map_or(&[][..], Vec::as_slice);
        indexed
            .iter()
            .filter_map(|&n| rows.get(n))
            .find(matches)
            .or_else(|| rows.iter().find(matches))
    }
}

/// The indexes of one lock's rows, each built on its first lookup.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Lookups {
    /// `[[file]]` by `from` (two upstreams may each have one).
    pub files: RowIndex,
    /// `[[output]]` by `file`.
    pub outputs: RowIndex,
}

/// Two locks are equal by their rows; whether either has looked anything
/// up yet is no part of it.
impl PartialEq for RowIndex {
    fn eq(&self, _: &RowIndex) -> bool {
        true
    }
}

impl Eq for RowIndex {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lookup_after_the_rows_changed_still_finds_what_they_hold() {
        let index = RowIndex::default();
        let mut rows = vec!["a".to_string(), "b".to_string(), "c".to_string()];
        let find =
            |rows: &[String], wanted| index.find(rows, |s| s.as_str(), wanted, |_| true).cloned();
        assert_eq!(find(&rows, "b").as_deref(), Some("b"));
        rows.retain(|s| s != "a");
        rows.push("d".to_string());
        assert_eq!(find(&rows, "c").as_deref(), Some("c"));
        assert_eq!(find(&rows, "d").as_deref(), Some("d"));
        assert_eq!(find(&rows, "a"), None);
    }

    #[test]
    fn the_first_of_two_rows_with_one_key_is_found() {
        let rows = [("k", 1), ("k", 2)];
        let found = RowIndex::default().find(&rows, |r| r.0, "k", |_| true);
        assert_eq!(found, Some(&("k", 1)));
    }

    #[test]
    fn rows_with_one_key_are_told_apart_by_the_test() {
        let rows = [("k", 1), ("j", 2), ("k", 2)];
        let index = RowIndex::default();
        assert_eq!(
            index.find(&rows, |r| r.0, "k", |r| r.1 == 2),
            Some(&("k", 2))
        );
        assert_eq!(
            index.find(&rows, |r| r.0, "k", |r| r.1 == 1),
            Some(&("k", 1))
        );
        assert_eq!(index.find(&rows, |r| r.0, "j", |r| r.1 == 1), None);
    }
}
