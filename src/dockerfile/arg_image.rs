//! The image an `ARG` names through the `FROM` lines that use it: the
//! registry reference whose digest a pinned ARG value must carry.
//!
//! cilium's Dockerfile declares `ARG VERSION=v1.19.1@sha256:…` and builds
//! `FROM quay.io/cilium/cilium:${VERSION}`: the digest is that image's. To
//! move the value, the ARG is set to the new value (no digest), the file is
//! parsed again, and every stage whose `FROM` uses the ARG must name one and
//! the same registry image: that reference, with the new tag, is what the
//! caller resolves.

use super::rewrite::splice;
use super::{Base, Dockerfile, Error};
use crate::image::Reference;

/// The one registry image that the `FROM` lines using `ARG name` name when
/// its value is `value`; `None` when no `FROM` uses it, or the ones that do
/// name different images, or none readable.
pub fn arg_image(text: &str, name: &str, value: &str) -> Result<Option<Reference>, Error> {
    let df = Dockerfile::parse(text)?;
    let edits: Vec<_> = df
        .arg_values(name)
        .filter_map(|a| Some((a.span.clone()?, value.to_owned())))
        .collect();
    let df = Dockerfile::parse(&splice(text, &edits))?;
    let mut found: Option<Reference> = None;
    for stage in df.stages.iter().filter(|s| uses(&s.image, name)) {
        let Base::Image(reference) = &stage.base else {
            return Ok(None);
        };
        match &found {
            Some(seen) if seen != reference => return Ok(None),
            _ => found = Some(reference.clone()),
        }
    }
    Ok(found)
}

/// Whether `word` expands `$name` or `${name…}`.
fn uses(word: &str, name: &str) -> bool {
    let braced = format!("${{{name}");
    let bare = format!("${name}");
    word.match_indices(&braced)
        .any(|(at, _)| matches!(word[at + braced.len()..].chars().next(), Some('}' | ':')))
        || word.match_indices(&bare).any(|(at, _)| {
            !word[at + bare.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "@sha256:0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a";

    #[test]
    fn the_from_using_the_arg_names_the_image_at_the_new_value() {
        let text = format!(
            "ARG VERSION=v1.19.1{DIGEST}\nFROM quay.io/cilium/cilium:${{VERSION}} AS cilium\nFROM scratch\n"
        );
        let image = arg_image(&text, "VERSION", "v1.19.2").unwrap().unwrap();
        assert_eq!(image.to_string(), "quay.io/cilium/cilium:v1.19.2");
        let text = format!("ARG IMAGE=repo.example/a:v1{DIGEST}\nFROM $IMAGE\n");
        let image = arg_image(&text, "IMAGE", "repo.example/a:v2").unwrap();
        assert_eq!(image.unwrap().to_string(), "repo.example/a:v2");
    }

    #[test]
    fn no_from_or_two_images_name_none() {
        let unused = format!("ARG VERSION=v1{DIGEST}\nFROM x:${{VERSIONS}}\n");
        assert_eq!(arg_image(&unused, "VERSION", "v2").unwrap(), None);
        let two = format!("ARG VERSION=v1{DIGEST}\nFROM a:$VERSION\nFROM b:${{VERSION}}\n");
        assert_eq!(arg_image(&two, "VERSION", "v2").unwrap(), None);
        let same = format!("ARG VERSION=v1{DIGEST}\nFROM a:$VERSION\nFROM a:${{VERSION}}\n");
        let image = arg_image(&same, "VERSION", "v2").unwrap().unwrap();
        assert_eq!(image.to_string(), "a:v2");
    }
}
