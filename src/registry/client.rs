//! `Client`: a blocking reader of OCI registries (manifests and digests), with auth and
//! mirrors, on the one [`net::Transport`] (connections, redirects, deadline, retries).
//!
//! Every request goes through [`Client::send`]:
//! 1. pick the host (the mirror, if one is configured) and the scheme: plain http only for
//!    loopback hosts (`net::is_loopback`), https for everything else;
//! 2. send with the cached `Authorization` for (host, repository); the transport retries
//!    transient failures (5xx, timeouts, resets) with its bounded backoff;
//! 3. on 401, authenticate from the challenge (see `auth`) and send once more.
//!
//! Bodies are capped at [`MANIFEST_LIMIT`]. An error shows a body only as its spec error codes
//! and messages, scrubbed of credentials.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use reqwest::{Method, StatusCode};

use super::auth::{self, Authorization, Challenge};
use super::error::parse_api_errors;
use super::{Credential, Credentials, Error, KnownManifests, Mirrors};
use crate::image::{Digest, Manifest, MediaType, Reference};
use crate::net::{self, Answer, Backoff, Request, Transport, error_message};

/// The most bytes read from any answer; the distribution registry caps manifests at 4 MiB.
pub const MANIFEST_LIMIT: u64 = 4 * 1024 * 1024;

const DOCKER_CONTENT_DIGEST: &str = "Docker-Content-Digest";

/// A manifest whose body hashed to `digest`, which matched what the registry announced and, when
/// the reference pinned one, what was asked for.
#[derive(Clone, Debug)]
pub struct FetchedManifest {
    /// The sha256 of `body`.
    pub digest: Digest,
    /// The parsed body.
    pub manifest: Manifest,
    /// The bytes exactly as served (what `digest` covers).
    pub body: Vec<u8>,
}

/// Settings for a [`Client`]: the transport's retries, backoff and deadline, plus credentials
/// and mirrors. Start from [`ClientBuilder::new`] (anonymous, no mirrors).
#[derive(Debug)]
pub struct ClientBuilder {
    transport: net::TransportBuilder,
    credentials: Credentials,
    mirrors: Mirrors,
}

impl Default for ClientBuilder {
    fn default() -> ClientBuilder {
        ClientBuilder::new()
    }
}

impl ClientBuilder {
    /// Defaults: 3 retries, 500 ms first backoff doubling up to 8 s, 30 s per request, 10 s to
    /// connect, anonymous, no mirrors.
    pub fn new() -> ClientBuilder {
        ClientBuilder {
            transport: Transport::builder(),
            credentials: Credentials::none(),
            mirrors: Mirrors::none(),
        }
    }

    /// How many times a transient failure is retried (0: try once).
    pub fn retries(mut self, retries: u32) -> ClientBuilder {
        self.transport = self.transport.retries(retries);
        self
    }

    /// The first wait between attempts; each later wait doubles, capped at `max`.
    pub fn backoff(mut self, first: Duration, max: Duration) -> ClientBuilder {
        self.transport = self.transport.backoff(Backoff::new(first, max));
        self
    }

    /// The limit for one whole request, connect to last body byte.
    pub fn timeout(mut self, timeout: Duration) -> ClientBuilder {
        self.transport = self.transport.timeout(timeout);
        self
    }

    /// The credentials to answer auth challenges with.
    pub fn credentials(mut self, credentials: Credentials) -> ClientBuilder {
        self.credentials = credentials;
        self
    }

    /// The mirrors to read registries through.
    pub fn mirrors(mut self, mirrors: Mirrors) -> ClientBuilder {
        self.mirrors = mirrors;
        self
    }

    /// Builds the client; TLS setup waits for its first request (see [`net::TransportBuilder`]).
    pub fn build(self) -> Client {
        Client {
            transport: self.transport.build(),
            credentials: self.credentials,
            mirrors: self.mirrors,
            authorizations: Mutex::default(),
            found_credentials: Mutex::default(),
        }
    }
}

/// A registry reader. Cheap to share by reference across threads; it caches auth headers per
/// (host, repository) and credential lookups per host. Debug output redacts every secret.
#[derive(Debug)]
pub struct Client {
    transport: Transport,
    credentials: Credentials,
    mirrors: Mirrors,
    authorizations: Mutex<HashMap<(String, String), Authorization>>,
    found_credentials: Mutex<HashMap<String, Option<Credential>>>,
}

impl Client {
    /// Installs a hook told of every request sent and its status (for `-v`).
    pub fn set_request_hook(&self, hook: net::RequestHook) {
        self.transport.set_request_hook(hook);
    }

