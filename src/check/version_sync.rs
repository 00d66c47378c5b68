//! `version-sync`: the locked version, vendor.toml's `version` and every
//! `[[rewrite]]` result name the same upstream release.
//!
//! The lock says what was vendored; vendor.toml says what the package means
//! to vendor; the rewrites carry the version into the files that name it
//! (`{version}-thick` image tags, `ARG VERSION=` of the image recipe). The
//! Dockerfile ARG is read by parsing the Dockerfile; a `lines-containing`
//! rewrite is read line by line, its `with` template turned into a pattern
//! whose `{version}` part must be the locked version. Lines that are pin
//! sites hold a pinned image reference instead, and are `image-pin`'s.

use std::cell::OnceCell;

use regex::Regex;

use super::{Check, Finding, Id, Input, Sink};
use crate::config::{Config, Pin, Placeholders, Rewrite, RewriteKind};
use crate::dockerfile::{digest_suffix, kept_digest};
use crate::error::Result;
use crate::render::{Stamp, pin};

/// `version-sync`.
pub const VERSION_SYNC: Id = Id {
    name: "version-sync",
    doc: "\
### What
The locked upstream version, vendor.toml's `[upstream] version` and a
`[[rewrite]]` result disagree: an `ARG VERSION=` or a `{version}-thick` tag
names another release, or still holds the text the rewrite replaces; or an
OCI chart's `version = \"0.1.1@sha256:…\"` pins another manifest than the
lock vendored.

### Why
The image is built from the source at `ARG VERSION` and the chart renders the
manifest of the locked version: when they differ, the chart runs a binary
from another release than the manifest it ships, which is how flags and RBAC
rules go missing at runtime.

### Example
```text
version-sync
  images/multus-cni/Dockerfile:16: error: `ARG VERSION=v4.2.4`, but the locked version is v4.3.0 (fix: run `revendor render` to rewrite it)
```
",
};

pub(super) const CHECK: Check = Check {
    name: "version_sync",
    ids: &[VERSION_SYNC],
    online_only: false,
    run: check,
};

/// A version pinned by digest (`0.1.1@sha256:…`) whose digest is not the
/// manifest the lock vendored.
fn pins(input: &Input<'_>, sink: &mut Sink) {
    for up in &input.config.upstreams {
        let (Some(pin), Some(locked)) = (&up.pin, input.lock.upstream(up.name.as_deref())) else {
            continue;
        };
        let Some(sha) = &locked.archive_sha256 else {
            continue;
        };
        if up.version.as_deref() == Some(locked.version.as_str())
            && pin.strip_prefix("sha256:") != Some(sha.as_str())
        {
            sink.push(
                Finding::error(
                    VERSION_SYNC.name,
                    "vendor.toml",
                    up.version_line,
                    format!(
                        "vendor.toml pins {} to manifest {pin}, but the lock vendored manifest sha256:{sha}",
                        locked.version
                    ),
                )
                .fix("run `revendor update` to vendor the pinned manifest"),
            );
        }
    }
}

/// In order: vendor.toml's versions, their digest pins, then each
/// `[[rewrite]]` result.
fn check(input: &Input<'_>, sink: &mut Sink) -> Result<()> {
    versions_locked(input, sink);
    pins(input, sink);
    for rewrite in &input.config.rewrites {
        // An upstream the lock lacks is lock-integrity's to report.
        if input.lock.upstream(rewrite.upstream.as_deref()).is_none() {
            continue;
        }
        match &rewrite.kind {
            RewriteKind::DockerfileArg { name } => arg_rewritten(input, rewrite, name, sink)?,
            RewriteKind::Lines { needle, replace } => {
                lines_rewritten(input, rewrite, needle, replace, sink)?
            }
        }
    }
    Ok(())
}

