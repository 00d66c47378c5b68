//! `image-pin` for a pin site that names the locked digest under another
//! tag: a rename, not drift (issue 22).
//!
//! A release promotion (cozystack's rewrites `:v1.6.0-rc.4@sha256:X` to
//! `:v1.6.0@sha256:X` across the repository) moves the tag and keeps the
//! image. The digest is what the lock vouches for, so such a site is
//! reported as a warning, and `check --fix` records the new tag in the lock
//! (then `render` writes it too, and the next check is clean).
//!
//! 1. [`renamed`] tells such a site from drift: same repository, same
//!    digest, another tag.
//! 2. [`Renames::report`] gathers every site of one image: when they all
//!    name one new tag, each is a warning (or, with `--fix`, the lock is
//!    edited and one `info` finding says so); when they name several, none
//!    of them can be the release, and each is an error.

use std::collections::BTreeMap;

use super::{Finding, Input, Sink};
use crate::config::lock::{LOCK_PATH, Lock};
use crate::error::Result;
use crate::image::Reference;
use crate::render::pin::repository_of;

/// The tag a pin site's `found` reference renames the `locked` one to:
/// `Some` when both name one repository and one digest under different
/// tags.
pub(super) fn renamed(locked: &str, found: &str) -> Option<String> {
    let (l, f) = (
        Reference::parse(locked).ok()?,
        Reference::parse(found).ok()?,
    );
    let same_image = repository_of(locked) == repository_of(found)
        && l.digest().is_some()
        && l.digest() == f.digest();
    match (same_image, f.tag()) {
        (true, Some(tag)) if l.tag() != Some(tag) => Some(tag.to_owned()),
        _ => None,
    }
}

/// One site that renames a locked reference.
#[derive(Debug, Clone)]
struct Site {
    file: String,
    line: usize,
    value: String,
    tag: String,
}

/// The renaming sites found, by image (`[[pin]] image`, `None` for the
/// only one), with the locked reference each renames.
#[derive(Debug, Default)]
pub(super) struct Renames {
    by_image: BTreeMap<Option<String>, (String, Vec<Site>)>,
}

impl Renames {
    /// Records that `value` at `file:line` renames `locked` (image
    /// `image`) to `tag`.
    pub fn push(
        &mut self,
        image: Option<&str>,
        locked: &str,
        (file, line): (&str, usize),
        value: &str,
        tag: String,
    ) {
        let entry = self
            .by_image
            .entry(image.map(str::to_owned))
            .or_insert_with(|| (locked.to_owned(), Vec::new()));
        entry.1.push(Site {
            file: file.to_owned(),
            line,
            value: value.to_owned(),
            tag,
        });
    }

    /// Reports every rename as `id` (`image-pin`'s): see the module docs.
    pub fn report(self, id: &str, input: &Input<'_>, sink: &mut Sink) -> Result<()> {
        for (image, (locked, sites)) in self.by_image {
            let mut tags: Vec<&str> = sites.iter().map(|s| s.tag.as_str()).collect();
            tags.sort_unstable();
            tags.dedup();
            if let [tag] = tags.as_slice() {
                if input.fix {
                    let to = record(input, image.as_deref(), &locked, tag)?;
                    sink.push(Finding::info(
                        id,
                        LOCK_PATH,
                        1,
                        format!(
                            "recorded the rename of `{locked}` to `{to}` in the lock (same digest)"
                        ),
                    ));
                    continue;
                }
                for s in &sites {
                    sink.push(
                        Finding::warning(
                            id,
                            &s.file,
                            s.line,
                            format!(
                                "`{}` renames the locked `{locked}`: the same digest under tag `{tag}` (a release promotion), not drift",
                                s.value
                            ),
                        )
                        .fix("record the new tag in the lock: `revendor check --online --fix`"),
                    );
                }
                continue;
            }
            let all = tags.join("`, `");
            for s in &sites {
                sink.push(
                    Finding::error(
                        id,
                        &s.file,
                        s.line,
                        format!(
                            "`{}` names the locked digest of `{locked}` under tag `{}`, while the pin sites name it as `{all}`",
                            s.value, s.tag
                        ),
                    )
                    .fix("make every pin site name one tag, then run `revendor check --online --fix`; or run `revendor render` to write the locked pin"),
                );
            }
        }
        Ok(())
    }
}

/// Stages the lock with image `image`'s reference `locked` renamed to
/// `tag`; returns the new reference.
fn record(input: &Input<'_>, image: Option<&str>, locked: &str, tag: &str) -> Result<String> {
    let path = input.ctx.root.join(LOCK_PATH);
    let text = match input.text(LOCK_PATH)? {
        Some(text) => text,
        None => input.lock.to_toml(None),
    };
    let mut lock = Lock::parse(&path, &text)?;
    let digest = Reference::parse(locked)
        .ok()
        .and_then(|r| r.digest().map(ToString::to_string))
        .unwrap_or_default();
    let to = format!("{}:{tag}@{digest}", repository_of(locked));
    if let Some(entry) = lock.images.iter_mut().find(|i| i.name.as_deref() == image) {
        entry.reference = to.clone();
    }
    input.edit(LOCK_PATH, lock.to_toml(Some(&text)).into_bytes());
    Ok(to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_same_digest_under_another_tag_is_a_rename() {
        let d = format!("sha256:{}", "a".repeat(64));
        let e = format!("sha256:{}", "b".repeat(64));
        let locked = format!("ghcr.io/x/app:v1.6.0-rc.4@{d}");
        assert_eq!(
            renamed(&locked, &format!("ghcr.io/x/app:v1.6.0@{d}")),
            Some("v1.6.0".into())
        );
        for not in [
            format!("ghcr.io/x/app:v1.6.0@{e}"),
            format!("ghcr.io/x/other:v1.6.0@{d}"),
            format!("ghcr.io/x/app@{d}"),
            locked.clone(),
            "ghcr.io/x/app:v1.6.0".to_owned(),
        ] {
            assert_eq!(renamed(&locked, &not), None, "{not}");
        }
    }
}
