//! `registry::Error`: every way a registry conversation can fail, typed where callers branch.
//!
//! Callers branch on three things: whether to retry ([`Error::is_transient`]), whether the tag
//! or digest is simply absent ([`Error::ManifestUnknown`]), and whether the content failed a
//! check (digest, platforms). The spec's error codes are kept as [`ApiError`]s.
//!
//! No variant carries a credential or token: auth failures name the URL and the registry's own
//! reason, and of a response body (never from the token endpoint) only its spec error codes and
//! recognized messages are kept, trimmed and scrubbed of credentials (see `net::error_message`).

use std::fmt;
use std::path::PathBuf;

use thiserror::Error;

use crate::image::{self, Digest, MediaType, Platform};
use crate::net;

/// A failure talking to a registry or a failed check of what it served.
#[derive(Debug, Error)]
pub enum Error {
    /// A URL (a token realm, a redirect) that is not https and not loopback, or does not parse.
    #[error("refusing `{url}`: {reason}")]
    Url {
        /// The refused URL as it was given.
        url: String,
        /// Why it is refused.
        reason: &'static str,
    },
    /// The transport failed: no answer in time, a broken connection, a refused URL or
    /// redirect, an answer over [`MANIFEST_LIMIT`](super::MANIFEST_LIMIT), or the client setup.
    #[error(transparent)]
    Transport(#[from] net::HttpError),
    /// The registry answered with an unexpected status; `errors` holds the spec codes if the body
    /// had them, else `body` holds its recognized message, if any.
    #[error("`{url}` answered HTTP {status}{}", describe(errors, body))]
    Status {
        /// The URL requested, on the mirror if one is configured.
        url: String,
        /// The registry's HTTP status.
        status: u16,
        /// The spec error codes in the body; empty if it held none.
        errors: Vec<ApiError>,
        /// A recognized message of a non-spec JSON body, trimmed and scrubbed; else empty.
        body: String,
    },
    /// The tag or digest does not exist in the repository (404, `MANIFEST_UNKNOWN`,
    /// `NAME_UNKNOWN`); a read-back right after a push may see this for a while.
    #[error("manifest `{reference}` not found at `{url}`")]
    ManifestUnknown {
        /// The image reference that was looked up.
        reference: String,
        /// The manifest URL that answered 404, on the mirror if one is configured.
        url: String,
    },
    /// The registry refused us even after authenticating, or gave no way to authenticate.
    #[error("not authorized for `{url}`: {reason}{}", describe(errors, ""))]
    Unauthorized {
        /// The URL that refused access (HTTP 401 or 403).
        url: String,
        /// Why authenticating failed, in words.
        reason: String,
        /// The spec error codes in the refusal's body; empty if it held none.
        errors: Vec<ApiError>,
    },
    /// The token endpoint refused or returned something without a token. The body is never
    /// kept: on success it is the token itself.
    #[error("failed to get a registry token from `{realm}`: {reason}")]
    Token {
        /// The token endpoint, as the registry's challenge names it (its realm).
        realm: String,
        /// The endpoint's HTTP status, or `None` if it answered success without a token.
        status: Option<u16>,
        /// What went wrong, in words.
        reason: String,
    },
    /// `config.json` in the Docker config directory is unreadable or malformed.
    #[error("failed to read docker credentials from `{}`: {reason}", path.display())]
    Credentials {
        /// The path of the `config.json` read.
        path: PathBuf,
        /// Why it is unusable; never holds a secret.
        reason: String,
    },
    /// A `docker-credential-<helper>` program is missing, failed, or printed something unusable.
    #[error("credential helper `docker-credential-{helper}` failed for `{server}`: {reason}")]
    CredentialHelper {
        /// The helper's name, as the config gives it (without `docker-credential-`).
        helper: String,
        /// The server the helper was asked about: the registry host, or Docker Hub's
        /// `https://index.docker.io/v1/`.
        server: String,
        /// What went wrong, in words; never holds a secret.
        reason: String,
    },
    /// `REVENDOR_REGISTRY_MIRRORS` is not a `host=mirror,…` list.
    #[error("invalid registry mirror list `{spec}`: {reason}")]
    Mirror {
        /// The mirror list as given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A tag list (`/v2/<name>/tags/list`) that cannot be read: not JSON, a next page on
    /// another host, or more pages than revendor reads.
    #[error("failed to read the tags of `{url}`: {reason}")]
    TagList {
        /// The page's URL (or the repository's name when the pages run out).
        url: String,
        /// What is wrong, in words.
        reason: String,
    },
    /// A `HEAD` answered without the `Docker-Content-Digest` header, so the digest is unknown.
    #[error("`{url}` sent no Docker-Content-Digest header")]
    MissingDigest {
        /// The manifest URL whose answer lacked a valid digest header.
        url: String,
    },
    /// The bytes served hash to something other than what was requested or announced.
    #[error("content of `{reference}` hashes to {actual}, but {expected} was {source_of_expected}")]
    DigestMismatch {
        /// The image reference that was fetched.
        reference: String,
        /// The digest the content should have: the requested or the announced one.
        expected: Digest,
        /// The digest the body hashes to, or (for a `HEAD`) the one the registry announced.
        actual: Digest,
        /// Where `expected` came from: `"requested"` or `"announced in Docker-Content-Digest"`.
        source_of_expected: &'static str,
    },
    /// The manifest body does not parse.
    #[error("invalid manifest `{reference}`")]
    Manifest {
        /// The image reference that was fetched.
        reference: String,
        /// Why the body does not parse.
        #[source]
        source: image::Error,
    },
    /// The tag resolves to a single-platform manifest where an index was required.
    #[error(
        "`{reference}` is a single-platform {media_type} for {}, not a multi-platform index of the configured platforms [{}]",
        holds.as_ref().map_or_else(|| "a platform its config does not name".to_owned(), ToString::to_string),
        join(configured)
    )]
    NotAnIndex {
        /// The image reference that was resolved.
        reference: String,
        /// The media type of the manifest it resolves to.
        media_type: MediaType,
        /// The platform its config blob declares (`os`, `architecture`,
        /// `variant`), when the config could be read and names one (boxed:
        /// it would double the size of every registry error).
        holds: Option<Box<Platform>>,
        /// The platforms the image was to hold.
        configured: Vec<Platform>,
    },
    /// The index does not hold exactly the configured platforms.
    #[error(
        "index `{reference}` does not hold exactly the configured platforms: missing [{}], unexpected [{}]",
        join(missing),
        join(unexpected)
    )]
    Platforms {
        /// The image reference of the index.
        reference: String,
        /// The configured platforms the index lacks.
        missing: Vec<Platform>,
        /// The platforms the index holds beyond the configured ones.
        unexpected: Vec<Platform>,
    },
    /// The index lists one platform twice.
    #[error("index `{reference}` lists platform {platform} more than once")]
    DuplicatePlatform {
        /// The image reference of the index.
        reference: String,
        /// The platform listed more than once.
        platform: Platform,
    },
    /// An index entry (other than an attestation) has no platform, so it cannot be matched.
    #[error("index `{reference}` lists {digest} without a platform")]
    ChildWithoutPlatform {
        /// The image reference of the index.
        reference: String,
        /// The digest of the entry without a platform.
        digest: Digest,
    },
    /// A child digest repeats another child's or the index's own digest.
    #[error("index `{reference}` lists {digest} twice, or as its own child")]
    DuplicateChild {
        /// The image reference of the index.
        reference: String,
        /// The repeated digest.
        digest: Digest,
    },
    /// A child of the index is not a single-platform image manifest.
    #[error("child {digest} of index `{reference}` is a {media_type}, not an image manifest")]
    ChildNotImage {
        /// The image reference of the index.
        reference: String,
        /// The child's digest.
        digest: Digest,
        /// The media type of the child's manifest.
        media_type: MediaType,
    },
    /// The tag resolves to a digest other than the expected one (from buildx metadata, say).
    #[error("`{reference}` resolves to {actual}, expected {expected}")]
    UnexpectedDigest {
        /// The image reference that was resolved.
        reference: String,
        /// The digest it should resolve to.
        expected: Digest,
        /// The digest it resolves to.
        actual: Digest,
    },
    /// A buildx metadata file is unreadable or lacks a valid `containerimage.digest`.
    #[error("failed to read the image digest from buildx metadata `{}`: {reason}", path.display())]
    Metadata {
        /// The path of the metadata file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

impl Error {
    /// Whether trying the same request again may succeed: server errors (5xx), timeouts, refused
    /// or reset connections, and bodies cut short. Auth failures, 4xx answers and failed checks
    /// are not transient.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Transport(e) => e.is_transient(),
            Error::Status { status, .. } => *status >= 500,
            Error::Token { status, .. } => status.is_some_and(|s| s >= 500),
            _ => false,
        }
    }
}

