//! `go::Version`: a Go release as vendor.toml (`go = "1.26"`), a golang image tag
//! (`golang:1.26.3-bookworm`) and go.mod (`go 1.25.0`) write it.
//!
//! 1. [`Version::parse`] reads a bare version: `1`, `1.26`, `1.26.3`, `1.26rc1`, `1.26beta2`;
//! 2. [`Version::from_tag`] reads an image tag: the version, then an optional `-variant`
//!    (`1.23-bookworm` is Go 1.23), which it hands back so a retag can keep it;
//! 3. [`Version::from_go_mod`] reads go.mod's `go` directive.
//!
//! 4. [`Requirement::parse`] reads vendor.toml's `go`: a minor (`1.26`, the builder must be a
//!    release of it) or a minimum (`>=1.26`, any release from it on, so a bot's move of the
//!    builder to `golang:1.27` is no drift; issue 22).
//!
//! Versions order as Go orders them: `1.26` < `1.26rc1` < `1.26.0` < `1.26.1`. Whether a builder
//! is new enough is not that order, though: an image tag without a patch level (`golang:1.26`)
//! is the newest patch of its minor, so [`Version::satisfies`] lets it build a module that needs
//! `go 1.26.10`.

use std::fmt;

/// A parsed Go release version. Ordering is Go's (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    major: u64,
    /// `None` only for a major alone (`golang:1`).
    minor: Option<u64>,
    stage: Stage,
}

/// Where in a minor's life a version sits; the variant order is Go's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    /// No patch level: `1.26` (the language version, or, as a tag, the newest patch).
    Minor,
    /// `1.26beta1`.
    Beta(u64),
    /// `1.26rc1`.
    Rc(u64),
    /// `1.26.3`.
    Patch(u64),
}

impl Version {
    /// Parses a bare Go version (no `go` prefix, no variant); `None` when `text` is not one.
    pub fn parse(text: &str) -> Option<Version> {
        let (major, rest) = split_number(text)?;
        let Some(rest) = rest.strip_prefix('.') else {
            return rest.is_empty().then_some(Version {
                major,
                minor: None,
                stage: Stage::Minor,
            });
        };
        let (minor, rest) = split_number(rest)?;
        let stage = if rest.is_empty() {
            Stage::Minor
        } else if let Some(patch) = rest.strip_prefix('.') {
            Stage::Patch(whole_number(patch)?)
        } else if let Some(n) = rest.strip_prefix("rc") {
            Stage::Rc(whole_number(n)?)
        } else if let Some(n) = rest.strip_prefix("beta") {
            Stage::Beta(whole_number(n)?)
        } else {
            return None;
        };
        Some(Version {
            major,
            minor: Some(minor),
            stage,
        })
    }

    /// Reads a golang image tag: the version and the variant suffix after it, `-` included
    /// (`1.26.3-bookworm` gives `1.26.3` and `-bookworm`; `1.26` gives `1.26` and `""`).
    /// `None` for tags that name no version (`latest`, `bookworm`).
    pub fn from_tag(tag: &str) -> Option<(Version, &str)> {
        let end = tag.find('-').unwrap_or(tag.len());
        Some((Version::parse(&tag[..end])?, &tag[end..]))
    }

    /// The `go` directive of a go.mod (`go 1.25.0 // comment` gives `1.25.0`); `None` when
    /// there is none. A directive that is not a Go version is an error holding its text: it
    /// would otherwise vanish from the lock without a word (issue 21), and Go refuses such a
    /// go.mod too.
    pub fn from_go_mod(go_mod: &[u8]) -> Result<Option<Version>, String> {
        let text = String::from_utf8_lossy(go_mod);
        let Some(directive) = text.lines().find_map(|line| {
            let line = line.split("//").next().unwrap_or("").trim();
            line.strip_prefix("go ").map(str::trim)
        }) else {
            return Ok(None);
        };
        Version::parse(directive)
            .map(Some)
            .ok_or_else(|| directive.to_owned())
    }

    /// The minor this version belongs to (`1.25.0` and `1.25rc1` give `1.25`): what `--go`
    /// takes to move a builder to it.
    pub fn minor_release(&self) -> Version {
        Version {
            major: self.major,
            minor: self.minor,
            stage: Stage::Minor,
        }
    }

