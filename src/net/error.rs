//! [`HttpError`]: why a request failed, with the URL and what to do; and what of an error
//! body may be shown.
//!
//! A body is never shown as it came: only a message a known format carries (GitHub's JSON
//! `message` with its `errors[].message`, the OCI distribution spec's `errors[].message`), cut
//! to one short line after every credential is scrubbed from it.

use std::time::Duration;

use super::time::describe_reset;

/// How many characters of a recognized message are kept.
const MESSAGE_LIMIT: usize = 200;

/// A request that could not be answered usefully.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The answer was 404.
    #[error("`{url}` was not found (404)")]
    NotFound {
        /// The URL, credentials removed.
        url: String,
    },
    /// GitHub's rate limit is used up.
    #[error("rate limit exceeded for `{url}`{}", describe_reset(*reset))]
    RateLimited {
        /// The URL.
        url: String,
        /// When the limit resets (epoch seconds), from `x-ratelimit-reset`.
        reset: Option<u64>,
        /// Whether the request carried a token.
        authenticated: bool,
    },
    /// Any other unexpected status.
    #[error("`{url}` answered {status}{}", colon(body))]
    Status {
        /// The URL.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The recognized message of the body, or what happened on the retries; may be empty.
        body: String,
    },
    /// No answer: refused connection, broken transfer.
    #[error("failed to fetch `{url}`: {message}")]
    Transport {
        /// The URL.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// The server's certificate was refused: signed by a CA not trusted here, expired, or for
    /// another name. Not retried: the next attempt gets the same certificate.
    #[error("failed to fetch `{url}`: the server's certificate is not trusted ({reason})")]
    Untrusted {
        /// The URL.
        url: String,
        /// What the TLS verifier said of the certificate.
        reason: String,
    },
    /// The last attempt ran into the deadline (which covers the body too).
    #[error(
        "failed to fetch `{url}`: timed out after {}, body included ({attempts} attempt{})",
        seconds(*timeout),
        if *attempts == 1 { "" } else { "s" }
    )]
    TimedOut {
        /// The URL.
        url: String,
        /// The deadline of one attempt (`REVENDOR_HTTP_TIMEOUT`).
        timeout: Duration,
        /// How many attempts were made.
        attempts: u32,
    },
    /// The answer is larger than the caller accepts.
    #[error("`{url}` answered more than {limit} bytes")]
    TooLarge {
        /// The URL.
        url: String,
        /// The limit, in bytes.
        limit: u64,
    },
    /// Plain http to a host that is not this machine, another scheme, or a URL that does not
    /// parse.
    #[error("refusing `{url}`: only https, or plain http to a loopback address, is allowed")]
    Insecure {
        /// The URL.
        url: String,
    },
    /// A redirect that breaks the scheme rule (see `origin::refuse_redirect`).
    #[error("refusing the redirect from `{url}` to `{to}`: {reason}")]
    Redirect {
        /// The URL that answered with the redirect.
        url: String,
        /// Where it pointed.
        to: String,
        /// Which rule it breaks.
        reason: String,
    },
    /// `--offline` forbids the request.
    #[error("`{url}` is needed but --offline forbids the network")]
    Offline {
        /// The URL.
        url: String,
    },
    /// The HTTP client could not be built.
    #[error("failed to set up the HTTP client: {0}")]
    Client(String),
}

impl HttpError {
    /// What the user can do about it.
    pub fn hint(&self) -> Option<String> {
        match self {
            HttpError::RateLimited {
                authenticated: false,
                ..
            } => Some(
                "set GITHUB_TOKEN (or GH_TOKEN) to raise the limit, or wait until it resets".into(),
            ),
            HttpError::RateLimited { .. } => Some("wait until the limit resets".into()),
            HttpError::Insecure { .. } | HttpError::Redirect { .. } => {
                Some("use https:// (plain http is only for loopback addresses)".into())
            }
            HttpError::Offline { .. } => Some("run without --offline".into()),
            HttpError::Untrusted { .. } => Some(
                "an expired or not yet valid certificate may be the clock's doing, one for another name the URL's; a private CA is trusted through the system's store, or SSL_CERT_FILE naming its PEM file (SSL_CERT_DIR a directory of them)".into(),
            ),
            HttpError::Status { status: 401, .. } => Some(
                "the server refused the token: renew GITHUB_TOKEN (or GH_TOKEN), or unset it to read public repositories anonymously".into(),
            ),
            HttpError::TimedOut { .. } => Some(
                "the server may be slow; raise REVENDOR_HTTP_TIMEOUT or try again later".into(),
            ),
            HttpError::Transport { .. } | HttpError::Status { status: 500.., .. } => {
                Some("the server may be down; try again later".into())
            }
            _ => None,
        }
    }

