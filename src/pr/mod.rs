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
    /// Every changed file of the package, relative to it.
    pub files: Vec<String>,
    /// Every upstream, when the package has several (the fields above are
    /// then the first one's); empty for one.
    pub upstreams: Vec<UpstreamChange>,
    /// Every image pin by image name, when the package has several images
    /// (`image` is then the first one's); empty for one.
    pub images: Vec<(String, Option<String>, Option<String>)>,
}

/// One upstream of a package with several: as [`Summary`] says it of one.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct UpstreamChange {
    /// Its `name` in vendor.toml.
    pub name: String,
    /// `github:owner/name` or `git:URL`.
    pub source: String,
    /// The version before, if the base's lock had it.
    pub from: Option<String>,
    /// The version now.
    pub to: String,
    /// The compare URL, for GitHub upstreams.
    pub compare_url: Option<String>,
    /// The release URL, for GitHub upstreams.
    pub release_url: Option<String>,
    /// The commit the version points to.
    pub commit: Option<String>,
    /// go.mod `go` directive: before, after.
    pub go_directive: (Option<String>, Option<String>),
}

impl UpstreamChange {
    fn moved(&self) -> bool {
        self.from.as_deref().is_some_and(|f| f != self.to)
    }
}

/// `multus: update multus-cni v4.2.4 → v4.3.0`; with several upstreams,
/// each one that moved (`linstor: update piraeus v1 → v2, drbd v3 → v4`).
pub fn title(s: &Summary) -> String {
    if !s.upstreams.is_empty() {
        let moved: Vec<String> = s
            .upstreams
            .iter()
            .filter(|u| u.moved())
            .map(|u| {
                format!(
                    "{} {} → {}",
                    u.name,
                    u.from.as_deref().unwrap_or_default(),
                    u.to
                )
            })
            .collect();
        if !moved.is_empty() {
            return format!("{}: update {}", s.package, moved.join(", "));
        }
        let all: Vec<String> = s
            .upstreams
            .iter()
            .map(|u| format!("{} {}", u.name, u.to))
            .collect();
        return format!("{}: refresh vendored {}", s.package, all.join(", "));
    }
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
    if !s.upstreams.is_empty() {
        return body_of_several(s);
    }
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
    tail(&mut b, s);
    b
}

/// The refreshed patches, the changed files and the closing line.
fn tail(b: &mut String, s: &Summary) {
    if !s.patches.is_empty() {
        let _ = writeln!(
            b,
            "\nPatches refreshed to exact hunks (review the diff: the changes are the same, their line numbers and context moved):\n"
        );
        for p in &s.patches {
            let _ = writeln!(b, "- `{p}`");
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
}

/// The body of a package with several upstreams: a row and links each.
fn body_of_several(s: &Summary) -> String {
    let mut b = String::new();
    let sources: Vec<String> = s
        .upstreams
        .iter()
        .map(|u| format!("`{}`", u.source))
        .collect();
    let _ = writeln!(
        b,
        "Upgrade of {} in `{}`, prepared by `revendor update`.\n",
        sources.join(", "),
        s.package
    );
    let _ = writeln!(b, "| | before | after |\n| --- | --- | --- |");
    for u in &s.upstreams {
        let from = u.from.as_deref().unwrap_or("(no lock before)");
        let _ = writeln!(b, "| {} | `{from}` | `{}` |", u.name, u.to);
        if u.go_directive.0.is_some() || u.go_directive.1.is_some() {
            let _ = writeln!(
                b,
                "| {} go.mod `go` | {} | {} |",
                u.name,
                code(u.go_directive.0.as_deref()),
                code(u.go_directive.1.as_deref())
            );
        }
    }
    for (name, before, after) in &s.images {
        let _ = writeln!(
            b,
            "| image {name} | {} | {} |",
            code(before.as_deref()),
            code(after.as_deref())
        );
    }
    b.push('\n');
    for u in &s.upstreams {
        if let Some(url) = &u.release_url {
            let _ = writeln!(b, "- {} release notes: {url}", u.name);
        }
        if let Some(url) = &u.compare_url {
            let _ = writeln!(b, "- {} upstream changes: {url}", u.name);
        }
        if let Some(c) = &u.commit {
            let _ = writeln!(b, "- {} upstream commit: `{c}`", u.name);
        }
    }
    tail(&mut b, s);
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
            files: vec![
                "templates/multus-daemonset-thick.yml".into(),
                "upstream/lock.toml".into(),
            ],
            upstreams: Vec::new(),
            images: Vec::new(),
        }
    }

    #[test]
    fn several_upstreams_are_each_named() {
        let mut s = sample();
        s.upstreams = vec![
            UpstreamChange {
                name: "chart".into(),
                source: "github:o/chart".into(),
                from: Some("v1.0.0".into()),
                to: "v1.1.0".into(),
                release_url: Some("https://github.com/o/chart/releases/tag/v1.1.0".into()),
                ..UpstreamChange::default()
            },
            UpstreamChange {
                name: "operator".into(),
                source: "git:file:///op".into(),
                from: Some("v2.0.0".into()),
                to: "v2.0.0".into(),
                ..UpstreamChange::default()
            },
        ];
        s.images = vec![("a".into(), None, Some("r/a:v1@sha256:00".into()))];
        assert_eq!(title(&s), "multus: update chart v1.0.0 → v1.1.0");
        let b = body(&s);
        assert!(
            b.starts_with("Upgrade of `github:o/chart`, `git:file:///op` in `multus`"),
            "{b}"
        );
        assert!(b.contains("| chart | `v1.0.0` | `v1.1.0` |\n| operator | `v2.0.0` | `v2.0.0` |\n| image a | – | `r/a:v1@sha256:00` |\n"), "{b}");
        assert!(
            b.contains("- chart release notes: https://github.com/o/chart/releases/tag/v1.1.0\n"),
            "{b}"
        );
        s.upstreams[0].from = Some("v1.1.0".into());
        assert_eq!(
            title(&s),
            "multus: refresh vendored chart v1.1.0, operator v2.0.0"
        );
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
}
