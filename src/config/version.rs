//! Tags as versions: semver, tolerating a leading `v` and two-part tags.

use semver::Version;

/// The semver version a tag names: `v4.3.0`, `4.3.0`, `v3.9` (= 3.9.0),
/// `v4.0.0-alpha`, `v3.3-tp` (= 3.3.0-tp). `None` for tags that are not
/// versions at all (`latest`, `snapshot`).
pub fn parse_tag(tag: &str) -> Option<Version> {
    let t = tag.strip_prefix(['v', 'V']).unwrap_or(tag);
    if let Ok(v) = Version::parse(t) {
        return Some(v);
    }
    let (core, rest) = match t.find(['-', '+']) {
        Some(i) => t.split_at(i),
        None => (t, ""),
    };
    let parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty()
        || parts.len() > 3
        || parts
            .iter()
            .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let mut full = parts.join(".");
    for _ in parts.len()..3 {
        full.push_str(".0");
    }
    Version::parse(&format!("{full}{rest}")).ok()
}

/// Whether `version` lies in `track`. A prerelease is judged by its release
/// version when prereleases are allowed (semver ranges otherwise never match
/// them), and never matches when they are not.
pub fn in_track(
    version: &Version,
    track: Option<&semver::VersionReq>,
    allow_prerelease: bool,
) -> bool {
    if !version.pre.is_empty() && !allow_prerelease {
        return false;
    }
    let Some(track) = track else { return true };
    if track.matches(version) {
        return true;
    }
    if allow_prerelease && !version.pre.is_empty() {
        let mut release = version.clone();
        release.pre = semver::Prerelease::EMPTY;
        return track.matches(&release);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerant_tags() {
        assert_eq!(parse_tag("v4.3.0"), Some(Version::new(4, 3, 0)));
        assert_eq!(parse_tag("4.3.0"), Some(Version::new(4, 3, 0)));
        assert_eq!(parse_tag("v3.9"), Some(Version::new(3, 9, 0)));
        assert_eq!(parse_tag("v4.0.0-alpha").unwrap().pre.as_str(), "alpha");
        assert_eq!(parse_tag("v3.3-tp").unwrap().to_string(), "3.3.0-tp");
        assert_eq!(parse_tag("latest"), None);
        assert_eq!(parse_tag("v1..2"), None);
    }

    #[test]
    fn track_and_prereleases() {
        let track = semver::VersionReq::parse(">=4.0.0, <5.0.0").unwrap();
        assert!(in_track(&Version::new(4, 3, 0), Some(&track), false));
        assert!(!in_track(&Version::new(5, 0, 0), Some(&track), false));
        let alpha = parse_tag("v4.4.0-rc.1").unwrap();
        assert!(!in_track(&alpha, Some(&track), false));
        assert!(in_track(&alpha, Some(&track), true));
    }
}
