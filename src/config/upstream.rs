//! `[upstream]` (or each `[[upstream]]`): where releases come from, which
//! tags are releases, and what fills a rewrite's placeholders.
//!
//! A version is chosen one of three ways ([`Selection`]): the highest
//! release tag inside `track` (the tags a `tag-pattern` accepts, or by
//! default an optional `v` then a version), the head of a branch (`ref`),
//! or a commit named by its full sha (`version`, never moved by `update` on
//! its own). The default never takes a chart-release tag such as
//! `kube-ovn-v1.15.24` for a version: the text before the version must be
//! nothing but the `v`.

use regex::Regex;

use super::version::parse_tag;

/// `[upstream]` or one `[[upstream]]`: the repository and how its version
/// is chosen.
#[derive(Debug, Clone)]
pub struct Upstream {
    /// `name`, which `[[vendor]]`, `[[patch]]` and `[[rewrite]]` use to say
    /// which upstream they belong to; `None` for an unnamed `[upstream]`.
    pub name: Option<String>,
    /// Where releases and files come from.
    pub source: UpstreamSource,
    /// The version vendored now, as the tag names it (or a full commit
    /// sha); `None` when the upstream follows a branch (`ref`), whose
    /// commit only the lock records.
    pub version: Option<String>,
    /// The manifest digest (`sha256:…`) `version` is pinned to, written
    /// `version = "0.1.1@sha256:…"`: an OCI chart read by that digest, never
    /// by its tag, which a publisher can re-push.
    pub pin: Option<String>,
    /// How `update` chooses the version.
    pub selection: Selection,
    /// The semver range `update` may move within.
    pub track: Option<semver::VersionReq>,
    /// Whether releases marked prerelease may be chosen.
    pub allow_prerelease: bool,
    /// Line of `version` (or `ref`) in vendor.toml, for findings.
    pub version_line: usize,
    /// Line of `github` or `git` in vendor.toml, for findings about the source.
    pub source_line: usize,
    /// The release assets its `[[vendor]]`s take (`asset =`), which its
    /// source serves by name in place of repository files.
    pub assets: Vec<super::Asset>,
}

/// How an upstream's version is chosen.
#[derive(Debug, Clone)]
pub enum Selection {
    /// Release tags: the highest inside `track`. With a `tag-pattern`, only
    /// the tags it matches are releases, and its `version` group is the
    /// version.
    Tags(Option<TagPattern>),
    /// `ref = "<branch>"`: the branch's head commit.
    Branch(String),
    /// `version` is a full commit sha.
    Commit,
}

/// `tag-pattern`: a regex with a `version` group.
#[derive(Debug, Clone)]
pub struct TagPattern(Regex);

impl TagPattern {
    /// Compiles `text`; the error says why it cannot be a tag pattern.
    pub fn parse(text: &str) -> Result<TagPattern, String> {
        let regex = Regex::new(text).map_err(|e| e.to_string())?;
        if !regex.capture_names().any(|n| n == Some("version")) {
            return Err("it has no `(?P<version>…)` group".into());
        }
        Ok(TagPattern(regex))
    }

    /// The `version` group of `tag`, when the pattern matches it.
    pub fn version_of<'t>(&self, tag: &'t str) -> Option<&'t str> {
        Some(self.0.captures(tag)?.name("version")?.as_str())
    }
}

