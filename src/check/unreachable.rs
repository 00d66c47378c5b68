//! `unreachable` (online): a remote that a check needed did not answer.
//!
//! A nightly run must not go blind because one remote is down: a check that
//! cannot reach GitHub, a registry or a resolver's file reports that as a
//! finding and the run goes on, so every other check still runs and every
//! other finding is still printed (DESIGN.md, "Exit codes").
//!
//! 1. Where a check asks a remote, it passes the answer through
//!    [`answered`]: a failure that [`Error::unreachable_url`] recognises
//!    (no connection, DNS, a timeout, a 5xx, a rate limit) becomes an
//!    `unreachable` finding at the check's own file and line, and the check
//!    goes on with its next item (the next marker, the next platform).
//! 2. [`super::run`] does the same for a check that fails this way outside
//!    those places, so the next check runs.
//! 3. The [`Sink`] keeps the URLs that did not answer; `cli` prints the
//!    report in the asked format, then ends with exit code 3.
//!
//! A 401 (the token refused) is one too: an expired token must not hide
//! the offline findings of a nightly run; the finding's fix names the token
//! variable. Everything else stays an error: a remote that answered, even
//! with a 404, told us something a person must act on.

use super::{Finding, Id, Sink};
use crate::error::{Error, Result};

/// `unreachable`.
pub const UNREACHABLE: Id = Id {
    name: "unreachable",
    doc: "\
### What
With `--online`: a remote that a check needed did not answer (connection
refused, a name that does not resolve, a timeout, a 5xx, a rate limit),
presented a certificate that is not trusted here (a CA not trusted,
expired, another name), or refused the token (HTTP 401: an expired or revoked `GITHUB_TOKEN` or
`GH_TOKEN`; the fix says so). The finding names what could not be checked,
the URL and the error; every other check still ran, and `check` exits 3.

### Why
A nightly drift check that stops at the first remote that is down reports
nothing, not even the drift it could see: a GitHub outage would hide a moved
Talos pin. Reporting the remote that did not answer as a finding keeps every
other finding, and the exit code 3 still says the check is incomplete.

### Example
```text
unreachable
  templates/multus-daemonset-thick.yml:159: error: image-exists could not verify `ghcr.io/cozystack/cozystack/multus-cni:v1.6.0@sha256:0a92…`: failed to reach `https://ghcr.io/v2/`: … connection refused (fix: run `revendor check --online` again once it answers)
```
",
};

/// `result`'s value; or, when it failed because a remote did not answer
/// ([`Error::unreachable_url`]), `None` after an `unreachable` finding at
/// `file:line` saying that `what` could not be done. Any other error is
/// returned as it is.
pub(super) fn answered<T>(
    result: Result<T>,
    sink: &mut Sink,
    what: &str,
    file: &str,
    line: usize,
) -> Result<Option<T>> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(e) => {
            let Some(url) = e.unreachable_url() else {
                return Err(e);
            };
            let url = url.to_owned();
            sink.push_unreachable(finding(&e, &url, what, file, line), url);
            Ok(None)
        }
    }
}

/// The finding for `e`: what could not be done, the error and its causes
/// (a cause that names the URL again, as the HTTP client's "error sending
/// request for url (…)" does, is left out once the URL is said), and what
/// to do.
fn finding(e: &Error, url: &str, what: &str, file: &str, line: usize) -> Finding {
    let mut message = format!("{what}: {e}");
    for cause in e.causes() {
        if message.contains(url) && cause.contains(url) {
            continue;
        }
        message.push_str(": ");
        message.push_str(&cause.replace('\n', " "));
    }
    if !message.contains(url) {
        message.push_str(&format!(" (`{url}`)"));
    }
    let fix = e
        .hint()
        .unwrap_or_else(|| "run `revendor check --online` again once it answers".to_owned());
    Finding::error(UNREACHABLE.name, file, line, message).fix(fix)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Error as Registry;

    fn status(status: u16) -> Error {
        Error::Registry(Registry::Status {
            url: "https://ghcr.example/v2/o/app/manifests/v1".into(),
            status,
            errors: Vec::new(),
            body: "busy".into(),
        })
    }

    #[test]
    fn a_remote_that_did_not_answer_is_a_finding_and_the_check_goes_on() {
        let mut sink = Sink::new();
        let reset: Result<()> = Err(Error::Registry(Registry::Transport(
            crate::net::HttpError::Transport {
                url: "https://ghcr.example/v2/".into(),
                message: "connection reset".into(),
            },
        )));
        let got = answered(
            reset,
            &mut sink,
            "image-exists could not verify `x`",
            "t.yml",
            5,
        );
        assert!(matches!(got, Ok(None)));
        assert!(matches!(
            answered::<()>(Err(status(503)), &mut sink, "w", "t.yml", 5),
            Ok(None)
        ));
        assert_eq!(
            sink.unreachable(),
            [
                "https://ghcr.example/v2/",
                "https://ghcr.example/v2/o/app/manifests/v1"
            ]
        );
        let found = sink.into_findings();
        assert_eq!(found.len(), 2);
        assert_eq!((found[0].id.as_str(), found[0].line), ("unreachable", 5));
        assert_eq!(
            found[0].message,
            "image-exists could not verify `x`: failed to fetch `https://ghcr.example/v2/`: connection reset"
        );
        assert_eq!(
            found[0].fix,
            "run `revendor check --online` again once it answers"
        );
    }

    /// A certificate that cannot be trusted hides no other check: before it
    /// was its own error it was a transport failure, and the check went on.
    #[test]
    fn an_untrusted_certificate_is_a_finding_and_the_check_goes_on() {
        let mut sink = Sink::new();
        let untrusted: Result<()> = Err(Error::Registry(Registry::Transport(
            crate::net::HttpError::Untrusted {
                url: "https://ghcr.example/v2/".into(),
                reason: "certificate expired".into(),
            },
        )));
        let got = answered(
            untrusted,
            &mut sink,
            "image-exists could not verify `x`",
            "t.yml",
            5,
        );
        assert!(matches!(got, Ok(None)));
        assert_eq!(sink.unreachable(), ["https://ghcr.example/v2/"]);
        assert_eq!(sink.into_findings()[0].id, "unreachable");
    }

    #[test]
    fn an_answer_is_not_unreachable() {
        let mut sink = Sink::new();
        for e in [
            status(404),
            status(403),
            Error::Registry(Registry::ManifestUnknown {
                reference: "o/app:v1".into(),
                url: "https://ghcr.example/v2/o/app/manifests/v1".into(),
            }),
            Error::usage("no", "fix it"),
        ] {
            assert!(answered::<()>(Err(e), &mut sink, "x", "f", 1).is_err());
        }
        assert!(sink.unreachable().is_empty());
        assert!(sink.into_findings().is_empty());
    }
}
