//! The four manifest kinds revendor reads: OCI image index, Docker manifest list, OCI image
//! manifest and Docker v2 manifest, parsed into [`Manifest`].
//!
//! The kind comes from the body's own `mediaType` when it has one, else from the Content-Type
//! the registry sent. The body wins because it is what the digest covers; a header can be
//! rewritten by a proxy, the hashed bytes cannot.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::{Digest, Error, Platform};

/// The manifest media types revendor understands; anything else is an [`Error::MediaType`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MediaType {
    /// `application/vnd.oci.image.index.v1+json`: what buildx pushes for multi-platform builds.
    OciIndex,
    /// `application/vnd.docker.distribution.manifest.list.v2+json`: the Docker predecessor.
    DockerManifestList,
    /// `application/vnd.oci.image.manifest.v1+json`.
    OciManifest,
    /// `application/vnd.docker.distribution.manifest.v2+json`.
    DockerManifest,
}

impl MediaType {
    /// Every kind, indexes first; the order of the `Accept` header.
    pub const ALL: [MediaType; 4] = [
        MediaType::OciIndex,
        MediaType::DockerManifestList,
        MediaType::OciManifest,
        MediaType::DockerManifest,
    ];

    /// The registered media type string.
    pub const fn as_str(self) -> &'static str {
        match self {
            MediaType::OciIndex => "application/vnd.oci.image.index.v1+json",
            MediaType::DockerManifestList => {
                "application/vnd.docker.distribution.manifest.list.v2+json"
            }
            MediaType::OciManifest => "application/vnd.oci.image.manifest.v1+json",
            MediaType::DockerManifest => "application/vnd.docker.distribution.manifest.v2+json",
        }
    }

    /// The kind named by `value`, ignoring parameters such as `; charset=utf-8`.
    pub fn parse(value: &str) -> Option<MediaType> {
        let essence = value.split(';').next().unwrap_or_default().trim();
        MediaType::ALL.into_iter().find(|m| m.as_str() == essence)
    }

    /// Whether this kind lists per-platform children rather than layers.
    pub const fn is_index(self) -> bool {
        matches!(self, MediaType::OciIndex | MediaType::DockerManifestList)
    }

    /// The value of an `Accept` header asking for any of the four kinds. Registries answer a
    /// request lacking a kind with a down-converted or 404 response, so always send all four.
    pub fn accept_header() -> String {
        MediaType::ALL.map(MediaType::as_str).join(", ")
    }
}

impl fmt::Display for MediaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A pointer to content: what an index lists for each platform and what a manifest lists for
/// its config and layers.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    /// The media type of the content pointed to (kept as a string: layers use many types).
    pub media_type: String,
    /// The content's digest.
    pub digest: Digest,
    /// The content's size in bytes.
    pub size: u64,
    /// Set on index entries; attestation entries carry `unknown/unknown`.
    #[serde(default)]
    pub platform: Option<Platform>,
    /// Free-form metadata such as `vnd.docker.reference.type`.
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
}

/// A multi-platform index: an OCI image index or a Docker manifest list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Index {
    /// Which of the two index kinds this is.
    pub media_type: MediaType,
    /// One entry per child manifest, in registry order.
    pub manifests: Vec<Descriptor>,
}

impl Index {
    /// Each child's platform (absent when the entry has none) and digest, in order.
    pub fn children(&self) -> impl Iterator<Item = (Option<&Platform>, &Digest)> {
        self.manifests
            .iter()
            .map(|d| (d.platform.as_ref(), &d.digest))
    }
}

/// A single-platform image: an OCI image manifest or a Docker v2 manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageManifest {
    /// Which of the two manifest kinds this is.
    pub media_type: MediaType,
    /// The image config blob.
    pub config: Descriptor,
    /// The layer blobs, base first.
    pub layers: Vec<Descriptor>,
}

/// Any manifest revendor reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Manifest {
    /// A multi-platform index.
    Index(Index),
    /// A single-platform image.
    Image(ImageManifest),
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Envelope {
    #[serde(default)]
    media_type: Option<String>,
}

#[derive(Deserialize)]
struct IndexBody {
    manifests: Vec<Descriptor>,
}

#[derive(Deserialize)]
struct ImageBody {
    config: Descriptor,
    #[serde(default)]
    layers: Vec<Descriptor>,
}

impl Manifest {
    /// Parses `body`, taking the kind from its `mediaType` field or else from `content_type`
    /// (the response header, if any).
    pub fn parse(body: &[u8], content_type: Option<&str>) -> Result<Manifest, Error> {
        let envelope: Envelope = parse_json(body, content_type.unwrap_or("unknown"))?;
        let named = envelope
            .media_type
            .as_deref()
            .or(content_type)
            .ok_or(Error::NoMediaType)?;
        let media_type = MediaType::parse(named).ok_or_else(|| Error::MediaType {
            media_type: named.to_owned(),
        })?;
        if media_type.is_index() {
            let body: IndexBody = parse_json(body, media_type.as_str())?;
            Ok(Manifest::Index(Index {
                media_type,
                manifests: body.manifests,
            }))
        } else {
            let body: ImageBody = parse_json(body, media_type.as_str())?;
            Ok(Manifest::Image(ImageManifest {
                media_type,
                config: body.config,
                layers: body.layers,
            }))
        }
    }

