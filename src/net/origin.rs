//! Where a request may go: the one loopback test, the scheme rule, and origins.
//!
//! 1. [`is_loopback`] decides what "this machine" means, for every caller: `localhost` in any
//!    case, 127.0.0.0/8 and `::1`, with or without a port, IPv6 in brackets.
//! 2. [`allowed`] is the scheme rule applied to every URL and every redirect hop: https
//!    anywhere, plain http only to loopback, nothing else.
//! 3. [`Origin`] is the parsed (scheme, host, port) triple that decides where a credential may
//!    go. Comparing strings is not enough: `http://127.0.0.1:2300` is a prefix of
//!    `http://127.0.0.1:23007`, a different server.

use std::net::IpAddr;

use reqwest::Url;

/// Whether `host` (optionally `host:port`, IPv6 in brackets) is `localhost` or a loopback IP.
///
/// Used for the http/https decision of every client and for buildah's `--tls-verify=false`, so
/// all of them agree on what this machine is.
pub fn is_loopback(host: &str) -> bool {
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

/// Whether a request may go to `url`: https anywhere, plain http only to loopback.
pub fn allowed(url: &Url) -> bool {
    match url.scheme() {
        "https" => true,
        "http" => url.host_str().is_some_and(is_loopback),
        _ => false,
    }
}

/// Why a redirect from `from` to `to` may not be followed, if it may not.
///
/// Every hop obeys [`allowed`], and no hop goes from https to plain http, not even to loopback:
/// a server reached over TLS has no business sending us somewhere without it.
pub(super) fn refuse_redirect(from: &Url, to: &Url) -> Option<&'static str> {
    if from.scheme() == "https" && to.scheme() == "http" {
        Some("a redirect from https to plain http is refused")
    } else if !allowed(to) {
        Some("plain http outside loopback is refused")
    } else {
        None
    }
}

/// A URL's scheme, host and port (the scheme's default when none is written).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    scheme: String,
    host: String,
    port: Option<u16>,
}

impl Origin {
    /// The origin of `url`, or `None` when it does not parse or has no host (the parser
    /// lowercases hosts, so `API.github.com` and `api.github.com` are one origin).
    pub fn of(url: &str) -> Option<Origin> {
        let url = Url::parse(url).ok()?;
        Some(Origin {
            scheme: url.scheme().to_owned(),
            host: url.host_str()?.to_owned(),
            port: url.port_or_known_default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_case_insensitive_v6_and_all_of_127_8() {
        for host in [
            "127.0.0.1:5000",
            "127.8.9.10",
            "localhost",
            "LOCALHOST:5000",
            "LocalHost",
            "[::1]:5000",
            "[::1]",
        ] {
            assert!(is_loopback(host), "{host}");
        }
        for host in [
            "ghcr.io",
            "10.0.0.1:5000",
            "localhost.evil.io",
            "[::2]:5000",
            "128.0.0.1",
            "127.0.0.1.example.com",
            "registry-1.docker.io",
        ] {
            assert!(!is_loopback(host), "{host}");
        }
    }

    #[test]
    fn urls_allowed_by_scheme_and_host() {
        let ok = |u: &str| allowed(&Url::parse(u).unwrap());
        assert!(ok("https://auth.docker.io/token"));
        assert!(ok("http://127.0.0.1:9999/token"));
        assert!(ok("http://[::1]:9999/token"));
        assert!(ok("http://LOCALHOST/token"));
        assert!(!ok("http://auth.docker.io/token"));
        assert!(!ok("http://10.1.1.1/token"));
        assert!(!ok("ftp://127.0.0.1/token"));
        assert!(!ok("http://evil@127.0.0.1.example.com/x"));
        assert!(!ok("http://127.0.0.1@example.com/x"));
    }

    #[test]
    fn redirects_never_downgrade_and_obey_the_scheme_rule() {
        let url = |u: &str| Url::parse(u).unwrap();
        let refuse = |from: &str, to: &str| refuse_redirect(&url(from), &url(to));
        assert_eq!(
            refuse("https://api.github.com/x", "https://codeload.github.com/y"),
            None
        );
        assert_eq!(refuse("http://127.0.0.1:1/x", "http://localhost:2/y"), None);
        assert_eq!(
            refuse("http://127.0.0.1:1/x", "https://example.com/y"),
            None
        );
        assert!(
            refuse("https://api.github.com/x", "http://api.github.com/y")
                .unwrap()
                .contains("https to plain http")
        );
        assert!(refuse("https://example.com/x", "http://127.0.0.1:1/y").is_some());
        assert!(
            refuse("http://127.0.0.1:1/x", "http://example.invalid/")
                .unwrap()
                .contains("outside loopback")
        );
    }

    #[test]
    fn origins_compare_parsed_scheme_host_and_port() {
        let api = Origin::of("http://127.0.0.1:2300").unwrap();
        assert_eq!(
            Origin::of("http://127.0.0.1:2300/repos?page=2"),
            Some(api.clone())
        );
        assert_ne!(
            Origin::of("http://127.0.0.1:23007/repos"),
            Some(api.clone())
        );
        assert_ne!(Origin::of("https://127.0.0.1:2300/"), Some(api));
        let github = Origin::of("https://API.github.com/api/v3").unwrap();
        assert_eq!(
            Origin::of("https://api.github.com:443/x"),
            Some(github.clone())
        );
        assert_ne!(Origin::of("https://api.github.com.evil.io/"), Some(github));
        assert_eq!(Origin::of("not a url"), None);
    }
}
