//! libgit2's http and https, sent through the one HTTP transport.
//!
//! A `git =` upstream over http(s) is fetched with git's smart HTTP protocol
//! (stateless RPC): `GET <url>/info/refs?service=git-upload-pack` lists the
//! refs, then each negotiation round is `POST <url>/git-upload-pack`. This
//! module registers itself with libgit2 for `http` and `https`, and sends
//! those requests through [`Transport`], so a git upstream obeys every rule
//! a GitHub request does: the scheme rule on the URL and every redirect hop,
//! `REVENDOR_HTTP_TIMEOUT` per attempt with the body included, the same
//! retries and backoff, `-v`'s request lines, and an [`HttpError`] naming
//! the URL (so a silent server is `unreachable` in `check --online` and
//! exit 3 in `update`).
//!
//! Why this and not libgit2's own http with timeouts and a redirect check:
//! libgit2 has its own connection, TLS and redirect code, and options only
//! for some of it (a timeout per socket operation, not per request; no hook
//! on each redirect hop). Bolting the rules onto it would leave two
//! implementations to keep in step; sending its requests through ours leaves
//! one, and lets libgit2 be built without a TLS stack of its own.
//!
//! 1. [`fetching`] runs a libgit2 call with the thread's transport set:
//!    libgit2 calls the subtransport on the calling thread, so a
//!    thread-local tells it which [`Transport`] (the run's, with its hook
//!    and counters) to send through.
//! 2. A request that fails leaves its [`HttpError`] there too, and
//!    [`fetching`] returns it instead of libgit2's rewording of it.

use std::cell::RefCell;
use std::io::{self, Cursor, Read, Write};
use std::sync::{Arc, Once};

use git2::transport::{Service, SmartSubtransport, SmartSubtransportStream};
use reqwest::Method;
use reqwest::header::{ACCEPT, CONTENT_TYPE, USER_AGENT};

use crate::net::{Answer, HttpError, Request, Transport, error_message};

/// What `info/refs` of a smart HTTP server answers with.
const ADVERTISEMENT: &str = "application/x-git-upload-pack-advertisement";

thread_local! {
    /// The transport of the libgit2 call running on this thread, and the
    /// first HTTP failure inside it.
    static FETCH: RefCell<Option<(Arc<Transport>, Option<HttpError>)>> =
        const { RefCell::new(None) };
}

/// Why a libgit2 call over http(s) failed.
#[derive(Debug)]
pub(super) enum Failure {
    /// A request did not get a usable answer: the transport's error.
    Http(HttpError),
    /// libgit2 failed on its own (a malformed pack, a missing ref).
    Git(git2::Error),
}

/// Runs `call` with libgit2's http(s) sent through `transport`.
pub(super) fn fetching<T>(
    transport: Arc<Transport>,
    call: impl FnOnce() -> Result<T, git2::Error>,
) -> Result<T, Failure> {
    register().map_err(Failure::Git)?;
    FETCH.with(|f| *f.borrow_mut() = Some((transport, None)));
    let result = call();
    let failed = FETCH.with(|f| f.borrow_mut().take().and_then(|(_, failure)| failure));
    match (result, failed) {
        (Ok(value), _) => Ok(value),
        (Err(_), Some(http)) => Err(Failure::Http(http)),
        (Err(e), None) => Err(Failure::Git(e)),
    }
}

/// Registers the subtransport for `http` and `https`, once per process.
fn register() -> Result<(), git2::Error> {
    static REGISTER: Once = Once::new();
    let mut result = Ok(());
    REGISTER.call_once(|| {
        for scheme in ["http", "https"] {
            // SAFETY: libgit2 requires that registering not race with a
            // remote being opened; `Once` runs it before any remote of this
            // process is opened over http(s), and never again.
            let registered = unsafe {
                git2::transport::register(scheme, |remote| {
                    git2::transport::Transport::smart(remote, true, Smart)
                })
            };
            if let Err(e) = registered {
                result = Err(e);
            }
        }
    });
    result
}

/// The smart HTTP subtransport: one [`Exchange`] per request.
struct Smart;

