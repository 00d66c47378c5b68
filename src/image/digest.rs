//! `Digest`: the content address of a blob, manifest, vendored file or build, always
//! `sha256:<64 lowercase hex>`.
//!
//! This is the crate's one sha256: registry bodies, the download cache, the lock's file hashes,
//! pinned checksums in recipes and the build's content hash all hash or validate through it
//! ([`Digest::of`], [`Hasher`], [`Digest::parse`], [`Digest::from_hex`]). Where only the bare
//! 64 hex digits are stored (the lock, cache file names, `sha256sum` lines), [`Digest::hex`]
//! gives them.
//!
//! Only sha256 is accepted. The OCI spec registers sha512 too, but no registry revendor talks to
//! emits it, and accepting an algorithm we cannot compute would let an unverified digest through.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer};
use sha2::{Digest as _, Sha256};

use super::Error;

const PREFIX: &str = "sha256:";

/// A validated sha256 content digest. Constructing one either parses a string that is already in
/// canonical form or hashes bytes, so a `Digest` value is always well formed.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Digest {
    hex: String,
}

impl Digest {
    /// Parses `sha256:<64 hex>`. Uppercase hex is rejected because registries compare digests as
    /// strings, so `sha256:AB…` would never match what they return.
    pub fn parse(input: &str) -> Result<Digest, Error> {
        let invalid = |reason| Error::Digest {
            input: input.to_owned(),
            reason,
        };
        let hex = input
            .strip_prefix(PREFIX)
            .ok_or_else(|| invalid("expected the `sha256:` algorithm prefix"))?;
        check_hex(hex).map_err(invalid)?;
        Ok(Digest {
            hex: hex.to_owned(),
        })
    }

    /// Parses the bare 64 lowercase hex digits, as the lock, `sha256sum` lines and Dockerfile
    /// checksum ARGs write them (no `sha256:` prefix).
    pub fn from_hex(hex: &str) -> Result<Digest, Error> {
        check_hex(hex).map_err(|reason| Error::Digest {
            input: hex.to_owned(),
            reason,
        })?;
        Ok(Digest {
            hex: hex.to_owned(),
        })
    }

    /// The digest of `bytes` exactly as given: hash the body you received, never a re-serialized
    /// copy, or the digest will not match the registry's.
    pub fn of(bytes: &[u8]) -> Digest {
        let mut hasher = Hasher::new();
        hasher.update(bytes);
        hasher.finish()
    }

    /// The 64 hex digits without the algorithm prefix (the name of a blob file on disk).
    pub fn hex(&self) -> &str {
        &self.hex
    }
}

/// Hashes input that arrives in pieces (a build context, record by record) into a [`Digest`],
/// without gathering it in memory first.
#[derive(Default)]
pub struct Hasher(Sha256);

impl Hasher {
    /// A hasher that has seen nothing yet.
    pub fn new() -> Hasher {
        Hasher::default()
    }

    /// Feeds `bytes`; the digest is of everything fed, in order.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The digest of everything fed so far.
    pub fn finish(self) -> Digest {
        Digest {
            hex: hex::encode(self.0.finalize()),
        }
    }
}

/// Why `hex` is not 64 lowercase hex digits, if it is not.
fn check_hex(hex: &str) -> Result<(), &'static str> {
    if hex.len() != 64 {
        return Err("expected 64 hex digits");
    }
    if !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Err("expected lowercase hex digits");
    }
    Ok(())
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PREFIX}{}", self.hex)
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({self})")
    }
}

impl FromStr for Digest {
    type Err = Error;

    fn from_str(s: &str) -> Result<Digest, Error> {
        Digest::parse(s)
    }
}

impl<'de> Deserialize<'de> for Digest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Digest, D::Error> {
        let s = String::deserialize(deserializer)?;
        Digest::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EMPTY: &str = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    #[test]
    fn of_empty_input_is_the_well_known_digest() {
        assert_eq!(Digest::of(b"").to_string(), EMPTY);
    }

    #[test]
    fn parse_round_trips() {
        let d = Digest::parse(EMPTY).unwrap();
        assert_eq!(d.to_string(), EMPTY);
        assert_eq!(d, Digest::of(b""));
        assert_eq!(d.hex().len(), 64);
    }

    #[test]
    fn parse_rejects_malformed_digests() {
        for bad in [
            "",
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "sha512:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "sha256:e3b0",
            "sha256:E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855",
            "sha256:g3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b8555",
        ] {
            let err = Digest::parse(bad).unwrap_err();
            assert!(err.to_string().contains("invalid digest"), "{bad}: {err}");
        }
    }

    #[test]
    fn from_hex_takes_the_bare_digits_only() {
        let hex = &EMPTY["sha256:".len()..];
        assert_eq!(Digest::from_hex(hex).unwrap(), Digest::of(b""));
        for bad in [EMPTY, &hex.to_uppercase(), &hex[1..], ""] {
            assert!(Digest::from_hex(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn hashing_in_pieces_equals_hashing_at_once() {
        let mut hasher = Hasher::new();
        hasher.update(b"hel");
        hasher.update(b"");
        hasher.update(b"lo");
        assert_eq!(hasher.finish(), Digest::of(b"hello"));
        assert_ne!(Digest::of(b"hello"), Digest::of(b"hellO"));
    }

    #[test]
    fn deserializes_from_json_string() {
        let d: Digest = serde_json::from_str(&format!("\"{EMPTY}\"")).unwrap();
        assert_eq!(d.to_string(), EMPTY);
        assert!(serde_json::from_str::<Digest>("\"sha256:zz\"").is_err());
    }
}
