//! `[[vendor]] asset = "…"`: a file published beside a GitHub release
//! (kubevirt's operator manifests, cluster-api providers' components)
//! rather than one in the repository.
//!
//! An asset entry is a file `Vendor` whose `from` is the asset's name as
//! vendor.toml writes it (`{version}` kept): the lock's `[[file]]` and the
//! pristine copy `upstream/<name>` are keyed by it, so they stay put when
//! the version moves. Its upstream must be a `github =` one, and what it
//! names must not also be a repository path another `[[vendor]]` of that
//! upstream takes: the upstream's source serves the name as the asset.

use std::path::Path;

use toml::Spanned;

use super::bounds::Resolved;
use super::context::Ctx;
use super::raw::RawVendor;
use super::{ConfigError, Upstream, UpstreamSource, Vendor};

/// A release asset a `[[vendor]]` takes, and the asset that lists its
/// sha256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asset {
    /// The asset's name as vendor.toml writes it; `{version}` is the tag.
    pub name: String,
    /// The name of a sha256sum-format asset of the same release listing the
    /// asset's sha256 (`<hex>  <name>` lines); `{version}` is the tag.
    pub checksums: Option<String>,
}

impl Asset {
    /// The asset's name at release `tag`.
    pub fn name_at(&self, tag: &str) -> String {
        self.name.replace("{version}", tag)
    }

    /// The checksums asset's name at release `tag`, if there is one.
    pub fn checksums_at(&self, tag: &str) -> Option<String> {
        self.checksums.as_ref().map(|c| c.replace("{version}", tag))
    }
}

/// One `[[vendor]]` with `asset`: a file entry whose `from` is the asset's
/// name, on the `github =` upstream `upstream` names.
pub(super) fn vendor_entry(
    cx: &Ctx<'_>,
    package: &Path,
    upstream: Option<String>,
    upstreams: &[Upstream],
    v: &Spanned<RawVendor>,
    asset: &Spanned<String>,
) -> Result<(Vendor, Resolved), ConfigError> {
    let r = v.get_ref();
    if let Some(from) = &r.from {
        return Err(cx
            .err(from, "a [[vendor]] takes either `from` (a repository path) or `asset` (a release asset), not both")
            .hint("keep `asset` to vendor the release asset, or `from` for a file of the repository"));
    }
    if let Some(globs) = r.include.as_ref().or(r.exclude.as_ref()) {
        return Err(cx
            .err(globs, "`include` and `exclude` select files of a directory, but a release asset is one file")
            .hint("remove them; a vendor patch can change the asset's rendered copy"));
    }
    let up = upstreams
        .iter()
        .find(|u| u.name == upstream)
        .expect("belongs_to named an upstream of this list");
    if !matches!(up.source, UpstreamSource::GitHub { .. }) {
        return Err(cx
            .err(asset, format!("`asset` = \"{}\" is a GitHub release asset, but its upstream is not `github =`", asset.get_ref()))
            .hint("vendor release assets from a `github = \"owner/name\"` upstream"));
    }
    plain_name(cx, "asset", asset)?;
    if let Some(checksums) = &r.checksums {
        plain_name(cx, "checksums", checksums)?;
    }
    let name = asset.get_ref().clone();
    let to_text = r.to.get_ref();
    let (to, resolved) = cx.path_of("to", &r.to, true)?;
    if to_text.ends_with('/') || package.join(&to).is_dir() {
        return Err(cx
            .err(&r.to, format!("`to` = \"{to_text}\" is a directory, but `asset` = \"{name}\" is one file: its rendered copy needs a file name"))
            .hint(format!("name the file, e.g. `to = \"{}/{}\"`", to.trim_end_matches('/'), name.replace("{version}", "x"))));
    }
    let entry = Vendor {
        upstream,
        from: name.clone(),
        to,
        line: cx.line(v),
        dir: None,
        created: false,
        asset: Some(Asset {
            name,
            checksums: r.checksums.as_ref().map(|c| c.get_ref().clone()),
        }),
    };
    Ok((entry, resolved))
}

/// An asset name is one path component: no `/`, no `..`, no control
/// character, not empty (it is also the pristine copy's file name).
fn plain_name(cx: &Ctx<'_>, key: &str, name: &Spanned<String>) -> Result<(), ConfigError> {
    let text = name.get_ref();
    let plain = !text.is_empty()
        && !matches!(text.as_str(), "." | "..")
        && !text.contains(['/', '\\'])
        && !text.chars().any(char::is_control);
    if plain {
        return Ok(());
    }
    Err(cx
        .err(name, format!("`{key}` = \"{}\" is not the name of a release asset", text.escape_debug()))
        .hint("write the asset's file name as the release lists it, e.g. `cdi-operator.yaml`; `{version}` stands for the tag"))
}

/// An asset whose name is also a repository path another `[[vendor]]` of
/// its upstream takes (the same file, or one a directory selects) would be
/// served as the asset there: refused, naming both lines.
pub(super) fn apart_from_files(cx: &Ctx<'_>, vendor: &[Vendor]) -> Result<(), ConfigError> {
    for a in vendor.iter().filter(|v| v.asset.is_some()) {
        let clash = vendor.iter().find(|v| {
            v.asset.is_none()
                && v.upstream == a.upstream
                && (v.from == a.from || v.selects_from(&a.from).is_some())
        });
        if let Some(v) = clash {
            return Err(ConfigError::at(
                cx.path,
                Some(a.line),
                format!(
                    "`asset` = \"{}\" is also a repository path the [[vendor]] on line {} takes",
                    a.from, v.line
                ),
            )
            .hint("exclude that path from the directory, or vendor the asset from its own [[upstream]] of the same repository"));
        }
    }
    Ok(())
}

/// The assets `vendor`'s entries take from `up`, for its source to serve.
pub(super) fn of_upstream(up: &Upstream, vendor: &[Vendor]) -> Vec<Asset> {
    vendor
        .iter()
        .filter(|v| v.upstream == up.name)
        .filter_map(|v| v.asset.clone())
        .collect()
}
