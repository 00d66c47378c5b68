//! `revendor patch …`.

use crate::console::Format;
use crate::error::{Outcome, Result};
use crate::ops::refresh::{RefreshOptions, refresh};
use crate::report;
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
            if ctx.shell.format() == Format::Json {
                /// `patch refresh --format json`: the files it wrote.
                #[derive(serde::Serialize)]
                struct Refreshed<'a> {
                    changed: &'a [String],
                }
                super::out(ctx, &report::document(&Refreshed { changed: &changed }))?;
                return Ok(Outcome::Clean);
            }
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