/// Each upstream's `version` in vendor.toml is the one the lock vendored.
fn versions_locked(input: &Input<'_>, sink: &mut Sink) {
    for up in &input.config.upstreams {
        let (Some(version), Some(locked)) = (&up.version, input.lock.version(up.name.as_deref()))
        else {
            continue;
        };
        if version != locked {
            let to = match &up.name {
                Some(name) => format!("{name}={version}"),
                None => version.clone(),
            };
            sink.push(
                Finding::error(
                    VERSION_SYNC.name,
                    "vendor.toml",
                    up.version_line,
                    format!("vendor.toml says version {version}, but the lock vendored {locked}"),
                )
                .fix(format!(
                    "set `version = \"{locked}\"`, or run `revendor update --to {to}`"
                )),
            );
        }
    }
}

/// A `dockerfile-arg` rewrite: every default of ARG `name` is the locked
/// version (a digest it pins kept), and there is at least one.
fn arg_rewritten(input: &Input<'_>, rewrite: &Rewrite, name: &str, sink: &mut Sink) -> Result<()> {
    let id = VERSION_SYNC.name;
    let expected = rewrite.value(input.stamp.values(rewrite.upstream.as_deref()));
    let Some((_, df)) = input.dockerfile(&rewrite.file)? else {
        sink.push(missing(rewrite));
        return Ok(());
    };
    let mut any = false;
    for arg in df.arg_values(name) {
        any = true;
        let value = arg.value.as_deref().unwrap_or_default();
        if value != kept_digest(value, &expected) {
            // A pinned value's new digest is read online (issue 20).
            let fix = match digest_suffix(value) {
                Some(_) => "run `revendor update` online: it resolves the new tag's digest",
                None => "run `revendor render` to rewrite it",
            };
            sink.push(
                Finding::error(
                    id,
                    &rewrite.file,
                    arg.line,
                    format!("`ARG {name}={value}`, but the locked version gives `{expected}`"),
                )
                .fix(fix),
            );
        }
    }
    if !any {
        sink.push(
            Finding::error(
                id,
                &rewrite.file,
                1,
                format!(
                    "no `ARG {name}=` carries the version (the [[rewrite]] at vendor.toml:{} has nothing to set)",
                    rewrite.line
                ),
            )
            .fix(format!("declare `ARG {name}={expected}` in the build stage")),
        );
    }
    Ok(())
}

/// A `lines-containing` rewrite: no line containing `needle` (and not a pin
/// site) still holds `replace`, nor names another version than the locked
/// one where its `with` template puts the version.
fn lines_rewritten(
    input: &Input<'_>,
    rewrite: &Rewrite,
    needle: &str,
    replace: &str,
    sink: &mut Sink,
) -> Result<()> {
    let values = input.stamp.values(rewrite.upstream.as_deref());
    let expected = rewrite.value(values);
    let Some(text) = input.text(&rewrite.file)? else {
        // A missing rendered file is render-drift's to report.
        if input.config.vendor_rendering(&rewrite.file).is_none() {
            sink.push(missing(rewrite));
        }
        return Ok(());
    };
    let pin_lines = pin_lines(input, &rewrite.file, &text)?;
    let pattern = pattern(&rewrite.with, values);
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        if !line.contains(needle) || pin_lines.contains(&number) {
            continue;
        }
        if line.contains(replace) {
            sink.push(
                Finding::error(
                    VERSION_SYNC.name,
                    &rewrite.file,
                    number,
                    format!("still says `{replace}` where the rewrite gives `{expected}`"),
                )
                .fix("run `revendor render`"),
            );
            continue;
        }
        let Some(pattern) = &pattern else {
            continue;
        };
        for found in pattern.versions(line) {
            if found != pattern.wanted {
                sink.push(other_version(rewrite, values, number, found, &expected));
            }
        }
    }
    Ok(())
}

/// The finding for line `number` of a rewritten file naming version `found`
/// where the locked one gives `expected`; the message shows the rewrite's
/// result as `found` made it.
fn other_version(
    rewrite: &Rewrite,
    values: &Placeholders,
    number: usize,
    found: String,
    expected: &str,
) -> Finding {
    let named = Placeholders {
        version: found.clone(),
        semver: found,
        ..values.clone()
    };
    Finding::error(
        VERSION_SYNC.name,
        &rewrite.file,
        number,
        format!(
            "names `{}`, but the locked version gives `{expected}`",
            rewrite.value(&named)
        ),
    )
    .fix("run `revendor render`")
}