    /// A client with the credentials of the Docker config directory `docker_config`
    /// (`DOCKER_CONFIG`), the mirrors of `mirrors` (`REVENDOR_REGISTRY_MIRRORS`) and `timeout`
    /// a request: how every command of a package reaches registries.
    pub fn configured(
        docker_config: &std::path::Path,
        mirrors: Option<&str>,
        timeout: Duration,
    ) -> Result<Client, Error> {
        Ok(Client::builder()
            .backoff(Duration::from_millis(250), Duration::from_secs(4))
            .timeout(timeout)
            .credentials(Credentials::load(docker_config)?)
            .mirrors(Mirrors::parse(mirrors.unwrap_or_default())?)
            .build())
    }

    /// A builder with the defaults of [`ClientBuilder::new`].
    pub fn builder() -> ClientBuilder {
        ClientBuilder::new()
    }

    /// `GET /v2/` on `registry` (through its mirror), authenticating if challenged: succeeds when
    /// the registry speaks the distribution API and accepts our credentials.
    pub fn ping(&self, registry: &str) -> Result<(), Error> {
        let answer = self.send(Method::GET, registry, None, "/v2/", None)?;
        if answer.status.is_success() {
            Ok(())
        } else {
            Err(self.status_error(answer))
        }
    }

    /// The digest a tag (or digest) resolves to, by `HEAD`: no body is transferred and Docker
    /// Hub does not count it against the pull limit.
    pub fn head_manifest(&self, reference: &Reference) -> Result<Digest, Error> {
        let answer = self.manifest_request(Method::HEAD, reference)?;
        let announced = answer.header(DOCKER_CONTENT_DIGEST).map(Digest::parse);
        match (announced, reference.digest()) {
            (Some(Ok(announced)), Some(requested)) if &announced != requested => {
                Err(Error::DigestMismatch {
                    reference: reference.to_string(),
                    expected: requested.clone(),
                    actual: announced,
                    source_of_expected: "requested",
                })
            }
            (Some(Ok(announced)), _) => Ok(announced),
            // By digest a 200 already proves existence of exactly that digest.
            (None, Some(requested)) => Ok(requested.clone()),
            (Some(Err(_)) | None, _) => Err(Error::MissingDigest { url: answer.url }),
        }
    }

    /// The manifest a tag (or digest) resolves to, accepting all four manifest kinds, after
    /// checking that the body hashes to the announced `Docker-Content-Digest` and to the
    /// reference's digest if it has one.
    pub fn get_manifest(&self, reference: &Reference) -> Result<FetchedManifest, Error> {
        let answer = self.manifest_request(Method::GET, reference)?;
        let digest = Digest::of(&answer.body);
        if let Some(header) = answer.header(DOCKER_CONTENT_DIGEST) {
            let announced = Digest::parse(header).map_err(|_| Error::MissingDigest {
                url: answer.url.clone(),
            })?;
            if announced != digest {
                return Err(Error::DigestMismatch {
                    reference: reference.to_string(),
                    expected: announced,
                    actual: digest,
                    source_of_expected: "announced in Docker-Content-Digest",
                });
            }
        }
        if let Some(requested) = reference.digest()
            && requested != &digest
        {
            return Err(Error::DigestMismatch {
                reference: reference.to_string(),
                expected: requested.clone(),
                actual: digest,
                source_of_expected: "requested",
            });
        }
        let manifest =
            Manifest::parse(&answer.body, answer.header(CONTENT_TYPE)).map_err(|source| {
                Error::Manifest {
                    reference: reference.to_string(),
                    source,
                }
            })?;
        Ok(FetchedManifest {
            digest,
            manifest,
            body: answer.body,
        })
    }

    /// The manifest `reference` names, asking the registry as little as it can: when the
    /// reference is pinned by digest and `known` holds that body, only whether the registry
    /// still has it, by `HEAD` (its `Docker-Content-Digest` must be that digest). A registry
    /// that announces no digest, or a body not known, is read by `GET`
    /// ([`Client::get_manifest`]'s checks) and the body kept in `known`.
    pub fn manifest_known(
        &self,
        reference: &Reference,
        known: &dyn KnownManifests,
    ) -> Result<FetchedManifest, Error> {
        if let Some(digest) = reference.digest()
            && let Some(body) = known.get(digest).filter(|b| &Digest::of(b) == digest)
        {
            let answer = self.manifest_request(Method::HEAD, reference)?;
            match answer.header(DOCKER_CONTENT_DIGEST).map(Digest::parse) {
                Some(Ok(announced)) if &announced == digest => {
                    let manifest =
                        Manifest::parse(&body, answer.header(CONTENT_TYPE)).map_err(|source| {
                            Error::Manifest {
                                reference: reference.to_string(),
                                source,
                            }
                        })?;
                    return Ok(FetchedManifest {
                        digest: announced,
                        manifest,
                        body,
                    });
                }
                Some(Ok(announced)) => {
                    return Err(Error::DigestMismatch {
                        reference: reference.to_string(),
                        expected: digest.clone(),
                        actual: announced,
                        source_of_expected: "requested",
                    });
                }
                Some(Err(_)) | None => {}
            }
        }
        let fetched = self.get_manifest(reference)?;
        known.keep(&fetched.body);
        Ok(fetched)
    }

