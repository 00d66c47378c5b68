//! `revendor patch …`.

use crate::error::{Outcome, Result};
use crate::ops::refresh::{RefreshOptions, refresh};
use crate::workspace::Context;

/// Subcommands of `revendor patch`.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Rewrite patch files with exact hunks against the locked upstream.
    Refresh {
        /// Patch names from vendor.toml; all when none.
        names: Vec<String>,
    },
}

pub(super) fn exec(ctx: &Context, cmd: Command) -> Result<Outcome> {
    match cmd {
        Command::Refresh { names } => {
            let changed = refresh(ctx, &RefreshOptions { names })?;
            if changed.is_empty() {
                super::out(ctx, "every patch is already exact\n")?;
            }
            for f in changed {
                super::out(ctx, &format!("refreshed {f}\n"))?;
            }
            Ok(Outcome::Clean)
        }
    }
}
