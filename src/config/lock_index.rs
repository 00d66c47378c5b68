//! Lookups of the lock's `[[file]]` and `[[output]]` rows by key in
//! constant time (issue 23): check, render and update ask once per vendored
//! file, and a search of every row per file made a 10,000-file directory
//! package quadratic.
//!
//! The index is built on the first lookup and never trusted blindly: the
//! rows are public and some runs edit a lock they read (`retain`, `push`),
//! so a hit is confirmed against the row it points at, and a miss or a
//! stale hit falls back to the plain search, which is what the lock holds.

use std::collections::HashMap;
use std::sync::OnceLock;

/// Row numbers by key, built once from a list of rows.
#[derive(Debug, Default, Clone)]
pub struct RowIndex(OnceLock<HashMap<String, usize>>);

impl RowIndex {
    /// The first row of `rows` whose key (by `key`) is `wanted`.
    pub fn find<'r, T>(
        &self,
        rows: &'r [T],
        key: impl Fn(&T) -> String,
        wanted: &str,
    ) -> Option<&'r T> {
        let index = self.0.get_or_init(|| {
            let mut map = HashMap::with_capacity(rows.len());
            for (n, row) in rows.iter().enumerate() {
                map.entry(key(row)).or_insert(n);
            }
            map
        });
        match index.get(wanted).and_then(|&n| rows.get(n)) {
            Some(row) if key(row) == wanted => Some(row),
            _ => rows.iter().find(|row| key(row) == wanted),
        }
    }
}

/// The indexes of one lock's rows, each built on its first lookup.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Lookups {
    /// `[[file]]` by upstream and `from` ([`file_key`]).
    pub files: RowIndex,
    /// `[[output]]` by `file`.
    pub outputs: RowIndex,
}

/// The key of a `[[file]]` row of upstream `upstream` at `from`: the
/// unnamed upstream's start with a NUL, a named one's with `+`, so no two
/// differ only in where the name ends.
pub fn file_key(upstream: Option<&str>, from: &str) -> String {
    match upstream {
        Some(name) => format!("+{name}\0{from}"),
        None => format!("\0{from}"),
    }
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
        let key = |s: &String| s.clone();
        assert_eq!(index.find(&rows, key, "b").map(String::as_str), Some("b"));
        rows.retain(|s| s != "a");
        rows.push("d".to_string());
        assert_eq!(index.find(&rows, key, "c").map(String::as_str), Some("c"));
        assert_eq!(index.find(&rows, key, "d").map(String::as_str), Some("d"));
        assert_eq!(index.find(&rows, key, "a"), None);
    }

    #[test]
    fn the_first_of_two_rows_with_one_key_is_found() {
        let rows = [("k", 1), ("k", 2)];
        let found = RowIndex::default().find(&rows, |r| r.0.to_string(), "k");
        assert_eq!(found, Some(&("k", 1)));
    }
}
