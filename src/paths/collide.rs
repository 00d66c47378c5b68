//! File names that are one file on macOS or Windows.
//!
//! Linux keeps `README.md` and `readme.md`, or `café.yaml` written composed
//! (NFC) and decomposed (NFD), as two files; the default file systems of
//! macOS (APFS) and Windows (NTFS) ignore case, and APFS also Unicode
//! normalisation, so a checkout there holds one of them, and every
//! `check` on that machine reports the other as edited. revendor names
//! such pairs when it vendors them (issue 21); it cannot choose between
//! them for the user.

use std::collections::BTreeMap;

use icu_normalizer::ComposingNormalizerBorrowed;

/// Every pair of `paths` that differ only by case or Unicode normalisation,
/// each pair in the order first met, the pairs sorted.
pub fn collisions<'a>(paths: impl IntoIterator<Item = &'a str>) -> Vec<(String, String)> {
    let nfc = ComposingNormalizerBorrowed::new_nfc();
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    let mut pairs = Vec::new();
    for path in paths {
        let key = nfc
            .normalize(&nfc.normalize(path).to_lowercase())
            .into_owned();
        match seen.get(&key) {
            Some(first) if *first != path => pairs.push((first.to_string(), path.to_string())),
            Some(_) => {}
            None => {
                seen.insert(key, path);
            }
        }
    }
    pairs.sort();
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_and_normalisation_twins_are_paired_and_others_not() {
        let composed = "docs/caf\u{e9}.yaml";
        let decomposed = "docs/cafe\u{301}.yaml";
        let pairs = collisions([
            "README.md",
            "docs/a.yaml",
            composed,
            "readme.md",
            decomposed,
            "docs/a.yaml",
            "docs/b.yaml",
        ]);
        assert_eq!(
            pairs,
            [
                ("README.md".to_owned(), "readme.md".to_owned()),
                (composed.to_owned(), decomposed.to_owned()),
            ]
        );
    }
}