    /// The kind of this manifest.
    pub fn media_type(&self) -> MediaType {
        match self {
            Manifest::Index(index) => index.media_type,
            Manifest::Image(image) => image.media_type,
        }
    }
}

fn parse_json<T: DeserializeOwned>(body: &[u8], media_type: &str) -> Result<T, Error> {
    serde_json::from_slice(body).map_err(|source| Error::Manifest {
        media_type: media_type.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const B: &str = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    const C: &str = "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc";

    fn index_json(media_type: &str) -> String {
        format!(
            r#"{{"schemaVersion":2,"mediaType":"{media_type}","manifests":[
              {{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"{A}","size":1,
                "platform":{{"architecture":"amd64","os":"linux"}}}},
              {{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"{B}","size":2,
                "platform":{{"architecture":"arm64","os":"linux","variant":"v8"}}}},
              {{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"{C}","size":3,
                "platform":{{"architecture":"unknown","os":"unknown"}},
                "annotations":{{"vnd.docker.reference.type":"attestation-manifest"}}}}]}}"#
        )
    }

    #[test]
    fn parses_both_index_kinds_with_children() {
        for kind in [MediaType::OciIndex, MediaType::DockerManifestList] {
            let manifest = Manifest::parse(index_json(kind.as_str()).as_bytes(), None).unwrap();
            assert_eq!(manifest.media_type(), kind);
            let Manifest::Index(index) = manifest else {
                panic!("expected an index for {kind}");
            };
            let children: Vec<(String, String)> = index
                .children()
                .map(|(p, d)| {
                    (
                        p.map(ToString::to_string).unwrap_or_default(),
                        d.to_string(),
                    )
                })
                .collect();
            assert_eq!(
                children,
                [
                    ("linux/amd64".to_owned(), A.to_owned()),
                    ("linux/arm64/v8".to_owned(), B.to_owned()),
                    ("unknown/unknown".to_owned(), C.to_owned()),
                ]
            );
            assert_eq!(
                index.manifests[2].annotations["vnd.docker.reference.type"],
                "attestation-manifest"
            );
        }
    }

    #[test]
    fn parses_both_image_kinds() {
        for kind in [MediaType::OciManifest, MediaType::DockerManifest] {
            let json = format!(
                r#"{{"schemaVersion":2,"mediaType":"{kind}",
                   "config":{{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"{A}","size":7}},
                   "layers":[{{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"{B}","size":9}}]}}"#
            );
            let Manifest::Image(image) = Manifest::parse(json.as_bytes(), None).unwrap() else {
                panic!("expected an image manifest for {kind}");
            };
            assert_eq!(image.media_type, kind);
            assert_eq!(image.config.digest.to_string(), A);
            assert_eq!(image.layers[0].size, 9);
        }
    }

    #[test]
    fn content_type_is_used_when_the_body_names_no_kind() {
        let json = index_json("x").replace(r#""mediaType":"x","#, "");
        let manifest = Manifest::parse(
            json.as_bytes(),
            Some("application/vnd.oci.image.index.v1+json; charset=utf-8"),
        )
        .unwrap();
        assert_eq!(manifest.media_type(), MediaType::OciIndex);
        let err = Manifest::parse(json.as_bytes(), None).unwrap_err();
        assert!(matches!(err, Error::NoMediaType), "{err}");
    }

    #[test]
    fn body_media_type_wins_over_content_type() {
        let json = index_json(MediaType::DockerManifestList.as_str());
        let manifest = Manifest::parse(json.as_bytes(), Some(MediaType::OciManifest.as_str()));
        assert_eq!(
            manifest.unwrap().media_type(),
            MediaType::DockerManifestList
        );
    }

    #[test]
    fn rejects_unknown_kinds_and_bad_shapes() {
        let schema1 = r#"{"schemaVersion":1,"mediaType":"application/vnd.docker.distribution.manifest.v1+prettyjws"}"#;
        let err = Manifest::parse(schema1.as_bytes(), None).unwrap_err();
        assert!(err.to_string().contains("v1+prettyjws"), "{err}");

        let no_config = r#"{"mediaType":"application/vnd.oci.image.manifest.v1+json"}"#;
        let err = Manifest::parse(no_config.as_bytes(), None).unwrap_err();
        assert!(matches!(err, Error::Manifest { .. }), "{err}");

        let bad_digest = index_json(MediaType::OciIndex.as_str()).replace(A, "sha256:nope");
        assert!(Manifest::parse(bad_digest.as_bytes(), None).is_err());
        assert!(Manifest::parse(b"not json", None).is_err());
    }

    #[test]
    fn accept_header_names_all_four_kinds() {
        let accept = MediaType::accept_header();
        for kind in MediaType::ALL {
            assert!(accept.contains(kind.as_str()));
            assert_eq!(MediaType::parse(kind.as_str()), Some(kind));
        }
    }
}
