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

use regex::Regex;

use super::{Check, Finding, Id, Input, Sink};
use crate::config::{Config, Placeholders, Rewrite, RewriteKind};
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
    let pin_lines = pin_lines(input.config, &rewrite.file, &text);
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
        let Some((pattern, wanted)) = &pattern else {
            continue;
        };
        for found in versions(pattern, line) {
            if found != *wanted {
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

/// Lines of `file` that are pin sites of some `[[pin]]` on it.
fn pin_lines(config: &Config, file: &str, text: &str) -> Vec<usize> {
    config
        .pins
        .iter()
        .filter(|p| p.file == file)
        // An unparseable file has no pin sites here; `image-pin` reports it.
        .flat_map(|p| pin::pin_sites(text, p).unwrap_or_default())
        .map(|s| s.line)
        .collect()
}

/// A version as tags spell it: `v4.3.0`, `4.3`, `v4.4.0-rc.1`.
const VERSION: &str = r"(v?[0-9]+(?:\.[0-9]+)+(?:-[0-9A-Za-z.]+)?)";

/// The `with` template as a pattern whose one group is its first
/// `{version}` or `{semver}`, with the value that group must hold; the
/// other placeholders stand for their locked `values`. `None` when the
/// template uses neither.
fn pattern(with: &str, values: &Placeholders) -> Option<(Regex, String)> {
    let (at, token, wanted) = [("{version}", &values.version), ("{semver}", &values.semver)]
        .into_iter()
        .filter_map(|(token, wanted)| Some((with.find(token)?, token, wanted)))
        .min_by_key(|(at, _, _)| *at)?;
    let (before, after) = (&with[..at], &with[at + token.len()..]);
    let rest = |text: &str| regex::escape(&values.fill(text).replace(token, ""));
    let regex = Regex::new(&format!("{}{VERSION}{}", rest(before), rest(after))).ok()?;
    Some((regex, wanted.clone()))
}

/// Every version `pattern` finds in `line`, skipping matches glued to a
/// longer word on their left (`xv4.3.0-thick`).
fn versions(pattern: &Regex, line: &str) -> Vec<String> {
    pattern
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
        let pattern = pattern(&rewrite.with, values).map(|(p, _)| p);
        out = out
            .split_inclusive('\n')
            .map(|line| {
                if !line.contains(needle.as_str()) {
                    return line.to_owned();
                }
                let line = line.replace(replace.as_str(), &value);
                match &pattern {
                    Some(p) => p.replace_all(&line, regex::NoExpand(&value)).into_owned(),
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
        let (p, wanted) = pattern("{version}-thick", &at("v4.3.0")).unwrap();
        assert_eq!(wanted, "v4.3.0");
        let line = "image: ghcr.io/x/multus-cni:v4.2.4-thick # was v4.3.0-thick, xv9.9-thick";
        assert_eq!(versions(&p, line), ["v4.2.4", "v4.3.0"]);
        assert_eq!(versions(&p, "tag: v4.4.0-rc.1-thick"), ["v4.4.0-rc.1"]);
        assert!(pattern("static", &at("v1")).is_none());
        let (p, wanted) = pattern("{semver}@{commit}", &at("v4.3.0")).unwrap();
        assert_eq!(wanted, "4.3.0");
        assert_eq!(versions(&p, "x: 4.2.0@c0ffee"), ["4.2.0"]);
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
