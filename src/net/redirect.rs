//! Which redirect hops a request follows, and how credentials never follow one to another
//! origin.
//!
//! 1. Every hop obeys the scheme rule and may never go from https to plain http
//!    (`origin::refuse_redirect`); a chain has at most [`MAX_REDIRECTS`] hops.
//! 2. A request that carries credentials (an `Authorization` header) follows hops on its own
//!    origin only ([`policy`] with `home`): reqwest sends every hop the first request's
//!    headers and drops `Authorization` only on a hop whose origin differs from the hop
//!    before, so after GitHub redirected to a storage host, a second hop on that host would
//!    carry the token again. The hop away is therefore stopped, and [`away`] hands the
//!    transport the URL it pointed to, which it asks [`without_credentials`] on a client that
//!    follows the rest of the chain (issue 20).

use reqwest::header::{AUTHORIZATION, COOKIE, HeaderMap, PROXY_AUTHORIZATION};
use reqwest::{StatusCode, Url, redirect};

use super::origin::refuse_redirect;
use super::redact;

/// The most redirects one chain follows.
pub(super) const MAX_REDIRECTS: usize = 10;

/// The error a refused redirect hop carries through reqwest.
#[derive(Debug)]
pub(super) struct Refused {
    pub to: String,
    pub reason: &'static str,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "redirect to `{}` refused: {}", self.to, self.reason)
    }
}

impl std::error::Error for Refused {}

/// Follows at most [`MAX_REDIRECTS`] hops, each obeying the scheme rule and never leaving
/// https; with `home`, stops (answering the redirect itself) at a hop to another origin than
/// the chain's first URL.
pub(super) fn policy(home: bool) -> redirect::Policy {
    redirect::Policy::custom(move |attempt| {
        let refusal = attempt
            .previous()
            .last()
            .and_then(|from| refuse_redirect(from, attempt.url()));
        let leaves = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() != attempt.url().origin());
        if attempt.previous().len() >= MAX_REDIRECTS {
            attempt.error("too many redirects")
        } else if let Some(reason) = refusal {
            let refused = Refused {
                to: redact(attempt.url().as_str()),
                reason,
            };
            attempt.error(refused)
        } else if home && leaves {
            attempt.stop()
        } else {
            attempt.follow()
        }
    })
}

/// Where a redirect answer points when it leaves `at`'s origin: what a [`policy`] with `home`
/// stopped at. `None` for any other answer (a 304 is no redirect).
pub(super) fn away(at: &Url, status: StatusCode, headers: &HeaderMap) -> Option<Url> {
    let redirect = matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308);
    let location = headers.get(reqwest::header::LOCATION)?.to_str().ok()?;
    let next = at.join(location).ok()?;
    (redirect && next.origin() != at.origin()).then_some(next)
}

/// `headers` without the ones that carry credentials.
pub(super) fn without_credentials(headers: &HeaderMap) -> HeaderMap {
    let mut out = headers.clone();
    for name in [AUTHORIZATION, COOKIE, PROXY_AUTHORIZATION] {
        out.remove(name);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn only_a_redirect_to_another_origin_is_away() {
        let mut headers = HeaderMap::new();
        let at = url("https://github.com/o/r/releases/download/v1/a.yaml");
        headers.insert("location", "https://objects.example.com/a".parse().unwrap());
        let found = away(&at, StatusCode::FOUND, &headers);
        assert_eq!(found.unwrap().as_str(), "https://objects.example.com/a");
        assert_eq!(away(&at, StatusCode::NOT_MODIFIED, &headers), None);
        headers.insert("location", "/_assets/a".parse().unwrap());
        assert_eq!(away(&at, StatusCode::FOUND, &headers), None);
        headers.insert("location", "https://github.com:8443/a".parse().unwrap());
        assert!(away(&at, StatusCode::TEMPORARY_REDIRECT, &headers).is_some());
    }

    #[test]
    fn credentials_are_dropped() {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, "Bearer t".parse().unwrap());
        headers.insert(COOKIE, "c=1".parse().unwrap());
        headers.insert("accept", "*/*".parse().unwrap());
        let kept = without_credentials(&headers);
        assert_eq!(kept.len(), 1);
        assert!(kept.contains_key("accept"));
    }
}
