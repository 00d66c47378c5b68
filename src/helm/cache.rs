//! Renders kept by the hash of everything they depend on:
//! `<cache>/helm/<sha256>`.
//!
//! The key covers the helm binary (its real path, size and modification
//! time), the command line, each values file's bytes, and every file of the
//! chart Helm reads (`ignore::chart_files`), each by path and bytes, hashed
//! once per run into the chart's digest (`Chart`). A
//! second `check --offline` on an unchanged package spawns no helm at all.
//! An entry is `rendered` or `refused` on its first line, then Helm's
//! output; an entry that does not start so is ignored and rendered again.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::Outcome;

/// The hash of a render's inputs, fed field by field.
pub(super) struct Key(Sha256);

impl Key {
    /// A key for renders of this format.
    pub(super) fn new() -> Key {
        let mut key = Key(Sha256::new());
        key.field(b"revendor helm template 2");
        key
    }

    /// Adds one field; the length prefix keeps `ab`+`c` apart from `a`+`bc`.
    pub(super) fn field(&mut self, bytes: &[u8]) {
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
    }

    /// The key's hex name.
    pub(super) fn finish(self) -> String {
        hex::encode(self.0.finalize())
    }
}

const RENDERED: &str = "rendered\n";
const REFUSED: &str = "refused\n";

/// The cached outcome for `key`, if there is a readable one.
pub(super) fn get(cache_dir: &Path, key: &str) -> Option<Outcome> {
    let text = std::fs::read_to_string(cache_dir.join("helm").join(key)).ok()?;
    if let Some(out) = text.strip_prefix(RENDERED) {
        Some(Outcome::Rendered(out.to_owned()))
    } else {
        text.strip_prefix(REFUSED)
            .map(|out| Outcome::Refused(out.to_owned()))
    }
}

/// Keeps `outcome` under `key`. A cache that cannot be written costs the
/// next run a render, nothing else, so a failure is ignored.
pub(super) fn put(cache_dir: &Path, key: &str, outcome: &Outcome) {
    let (head, out) = match outcome {
        Outcome::Rendered(out) => (RENDERED, out),
        Outcome::Refused(out) => (REFUSED, out),
    };
    let path = cache_dir.join("helm").join(key);
    let _ = crate::net::write_atomic(&path, format!("{head}{out}").as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_round_trip_and_junk_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        put(dir.path(), "k1", &Outcome::Rendered("a: 1\n".into()));
        put(dir.path(), "k2", &Outcome::Refused("Error: no".into()));
        assert_eq!(
            get(dir.path(), "k1"),
            Some(Outcome::Rendered("a: 1\n".into()))
        );
        assert_eq!(
            get(dir.path(), "k2"),
            Some(Outcome::Refused("Error: no".into()))
        );
        std::fs::write(dir.path().join("helm/k3"), "half").unwrap();
        assert_eq!(get(dir.path(), "k3"), None);
        assert_eq!(get(dir.path(), "absent"), None);
    }

    #[test]
    fn fields_are_delimited() {
        let key = |parts: &[&[u8]]| {
            let mut k = Key::new();
            parts.iter().for_each(|p| k.field(p));
            k.finish()
        };
        assert_ne!(key(&[b"ab", b"c"]), key(&[b"a", b"bc"]));
        assert_eq!(key(&[b"a"]), key(&[b"a"]));
    }
}