    /// Whether this is a minor alone (`1.26`), the form vendor.toml's `go` and `--go` take.
    pub fn is_minor(&self) -> bool {
        self.minor.is_some() && self.stage == Stage::Minor
    }

    /// Whether this is a release of the minor `minor`: itself or one of its patch releases,
    /// not a prerelease (`1.26` and `1.26.3` are releases of `1.26`; `1.26rc1`, `1.260` are not).
    pub fn is_release_of(&self, minor: &Version) -> bool {
        (self.major, self.minor) == (minor.major, minor.minor)
            && matches!(self.stage, Stage::Minor | Stage::Patch(_))
    }

    /// Whether a builder of this version is at least `minimum` (a go.mod directive). Missing
    /// levels of `self` mean the newest (`1.26` satisfies `1.26.10`, `1` satisfies `1.26.0`);
    /// `minimum` is read as written, so `1.26rc1` satisfies `1.26` but not `1.26.0`.
    pub fn satisfies(&self, minimum: &Version) -> bool {
        let Some(minor) = self.minor else {
            return self.major >= minimum.major;
        };
        if self.stage == Stage::Minor {
            return (self.major, Some(minor)) >= (minimum.major, minimum.minor);
        }
        self >= minimum
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.major)?;
        if let Some(minor) = self.minor {
            write!(f, ".{minor}")?;
        }
        match self.stage {
            Stage::Minor => Ok(()),
            Stage::Beta(n) => write!(f, "beta{n}"),
            Stage::Rc(n) => write!(f, "rc{n}"),
            Stage::Patch(n) => write!(f, ".{n}"),
        }
    }
}

/// What vendor.toml's `go` asks of the builder's Go: a release of one minor (`go = "1.26"`) or
/// any release from a minor on (`go = ">=1.26"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// The minor named.
    pub minor: Version,
    /// `>=`: newer minors are welcome too.
    pub minimum: bool,
}

impl Requirement {
    /// Parses `1.26` or `>=1.26` (spaces allowed after `>=`); `None` unless the version is a
    /// minor alone.
    pub fn parse(text: &str) -> Option<Requirement> {
        let (minimum, version) = match text.trim().strip_prefix(">=") {
            Some(rest) => (true, rest.trim_start()),
            None => (false, text.trim()),
        };
        let minor = Version::parse(version).filter(Version::is_minor)?;
        Some(Requirement { minor, minimum })
    }

    /// The same requirement on another minor, keeping its form (what `pin-base --go` writes).
    pub fn moved_to(&self, minor: &Version) -> Requirement {
        Requirement {
            minor: minor.minor_release(),
            minimum: self.minimum,
        }
    }

    /// Whether a builder of Go `version` (from its tag) meets the requirement: a release (not a
    /// prerelease) of the minor, or with `>=` of it or any later minor.
    pub fn admits(&self, version: &Version) -> bool {
        if version.is_release_of(&self.minor) {
            return true;
        }
        self.minimum
            && matches!(version.stage, Stage::Minor | Stage::Patch(_))
            && version.minor.is_some()
            && version.minor_release() > self.minor
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.minimum {
            true => write!(f, ">={}", self.minor),
            false => write!(f, "{}", self.minor),
        }
    }
}

/// The leading decimal number of `text` and what follows it.
fn split_number(text: &str) -> Option<(u64, &str)> {
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    Some((text[..end].parse().ok()?, &text[end..]))
}