impl SmartSubtransport for Smart {
    fn action(
        &self,
        url: &str,
        action: Service,
    ) -> Result<Box<dyn SmartSubtransportStream>, git2::Error> {
        let base = url.trim_end_matches('/');
        let (method, url) = match action {
            Service::UploadPackLs => (
                Method::GET,
                format!("{base}/info/refs?service=git-upload-pack"),
            ),
            Service::UploadPack => (Method::POST, format!("{base}/git-upload-pack")),
            Service::ReceivePackLs | Service::ReceivePack => {
                return Err(git2::Error::from_str(
                    "revendor only fetches from a git upstream, it never pushes to one",
                ));
            }
        };
        Ok(Box::new(Exchange {
            method,
            url,
            sent: Vec::new(),
            answer: None,
        }))
    }

    fn close(&self) -> Result<(), git2::Error> {
        Ok(())
    }
}

/// One request: what libgit2 writes is its body; the first read sends it.
struct Exchange {
    method: Method,
    url: String,
    sent: Vec<u8>,
    answer: Option<Cursor<Vec<u8>>>,
}

impl Write for Exchange {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.sent.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Read for Exchange {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.answer.is_none() {
            let body = self.send().map_err(|e| {
                let message = e.to_string();
                FETCH.with(|f| {
                    if let Some((_, failure)) = f.borrow_mut().as_mut() {
                        failure.get_or_insert(e);
                    }
                });
                io::Error::other(message)
            })?;
            self.answer = Some(Cursor::new(body));
        }
        self.answer.as_mut().map_or(Ok(0), |a| a.read(buf))
    }
}

impl Exchange {
    /// Sends the request through the thread's transport; the body of a
    /// successful answer.
    fn send(&mut self) -> Result<Vec<u8>, HttpError> {
        let transport = FETCH
            .with(|f| f.borrow().as_ref().map(|(t, _)| Arc::clone(t)))
            .ok_or_else(|| {
                HttpError::Client("a git fetch over http ran outside `fetching`".into())
            })?;
        // Servers tell git clients by their agent; the version is ours.
        let agent = concat!("git/2 (revendor/", env!("CARGO_PKG_VERSION"), ")");
        let mut request =
            Request::new(self.method.clone(), &self.url)?.header(USER_AGENT, agent)?;
        if self.method == Method::POST {
            request = request
                .header(CONTENT_TYPE, "application/x-git-upload-pack-request")?
                .header(ACCEPT, "application/x-git-upload-pack-result")?
                .body(std::mem::take(&mut self.sent));
        }
        let answer = transport.send(&request)?;
        if let Some(e) = refused(&answer, transport.attempts()) {
            return Err(e);
        }
        let advertised = answer.header(CONTENT_TYPE).unwrap_or_default().to_owned();
        if self.method == Method::GET && advertised != ADVERTISEMENT {
            return Err(HttpError::Status {
                url: answer.url,
                status: answer.status.as_u16(),
                body: format!(
                    "not a smart HTTP git server (content type `{advertised}`, not `{ADVERTISEMENT}`)"
                ),
            });
        }
        Ok(answer.body)
    }
}

/// Why an answer is no use, worded as the GitHub client words it: 404 as
/// not found, a 5xx after the last attempt as a server error, any other
/// status that is not a success with the body's recognized message.
fn refused(answer: &Answer, attempts: u32) -> Option<HttpError> {
    let (url, status) = (answer.url.clone(), answer.status.as_u16());
    match status {
        200..=299 => None,
        404 => Some(HttpError::NotFound { url }),
        500.. => Some(HttpError::Status {
            url,
            status,
            body: format!("server error on all {attempts} attempts"),
        }),
        _ => Some(HttpError::Status {
            url,
            status,
            body: error_message(&answer.body, &[]),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pushing_is_refused_before_any_request() {
        for service in [Service::ReceivePackLs, Service::ReceivePack] {
            let refused = Smart.action("https://example.invalid/r.git", service);
            assert!(refused.is_err());
        }
    }

    #[test]
    fn a_request_outside_fetching_is_an_error_not_a_panic() {
        let mut stream = Smart
            .action("http://127.0.0.1:1/r.git", Service::UploadPackLs)
            .unwrap();
        let mut buf = [0u8; 8];
        let err = stream.read(&mut buf).unwrap_err();
        assert!(err.to_string().contains("outside `fetching`"), "{err}");
    }
}
