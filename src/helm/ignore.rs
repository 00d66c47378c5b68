//! The files of a chart that Helm reads: every file under the chart
//! directory but those its `.helmignore` leaves out, which is what a render's
//! cache key must cover.
//!
//! Helm's rules: a blank line or a `#` line is nothing; a trailing `/`
//! matches directories only; a pattern with a `/` matches the path from the
//! chart directory (a leading `/` is dropped), one without matches the base
//! name; `*`, `?` and `[…]` never cross a `/`; an ignored directory is
//! skipped whole. A `!` pattern takes a path back out, but Helm's reading of
//! it depends on the order of the rules in surprising ways, so here a path
//! that any `!` pattern matches is never left out.
//!
//! The one promise is a superset: a file Helm reads is always listed, so a
//! cached render is never reused after a change Helm would see. A pattern
//! that does not compile leaves nothing out.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::{Error, Result};

/// The rules of one `.helmignore`, each kind in one [`GlobSet`]: a set
/// matches its literal patterns by lookup and compiles the rest as one
/// pattern, where a matcher per rule compiled one each (issue 23: a
/// `.helmignore` of 26 lines was 26 compilations per render).
#[derive(Debug, Default)]
pub(super) struct Rules {
    /// `!` rules: what they match is never left out.
    keep: Subjects,
    /// Rules that leave out files and directories.
    leave: Subjects,
    /// Rules with a trailing `/`: they leave out directories only.
    leave_dirs: Subjects,
}

/// The patterns of one kind, by what they are matched against.
#[derive(Debug, Default)]
struct Subjects {
    /// Patterns with a `/`: matched against the whole relative path.
    whole_path: GlobSet,
    /// Patterns without: matched against the base name.
    base_name: GlobSet,
}

impl Subjects {
    fn matches(&self, rel: &str) -> bool {
        let base = rel.rsplit('/').next().unwrap_or(rel);
        self.whole_path.is_match(rel) || self.base_name.is_match(base)
    }
}

/// [`Subjects`] being collected.
struct Builder {
    whole_path: GlobSetBuilder,
    base_name: GlobSetBuilder,
}

impl Builder {
    fn new() -> Builder {
        Builder {
            whole_path: GlobSetBuilder::new(),
            base_name: GlobSetBuilder::new(),
        }
    }

    fn add(&mut self, pattern: Pattern) {
        if pattern.whole_path {
            self.whole_path.add(pattern.glob);
        } else {
            self.base_name.add(pattern.glob);
        }
    }

    fn build(self) -> Option<Subjects> {
        Some(Subjects {
            whole_path: self.whole_path.build().ok()?,
            base_name: self.base_name.build().ok()?,
        })
    }
}

#[derive(Debug)]
struct Pattern {
    glob: Glob,
    /// Matched against the whole relative path, else the base name.
    whole_path: bool,
    /// Only directories match.
    dir_only: bool,
    /// A `!` rule: what it matches is never left out.
    keep: bool,
}

impl Rules {
    /// Parses a `.helmignore`'s text. Should a set of patterns not compile
    /// as a whole, nothing is left out, which keeps the superset promise.
    pub(super) fn parse(text: &str) -> Rules {
        let (mut keep, mut leave, mut leave_dirs) =
            (Builder::new(), Builder::new(), Builder::new());
        for p in text.lines().filter_map(pattern) {
            let builder = match (p.keep, p.dir_only) {
                (true, _) => &mut keep,
                (false, false) => &mut leave,
                (false, true) => &mut leave_dirs,
            };
            builder.add(p);
        }
        Rules::built(keep, leave, leave_dirs).unwrap_or_default()
    }

    fn built(keep: Builder, leave: Builder, leave_dirs: Builder) -> Option<Rules> {
        Some(Rules {
            keep: keep.build()?,
            leave: leave.build()?,
            leave_dirs: leave_dirs.build()?,
        })
    }

    /// Whether Helm leaves `rel` (`/`-separated, from the chart directory)
    /// out.
    pub(super) fn ignores(&self, rel: &str, is_dir: bool) -> bool {
        !self.keep.matches(rel)
            && (self.leave.matches(rel) || (is_dir && self.leave_dirs.matches(rel)))
    }
}

