//! `image-pin` for `[[pin]] yaml = …`: every key the pin writes holds what
//! the locked reference gives it (`render::yaml_pin::values`), in every
//! document that has it. A tag key naming the locked digest under another
//! tag is a rename (`image_pin_rename`), not drift.

use super::image_pin_rename::{Renames, renamed};
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
    (pin, locked): (&Pin, &str),
    keys: &YamlPin,
    renames: &mut Renames,
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
    let digest_kept = digest_kept(&text, keys, &wanted);
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
            if let Some(tag) = rename(keys, key, &site.value, locked, digest_kept) {
                let at = (pin.file.as_str(), site.line);
                renames.push(pin.image.as_deref(), locked, at, &site.value, tag);
                continue;
            }
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

/// Whether the digest key of a split pin (if it has one) holds the wanted
/// digest at every site: only then can its tag key be a rename.
fn digest_kept(text: &str, keys: &YamlPin, wanted: &[(&str, String)]) -> bool {
    let YamlPin::Split {
        digest: Some(digest_key),
        ..
    } = keys
    else {
        return true;
    };
    let Some((_, digest)) = wanted.iter().find(|(k, _)| k == digest_key) else {
        return false;
    };
    yaml_pin::sites(text, digest_key).is_ok_and(|sites| sites.iter().all(|s| &s.value == digest))
}

/// The new tag when `value` at the tag key `key` of `keys` names the locked
/// digest under another tag: `<tag>@sha256:…` at a joined key or a tag key
/// without a digest key, the tag alone beside a digest key that kept the
/// locked digest (`digest_kept`).
fn rename(
    keys: &YamlPin,
    key: &str,
    value: &str,
    locked: &str,
    digest_kept: bool,
) -> Option<String> {
    let repository = crate::render::pin::repository_of(locked);
    let found = match keys {
        YamlPin::Joined(_) => format!("{repository}:{value}"),
        YamlPin::Split { tag, digest, .. } if tag == key => match digest {
            None => format!("{repository}:{value}"),
            Some(_) if digest_kept => {
                let digest = crate::image::Reference::parse(locked)
                    .ok()?
                    .digest()?
                    .to_string();
                format!("{repository}:{value}@{digest}")
            }
            Some(_) => return None,
        },
        YamlPin::Split { .. } => return None,
    };
    renamed(locked, &found)
}
