//! `Platform`: the `os/arch[/variant]` an image manifest runs on, as in `--platform linux/arm64`.
//!
//! Indexes spell the same platform in more than one way: buildx writes `arm64` with variant `v8`,
//! users write `linux/arm64`. [`Platform::matches`] compares after dropping the default variant
//! of an architecture, the normalization containerd applies when it picks a child.

use std::fmt;
use std::str::FromStr;

use serde::Deserialize;

use super::Error;

/// An operating system, CPU architecture and optional variant. `Display` and [`Platform::parse`]
/// round-trip (`linux/arm/v7`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
pub struct Platform {
    /// `linux`, `windows`, or `unknown` for attestation entries.
    pub os: String,
    /// `amd64`, `arm64`, `arm`, …
    pub architecture: String,
    /// `v7`, `v8`, … when the architecture has variants.
    #[serde(default)]
    pub variant: Option<String>,
}

impl Platform {
    /// Parses `os/arch` or `os/arch/variant`; every part must be non-empty and free of spaces.
    pub fn parse(input: &str) -> Result<Platform, Error> {
        let parts: Vec<&str> = input.split('/').collect();
        let well_formed = (2..=3).contains(&parts.len())
            && parts
                .iter()
                .all(|p| !p.is_empty() && !p.contains(char::is_whitespace));
        if !well_formed {
            return Err(Error::Platform {
                input: input.to_owned(),
            });
        }
        Ok(Platform {
            os: parts[0].to_owned(),
            architecture: parts[1].to_owned(),
            variant: parts.get(2).map(|v| (*v).to_owned()),
        })
    }

    /// Whether this is the `unknown/unknown` placeholder buildx gives attestation manifests; such
    /// entries are not runnable images and are skipped when comparing platform sets.
    pub fn is_unknown(&self) -> bool {
        self.os == "unknown" && self.architecture == "unknown"
    }

    /// Same os and architecture, and the same variant once each architecture's default variant
    /// (`amd64/v1`, `arm64/v8`, `arm/v7`) is treated as no variant.
    pub fn matches(&self, other: &Platform) -> bool {
        self.os == other.os
            && self.architecture == other.architecture
            && self.effective_variant() == other.effective_variant()
    }

    fn effective_variant(&self) -> Option<&str> {
        let default = match self.architecture.as_str() {
            "amd64" => Some("v1"),
            "arm64" => Some("v8"),
            "arm" => Some("v7"),
            _ => None,
        };
        match self.variant.as_deref() {
            None => None,
            Some(v) if Some(v) == default => None,
            Some(v) => Some(v),
        }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.os, self.architecture)?;
        if let Some(variant) = &self.variant {
            write!(f, "/{variant}")?;
        }
        Ok(())
    }
}

impl FromStr for Platform {
    type Err = Error;

    fn from_str(s: &str) -> Result<Platform, Error> {
        Platform::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Platform {
        Platform::parse(s).unwrap()
    }

    #[test]
    fn parse_and_display_round_trip() {
        for s in [
            "linux/amd64",
            "linux/arm64",
            "linux/arm/v7",
            "windows/amd64",
        ] {
            assert_eq!(p(s).to_string(), s);
        }
        assert_eq!(p("linux/arm/v7").variant.as_deref(), Some("v7"));
    }

    #[test]
    fn parse_rejects_other_shapes() {
        for bad in [
            "",
            "linux",
            "linux/",
            "/amd64",
            "linux/arm/v7/x",
            "linux/ amd64",
        ] {
            assert!(Platform::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn default_variants_match_no_variant() {
        assert!(p("linux/arm64").matches(&p("linux/arm64/v8")));
        assert!(p("linux/amd64/v1").matches(&p("linux/amd64")));
        assert!(p("linux/arm/v7").matches(&p("linux/arm")));
        assert!(!p("linux/arm/v6").matches(&p("linux/arm")));
        assert!(!p("linux/amd64").matches(&p("linux/arm64")));
        assert!(!p("linux/amd64/v3").matches(&p("linux/amd64")));
    }

    #[test]
    fn unknown_marks_attestations() {
        assert!(p("unknown/unknown").is_unknown());
        assert!(!p("linux/unknown").is_unknown());
    }

    #[test]
    fn deserializes_manifest_platform_objects() {
        let json = r#"{"architecture":"arm64","os":"linux","variant":"v8","os.version":"x"}"#;
        let platform: Platform = serde_json::from_str(json).unwrap();
        assert_eq!(platform, p("linux/arm64/v8"));
    }
}
