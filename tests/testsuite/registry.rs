//! The registry client against the real CNCF registry (skipped with a note when
//! `/usr/bin/docker-registry` is missing) and against a fake for faults on demand.

use crate::registry_support;
use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use revendor::image::{Digest, Manifest, MediaType, Platform, Reference};
use revendor::net::HttpError;
use revendor::registry::{Client, Credentials, Error, Mirrors, metadata_digest};
use serde_json::json;

use registry_support::content::{self, multi_arch};
use registry_support::fake::{self, REPO, Routes};
use registry_support::{Auth, Registry, client, docker_config, have_registry, token};
use support::server::{Pace, Response, Server};

const BOTH: [&str; 2] = ["linux/amd64", "linux/arm64"];

fn platforms(list: &[&str]) -> Vec<Platform> {
    list.iter().map(|p| Platform::parse(p).unwrap()).collect()
}

fn reference(host: &str, repository: &str, tag: &str) -> Reference {
    Reference::parse(&format!("{host}/{repository}:{tag}")).unwrap()
}

fn anonymous() -> Client {
    client(Credentials::none())
}

fn fake_with(routes: Routes) -> Server {
    Server::start(move |request| routes.answer(request))
}

// ---- fake registry: faults on demand ----

#[test]
fn fake_single_platform_tag_is_not_an_index() {
    let image = content::image("linux/amd64", "single");
    let server = fake_with(Routes::default().add("v1", &image.manifest).clone());
    let err = anonymous()
        .resolve_index(
            &reference(&server.host(), REPO, "v1"),
            &platforms(&BOTH),
            None,
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::NotAnIndex {
                media_type: MediaType::OciManifest,
                ..
            }
        ),
        "{err:?}"
    );
    // The fake serves no config blob: the refusal stands without the platform.
    assert!(
        err.to_string().ends_with(
            "is a single-platform application/vnd.oci.image.manifest.v1+json for a platform its \
             config does not name, not a multi-platform index of the configured platforms \
             [linux/amd64, linux/arm64]"
        ),
        "{err}"
    );
}

#[test]
fn fake_index_missing_arm64_names_the_platform() {
    let image = multi_arch(&["linux/amd64"], "amd64-only", MediaType::OciIndex);
    let server = fake_with(Routes::default().add_multi_arch("v1", &image).clone());
    let err = anonymous()
        .resolve_index(
            &reference(&server.host(), REPO, "v1"),
            &platforms(&BOTH),
            None,
        )
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("missing [linux/arm64], unexpected []"),
        "{err}"
    );
}

#[test]
fn fake_body_not_matching_its_digest_is_rejected() {
    let real = content::image("linux/amd64", "real");
    let other = content::image("linux/amd64", "other");
    let (announced, tampered) = (real.manifest.digest.clone(), other.manifest.bytes.clone());
    let server = Server::start(move |request| {
        let response = Response::new(200)
            .header("Content-Type", MediaType::OciManifest.as_str())
            .body(tampered.clone());
        if request.path().ends_with("/tagged") {
            response.header("Docker-Content-Digest", announced.to_string())
        } else {
            response
        }
    });
    let client = anonymous();
    let err = client
        .get_manifest(&reference(&server.host(), REPO, "tagged"))
        .unwrap_err();
    assert!(matches!(err, Error::DigestMismatch { .. }), "{err:?}");
    assert!(err.to_string().contains("Docker-Content-Digest"), "{err}");

    let by_digest = Reference::parse(&format!(
        "{}/{REPO}@{}",
        server.host(),
        real.manifest.digest
    ))
    .unwrap();
    let err = client.get_manifest(&by_digest).unwrap_err();
    assert!(
        err.to_string()
            .contains(&format!("but {} was requested", real.manifest.digest)),
        "{err}"
    );
}

