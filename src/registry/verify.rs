//! Read a pushed multi-platform image back and prove it is what the build promised.
//!
//! [`Client::resolve_index`] checks, in order:
//! 1. the tag's manifest hashes to its announced digest (done by `get_manifest`);
//! 2. that digest is the expected one, when the caller has one (buildx `--metadata-file`);
//! 3. it is an OCI index or Docker manifest list;
//! 4. its children, leaving out `unknown/unknown` attestation entries, cover exactly the
//!    configured platforms, once each, with digests distinct from each other and the index;
//! 5. each child exists, hashes to its digest, and is a single-platform image manifest.
//!
//! A single-platform image where an index was required is refused naming the platform its
//! config blob declares ([`Client::not_an_index`]), so "amd64 only" reads as such.
//!
//! Registries are eventually consistent: right after a push a tag can be missing or still point
//! at the previous image. [`Client::resolve_index_with_retry`] retries those two outcomes only.

use std::collections::BTreeSet;
use std::path::Path;
use std::thread;

use super::{Client, Error};
use crate::image::{Digest, ImageManifest, Manifest, MediaType, Platform, Reference};

/// The buildx metadata key holding the pushed index digest.
const METADATA_DIGEST_KEY: &str = "containerimage.digest";

/// An index that passed every check of [`Client::resolve_index`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifiedIndex {
    /// The reference that was resolved, as given.
    pub reference: Reference,
    /// The index digest the tag resolved to.
    pub digest: Digest,
    /// OCI index or Docker manifest list.
    pub media_type: MediaType,
    /// One child per configured platform, in the configured order, with the platform as the
    /// index spells it.
    pub children: Vec<(Platform, Digest)>,
}

impl VerifiedIndex {
    /// The reference pinned to the verified digest, ready to write into a chart.
    pub fn pinned(&self) -> Reference {
        self.reference.with_digest(self.digest.clone())
    }
}

/// Manifests read and verified before, kept by digest. A manifest is named by the hash of
/// its body, so a kept one never goes stale: the registry need only be asked whether it
/// still holds it, by `HEAD` ([`Client::manifest_known`]). A nightly check of a pinned image
/// then transfers no manifest body.
pub trait KnownManifests {
    /// The body whose sha256 is `digest`, if one is kept.
    fn get(&self, digest: &Digest) -> Option<Vec<u8>>;
    /// Keeps `body`, read by `GET` and verified against its digest.
    fn keep(&self, body: &[u8]);
}

/// Keeps nothing: every manifest is read by `GET`.
struct Unknown;

impl KnownManifests for Unknown {
    fn get(&self, _: &Digest) -> Option<Vec<u8>> {
        None
    }

    fn keep(&self, _: &[u8]) {}
}

impl Client {
    /// Reads `reference` and verifies it is a multi-platform index holding exactly `platforms`
    /// (see the module doc for every check), optionally pinned to `expected`.
    pub fn resolve_index(
        &self,
        reference: &Reference,
        platforms: &[Platform],
        expected: Option<&Digest>,
    ) -> Result<VerifiedIndex, Error> {
        self.resolve_index_known(reference, platforms, expected, &Unknown)
    }

    /// [`Client::resolve_index`], reading each manifest `known` holds by `HEAD` only
    /// ([`Client::manifest_known`]) and keeping there the ones it reads by `GET`.
    pub fn resolve_index_known(
        &self,
        reference: &Reference,
        platforms: &[Platform],
        expected: Option<&Digest>,
        known: &dyn KnownManifests,
    ) -> Result<VerifiedIndex, Error> {
        let fetched = self.manifest_known(reference, known)?;
        if let Some(expected) = expected
            && expected != &fetched.digest
        {
            return Err(Error::UnexpectedDigest {
                reference: reference.to_string(),
                expected: expected.clone(),
                actual: fetched.digest,
            });
        }
        let index = match fetched.manifest {
            Manifest::Index(index) => index,
            Manifest::Image(image) => {
                return Err(self.not_an_index(reference, &image, platforms));
            }
        };
        let children = match_platforms(reference, &fetched.digest, index.children(), platforms)?;
        for (_, digest) in &children {
            let child = self.manifest_known(&reference.with_digest(digest.clone()), known)?;
            if let Manifest::Index(nested) = child.manifest {
                return Err(Error::ChildNotImage {
                    reference: reference.to_string(),
                    digest: digest.clone(),
                    media_type: nested.media_type,
                });
            }
        }
        Ok(VerifiedIndex {
            reference: reference.clone(),
            digest: fetched.digest,
            media_type: index.media_type,
            children,
        })
    }