/// Whether `text` is a full commit sha (40 hex digits).
pub fn is_commit(text: &str) -> bool {
    text.len() == 40 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

impl Upstream {
    /// The version a tag names: the `tag-pattern`'s `version` group (or,
    /// by default, the tag without a leading `v`), read as semver. `None`
    /// for a tag that is not a release of this upstream.
    pub fn semver(&self, tag: &str) -> Option<semver::Version> {
        match &self.selection {
            Selection::Tags(Some(pattern)) => parse_tag(pattern.version_of(tag)?),
            Selection::Tags(None) => parse_tag(tag),
            Selection::Branch(_) | Selection::Commit => None,
        }
    }

    /// The values of `{version}`, `{semver}` and `{commit}` at `tag`.
    /// `{semver}` is the pattern's `version` group, or the tag without a
    /// leading `v`; for a commit or a branch, the commit itself.
    pub fn placeholders(&self, tag: &str, commit: Option<&str>) -> Placeholders {
        let semver = match &self.selection {
            Selection::Tags(Some(pattern)) => pattern.version_of(tag).unwrap_or(tag),
            _ if is_commit(tag) => tag,
            _ => tag.strip_prefix(['v', 'V']).unwrap_or(tag),
        };
        Placeholders {
            version: tag.to_owned(),
            semver: semver.to_owned(),
            commit: commit.map(str::to_owned),
            app_version: None,
        }
    }

    /// `version` as vendor.toml writes it: with `@` and the pinned digest
    /// when there is one.
    pub fn written_version(&self) -> Option<String> {
        let version = self.version.as_deref()?;
        Some(match &self.pin {
            Some(pin) => format!("{version}@{pin}"),
            None => version.to_owned(),
        })
    }

    /// How messages name it: its `name` when it has one, else its source.
    pub fn label(&self) -> String {
        match &self.name {
            Some(name) => name.clone(),
            None => self.source.describe(),
        }
    }
}

/// What a rewrite's `with` may say: `{version}` (the tag as written),
/// `{semver}` (the version without a leading `v`, or the tag pattern's
/// `version` group), `{commit}` (the commit the version points to) and,
/// for a chart, `{app-version}` (its Chart.yaml's `appVersion`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placeholders {
    /// `{version}`.
    pub version: String,
    /// `{semver}`.
    pub semver: String,
    /// `{commit}`, when known.
    pub commit: Option<String>,
    /// `{app-version}`, when known (a chart's, from the lock or the chart).
    pub app_version: Option<String>,
}

impl Placeholders {
    /// `template` with every placeholder filled in; `{commit}` and
    /// `{app-version}` stay as written when not known (see
    /// [`needs_commit`]).
    pub fn fill(&self, template: &str) -> String {
        let mut out = template
            .replace("{version}", &self.version)
            .replace("{semver}", &self.semver);
        if let Some(commit) = &self.commit {
            out = out.replace("{commit}", commit);
        }
        if let Some(app) = &self.app_version {
            out = out.replace("{app-version}", app);
        }
        out
    }
}

/// Whether a template uses `{commit}`, which needs the commit to be known.
pub fn needs_commit(template: &str) -> bool {
    template.contains("{commit}")
}

/// The kinds of upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpstreamSource {
    /// A GitHub repository, read through the releases API and raw files.
    GitHub {
        /// `owner/name`.
        repo: String,
    },
    /// Any git repository, read through git2.
    Git {
        /// Clone URL (`https://…`, `file:///…`).
        url: String,
    },
    /// A Helm chart from a chart repository (`<repo>/index.yaml`) or an
    /// OCI registry (`oci://…`, the chart at `<repo>/<chart>`).
    Helm {
        /// The repository's URL, without a trailing `/`.
        repo: String,
        /// The chart's name in it.
        chart: String,
    },
}

/// Why `url` cannot be a chart repository's: not https, oci, or plain http
/// to this machine (DESIGN.md: plain http only to loopback addresses).
pub fn helm_url(url: &str) -> Result<(), String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("is not a URL: {e}"))?;
    let host = parsed.host_str().unwrap_or_default();
    match parsed.scheme() {
        _ if host.is_empty() => Err("names no host".into()),
        _ if parsed.query().is_some() || parsed.fragment().is_some() => {
            Err("has a query or fragment; a repository is a plain URL".into())
        }
        "https" | "oci" => Ok(()),
        "http" if crate::net::is_loopback(host) => Ok(()),
        "http" => Err(format!(
            "is plain http to `{host}`, another machine: only https is allowed there"
        )),
        other => Err(format!("has scheme `{other}`: write https:// or oci://")),
    }
}

impl UpstreamSource {
    /// Whether it is a chart in an OCI registry (`helm = "oci://…"`).
    pub fn is_oci(&self) -> bool {
        matches!(self, UpstreamSource::Helm { repo, .. } if repo.starts_with("oci://"))
    }

