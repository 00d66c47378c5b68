//! `revendor render`.

use crate::console::Format;
use crate::error::{Outcome, Result};
use crate::ops::render::{RenderOptions, render};
use crate::report;
use crate::workspace::Context;

/// Flags of `revendor render`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Fold hand edits of rendered files into the patch that targets them
    /// (without it, a hand edit stops the render and nothing is written).
    #[arg(long)]
    pub adopt_edits: bool,
}

pub(super) fn exec(ctx: &Context, args: Args) -> Result<Outcome> {
    let opts = RenderOptions {
        adopt_edits: args.adopt_edits,
    };
    let report = render(ctx, &opts)?;
    match ctx.shell.format() {
        Format::Json => super::out(ctx, &report::document(&report))?,
        _ => {
            let mut s = format!("rendered at {}\n", report.version);
            for p in &report.patches {
                s.push_str(&format!("{p}\n"));
            }
            for e in &report.edits {
                if let Some(into) = &e.adopted_into {
                    s.push_str(&format!(
                        "hand edit {}:{} adopted into patch {into}: {}\n",
                        e.file, e.line, e.text
                    ));
                }
            }
            for n in &report.notes {
                s.push_str(&format!("{n}\n"));
            }
            if report.changed.is_empty() {
                s.push_str("no file changed\n");
            }
            for f in &report.changed {
                s.push_str(&format!("wrote {f}\n"));
            }
            super::out(ctx, &s)?;
        }
    }
    Ok(Outcome::Clean)
}
