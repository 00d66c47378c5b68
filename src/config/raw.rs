//! `RawConfig`: vendor.toml exactly as written, with the span of every value
//! that validation may have to point at.
//!
//! Unknown keys are rejected here by serde (`deny_unknown_fields`); whether
//! values make sense together is decided in `validate`.

use serde::Deserialize;
use toml::Spanned;

/// The whole vendor.toml.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    pub upstream: Spanned<RawUpstream>,
    #[serde(default)]
    pub vendor: Vec<Spanned<RawVendor>>,
    #[serde(default)]
    pub patch: Vec<Spanned<RawPatch>>,
    #[serde(default)]
    pub rewrite: Vec<Spanned<RawRewrite>>,
    pub image: Option<Spanned<RawImage>>,
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

/// `[upstream]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawUpstream {
    pub github: Option<Spanned<String>>,
    pub git: Option<Spanned<String>>,
    pub version: Spanned<String>,
    pub track: Option<Spanned<String>>,
    #[serde(default)]
    pub allow_prerelease: bool,
}

/// `[[vendor]]`: a file, or a directory when `from` and `to` end with `/`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawVendor {
    pub from: Spanned<String>,
    pub to: Spanned<String>,
    pub include: Option<Spanned<Vec<Spanned<String>>>>,
    pub exclude: Option<Spanned<Vec<Spanned<String>>>>,
}

/// `[[patch]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawPatch {
    pub name: Spanned<String>,
    pub file: Spanned<String>,
    pub applies_to: Spanned<String>,
    pub strip: Option<Spanned<usize>>,
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
}

/// `[image]`.
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
}

/// `[[pin]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPin {
    pub file: Spanned<String>,
    pub repository: Spanned<String>,
    pub replaces: Option<Vec<Spanned<String>>>,
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
    pub file: Spanned<String>,
    pub select: Spanned<RawSelect>,
    pub field: Option<Vec<String>>,
    pub json: Option<Vec<String>>,
    pub equals: Option<String>,
    pub every_container: Option<Vec<String>>,
}

/// `select = { kind, name }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSelect {
    pub kind: String,
    pub name: Option<String>,
}