    /// The refusal of `image`, which `reference` resolved to where an index of `configured`
    /// was required: [`Error::NotAnIndex`] naming the platform its config declares. The config
    /// is read on a best-effort basis; when it cannot be read, the refusal stands without it.
    pub fn not_an_index(
        &self,
        reference: &Reference,
        image: &ImageManifest,
        configured: &[Platform],
    ) -> Error {
        let holds = self
            .get_blob(reference, &image.config.digest)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Platform>(&bytes).ok())
            .filter(|p| !p.os.is_empty() && !p.architecture.is_empty())
            .map(Box::new);
        Error::NotAnIndex {
            reference: reference.to_string(),
            media_type: image.media_type,
            holds,
            configured: configured.to_vec(),
        }
    }

    /// [`Client::resolve_index`], tried up to `attempts` times (at least once) while the tag is
    /// missing ([`Error::ManifestUnknown`]) or resolves to another digest than `expected`
    /// ([`Error::UnexpectedDigest`]), waiting with the client's backoff in between. Any other
    /// failure returns at once.
    pub fn resolve_index_with_retry(
        &self,
        reference: &Reference,
        platforms: &[Platform],
        expected: Option<&Digest>,
        attempts: u32,
    ) -> Result<VerifiedIndex, Error> {
        let mut attempt = 0;
        loop {
            match self.resolve_index(reference, platforms, expected) {
                Err(Error::ManifestUnknown { .. } | Error::UnexpectedDigest { .. })
                    if attempt + 1 < attempts =>
                {
                    thread::sleep(self.delay(attempt));
                    attempt += 1;
                }
                result => return result,
            }
        }
    }
}

/// Pairs each configured platform with the one child that matches it.
fn match_platforms<'a>(
    reference: &Reference,
    index_digest: &Digest,
    children: impl Iterator<Item = (Option<&'a Platform>, &'a Digest)>,
    platforms: &[Platform],
) -> Result<Vec<(Platform, Digest)>, Error> {
    let mut matched: Vec<Option<(Platform, Digest)>> = vec![None; platforms.len()];
    let mut unexpected = Vec::new();
    let mut seen = BTreeSet::from([index_digest]);
    for (platform, digest) in children {
        if platform.is_some_and(Platform::is_unknown) {
            continue;
        }
        let platform = platform.ok_or_else(|| Error::ChildWithoutPlatform {
            reference: reference.to_string(),
            digest: digest.clone(),
        })?;
        if !seen.insert(digest) {
            return Err(Error::DuplicateChild {
                reference: reference.to_string(),
                digest: digest.clone(),
            });
        }
        match platforms.iter().position(|p| p.matches(platform)) {
            Some(i) if matched[i].is_some() => {
                return Err(Error::DuplicatePlatform {
                    reference: reference.to_string(),
                    platform: platform.clone(),
                });
            }
            Some(i) => matched[i] = Some((platform.clone(), digest.clone())),
            None => unexpected.push(platform.clone()),
        }
    }
    let missing: Vec<Platform> = platforms
        .iter()
        .zip(&matched)
        .filter(|(_, m)| m.is_none())
        .map(|(p, _)| p.clone())
        .collect();
    if !missing.is_empty() || !unexpected.is_empty() {
        return Err(Error::Platforms {
            reference: reference.to_string(),
            missing,
            unexpected,
        });
    }
    Ok(matched.into_iter().flatten().collect())
}

