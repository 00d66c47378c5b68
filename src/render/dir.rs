//! The vendored files of a package at one version: each file `[[vendor]]`
//! as it is, each directory `[[vendor]]` as the files it holds.
//!
//! 1. A directory's files come from a listing of upstream paths: the lock's
//!    `[[file]]` entries for what is vendored now (`render`, `check`,
//!    `patch refresh`), upstream's listing at a release for what `update`
//!    moves to. Each path of the directory's upstream under its `from` that
//!    its globs select becomes a file `Vendor` (`from` + rel → `to` + rel).
//! 2. A vendor patch section that creates a file (`--- /dev/null`) inside a
//!    vendored directory (a patch of the directory's upstream) adds that
//!    file, `created`, when upstream does not have it: its pristine copy is
//!    empty.
//!
//! A file a patch deletes (`+++ /dev/null`) stays in the list: its stack
//! [`deletes`](super::Stack::deletes) it, so the output is not written.

use crate::config::lock::LOCK_PATH;
use crate::config::{Config, ConfigError, Vendor};
use crate::error::Result;

use super::Patches;

/// The file `Vendor`s of `config` given `listing` (upstream paths, each with
/// the name of its upstream: `None` for the unnamed `[upstream]`) and the
/// vendor patches, in vendor.toml order, a directory's files sorted.
pub fn files<'l>(
    config: &Config,
    listing: impl IntoIterator<Item = (Option<&'l str>, &'l str)>,
    patches: &Patches,
) -> Result<Vec<Vendor>> {
    let mut listing: Vec<(Option<&str>, &str)> = listing.into_iter().collect();
    listing.sort_unstable();
    listing.dedup();
    let mut out = Vec::new();
    for v in &config.vendor {
        if !v.is_dir() {
            out.push(v.clone());
            continue;
        }
        let start = out.len();
        let upstream = v.upstream.as_deref();
        for (_, path) in listing.iter().filter(|(u, _)| *u == upstream) {
            if let Some(rel) = v.selects_from(path) {
                out.push(v.file(rel, false));
            }
        }
        for p in patches
            .loaded()
            .iter()
            .filter(|p| p.upstream.as_deref() == upstream)
        {
            for fp in p.set.files.iter().filter(|fp| fp.is_new()) {
                let Some(target) = fp.target_path(p.strip) else {
                    continue;
                };
                let Some(rel) = v.selects_to(&target).or_else(|| v.selects_from(&target)) else {
                    continue;
                };
                let file = v.file(rel, true);
                if !out[start..].iter().any(|f| f.to == file.to) {
                    out.push(file);
                }
            }
        }
        out[start..].sort_by(|a, b| a.to.cmp(&b.to));
        if let Some(f) = out[start..].iter().find(|f| f.pristine() == LOCK_PATH) {
            return Err(ConfigError::at(
                config.root.join("vendor.toml"),
                Some(v.line),
                format!(
                    "the vendored directory holds `{}`, whose pristine copy would be the lock ({LOCK_PATH})",
                    f.from
                ),
            )
            .hint("leave it out with `exclude = [\"lock.toml\"]`, or vendor a directory below the root")
            .into());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn config(vendor: &str) -> Config {
        let text = format!("[upstream]\ngithub = \"o/r\"\nversion = \"v1\"\n{vendor}");
        Config::parse(Path::new("."), Path::new("vendor.toml"), &text).unwrap()
    }

    fn tos(files: &[Vendor]) -> Vec<(String, String, bool)> {
        files
            .iter()
            .map(|f| (f.from.clone(), f.to.clone(), f.created))
            .collect()
    }

    #[test]
    fn a_directory_is_its_selected_files_and_what_patches_create() {
        let c = config(
            "[[vendor]]\nfrom = \"deploy/a.yml\"\nto = \"t/a.yml\"\n\
             [[vendor]]\nfrom = \"charts/x/\"\nto = \"c/\"\nexclude = [\"tests/**\"]\n",
        );
        let p = Patches::parsed(&[(
            "new",
            "--- /dev/null\n+++ b/c/templates/new.yaml\n@@ -0,0 +1 @@\n+n\n\
             --- a/c/values.yaml\n+++ b/c/values.yaml\n@@ -1 +1 @@\n-a\n+b\n",
        )]);
        let listing = [
            "charts/x/values.yaml",
            "charts/x/templates/a.yaml",
            "charts/x/tests/t.yaml",
            "charts/y/values.yaml",
            "README.md",
        ];
        let files = files(&c, listing.map(|l| (None, l)), &p).unwrap();
        assert_eq!(
            tos(&files),
            [
                ("deploy/a.yml".into(), "t/a.yml".into(), false),
                (
                    "charts/x/templates/a.yaml".into(),
                    "c/templates/a.yaml".into(),
                    false
                ),
                (
                    "charts/x/templates/new.yaml".into(),
                    "c/templates/new.yaml".into(),
                    true
                ),
                ("charts/x/values.yaml".into(), "c/values.yaml".into(), false),
            ]
        );
        assert!(files.iter().all(|f| !f.is_dir() && f.line > 0));
    }

    #[test]
    fn the_repository_root_may_not_hold_the_lock() {
        let c = config("[[vendor]]\nfrom = \"./\"\nto = \"src/\"\n");
        let p = Patches::parsed(&[]);
        let files = files(&c, [(None, "go.mod"), (None, "pkg/a.go")], &p).unwrap();
        assert_eq!(files[0].from, "go.mod");
        assert_eq!(files[1].to, "src/pkg/a.go");
        let e = super::files(&c, [(None, "lock.toml")], &p).unwrap_err();
        assert!(e.to_string().contains("would be the lock"), "{e}");
    }
}
