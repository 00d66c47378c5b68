//! `RawConfig`: vendor.toml exactly as written, with the span of every value
//! that validation may have to point at.
//!
//! Unknown keys are rejected here by serde (`deny_unknown_fields`); whether
//! values make sense together is decided in `validate`.

use serde::Deserialize;
use toml::Spanned;

use super::one_or_many::OneOrMany;

/// The whole vendor.toml.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    /// `[upstream]`, or `[[upstream]]` for several.
    pub upstream: Spanned<OneOrMany<RawUpstream>>,
    #[serde(default)]
    pub vendor: Vec<Spanned<RawVendor>>,
    #[serde(default)]
    pub patch: Vec<Spanned<RawPatch>>,
    #[serde(default)]
    pub rewrite: Vec<Spanned<RawRewrite>>,
    /// `[image]`, or `[[image]]` for several.
    pub image: Option<Spanned<OneOrMany<RawImage>>>,
    #[serde(default)]
    pub pin: Vec<Spanned<RawPin>>,
    #[serde(default)]
    pub marker: Vec<Spanned<RawMarker>>,
    #[serde(default)]
    pub contract: Vec<Spanned<RawContract>>,
    /// `[checks]`: check id → `error`, `warning`, `info` or `allow`.
    #[serde(default)]
    pub checks: std::collections::BTreeMap<Spanned<String>, Spanned<String>>,
}

/// `[upstream]` or one `[[upstream]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawUpstream {
    pub github: Option<Spanned<String>>,
    pub git: Option<Spanned<String>>,
    pub helm: Option<Spanned<String>>,
    pub chart: Option<Spanned<String>>,
    pub version: Option<Spanned<String>>,
    pub track: Option<Spanned<String>>,
    #[serde(default)]
    pub allow_prerelease: bool,
    pub name: Option<Spanned<String>>,
    #[serde(rename = "ref")]
    pub branch: Option<Spanned<String>>,
    pub tag_pattern: Option<Spanned<String>>,
}

/// `[[vendor]]`: a file, or a directory when `from` and `to` end with `/`;
/// or a GitHub release asset (`asset`, with its `checksums` asset).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawVendor {
    pub from: Option<Spanned<String>>,
    pub asset: Option<Spanned<String>>,
    pub checksums: Option<Spanned<String>>,
    pub to: Spanned<String>,
    pub include: Option<Spanned<Vec<Spanned<String>>>>,
    pub exclude: Option<Spanned<Vec<Spanned<String>>>>,
    pub upstream: Option<Spanned<String>>,
}

/// `[[patch]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawPatch {
    pub name: Spanned<String>,
    pub file: Spanned<String>,
    pub applies_to: Spanned<String>,
    pub strip: Option<Spanned<usize>>,
    pub upstream: Option<Spanned<String>>,
}

/// `[[rewrite]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawRewrite {
    pub file: Spanned<String>,
    pub lines_containing: Option<Spanned<String>>,
    pub replace: Option<Spanned<String>>,
    pub dockerfile_arg: Option<Spanned<String>>,
    pub with: Spanned<String>,
    pub upstream: Option<Spanned<String>>,
}

/// `[image]` or one `[[image]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawImage {
    pub repository: Spanned<String>,
    pub tag: Spanned<String>,
    pub context: Spanned<String>,
    pub dockerfile: Option<Spanned<String>>,
    pub platforms: Spanned<Vec<String>>,
    pub go: Option<Spanned<String>>,
    pub builder: Option<Spanned<String>>,
    #[serde(default)]
    pub provenance: bool,
    pub name: Option<Spanned<String>>,
}

/// `[[pin]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPin {
    pub file: Spanned<String>,
    pub repository: Option<Spanned<String>>,
    pub replaces: Option<Vec<Spanned<String>>>,
    pub image: Option<Spanned<String>>,
    pub yaml: Option<Spanned<RawYaml>>,
}

/// `yaml = "a.b.c"` (one key, `<tag>@sha256:<digest>`) or
/// `yaml = { repository, tag, digest }` (split keys).
#[derive(Debug)]
pub enum RawYaml {
    /// One key holding the tag and the digest.
    Joined(String),
    /// Split keys.
    Split(RawYamlKeys),
}

/// `yaml = { repository, tag, digest }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawYamlKeys {
    pub repository: String,
    pub tag: String,
    pub digest: Option<String>,
}

impl<'de> Deserialize<'de> for RawYaml {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RawYaml;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a dotted key, or a table { repository, tag, digest }")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawYaml, E> {
                Ok(RawYaml::Joined(v.to_owned()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<RawYaml, A::Error> {
                RawYamlKeys::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(RawYaml::Split)
            }
        }
        d.deserialize_any(V)
    }
}

/// `[[marker]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMarker {
    pub name: Spanned<String>,
    pub file: Spanned<String>,
    pub key: Spanned<String>,
    pub expect: Spanned<RawExpect>,
    pub pin: Option<Spanned<String>>,
    pub resolver: Option<Spanned<String>>,
}

/// `expect = { file, yaml, strip-digest }` or `expect = { value }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawExpect {
    pub file: Option<Spanned<String>>,
    pub yaml: Option<Spanned<String>>,
    #[serde(default)]
    pub strip_digest: bool,
    pub value: Option<Spanned<String>>,
}

/// `[[contract]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawContract {
    pub name: Spanned<String>,
    pub file: Option<Spanned<String>>,
    pub helm: Option<Spanned<RawHelm>>,
    pub render_fails: Option<Spanned<bool>>,
    pub select: Option<Spanned<RawSelect>>,
    pub field: Option<Vec<String>>,
    pub json: Option<Vec<String>>,
    pub equals: Option<String>,
    pub every_container: Option<Vec<String>>,
}

/// `helm = { chart, values }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHelm {
    pub chart: Spanned<String>,
    #[serde(default)]
    pub values: Vec<Spanned<String>>,
}

/// `select = { kind, name }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSelect {
    pub kind: String,
    pub name: Option<String>,
}
