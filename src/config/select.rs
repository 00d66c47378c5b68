//! [`Select`]: which files of a vendored directory are revendor's, by the
//! `include` and `exclude` globs of its `[[vendor]]`.
//!
//! Globs are matched against the path relative to the directory's `from`
//! (`templates/tests/a.yaml`), as `globset` reads them with a literal `/`:
//! `*` and `?` stay inside one path component, `**` spans any number of
//! them. A file is selected when `include` is absent or one of its globs
//! matches, and no glob of `exclude` does.
//!
//! What a directory does not select is not revendor's: it is neither
//! fetched nor rendered, and a file at such a path in the rendered
//! directory is the user's own, not a stray (`render-drift`).

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// The `include` and `exclude` globs of a directory `[[vendor]]`, compiled.
#[derive(Debug, Clone)]
pub struct Select {
    include: Option<(Vec<String>, GlobSet)>,
    exclude: (Vec<String>, GlobSet),
}

/// A glob that does not compile, with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct BadGlob {
    /// Which of the globs (0-based).
    pub index: usize,
    /// What globset said.
    pub reason: String,
}

impl Select {
    /// Every file of the directory.
    pub fn all() -> Select {
        Select {
            include: None,
            exclude: (Vec::new(), GlobSet::empty()),
        }
    }

    /// `include` (when given) and `exclude` compiled; a bad glob of either
    /// is returned with which list it is in (`true` for `include`).
    pub(super) fn new(
        include: Option<&[String]>,
        exclude: &[String],
    ) -> Result<Select, (bool, BadGlob)> {
        let include = match include {
            Some(globs) => Some((globs.to_vec(), compile(globs).map_err(|e| (true, e))?)),
            None => None,
        };
        let exclude = (exclude.to_vec(), compile(exclude).map_err(|e| (false, e))?);
        Ok(Select { include, exclude })
    }

    /// Whether the file at `rel` (relative to the directory) is selected.
    pub fn selects(&self, rel: &str) -> bool {
        let included = self
            .include
            .as_ref()
            .is_none_or(|(_, set)| set.is_match(rel));
        included && !self.exclude.1.is_match(rel)
    }

    /// The `include` globs as written, when given.
    pub fn include(&self) -> Option<&[String]> {
        self.include.as_ref().map(|(globs, _)| globs.as_slice())
    }

    /// The `exclude` globs as written.
    pub fn exclude(&self) -> &[String] {
        &self.exclude.0
    }
}

/// `globs` compiled as one set, as this module reads them; `.revendor.toml`'s
/// `[all] exclude` reads its globs the same way.
pub(super) fn compile(globs: &[String]) -> Result<GlobSet, BadGlob> {
    let mut set = GlobSetBuilder::new();
    for (index, glob) in globs.iter().enumerate() {
        let glob = GlobBuilder::new(glob)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| BadGlob {
                index,
                reason: e.kind().to_string(),
            })?;
        set.add(glob);
    }
    set.build().map_err(|e| BadGlob {
        index: 0,
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn select(include: Option<&[&str]>, exclude: &[&str]) -> Select {
        let own = |g: &[&str]| g.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Select::new(include.map(own).as_deref(), &own(exclude)).unwrap()
    }

    #[test]
    fn star_stays_in_a_component_and_double_star_spans_them() {
        let s = select(None, &["templates/tests/**", "*.md"]);
        assert!(s.selects("templates/a.yaml"));
        assert!(!s.selects("templates/tests/a.yaml"));
        assert!(!s.selects("templates/tests/deep/a.yaml"));
        assert!(!s.selects("README.md"));
        assert!(s.selects("docs/README.md"), "`*` does not cross `/`");
        let s = select(Some(&["templates/*.yaml", "values.yaml"]), &[]);
        assert!(s.selects("values.yaml"));
        assert!(s.selects("templates/a.yaml"));
        assert!(!s.selects("templates/sub/a.yaml"));
        assert!(!s.selects("Chart.yaml"));
        let s = select(Some(&["?.yaml"]), &[]);
        assert!(s.selects("a.yaml") && !s.selects("ab.yaml"));
        assert!(Select::all().selects("any/thing"));
    }

    #[test]
    fn a_bad_glob_is_named_by_its_list_and_index() {
        let e = Select::new(Some(&["a".into(), "[".into()]), &[]).unwrap_err();
        assert!(e.0, "the bad glob is in `include`");
        assert_eq!(e.1.index, 1);
        assert!(e.1.reason.contains("unclosed"), "{}", e.1.reason);
    }
}
