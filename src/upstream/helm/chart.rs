//! A chart archive (`<chart>-<version>.tgz`) unpacked as `helm pull
//! --untar` does, into memory, and stricter.
//!
//! Helm takes the files under the archive's one top directory, writes each
//! with mode 0644 (so no execute bit survives, and this tree has none), and
//! refuses absolute paths and `..`. revendor also refuses what Helm would
//! silently take: links (Helm writes a link as an empty file), several top
//! directories, a path listed twice, and a Chart.yaml that is missing or
//! names another chart or version than the one asked for. Sizes are bounded
//! as Helm bounds them, 100 MiB unpacked and 5 MiB a file, and entries as
//! source archives bound them ([`archive::Budget`]).

use std::collections::BTreeMap;
use std::io::Read;

use super::super::SourceTree;
use super::super::archive::{self, Budget, Limits, read_to_gzip_end};
use super::super::tree_hash::{Mode, TreeHasher};
use crate::manifest::{Node, parse_documents};

/// The most an archive may unpack to, as Helm's loader allows.
pub const MAX_UNPACKED: u64 = 100 << 20;
/// The largest file an archive may hold, as Helm's loader allows.
pub const MAX_FILE: u64 = 5 << 20;

/// A chart unpacked: its files and what its Chart.yaml says.
#[derive(Debug, Clone)]
pub struct Chart {
    /// The files under the chart's directory, relative to it.
    pub tree: SourceTree,
    /// `appVersion` of Chart.yaml.
    pub app_version: Option<String>,
    /// `home` of Chart.yaml: a link for the pull request.
    pub home: Option<String>,
    /// `sources` of Chart.yaml: links for the pull request.
    pub sources: Vec<String>,
}

impl Chart {
    /// File `path` of this chart, `name` at `rev`, read from `url`; absent
    /// is [`Error::NotFound`](crate::error::Error::NotFound) naming all three.
    pub fn file(
        &self,
        name: &str,
        rev: &str,
        path: &str,
        url: &str,
    ) -> crate::error::Result<Vec<u8>> {
        self.tree
            .files
            .get(path)
            .cloned()
            .ok_or_else(|| crate::error::Error::NotFound {
                what: format!("`{path}` of chart `{name}` {rev}"),
                url: url.to_owned(),
            })
    }

    /// The files under `dir` of this chart, `name` at `rev`, read from
    /// `url`; a directory with none is not found.
    pub fn list(
        &self,
        (name, rev, url): (&str, &str, &str),
        dir: &str,
        cache: &super::super::cache::Cache,
    ) -> crate::error::Result<Vec<super::super::Listed>> {
        let listed = super::super::listed_from(&self.tree.files, dir, cache);
        if listed.is_empty() {
            return Err(crate::error::Error::NotFound {
                what: format!("directory `{dir}` of chart `{name}` {rev}"),
                url: url.to_owned(),
            });
        }
        Ok(listed)
    }

    /// What the lock records of this chart, downloaded from `url` and
    /// verified as `sha256` (an HTTP repository's archive digest, an OCI
    /// registry's manifest digest).
    pub fn artifact(&self, url: &str, sha256: &str) -> super::super::Artifact {
        super::super::Artifact {
            url: url.to_owned(),
            sha256: sha256.to_owned(),
            app_version: self.app_version.clone(),
            home: self.home.clone(),
            sources: self.sources.clone(),
        }
    }
}

/// Helm's limits, and a source archive's bound on entries.
const HELM: Limits = Limits {
    entries: archive::SOURCE.entries,
    total: MAX_UNPACKED,
    file: MAX_FILE,
};

/// Unpacks `bytes` (a `.tgz`), which must be chart `name` at `version`.
pub fn unpack(bytes: &[u8], name: &str, version: &str) -> Result<Chart, String> {
    unpack_within(bytes, name, version, HELM)
}

fn unpack_within(bytes: &[u8], name: &str, version: &str, limits: Limits) -> Result<Chart, String> {
    let gz = flate2::read::GzDecoder::new(bytes);
    let mut ar = tar::Archive::new(gz);
    let entries = ar.entries().map_err(|e| format!("not a tar.gz: {e}"))?;
    let (top, files) = read_entries(entries, Budget::new(limits))?;
    read_to_gzip_end(ar.into_inner())?;
    let Some(meta) = files.get("Chart.yaml") else {
        return Err(format!("it has no `{top}/Chart.yaml`"));
    };
    let meta = metadata(meta).map_err(|e| format!("`{top}/Chart.yaml` {e}"))?;
    if meta.name != name || meta.version != version {
        return Err(format!(
            "its Chart.yaml names chart `{}` version {}, not `{name}` version {version}",
            meta.name, meta.version
        ));
    }
    let mut hasher = TreeHasher::new();
    for (path, data) in &files {
        hasher
            .add(path, Mode::File, data)
            .map_err(|e| e.to_string())?;
    }
    Ok(Chart {
        tree: SourceTree {
            files,
            links: BTreeMap::new(),
            tree_sha256: hasher.finish(),
        },
        app_version: meta.app_version,
        home: meta.home,
        sources: meta.sources,
    })
}

