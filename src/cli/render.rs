//! `revendor render`.

use crate::console::Format;
use crate::error::{ExitCode, Result};
use crate::ops::render::render;
use crate::workspace::Context;

/// Flags of `revendor render` (none beyond the global ones).
#[derive(Debug, clap::Args)]
pub struct Args {}

pub(super) fn exec(ctx: &Context, _args: Args) -> Result<ExitCode> {
    let report = render(ctx)?;
    match ctx.shell.format() {
        Format::Json => ctx
            .shell
            .out(&serde_json::to_string_pretty(&report).unwrap_or_default()),
        _ => {
            let mut s = format!("rendered at {}\n", report.version);
            for (p, t, r) in &report.patches {
                s.push_str(&format!("patch {p} on {t}: {r}\n"));
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
            ctx.shell.out(&s);
        }
    }
    Ok(ExitCode::Clean)
}
