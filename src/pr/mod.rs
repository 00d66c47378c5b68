//! The pull request for an upgrade: a title and a Markdown body built from a
//! typed [`Summary`], as a pure function (no git, no network), so the text a
//! reviewer reads is tested byte for byte.

use std::fmt::Write;

/// What changed in one package, gathered by `ops::pr`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    /// The package, as its directory is named (`multus`).
    pub package: String,
    /// The upstream, `github:owner/name` or `git:URL`.
    pub source: String,
    /// The upstream repository name (`multus-cni`).
    pub upstream_name: String,
    /// The version before (from the base commit's lock), if there was a lock.
    pub from: Option<String>,
    /// The version now.
    pub to: String,
    /// `{server}/{repo}/compare/{from}...{to}`, for GitHub upstreams.
    pub compare_url: Option<String>,
    /// `{server}/{repo}/releases/tag/{to}`, for GitHub upstreams.
    pub release_url: Option<String>,
    /// The commit the new tag points to.
    pub commit: Option<String>,
    /// upstream go.mod `go` directive: before, after.
    pub go_directive: (Option<String>, Option<String>),
    /// The pinned image: before, after.
    pub image: (Option<String>, Option<String>),
    /// Patch files that changed (refreshed or adopted edits).
    pub patches: Vec<String>,
    /// Files of vendored directories that upstream added (rendered paths).
    pub added: Vec<String>,
    /// Files of vendored directories that upstream removed, and that went.
    pub removed: Vec<String>,
    /// Every changed file of the package, relative to it.
    pub files: Vec<String>,
}

/// `multus: update multus-cni v4.2.4 → v4.3.0`.
pub fn title(s: &Summary) -> String {
    match &s.from {
        Some(from) if *from != s.to => format!(
            "{}: update {} {from} → {}",
            s.package, s.upstream_name, s.to
        ),
        _ => format!(
            "{}: refresh vendored {} {}",
            s.package, s.upstream_name, s.to
        ),
    }
}

/// The Markdown body.
pub fn body(s: &Summary) -> String {
    let mut b = String::new();
    let from = s.from.as_deref().unwrap_or("(no lock before)");
    let _ = writeln!(
        b,
        "Upgrade of `{}` in `{}`, prepared by `revendor update`.\n",
        s.source, s.package
    );
    let _ = writeln!(b, "| | before | after |\n| --- | --- | --- |");
    let _ = writeln!(b, "| version | `{from}` | `{}` |", s.to);
    if s.go_directive.0.is_some() || s.go_directive.1.is_some() {
        let _ = writeln!(
            b,
            "| go.mod `go` | {} | {} |",
            code(s.go_directive.0.as_deref()),
            code(s.go_directive.1.as_deref())
        );
    }
    if s.image.0.is_some() || s.image.1.is_some() {
        let _ = writeln!(
            b,
            "| image | {} | {} |",
            code(s.image.0.as_deref()),
            code(s.image.1.as_deref())
        );
    }
    b.push('\n');
    if let Some(url) = &s.release_url {
        let _ = writeln!(b, "- Release notes: {url}");
    }
    if let Some(url) = &s.compare_url {
        let _ = writeln!(b, "- Upstream changes: {url}");
    }
    if let Some(c) = &s.commit {
        let _ = writeln!(b, "- Upstream commit: `{c}`");
    }
    if !s.patches.is_empty() {
        let _ = writeln!(
            b,
            "\nPatches refreshed to exact hunks (review the diff: the changes are the same, their line numbers and context moved):\n"
        );
        for p in &s.patches {
            let _ = writeln!(b, "- `{p}`");
        }
    }
    for (list, what) in [
        (&s.added, "Files upstream added, vendored now"),
        (&s.removed, "Files upstream removed, deleted here"),
    ] {
        if !list.is_empty() {
            let _ = writeln!(b, "\n{what}:\n");
            for f in list {
                let _ = writeln!(b, "- `{f}`");
            }
        }
    }
    if !s.files.is_empty() {
        let _ = writeln!(
            b,
            "\n<details><summary>{} changed files</summary>\n",
            s.files.len()
        );
        for f in &s.files {
            let _ = writeln!(b, "- `{f}`");
        }
        let _ = writeln!(b, "\n</details>");
    }
    let _ = writeln!(
        b,
        "\nEvery patch was re-applied with zero fuzz and the lock verified; `revendor check` runs on this pull request."
    );
    b
}

fn code(v: Option<&str>) -> String {
    v.map(|v| format!("`{v}`")).unwrap_or_else(|| "–".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Summary {
        Summary {
            package: "multus".into(),
            source: "github:k8snetworkplumbingwg/multus-cni".into(),
            upstream_name: "multus-cni".into(),
            from: Some("v4.2.4".into()),
            to: "v4.3.0".into(),
            compare_url: Some(
                "https://github.com/k8snetworkplumbingwg/multus-cni/compare/v4.2.4...v4.3.0".into(),
            ),
            release_url: Some(
                "https://github.com/k8snetworkplumbingwg/multus-cni/releases/tag/v4.3.0".into(),
            ),
            commit: Some("db30741512795c258b3ba383a571a66850e8baac".into()),
            go_directive: (Some("1.24.11".into()), Some("1.25.0".into())),
            image: (None, None),
            patches: vec!["images/multus-cni/patches/fix-del-without-cache.diff".into()],
            added: Vec::new(),
            removed: Vec::new(),
            files: vec![
                "templates/multus-daemonset-thick.yml".into(),
                "upstream/lock.toml".into(),
            ],
        }
    }

    #[test]
    fn title_names_package_upstream_and_versions() {
        assert_eq!(
            title(&sample()),
            "multus: update multus-cni v4.2.4 → v4.3.0"
        );
        let mut same = sample();
        same.from = Some("v4.3.0".into());
        assert_eq!(title(&same), "multus: refresh vendored multus-cni v4.3.0");
    }

    #[test]
    fn body_is_stable() {
        let expected = "\
Upgrade of `github:k8snetworkplumbingwg/multus-cni` in `multus`, prepared by `revendor update`.

| | before | after |
| --- | --- | --- |
| version | `v4.2.4` | `v4.3.0` |
| go.mod `go` | `1.24.11` | `1.25.0` |

- Release notes: https://github.com/k8snetworkplumbingwg/multus-cni/releases/tag/v4.3.0
- Upstream changes: https://github.com/k8snetworkplumbingwg/multus-cni/compare/v4.2.4...v4.3.0
- Upstream commit: `db30741512795c258b3ba383a571a66850e8baac`

Patches refreshed to exact hunks (review the diff: the changes are the same, their line numbers and context moved):

- `images/multus-cni/patches/fix-del-without-cache.diff`

<details><summary>2 changed files</summary>

- `templates/multus-daemonset-thick.yml`
- `upstream/lock.toml`

</details>

Every patch was re-applied with zero fuzz and the lock verified; `revendor check` runs on this pull request.
";
        assert_eq!(body(&sample()), expected);
    }

    #[test]
    fn files_upstream_added_and_removed_are_listed() {
        let mut s = sample();
        s.added = vec!["charts/x/templates/new.yaml".into()];
        s.removed = vec!["charts/x/templates/old.yaml".into()];
        let b = body(&s);
        assert!(
            b.contains("\nFiles upstream added, vendored now:\n\n- `charts/x/templates/new.yaml`\n\nFiles upstream removed, deleted here:\n\n- `charts/x/templates/old.yaml`\n\n<details>"),
            "{b}"
        );
    }
}
