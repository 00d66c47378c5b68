//! [`Transport`]: the one place an HTTP request leaves the process.
//!
//! Every client (`net::Client` for GitHub and downloads, `registry::Client` for registries)
//! sends through a `Transport`, so they share one set of rules:
//!
//! 1. the URL obeys the scheme rule (`origin::allowed`), and so does every redirect hop, which
//!    also may never go from https to plain http (`origin::refuse_redirect`); a request with
//!    credentials follows its own origin's hops only, and the rest of the chain without them
//!    (`redirect`), so no hop to another origin (scheme, host or port) or after one gets them;
//! 2. each attempt has one deadline, from connecting to the last body byte: a server that
//!    trickles its body cannot hold a run for longer than the timeout per attempt;
//! 3. timeouts, broken connections and 5xx answers are retried a bounded number of times with
//!    [`Backoff`]; after the last attempt a 5xx is returned as an answer (the caller words the
//!    error) and the rest as an [`HttpError`] naming the URL;
//! 4. every attempt is counted in [`Stats`] and told to the request hook, if one is set
//!    (`-v` prints each request's method, redacted URL and status; `net` prints nothing).
//!
//! Bodies are read whole inside the attempt, so a body cut short is retried like a refused
//! connection. A body is at most [`MAX_BODY`] bytes unless the request sets its own limit
//! ([`Request::limit`]): a larger answer is [`HttpError::TooLarge`], refused as it arrives,
//! before it exhausts memory (issue 21).

use std::io::Read;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue, IF_NONE_MATCH};
use reqwest::{Method, StatusCode, Url};

use super::error::describe;
use super::origin::{allowed, refuse_redirect};
use super::redirect::{self, Refused};
use super::{HttpError, redact};

/// The largest answer body read when a request sets no limit of its own:
/// above any source archive or git pack vendored today, below what
/// exhausts a CI runner's memory (docs/reference.md, "Limits").
pub const MAX_BODY: u64 = 1 << 30;

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
    /// Conditional requests answered 304 Not Modified.
    pub fn not_modified(&self) -> usize {
        self.not_modified.load(Ordering::Relaxed)
    }
}

/// Bounded exponential backoff: the first wait, doubled per attempt, never above the cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    first: Duration,
    max: Duration,
}

impl Backoff {
    /// Starts at `first` and doubles up to `max` (raised to `first` if lower).
    pub fn new(first: Duration, max: Duration) -> Backoff {
        Backoff {
            first,
            max: max.max(first),
        }
    }

    /// The wait before retry number `attempt` (0-based).
    pub fn delay(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt);
        self.first.saturating_mul(factor).min(self.max)
    }
}

/// Settings for a [`Transport`].
#[derive(Debug)]
pub struct TransportBuilder {
    retries: u32,
    backoff: Backoff,
    timeout: Duration,
    connect_timeout: Duration,
}

impl Default for TransportBuilder {
    fn default() -> TransportBuilder {
        TransportBuilder::new()
    }
}

impl TransportBuilder {
    /// Defaults: 3 retries, 500 ms first backoff doubling up to 8 s, 30 s per attempt, 10 s to
    /// connect.
    pub fn new() -> TransportBuilder {
        TransportBuilder {
            retries: 3,
            backoff: Backoff::new(Duration::from_millis(500), Duration::from_secs(8)),
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
        }
    }

    /// How many times a transient failure is retried (0: try once).
    pub fn retries(mut self, retries: u32) -> TransportBuilder {
        self.retries = retries;
        self
    }

    /// The waits between attempts.
    pub fn backoff(mut self, backoff: Backoff) -> TransportBuilder {
        self.backoff = backoff;
        self
    }

    /// The deadline of one attempt, connect to last body byte (connecting gets at most this).
    pub fn timeout(mut self, timeout: Duration) -> TransportBuilder {
        self.timeout = timeout;
        self.connect_timeout = self.connect_timeout.min(timeout);
        self
    }

    /// The limit for connecting alone, within the deadline.
    pub fn connect_timeout(mut self, timeout: Duration) -> TransportBuilder {
        self.connect_timeout = timeout.min(self.timeout);
        self
    }

    /// Builds the transport. The reqwest client behind it (TLS roots, a runtime thread) is
    /// built on the first request, so a run that sends none never reads the system trust store
    /// and works where there is none.
    pub fn build(self) -> Transport {
        Transport {
            http: OnceLock::new(),
            home: OnceLock::new(),
            connect_timeout: self.connect_timeout,
            retries: self.retries,
            backoff: self.backoff,
            timeout: self.timeout,
            stats: Stats::default(),
            hook: std::sync::Mutex::new(None),
        }
    }
}

