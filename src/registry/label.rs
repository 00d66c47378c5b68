//! One label of an image already in a registry, read from its config.
//!
//! `image build --push` asks this before it pushes a tag that exists: an image
//! labelled with the same content hash (`builder::LABEL`) was built from the
//! same inputs, so it is pinned as it is instead of being built again and
//! pushed over itself with another digest (builds are not reproducible to the
//! byte). An index is read through its first child that is a real platform
//! (attestation entries, `unknown/unknown`, carry no labels): every child of
//! one build gets the same labels.

use serde::Deserialize;

use super::{Client, Error};
use crate::image::{Manifest, Reference};

/// The parts of an image config this reads: `config.Labels`.
#[derive(Deserialize)]
struct ConfigBlob {
    #[serde(default)]
    config: Option<RunConfig>,
}

#[derive(Deserialize)]
struct RunConfig {
    #[serde(rename = "Labels", default)]
    labels: Option<std::collections::BTreeMap<String, String>>,
}

impl Client {
    /// The value of label `key` on the image `reference` names (for an index, on its first
    /// platform's image); `None` when the image has no such label or its config is not the
    /// JSON of an image config.
    pub fn image_label(&self, reference: &Reference, key: &str) -> Result<Option<String>, Error> {
        let image = match self.get_manifest(reference)?.manifest {
            Manifest::Image(image) => image,
            Manifest::Index(index) => {
                let Some((_, child)) = index
                    .children()
                    .find(|(platform, _)| !platform.is_some_and(|p| p.is_unknown()))
                else {
                    return Ok(None);
                };
                match self
                    .get_manifest(&reference.with_digest(child.clone()))?
                    .manifest
                {
                    Manifest::Image(image) => image,
                    Manifest::Index(_) => return Ok(None),
                }
            }
        };
        let blob = self.get_blob(reference, &image.config.digest)?;
        Ok(serde_json::from_slice::<ConfigBlob>(&blob)
            .ok()
            .and_then(|c| c.config)
            .and_then(|c| c.labels)
            .and_then(|mut labels| labels.remove(key)))
    }
}
