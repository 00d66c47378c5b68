//! `image-pin` for `[[pin]] yaml = …`: every key the pin writes holds what
//! the locked reference gives it (`render::yaml_pin::values`), in every
//! document that has it.

use super::{Finding, Input, Sink};
use crate::config::{Pin, YamlPin};
use crate::error::Result;
use crate::render::yaml_pin::{self, Error};

/// The findings of one yaml pin against the locked reference `locked`,
/// reported as `id` (`image-pin`'s: this file is that check's second half,
/// handed its id so that it never imports the check that calls it).
pub(super) fn check_keys(
    id: &'static str,
    input: &Input<'_>,
    pin: &Pin,
    keys: &YamlPin,
    locked: &str,
    sink: &mut Sink,
) -> Result<()> {
    let Some(text) = input.text(&pin.file)? else {
        sink.push(
            Finding::error(
                id,
                "vendor.toml",
                pin.line,
                format!("`{}` is missing", pin.file),
            )
            .fix("restore it, or fix the [[pin]]'s `file`"),
        );
        return Ok(());
    };
    // A locked reference without tag or digest is reported on its own.
    let Ok(wanted) = yaml_pin::values(keys, locked) else {
        return Ok(());
    };
    for (key, value) in wanted {
        let sites = match yaml_pin::sites(&text, key) {
            Ok(sites) => sites,
            Err(e @ (Error::MissingKey { .. } | Error::Manifest(_))) => {
                sink.push(
                    Finding::error(id, &pin.file, e.line(), format!("cannot pin `{key}`: {e}"))
                        .fix(
                            "add the key (or fix the [[pin]]'s `yaml`), then run `revendor render`",
                        ),
                );
                continue;
            }
            Err(e) => {
                sink.push(Finding::error(id, &pin.file, e.line(), e.to_string()).fix(
                    "write the value as plain or quoted text on one line, then run `revendor render`",
                ));
                continue;
            }
        };
        for site in sites.iter().filter(|s| s.value != value) {
            sink.push(
                Finding::error(
                    id,
                    &pin.file,
                    site.line,
                    format!(
                        "`{key}` is `{}`, not `{value}` of the locked `{locked}`",
                        site.value
                    ),
                )
                .fix("run `revendor render` to write the locked pin"),
            );
        }
    }
    Ok(())
}
