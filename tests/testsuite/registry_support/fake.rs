//! A fake registry for faults the real one will not produce on demand: a body that does not
//! match its digest, a 401 without a challenge, a 500 then success, a tag that moves. It is a
//! map from manifest path to content served the way the distribution registry serves it, plus
//! whatever a test's handler adds in front.

use std::collections::HashMap;

use super::content::{Item, MultiArch};
use crate::support::server::{Request, Response};

pub const REPO: &str = "team/app";

/// Manifests by `/v2/<repo>/manifests/<tag or digest>` path.
#[derive(Clone, Default)]
pub struct Routes {
    by_path: HashMap<String, Item>,
}

impl Routes {
    /// `item` under `reference` (a tag or digest string) in [`REPO`].
    pub fn add(&mut self, reference: &str, item: &Item) -> &mut Routes {
        self.by_path.insert(path(reference), item.clone());
        self
    }

    /// The index under `tag` and every child under its digest.
    pub fn add_multi_arch(&mut self, tag: &str, image: &MultiArch) -> &mut Routes {
        for child in image.manifests() {
            self.add(&child.manifest.digest.to_string(), &child.manifest);
        }
        self.add(tag, &image.index)
    }

    /// Serves the manifest at the request path, or the spec's 404.
    pub fn answer(&self, request: &Request) -> Response {
        match self.by_path.get(request.path()) {
            Some(item) => serve(item),
            None => not_found(),
        }
    }
}

/// The manifest path for `reference` in [`REPO`].
pub fn path(reference: &str) -> String {
    format!("/v2/{REPO}/manifests/{reference}")
}

/// A 200 with the body, its Content-Type and its true digest.
pub fn serve(item: &Item) -> Response {
    Response::new(200)
        .header("Content-Type", &item.media_type)
        .header("Docker-Content-Digest", item.digest.to_string())
        .body(item.bytes.clone())
}

/// The distribution registry's 404 for an unknown tag.
pub fn not_found() -> Response {
    Response::new(404)
        .header("Content-Type", "application/json")
        .body(r#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}"#)
}