/// The index digest buildx recorded under `containerimage.digest` in its `--metadata-file`.
pub fn metadata_digest(path: &Path) -> Result<Digest, Error> {
    let invalid = |reason: String| Error::Metadata {
        path: path.to_owned(),
        reason,
    };
    let bytes = std::fs::read(path).map_err(|e| invalid(e.to_string()))?;
    let json: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| invalid(e.to_string()))?;
    let value = json
        .get(METADATA_DIGEST_KEY)
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| invalid(format!("no string `{METADATA_DIGEST_KEY}` key")))?;
    Digest::parse(value).map_err(|e| invalid(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(c: char) -> Digest {
        Digest::parse(&format!("sha256:{}", c.to_string().repeat(64))).unwrap()
    }

    fn platform(s: &str) -> Platform {
        Platform::parse(s).unwrap()
    }

    fn check(children: &[(Option<&str>, char)], configured: &[&str]) -> Result<Vec<String>, Error> {
        let reference = Reference::parse("127.0.0.1:5000/app:v1").unwrap();
        let owned: Vec<(Option<Platform>, Digest)> = children
            .iter()
            .map(|(p, d)| (p.map(platform), digest(*d)))
            .collect();
        let configured: Vec<Platform> = configured.iter().map(|p| platform(p)).collect();
        let pairs = owned.iter().map(|(p, d)| (p.as_ref(), d));
        let matched = match_platforms(&reference, &digest('f'), pairs, &configured)?;
        Ok(matched
            .iter()
            .map(|(p, d)| format!("{p} {}", &d.hex()[..1]))
            .collect())
    }

    const BOTH: &[&str] = &["linux/amd64", "linux/arm64"];

    #[test]
    fn exact_platforms_match_in_configured_order_ignoring_attestations() {
        let got = check(
            &[
                (Some("linux/arm64/v8"), 'b'),
                (Some("unknown/unknown"), 'c'),
                (Some("linux/amd64"), 'a'),
                (Some("unknown/unknown"), 'd'),
            ],
            BOTH,
        );
        assert_eq!(got.unwrap(), ["linux/amd64 a", "linux/arm64/v8 b"]);
    }

    #[test]
    fn missing_and_unexpected_platforms_are_named() {
        let err = check(
            &[(Some("linux/amd64"), 'a'), (Some("linux/s390x"), 'b')],
            BOTH,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "index `127.0.0.1:5000/app:v1` does not hold exactly the configured platforms: missing [linux/arm64], unexpected [linux/s390x]"
        );
    }

    #[test]
    fn duplicate_digests_and_platforms_are_rejected() {
        let err = check(
            &[(Some("linux/amd64"), 'a'), (Some("linux/arm64"), 'a')],
            BOTH,
        );
        assert!(matches!(err, Err(Error::DuplicateChild { .. })), "{err:?}");
        let err = check(
            &[(Some("linux/amd64"), 'f'), (Some("linux/arm64"), 'b')],
            BOTH,
        );
        assert!(matches!(err, Err(Error::DuplicateChild { .. })), "{err:?}");
        let err = check(
            &[(Some("linux/amd64"), 'a'), (Some("linux/amd64/v1"), 'b')],
            BOTH,
        );
        assert!(
            matches!(err, Err(Error::DuplicatePlatform { .. })),
            "{err:?}"
        );
    }

    #[test]
    fn children_without_platform_are_rejected() {
        let err = check(&[(None, 'a'), (Some("linux/arm64"), 'b')], BOTH);
        assert!(
            matches!(err, Err(Error::ChildWithoutPlatform { .. })),
            "{err:?}"
        );
    }

    #[test]
    fn metadata_digest_reads_buildx_metadata() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("metadata.json");
        let d = digest('a');
        std::fs::write(
            &path,
            format!(r#"{{"buildx.build.ref":"x","containerimage.digest":"{d}","image.name":"a"}}"#),
        )
        .unwrap();
        assert_eq!(metadata_digest(&path).unwrap(), d);
        std::fs::write(&path, r#"{"containerimage.digest":"sha256:short"}"#).unwrap();
        assert!(
            metadata_digest(&path)
                .unwrap_err()
                .to_string()
                .contains("metadata.json")
        );
        std::fs::write(&path, r#"{}"#).unwrap();
        assert!(
            metadata_digest(&path)
                .unwrap_err()
                .to_string()
                .contains("containerimage.digest")
        );
        assert!(metadata_digest(&dir.path().join("absent.json")).is_err());
    }
}
