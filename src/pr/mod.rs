//! The upgrade's pull request and commit text, built from a typed
//! [`Summary`] as pure functions (no git, no network), so the text a
//! reviewer reads is tested byte for byte.
//!
//! 1. `ops::pr` gathers the facts into a [`Summary`] (summary.rs).
//! 2. [`title`] and [`body`] render the pull request (markdown.rs);
//!    [`commit_message`] the commit (message.rs).
//! 3. `pr --format json` prints the same [`Summary`], so the Markdown and the
//!    JSON never disagree.

mod markdown;
mod message;
mod summary;

pub use markdown::{body, body_with_footer, code, title};
pub use message::commit_message;
pub use summary::{
    Adaptation, Builder, Chart, Checks, FileStat, HunkChange, HunkMove, Image, ImageBuilder,
    Marker, Patch, PlatformDigest, Reverified, Section, Summary, Upstream,
};