    /// Whether the URL does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, HttpError::NotFound { .. })
    }

    /// Whether the same request may succeed later: no answer in time, a broken connection, a
    /// server error.
    pub fn is_transient(&self) -> bool {
        match self {
            HttpError::Transport { .. } | HttpError::TimedOut { .. } => true,
            HttpError::Status { status, .. } => *status >= 500,
            _ => false,
        }
    }
}

/// The message a known error format carries in `body`, scrubbed of `secrets` and of any
/// `Bearer`/`Basic` credential, on one line of at most 200 characters; empty when the body is
/// not a format we know.
pub fn error_message(body: &[u8], secrets: &[&str]) -> String {
    #[derive(serde::Deserialize)]
    struct Body {
        #[serde(default)]
        message: Option<String>,
        #[serde(default)]
        errors: Vec<Entry>,
    }
    #[derive(serde::Deserialize)]
    struct Entry {
        #[serde(default)]
        message: Option<String>,
    }
    let Ok(parsed) = serde_json::from_slice::<Body>(body) else {
        return String::new();
    };
    let parts: Vec<String> = parsed
        .message
        .into_iter()
        .chain(parsed.errors.into_iter().filter_map(|e| e.message))
        .filter(|m| !m.trim().is_empty())
        .collect();
    one_line(&parts.join(": "), secrets)
}

/// `text` scrubbed (see [`super::scrub`]), whitespace collapsed, cut at 200 characters.
///
/// Scrubbing comes first, so a cut never leaves half a credential that no longer matches.
pub fn one_line(text: &str, secrets: &[&str]) -> String {
    let scrubbed = super::scrub(text, secrets);
    let line = scrubbed.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > MESSAGE_LIMIT {
        let cut: String = line.chars().take(MESSAGE_LIMIT).collect();
        format!("{cut}…")
    } else {
        line
    }
}

/// reqwest's error chain, without the URL (we print our own, redacted).
pub(super) fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = Vec::new();
    let mut source = Some(e);
    while let Some(s) = source {
        let text = match s.downcast_ref::<reqwest::Error>() {
            Some(r) if r.is_connect() => "connection failed".to_owned(),
            Some(_) => "transfer failed".to_owned(),
            None => s.to_string(),
        };
        if parts.last() != Some(&text) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}

fn colon(body: &str) -> String {
    if body.is_empty() {
        String::new()
    } else {
        format!(": {body}")
    }
}

/// `2s`, `0.5s`.
fn seconds(d: Duration) -> String {
    format!("{}s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_known_formats_are_shown() {
        let github = br#"{"message":"Validation Failed","errors":[{"message":"A pull request already exists for o:b."},{"code":"missing"}]}"#;
        assert_eq!(
            error_message(github, &[]),
            "Validation Failed: A pull request already exists for o:b."
        );
        let oci = br#"{"errors":[{"code":"DENIED","message":"requested access is denied"}]}"#;
        assert_eq!(error_message(oci, &[]), "requested access is denied");
        for unknown in [
            &b"<html>Authorization: Bearer secret</html>"[..],
            b"GET / HTTP/1.1\r\nauthorization: token secret\r\n",
            b"[1,2]",
            b"",
        ] {
            assert_eq!(error_message(unknown, &[]), "");
        }
    }

    #[test]
    fn a_recognized_message_is_scrubbed_then_trimmed() {
        let echo = format!(
            r#"{{"message":"you sent\n authorization: Bearer secret-token-{}"}}"#,
            "x".repeat(300)
        );
        let shown = error_message(echo.as_bytes(), &["secret-token"]);
        assert_eq!(shown, "you sent authorization: Bearer <redacted>");
        let long = format!(r#"{{"message":"{}"}}"#, "y".repeat(500));
        assert_eq!(error_message(long.as_bytes(), &[]).chars().count(), 201);
    }

    #[test]
    fn timeouts_name_the_deadline_and_the_attempts() {
        let e = HttpError::TimedOut {
            url: "http://127.0.0.1:1/x".into(),
            timeout: Duration::from_millis(500),
            attempts: 4,
        };
        assert_eq!(
            e.to_string(),
            "failed to fetch `http://127.0.0.1:1/x`: timed out after 0.5s, body included (4 attempts)"
        );
        assert!(e.is_transient());
    }
}