/// The HTTP transport: a reqwest client with the rules of the module doc, built on first use.
pub struct Transport {
    /// The client, or why it could not be built (a broken trust store), once a request needed it.
    http: OnceLock<Result<reqwest::blocking::Client, String>>,
    /// The client for requests with credentials: it follows its own origin's hops only.
    home: OnceLock<Result<reqwest::blocking::Client, String>>,
    connect_timeout: Duration,
    retries: u32,
    backoff: Backoff,
    timeout: Duration,
    stats: Stats,
    hook: std::sync::Mutex<Option<RequestHook>>,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport")
            .field("retries", &self.retries)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// Called once per attempt sent (each retry too), for `-v`.
pub type RequestHook = Box<dyn Fn(&Exchange<'_>) + Send>;

/// One attempt and how it ended, as the request hook sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exchange<'a> {
    /// `GET`, `HEAD`, `POST`, …
    pub method: &'a str,
    /// The URL asked for, credentials removed ([`redact`]).
    pub url: &'a str,
    /// The status after redirects; `None` when no answer came (timeout,
    /// connection failure).
    pub status: Option<u16>,
}

/// Called as a body downloads: `(url, bytes so far, total if known)`.
pub type Progress = dyn Fn(&str, u64, Option<u64>) + Send + Sync;

/// One request to send: method, URL, headers, body, and how to read the answer.
pub struct Request<'a> {
    method: Method,
    url: Url,
    shown: String,
    headers: HeaderMap,
    body: Option<Vec<u8>>,
    limit: Option<u64>,
    retried: bool,
    progress: Option<&'a Progress>,
}

impl<'a> Request<'a> {
    /// A request for `url`, refused unless it obeys the scheme rule.
    pub fn new(method: Method, url: &str) -> Result<Request<'a>, HttpError> {
        let shown = redact(url);
        let parsed = Url::parse(url).map_err(|_| HttpError::Insecure { url: shown.clone() })?;
        if !allowed(&parsed) {
            return Err(HttpError::Insecure { url: shown });
        }
        Ok(Request {
            method,
            url: parsed,
            shown,
            headers: HeaderMap::new(),
            body: None,
            limit: None,
            retried: true,
            progress: None,
        })
    }

    /// Adds a header; an `Authorization` value is marked sensitive (never in Debug output).
    pub fn header(mut self, name: HeaderName, value: &str) -> Result<Request<'a>, HttpError> {
        let mut value = HeaderValue::from_str(value).map_err(|_| {
            HttpError::Client(format!("invalid value for the `{name}` request header"))
        })?;
        value.set_sensitive(name == reqwest::header::AUTHORIZATION);
        self.headers.append(name, value);
        Ok(self)
    }

    /// Sends `body` with the request.
    pub fn body(mut self, body: Vec<u8>) -> Request<'a> {
        self.body = Some(body);
        self
    }

    /// Refuses an answer longer than `limit` bytes (instead of [`MAX_BODY`]).
    pub fn limit(mut self, limit: u64) -> Request<'a> {
        self.limit = Some(limit);
        self
    }

    /// Sends once: for writes, which may have happened even when the answer timed out.
    pub fn once(mut self) -> Request<'a> {
        self.retried = false;
        self
    }

    /// Tells `hook` how far the body download got.
    pub fn progress(mut self, hook: Option<&'a Progress>) -> Request<'a> {
        self.progress = hook;
        self
    }
}

/// A whole answer: status, headers and body.
#[derive(Debug)]
pub struct Answer {
    /// The URL asked for (credentials removed), not where redirects led.
    pub url: String,
    /// The final status.
    pub status: StatusCode,
    /// The final headers.
    pub headers: HeaderMap,
    /// The whole body.
    pub body: Vec<u8>,
}

impl Answer {
    /// A header's value, if present and text.
    pub fn header(&self, name: impl reqwest::header::AsHeaderName) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// How one attempt failed.
enum Failure {
    /// The deadline passed.
    TimedOut,
    /// Worth another attempt: refused or broken connection.
    Transient(String),
    /// Not worth another attempt.
    Final(HttpError),
}

impl Transport {
    /// A builder with the defaults of [`TransportBuilder::new`].
    pub fn builder() -> TransportBuilder {
        TransportBuilder::new()
    }