fn missing(rewrite: &Rewrite) -> Finding {
    Finding::error(
        VERSION_SYNC.name,
        &rewrite.file,
        1,
        format!(
            "`{}` is missing (the [[rewrite]] at vendor.toml:{} writes it)",
            rewrite.file, rewrite.line
        ),
    )
    .fix("restore the file, or remove the [[rewrite]]")
}

/// Lines of `file` (whose text is `text`) that are pin sites of some
/// `[[pin]]` on it. A file without diff3 markers is read through the parse
/// the other checks share; one with them is read as `render` reads it, every
/// side of a conflict a branch.
fn pin_lines(input: &Input<'_>, file: &str, text: &str) -> Result<Vec<usize>> {
    let pins: Vec<&Pin> = input
        .config
        .pins
        .iter()
        .filter(|p| p.file == file)
        .collect();
    if pins.is_empty() {
        return Ok(Vec::new());
    }
    let markers = ["<<<<<<<", "|||||||", "=======", ">>>>>>>"];
    if markers.iter().any(|m| text.contains(m)) {
        return Ok(pins
            .iter()
            // An unparseable file has no pin sites here; `image-pin` reports it.
            .flat_map(|p| pin::pin_sites(text, p).unwrap_or_default())
            .map(|s| s.line)
            .collect());
    }
    let Some(parsed) = input.manifest(file)? else {
        return Ok(Vec::new());
    };
    let Ok(manifest) = parsed.as_ref() else {
        return Ok(Vec::new());
    };
    Ok(manifest
        .images()
        .into_iter()
        .filter(|field| {
            pins.iter()
                .any(|p| p.matches(pin::repository_of(&field.value)))
        })
        .map(|field| field.line)
        .collect())
}

/// A version as tags spell it: `v4.3.0`, `4.3`, `v4.4.0-rc.1`.
const VERSION: &str = r"(v?[0-9]+(?:\.[0-9]+)+(?:-[0-9A-Za-z.]+)?)";

/// The `with` template as a pattern whose one group is its first
/// `{version}` or `{semver}`, with the value that group must hold; the
/// other placeholders stand for their locked `values`.
///
/// A match holds the template's fixed text on both sides of the version, so
/// a line without both is not searched, and the pattern is compiled on the
/// first line that has them (issue 23: compiling it was a tenth of an
/// offline check whose lines never needed it).
struct VersionPattern {
    /// The fixed text before the version, after it, and the version wanted.
    before: String,
    after: String,
    wanted: String,
    regex: OnceCell<Option<Regex>>,
}

/// The template's [`VersionPattern`]; `None` when it uses neither
/// `{version}` nor `{semver}`.
fn pattern(with: &str, values: &Placeholders) -> Option<VersionPattern> {
    let (at, token, wanted) = [("{version}", &values.version), ("{semver}", &values.semver)]
        .into_iter()
        .filter_map(|(token, wanted)| Some((with.find(token)?, token, wanted)))
        .min_by_key(|(at, _, _)| *at)?;
    let (before, after) = (&with[..at], &with[at + token.len()..]);
    let fixed = |text: &str| values.fill(text).replace(token, "");
    Some(VersionPattern {
        before: fixed(before),
        after: fixed(after),
        wanted: wanted.clone(),
        regex: OnceCell::new(),
    })
}

impl VersionPattern {
    /// The compiled pattern, when `line` may hold a match.
    fn regex_for(&self, line: &str) -> Option<&Regex> {
        if !line.contains(&self.before) || !line.contains(&self.after) {
            return None;
        }
        let compile = || {
            let (before, after) = (regex::escape(&self.before), regex::escape(&self.after));
            Regex::new(&format!("{before}{VERSION}{after}")).ok()
        };
        self.regex.get_or_init(compile).as_ref()
    }

