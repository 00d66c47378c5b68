//! Applying a whole [`PatchSet`] to a source tree held in memory as path -> bytes.
//!
//! 1. Each file patch names its file with `-pN` stripping ([`FilePatch::target_path`]); it reads
//!    that file, or its old name for a rename or copy, and writes the target. A deletion
//!    removes the target; a rename removes the old name.
//! 2. File patches apply in order to the tree as the earlier ones left it, so a series that
//!    touches one file twice works.
//! 3. [`apply_tree`] is strict and all or nothing; [`rebase_tree`] carries each file patch from
//!    the locked upstream's tree to a new one like [`rebase`](super::rebase), reporting per-file
//!    outcomes.
//!
//! This is how a Go source patch is checked against an upstream source tree without a disk.

use std::collections::BTreeMap;

use super::Error;
use super::apply::apply;
use super::conflict::Labels;
use super::merge::{Outcome, rebase_applied};
use super::model::{FilePatch, PatchSet};

/// A source tree: relative path -> file bytes.
pub type Tree = BTreeMap<String, Vec<u8>>;

/// One file of a strict tree apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileApplied {
    /// The path written (or removed).
    pub path: String,
    /// Whether the file was deleted.
    pub deleted: bool,
    /// Per hunk, the offset it landed at.
    pub offsets: Vec<isize>,
}

/// A patched tree and what happened to each file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Patched {
    /// The tree after every file patch.
    pub tree: Tree,
    /// One entry per file patch, in patch order.
    pub files: Vec<FileApplied>,
}

/// One file of a tree rebase.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileRebased {
    /// The path written (or removed).
    pub path: String,
    /// Whether the file is gone from the result (a deletion that did not conflict).
    pub deleted: bool,
    /// How the file patch landed.
    pub outcome: Outcome,
}

/// A rebased tree and what happened to each file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rebased {
    /// The new upstream tree with every outcome's content written in (conflicts as marked
    /// files).
    pub tree: Tree,
    /// One entry per file patch, in patch order.
    pub files: Vec<FileRebased>,
}

impl Rebased {
    /// Whether any file conflicts.
    pub fn has_conflicts(&self) -> bool {
        self.files
            .iter()
            .any(|f| matches!(f.outcome, Outcome::Conflict { .. }))
    }
}

/// Applies every file patch of `set` strictly to `tree`; the first failure is the error and
/// nothing is returned half-done.
pub fn apply_tree(set: &PatchSet, strip: usize, tree: &Tree) -> Result<Patched, Error> {
    let mut tree = tree.clone();
    let mut files = Vec::with_capacity(set.files.len());
    for file in &set.files {
        let names = Names::of(file, strip)?;
        let base = names.read(&tree).ok_or_else(|| Error::Missing {
            path: names.target.clone(),
        })?;
        let applied = apply(file, &base).map_err(|source| Error::Apply {
            path: names.target.clone(),
            source,
        })?;
        names.write(&mut tree, file.is_delete(), applied.content);
        files.push(FileApplied {
            path: names.target,
            deleted: file.is_delete(),
            offsets: applied.offsets,
        });
    }
    Ok(Patched { tree, files })
}

/// Carries `set`, made against the `base` tree, onto the `theirs` tree, file by file like
/// [`rebase`](super::rebase). A file missing from `theirs` counts as empty (upstream deleted it).
/// Errors when a file is missing from `base` or a file patch does not apply strictly to it.
pub fn rebase_tree(
    set: &PatchSet,
    strip: usize,
    base: &Tree,
    theirs: &Tree,
    labels: &Labels<'_>,
) -> Result<Rebased, Error> {
    let mut base = base.clone();
    let mut theirs = theirs.clone();
    let mut files = Vec::with_capacity(set.files.len());
    for file in &set.files {
        let names = Names::of(file, strip)?;
        let old = names.read(&base).ok_or_else(|| Error::Missing {
            path: names.target.clone(),
        })?;
        let new = names.read(&theirs).unwrap_or_default();
        let ours = apply(file, &old).map_err(|source| Error::BaseMismatch {
            file: file.name(),
            source,
        })?;
        let outcome = rebase_applied(&old, &ours.content, file, &new, labels);
        let deleted = file.is_delete() && !matches!(outcome, Outcome::Conflict { .. });
        names.write(&mut base, file.is_delete(), ours.content);
        names.write(&mut theirs, deleted, outcome.content().to_vec());
        files.push(FileRebased {
            path: names.target,
            deleted,
            outcome,
        });
    }
    Ok(Rebased {
        tree: theirs,
        files,
    })
}

/// Where a file patch reads and writes in a tree.
struct Names {
    target: String,
    source: Option<String>,
    rename: bool,
    new: bool,
}

impl Names {
    fn of(file: &FilePatch, strip: usize) -> Result<Self, Error> {
        let no_path = || Error::NoPath {
            file: file.name(),
            strip,
        };
        let target = file.target_path(strip).ok_or_else(no_path)?;
        let source = match file.is_new() {
            true => None,
            false => Some(file.source_path(strip).ok_or_else(no_path)?),
        };
        Ok(Names {
            target,
            source,
            rename: file.is_rename(),
            new: file.is_new(),
        })
    }