    /// What this transport has sent so far.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Installs a hook told of every attempt sent and its status.
    pub fn set_request_hook(&self, hook: RequestHook) {
        *self.hook.lock().unwrap_or_else(|p| p.into_inner()) = Some(hook);
    }

    fn observe(&self, request: &Request<'_>, status: Option<u16>) {
        if let Some(hook) = self.hook.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            hook(&Exchange {
                method: request.method.as_str(),
                url: &request.shown,
                status,
            });
        }
    }

    /// The waits between attempts, for callers that poll (a tag that is not there yet).
    pub fn backoff(&self) -> Backoff {
        self.backoff
    }

    /// How many attempts a retried request gets.
    pub fn attempts(&self) -> u32 {
        self.retries + 1
    }

    /// Sends `request`, retrying transient failures; a 5xx after the last attempt is returned
    /// as an answer.
    pub fn send(&self, request: &Request<'_>) -> Result<Answer, HttpError> {
        let attempts = if request.retried { self.attempts() } else { 1 };
        let mut attempt = 1;
        loop {
            let outcome = self.attempt(request);
            let again = attempt < attempts
                && match &outcome {
                    Ok(answer) => answer.status.is_server_error(),
                    Err(Failure::TimedOut | Failure::Transient(_)) => true,
                    Err(Failure::Final(_)) => false,
                };
            if !again {
                return outcome.map_err(|failure| match failure {
                    Failure::TimedOut => HttpError::TimedOut {
                        url: request.shown.clone(),
                        timeout: self.timeout,
                        attempts: attempt,
                    },
                    Failure::Transient(message) if attempt > 1 => HttpError::Transport {
                        url: request.shown.clone(),
                        message: format!("{message} (on all {attempt} attempts)"),
                    },
                    Failure::Transient(message) => HttpError::Transport {
                        url: request.shown.clone(),
                        message,
                    },
                    Failure::Final(e) => e,
                });
            }
            thread::sleep(self.backoff.delay(attempt - 1));
            attempt += 1;
        }
    }

    /// The reqwest client, built by the first caller: TLS setup happens only for a run that
    /// sends a request. With `home`, the one for requests with credentials
    /// ([`redirect::policy`]).
    fn http(&self, home: bool) -> Result<&reqwest::blocking::Client, HttpError> {
        let cell = if home { &self.home } else { &self.http };
        let built = cell.get_or_init(|| {
            // reqwest brings no crypto of its own (`rustls-no-provider`): ring serves, installed
            // once per process; a second client finds it there, so the error is no failure.
            let _ = rustls::crypto::ring::default_provider().install_default();
            reqwest::blocking::Client::builder()
                .user_agent(concat!("revendor/", env!("CARGO_PKG_VERSION")))
                .connect_timeout(self.connect_timeout)
                .redirect(redirect::policy(home))
                .build()
                .map_err(|e| describe(&e))
        });
        built
            .as_ref()
            .map_err(|message| HttpError::Client(message.clone()))
    }

    fn attempt(&self, request: &Request<'_>) -> Result<Answer, Failure> {
        let credentialed = request.headers.contains_key(AUTHORIZATION);
        let mut builder = self
            .http(credentialed)
            .map_err(Failure::Final)?
            .request(request.method.clone(), request.url.clone())
            .headers(request.headers.clone())
            .timeout(self.timeout);
        if let Some(body) = &request.body {
            builder = builder.body(body.clone());
        }
        let conditional = request.headers.contains_key(IF_NONE_MATCH);
        self.stats.requests.fetch_add(1, Ordering::Relaxed);
        if conditional {
            self.stats.conditional.fetch_add(1, Ordering::Relaxed);
        }
        let started = Instant::now();
        let mut sent = builder.send();
        if credentialed && let Ok(response) = &sent {
            let away = redirect::away(response.url(), response.status(), response.headers());
            if let Some(next) = away {
                sent = self.away(request, response.url(), response.status(), next, started)?;
            }
        }
        self.observe(request, sent.as_ref().ok().map(|r| r.status().as_u16()));
        let response = sent.map_err(|e| self.failure(request, &e))?;
        let status = response.status();
        if conditional && status == StatusCode::NOT_MODIFIED {
            self.stats.not_modified.fetch_add(1, Ordering::Relaxed);
        }
        let headers = response.headers().clone();
        let body = self.read_body(request, response, started)?;
        Ok(Answer {
            url: request.shown.clone(),
            status,
            headers,
            body,
        })
    }

