//! One HTTP client for every download: retries, conditional requests,
//! credentials that never leak, and [`HttpError`].
//!
//! 1. Only `https://`, or `http://` to a loopback address, is ever requested.
//! 2. A GET whose earlier answer carried an `ETag` is sent with
//!    `If-None-Match`; a 304 is answered from the validator cache, so an
//!    unchanged upstream costs a request and no bytes (and on GitHub, no rate
//!    limit: conditional requests that return 304 are not counted).
//! 3. Timeouts, connection failures and 5xx answers are retried with
//!    exponential backoff, a bounded number of times.
//! 4. The token is sent only to the configured GitHub hosts, and no error,
//!    log line or `Debug` output contains it.
//! 5. Two hooks tell the caller what happens without `net` printing anything:
//!    the progress hook (bytes of a body so far) and the request hook (each
//!    request's method, redacted URL and status, for `-v`).

mod error;
mod time;

pub use error::HttpError;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use sha2::{Digest, Sha256};

/// Counters for `-v`: how much a run asked of the network.
#[derive(Debug, Default)]
pub struct Stats {
    requests: AtomicUsize,
    conditional: AtomicUsize,
    not_modified: AtomicUsize,
}

impl Stats {
    /// Requests sent (retries included).
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::Relaxed)
    }
    /// Requests sent with `If-None-Match`.
    pub fn conditional(&self) -> usize {
        self.conditional.load(Ordering::Relaxed)
    }
    /// Requests answered 304 Not Modified.
    pub fn not_modified(&self) -> usize {
        self.not_modified.load(Ordering::Relaxed)
    }
}

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
    /// `scheme://host[:port]` prefixes the token may be sent to.
    pub token_origins: Vec<String>,
    /// Directory for ETag validators and cached bodies.
    pub cache_dir: PathBuf,
    /// Whether the network is forbidden.
    pub offline: bool,
    /// Retries after the first attempt for transient failures.
    pub retries: u32,
    /// Per-request timeout.
    pub timeout: Duration,
}

/// The HTTP client.
pub struct Client {
    http: reqwest::blocking::Client,
    options: ClientOptions,
    stats: Stats,
    /// The status of the last 5xx answer, for the error after the retries.
    last: std::sync::Mutex<Option<u16>>,
    progress: std::sync::Mutex<Option<ProgressHook>>,
    requests: std::sync::Mutex<Option<RequestHook>>,
}

/// Called as a download proceeds: `(url, bytes so far, total if known)`.
pub type ProgressHook = Box<dyn Fn(&str, u64, Option<u64>) + Send>;