#[test]
fn fake_401_without_a_challenge_is_a_clear_error() {
    let server = Server::start(|_| {
        Response::new(401).body(r#"{"errors":[{"code":"UNAUTHORIZED","message":"who are you"}]}"#)
    });
    let tag = reference(&server.host(), REPO, "v1");
    let err = anonymous().get_manifest(&tag).unwrap_err();
    assert!(matches!(err, Error::Unauthorized { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("without a WWW-Authenticate challenge"),
        "{text}"
    );
    assert!(text.contains("UNAUTHORIZED (who are you)"), "{text}");
    // A HEAD answer has no body to carry the spec code; the reason alone must do.
    let err = anonymous().head_manifest(&tag).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("without a WWW-Authenticate challenge"),
        "{err}"
    );
}

/// A tag list page of `tags`, with a `Link` to `next` when there is one.
fn tag_page(tags: &[&str], next: Option<&str>) -> Response {
    let page = Response::new(200)
        .header("Content-Type", "application/json")
        .body(json!({"name": REPO, "tags": tags}).to_string());
    match next {
        Some(next) => page.header("Link", format!("<{next}>; rel=\"next\"")),
        None => page,
    }
}

#[test]
fn fake_tag_list_pages_are_followed_through_their_link_header() {
    let server = Server::start(|request| match request.target.as_str() {
        "/v2/team/app/tags/list" => tag_page(
            &["1.0.0", "1.0.1"],
            Some("/v2/team/app/tags/list?last=1.0.1&n=2"),
        ),
        "/v2/team/app/tags/list?last=1.0.1&n=2" => tag_page(&["1.1.0_build.1"], None),
        _ => fake::not_found(),
    });
    let tags = anonymous()
        .tags(&reference(&server.host(), REPO, "v1"))
        .unwrap();
    assert_eq!(tags, ["1.0.0", "1.0.1", "1.1.0_build.1"]);
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn fake_tag_list_whose_next_page_is_elsewhere_or_absent_is_a_clear_error() {
    let elsewhere = Server::start(|_| {
        tag_page(
            &["1.0.0"],
            Some("http://127.0.0.2:1/v2/team/app/tags/list?n=1"),
        )
    });
    let err = anonymous()
        .tags(&reference(&elsewhere.host(), REPO, "v1"))
        .unwrap_err();
    assert!(err.to_string().contains("on another host"), "{err}");
    let missing = Server::start(|_| fake::not_found());
    let err = anonymous()
        .tags(&reference(&missing.host(), REPO, "v1"))
        .unwrap_err();
    assert!(matches!(err, Error::ManifestUnknown { .. }), "{err:?}");
}

fn flaky(failures: usize, routes: Routes) -> Server {
    let count = AtomicUsize::new(0);
    Server::start(move |request| {
        if count.fetch_add(1, Ordering::SeqCst) < failures {
            Response::new(500).body("<html>upstream exploded</html>")
        } else {
            routes.answer(request)
        }
    })
}

#[test]
fn fake_500_then_success_is_retried() {
    let image = multi_arch(&BOTH, "flaky", MediaType::OciIndex);
    let routes = Routes::default().add_multi_arch("v1", &image).clone();
    let server = flaky(1, routes.clone());
    let verified = anonymous()
        .resolve_index(
            &reference(&server.host(), REPO, "v1"),
            &platforms(&BOTH),
            None,
        )
        .unwrap();
    assert_eq!(verified.digest, image.index.digest);
    // 1 failure + index + 2 children.
    assert_eq!(server.requests().len(), 4);

    let server = flaky(1, routes);
    let once = Client::builder().retries(0).build();
    let err = once
        .head_manifest(&reference(&server.host(), REPO, "v1"))
        .unwrap_err();
    assert!(err.is_transient(), "{err:?}");
    assert!(matches!(err, Error::Status { status: 500, .. }), "{err:?}");
}

#[test]
fn fake_persistent_500_gives_up_after_the_retries() {
    let server = flaky(usize::MAX, Routes::default());
    let err = anonymous()
        .get_manifest(&reference(&server.host(), REPO, "v1"))
        .unwrap_err();
    // An error body is shown only as a message of a known format; this HTML is not one.
    assert!(err.to_string().ends_with("answered HTTP 500"), "{err}");
    assert_eq!(server.requests().len(), 3, "one try and two retries");
}

#[test]
fn fake_timeout_is_transient() {
    let server = Server::start(|_| {
        thread::sleep(Duration::from_millis(1500));
        fake::not_found()
    });
    let client = Client::builder()
        .retries(0)
        .timeout(Duration::from_millis(300))
        .build();
    let err = client
        .head_manifest(&reference(&server.host(), REPO, "v1"))
        .unwrap_err();
    assert!(matches!(err, Error::Transport { .. }), "{err:?}");
    assert!(err.is_transient(), "{err:?}");
}

#[test]
fn fake_body_trickling_past_the_deadline_times_out_on_each_attempt() {
    let image = content::image("linux/amd64", "slow");
    let server = Server::start(move |_| {
        fake::serve(&image.manifest).paced(Pace::per_byte(Duration::from_millis(50)))
    });
    let client = Client::builder()
        .retries(1)
        .backoff(Duration::from_millis(20), Duration::from_millis(20))
        .timeout(Duration::from_millis(300))
        .build();
    // The body would take about a minute: the error, not a time bound, shows
    // that each attempt was cut at its deadline.
    let err = client
        .get_manifest(&reference(&server.host(), REPO, "v1"))
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Transport(HttpError::TimedOut { attempts: 2, .. })
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("timed out after 0.3s"), "{err}");
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn fake_redirect_to_plain_http_elsewhere_is_refused() {
    let server = Server::start(|request| {
        Response::new(302).header(
            "Location",
            format!("http://example.invalid{}", request.target),
        )
    });
    let err = anonymous()
        .get_manifest(&reference(&server.host(), REPO, "v1"))
        .unwrap_err();
    assert!(
        matches!(err, Error::Transport(HttpError::Redirect { .. })),
        "{err:?}"
    );
    assert!(
        err.to_string().ends_with(&format!(
            "to `http://example.invalid{}`: plain http outside loopback is refused",
            fake::path("v1")
        )),
        "{err}"
    );
    assert!(!err.is_transient());
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn fake_error_bodies_echoing_credentials_are_scrubbed() {
    let dir = tempfile::tempdir().unwrap();
    let pair = STANDARD.encode(format!("bob:{PASSWORD}"));
    for status in [400, 403] {
        let server = Server::start(move |request| {
            if request.header("authorization").is_none() {
                return Response::new(401).header("WWW-Authenticate", r#"Basic realm="fake""#);
            }
            // Authorization first: the long Accept header would push it past the message cut.
            let mut headers: Vec<String> = request
                .headers
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect();
            headers.sort_by_key(|h| !h.starts_with("authorization"));
            let message = format!("you sent {}", headers.join("; "));
            Response::new(status)
                .body(json!({"errors": [{"code": "DENIED", "message": message}]}).to_string())
        });
        let credentials = docker_config(
            dir.path(),
            &json!({"auths": {server.host(): {"auth": pair}}}),
        );
        let err = client(credentials)
            .get_manifest(&reference(&server.host(), REPO, "v1"))
            .unwrap_err();
        let text = format!("{err}\n{err:?}");
        assert!(!text.contains(&pair) && !text.contains(PASSWORD), "{text}");
        assert!(text.contains("authorization: Basic <redacted>"), "{text}");
    }
}

/// Serves `first` for the tag's first `reads` reads and `then` afterwards.
fn moving_tag(
    first: Option<&content::MultiArch>,
    reads: usize,
    then: &content::MultiArch,
) -> Server {
    let mut before = Routes::default();
    if let Some(first) = first {
        before.add_multi_arch("v1", first);
        before.add_multi_arch("unused", then);
    }
    let after = Routes::default().add_multi_arch("v1", then).clone();
    let count = AtomicUsize::new(0);
    Server::start(move |request| {
        if request.path() == fake::path("v1") && count.fetch_add(1, Ordering::SeqCst) < reads {
            before.answer(request)
        } else {
            after.answer(request)
        }
    })
}

#[test]
fn fake_tag_that_moves_between_reads_is_a_clear_error() {
    let old = multi_arch(&BOTH, "old", MediaType::OciIndex);
    let new = multi_arch(&BOTH, "new", MediaType::OciIndex);
    let server = moving_tag(Some(&old), 1, &new);
    let client = anonymous();
    let tag = reference(&server.host(), REPO, "v1");
    let seen = client.head_manifest(&tag).unwrap();
    assert_eq!(seen, old.index.digest);
    let err = client
        .resolve_index(&tag, &platforms(&BOTH), Some(&seen))
        .unwrap_err();
    assert!(matches!(err, Error::UnexpectedDigest { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "`{tag}` resolves to {}, expected {}",
            new.index.digest, old.index.digest
        )
    );
}

#[test]
fn fake_retry_waits_for_the_expected_digest() {
    let old = multi_arch(&BOTH, "old", MediaType::OciIndex);
    let new = multi_arch(&BOTH, "new", MediaType::OciIndex);
    let server = moving_tag(Some(&old), 2, &new);
    let tag = reference(&server.host(), REPO, "v1");
    let verified = anonymous()
        .resolve_index_with_retry(&tag, &platforms(&BOTH), Some(&new.index.digest), 5)
        .unwrap();
    assert_eq!(verified.digest, new.index.digest);
    assert_eq!(
        verified.pinned().to_string(),
        format!("{tag}@{}", new.index.digest)
    );
}

#[test]
fn fake_retry_waits_for_a_missing_tag_but_not_forever() {
    let image = multi_arch(&BOTH, "late", MediaType::OciIndex);
    let server = moving_tag(None, 2, &image);
    let tag = reference(&server.host(), REPO, "v1");
    let client = anonymous();
    let err = client
        .resolve_index_with_retry(&tag, &platforms(&BOTH), None, 2)
        .unwrap_err();
    assert!(matches!(err, Error::ManifestUnknown { .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with(&format!("manifest `{tag}` not found")),
        "{err}"
    );
    let verified = client
        .resolve_index_with_retry(&tag, &platforms(&BOTH), None, 3)
        .unwrap();
    assert_eq!(verified.digest, image.index.digest);
}

#[test]
fn fake_requests_accept_all_four_manifest_kinds() {
    let image = multi_arch(&BOTH, "accept", MediaType::DockerManifestList);
    let server = fake_with(Routes::default().add_multi_arch("v1", &image).clone());
    let verified = anonymous()
        .resolve_index(
            &reference(&server.host(), REPO, "v1"),
            &platforms(&BOTH),
            None,
        )
        .unwrap();
    assert_eq!(verified.media_type, MediaType::DockerManifestList);
    for request in server.requests() {
        let accept = request.header("accept").unwrap_or_default();
        for kind in MediaType::ALL {
            assert!(accept.contains(kind.as_str()), "{accept}");
        }
    }
}

#[test]
fn fake_plain_http_token_realm_outside_loopback_is_refused() {
    let server = Server::start(|_| {
        Response::new(401).header(
            "WWW-Authenticate",
            r#"Bearer realm="http://auth.example.com/token",service="x""#,
        )
    });
    let err = anonymous()
        .head_manifest(&reference(&server.host(), REPO, "v1"))
        .unwrap_err();
    assert!(matches!(err, Error::Url { .. }), "{err:?}");
    assert!(err.to_string().contains("must be https"), "{err}");
}

const PASSWORD: &str = "PASSWORD-must-not-leak";
const TOKEN: &str = "TOKEN-must-not-leak";

/// A registry whose token endpoint (itself) hands out [`TOKEN`] for [`PASSWORD`] but whose
/// manifests refuse everyone.
fn refusing_token_registry(token_status: u16) -> Server {
    let realm: Arc<std::sync::OnceLock<String>> = Arc::default();
    let server = {
        let realm = realm.clone();
        Server::start(move |request| {
            if request.path() == "/token" {
                return Response::new(token_status).body(json!({"token": TOKEN}).to_string());
            }
            Response::new(401)
                .header(
                    "WWW-Authenticate",
                    format!(r#"Bearer realm="{}",service="fake""#, realm.get().unwrap()),
                )
                .body(r#"{"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]}"#)
        })
    };
    realm
        .set(format!("http://{}/token", server.host()))
        .unwrap();
    server
}

#[test]
fn credentials_and_tokens_never_appear_in_errors_or_debug_output() {
    let dir = tempfile::tempdir().unwrap();
    let pair = STANDARD.encode(format!("bob:{PASSWORD}"));
    for token_status in [200, 401] {
        let server = refusing_token_registry(token_status);
        let credentials = docker_config(
            dir.path(),
            &json!({"auths": {server.host(): {"auth": pair}}}),
        );
        let client = client(credentials);
        let err = client
            .head_manifest(&reference(&server.host(), REPO, "v1"))
            .unwrap_err();
        let token_request = server
            .requests()
            .into_iter()
            .find(|r| r.path() == "/token")
            .unwrap();
        assert_eq!(
            token_request.header("authorization"),
            Some(format!("Basic {pair}").as_str())
        );

        let mut text = format!("{err}\n{err:?}\n{client:?}");
        let mut source = std::error::Error::source(&err);
        while let Some(cause) = source {
            text.push_str(&format!("\n{cause}"));
            source = cause.source();
        }
        for secret in [PASSWORD, TOKEN, pair.as_str()] {
            assert!(!text.contains(secret), "{secret} leaked:\n{text}");
        }
        if token_status == 200 {
            assert!(matches!(err, Error::Unauthorized { .. }), "{err:?}");
            assert!(text.contains("refused the credentials"), "{text}");
        } else {
            assert!(
                matches!(
                    err,
                    Error::Token {
                        status: Some(401),
                        ..
                    }
                ),
                "{err:?}"
            );
        }
    }
}

// ---- the real registry ----

#[test]
fn real_registry_resolves_and_verifies_a_pushed_index() {
    if !have_registry("real_registry_resolves_and_verifies_a_pushed_index") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    let image = multi_arch(&BOTH, "round-trip", MediaType::OciIndex);
    let pushed = registry.push_multi_arch("cozystack/multus-cni", "v1.6.0", &image);
    let client = anonymous();
    client.ping(&registry.host).unwrap();

    let tag = reference(&registry.host, "cozystack/multus-cni", "v1.6.0");
    assert_eq!(client.head_manifest(&tag).unwrap(), pushed);
    let fetched = client.get_manifest(&tag).unwrap();
    assert_eq!(fetched.digest, pushed);
    assert_eq!(Digest::of(&fetched.body), pushed);
    let Manifest::Index(index) = &fetched.manifest else {
        panic!("expected an index, got {:?}", fetched.manifest);
    };
    assert_eq!(
        index.children().count(),
        4,
        "two images and two attestations"
    );

    let metadata = registry.dir.path().join("metadata.json");
    std::fs::write(
        &metadata,
        json!({"containerimage.digest": pushed.to_string(), "image.name": tag.to_string()})
            .to_string(),
    )
    .unwrap();
    let expected = metadata_digest(&metadata).unwrap();
    let configured = platforms(&["linux/arm64", "linux/amd64"]);
    let verified = client
        .resolve_index(&tag, &configured, Some(&expected))
        .unwrap();
    assert_eq!(verified.digest, pushed);
    assert_eq!(verified.media_type, MediaType::OciIndex);
    let children: Vec<(String, Digest)> = verified
        .children
        .iter()
        .map(|(p, d)| (p.to_string(), d.clone()))
        .collect();
    assert_eq!(
        children,
        [
            ("linux/arm64".to_owned(), image.child("linux/arm64").clone()),
            ("linux/amd64".to_owned(), image.child("linux/amd64").clone()),
        ]
    );
    assert_eq!(
        verified.pinned().to_string(),
        format!("{}/cozystack/multus-cni:v1.6.0@{pushed}", registry.host)
    );
    let by_digest = tag.with_digest(image.child("linux/arm64").clone());
    assert_eq!(
        client.head_manifest(&by_digest).unwrap(),
        *image.child("linux/arm64")
    );
}

#[test]
fn real_registry_reports_wrong_content_clearly() {
    if !have_registry("real_registry_reports_wrong_content_clearly") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    let host = registry.host.clone();
    let client = anonymous();
    let both = platforms(&BOTH);

    registry.push_image("app", "single", &content::image("linux/amd64", "single"));
    let err = client
        .resolve_index(&reference(&host, "app", "single"), &both, None)
        .unwrap_err();
    assert!(matches!(err, Error::NotAnIndex { .. }), "{err:?}");

    let amd64_only = multi_arch(&["linux/amd64"], "amd64-only", MediaType::OciIndex);
    registry.push_multi_arch("app", "amd64-only", &amd64_only);
    let err = client
        .resolve_index(&reference(&host, "app", "amd64-only"), &both, None)
        .unwrap_err();
    assert!(err.to_string().contains("missing [linux/arm64]"), "{err}");

    let extra = multi_arch(
        &["linux/amd64", "linux/arm64", "linux/s390x"],
        "extra",
        MediaType::DockerManifestList,
    );
    registry.push_multi_arch("app", "extra", &extra);
    let err = client
        .resolve_index(&reference(&host, "app", "extra"), &both, None)
        .unwrap_err();
    assert!(
        err.to_string().contains("unexpected [linux/s390x]"),
        "{err}"
    );

    let image = multi_arch(&BOTH, "good", MediaType::DockerManifestList);
    registry.push_multi_arch("app", "good", &image);
    let stale = Digest::of(b"what the build said");
    let err = client
        .resolve_index(&reference(&host, "app", "good"), &both, Some(&stale))
        .unwrap_err();
    assert!(matches!(err, Error::UnexpectedDigest { .. }), "{err:?}");

    for (repository, tag) in [("app", "nope"), ("nothing/here", "v1")] {
        let err = client
            .head_manifest(&reference(&host, repository, tag))
            .unwrap_err();
        assert!(matches!(err, Error::ManifestUnknown { .. }), "{err:?}");
        let err = client
            .get_manifest(&reference(&host, repository, tag))
            .unwrap_err();
        assert!(matches!(err, Error::ManifestUnknown { .. }), "{err:?}");
    }
}

#[test]
fn real_registry_read_back_waits_for_a_late_push() {
    if !have_registry("real_registry_read_back_waits_for_a_late_push") {
        return;
    }
    let registry = Arc::new(Registry::start(Auth::Anonymous));
    let image = multi_arch(&BOTH, "late", MediaType::OciIndex);
    let pusher = {
        let (registry, image) = (registry.clone(), image.clone());
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(150));
            registry.push_multi_arch("app", "late", &image)
        })
    };
    let client = Client::builder()
        .backoff(Duration::from_millis(50), Duration::from_millis(200))
        .build();
    let verified = client
        .resolve_index_with_retry(
            &reference(&registry.host, "app", "late"),
            &platforms(&BOTH),
            Some(&image.index.digest),
            30,
        )
        .unwrap();
    assert_eq!(verified.digest, pusher.join().unwrap());
}

#[test]
fn real_registry_as_a_docker_hub_mirror() {
    if !have_registry("real_registry_as_a_docker_hub_mirror") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    let image = multi_arch(&BOTH, "golang", MediaType::OciIndex);
    let pushed = registry.push_multi_arch("library/golang", "1.26", &image);
    let client = Client::builder()
        .mirrors(Mirrors::parse(&format!("docker.io={}", registry.host)).unwrap())
        .build();
    for name in [
        "golang:1.26",
        "docker.io/library/golang:1.26",
        "index.docker.io/golang:1.26",
    ] {
        let golang = Reference::parse(name).unwrap();
        assert_eq!(client.head_manifest(&golang).unwrap(), pushed, "{name}");
        let verified = client
            .resolve_index(&golang, &platforms(&BOTH), None)
            .unwrap();
        assert_eq!(verified.pinned().to_string(), format!("{name}@{pushed}"));
    }
}

#[test]
fn real_registry_with_basic_auth() {
    if !have_registry("real_registry_with_basic_auth") {
        return;
    }
    let registry = Registry::start(Auth::Htpasswd);
    let image = multi_arch(&BOTH, "basic", MediaType::OciIndex);
    let pushed = registry.push_multi_arch("app", "v1", &image);
    let tag = reference(&registry.host, "app", "v1");
    let dir = tempfile::tempdir().unwrap();

    let err = anonymous().head_manifest(&tag).unwrap_err();
    assert!(matches!(err, Error::Unauthorized { .. }), "{err:?}");
    assert!(
        err.to_string().contains("the docker config has none for"),
        "{err}"
    );

    let good = docker_config(
        dir.path(),
        &json!({"auths": {format!("http://{}/v2/", registry.host): {
            "auth": STANDARD.encode(format!("{}:{}", registry_support::HT_USER, registry_support::HT_PASSWORD))
        }}}),
    );
    let client = client(good);
    client.ping(&registry.host).unwrap();
    let verified = client
        .resolve_index(&tag, &platforms(&BOTH), Some(&pushed))
        .unwrap();
    assert_eq!(verified.digest, pushed);

    let wrong = "WRONG-password-do-not-print";
    let bad = docker_config(
        dir.path(),
        &json!({"auths": {registry.host.clone(): {"username": registry_support::HT_USER, "password": wrong}}}),
    );
    let err = registry_support::client(bad)
        .head_manifest(&tag)
        .unwrap_err();
    let text = format!("{err} {err:?}");
    assert!(text.contains("refused the credentials"), "{text}");
    assert!(!text.contains(wrong), "{text}");
}

#[test]
fn real_registry_with_token_auth() {
    if !have_registry("real_registry_with_token_auth") {
        return;
    }
    let registry = Registry::start(Auth::Token);
    let both = platforms(&BOTH);
    let public = multi_arch(&BOTH, "public", MediaType::OciIndex);
    let private = multi_arch(&BOTH, "private", MediaType::OciIndex);
    registry.push_multi_arch("public/app", "v1", &public);
    registry.push_multi_arch("private/app", "v1", &private);
    let public_tag = reference(&registry.host, "public/app", "v1");
    let private_tag = reference(&registry.host, "private/app", "v1");
    let dir = tempfile::tempdir().unwrap();

    let verified = anonymous().resolve_index(&public_tag, &both, None).unwrap();
    assert_eq!(verified.digest, public.index.digest, "anonymous token pull");
    let err = anonymous().head_manifest(&private_tag).unwrap_err();
    assert!(matches!(err, Error::Unauthorized { .. }), "{err:?}");
    assert!(
        err.to_string().contains("refused anonymous access"),
        "{err}"
    );

    let password = docker_config(
        dir.path(),
        &json!({"auths": {registry.host.clone(): {"username": token::USER, "password": token::PASSWORD}}}),
    );
    let verified = client(password)
        .resolve_index(&private_tag, &both, None)
        .unwrap();
    assert_eq!(
        verified.digest, private.index.digest,
        "token for a password"
    );

    let identity = docker_config(
        dir.path(),
        &json!({"auths": {registry.host.clone(): {"identitytoken": token::IDENTITY_TOKEN}}}),
    );
    let verified = client(identity)
        .resolve_index(&private_tag, &both, None)
        .unwrap();
    assert_eq!(
        verified.digest, private.index.digest,
        "token for an identity token"
    );

    let wrong = docker_config(
        dir.path(),
        &json!({"auths": {registry.host.clone(): {"username": token::USER, "password": "nope-WRONG"}}}),
    );
    let err = client(wrong).head_manifest(&private_tag).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Token {
                status: Some(401),
                ..
            }
        ),
        "{err:?}"
    );
    let text = format!("{err} {err:?}");
    assert!(
        text.contains("refused the credentials") && !text.contains("nope-WRONG"),
        "{text}"
    );
}
