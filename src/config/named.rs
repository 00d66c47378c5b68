//! Upstreams and images, one or several, and the entries that name them.
//!
//! 1. [`upstreams`] reads `[upstream]` or every `[[upstream]]`: names
//!    (needed, and unique, when there are several), the source, and how the
//!    version is chosen (`version`, `ref`, `tag-pattern`, `track`).
//! 2. [`belongs_to`] resolves the `upstream =` of a `[[vendor]]`,
//!    `[[patch]]` or `[[rewrite]]`: needed when there are several upstreams,
//!    and it must name one.
//! 3. [`images`] and [`pin`] do the same for `[image]`/`[[image]]` and
//!    `[[pin]] image =`, and read a pin's `yaml` keys.
//!
//! A name is also a directory (`upstream/<name>/` holds that upstream's
//! pristine copies), so it is a plain word: letters, digits, `.`, `_`, `-`.

use std::collections::HashSet;
use std::ops::Range;

use toml::Spanned;

use super::context::Ctx;
use super::one_or_many::OneOrMany;
use super::raw::{RawConfig, RawImage, RawPin, RawUpstream, RawYaml};
use super::{
    ConfigError, Image, Pin, Selection, TagPattern, Upstream, UpstreamSource, YamlPin, is_commit,
};

/// Every upstream, in file order.
pub(super) fn upstreams(cx: &Ctx<'_>, raw: &RawConfig) -> Result<Vec<Upstream>, ConfigError> {
    let entries = OneOrMany::entries(&raw.upstream);
    let names = names(
        cx,
        &entries,
        |u: &RawUpstream| u.name.as_ref(),
        "[[upstream]]",
    )?;
    entries
        .into_iter()
        .zip(names)
        .map(|((span, u), name)| upstream(cx, span, u, name))
        .collect()
}

/// Every image, in file order.
pub(super) fn images(cx: &Ctx<'_>, raw: &RawConfig) -> Result<Vec<Image>, ConfigError> {
    let Some(whole) = &raw.image else {
        return Ok(Vec::new());
    };
    let entries = OneOrMany::entries(whole);
    let names = names(cx, &entries, |i: &RawImage| i.name.as_ref(), "[[image]]")?;
    entries
        .into_iter()
        .zip(names)
        .map(|((span, i), name)| image(cx, span, i, name))
        .collect()
}

/// The names of `entries`: each needs one when there are several, none may
/// repeat, and each is a plain word.
fn names<T>(
    cx: &Ctx<'_>,
    entries: &[(Range<usize>, &T)],
    name_of: impl Fn(&T) -> Option<&Spanned<String>>,
    table: &str,
) -> Result<Vec<Option<String>>, ConfigError> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for (span, entry) in entries {
        let Some(name) = name_of(entry) else {
            if entries.len() > 1 {
                return Err(cx
                    .err_at(
                        span,
                        format!("each {table} needs a `name` when there are several"),
                    )
                    .hint("name it, e.g. name = \"kube-ovn\", and refer to it by that name"));
            }
            out.push(None);
            continue;
        };
        let text = name.get_ref();
        let plain = !text.is_empty()
            && !text.starts_with('.')
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
        if !plain {
            return Err(cx
                .err(name, format!("`name` = \"{text}\" is not a plain name"))
                .hint(
                    "use letters, digits, `.`, `_` and `-`; it names a directory under upstream/",
                ));
        }
        if !seen.insert(text.clone()) {
            return Err(cx.err(name, format!("duplicate {table} name `{text}`")));
        }
        out.push(Some(text.clone()));
    }
    Ok(out)
}

