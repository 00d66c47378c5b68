//! Tags as versions: semver, tolerating a leading `v` and two-part tags.

use semver::Version;

/// The semver version a tag names: `v4.3.0`, `4.3.0`, `v3.9` (= 3.9.0),
/// `v4.0.0-alpha`, `v3.3-tp` (= 3.3.0-tp), and seaweedfs's two-digit minors
/// `4.05` (= 4.5.0; semver forbids the leading zero, the tag is a release all
/// the same: issue 20). `None` for tags that are not versions at all
/// (`latest`, `snapshot`). Only ordering and ranges use the result; the tag
/// itself is kept as written everywhere else.
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
    // A number with leading zeros (`05`) is read as its value (`5`).
    let numbers: Vec<&str> = parts
        .iter()
        .map(|p| match p.trim_start_matches('0') {
            "" => "0",
            n => n,
        })
        .collect();
    let mut full = numbers.join(".");
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

    /// issue 20: seaweedfs's 4.00–4.09 are releases between 3.99 and 4.10.
    #[test]
    fn two_digit_minors_are_versions() {
        assert_eq!(parse_tag("4.05"), Some(Version::new(4, 5, 0)));
        assert_eq!(parse_tag("4.00"), Some(Version::new(4, 0, 0)));
        assert_eq!(parse_tag("v4.05.01"), Some(Version::new(4, 5, 1)));
        assert!(parse_tag("3.99") < parse_tag("4.00"));
        assert!(parse_tag("4.09") < parse_tag("4.10"));
        let track = semver::VersionReq::parse(">=3.0.0, <4.10.0").unwrap();
        assert!(in_track(&parse_tag("4.05").unwrap(), Some(&track), false));
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
