//! [`HttpError`]: why a download failed, with the URL and what to do.

use super::time::describe_reset;

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
    #[error("`{url}` answered {status}: {body}")]
    Status {
        /// The URL.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The start of the body, trimmed to one line.
        body: String,
    },
    /// No answer: timeout, refused connection, broken transfer.
    #[error("failed to fetch `{url}`: {message}")]
    Transport {
        /// The URL.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// Plain http to a host that is not this machine.
    #[error("refusing plain http to `{url}`")]
    Insecure {
        /// The URL.
        url: String,
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
            HttpError::Insecure { .. } => {
                Some("use https:// (plain http is only for loopback addresses)".into())
            }
            HttpError::Offline { .. } => Some("run without --offline".into()),
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
}

/// One line of a response body, short enough for an error message.
pub(super) fn trim_body(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 200 {
        let cut: String = one_line.chars().take(200).collect();
        format!("{cut}…")
    } else {
        one_line
    }
}

/// reqwest's error chain, without the URL (we print our own, redacted).
pub(super) fn describe(e: &reqwest::Error) -> String {
    let mut msg = if e.is_timeout() {
        "timed out".to_string()
    } else if e.is_connect() {
        "connection failed".to_string()
    } else {
        "transfer failed".to_string()
    };
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        source = s.source();
    }
    msg
}
