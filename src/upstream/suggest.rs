//! What to suggest when `--to` names no release: the same tag with or
//! without its `v`, else the releases nearest to it.
//!
//! Nearness is semver distance: the difference in major first, then minor
//! within the same major, then patch within the same minor (`v4.3.9` is
//! nearest `v4.3.0`, then `v4.4.0` and `v4.2.1` are as near as each other,
//! then `v5.0.0`); a tie goes to the higher release. A `--to` that is no
//! version at all gets the newest releases.

use semver::Version;

use super::Release;
use crate::config::version::parse_tag;

/// How many releases a hint names at most.
const NEAREST: usize = 3;

/// The `help:` for a `--to` that matched no release.
pub(super) fn unknown_tag(to: &str, releases: &[Release]) -> String {
    if let Some(tag) = spelled_otherwise(to, releases) {
        return format!("did you mean `{tag}`?");
    }
    let mut versions: Vec<(Version, &str)> = releases
        .iter()
        .filter_map(|r| parse_tag(&r.tag).map(|v| (v, r.tag.as_str())))
        .collect();
    if versions.is_empty() {
        return "pass a tag that exists (see the upstream's releases)".into();
    }
    let heading = match parse_tag(to) {
        Some(wanted) => {
            versions.sort_by(|a, b| {
                distance(&wanted, &a.0)
                    .cmp(&distance(&wanted, &b.0))
                    .then_with(|| b.0.cmp(&a.0))
            });
            "the nearest releases"
        }
        None => {
            versions.sort_by(|a, b| b.0.cmp(&a.0));
            "the newest releases"
        }
    };
    let tags: Vec<String> = versions
        .iter()
        .take(NEAREST)
        .map(|(_, tag)| format!("`{tag}`"))
        .collect();
    format!("{heading} are {}", tags.join(", "))
}

/// The release that is `to` with a `v` added or removed (`4.3.0` → `v4.3.0`).
fn spelled_otherwise<'a>(to: &str, releases: &'a [Release]) -> Option<&'a str> {
    let bare = to.strip_prefix(['v', 'V']).unwrap_or(to);
    releases
        .iter()
        .map(|r| r.tag.as_str())
        .find(|tag| tag.strip_prefix(['v', 'V']).unwrap_or(tag) == bare)
}

/// `(Δmajor, Δminor, Δpatch, prerelease differs)`, compared in that order;
/// a part counts only while the parts above it are equal (the patch of
/// another minor says nothing about nearness).
fn distance(a: &Version, b: &Version) -> (u64, u64, u64, bool) {
    let major = a.major.abs_diff(b.major);
    let minor = if major == 0 {
        a.minor.abs_diff(b.minor)
    } else {
        0
    };
    let patch = if major == 0 && minor == 0 {
        a.patch.abs_diff(b.patch)
    } else {
        0
    };
    (major, minor, patch, a.pre != b.pre)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn releases(tags: &[&str]) -> Vec<Release> {
        tags.iter()
            .map(|t| Release {
                tag: t.to_string(),
                prerelease: false,
            })
            .collect()
    }

    #[test]
    fn a_missing_or_extra_v_names_the_tag() {
        let rels = releases(&["v4.2.0", "v4.3.0"]);
        assert_eq!(unknown_tag("4.3.0", &rels), "did you mean `v4.3.0`?");
        let bare = releases(&["1.2.0"]);
        assert_eq!(unknown_tag("v1.2.0", &bare), "did you mean `1.2.0`?");
    }

    #[test]
    fn an_unknown_version_lists_the_nearest_three() {
        let rels = releases(&["v3.9.0", "v4.2.1", "v4.3.0", "v4.4.0", "v5.0.0", "latest"]);
        assert_eq!(
            unknown_tag("v4.3.9", &rels),
            "the nearest releases are `v4.3.0`, `v4.4.0`, `v4.2.1`"
        );
        assert_eq!(
            unknown_tag("v6", &rels),
            "the nearest releases are `v5.0.0`, `v4.4.0`, `v4.3.0`"
        );
    }

    #[test]
    fn a_word_lists_the_newest_and_no_releases_say_so() {
        let rels = releases(&["v1.0.0", "v1.1.0"]);
        assert_eq!(
            unknown_tag("stable", &rels),
            "the newest releases are `v1.1.0`, `v1.0.0`"
        );
        assert_eq!(
            unknown_tag("v1", &releases(&[])),
            "pass a tag that exists (see the upstream's releases)"
        );
    }
}