/// `text` as a decimal number when it is nothing else.
fn whole_number(text: &str) -> Option<u64> {
    match split_number(text)? {
        (n, "") => Some(n),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap_or_else(|| panic!("{text} should parse"))
    }

    #[test]
    fn parses_releases_minors_and_prereleases() {
        for text in [
            "1",
            "1.26",
            "1.26.6",
            "1.25.0",
            "1.26rc1",
            "1.26beta2",
            "1.260",
        ] {
            assert_eq!(v(text).to_string(), text);
        }
        for bad in [
            "",
            "1.",
            "1.26.",
            "1.26.x",
            "v1.26",
            "go1.26",
            "1.26-bookworm",
            "1.26rc",
            "1.26.0rc1",
            "+1.26",
            "1.26.3.1",
            "latest",
        ] {
            assert_eq!(Version::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_minimum_admits_later_minors_and_an_exact_minor_does_not() {
        let exact = Requirement::parse("1.26").unwrap();
        let minimum = Requirement::parse(">= 1.26").unwrap();
        assert_eq!(
            (exact.to_string(), minimum.to_string()),
            ("1.26".into(), ">=1.26".into())
        );
        for (tag, by_exact, by_minimum) in [
            ("1.26", true, true),
            ("1.26.3", true, true),
            ("1.27", false, true),
            ("1.27.1", false, true),
            ("2.0", false, true),
            ("1.25.9", false, false),
            ("1.27rc1", false, false),
            ("1", false, false),
        ] {
            assert_eq!(exact.admits(&v(tag)), by_exact, "{tag}");
            assert_eq!(minimum.admits(&v(tag)), by_minimum, "{tag}");
        }
        for bad in ["1.26.1", ">=1", ">1.26", "=>1.26", ">=", "1.26rc1"] {
            assert_eq!(Requirement::parse(bad), None, "{bad:?}");
        }
        assert_eq!(minimum.moved_to(&v("1.28")).to_string(), ">=1.28");
    }

    #[test]
    fn tags_split_into_version_and_variant() {
        assert_eq!(
            Version::from_tag("1.23-bookworm"),
            Some((v("1.23"), "-bookworm"))
        );
        assert_eq!(
            Version::from_tag("1.26.3-alpine3.20"),
            Some((v("1.26.3"), "-alpine3.20"))
        );
        assert_eq!(Version::from_tag("1.26rc1"), Some((v("1.26rc1"), "")));
        assert_eq!(Version::from_tag("1.26"), Some((v("1.26"), "")));
        for bad in ["bookworm", "alpine3.20", "1.26.", "latest", "-1.26"] {
            assert_eq!(Version::from_tag(bad), None, "{bad}");
        }
    }

    #[test]
    fn orders_as_go_does() {
        let ordered = [
            "1",
            "1.9",
            "1.10",
            "1.26",
            "1.26beta1",
            "1.26rc1",
            "1.26rc10",
            "1.26.0",
            "1.26.6",
            "1.27",
        ];
        for pair in ordered.windows(2) {
            assert!(v(pair[0]) < v(pair[1]), "{} < {}", pair[0], pair[1]);
        }
    }

    #[test]
    fn a_tag_without_a_patch_level_is_the_newest_patch() {
        assert!(v("1.23").satisfies(&v("1.23.10")));
        assert!(v("1.26").satisfies(&v("1.25.0")));
        assert!(v("1.26").satisfies(&v("1.26")));
        assert!(v("1").satisfies(&v("1.26.6")));
        assert!(!v("1.25").satisfies(&v("1.26.0")));
        assert!(!v("1.26.5").satisfies(&v("1.26.6")));
        assert!(v("1.26.6").satisfies(&v("1.26.6")));
        assert!(v("1.10.0").satisfies(&v("1.9")));
        assert!(v("1.26rc1").satisfies(&v("1.26")));
        assert!(!v("1.26rc1").satisfies(&v("1.26.0")));
        assert!(!v("1.26rc1").satisfies(&v("1.26rc2")));
    }

    #[test]
    fn minors_and_their_releases() {
        assert!(v("1.26").is_minor());
        for not_minor in ["1", "1.26.0", "1.26rc1"] {
            assert!(!v(not_minor).is_minor(), "{not_minor}");
        }
        let go = v("1.26");
        for release in ["1.26", "1.26.0", "1.26.6"] {
            assert!(v(release).is_release_of(&go), "{release}");
        }
        for other in ["1.2", "1.260", "1.25", "1.26rc1", "1.27.0", "1"] {
            assert!(!v(other).is_release_of(&go), "{other}");
        }
    }

    #[test]
    fn reads_the_go_directive_of_a_go_mod() {
        let go_mod = b"module x\n\ngo 1.25.0 // min\n\ntoolchain go1.26\n";
        assert_eq!(Version::from_go_mod(go_mod), Ok(Some(v("1.25.0"))));
        assert_eq!(
            Version::from_go_mod(b"module x\n\ngo 1.23\n"),
            Ok(Some(v("1.23")))
        );
        assert_eq!(Version::from_go_mod(b"module x\n"), Ok(None));
        assert_eq!(Version::from_go_mod(b"// go 1.20\nmodule x\n"), Ok(None));
        assert_eq!(
            Version::from_go_mod(b"module x\n\ngo 1.x.y\n"),
            Err("1.x.y".to_owned())
        );
    }
}
