//! `Client`: a blocking reader of OCI registries (manifests and digests), with auth, retries and
//! mirrors.
//!
//! Every request goes through [`Client::send`]:
//! 1. pick the host (the mirror, if one is configured) and the scheme: plain http only for
//!    loopback hosts (127.0.0.0/8, ::1, localhost), https for everything else;
//! 2. send with the cached `Authorization` for (host, repository), retrying transient failures
//!    (5xx, timeouts, resets) with bounded exponential backoff;
//! 3. on 401, authenticate from the challenge (see `auth`) and send once more.
//!
//! Bodies are read whole, capped at [`MANIFEST_LIMIT`], inside the retry loop, so a connection
//! reset mid-body is retried like one before the status line.

use std::collections::HashMap;
use std::io::Read;
use std::net::IpAddr;
use std::sync::{Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use reqwest::blocking::RequestBuilder;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, WWW_AUTHENTICATE};
use reqwest::{Method, StatusCode, Url, redirect};

use super::auth::{self, Authorization, Challenge};
use super::error::{parse_api_errors, trim_body};
use super::{Credential, Credentials, Error, Mirrors};
use crate::image::{Digest, Manifest, MediaType, Reference};

/// The most bytes read from any answer; the distribution registry caps manifests at 4 MiB.
pub const MANIFEST_LIMIT: u64 = 4 * 1024 * 1024;

const MAX_REDIRECTS: usize = 10;
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

/// Settings for a [`Client`]. Start from [`ClientBuilder::new`] (no credentials, no mirrors), then
/// add [`ClientBuilder::credentials`] and [`ClientBuilder::mirrors`] (`DOCKER_CONFIG` and
/// `REVENDOR_REGISTRY_MIRRORS`).
#[derive(Debug)]
pub struct ClientBuilder {
    retries: u32,
    backoff: Duration,
    max_backoff: Duration,
    timeout: Duration,
    connect_timeout: Duration,
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
            retries: 3,
            backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            credentials: Credentials::none(),
            mirrors: Mirrors::none(),
        }
    }

    /// How many times a transient failure is retried (0: try once).
    pub fn retries(mut self, retries: u32) -> ClientBuilder {
        self.retries = retries;
        self
    }

    /// The first wait between attempts; each later wait doubles, capped at `max`.
    pub fn backoff(mut self, first: Duration, max: Duration) -> ClientBuilder {
        self.backoff = first;
        self.max_backoff = max.max(first);
        self
    }

    /// The limit for one whole request, connect to last body byte.
    pub fn timeout(mut self, timeout: Duration) -> ClientBuilder {
        self.timeout = timeout;
        self.connect_timeout = self.connect_timeout.min(timeout);
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

    /// Builds the client (and its TLS setup, which can fail on a broken system trust store).
    pub fn build(self) -> Result<Client, Error> {
        let policy = redirect::Policy::custom(|attempt| {
            if attempt.previous().len() >= MAX_REDIRECTS {
                attempt.error("too many redirects")
            } else if !url_allowed(attempt.url()) {
                attempt.error("redirect to plain http outside loopback refused")
            } else {
                attempt.follow()
            }
        });
        let http = reqwest::blocking::Client::builder()
            .user_agent(concat!("revendor/", env!("CARGO_PKG_VERSION")))
            .timeout(self.timeout)
            .connect_timeout(self.connect_timeout)
            .redirect(policy)
            .build()
            .map_err(|source| Error::Setup { source })?;
        Ok(Client {
            http,
            retries: self.retries,
            backoff: self.backoff,
            max_backoff: self.max_backoff,
            credentials: self.credentials,
            mirrors: self.mirrors,
            authorizations: Mutex::default(),
            found_credentials: Mutex::default(),
        })
    }
}

/// A registry reader. Cheap to share by reference across threads; it caches auth headers per
/// (host, repository) and credential lookups per host. Debug output redacts every secret.
#[derive(Debug)]
pub struct Client {
    http: reqwest::blocking::Client,
    retries: u32,
    backoff: Duration,
    max_backoff: Duration,
    credentials: Credentials,
    mirrors: Mirrors,
    authorizations: Mutex<HashMap<(String, String), Authorization>>,
    found_credentials: Mutex<HashMap<String, Option<Credential>>>,
}

/// A whole answer: status, headers and the capped body.
struct Answer {
    url: String,
    status: StatusCode,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: impl reqwest::header::AsHeaderName) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    fn status_error(self) -> Error {
        Error::Status {
            status: self.status.as_u16(),
            errors: parse_api_errors(&self.body),
            body: trim_body(&self.body),
            url: self.url,
        }
    }
}

impl Client {
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
            Err(answer.status_error())
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

