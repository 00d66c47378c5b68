//! [`Client`]: GitHub and downloads on top of the [`Transport`]: conditional requests, the
//! token, and errors that never show it.
//!
//! 1. A GET whose earlier answer carried an `ETag` is sent with `If-None-Match`; a 304 is
//!    answered from the validator cache, so an unchanged upstream costs a request and no bytes
//!    (and on GitHub, no rate limit: conditional requests that return 304 are not counted).
//!    The cached body is stored with its sha256 and verified before it is used, like an entry
//!    of the content-addressed cache: one that no longer matches is dropped and the request
//!    goes unconditional.
//! 2. The token goes only to a URL whose parsed origin equals one of the configured GitHub
//!    origins; a pagination link or a redirect elsewhere goes without it.
//! 3. An error names the URL and at most the body's recognized message, scrubbed of the token.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::Method;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, IF_NONE_MATCH};
use sha2::{Digest, Sha256};

use super::error::error_message;
use super::origin::Origin;
use super::transport::{Answer, Backoff, Progress, Request, Stats, Transport};
use super::{HttpError, write_atomic};

/// A successful answer.
#[derive(Debug)]
pub struct Response {
    /// The URL asked for.
    pub url: String,
    /// The body (from the validator cache after a 304).
    pub body: Vec<u8>,
    /// Whether the server answered 304 and the body came from the cache.
    pub not_modified: bool,
    /// The `Link` header, for pagination.
    pub link: Option<String>,
}

/// Settings for [`Client::new`].
#[derive(Clone)]
pub struct ClientOptions {
    /// Bearer token for GitHub hosts.
    pub token: Option<String>,
    /// URLs whose origin (parsed scheme, host and port) the token may be sent to.
    pub token_origins: Vec<String>,
    /// Directory for ETag validators and cached bodies.
    pub cache_dir: PathBuf,
    /// Whether the network is forbidden.
    pub offline: bool,
    /// Retries after the first attempt for transient failures.
    pub retries: u32,
    /// The deadline of one attempt, body included.
    pub timeout: Duration,
}

/// The HTTP client for GitHub, raw files and archives.
pub struct Client {
    transport: Transport,
    token: Option<String>,
    token_origins: Vec<Origin>,
    cache_dir: PathBuf,
    offline: bool,
    progress: Mutex<Option<Arc<Progress>>>,
}