/// One entry of the spec's error body `{"errors":[{"code":…,"message":…}]}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    /// The machine-readable code.
    pub code: ErrorCode,
    /// The registry's human-readable message (may be empty).
    pub message: String,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            write!(f, "{}", self.code)
        } else {
            write!(f, "{} ({})", self.code, self.message)
        }
    }
}

/// The error codes of the OCI distribution spec, plus `TOOMANYREQUESTS` (Docker Hub's rate
/// limit); any other code is kept verbatim in `Other`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorCode {
    /// `BLOB_UNKNOWN`
    BlobUnknown,
    /// `BLOB_UPLOAD_INVALID`
    BlobUploadInvalid,
    /// `BLOB_UPLOAD_UNKNOWN`
    BlobUploadUnknown,
    /// `DIGEST_INVALID`
    DigestInvalid,
    /// `MANIFEST_BLOB_UNKNOWN`
    ManifestBlobUnknown,
    /// `MANIFEST_INVALID`
    ManifestInvalid,
    /// `MANIFEST_UNKNOWN`: the tag or digest does not exist.
    ManifestUnknown,
    /// `NAME_INVALID`
    NameInvalid,
    /// `NAME_UNKNOWN`: the repository does not exist.
    NameUnknown,
    /// `SIZE_INVALID`
    SizeInvalid,
    /// `UNAUTHORIZED`: authentication required.
    Unauthorized,
    /// `DENIED`: authenticated but not allowed.
    Denied,
    /// `UNSUPPORTED`
    Unsupported,
    /// `TOOMANYREQUESTS`: rate limited.
    TooManyRequests,
    /// A code outside the spec.
    Other(String),
}

