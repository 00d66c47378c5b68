//! Small, valid OCI content to push or serve: per-platform image manifests with config and layer
//! blobs, an attestation manifest, and indexes over them.

use revendor::image::{Digest, MediaType};
use serde_json::json;

/// A blob or manifest with its bytes and digest.
#[derive(Clone, Debug)]
pub struct Item {
    pub media_type: String,
    pub bytes: Vec<u8>,
    pub digest: Digest,
}

impl Item {
    pub fn new(media_type: &str, bytes: Vec<u8>) -> Item {
        Item {
            media_type: media_type.to_owned(),
            digest: Digest::of(&bytes),
            bytes,
        }
    }

    fn descriptor(&self) -> serde_json::Value {
        json!({"mediaType": self.media_type, "digest": self.digest.to_string(), "size": self.bytes.len()})
    }
}

/// One image manifest and the blobs it references.
#[derive(Clone, Debug)]
pub struct Image {
    pub blobs: Vec<Item>,
    pub manifest: Item,
}

/// An image for `platform` (`os/arch[/variant]`); `salt` makes otherwise equal images differ.
pub fn image(platform: &str, salt: &str) -> Image {
    labelled_image(platform, salt, &[])
}

/// [`image`] whose config carries `labels` (`config.Labels`), as a builder's `--label` writes.
pub fn labelled_image(platform: &str, salt: &str, labels: &[(&str, &str)]) -> Image {
    let mut parts = platform.split('/');
    let (os, arch) = (parts.next().unwrap(), parts.next().unwrap());
    let layer = Item::new(
        "application/vnd.oci.image.layer.v1.tar",
        format!("layer of {platform} {salt}").into_bytes(),
    );
    let mut body = json!({
        "architecture": arch, "os": os,
        "rootfs": {"type": "layers", "diff_ids": [layer.digest.to_string()]}
    });
    if !labels.is_empty() {
        let labels: std::collections::BTreeMap<&str, &str> = labels.iter().copied().collect();
        body["config"] = json!({ "Labels": labels });
    }
    let config = Item::new(
        "application/vnd.oci.image.config.v1+json",
        serde_json::to_vec(&body).unwrap(),
    );
    let manifest = Item::new(
        MediaType::OciManifest.as_str(),
        serde_json::to_vec(&json!({
            "schemaVersion": 2,
            "mediaType": MediaType::OciManifest.as_str(),
            "config": config.descriptor(),
            "layers": [layer.descriptor()],
        }))
        .unwrap(),
    );
    Image {
        blobs: vec![config, layer],
        manifest,
    }
}

/// A buildx-style attestation manifest for `subject`.
pub fn attestation(subject: &Digest) -> Image {
    let statement = Item::new(
        "application/vnd.in-toto+json",
        format!(r#"{{"_type":"https://in-toto.io/Statement/v0.1","subject":"{subject}"}}"#)
            .into_bytes(),
    );
    let config = Item::new("application/vnd.oci.image.config.v1+json", b"{}".to_vec());
    let manifest = Item::new(
        MediaType::OciManifest.as_str(),
        serde_json::to_vec(&json!({
            "schemaVersion": 2,
            "mediaType": MediaType::OciManifest.as_str(),
            "config": config.descriptor(),
            "layers": [statement.descriptor()],
        }))
        .unwrap(),
    );
    Image {
        blobs: vec![config, statement],
        manifest,
    }
}

/// A multi-platform image: one image per platform, an attestation for each, and the index.
#[derive(Clone, Debug)]
pub struct MultiArch {
    pub images: Vec<(String, Image)>,
    pub attestations: Vec<Image>,
    pub index: Item,
}

impl MultiArch {
    /// Every image manifest (children first) in push order.
    pub fn manifests(&self) -> Vec<&Image> {
        self.images
            .iter()
            .map(|(_, i)| i)
            .chain(&self.attestations)
            .collect()
    }

    /// The same images under an index of `kind`.
    fn with_kind(self, kind: MediaType) -> MultiArch {
        index_over(self.images, kind)
    }

    pub fn child(&self, platform: &str) -> &Digest {
        let (_, image) = self.images.iter().find(|(p, _)| p == platform).unwrap();
        &image.manifest.digest
    }
}

/// An index of `kind` over `platforms`, with attestation entries like buildx writes.
pub fn multi_arch(platforms: &[&str], salt: &str, kind: MediaType) -> MultiArch {
    multi_arch_labelled(platforms, salt, &[]).with_kind(kind)
}

/// An OCI index over `platforms` whose images carry `labels`.
pub fn multi_arch_labelled(platforms: &[&str], salt: &str, labels: &[(&str, &str)]) -> MultiArch {
    let images: Vec<(String, Image)> = platforms
        .iter()
        .map(|p| ((*p).to_owned(), labelled_image(p, salt, labels)))
        .collect();
    index_over(images, MediaType::OciIndex)
}

fn index_over(images: Vec<(String, Image)>, kind: MediaType) -> MultiArch {
    let attestations: Vec<Image> = images
        .iter()
        .map(|(_, i)| attestation(&i.manifest.digest))
        .collect();
    let mut entries = Vec::new();
    for (platform, image) in &images {
        let mut parts = platform.split('/');
        let mut descriptor = image.manifest.descriptor();
        descriptor["platform"] = json!({"os": parts.next(), "architecture": parts.next()});
        if let Some(variant) = parts.next() {
            descriptor["platform"]["variant"] = json!(variant);
        }
        entries.push(descriptor);
    }
    for (attestation, (_, image)) in attestations.iter().zip(&images) {
        let mut descriptor = attestation.manifest.descriptor();
        descriptor["platform"] = json!({"os": "unknown", "architecture": "unknown"});
        descriptor["annotations"] = json!({
            "vnd.docker.reference.digest": image.manifest.digest.to_string(),
            "vnd.docker.reference.type": "attestation-manifest",
        });
        entries.push(descriptor);
    }
    let index = Item::new(
        kind.as_str(),
        serde_json::to_vec(&json!({
            "schemaVersion": 2,
            "mediaType": kind.as_str(),
            "manifests": entries,
        }))
        .unwrap(),
    );
    MultiArch {
        images,
        attestations,
        index,
    }
}

/// A Helm chart as Helm pushes it: its Chart.yaml as the config blob
/// (`application/vnd.cncf.helm.config.v1+json`), the archive `tgz` (packaged by real Helm) as
/// the one chart layer, and a manifest without a `mediaType` field, as Helm writes it.
pub fn chart(name: &str, version: &str, tgz: Vec<u8>) -> Image {
    let config = Item::new(
        "application/vnd.cncf.helm.config.v1+json",
        serde_json::to_vec(&json!({"name": name, "version": version, "apiVersion": "v2"})).unwrap(),
    );
    let layer = Item::new("application/vnd.cncf.helm.chart.content.v1.tar+gzip", tgz);
    let manifest = Item::new(
        MediaType::OciManifest.as_str(),
        serde_json::to_vec(&json!({
            "schemaVersion": 2,
            "config": config.descriptor(),
            "layers": [layer.descriptor()],
            "annotations": {"org.opencontainers.image.title": name, "org.opencontainers.image.version": version},
        }))
        .unwrap(),
    );
    Image {
        blobs: vec![config, layer],
        manifest,
    }
}
