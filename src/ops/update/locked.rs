//! [`Locked`]: the package as the lock has it, for the questions an update
//! asks of each rendered file before it moves (hand edits, removed patches,
//! a pending conflict).

use crate::config::Config;
use crate::config::lock::Lock;
use crate::error::Result;
use crate::render;

/// vendor.toml, the lock, and the version and pin the rendered files on
/// disk were made with.
#[derive(Debug, Clone, Copy)]
pub(in crate::ops) struct Locked<'a> {
    /// vendor.toml.
    pub config: &'a Config,
    /// The lock; `None` when the package is being adopted.
    pub lock: Option<&'a Lock>,
    /// The locked version (vendor.toml's when there is no lock).
    pub version: &'a str,
    /// The pinned image reference.
    pub pin: Option<&'a str>,
}

impl Locked<'_> {
    /// `patched` finished as the output `to` at `version` ([`render::finish`]).
    pub fn finish(&self, to: &str, patched: &[u8], version: &str) -> Result<Vec<u8>> {
        render::finish(self.config, to, patched, version, self.pin)
    }
}