    /// The rest of a credentialed request's chain, from the hop to another origin `next` that
    /// `at` answered `status` with: without credentials, within the attempt's deadline.
    fn away(
        &self,
        request: &Request<'_>,
        at: &Url,
        status: StatusCode,
        next: Url,
        started: Instant,
    ) -> Result<reqwest::Result<reqwest::blocking::Response>, Failure> {
        if let Some(reason) = refuse_redirect(at, &next) {
            return Err(Failure::Final(HttpError::Redirect {
                url: request.shown.clone(),
                to: redact(next.as_str()),
                reason: reason.to_owned(),
            }));
        }
        let left = self.timeout.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Err(Failure::TimedOut);
        }
        // 303 means "GET the other place"; every other hop repeats the request.
        let see_other = status == StatusCode::SEE_OTHER;
        let method = if see_other {
            Method::GET
        } else {
            request.method.clone()
        };
        let mut builder = self
            .http(false)
            .map_err(Failure::Final)?
            .request(method, next)
            .headers(redirect::without_credentials(&request.headers))
            .timeout(left);
        if let (Some(body), false) = (&request.body, see_other) {
            builder = builder.body(body.clone());
        }
        Ok(builder.send())
    }

    /// Why sending failed, and whether it is worth another attempt.
    fn failure(&self, request: &Request<'_>, e: &reqwest::Error) -> Failure {
        if let Some(refused) = find::<Refused>(e) {
            return Failure::Final(HttpError::Redirect {
                url: request.shown.clone(),
                to: refused.to.clone(),
                reason: refused.reason.to_owned(),
            });
        }
        if let Some(rustls::Error::InvalidCertificate(reason)) = find::<rustls::Error>(e) {
            let mut reason = certificate_refused(reason);
            if let Some(hop) = e.url().and_then(|at| redirected_host(&request.url, at)) {
                reason.push_str(&format!(", at `{hop}`, where the request was redirected"));
            }
            return Failure::Final(HttpError::Untrusted {
                url: request.shown.clone(),
                reason,
            });
        }
        if e.is_timeout() {
            Failure::TimedOut
        } else if e.is_connect() || e.is_request() || e.is_body() {
            Failure::Transient(describe(e))
        } else {
            Failure::Final(HttpError::Transport {
                url: request.shown.clone(),
                message: describe(e),
            })
        }
    }

    /// Reads the whole body within the attempt's deadline, capped at the request's limit.
    fn read_body(
        &self,
        request: &Request<'_>,
        response: reqwest::blocking::Response,
        started: Instant,
    ) -> Result<Vec<u8>, Failure> {
        let total = response.content_length();
        let limit = request.limit.unwrap_or(MAX_BODY);
        let mut reader = response.take(limit.saturating_add(1));
        let mut body = Vec::with_capacity(total.unwrap_or(0).min(limit).min(64 << 20) as usize);
        let mut chunk = [0u8; 64 * 1024];
        loop {
            let n = reader.read(&mut chunk).map_err(|e| {
                // reqwest hands its own error inside the io::Error, whose `source` skips it.
                let inner: &(dyn std::error::Error + 'static) = match e.get_ref() {
                    Some(inner) => inner,
                    None => &e,
                };
                let timed_out = find::<reqwest::Error>(inner)
                    .is_some_and(reqwest::Error::is_timeout)
                    || e.kind() == std::io::ErrorKind::TimedOut
                    || started.elapsed() >= self.timeout;
                if timed_out {
                    Failure::TimedOut
                } else if inner.is::<reqwest::Error>() {
                    Failure::Transient(describe(inner))
                } else {
                    Failure::Transient(format!("transfer failed: {}", describe(inner)))
                }
            })?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
            if body.len() as u64 > limit {
                return Err(Failure::Final(HttpError::TooLarge {
                    url: request.shown.clone(),
                    limit,
                }));
            }
            if let Some(hook) = request.progress {
                hook(&request.shown, body.len() as u64, total);
            }
        }
        if let Some(hook) = request.progress {
            hook(&request.shown, body.len() as u64, Some(body.len() as u64));
        }
        Ok(body)
    }
}