/// Called as a download proceeds: `(url, bytes so far, total if known)`.
pub type ProgressHook = Box<Progress>;

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("offline", &self.offline)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client; its connections and TLS setup wait for the first request.
    pub fn new(options: ClientOptions) -> Client {
        let transport = Transport::builder()
            .retries(options.retries)
            .backoff(Backoff::new(
                Duration::from_millis(250),
                Duration::from_secs(8),
            ))
            .timeout(options.timeout)
            .connect_timeout(options.timeout)
            .build();
        Client {
            transport,
            token: options.token,
            token_origins: options
                .token_origins
                .iter()
                .filter_map(|u| Origin::of(u))
                .collect(),
            cache_dir: options.cache_dir,
            offline: options.offline,
            progress: Mutex::new(None),
        }
    }

    /// Installs a hook told of every request sent and its status; the CLI
    /// prints them with `-v`.
    pub fn set_request_hook(&self, hook: super::RequestHook) {
        self.transport.set_request_hook(hook);
    }

    /// What this client has asked so far.
    pub fn stats(&self) -> &Stats {
        self.transport.stats()
    }

    /// Whether the network may be used.
    pub fn offline(&self) -> bool {
        self.offline
    }

    /// GETs `url`, conditionally when a validator is cached.
    pub fn get(&self, url: &str) -> Result<Response, HttpError> {
        self.get_with(url, &[])
    }

    /// GETs `url` with extra request headers.
    pub fn get_with(&self, url: &str, headers: &[(&str, &str)]) -> Result<Response, HttpError> {
        self.fetch(url, headers, true, None)
    }

    /// GETs `url` as [`get_with`](Self::get_with) does, refusing a body
    /// longer than `limit` bytes ([`HttpError::TooLarge`]): for answers a
    /// stranger sizes, such as a chart repository's index or archive.
    pub fn get_bounded(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        limit: u64,
    ) -> Result<Response, HttpError> {
        self.fetch(url, headers, true, Some(limit))
    }

    /// GETs `url` unconditionally, whatever the validator cache holds, and
    /// caches the answer anew: for a caller whose 304 body turned out
    /// unusable (an archive that does not unpack, JSON that does not parse),
    /// so a bad cached body heals on the next request instead of failing
    /// every run.
    pub fn get_fresh_with(
        &self,
        url: &str,
        headers: &[(&str, &str)],
    ) -> Result<Response, HttpError> {
        self.fetch(url, headers, false, None)
    }

    fn fetch(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        conditional: bool,
        limit: Option<u64>,
    ) -> Result<Response, HttpError> {
        let mut request = self.request(Method::GET, url)?;
        if let Some(limit) = limit {
            request = request.limit(limit);
        }
        for (name, value) in headers {
            let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| HttpError::Client(format!("invalid request header `{name}`")))?;
            request = request.header(name, value)?;
        }
        let validator = self.validator_path(url);
        let cached = if conditional {
            read_validator(&validator)
        } else {
            None
        };
        if let Some((etag, _)) = &cached {
            request = request.header(IF_NONE_MATCH, etag)?;
        }
        let hook = self
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let answer = self.transport.send(&request.progress(hook.as_deref()))?;
        let link = answer.header("link").map(str::to_string);
        let status = answer.status.as_u16();
        if status == 304 {
            return match cached {
                Some((_, body)) => Ok(Response {
                    url: url.to_string(),
                    body,
                    not_modified: true,
                    link,
                }),
                None => Err(HttpError::Status {
                    url: answer.url,
                    status,
                    body: "304 Not Modified without a cached copy".into(),
                }),
            };
        }
        if (status == 403 || status == 429) && answer.header("x-ratelimit-remaining") == Some("0") {
            return Err(HttpError::RateLimited {
                reset: answer
                    .header("x-ratelimit-reset")
                    .and_then(|r| r.parse().ok()),
                url: answer.url,
                authenticated: self.token.is_some(),
            });
        }
        if status >= 500 {
            return Err(HttpError::Status {
                url: answer.url,
                status,
                body: format!("server error on all {} attempts", self.transport.attempts()),
            });
        }
        if status == 404 {
            return Err(HttpError::NotFound { url: answer.url });
        }
        let answer = self.success(answer)?;
        if let Some(etag) = answer.header("etag") {
            store_validator(&validator, etag, &answer.body);
        }
        Ok(Response {
            url: url.to_string(),
            body: answer.body,
            not_modified: false,
            link,
        })
    }

    /// Sends a JSON body with `method` (POST, PATCH) and returns the answer.
    ///
    /// Not retried: a write that timed out may have happened, and sending it
    /// again could open a second pull request.
    pub fn send_json(
        &self,
        method: &str,
        url: &str,
        body: &serde_json::Value,
    ) -> Result<Response, HttpError> {
        let method =
            Method::from_bytes(method.as_bytes()).map_err(|e| HttpError::Client(e.to_string()))?;
        let bytes = serde_json::to_vec(body).map_err(|e| HttpError::Client(e.to_string()))?;
        let request = self
            .request(method, url)?
            .header(ACCEPT, "application/vnd.github+json")?
            .header(CONTENT_TYPE, "application/json")?
            .body(bytes)
            .once();
        let answer = self.success(self.transport.send(&request)?)?;
        Ok(Response {
            url: url.to_string(),
            body: answer.body,
            not_modified: false,
            link: None,
        })
    }

    /// A request for `url` with the token if its origin is a GitHub one; refused offline.
    fn request<'a>(&self, method: Method, url: &str) -> Result<Request<'a>, HttpError> {
        if self.offline {
            return Err(HttpError::Offline {
                url: super::redact(url),
            });
        }
        let request = Request::new(method, url)?;
        match &self.token {
            Some(token) if self.token_goes_to(url) => {
                request.header(AUTHORIZATION, &format!("Bearer {token}"))
            }
            _ => Ok(request),
        }
    }

    /// Whether `url`'s parsed origin is one of the token's.
    fn token_goes_to(&self, url: &str) -> bool {
        Origin::of(url).is_some_and(|o| self.token_origins.contains(&o))
    }

    /// The answer if it is a success, else the error with its recognized message only.
    fn success(&self, answer: Answer) -> Result<Answer, HttpError> {
        if answer.status.is_success() {
            return Ok(answer);
        }
        let secrets: Vec<&str> = self.token.as_deref().into_iter().collect();
        Err(HttpError::Status {
            status: answer.status.as_u16(),
            body: error_message(&answer.body, &secrets),
            url: answer.url,
        })
    }

    /// Installs a hook called as a body downloads: `(url, bytes so far, total)`.
    /// The CLI drives a progress bar with it, on a terminal only.
    pub fn set_progress(&self, hook: ProgressHook) {
        *self.progress.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::from(hook));
    }

    fn validator_path(&self, url: &str) -> PathBuf {
        let mut h = Sha256::new();
        h.update(url.as_bytes());
        // A token changes what a private answer may contain: keep them apart.
        h.update([u8::from(self.token.is_some())]);
        self.cache_dir.join("http").join(hex::encode(h.finalize()))
    }
}