    /// A blob of `reference`'s repository, by `digest`, checked against it. Only small JSON
    /// blobs (image configs) are read: the body is capped at [`MANIFEST_LIMIT`].
    pub fn get_blob(&self, reference: &Reference, digest: &Digest) -> Result<Vec<u8>, Error> {
        self.get_blob_within(reference, digest, MANIFEST_LIMIT)
    }

    /// [`Client::get_blob`] for a blob of up to `limit` bytes (a chart's archive); a larger
    /// answer is refused as it arrives.
    pub fn get_blob_within(
        &self,
        reference: &Reference,
        digest: &Digest,
        limit: u64,
    ) -> Result<Vec<u8>, Error> {
        let path = format!("/v2/{}/blobs/{digest}", reference.repository());
        let answer = self.send_within(
            Method::GET,
            reference.registry(),
            Some(reference.repository()),
            &path,
            None,
            limit,
        )?;
        if !answer.status.is_success() {
            return Err(self.status_error(answer));
        }
        let actual = Digest::of(&answer.body);
        if &actual != digest {
            return Err(Error::DigestMismatch {
                reference: format!("{}@{digest}", reference.name()),
                expected: digest.clone(),
                actual,
                source_of_expected: "requested",
            });
        }
        Ok(answer.body)
    }

    /// Every tag of `reference`'s repository, in the registry's order, following the
    /// `Link: <…>; rel="next"` pages (at most a thousand). A repository the registry
    /// does not know is [`Error::ManifestUnknown`] for its name.
    pub fn tags(&self, reference: &Reference) -> Result<Vec<String>, Error> {
        #[derive(serde::Deserialize)]
        struct Page {
            #[serde(default)]
            tags: Option<Vec<String>>,
        }
        let first = format!("/v2/{}/tags/list", reference.repository());
        let mut next = Some(first);
        let mut tags = Vec::new();
        for _ in 0..MAX_TAG_PAGES {
            let Some(path) = next.take() else {
                return Ok(tags);
            };
            let answer = self.send(
                Method::GET,
                reference.registry(),
                Some(reference.repository()),
                &path,
                None,
            )?;
            match answer.status {
                s if s.is_success() => {}
                StatusCode::NOT_FOUND => {
                    return Err(Error::ManifestUnknown {
                        reference: reference.name().to_owned(),
                        url: answer.url,
                    });
                }
                _ => return Err(self.status_error(answer)),
            }
            let page: Page = serde_json::from_slice(&answer.body).map_err(|e| Error::TagList {
                url: answer.url.clone(),
                reason: format!("it is not a tag list: {e}"),
            })?;
            tags.extend(page.tags.unwrap_or_default());
            if let Some(link) = answer.header("link").and_then(net::next_link) {
                next = Some(
                    same_host_path(&link, &answer.url).ok_or_else(|| Error::TagList {
                        url: answer.url.clone(),
                        reason: format!("its next page `{link}` is on another host"),
                    })?,
                );
            }
        }
        match next {
            None => Ok(tags),
            Some(_) => Err(Error::TagList {
                url: reference.name().to_owned(),
                reason: format!("it has more than {MAX_TAG_PAGES} pages"),
            }),
        }
    }

    /// The wait before retry number `attempt` (0-based): the transport's backoff.
    pub(crate) fn delay(&self, attempt: u32) -> Duration {
        self.transport.backoff().delay(attempt)
    }

    fn manifest_request(&self, method: Method, reference: &Reference) -> Result<Answer, Error> {
        let path = format!(
            "/v2/{}/manifests/{}",
            reference.repository(),
            reference.identifier()
        );
        let accept = MediaType::accept_header();
        let answer = self.send(
            method,
            reference.registry(),
            Some(reference.repository()),
            &path,
            Some(&accept),
        )?;
        match answer.status {
            s if s.is_success() => Ok(answer),
            StatusCode::NOT_FOUND => Err(Error::ManifestUnknown {
                reference: reference.to_string(),
                url: answer.url,
            }),
            _ => Err(self.status_error(answer)),
        }
    }