impl ErrorCode {
    const KNOWN: [(&'static str, ErrorCode); 14] = [
        ("BLOB_UNKNOWN", ErrorCode::BlobUnknown),
        ("BLOB_UPLOAD_INVALID", ErrorCode::BlobUploadInvalid),
        ("BLOB_UPLOAD_UNKNOWN", ErrorCode::BlobUploadUnknown),
        ("DIGEST_INVALID", ErrorCode::DigestInvalid),
        ("MANIFEST_BLOB_UNKNOWN", ErrorCode::ManifestBlobUnknown),
        ("MANIFEST_INVALID", ErrorCode::ManifestInvalid),
        ("MANIFEST_UNKNOWN", ErrorCode::ManifestUnknown),
        ("NAME_INVALID", ErrorCode::NameInvalid),
        ("NAME_UNKNOWN", ErrorCode::NameUnknown),
        ("SIZE_INVALID", ErrorCode::SizeInvalid),
        ("UNAUTHORIZED", ErrorCode::Unauthorized),
        ("DENIED", ErrorCode::Denied),
        ("UNSUPPORTED", ErrorCode::Unsupported),
        ("TOOMANYREQUESTS", ErrorCode::TooManyRequests),
    ];

    /// The code named by `code` (exact, uppercase as the spec writes it).
    pub fn parse(code: &str) -> ErrorCode {
        ErrorCode::KNOWN
            .into_iter()
            .find(|(name, _)| *name == code)
            .map_or_else(|| ErrorCode::Other(code.to_owned()), |(_, known)| known)
    }

    /// The spec's spelling of the code.
    pub fn as_str(&self) -> &str {
        match self {
            ErrorCode::Other(code) => code,
            known => ErrorCode::KNOWN
                .iter()
                .find(|(_, k)| k == known)
                .map_or("", |(name, _)| name),
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parses the spec's error body, each message cut to one line and scrubbed of `secrets` and any
/// `Bearer`/`Basic` credential; anything else (HTML from a proxy, empty) yields no errors.
pub(crate) fn parse_api_errors(body: &[u8], secrets: &[&str]) -> Vec<ApiError> {
    #[derive(serde::Deserialize)]
    struct Body {
        errors: Vec<Entry>,
    }
    #[derive(serde::Deserialize)]
    struct Entry {
        code: String,
        #[serde(default)]
        message: String,
    }
    serde_json::from_slice::<Body>(body)
        .map(|b| {
            b.errors
                .into_iter()
                .map(|e| ApiError {
                    code: ErrorCode::parse(&net::one_line(&e.code, secrets)),
                    message: net::one_line(&e.message, secrets),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn describe(errors: &[ApiError], body: &str) -> String {
    if !errors.is_empty() {
        let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
        format!(": {}", list.join("; "))
    } else if !body.is_empty() {
        format!(": {body}")
    } else {
        String::new()
    }
}

fn join(platforms: &[Platform]) -> String {
    let list: Vec<String> = platforms.iter().map(ToString::to_string).collect();
    list.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_spec_error_bodies() {
        let body = br#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown","detail":{"Tag":"v9"}},{"code":"X_CUSTOM"}]}"#;
        let errors = parse_api_errors(body, &[]);
        assert_eq!(errors.len(), 2);
        assert_eq!(errors[0].code, ErrorCode::ManifestUnknown);
        assert_eq!(errors[0].to_string(), "MANIFEST_UNKNOWN (manifest unknown)");
        assert_eq!(errors[1].code, ErrorCode::Other("X_CUSTOM".into()));
        assert!(parse_api_errors(b"<html>bad gateway</html>", &[]).is_empty());
    }

    #[test]
    fn every_known_code_round_trips() {
        for (name, code) in ErrorCode::KNOWN {
            assert_eq!(ErrorCode::parse(name), code);
            assert_eq!(code.as_str(), name);
        }
    }

    #[test]
    fn status_messages_prefer_spec_codes_over_bodies() {
        let err = Error::Status {
            url: "https://r.example/v2/".into(),
            status: 500,
            errors: vec![],
            body: net::error_message(b"\n  <html>upstream exploded</html>\nmore", &[]),
        };
        assert_eq!(err.to_string(), "`https://r.example/v2/` answered HTTP 500");
        assert!(err.is_transient());
        let err = Error::Status {
            url: "u".into(),
            status: 400,
            errors: parse_api_errors(
                br#"{"errors":[{"code":"NAME_INVALID","message":"bad"}]}"#,
                &[],
            ),
            body: String::new(),
        };
        assert_eq!(err.to_string(), "`u` answered HTTP 400: NAME_INVALID (bad)");
        assert!(!err.is_transient());
    }

    #[test]
    fn spec_messages_are_scrubbed_and_kept_to_one_line() {
        let body = br#"{"errors":[{"code":"DENIED","message":"you sent\nAuthorization: Basic YWxpY2U6cHc= and pw-1"}]}"#;
        let errors = parse_api_errors(body, &["pw-1"]);
        assert_eq!(
            errors[0].to_string(),
            "DENIED (you sent Authorization: Basic <redacted> and <redacted>)"
        );
    }
}