fn pattern(line: &str) -> Option<Pattern> {
    let rule = line.trim();
    if rule.is_empty() || rule.starts_with('#') {
        return None;
    }
    let (keep, rule) = match rule.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, rule),
    };
    let (dir_only, rule) = match rule.strip_suffix('/') {
        Some(rest) => (true, rest),
        None => (false, rule),
    };
    let whole_path = rule.contains('/');
    let rule = rule.strip_prefix('/').unwrap_or(rule);
    let glob = GlobBuilder::new(rule)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .ok()?;
    Some(Pattern {
        glob,
        whole_path,
        dir_only,
        keep,
    })
}

/// Every file of the chart at `dir` that Helm reads, as (`/`-separated
/// path from `dir`, path on disk), sorted by path. Symbolic links are
/// followed, as Helm follows them; a link back to a directory being walked
/// (a loop) is not.
pub(super) fn chart_files(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    let rules = match std::fs::read_to_string(dir.join(".helmignore")) {
        Ok(text) => Rules::parse(&text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Rules::default(),
        Err(source) => {
            return Err(Error::Io {
                action: "read",
                path: dir.join(".helmignore"),
                source,
            });
        }
    };
    let mut out = Vec::new();
    walk(dir, "", &rules, &mut Vec::new(), &mut out)?;
    out.sort();
    Ok(out)
}

fn walk(
    dir: &Path,
    prefix: &str,
    rules: &Rules,
    walking: &mut Vec<PathBuf>,
    out: &mut Vec<(String, PathBuf)>,
) -> Result<()> {
    let io = |action, path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Io {
            action,
            path,
            source,
        }
    };
    let real = dir.canonicalize().map_err(io("read", dir))?;
    if walking.contains(&real) {
        return Ok(());
    }
    walking.push(real);
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io("list", dir))? {
        let entry = entry.map_err(io("list", dir))?;
        entries.push((
            entry.file_name().to_string_lossy().into_owned(),
            entry.path(),
        ));
    }
    entries.sort();
    for (name, path) in entries {
        let rel = format!("{prefix}{name}");
        // A dangling symlink is not a file Helm can read either.
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if rules.ignores(&rel, meta.is_dir()) {
            continue;
        }
        if meta.is_dir() {
            walk(&path, &format!("{rel}/"), rules, walking, out)?;
        } else {
            out.push((rel, path));
        }
    }
    walking.pop();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_names_whole_paths_and_directories() {
        let rules = Rules::parse("# build output\n\ntarget/\n*.rs\n/docs/*.md\nsrc/deep/x\n");
        assert!(rules.ignores("target", true));
        assert!(
            !rules.ignores("target", false),
            "`target/` matches directories only"
        );
        assert!(rules.ignores("a/b/lib.rs", false), "no `/`: the base name");
        assert!(rules.ignores("docs/a.md", false));
        assert!(
            !rules.ignores("docs/sub/a.md", false),
            "`*` stays in a component"
        );
        assert!(
            !rules.ignores("x/docs/a.md", false),
            "a `/` pattern is anchored"
        );
        assert!(rules.ignores("src/deep/x", false));
        assert!(!rules.ignores("templates/a.yaml", false));
    }

    #[test]
    fn a_kept_path_is_never_left_out() {
        let rules = Rules::parse("*.yaml\n!values.yaml\n");
        assert!(rules.ignores("a.yaml", false));
        assert!(!rules.ignores("values.yaml", false));
        let rules = Rules::parse("[\n");
        assert!(
            !rules.ignores("[", false),
            "a bad pattern leaves nothing out"
        );
    }

    #[test]
    fn the_walk_skips_ignored_directories_and_follows_links() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("templates")).unwrap();
        std::fs::create_dir_all(root.join("target/debug")).unwrap();
        std::fs::write(root.join(".helmignore"), "target/\n").unwrap();
        std::fs::write(root.join("Chart.yaml"), "name: c\n").unwrap();
        std::fs::write(root.join("templates/a.yaml"), "a: 1\n").unwrap();
        std::fs::write(root.join("target/debug/big"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("templates"), root.join("linked")).unwrap();
        std::os::unix::fs::symlink(root, root.join("templates/loop")).unwrap();
        let names: Vec<String> = chart_files(root)
            .unwrap()
            .into_iter()
            .map(|(rel, _)| rel)
            .collect();
        assert_eq!(
            names,
            [
                ".helmignore",
                "Chart.yaml",
                "linked/a.yaml",
                "templates/a.yaml"
            ]
        );
    }
}