    /// Sends to `registry` (or its mirror) with auth and retries; returns any non-401 answer.
    fn send(
        &self,
        method: Method,
        registry: &str,
        repository: Option<&str>,
        path: &str,
        accept: Option<&str>,
    ) -> Result<Answer, Error> {
        self.send_within(method, registry, repository, path, accept, MANIFEST_LIMIT)
    }

    /// [`Client::send`] reading at most `limit` bytes of the answer.
    fn send_within(
        &self,
        method: Method,
        registry: &str,
        repository: Option<&str>,
        path: &str,
        accept: Option<&str>,
        limit: u64,
    ) -> Result<Answer, Error> {
        let host = self.mirrors.resolve(registry);
        let url = format!("{}://{host}{path}", scheme(host));
        let key = (host.to_owned(), repository.unwrap_or_default().to_owned());
        let cached = self.lock_authorizations().get(&key).cloned();
        let request = |authorization: Option<&Authorization>| {
            let mut request = Request::new(method.clone(), &url)?.limit(limit);
            if let Some(accept) = accept {
                request = request.header(ACCEPT, accept)?;
            }
            if let Some(authorization) = authorization {
                request = request.header(AUTHORIZATION, authorization.header_value())?;
            }
            Ok::<_, Error>(request)
        };
        let answer = self.execute(&request(cached.as_ref())?)?;
        if answer.status != StatusCode::UNAUTHORIZED {
            return Ok(answer);
        }
        let authorization = self.authenticate(&answer, host, repository)?;
        self.lock_authorizations()
            .insert(key, authorization.clone());
        let answer = self.execute(&request(Some(&authorization))?)?;
        match answer.status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => Err(Error::Unauthorized {
                reason: if self.credential_for(host)?.is_some() {
                    format!("the registry refused the credentials for `{host}`")
                } else {
                    format!(
                        "the registry refused anonymous access and the docker config has no credentials for `{host}`"
                    )
                },
                errors: self.api_errors(&answer),
                url: answer.url,
            }),
            _ => Ok(answer),
        }
    }

    /// Answers the challenge of a 401 with a new `Authorization`.
    fn authenticate(
        &self,
        answer: &Answer,
        host: &str,
        repository: Option<&str>,
    ) -> Result<Authorization, Error> {
        let unauthorized = |reason: String| Error::Unauthorized {
            url: answer.url.clone(),
            reason,
            errors: self.api_errors(answer),
        };
        let header = answer
            .header(WWW_AUTHENTICATE)
            .ok_or_else(|| unauthorized("HTTP 401 without a WWW-Authenticate challenge".into()))?;
        let challenge = auth::parse_challenge(header).map_err(unauthorized)?;
        let credential = self.credential_for(host)?;
        match challenge {
            Challenge::Basic => auth::basic_for(credential.as_ref(), host).map_err(unauthorized),
            Challenge::Bearer { realm, service } => {
                let scope = repository.map(|r| format!("repository:{r}:pull"));
                let token = self.fetch_token(
                    &realm,
                    service.as_deref(),
                    scope.as_deref(),
                    credential.as_ref(),
                )?;
                Ok(Authorization::bearer(&token))
            }
        }
    }

    fn fetch_token(
        &self,
        realm: &str,
        service: Option<&str>,
        scope: Option<&str>,
        credential: Option<&Credential>,
    ) -> Result<super::Secret, Error> {
        let url = auth::token_url(realm, service, scope)?;
        if !net::allowed(&url) {
            return Err(Error::Url {
                url: realm.to_owned(),
                reason: "a token realm must be https unless it is a loopback address",
            });
        }
        // The token endpoint's answer is the token itself: it is only ever parsed, never shown.
        let request = match credential {
            Some(Credential::IdentityToken(token)) => {
                let form = auth::refresh_form(token, service, scope);
                let mut endpoint = url.clone();
                endpoint.set_query(None);
                Request::new(Method::POST, endpoint.as_str())?
                    .header(CONTENT_TYPE, "application/x-www-form-urlencoded")?
                    .body(form.expose().as_bytes().to_vec())
            }
            Some(Credential::Basic { username, password }) => {
                let basic = Authorization::basic(username, password);
                Request::new(Method::GET, url.as_str())?
                    .header(AUTHORIZATION, basic.header_value())?
            }
            None => Request::new(Method::GET, url.as_str())?,
        };
        let answer = self.transport.send(&request.limit(MANIFEST_LIMIT))?;
        if !answer.status.is_success() {
            let status = answer.status.as_u16();
            let reason = match answer.status {
                StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN if credential.is_some() => {
                    format!("it refused the credentials (HTTP {status})")
                }
                _ => format!("it answered HTTP {status}"),
            };
            return Err(Error::Token {
                realm: realm.to_owned(),
                status: Some(status),
                reason,
            });
        }
        auth::read_token(&answer.body, realm)
    }

    /// Looks up (once per host) the credential for `host`.
    fn credential_for(&self, host: &str) -> Result<Option<Credential>, Error> {
        let mut found = self
            .found_credentials
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(credential) = found.get(host) {
            return Ok(credential.clone());
        }
        let credential = self.credentials.get(host)?;
        found.insert(host.to_owned(), credential.clone());
        Ok(credential)
    }

    fn lock_authorizations(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<(String, String), Authorization>> {
        self.authorizations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends `request` and reads the whole answer; a server error after the transport's last
    /// retry is an error.
    fn execute(&self, request: &Request<'_>) -> Result<Answer, Error> {
        let answer = self.transport.send(request)?;
        if answer.status.is_server_error() {
            return Err(self.status_error(answer));
        }
        Ok(answer)
    }

    /// The error for an unexpected answer: its status, spec codes and recognized message.
    fn status_error(&self, answer: Answer) -> Error {
        let secrets = self.known_credentials();
        let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
        Error::Status {
            status: answer.status.as_u16(),
            errors: parse_api_errors(&answer.body, &secrets),
            body: error_message(&answer.body, &secrets),
            url: answer.url,
        }
    }

    /// The spec codes of an answer's body, messages scrubbed.
    fn api_errors(&self, answer: &Answer) -> Vec<super::ApiError> {
        let secrets = self.known_credentials();
        let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
        parse_api_errors(&answer.body, &secrets)
    }

    /// Every credential this client has sent, for scrubbing what a registry echoes back (any
    /// `Bearer …`/`Basic …` is scrubbed as well).
    fn known_credentials(&self) -> Vec<String> {
        self.lock_authorizations()
            .values()
            .map(|a| a.credential().to_owned())
            .collect()
    }
}

/// The most pages of a tag list [`Client::tags`] reads: ghcr.io and Docker Hub page by 100 tags and more, so
/// this is hundreds of thousands of tags.
pub const MAX_TAG_PAGES: usize = 1000;

/// The path and query of a `next` link: relative (`/v2/…`, as the distribution registry
/// writes it) or absolute on the host that answered `answered`; `None` for another host.
fn same_host_path(link: &str, answered: &str) -> Option<String> {
    let base = reqwest::Url::parse(answered).ok()?;
    let next = base.join(link).ok()?;
    if next.host_str() != base.host_str()
        || next.port_or_known_default() != base.port_or_known_default()
    {
        return None;
    }
    Some(match next.query() {
        Some(query) => format!("{}?{query}", next.path()),
        None => next.path().to_owned(),
    })
}

/// `http` for loopback hosts, `https` for everything else.
fn scheme(host: &str) -> &'static str {
    if net::is_loopback(host) {
        "http"
    } else {
        "https"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_get_http_and_others_https() {
        for host in ["127.0.0.1:5000", "LOCALHOST:80", "[::1]:5000"] {
            assert_eq!(scheme(host), "http", "{host}");
        }
        for host in [
            "ghcr.io",
            "10.0.0.1:5000",
            "localhost.evil.io",
            "[::2]:5000",
        ] {
            assert_eq!(scheme(host), "https", "{host}");
        }
    }

    #[test]
    fn a_next_page_stays_on_the_host_that_answered() {
        let at = "http://127.0.0.1:5000/v2/a/tags/list";
        assert_eq!(
            same_host_path("/v2/a/tags/list?last=x&n=2", at).as_deref(),
            Some("/v2/a/tags/list?last=x&n=2")
        );
        assert_eq!(
            same_host_path("http://127.0.0.1:5000/v2/a/tags/list?n=1", at).as_deref(),
            Some("/v2/a/tags/list?n=1")
        );
        assert_eq!(
            same_host_path("http://127.0.0.1:5001/v2/a/tags/list", at),
            None
        );
        assert_eq!(
            same_host_path("https://evil.example/v2/a/tags/list", at),
            None
        );
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let client = Client::builder()
            .backoff(Duration::from_millis(100), Duration::from_millis(350))
            .build();
        let delays: Vec<u128> = (0..5).map(|a| client.delay(a).as_millis()).collect();
        assert_eq!(delays, [100, 200, 350, 350, 350]);
        assert_eq!(client.delay(u32::MAX), Duration::from_millis(350));
    }
}
