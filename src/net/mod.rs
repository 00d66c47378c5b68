//! The one HTTP transport, and the clients, rules and errors around it.
//!
//! | file | owns |
//! | --- | --- |
//! | `transport` | [`Transport`]: the reqwest client (built on first use), deadline, [`Backoff`], [`Stats`] |
//! | `redirect` | which redirect hops are followed, and credentials kept on their own origin |
//! | `origin` | [`is_loopback`], the scheme rule ([`allowed`]), [`Origin`] for credentials |
//! | `client` | [`Client`]: GitHub and downloads: ETag validators, the token, progress |
//! | `error` | [`HttpError`], and what of an error body may be shown ([`error_message`]) |
//! | `redact` | [`redact`] for URLs, [`scrub`] for text |
//! | `atomic` | [`write_atomic`]: the download caches' file writer |
//! | `segment` | [`encode_path`]: upstream names percent-encoded into a URL's path |
//!
//! `registry::Client` is built on [`Transport`] too: it adds challenges, tokens and mirrors,
//! never its own connection, retry or scheme rules.

mod atomic;
mod client;
mod error;
mod origin;
mod redact;
mod redirect;
mod segment;
mod time;
mod transport;

pub use atomic::write_atomic;
pub use client::{Client, ClientOptions, ProgressHook, Response};
pub use error::{HttpError, error_message, one_line};
pub use origin::{Origin, allowed, is_loopback};
pub use redact::{redact, scrub};
pub use segment::{encode_path, encode_segment};
pub use transport::{
    Answer, Backoff, Exchange, MAX_BODY, Progress, Request, RequestHook, Stats, Transport,
    TransportBuilder,
};

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
    fn next_link_is_found() {
        let l = r#"<https://api/x?page=2>; rel="next", <https://api/x?page=5>; rel="last""#;
        assert_eq!(next_link(l).as_deref(), Some("https://api/x?page=2"));
        assert_eq!(next_link(r#"<https://api/x?page=1>; rel="prev""#), None);
    }
}