/// The upstream an entry belongs to: its `upstream =`, which must name a
/// declared upstream, or the only one.
pub(super) fn belongs_to(
    cx: &Ctx<'_>,
    upstreams: &[Upstream],
    named: &Option<Spanned<String>>,
    table: &str,
    line: usize,
) -> Result<Option<String>, ConfigError> {
    let known = || {
        upstreams
            .iter()
            .filter_map(|u| u.name.as_deref())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match named {
        Some(name) => match upstreams
            .iter()
            .find(|u| u.name.as_deref() == Some(name.get_ref()))
        {
            Some(u) => Ok(u.name.clone()),
            None => Err(cx
                .err(
                    name,
                    format!("`upstream` = \"{}\" names no [[upstream]]", name.get_ref()),
                )
                .hint(match known() {
                    k if k.is_empty() => "the [upstream] has no `name`; drop `upstream =`".into(),
                    k => format!("known upstreams: {k}"),
                })),
        },
        None if upstreams.len() > 1 => Err(ConfigError::at(
            cx.path,
            Some(line),
            format!("this {table} needs `upstream =`: there are several upstreams"),
        )
        .hint(format!("say which: {}", known()))),
        None => Ok(upstreams[0].name.clone()),
    }
}

fn upstream(
    cx: &Ctx<'_>,
    span: Range<usize>,
    u: &RawUpstream,
    name: Option<String>,
) -> Result<Upstream, ConfigError> {
    let source_line = match [&u.github, &u.git, &u.helm].into_iter().flatten().next() {
        Some(s) => cx.line(s),
        None => cx.line_at(&span),
    };
    let table = if name.is_some() {
        "[[upstream]]"
    } else {
        "[upstream]"
    };
    let source = source(cx, &span, u, table)?;
    let track = match &u.track {
        Some(t) => Some(track(t.get_ref(), &source).map_err(|e| {
            cx.err(
                t,
                format!("`track` = \"{}\" is not a semver range: {e}", t.get_ref()),
            )
            .hint("write a range such as \">=4.0.0, <5.0.0\"")
        })?),
        None => None,
    };
    let (selection, version_line) = selection(cx, &span, u, table)?;
    let (version, pin) = match &u.version {
        Some(v) => {
            let (version, pin) = pinned_version(cx, v, &source)?;
            (Some(version), pin)
        }
        None => (None, None),
    };
    let up = Upstream {
        name,
        source,
        version,
        pin,
        selection,
        track,
        allow_prerelease: u.allow_prerelease,
        version_line,
        source_line,
        assets: Vec::new(),
    };
    if let (Some(version), Selection::Tags(Some(_))) = (&u.version, &up.selection)
        && up.semver(version.get_ref()).is_none()
    {
        return Err(cx
            .err(
                version,
                format!(
                    "`version` = \"{}\" is not a release by `tag-pattern`",
                    version.get_ref()
                ),
            )
            .hint(
                "the pattern must match the vendored tag, and its `version` group be a version",
            ));
    }
    Ok(up)
}

/// The `github`, `git` or `helm` (with `chart`) an upstream names.
fn source(
    cx: &Ctx<'_>,
    span: &Range<usize>,
    u: &RawUpstream,
    table: &str,
) -> Result<UpstreamSource, ConfigError> {
    if let (Some(chart), None) = (&u.chart, &u.helm) {
        return Err(cx
            .err(
                chart,
                "`chart` needs `helm`: the chart repository it comes from",
            )
            .hint("add helm = \"https://…\" (an index.yaml's repository) or \"oci://…\""));
    }
    match (&u.github, &u.git, &u.helm) {
        (Some(gh), None, None) => {
            let repo = gh.get_ref();
            let parts: Vec<&str> = repo.split('/').collect();
            if parts.len() != 2 || parts.iter().any(|p| p.is_empty()) {
                return Err(cx
                    .err(gh, format!("`github` = \"{repo}\" is not `owner/name`"))
                    .hint(
                        "write the repository as owner/name, e.g. k8snetworkplumbingwg/multus-cni",
                    ));
            }
            Ok(UpstreamSource::GitHub { repo: repo.clone() })
        }
        (None, Some(git), None) => {
            let url = git.get_ref();
            if !(url.starts_with("https://")
                || url.starts_with("file://")
                || url.starts_with("http://"))
            {
                return Err(cx.err(
                    git,
                    format!("`git` = \"{url}\" is not an https://, file:// or (to this machine) http:// URL"),
                ));
            }
            Ok(UpstreamSource::Git { url: url.clone() })
        }
        (None, None, Some(helm)) => helm_source(cx, helm, u, table),
        _ => Err(cx.err_at(
            span,
            format!("{table} needs exactly one of `github`, `git` and `helm`"),
        )),
    }
}

/// `helm` and `chart`: a chart repository's URL (https, plain http to this
/// machine, or oci) and a chart's name in it.
fn helm_source(
    cx: &Ctx<'_>,
    helm: &Spanned<String>,
    u: &RawUpstream,
    table: &str,
) -> Result<UpstreamSource, ConfigError> {
    let repo = helm.get_ref().trim_end_matches('/');
    if let Err(why) = super::upstream::helm_url(repo) {
        return Err(cx
            .err(helm, format!("`helm` = \"{}\" {why}", helm.get_ref()))
            .hint("write the repository's https:// URL (its index.yaml's directory) or oci://registry/path"));
    }
    let Some(chart) = &u.chart else {
        return Err(cx
            .err(
                helm,
                format!("{table} with `helm` needs `chart`: the chart's name in the repository"),
            )
            .hint("e.g. chart = \"coredns\""));
    };
    let name = chart.get_ref();
    if name.is_empty() || name.contains(['/', '\\', ' ', '#']) || name.chars().any(char::is_control)
    {
        return Err(cx.err(chart, format!("`chart` = \"{name}\" is not a chart's name")));
    }
    for (key, set) in [
        ("ref", u.branch.is_some()),
        ("tag-pattern", u.tag_pattern.is_some()),
    ] {
        if set {
            return Err(cx
                .err(helm, format!("`{key}` cannot be used with `helm`: a chart's versions are its index's (or tags')"))
                .hint(format!("drop `{key}`; `version` and `track` choose the chart version")));
        }
    }
    Ok(UpstreamSource::Helm {
        repo: repo.to_owned(),
        chart: name.clone(),
    })
}

/// `version` split into the version and the manifest digest it pins
/// (`0.1.1@sha256:…`), which only an OCI chart has.
fn pinned_version(
    cx: &Ctx<'_>,
    version: &Spanned<String>,
    source: &UpstreamSource,
) -> Result<(String, Option<String>), ConfigError> {
    let text = version.get_ref();
    let Some((bare, digest)) = text.split_once('@') else {
        return Ok((text.clone(), None));
    };
    if !source.is_oci() {
        return Err(cx
            .err(
                version,
                format!("`version` = \"{text}\" pins a digest, which only an OCI chart has"),
            )
            .hint("drop the `@…` part, or name the chart's registry with helm = \"oci://…\""));
    }
    let hex = digest.strip_prefix("sha256:").unwrap_or_default();
    let is_digest = hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if bare.is_empty() || !is_digest {
        return Err(cx
            .err(
                version,
                format!("`version` = \"{text}\" is not `VERSION@sha256:<64 hex digits>`"),
            )
            .hint("write the chart version, `@`, then the manifest digest, e.g. \"0.1.1@sha256:1356…\""));
    }
    Ok((bare.to_owned(), Some(digest.to_owned())))
}

/// `track` read for `source`: for a chart, a bare version with parts left
/// out (`1.19`) means those parts are free (`1.19.x`), as `helm pull
/// --version` reads it; elsewhere as semver reads it.
fn track(text: &str, source: &UpstreamSource) -> Result<semver::VersionReq, semver::Error> {
    let bare = text.trim();
    let is_bare = !bare.is_empty()
        && bare
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    if matches!(source, UpstreamSource::Helm { .. }) && is_bare {
        return semver::VersionReq::parse(&format!("={bare}"));
    }
    semver::VersionReq::parse(text)
}

/// How the version is chosen, and the line findings about it point at.
fn selection(
    cx: &Ctx<'_>,
    span: &Range<usize>,
    u: &RawUpstream,
    table: &str,
) -> Result<(Selection, usize), ConfigError> {
    if let Some(branch) = &u.branch {
        let clash = [
            ("version", u.version.as_ref().map(|v| v.span())),
            ("track", u.track.as_ref().map(|v| v.span())),
            ("tag-pattern", u.tag_pattern.as_ref().map(|v| v.span())),
        ];
        if let Some((key, Some(at))) = clash.into_iter().find(|(_, at)| at.is_some()) {
            return Err(cx
                .err_at(
                    &at,
                    format!("`{key}` and `ref` cannot both be set: `ref` follows a branch"),
                )
                .hint(format!(
                    "keep `ref = \"{}\"` (the lock records its commit), or drop it and pin a version",
                    branch.get_ref()
                )));
        }
        if branch.get_ref().trim().is_empty() {
            return Err(cx.err(branch, "`ref` is empty"));
        }
        return Ok((Selection::Branch(branch.get_ref().clone()), cx.line(branch)));
    }
    let Some(version) = &u.version else {
        return Err(cx
            .err_at(
                span,
                format!("{table} needs `version` (or `ref` to follow a branch)"),
            )
            .hint("e.g. version = \"v1.15.10\""));
    };
    if version.get_ref().trim().is_empty() {
        return Err(cx.err(version, "`version` is empty"));
    }
    let line = cx.line(version);
    if is_commit(version.get_ref()) {
        let clash = [
            ("track", u.track.as_ref().map(|v| v.span())),
            ("tag-pattern", u.tag_pattern.as_ref().map(|v| v.span())),
        ];
        if let Some((key, Some(at))) = clash.into_iter().find(|(_, at)| at.is_some()) {
            return Err(cx
                .err_at(
                    &at,
                    format!("`{key}` needs release tags, but `version` is a commit"),
                )
                .hint(format!(
                    "drop `{key}`: a commit stays until `update --to` moves it"
                )));
        }
        return Ok((Selection::Commit, line));
    }
    let pattern = match &u.tag_pattern {
        Some(p) => Some(TagPattern::parse(p.get_ref()).map_err(|why| {
            cx.err(
                p,
                format!("`tag-pattern` = '{}' cannot be used: {why}", p.get_ref()),
            )
            .hint(r"write a regex whose `version` group is the version, e.g. '^v(?P<version>\d+\.\d+\.\d+)$'")
        })?),
        None => None,
    };
    Ok((Selection::Tags(pattern), line))
}

fn image(
    cx: &Ctx<'_>,
    span: Range<usize>,
    r: &RawImage,
    name: Option<String>,
) -> Result<Image, ConfigError> {
    let context = cx.inside("context", &r.context)?;
    let dockerfile = match &r.dockerfile {
        Some(d) => cx.written("dockerfile", d)?,
        None => format!("{context}/Dockerfile"),
    };
    for p in r.platforms.get_ref() {
        let parts: Vec<&str> = p.split('/').collect();
        if !(2..=3).contains(&parts.len()) || parts.iter().any(|s| s.is_empty()) {
            return Err(cx.err(
                &r.platforms,
                format!("platform `{p}` is not `os/arch[/variant]`"),
            ));
        }
    }
    if r.platforms.get_ref().is_empty() {
        return Err(cx.err(&r.platforms, "`platforms` is empty"));
    }
    let builder = r
        .builder
        .as_ref()
        .map(|b| b.get_ref().clone())
        .unwrap_or_else(|| "buildx".into());
    if !matches!(builder.as_str(), "buildx" | "buildah") {
        let at = r.builder.as_ref().map(|b| cx.line(b));
        return Err(ConfigError::at(
            cx.path,
            at,
            format!("`builder` = \"{builder}\" is not `buildx` or `buildah`"),
        ));
    }
    let go = match &r.go {
        Some(text) => match crate::go::Requirement::parse(text.get_ref()) {
            Some(go) => Some(go),
            None => {
                return Err(cx.err(
                    text,
                    format!(
                        "`go` = \"{}\" is not a Go minor such as \"1.26\" or a minimum such as \">=1.26\"",
                        text.get_ref()
                    ),
                ));
            }
        },
        None => None,
    };
    Ok(Image {
        name,
        repository: r.repository.get_ref().clone(),
        tag: r.tag.get_ref().clone(),
        context,
        dockerfile,
        platforms: r.platforms.get_ref().clone(),
        go,
        builder,
        provenance: r.provenance,
        line: cx.line_at(&span),
    })
}

/// One `[[pin]]`: the image it pins, and where.
pub(super) fn pin(cx: &Ctx<'_>, images: &[Image], p: &Spanned<RawPin>) -> Result<Pin, ConfigError> {
    let r = p.get_ref();
    let image = match &r.image {
        Some(name) => match images
            .iter()
            .find(|i| i.name.as_deref() == Some(name.get_ref()))
        {
            Some(i) => Some(i),
            None => {
                return Err(cx
                    .err(
                        name,
                        format!("`image` = \"{}\" names no [[image]]", name.get_ref()),
                    )
                    .hint("name the image in its [[image]] table, or drop `image =`"));
            }
        },
        None if images.len() > 1 => {
            return Err(cx
                .err(p, "this [[pin]] needs `image =`: there are several images")
                .hint(format!(
                    "say which: {}",
                    images
                        .iter()
                        .filter_map(|i| i.name.as_deref())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
        }
        None => images.first(),
    };
    let yaml = match &r.yaml {
        Some(y) => Some(yaml(cx, y)?),
        None => None,
    };
    let repository = match (&r.repository, &yaml, image) {
        (Some(repository), _, _) => repository.get_ref().clone(),
        (None, Some(_), Some(image)) => image.repository.clone(),
        (None, Some(_), None) => {
            return Err(cx
                .err(
                    p,
                    "a [[pin]] with `yaml` pins an [image], and there is none",
                )
                .hint("declare the [image] it pins"));
        }
        (None, None, _) => {
            return Err(cx
                .err(p, "a [[pin]] needs `repository` (or `yaml` keys to write)")
                .hint("name the repository whose image: fields it pins"));
        }
    };
    if let (Some(_), Some(replaces)) = (&yaml, &r.replaces) {
        let at = replaces.first().map_or_else(|| cx.line(p), |s| cx.line(s));
        return Err(ConfigError::at(
            cx.path,
            Some(at),
            "`replaces` is for image: fields; a `yaml` pin writes its keys",
        )
        .hint("drop `replaces`, or `yaml`"));
    }
    Ok(Pin {
        image: image.and_then(|i| i.name.clone()),
        file: cx.written("file", &r.file)?,
        repository,
        replaces: r
            .replaces
            .iter()
            .flatten()
            .map(|s| s.get_ref().clone())
            .collect(),
        yaml,
        line: cx.line(p),
    })
}

fn yaml(cx: &Ctx<'_>, raw: &Spanned<RawYaml>) -> Result<YamlPin, ConfigError> {
    let pin = match raw.get_ref() {
        RawYaml::Joined(key) => YamlPin::Joined(key.clone()),
        RawYaml::Split(keys) => YamlPin::Split {
            repository: keys.repository.clone(),
            tag: keys.tag.clone(),
            digest: keys.digest.clone(),
        },
    };
    let keys = pin.keys();
    if let Some(bad) = keys
        .iter()
        .find(|k| k.is_empty() || k.split('.').any(str::is_empty))
    {
        return Err(cx
            .err(
                raw,
                format!("`yaml` key \"{bad}\" is not a dotted key path"),
            )
            .hint("e.g. yaml = \"global.images.kubeovn.tag\""));
    }
    if let Some(i) = (1..keys.len()).find(|&i| keys[..i].contains(&keys[i])) {
        return Err(cx.err(raw, format!("`yaml` names the key \"{}\" twice", keys[i])));
    }
    Ok(pin)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::config::{Config, ConfigError, Selection, YamlPin};

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(&std::env::temp_dir(), Path::new("vendor.toml"), text)
    }

    const TWO: &str = "\
[[upstream]]
name = \"chart\"
github = \"o/chart\"
version = \"v1.0.0\"

[[upstream]]
name = \"operator\"
git = \"file:///op\"
version = \"v2.0.0\"
";

    #[test]
    fn an_oci_charts_version_may_pin_its_manifest_digest() {
        let digest = format!("sha256:{}", "ab".repeat(32));
        let chart = |helm: &str, version: &str| {
            parse(&format!(
                "[upstream]\nhelm = \"{helm}\"\nchart = \"k\"\nversion = \"{version}\"\n"
            ))
        };
        let c = chart("oci://ghcr.io/o/charts", &format!("0.1.1@{digest}")).unwrap();
        let up = &c.upstreams[0];
        assert_eq!(up.version.as_deref(), Some("0.1.1"));
        assert_eq!(up.pin.as_deref(), Some(digest.as_str()));
        assert_eq!(up.written_version(), Some(format!("0.1.1@{digest}")));
        let e = chart("https://charts.example", &format!("0.1.1@{digest}")).unwrap_err();
        assert!(e.message.contains("only an OCI chart"), "{e}");
        for bad in ["0.1.1@sha256:abc", "@sha256:x", "0.1.1@md5:00"] {
            let e = chart("oci://ghcr.io/o/charts", bad).unwrap_err();
            assert_eq!(e.line, Some(4), "{e}");
            assert!(e.message.contains("is not `VERSION@sha256:"), "{bad}: {e}");
        }
    }

    #[test]
    fn several_upstreams_are_named_and_entries_say_which() {
        let c = parse(&format!(
            "{TWO}[[vendor]]\nupstream = \"operator\"\nfrom = \"charts/\"\nto = \"a/\"\n\
             [[vendor]]\nupstream = \"chart\"\nfrom = \"charts/\"\nto = \"b/\"\n"
        ))
        .unwrap();
        assert_eq!(c.upstreams.len(), 2);
        assert_eq!(
            c.upstream(Some("operator")).version.as_deref(),
            Some("v2.0.0")
        );
        assert_eq!(c.vendor[0].pristine(), "upstream/operator/charts/");
        assert_eq!(c.vendor[1].pristine(), "upstream/chart/charts/");

        let e = parse(&format!("{TWO}[[vendor]]\nfrom = \"a\"\nto = \"b\"\n")).unwrap_err();
        assert_eq!(e.line, Some(10), "{e}");
        assert!(e.message.contains("needs `upstream =`"), "{e}");
        assert!(e.hint.unwrap().contains("chart, operator"));
        let e = parse(&format!(
            "{TWO}[[rewrite]]\nupstream = \"nope\"\nfile = \"f\"\ndockerfile-arg = \"V\"\nwith = \"{{version}}\"\n"
        ))
        .unwrap_err();
        assert_eq!(e.line, Some(11), "{e}");
        assert!(e.message.contains("names no [[upstream]]"), "{e}");

        let unnamed = TWO.replace("name = \"operator\"\n", "");
        let e = parse(&unnamed).unwrap_err();
        assert_eq!(e.line, Some(6), "{e}");
        assert!(e.message.contains("needs a `name`"), "{e}");
        let twice = TWO.replace("\"operator\"", "\"chart\"");
        assert!(parse(&twice).unwrap_err().message.contains("duplicate"));
        let slash = TWO.replace("\"operator\"", "\"a/b\"");
        assert!(
            parse(&slash)
                .unwrap_err()
                .message
                .contains("not a plain name")
        );
    }

    #[test]
    fn ref_version_and_tag_pattern_are_checked_at_their_line() {
        let up = "[upstream]\ngithub = \"o/r\"\n";
        let c = parse(&format!("{up}ref = \"main\"\n")).unwrap();
        assert!(matches!(&c.upstreams[0].selection, Selection::Branch(b) if b == "main"));
        assert_eq!(c.upstreams[0].version_line, 3);

        let e = parse(&format!("{up}ref = \"main\"\nversion = \"v1\"\n")).unwrap_err();
        assert_eq!(e.line, Some(4), "{e}");
        assert!(
            e.message.contains("`version` and `ref` cannot both be set"),
            "{e}"
        );
        let e = parse(&format!("{up}ref = \"main\"\ntrack = \">=1\"\n")).unwrap_err();
        assert_eq!(e.line, Some(4), "{e}");

        let sha = "facbc36d2b6b1f3d9d4b1f0b0f5a7b7e0d6c9a11";
        let c = parse(&format!("{up}version = \"{sha}\"\n")).unwrap();
        assert!(matches!(c.upstreams[0].selection, Selection::Commit));
        let e = parse(&format!("{up}version = \"{sha}\"\ntrack = \">=1\"\n")).unwrap_err();
        assert_eq!(e.line, Some(4), "{e}");
        assert!(e.message.contains("`version` is a commit"), "{e}");

        let e = parse(&format!("{up}version = \"v1\"\ntag-pattern = '^v(.+'\n")).unwrap_err();
        assert_eq!(e.line, Some(4), "{e}");
        assert!(e.message.contains("cannot be used"), "{e}");
        let e = parse(&format!("{up}version = \"v1\"\ntag-pattern = '^v(.+)$'\n")).unwrap_err();
        assert_eq!(e.line, Some(4), "{e}");
        assert!(e.message.contains("no `(?P<version>"), "{e}");
        let e = parse(&format!(
            "{up}version = \"v1.0.0\"\ntag-pattern = '^edge-(?P<version>.+)$'\n"
        ))
        .unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.message.contains("not a release by `tag-pattern`"), "{e}");

        let e = parse(up).unwrap_err();
        assert_eq!(e.line, Some(1), "{e}");
        assert!(e.message.contains("needs `version`"), "{e}");
    }

    #[test]
    fn images_and_yaml_pins() {
        let image = |name: &str, repo: &str| {
            format!(
                "[[image]]\nname = \"{name}\"\nrepository = \"{repo}\"\ntag = \"v1\"\ncontext = \"c\"\nplatforms = [\"linux/amd64\"]\n"
            )
        };
        let base = format!(
            "[upstream]\ngithub = \"o/r\"\nversion = \"v1\"\n{}{}",
            image("a", "r/a"),
            image("b", "r/b")
        );
        let c = parse(&format!(
            "{base}[[pin]]\nimage = \"b\"\nfile = \"values.yaml\"\nyaml = {{ repository = \"b.repository\", tag = \"b.tag\", digest = \"b.digest\" }}\n\
             [[pin]]\nimage = \"a\"\nfile = \"values.yaml\"\nyaml = \"a.tag\"\n"
        ))
        .unwrap();
        assert_eq!(c.pins[0].repository, "r/b");
        assert_eq!(c.pins[0].image.as_deref(), Some("b"));
        assert_eq!(
            c.pins[0].yaml.as_ref().unwrap().keys(),
            ["b.repository", "b.tag", "b.digest"]
        );
        assert_eq!(c.pins[1].yaml, Some(YamlPin::Joined("a.tag".into())));
        assert_eq!(c.image(Some("b")).unwrap().repository, "r/b");

        let line = base.lines().count() + 1;
        let e = parse(&format!(
            "{base}[[pin]]\nfile = \"v.yaml\"\nyaml = \"a.tag\"\n"
        ))
        .unwrap_err();
        assert_eq!(e.line, Some(line), "{e}");
        assert!(e.message.contains("needs `image =`"), "{e}");
        let e = parse(&format!(
            "{base}[[pin]]\nimage = \"c\"\nfile = \"v.yaml\"\nyaml = \"a.tag\"\n"
        ))
        .unwrap_err();
        assert!(e.message.contains("names no [[image]]"), "{e}");
        let e = parse(&format!(
            "{base}[[pin]]\nimage = \"a\"\nfile = \"v.yaml\"\nyaml = \"a..tag\"\n"
        ))
        .unwrap_err();
        assert!(e.message.contains("not a dotted key path"), "{e}");
        let e = parse(&format!(
            "{base}[[pin]]\nimage = \"a\"\nfile = \"v.yaml\"\nyaml = {{ repository = \"x\", tag = \"x\" }}\n"
        ))
        .unwrap_err();
        assert!(e.message.contains("twice"), "{e}");
        let e = parse(&format!(
            "{base}[[pin]]\nimage = \"a\"\nfile = \"v.yaml\"\nyaml = {{ tag = \"x\", colour = 1 }}\n"
        ))
        .unwrap_err();
        assert_eq!(e.line, Some(line + 3), "{e}");
        let e = parse("[upstream]\ngithub = \"o/r\"\nversion = \"v1\"\n[[pin]]\nfile = \"v.yaml\"\nyaml = \"a\"\n")
            .unwrap_err();
        assert!(e.message.contains("there is none"), "{e}");
    }
}
