//! What validating one vendor.toml needs at every step: its path and text,
//! to turn a span into a line and an error at it, and the package's
//! bounds, to keep every path inside the package. `validate.rs` and
//! `named.rs` both validate with it, so it is neither's.

use std::path::{Component, Path};

use toml::Spanned;

use super::bounds::{self, Bounds, Resolved};
use super::{ConfigError, line_of};

/// Spans → lines for one vendor.toml.
pub(super) struct Ctx<'a> {
    pub path: &'a Path,
    text: &'a str,
    /// The package's bounds, which every path must resolve inside.
    pub bounds: Bounds,
}

impl<'a> Ctx<'a> {
    /// The context of the vendor.toml at `path` holding `text`, whose paths
    /// resolve inside `bounds`.
    pub fn new(path: &'a Path, text: &'a str, bounds: Bounds) -> Ctx<'a> {
        Ctx { path, text, bounds }
    }

    pub fn line<T>(&self, s: &Spanned<T>) -> usize {
        line_of(self.text, s.span().start)
    }

    pub fn err<T>(&self, at: &Spanned<T>, message: impl Into<String>) -> ConfigError {
        ConfigError::at(self.path, Some(self.line(at)), message)
    }

    /// The line of a span.
    pub fn line_at(&self, span: &std::ops::Range<usize>) -> usize {
        line_of(self.text, span.start)
    }

    /// An error at the line of a span.
    pub fn err_at(&self, span: &std::ops::Range<usize>, message: impl Into<String>) -> ConfigError {
        ConfigError::at(self.path, Some(self.line_at(span)), message)
    }

    /// A package-relative path that stays inside the package.
    pub fn inside(&self, key: &str, value: &Spanned<String>) -> Result<String, ConfigError> {
        Ok(self.path_of(key, value, false)?.0)
    }

    /// A package-relative path revendor writes: inside the package and not
    /// one of its own files ([`bounds::own`]).
    pub fn written(&self, key: &str, value: &Spanned<String>) -> Result<String, ConfigError> {
        Ok(self.path_of(key, value, true)?.0)
    }

    /// The path as written (without a leading `./`) and as the filesystem
    /// will see it ([`Bounds::resolve`]).
    pub fn path_of(
        &self,
        key: &str,
        value: &Spanned<String>,
        written: bool,
    ) -> Result<(String, Resolved), ConfigError> {
        let v = value.get_ref();
        if v.is_empty() {
            return Err(self.err(value, format!("`{key}` is empty")));
        }
        if !stays_inside(Path::new(v)) {
            return Err(self
                .err(
                    value,
                    format!("`{key}` = \"{v}\" leaves the package directory"),
                )
                .hint("use a path relative to the package, without `..` above it"));
        }
        let resolved =
            self.bounds.resolve(v).map_err(|e| {
                self.err(
                value,
                format!("`{key}` = \"{v}\" leaves the package directory: {}", e.describe()),
            )
            .hint("point it at a real directory inside the package, or replace the symlink by one")
            })?;
        if let Some(what) = bounds::own(&resolved, written) {
            return Err(self
                .err(
                    value,
                    format!(
                        "`{key}` = \"{v}\" is {what}, or inside it, which revendor keeps for itself"
                    ),
                )
                .hint("use a path outside vendor.toml, upstream/, .revendor-txn/ and .git"));
        }
        Ok((v.trim_start_matches("./").to_string(), resolved))
    }
}

/// Whether a relative path stays under its base (no root, no escaping `..`).
pub(crate) fn stays_inside(path: &Path) -> bool {
    let mut depth: usize = 0;
    for c in path.components() {
        match c {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir => {
                if depth == 0 {
                    return false;
                }
                depth -= 1;
            }
            Component::RootDir | Component::Prefix(_) => return false,
        }
    }
    true
}