    /// The bytes the patch applies to: the target, else the old name; empty for a new file
    /// that is absent.
    fn read(&self, tree: &Tree) -> Option<Vec<u8>> {
        let found = tree
            .get(&self.target)
            .or_else(|| self.source.as_ref().and_then(|s| tree.get(s)));
        match found {
            Some(bytes) => Some(bytes.clone()),
            None => self.new.then(Vec::new),
        }
    }

    fn write(&self, tree: &mut Tree, delete: bool, content: Vec<u8>) {
        if let Some(source) = self
            .source
            .as_ref()
            .filter(|s| self.rename && **s != self.target)
        {
            tree.remove(source);
        }
        if delete {
            tree.remove(&self.target);
        } else {
            tree.insert(self.target.clone(), content);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse::parse;
    use super::*;

    const LABELS: Labels<'static> = Labels {
        ours: "patched v1",
        base: "v1",
        theirs: "v2",
    };

    const SERIES: &str = "\
diff --git a/src/main.go b/src/main.go
index 1111111..2222222 100644
--- a/src/main.go
+++ b/src/main.go
@@ -1,3 +1,3 @@
 package main
-var x = 1
+var x = 2
 func main() {}
diff --git a/src/new.go b/src/new.go
new file mode 100644
--- /dev/null
+++ b/src/new.go
@@ -0,0 +1 @@
+package main
diff --git a/old.txt b/old.txt
deleted file mode 100644
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/a.txt b/b.txt
similarity index 100%
rename from a.txt
rename to b.txt
";

    fn tree(entries: &[(&str, &str)]) -> Tree {
        entries
            .iter()
            .map(|(p, c)| (p.to_string(), c.as_bytes().to_vec()))
            .collect()
    }

    fn upstream() -> Tree {
        tree(&[
            ("src/main.go", "package main\nvar x = 1\nfunc main() {}\n"),
            ("old.txt", "bye\n"),
            ("a.txt", "moved\n"),
        ])
    }

    #[test]
    fn applies_edits_creations_deletions_and_renames() {
        let set = parse(SERIES.as_bytes()).unwrap();
        let patched = apply_tree(&set, 1, &upstream()).unwrap();
        assert_eq!(
            patched.tree,
            tree(&[
                ("src/main.go", "package main\nvar x = 2\nfunc main() {}\n"),
                ("src/new.go", "package main\n"),
                ("b.txt", "moved\n"),
            ])
        );
        let paths: Vec<_> = patched
            .files
            .iter()
            .map(|f| (f.path.as_str(), f.deleted))
            .collect();
        assert_eq!(
            paths,
            [
                ("src/main.go", false),
                ("src/new.go", false),
                ("old.txt", true),
                ("b.txt", false)
            ]
        );
    }

    #[test]
    fn strict_tree_errors_name_the_path() {
        let set = parse(SERIES.as_bytes()).unwrap();
        let mut changed = upstream();
        changed.insert(
            "src/main.go".into(),
            b"package main\nvar x = 3\nfunc main() {}\n".to_vec(),
        );
        let err = apply_tree(&set, 1, &changed).unwrap_err();
        assert!(
            matches!(err, Error::Apply { ref path, .. } if path == "src/main.go"),
            "{err}"
        );
        changed.remove("src/main.go");
        assert!(matches!(
            apply_tree(&set, 1, &changed),
            Err(Error::Missing { .. })
        ));
        assert!(matches!(
            apply_tree(&set, 3, &upstream()),
            Err(Error::NoPath { strip: 3, .. })
        ));
    }

    #[test]
    fn rebase_tree_reports_each_file() {
        let set = parse(SERIES.as_bytes()).unwrap();
        let mut theirs = upstream();
        theirs.insert(
            "src/main.go".into(),
            b"// header\npackage main\nvar x = 1\nfunc main() {}\n".to_vec(),
        );
        theirs.remove("old.txt");
        let rebased = rebase_tree(&set, 1, &upstream(), &theirs, &LABELS).unwrap();
        let kinds: Vec<_> = rebased.files.iter().map(|f| f.outcome.kind()).collect();
        assert_eq!(kinds, ["offset", "exact", "already-upstream", "exact"]);
        assert!(!rebased.has_conflicts());
        assert_eq!(
            rebased.tree.keys().collect::<Vec<_>>(),
            ["b.txt", "src/main.go", "src/new.go"]
        );
        theirs.insert(
            "src/main.go".into(),
            b"package main\nvar x = 9\nfunc main() {}\n".to_vec(),
        );
        let conflicted = rebase_tree(&set, 1, &upstream(), &theirs, &LABELS).unwrap();
        assert!(conflicted.has_conflicts());
        let err = rebase_tree(&set, 1, &theirs, &theirs, &LABELS).unwrap_err();
        assert!(matches!(err, Error::BaseMismatch { .. }), "{err}");
    }

    #[test]
    fn series_touching_one_file_twice_applies_in_order() {
        let series =
            "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-1\n+2\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-2\n+3\n";
        let set = parse(series.as_bytes()).unwrap();
        let base = tree(&[("f", "1\n")]);
        assert_eq!(
            apply_tree(&set, 1, &base).unwrap().tree,
            tree(&[("f", "3\n")])
        );
        let theirs = tree(&[("f", "1\n")]);
        let rebased = rebase_tree(&set, 1, &base, &theirs, &LABELS).unwrap();
        assert_eq!(rebased.tree, tree(&[("f", "3\n")]));
    }
}
