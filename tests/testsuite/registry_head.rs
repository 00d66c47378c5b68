//! A pinned image checked again asks by `HEAD` (issue 13): the manifests read by `GET` once
//! are kept by digest ([`KnownManifests`]), and the next `resolve_index_known` only asks
//! whether the registry still holds them. Counted in the real CNCF registry's access log;
//! the fallbacks (no `Docker-Content-Digest`, a damaged kept body, another digest announced)
//! against a fake.

use crate::registry_support;
use crate::support;

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use revendor::image::{Digest, MediaType, Platform, Reference};
use revendor::registry::{Credentials, Error, KnownManifests};

use registry_support::content::{MultiArch, multi_arch};
use registry_support::fake::{self, REPO, Routes};
use registry_support::{Auth, Registry, client, have_registry};
use support::server::{Response, Server};

/// Kept bodies in memory, by digest, as the download cache keeps them.
#[derive(Default)]
struct Kept(RefCell<HashMap<Digest, Vec<u8>>>);

impl KnownManifests for Kept {
    fn get(&self, digest: &Digest) -> Option<Vec<u8>> {
        self.0.borrow().get(digest).cloned()
    }

    fn keep(&self, body: &[u8]) {
        self.0.borrow_mut().insert(Digest::of(body), body.to_vec());
    }
}

fn both() -> Vec<Platform> {
    ["linux/amd64", "linux/arm64"]
        .iter()
        .map(|p| Platform::parse(p).unwrap())
        .collect()
}

/// How many manifest requests by `method` the access log `log` holds.
fn manifests(log: &str, method: &str) -> usize {
    log.lines()
        .filter(|l| l.contains(&format!("\"{method} /v2/")) && l.contains("/manifests/"))
        .count()
}

#[test]
fn a_second_resolve_of_a_pinned_index_asks_the_real_registry_by_head_only() {
    if !have_registry("HEAD counts") {
        return;
    }
    let registry = Registry::start_logged(Auth::Anonymous);
    let image = index("head");
    let digest = registry.push_multi_arch("example/app", "v1", &image);
    let pinned = Reference::parse(&format!("{}/example/app:v1@{digest}", registry.host)).unwrap();
    let client = client(Credentials::none());
    let kept = Kept::default();

    // One resolve: what it verified, its (GET, HEAD) manifest requests, the log and where
    // the resolve's lines start in it.
    let resolve = || {
        let before = registry.log().len();
        let index = client
            .resolve_index_known(&pinned, &both(), Some(&digest), &kept)
            .unwrap();
        let log = registry.log();
        let asked = (
            manifests(&log[before..], "GET"),
            manifests(&log[before..], "HEAD"),
        );
        (index, asked, log, before)
    };

    let (first, asked, log, _) = resolve();
    assert_eq!(
        asked,
        (3, 0),
        "the first run reads the index and its two children:\n{log}"
    );
    assert_eq!(kept.0.borrow().len(), 3, "and keeps the three bodies");

    let (second, asked, log, before) = resolve();
    assert_eq!(
        asked,
        (0, 3),
        "the second asks for each by HEAD only:\n{}",
        &log[before..]
    );
    assert_eq!(second, first, "and verifies the same index");
}

/// A fake serving `item`s with the real registry's headers, or without
/// `Docker-Content-Digest` when `announce` is false; it records each request's method.
fn fake(routes: Routes, announce: bool) -> (Server, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let server = Server::start(move |request| {
        log.lock().unwrap().push(request.method.clone());
        let mut served = routes.answer(request);
        if !announce {
            served
                .headers
                .retain(|(name, _)| !name.eq_ignore_ascii_case("Docker-Content-Digest"));
        }
        served
    });
    (server, seen)
}

fn pinned_at(server: &Server, digest: &Digest) -> Reference {
    Reference::parse(&format!("{}/{REPO}:v1@{digest}", server.host())).unwrap()
}

/// An OCI index for linux/amd64 and linux/arm64, told apart by `salt`.
fn index(salt: &str) -> MultiArch {
    multi_arch(&["linux/amd64", "linux/arm64"], salt, MediaType::OciIndex)
}

/// An index of `salt` served by [`fake`] under its digest, and what that serves.
struct Served {
    image: MultiArch,
    digest: Digest,
    server: Server,
    seen: Arc<Mutex<Vec<String>>>,
}

fn served(salt: &str, announce: bool) -> Served {
    let image = index(salt);
    let mut routes = Routes::default();
    routes.add_multi_arch(&image.index.digest.to_string(), &image);
    let (server, seen) = fake(routes, announce);
    Served {
        digest: image.index.digest.clone(),
        image,
        server,
        seen,
    }
}

#[test]
fn a_registry_that_announces_no_digest_is_read_by_get() {
    let Served {
        digest,
        server,
        seen,
        ..
    } = served("quiet", false);
    let kept = Kept::default();
    let client = client(Credentials::none());
    for _ in 0..2 {
        client
            .resolve_index_known(&pinned_at(&server, &digest), &both(), Some(&digest), &kept)
            .unwrap();
    }
    let seen = seen.lock().unwrap();
    let heads = seen.iter().filter(|m| *m == "HEAD").count();
    let gets = seen.iter().filter(|m| *m == "GET").count();
    assert_eq!(
        (heads, gets),
        (3, 6),
        "the second run's HEADs get no digest, so each is read again: {seen:?}"
    );
}

#[test]
fn a_kept_body_that_is_not_its_digest_is_read_again() {
    let Served {
        image,
        digest,
        server,
        seen,
    } = served("damaged", true);
    let kept = Kept::default();
    kept.0
        .borrow_mut()
        .insert(digest.clone(), b"{\"not\": \"the index\"}".to_vec());
    client(Credentials::none())
        .resolve_index_known(&pinned_at(&server, &digest), &both(), Some(&digest), &kept)
        .unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.first().map(String::as_str), Some("GET"), "{seen:?}");
    assert!(!seen.iter().any(|m| m == "HEAD"), "{seen:?}");
    assert_eq!(
        kept.0.borrow()[&digest],
        image.index.bytes,
        "the true body is kept"
    );
}

#[test]
fn a_head_announcing_another_digest_is_a_mismatch() {
    let image = index("moved");
    let other = index("other");
    let digest = image.index.digest.clone();
    let announced = other.index.digest.clone();
    let server = Server::start(move |request| {
        if request.method == "HEAD" {
            Response::new(200)
                .header("Content-Type", MediaType::OciIndex.as_str())
                .header("Docker-Content-Digest", announced.to_string())
        } else {
            fake::not_found()
        }
    });
    let kept = Kept::default();
    kept.keep(&image.index.bytes);
    let err = client(Credentials::none())
        .resolve_index_known(&pinned_at(&server, &digest), &both(), Some(&digest), &kept)
        .unwrap_err();
    assert!(matches!(err, Error::DigestMismatch { .. }), "{err:?}");
}