/// Called once per request sent (each retry too), for `-v`.
pub type RequestHook = Box<dyn Fn(&Exchange<'_>) + Send>;

/// One request and how it ended, as the request hook sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exchange<'a> {
    /// `GET`, `POST`, …
    pub method: &'a str,
    /// The URL asked for, credentials removed ([`redact`]).
    pub url: &'a str,
    /// The final status after redirects; `None` when no answer came
    /// (timeout, connection failure).
    pub status: Option<u16>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("token", &self.options.token.as_ref().map(|_| "<redacted>"))
            .field("offline", &self.options.offline)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Builds a client.
    pub fn new(options: ClientOptions) -> Result<Client, HttpError> {
        let http = reqwest::blocking::Client::builder()
            .user_agent(concat!("revendor/", env!("CARGO_PKG_VERSION")))
            .timeout(options.timeout)
            .connect_timeout(options.timeout)
            .build()
            .map_err(|e| HttpError::Client(e.to_string()))?;
        Ok(Client {
            http,
            options,
            stats: Stats::default(),
            last: std::sync::Mutex::new(None),
            progress: std::sync::Mutex::new(None),
            requests: std::sync::Mutex::new(None),
        })
    }

    /// What this client has asked so far.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Whether the network may be used.
    pub fn offline(&self) -> bool {
        self.options.offline
    }

    /// GETs `url`, conditionally when a validator is cached.
    pub fn get(&self, url: &str) -> Result<Response, HttpError> {
        self.get_with(url, &[])
    }

    /// GETs `url` with extra request headers.
    pub fn get_with(&self, url: &str, headers: &[(&str, &str)]) -> Result<Response, HttpError> {
        if self.options.offline {
            return Err(HttpError::Offline { url: redact(url) });
        }
        check_scheme(url)?;
        let validator = self.validator_path(url);
        let cached = std::fs::read(&validator)
            .ok()
            .and_then(|b| split_validator(&b));

        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = None;
        let mut attempt = 0;
        loop {
            let mut req = self.http.get(url);
            for (k, v) in headers {
                req = req.header(*k, *v);
            }
            req = self.authorize(req, url);
            if let Some((etag, _)) = &cached {
                req = req.header("If-None-Match", etag.as_str());
                self.stats.conditional.fetch_add(1, Ordering::Relaxed);
            }
            self.stats.requests.fetch_add(1, Ordering::Relaxed);
            let outcome = req.send();
            self.observe(
                "GET",
                url,
                outcome.as_ref().ok().map(|r| r.status().as_u16()),
            );
            let transient = match outcome {
                Ok(resp) => match self.answer(url, resp, cached.as_ref(), &validator)? {
                    Some(r) => return Ok(r),
                    None => true,
                },
                Err(e) if e.is_timeout() || e.is_connect() || e.is_request() || e.is_body() => true,
                Err(e) => {
                    return Err(HttpError::Transport {
                        url: redact(url),
                        message: error::describe(&e),
                    });
                }
            };
            if transient && attempt < self.options.retries {
                std::thread::sleep(backoff(attempt));
                attempt += 1;
                continue;
            }
            return Err(self.last_failure(url));
        }
    }

    /// Turns an answer into a response, an error, or `None` (retry).
    fn answer(
        &self,
        url: &str,
        resp: reqwest::blocking::Response,
        cached: Option<&(String, Vec<u8>)>,
        validator: &std::path::Path,
    ) -> Result<Option<Response>, HttpError> {
        let status = resp.status().as_u16();
        let header = |k: &str| {
            resp.headers()
                .get(k)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let link = header("link");
        if status == 304 {
            if let Some((_, body)) = cached {
                self.stats.not_modified.fetch_add(1, Ordering::Relaxed);
                return Ok(Some(Response {
                    url: url.to_string(),
                    body: body.clone(),
                    not_modified: true,
                    link,
                }));
            }
            return Err(HttpError::Status {
                url: redact(url),
                status,
                body: "304 Not Modified without a cached copy".into(),
            });
        }
        if (status == 403 || status == 429)
            && header("x-ratelimit-remaining").as_deref() == Some("0")
        {
            return Err(HttpError::RateLimited {
                url: redact(url),
                reset: header("x-ratelimit-reset").and_then(|r| r.parse().ok()),
                authenticated: self.options.token.is_some(),
            });
        }
        if status >= 500 {
            *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(status);
            return Ok(None);
        }
        let etag = header("etag");
        let body = self.read_body(url, resp)?;
        if status == 404 {
            return Err(HttpError::NotFound { url: redact(url) });
        }
        if !(200..300).contains(&status) {
            return Err(HttpError::Status {
                url: redact(url),
                status,
                body: error::trim_body(&body),
            });
        }
        if let Some(etag) = etag {
            store_validator(validator, &etag, &body);
        }
        Ok(Some(Response {
            url: url.to_string(),
            body,
            not_modified: false,
            link,
        }))
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
        if self.options.offline {
            return Err(HttpError::Offline { url: redact(url) });
        }
        check_scheme(url)?;
        let method = reqwest::Method::from_bytes(method.as_bytes())
            .map_err(|e| HttpError::Client(e.to_string()))?;
        let method_name = method.to_string();
        let mut req = self
            .http
            .request(method, url)
            .header("Accept", "application/vnd.github+json")
            .json(body);
        req = self.authorize(req, url);
        self.stats.requests.fetch_add(1, Ordering::Relaxed);
        let sent = req.send();
        let status = sent.as_ref().ok().map(|r| r.status().as_u16());
        self.observe(method_name.as_str(), url, status);
        let resp = sent.map_err(|e| HttpError::Transport {
            url: redact(url),
            message: error::describe(&e),
        })?;
        let status = resp.status().as_u16();
        let body = self.read_body(url, resp)?;
        if !(200..300).contains(&status) {
            return Err(HttpError::Status {
                url: redact(url),
                status,
                body: error::trim_body(&body),
            });
        }
        Ok(Response {
            url: url.to_string(),
            body,
            not_modified: false,
            link: None,
        })
    }

    /// Adds the token, but only for the GitHub origins it belongs to.
    fn authorize(
        &self,
        req: reqwest::blocking::RequestBuilder,
        url: &str,
    ) -> reqwest::blocking::RequestBuilder {
        match &self.options.token {
            Some(token)
                if self
                    .options
                    .token_origins
                    .iter()
                    .any(|o| url.starts_with(o.as_str())) =>
            {
                req.bearer_auth(token)
            }
            _ => req,
        }
    }

    /// Reads a body in chunks, telling the progress hook how far it got.
    fn read_body(
        &self,
        url: &str,
        mut resp: reqwest::blocking::Response,
    ) -> Result<Vec<u8>, HttpError> {
        use std::io::Read;
        let total = resp.content_length();
        let mut body = Vec::with_capacity(total.unwrap_or(0).min(64 << 20) as usize);
        let mut chunk = [0u8; 64 * 1024];
        let hook = self.progress.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let n = resp.read(&mut chunk).map_err(|e| HttpError::Transport {
                url: redact(url),
                message: format!("transfer failed: {e}"),
            })?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
            if let Some(hook) = hook.as_ref() {
                hook(url, body.len() as u64, total);
            }
        }
        if let Some(hook) = hook.as_ref() {
            hook(url, body.len() as u64, Some(body.len() as u64));
        }
        Ok(body)
    }

    /// Installs a hook called as a body downloads: `(url, bytes so far, total)`.
    /// The CLI drives a progress bar with it, on a terminal only.
    pub fn set_progress(&self, hook: ProgressHook) {
        *self.progress.lock().unwrap_or_else(|p| p.into_inner()) = Some(hook);
    }

    /// Installs a hook told of every request sent and its status; the CLI
    /// prints them with `-v`.
    pub fn set_request_hook(&self, hook: RequestHook) {
        *self.requests.lock().unwrap_or_else(|p| p.into_inner()) = Some(hook);
    }

    fn observe(&self, method: &str, url: &str, status: Option<u16>) {
        if let Some(hook) = self
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            hook(&Exchange {
                method,
                url: &redact(url),
                status,
            });
        }
    }

    fn last_failure(&self, url: &str) -> HttpError {
        let attempts = self.options.retries + 1;
        match self.last.lock().unwrap_or_else(|p| p.into_inner()).take() {
            Some(status) => HttpError::Status {
                url: redact(url),
                status,
                body: format!("server error on all {attempts} attempts"),
            },
            None => HttpError::Transport {
                url: redact(url),
                message: format!(
                    "no answer after {attempts} attempts (timeout or connection failure)"
                ),
            },
        }
    }

    fn validator_path(&self, url: &str) -> PathBuf {
        let mut h = Sha256::new();
        h.update(url.as_bytes());
        // A token changes what a private answer may contain: keep them apart.
        h.update([u8::from(self.options.token.is_some())]);
        self.options
            .cache_dir
            .join("http")
            .join(hex::encode(h.finalize()))
    }
}

fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(250u64 << attempt.min(5))
}

/// Refuses plain http except to loopback.
fn check_scheme(url: &str) -> Result<(), HttpError> {
    if url.starts_with("https://") {
        return Ok(());
    }
    if let Some(rest) = url.strip_prefix("http://") {
        let host = rest.split(['/', '?']).next().unwrap_or("");
        let host = host.rsplit('@').next().unwrap_or(host);
        if is_loopback_host(host) {
            return Ok(());
        }
    }
    Err(HttpError::Insecure { url: redact(url) })
}

/// Whether `host[:port]` names this machine.
pub fn is_loopback_host(host_port: &str) -> bool {
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    if host == "localhost" {
        return true;
    }
    host.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback())
}

/// Removes `user:password@` from a URL before it is shown.
pub fn redact(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://") {
        let (authority, path) = match rest.find('/') {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        if let Some((_, host)) = authority.rsplit_once('@') {
            return format!("{scheme}://<redacted>@{host}{path}");
        }
    }
    url.to_string()
}

fn split_validator(bytes: &[u8]) -> Option<(String, Vec<u8>)> {
    let nl = bytes.iter().position(|&b| b == b'\n')?;
    let etag = std::str::from_utf8(&bytes[..nl]).ok()?.to_string();
    Some((etag, bytes[nl + 1..].to_vec()))
}

fn store_validator(path: &std::path::Path, etag: &str, body: &[u8]) {
    // The validator cache is an optimisation: failing to write it only costs
    // a full download next time, so errors are ignored on purpose.
    if let Some(dir) = path.parent()
        && std::fs::create_dir_all(dir).is_ok()
    {
        let mut bytes = Vec::with_capacity(etag.len() + 1 + body.len());
        bytes.extend_from_slice(etag.as_bytes());
        bytes.push(b'\n');
        bytes.extend_from_slice(body);
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, &bytes).is_ok() {
            let _ = std::fs::rename(&tmp, path);
        }
    }
}

/// Parses the `rel="next"` URL out of a `Link` header.
pub fn next_link(link: &str) -> Option<String> {
    link.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        params
            .split(';')
            .any(|p| p.trim() == "rel=\"next\"")
            .then(|| {
                url.trim()
                    .trim_start_matches('<')
                    .trim_end_matches('>')
                    .to_string()
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        assert!(is_loopback_host("127.0.0.1:8080"));
        assert!(is_loopback_host("localhost"));
        assert!(is_loopback_host("[::1]:5000"));
        assert!(!is_loopback_host("10.0.0.1"));
        assert!(!is_loopback_host("example.com"));
    }

    #[test]
    fn plain_http_only_to_loopback() {
        assert!(check_scheme("http://127.0.0.1:1/x").is_ok());
        assert!(check_scheme("https://api.github.com").is_ok());
        assert!(check_scheme("http://api.github.com/x").is_err());
        assert!(check_scheme("http://evil@127.0.0.1.example.com/x").is_err());
    }

    #[test]
    fn redact_hides_userinfo() {
        assert_eq!(redact("https://u:secret@h/x"), "https://<redacted>@h/x");
        assert_eq!(redact("https://h/x"), "https://h/x");
    }

    #[test]
    fn next_link_is_found() {
        let l = r#"<https://api/x?page=2>; rel="next", <https://api/x?page=5>; rel="last""#;
        assert_eq!(next_link(l).as_deref(), Some("https://api/x?page=2"));
        assert_eq!(next_link(r#"<https://api/x?page=1>; rel="prev""#), None);
    }
}