    /// Every version the pattern finds in `line`, skipping matches glued to
    /// a longer word on their left (`xv4.3.0-thick`).
    fn versions(&self, line: &str) -> Vec<String> {
        let Some(regex) = self.regex_for(line) else {
            return Vec::new();
        };
        regex
            .captures_iter(line)
            .filter_map(|c| {
                let whole = c.get(0)?;
                let glued = line[..whole.start()]
                    .chars()
                    .next_back()
                    .is_some_and(|ch| ch.is_ascii_alphanumeric() || ch == '.');
                (!glued).then(|| c.get(1).map(|v| v.as_str().to_owned()))?
            })
            .collect()
    }

    /// `line` with every match set to `value`.
    fn replace_all(&self, line: String, value: &str) -> String {
        match self.regex_for(&line) {
            Some(regex) => regex
                .replace_all(&line, regex::NoExpand(value))
                .into_owned(),
            None => line,
        }
    }
}

/// `text` with every `lines-containing` rewrite of `file` redone with the
/// locked `stamp`: the text it replaces and any stale `{version}` result
/// become the locked value. `render-drift` compares this, so that a stale
/// version is reported once, here.
pub(super) fn normalize(config: &Config, file: &str, text: &str, stamp: &Stamp) -> String {
    let mut out = text.to_owned();
    for rewrite in config.rewrites.iter().filter(|r| r.file == file) {
        let RewriteKind::Lines { needle, replace } = &rewrite.kind else {
            continue;
        };
        let values = stamp.values(rewrite.upstream.as_deref());
        let value = rewrite.value(values);
        let pattern = pattern(&rewrite.with, values);
        out = out
            .split_inclusive('\n')
            .map(|line| {
                if !line.contains(needle.as_str()) {
                    return line.to_owned();
                }
                let line = line.replace(replace.as_str(), &value);
                match &pattern {
                    Some(p) => p.replace_all(line, &value),
                    None => line,
                }
            })
            .collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn at(version: &str) -> Placeholders {
        Placeholders {
            version: version.into(),
            semver: version.trim_start_matches('v').into(),
            commit: Some("c0ffee".into()),
            app_version: None,
        }
    }

    #[test]
    fn the_template_becomes_a_version_pattern() {
        let p = pattern("{version}-thick", &at("v4.3.0")).unwrap();
        assert_eq!(p.wanted, "v4.3.0");
        assert_eq!(
            p.versions("command: /usr/src/multus-cni/bin"),
            [] as [String; 0]
        );
        assert!(p.regex.get().is_none(), "no line needed it yet");
        let line = "image: ghcr.io/x/multus-cni:v4.2.4-thick # was v4.3.0-thick, xv9.9-thick";
        assert_eq!(p.versions(line), ["v4.2.4", "v4.3.0"]);
        assert_eq!(p.versions("tag: v4.4.0-rc.1-thick"), ["v4.4.0-rc.1"]);
        assert!(pattern("static", &at("v1")).is_none());
        let p = pattern("{semver}@{commit}", &at("v4.3.0")).unwrap();
        assert_eq!(p.wanted, "4.3.0");
        assert_eq!(p.versions("x: 4.2.0@c0ffee"), ["4.2.0"]);
        assert_eq!(p.versions("x: 4.2.0@beef"), [] as [String; 0]);
    }

    #[test]
    fn normalize_redoes_line_rewrites() {
        let config = Config::parse(
            Path::new("."),
            Path::new("vendor.toml"),
            "[upstream]\ngithub = \"o/r\"\nversion = \"v4.3.0\"\n\
             [[vendor]]\nfrom = \"a.yml\"\nto = \"t.yml\"\n\
             [[rewrite]]\nfile = \"t.yml\"\nlines-containing = \"multus-cni\"\nreplace = \"snapshot-thick\"\nwith = \"{version}-thick\"\n",
        )
        .unwrap();
        let text =
            "a: multus-cni:snapshot-thick\nb: multus-cni:v4.2.4-thick\nc: other:v4.2.4-thick\n";
        let stamp = Stamp::new(vec![(None, at("v4.3.0"))], Vec::new());
        assert_eq!(
            normalize(&config, "t.yml", text, &stamp),
            "a: multus-cni:v4.3.0-thick\nb: multus-cni:v4.3.0-thick\nc: other:v4.2.4-thick\n"
        );
    }
}