/// The top directory's name and the files under it.
fn read_entries<R: Read>(
    entries: tar::Entries<'_, R>,
    mut budget: Budget,
) -> Result<(String, BTreeMap<String, Vec<u8>>), String> {
    let mut top: Option<String> = None;
    let mut files = BTreeMap::new();
    for entry in entries {
        let mut entry = entry.map_err(|e| format!("corrupt entry: {e}"))?;
        let raw = entry.path_bytes().into_owned();
        let name =
            String::from_utf8(raw).map_err(|_| "an entry's name is not UTF-8".to_string())?;
        let kind = entry.header().entry_type();
        budget.admit(&name, if kind.is_file() { entry.size() } else { 0 })?;
        if kind.is_dir() {
            continue;
        }
        let (dir, rel) = split(&name)?;
        match &top {
            Some(t) if *t != dir => {
                return Err(format!(
                    "it has several top directories (`{t}/` and `{dir}/`); a chart has one"
                ));
            }
            _ => top = Some(dir.to_owned()),
        }
        if kind.is_symlink() || kind.is_hard_link() {
            return Err(format!("`{name}` is a link; a chart holds files only"));
        }
        if !kind.is_file() {
            return Err(format!("`{name}` is not a regular file"));
        }
        let mut data = Vec::with_capacity(entry.size() as usize);
        entry
            .read_to_end(&mut data)
            .map_err(|e| format!("cannot read `{name}`: {e}"))?;
        if files.insert(rel.to_owned(), data).is_some() {
            return Err(format!("`{name}` is in it twice"));
        }
    }
    let top = top.ok_or_else(|| "it holds no files".to_string())?;
    Ok((top, files))
}

/// `name` split into its top directory and the path under it; an error for
/// a name that is absolute, climbs with `..`, or is not under a directory.
fn split(name: &str) -> Result<(&str, &str), String> {
    let escapes = name.starts_with('/')
        || name.contains('\\')
        || name.chars().any(char::is_control)
        || name.split('/').any(|c| c == "..");
    if escapes {
        return Err(format!(
            "entry `{name}` would be written outside the chart's directory"
        ));
    }
    let name = name.trim_start_matches("./");
    let Some((dir, rel)) = name.split_once('/') else {
        return Err(format!(
            "`{name}` is not inside the chart's directory; a chart is one top directory"
        ));
    };
    if !super::super::is_clean_path(rel) || dir.is_empty() || dir == "." {
        return Err(format!(
            "entry `{name}` is not a plain path inside the chart's directory"
        ));
    }
    Ok((dir, rel))
}

/// What revendor reads from a Chart.yaml.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    /// `name`.
    pub name: String,
    /// `version`.
    pub version: String,
    /// `appVersion`.
    pub app_version: Option<String>,
    /// `home`.
    pub home: Option<String>,
    /// `sources`.
    pub sources: Vec<String>,
}