/// Why the verifier refused a certificate, in words: rustls words the contextual kinds
/// (expired, another name) itself, but an unknown issuer only by its variant's name.
fn certificate_refused(reason: &rustls::CertificateError) -> String {
    use rustls::CertificateError as Refused;
    let clock = |time: &rustls::pki_types::UnixTime| {
        format!(
            "this machine's clock says {}",
            super::time::utc(time.as_secs())
        )
    };
    match reason {
        Refused::UnknownIssuer => "signed by a CA not trusted here".into(),
        Refused::ExpiredContext { time, not_after } => format!(
            "it expired at {}; {}",
            super::time::utc(not_after.as_secs()),
            clock(time)
        ),
        Refused::NotValidYetContext { time, not_before } => format!(
            "it is valid from {}; {}",
            super::time::utc(not_before.as_secs()),
            clock(time)
        ),
        Refused::NotValidForNameContext {
            expected,
            presented,
        } => format!(
            "it is for {}, not `{}`",
            presented_names(presented),
            expected.to_str()
        ),
        other => other.to_string(),
    }
}

/// The host (and port) of `at` when a redirect took the request there from `asked`'s: only
/// the host, since a storage host's URL carries its signature in the query.
fn redirected_host(asked: &Url, at: &Url) -> Option<String> {
    let origin = |url: &Url| {
        (
            url.host_str().map(str::to_owned),
            url.port_or_known_default(),
        )
    };
    (origin(asked) != origin(at)).then(|| {
        let host = at.host_str().unwrap_or("");
        match at.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_owned(),
        }
    })
}

/// The names a certificate was issued for, as a person reads them (`other.example`, not
/// rustls's `DnsName("other.example")`): the first few, then how many more, since a
/// server's certificate may list any number.
fn presented_names(presented: &[String]) -> String {
    const SHOWN: usize = 4;
    let plain = |name: &String| -> String {
        let inner = name
            .split_once('(')
            .and_then(|(_, rest)| rest.strip_suffix(')'))
            .unwrap_or(name);
        format!("`{}`", inner.trim_matches('"'))
    };
    let mut names: Vec<String> = presented.iter().take(SHOWN).map(plain).collect();
    if presented.len() > SHOWN {
        names.push(format!("{} more", presented.len() - SHOWN));
    }
    match names.len() {
        0 => "no name".into(),
        _ => names.join(", "),
    }
}

/// The first error of type `T` in `e`'s source chain, `e` included.
fn find<'e, T: std::error::Error + 'static>(
    e: &'e (dyn std::error::Error + 'static),
) -> Option<&'e T> {
    let mut source = Some(e);
    while let Some(s) = source {
        if let Some(found) = s.downcast_ref::<T>() {
            return Some(found);
        }
        // An `io::Error`'s `source` skips the error it wraps (a TLS error inside a connect
        // error is one): look inside it first.
        let wrapped = s
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
            .map(|inner| inner as &(dyn std::error::Error + 'static));
        source = wrapped.or_else(|| s.source());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_certificate_is_said_in_words_and_utc_times() {
        use rustls::pki_types::{ServerName, UnixTime};
        let at = |secs| UnixTime::since_unix_epoch(Duration::from_secs(secs));
        let expired = rustls::CertificateError::ExpiredContext {
            time: at(1_796_050_800),
            not_after: at(1_609_459_200),
        };
        assert_eq!(
            certificate_refused(&expired),
            "it expired at 2021-01-01 00:00:00 UTC; this machine's clock says 2026-11-30 15:00:00 UTC"
        );
        let names: Vec<String> = (0..6)
            .map(|n| format!("DnsName(\"h{n}.example\")"))
            .collect();
        let other = rustls::CertificateError::NotValidForNameContext {
            expected: ServerName::try_from("127.0.0.1").unwrap(),
            presented: names,
        };
        assert_eq!(
            certificate_refused(&other),
            "it is for `h0.example`, `h1.example`, `h2.example`, `h3.example`, 2 more, not `127.0.0.1`"
        );
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let backoff = Backoff::new(Duration::from_millis(100), Duration::from_millis(350));
        let delays: Vec<u128> = (0..5).map(|a| backoff.delay(a).as_millis()).collect();
        assert_eq!(delays, [100, 200, 350, 350, 350]);
        assert_eq!(backoff.delay(u32::MAX), Duration::from_millis(350));
    }

    #[test]
    fn requests_obey_the_scheme_rule() {
        assert!(Request::new(Method::GET, "http://127.0.0.1:1/x").is_ok());
        assert!(Request::new(Method::GET, "http://LOCALHOST:1/x").is_ok());
        assert!(Request::new(Method::GET, "https://api.github.com").is_ok());
        for refused in [
            "http://api.github.com/x",
            "http://evil@127.0.0.1.example.com/x",
            "not a url",
        ] {
            let err = Request::new(Method::GET, refused).err().unwrap();
            assert!(
                matches!(err, HttpError::Insecure { .. }),
                "{refused}: {err}"
            );
        }
    }
}
