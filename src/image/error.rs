//! The one error type of `image`: a value that does not parse as what it claims to be.

use thiserror::Error;

/// Why a string or a body is not a valid OCI value. Each variant carries the rejected input
/// (trimmed for bodies) so the message alone tells the user what to fix.
#[derive(Debug, Error)]
pub enum Error {
    /// Not `sha256:` followed by 64 lowercase hex digits (for [`Digest::from_hex`](super::Digest::from_hex):
    /// not the 64 digits alone).
    #[error("invalid digest `{input}`: {reason}")]
    Digest {
        /// The rejected input.
        input: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Not `[host[:port]/]path[:tag][@digest]` with the distribution grammar.
    #[error("invalid image reference `{input}`: {reason}")]
    Reference {
        /// The rejected input.
        input: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Not `os/arch` or `os/arch/variant`.
    #[error("invalid platform `{input}`: expected `os/arch` or `os/arch/variant`")]
    Platform {
        /// The rejected input.
        input: String,
    },
    /// The body's `mediaType` (or, lacking one, the Content-Type) is not one of the four
    /// manifest kinds revendor reads.
    #[error("unsupported manifest media type `{media_type}`")]
    MediaType {
        /// The unsupported media type, as the body or Content-Type names it.
        media_type: String,
    },
    /// Neither the body nor the Content-Type says what kind of manifest this is.
    #[error("the manifest names no media type and none was sent with it")]
    NoMediaType,
    /// The body is not the JSON shape its media type promises.
    #[error("invalid manifest of type `{media_type}`")]
    Manifest {
        /// The media type the body was read as (`unknown` when none was sent).
        media_type: String,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
}