    /// The wait before retry number `attempt` (0-based): the first backoff doubled per attempt,
    /// capped.
    pub(crate) fn delay(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt);
        self.backoff.saturating_mul(factor).min(self.max_backoff)
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
            _ => Err(answer.status_error()),
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
        let host = self.mirrors.resolve(registry);
        let url = format!("{}://{host}{path}", scheme(host));
        let key = (host.to_owned(), repository.unwrap_or_default().to_owned());
        let cached = self.lock_authorizations().get(&key).cloned();
        let request = |authorization: Option<&Authorization>| {
            let mut builder = self.http.request(method.clone(), &url);
            if let Some(accept) = accept {
                builder = builder.header(ACCEPT, accept);
            }
            if let Some(authorization) = authorization {
                builder = builder.header(AUTHORIZATION, authorization.header_value());
            }
            builder
        };
        let answer = self.execute(&url, || request(cached.as_ref()))?;
        if answer.status != StatusCode::UNAUTHORIZED {
            return Ok(answer);
        }
        let authorization = self.authenticate(&answer, host, repository)?;
        self.lock_authorizations()
            .insert(key, authorization.clone());
        let answer = self.execute(&url, || request(Some(&authorization)))?;
        match answer.status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => Err(Error::Unauthorized {
                reason: if self.credential_for(host)?.is_some() {
                    format!("the registry refused the credentials for `{host}`")
                } else {
                    format!(
                        "the registry refused anonymous access and the docker config has no credentials for `{host}`"
                    )
                },
                errors: parse_api_errors(&answer.body),
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
            errors: parse_api_errors(&answer.body),
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
        if !url_allowed(&url) {
            return Err(Error::Url {
                url: realm.to_owned(),
                reason: "a token realm must be https unless it is a loopback address",
            });
        }
        let answer = match credential {
            Some(Credential::IdentityToken(token)) => {
                let form = auth::refresh_form(token, service, scope);
                let mut endpoint = url.clone();
                endpoint.set_query(None);
                self.execute(realm, || {
                    self.http
                        .post(endpoint.clone())
                        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                        .body(form.expose().to_owned())
                })?
            }
            Some(Credential::Basic { username, password }) => {
                let basic = Authorization::basic(username, password);
                self.execute(realm, || {
                    self.http
                        .get(url.clone())
                        .header(AUTHORIZATION, basic.header_value())
                })?
            }
            None => self.execute(realm, || self.http.get(url.clone()))?,
        };
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

    /// Sends the request `build` makes and reads the whole answer, retrying transient failures.
    /// `url` names the attempt in errors; it never holds credentials.
    fn execute(&self, url: &str, build: impl Fn() -> RequestBuilder) -> Result<Answer, Error> {
        let mut attempt = 0;
        loop {
            match self.execute_once(url, build()) {
                Err(e) if e.is_transient() && attempt < self.retries => {
                    thread::sleep(self.delay(attempt));
                    attempt += 1;
                }
                result => return result,
            }
        }
    }

    fn execute_once(&self, url: &str, request: RequestBuilder) -> Result<Answer, Error> {
        let transport = |source| Error::Transport {
            url: url.to_owned(),
            source,
        };
        let response = request.send().map_err(transport)?;
        let status = response.status();
        let headers = response.headers().clone();
        let mut body = Vec::new();
        response
            .take(MANIFEST_LIMIT + 1)
            .read_to_end(&mut body)
            .map_err(|source| Error::Read {
                url: url.to_owned(),
                source,
            })?;
        if body.len() as u64 > MANIFEST_LIMIT {
            return Err(Error::TooLarge {
                url: url.to_owned(),
                limit: MANIFEST_LIMIT,
            });
        }
        let answer = Answer {
            url: url.to_owned(),
            status,
            headers,
            body,
        };
        if status.is_server_error() {
            return Err(answer.status_error());
        }
        Ok(answer)
    }
}

/// `http` for loopback hosts, `https` for everything else.
fn scheme(host: &str) -> &'static str {
    if is_loopback(host) { "http" } else { "https" }
}

/// Whether `host` (optionally with `:port`, IPv6 in brackets) is `localhost` or a loopback IP.
pub(crate) fn is_loopback(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or_default()
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
            _ => host,
        }
    };
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Whether a request may go to `url`: https anywhere, http only to loopback.
fn url_allowed(url: &Url) -> bool {
    match url.scheme() {
        "https" => true,
        "http" => url.host_str().is_some_and(is_loopback),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_get_http_and_others_https() {
        for host in [
            "127.0.0.1:5000",
            "127.8.9.10",
            "localhost",
            "LOCALHOST:80",
            "[::1]:5000",
            "[::1]",
        ] {
            assert!(is_loopback(host), "{host}");
            assert_eq!(scheme(host), "http");
        }
        for host in [
            "ghcr.io",
            "10.0.0.1:5000",
            "localhost.evil.io",
            "[::2]:5000",
            "128.0.0.1",
            "registry-1.docker.io",
        ] {
            assert!(!is_loopback(host), "{host}");
            assert_eq!(scheme(host), "https");
        }
    }

    #[test]
    fn urls_allowed_by_scheme_and_host() {
        let allowed = |u: &str| url_allowed(&Url::parse(u).unwrap());
        assert!(allowed("https://auth.docker.io/token"));
        assert!(allowed("http://127.0.0.1:9999/token"));
        assert!(allowed("http://[::1]:9999/token"));
        assert!(allowed("http://localhost/token"));
        assert!(!allowed("http://auth.docker.io/token"));
        assert!(!allowed("http://10.1.1.1/token"));
        assert!(!allowed("ftp://127.0.0.1/token"));
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let client = Client::builder()
            .backoff(Duration::from_millis(100), Duration::from_millis(350))
            .build()
            .unwrap();
        let delays: Vec<u128> = (0..5).map(|a| client.delay(a).as_millis()).collect();
        assert_eq!(delays, [100, 200, 350, 350, 350]);
        assert_eq!(client.delay(u32::MAX), Duration::from_millis(350));
    }
}