    /// How the lock and messages name the source.
    pub fn describe(&self) -> String {
        match self {
            UpstreamSource::GitHub { repo } => format!("github:{repo}"),
            UpstreamSource::Git { url } => format!("git:{url}"),
            UpstreamSource::Helm { repo, chart } => format!("helm:{repo}#{chart}"),
        }
    }

    /// The source a [`describe`](Self::describe) string (the lock's
    /// `source`) names; `None` when it names neither kind.
    pub fn from_described(described: &str) -> Option<UpstreamSource> {
        if let Some(repo) = described.strip_prefix("github:") {
            return Some(UpstreamSource::GitHub { repo: repo.into() });
        }
        if let Some((repo, chart)) = described
            .strip_prefix("helm:")
            .and_then(|d| d.rsplit_once('#'))
        {
            return Some(UpstreamSource::Helm {
                repo: repo.into(),
                chart: chart.into(),
            });
        }
        described
            .strip_prefix("git:")
            .map(|url| UpstreamSource::Git { url: url.into() })
    }

    /// Whether `described` (the lock's `source`) names this source. GitHub
    /// repository names are compared as GitHub does, ignoring case; git URLs
    /// byte for byte.
    pub fn is(&self, described: &str) -> bool {
        match (self, UpstreamSource::from_described(described)) {
            (UpstreamSource::GitHub { repo }, Some(UpstreamSource::GitHub { repo: other })) => {
                repo.eq_ignore_ascii_case(&other)
            }
            (UpstreamSource::Git { url }, Some(UpstreamSource::Git { url: other })) => {
                *url == other
            }
            (this @ UpstreamSource::Helm { .. }, Some(other)) => *this == other,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upstream(selection: Selection) -> Upstream {
        Upstream {
            name: None,
            source: UpstreamSource::GitHub { repo: "o/r".into() },
            version: None,
            pin: None,
            selection,
            track: None,
            allow_prerelease: false,
            version_line: 1,
            source_line: 1,
            assets: Vec::new(),
        }
    }

    #[test]
    fn the_default_takes_no_chart_release_tag_for_a_version() {
        let up = upstream(Selection::Tags(None));
        assert_eq!(up.semver("v1.15.10").unwrap().to_string(), "1.15.10");
        assert_eq!(up.semver("1.15.10").unwrap().to_string(), "1.15.10");
        for tag in ["kube-ovn-v1.15.24", "kube-ovn-v2-v1.15.24", "latest"] {
            assert_eq!(up.semver(tag), None, "{tag}");
        }
    }

    #[test]
    fn a_tag_pattern_says_which_tags_are_releases() {
        let pattern = TagPattern::parse(r"^edge-(?P<version>\d+\.\d+\.\d+)$").unwrap();
        let up = upstream(Selection::Tags(Some(pattern)));
        assert_eq!(up.semver("edge-25.7.1").unwrap().to_string(), "25.7.1");
        assert_eq!(up.semver("v1.0.0"), None);
        let p = up.placeholders("edge-25.7.1", Some("abc"));
        assert_eq!(
            p.fill("{version} {semver} {commit}"),
            "edge-25.7.1 25.7.1 abc"
        );
        assert!(
            TagPattern::parse("^v(.*)$")
                .unwrap_err()
                .contains("version")
        );
        assert!(TagPattern::parse("(?P<version>").is_err());
    }

    #[test]
    fn placeholders_of_a_tag_and_a_commit() {
        let up = upstream(Selection::Tags(None));
        let p = up.placeholders("v1.15.10", None);
        assert_eq!(
            p.fill("{version}/{semver}/{commit}"),
            "v1.15.10/1.15.10/{commit}"
        );
        let sha = "facbc36d2b6b1f3d9d4b1f0b0f5a7b7e0d6c9a11";
        assert!(is_commit(sha) && !is_commit("v1.0.0"));
        let p = upstream(Selection::Commit).placeholders(sha, Some(sha));
        assert_eq!(p.semver, sha);
    }
}