/// Reads a Chart.yaml's name, version and links; the error says what is
/// missing.
pub fn metadata(bytes: &[u8]) -> Result<Metadata, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "is not UTF-8 text".to_string())?;
    let docs = parse_documents(text).map_err(|e| format!("is not YAML: {e}"))?;
    let root = docs.first().ok_or_else(|| "is empty".to_string())?;
    let text_of = |key: &str| root.get(key).and_then(Node::as_str).map(str::to_owned);
    let need = |key: &str| {
        text_of(key)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| format!("has no `{key}`"))
    };
    Ok(Metadata {
        name: need("name")?,
        version: need("version")?,
        app_version: text_of("appVersion"),
        home: text_of("home"),
        sources: root
            .get("sources")
            .map(|s| {
                s.items()
                    .iter()
                    .filter_map(Node::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::archive::tests::{Entry, tarball};

    /// A gzipped tar of `(name, type, contents)` entries, names written raw
    /// so hostile ones can be built.
    fn tgz(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
        let entries: Vec<Entry<'_>> = entries
            .iter()
            .map(|(name, kind, data)| Entry(name, *kind, 0o755, data))
            .collect();
        tarball(&entries, 1)
    }

    const FILE: tar::EntryType = tar::EntryType::Regular;
    const META: &[u8] = b"apiVersion: v2\nname: demo\nversion: 1.2.3\nappVersion: \"4.5\"\nhome: https://h.example\nsources:\n- https://s.example\n";

    #[test]
    fn the_charts_directory_becomes_the_root_and_no_mode_survives() {
        let chart = unpack(
            &tgz(&[
                ("demo/Chart.yaml", FILE, META),
                ("demo/templates/a.yaml", FILE, b"kind: A\n"),
                ("demo/templates", tar::EntryType::Directory, b""),
            ]),
            "demo",
            "1.2.3",
        )
        .unwrap();
        let paths: Vec<&str> = chart.tree.files.keys().map(String::as_str).collect();
        assert_eq!(paths, ["Chart.yaml", "templates/a.yaml"]);
        assert_eq!(chart.app_version.as_deref(), Some("4.5"));
        assert_eq!(chart.home.as_deref(), Some("https://h.example"));
        assert_eq!(chart.sources, ["https://s.example"]);
        let mut h = TreeHasher::new();
        h.add("Chart.yaml", Mode::File, META).unwrap();
        h.add("templates/a.yaml", Mode::File, b"kind: A\n").unwrap();
        assert_eq!(chart.tree.tree_sha256, h.finish());
    }

    #[test]
    fn hostile_or_foreign_archives_are_refused() {
        let meta = ("demo/Chart.yaml", FILE, META);
        type Entries<'a> = &'a [(&'a str, tar::EntryType, &'a [u8])];
        let cases: &[(Entries<'_>, &str)] = &[
            (
                &[meta, ("demo/../x", FILE, b"")],
                "outside the chart's directory",
            ),
            (
                &[("/etc/x", FILE, b""), meta],
                "outside the chart's directory",
            ),
            (
                &[meta, ("demo/l", tar::EntryType::Symlink, b"/etc/passwd")],
                "is a link",
            ),
            (
                &[meta, ("demo/h", tar::EntryType::Link, b"demo/Chart.yaml")],
                "is a link",
            ),
            (&[meta, ("other/a", FILE, b"")], "several top directories"),
            (
                &[("Chart.yaml", FILE, META)],
                "not inside the chart's directory",
            ),
            (
                &[("demo/values.yaml", FILE, b"")],
                "has no `demo/Chart.yaml`",
            ),
            (&[meta, meta], "in it twice"),
            (&[], "holds no files"),
        ];
        for (entries, expected) in cases {
            let err = unpack(&tgz(entries), "demo", "1.2.3").unwrap_err();
            assert!(err.contains(expected), "{expected}: {err}");
        }
        let err = unpack(&tgz(&[meta]), "demo", "1.2.4").unwrap_err();
        assert!(
            err.contains("names chart `demo` version 1.2.3, not `demo` version 1.2.4"),
            "{err}"
        );
        let err = unpack(&tgz(&[meta]), "other", "1.2.3").unwrap_err();
        assert!(err.contains("not `other`"), "{err}");
        assert!(unpack(b"not gzip", "demo", "1.2.3").is_err());
    }

    #[test]
    fn sizes_are_bounded_as_helm_bounds_them() {
        assert_eq!(
            (
                archive::size_text(HELM.total),
                archive::size_text(HELM.file)
            ),
            ("100 MiB".into(), "5 MiB".into())
        );
        let small = Limits {
            entries: 3,
            total: 100,
            file: 60,
        };
        let meta = (
            "demo/Chart.yaml",
            FILE,
            b"name: demo\nversion: 1\n" as &[u8],
        );
        let err = unpack_within(
            &tgz(&[meta, ("demo/big", FILE, &[b'x'; 61])]),
            "demo",
            "1",
            small,
        )
        .unwrap_err();
        assert!(err.contains("`demo/big` is larger than 60 bytes"), "{err}");
        let part = [b'x'; 40];
        let entries = [meta, ("demo/a", FILE, &part), ("demo/b", FILE, &part)];
        let err = unpack_within(&tgz(&entries), "demo", "1", small).unwrap_err();
        assert!(err.contains("more than 100 bytes"), "{err}");
        assert!(unpack_within(&tgz(&entries[..2]), "demo", "1", small).is_ok());
        let few = [
            meta,
            ("demo/a", FILE, b""),
            ("demo/b", FILE, b""),
            ("demo/c", FILE, b""),
        ];
        let err = unpack_within(&tgz(&few), "demo", "1", small).unwrap_err();
        assert!(err.contains("more than 3 entries"), "{err}");
    }
}