/// The ETag and body a validator file holds, when the body still has the
/// sha256 recorded with it. Anything else (edited, truncated, corrupted on
/// disk, or written by an older revendor without the sha256) is removed and
/// read as absent: the request then goes unconditional and heals the entry,
/// as a corrupted entry of the content-addressed cache is dropped too.
fn read_validator(path: &std::path::Path) -> Option<(String, Vec<u8>)> {
    let bytes = std::fs::read(path).ok()?;
    let verified = split_validator(&bytes);
    if verified.is_none() {
        let _ = std::fs::remove_file(path);
    }
    verified
}

/// `<etag>\nsha256:<hex of body>\n<body>` → the ETag and the body, if the
/// body hashes to the recorded sha256.
fn split_validator(bytes: &[u8]) -> Option<(String, Vec<u8>)> {
    let mut parts = bytes.splitn(3, |&b| b == b'\n');
    let etag = std::str::from_utf8(parts.next()?).ok()?.to_string();
    let sha = std::str::from_utf8(parts.next()?)
        .ok()?
        .strip_prefix("sha256:")?
        .to_owned();
    let body = parts.next()?;
    (hex::encode(Sha256::digest(body)) == sha).then(|| (etag, body.to_vec()))
}

fn store_validator(path: &std::path::Path, etag: &str, body: &[u8]) {
    let sha = hex::encode(Sha256::digest(body));
    let mut bytes = Vec::with_capacity(etag.len() + sha.len() + 9 + body.len());
    bytes.extend_from_slice(etag.as_bytes());
    bytes.push(b'\n');
    bytes.extend_from_slice(format!("sha256:{sha}\n").as_bytes());
    bytes.extend_from_slice(body);
    // The validator cache is an optimisation: failing to write it only costs
    // a full download next time, so errors are ignored on purpose.
    let _ = write_atomic(path, &bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// issue 13: a cached body edited on disk was served on every 304.
    #[test]
    fn a_cached_body_is_used_only_while_it_has_its_sha256() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("http").join("entry");
        store_validator(&path, "\"abc\"", b"[{\"tag_name\":\"v1\"}]");
        assert_eq!(
            read_validator(&path),
            Some(("\"abc\"".to_owned(), b"[{\"tag_name\":\"v1\"}]".to_vec()))
        );
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 3;
        bytes[last] = b'9';
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(read_validator(&path), None);
        assert!(!path.exists(), "a bad entry is removed");
        std::fs::write(&path, "\"abc\"\n[]").unwrap();
        assert_eq!(read_validator(&path), None, "no sha256: an older entry");
    }
}
