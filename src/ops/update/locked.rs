//! [`Locked`]: the package as the lock has it, for the questions an update
//! asks of each rendered file before it moves (hand edits, removed patches,
//! a pending conflict).

use crate::config::lock::Lock;
use crate::config::{Config, Vendor};
use crate::error::Result;
use crate::render::{self, Stamp};

/// vendor.toml, the lock, and the versions and pins the rendered files on
/// disk were made with.
#[derive(Debug, Clone, Copy)]
pub(in crate::ops) struct Locked<'a> {
    /// vendor.toml.
    pub config: &'a Config,
    /// The lock; `None` when the package is being adopted.
    pub lock: Option<&'a Lock>,
    /// The locked versions (vendor.toml's when there is no lock) and pins.
    pub stamp: &'a Stamp,
}

impl<'a> Locked<'a> {
    /// `patched` finished as the output `to` with `stamp` ([`render::finish`]).
    pub fn finish(&self, to: &str, patched: &[u8], stamp: &Stamp) -> Result<Vec<u8>> {
        render::finish(self.config, to, patched, stamp)
    }

    /// The locked version of `vendor`'s upstream.
    pub fn version(&self, vendor: &Vendor) -> &'a str {
        self.stamp.version(vendor.upstream.as_deref())
    }
}
