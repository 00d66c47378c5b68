//! `image-pin` for `[[pin]] yaml = …`: every key the pin writes holds what
//! the locked reference gives it (`render::yaml_pin::values`), in every
//! document that has it. A `<tag>@sha256:…` value naming the locked digest
//! under another tag is a rename (`image_pin_rename`), not drift.

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
            if let Some(tag) = rename(keys, key, &site.value, locked) {
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

/// The new tag when `value` at the key `key` of `keys` names the locked
/// digest under another tag. Only a value that carries the digest itself
/// can say so (`<tag>@sha256:…` at a joined key, or at a tag key without a
/// digest key): a tag key beside a digest key is a hand edit like any other.
fn rename(keys: &YamlPin, key: &str, value: &str, locked: &str) -> Option<String> {
    let joined = match keys {
        YamlPin::Joined(_) => true,
        YamlPin::Split { tag, digest, .. } => tag == key && digest.is_none(),
    };
    let repository = crate::render::pin::repository_of(locked);
    joined
        .then(|| renamed(locked, &format!("{repository}:{value}")))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_value_carrying_the_digest_can_be_a_rename() {
        let d = format!("sha256:{}", "a".repeat(64));
        let locked = format!("ghcr.io/x/app:v1-rc.1@{d}");
        let joined = YamlPin::Joined("image.tag".into());
        let split = |digest: Option<&str>| YamlPin::Split {
            repository: "image.repository".into(),
            tag: "image.tag".into(),
            digest: digest.map(str::to_owned),
        };
        let promoted = format!("v1@{d}");
        assert_eq!(
            rename(&joined, "image.tag", &promoted, &locked),
            Some("v1".into())
        );
        assert_eq!(
            rename(&split(None), "image.tag", &promoted, &locked),
            Some("v1".into())
        );
        assert_eq!(
            rename(&split(Some("image.digest")), "image.tag", "v1", &locked),
            None
        );
        assert_eq!(
            rename(&split(None), "image.repository", &promoted, &locked),
            None
        );
    }
}
