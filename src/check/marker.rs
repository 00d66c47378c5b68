//! `marker:<name>`: a `# <key>: <value>` comment that vouches for a pinned
//! value is present, agrees with what the platform ships, and (online) is
//! true.
//!
//! Offline, per `[[marker]]`:
//! 1. the marker line exists exactly once in its (parsed) Dockerfile and has
//!    a value;
//! 2. the expected value is read (`expect.value`, or the YAML key of
//!    `expect.file` by parsing, `strip-digest` dropping `@sha256:…`) and is
//!    non-empty;
//! 3. both are compared.
//!
//! Online, the marker's resolver says which CNI plugins version the release
//! in the marker ships (Talos: its Makefile's `PKGS` names a siderolabs/pkgs
//! revision whose Pkgfile has `vars.cni_version`; kube-ovn: `ARG
//! CNI_PLUGINS_VERSION=` of its `dist/images/Dockerfile.base`), fetched from
//! `REVENDOR_RAW_URL` through `github` with conditional requests; it must equal the ARG the
//! marker's `pin` names. A file whose layout changed is reported as such,
//! never guessed around.
//!
//! With `--fix` (online), a marker behind its expected release is moved when
//! that release ships the pinned CNI plugins version; when it ships another,
//! moving the marker would vouch for a mismatch, so the finding explains the
//! decision a person must make instead.

use super::{Check, Finding, Id, Input, Sink, unreachable};
use crate::config::{Expect, Marker};
use crate::dockerfile::{Dockerfile, MarkerLine, rewrite_marker};
use crate::error::Result;
use crate::github::{self, Rev};
use crate::marker::{self, PkgsRef};
use crate::paths;

/// `marker:<name>`.
pub const MARKER: Id = Id {
    name: "marker:<name>",
    doc: "\
### What
The `# <key>: <value>` marker of a `[[marker]]` is missing, duplicated or
empty, the Dockerfile ARG it vouches for (`pin`) is missing or empty, or the
marker differs from its expected value (`expect`: a literal, or a key of a
YAML file such as the Talos installer profile). With `--online`, the release
the marker names ships another CNI plugins version than the Dockerfile ARG the
marker vouches for (`pin`), or its files no longer have the layout the
resolver reads.

### Why
The marker records that someone compared the image's CNI plugins with what
the platform ships. When the platform moves (a new Talos release, a new
kube-ovn) and nobody compares again, the plugins that multus stages on every
node and the ones Talos installs differ, and each install overwrites the
other's: the node's plugins flap between two versions.

### Example
```text
marker:talos
  images/multus-cni/Dockerfile:9: error: the marker says v1.13.5, but ../../core/talos/images/talos/profiles/installer.yaml:6 says v1.13.6 (fix: run `revendor check --online --fix`: it moves the marker when Talos v1.13.6 ships the pinned CNI plugins version, and explains the decision when it does not)
```
",
};

pub(super) const CHECK: Check = Check {
    name: "marker",
    ids: &[MARKER],
    online_only: false,
    run: check,
};

/// What a marker must equal, and where that was read.
struct Expected {
    value: String,
    file: String,
    line: usize,
}

/// What a resolver found for a release.
pub(super) enum Resolution {
    /// The CNI plugins version it ships, and how it was found.
    Found {
        /// The version, e.g. `v1.9.1`.
        cni: String,
        /// `Talos v1.13.6 → pkgs v1.13.0-43-gd8c80cc → cni v1.9.1`.
        chain: String,
    },
    /// Why there is no answer that is not a guess.
    Unknown(String),
}

fn check(input: &Input<'_>, sink: &mut Sink) -> Result<()> {
    for m in &input.config.markers {
        check_marker(input, m, sink)?;
    }
    Ok(())
}

/// The ARG a marker vouches for, as the Dockerfile declares it: its name,
/// its default and that default's line.
type Pin<'a> = (&'a str, String, usize);

/// One `[[marker]]`, step by step: the Dockerfile, its marker line, the ARG
/// it vouches for, the expected value, the mismatch (moved with `--fix`),
/// and online what the vouched-for release ships. Each step that finds a
/// fault reports it and ends the marker's check.
fn check_marker(input: &Input<'_>, m: &Marker, sink: &mut Sink) -> Result<()> {
    let Some((text, df)) = input.dockerfile(&m.file)? else {
        sink.push(
            Finding::error(
                MARKER.member(&m.name),
                &m.file,
                1,
                format!("`{}` is missing", m.file),
            )
            .fix(format!(
                "restore it, or fix the [[marker]] at vendor.toml:{}",
                m.line
            )),
        );
        return Ok(());
    };
    let Some(line) = marker_line(m, &df, sink) else {
        return Ok(());
    };
    if !pin_has_value(m, &df, sink) {
        return Ok(());
    }
    let Some(expected) = expected_value(input, m, sink)? else {
        return Ok(());
    };
    let pin = m
        .pin
        .as_deref()
        .and_then(|name| pinned(&df, name).map(|(v, l)| (name, v, l)));
    let Some((vouched, resolved)) =
        settle_mismatch(input, m, &text, &line, &expected, pin.as_ref(), sink)?
    else {
        return Ok(());
    };
    confirm_shipped(input, m, line.line, &vouched, resolved, pin.as_ref(), sink)
}

/// The marker's one `# <key>: <value>` line; `None` after the finding when
/// it is missing, repeated or has no value.
fn marker_line(m: &Marker, df: &Dockerfile, sink: &mut Sink) -> Option<MarkerLine> {
    let id = MARKER.member(&m.name);
    let lines = df.markers(&m.key);
    let finding = match lines.as_slice() {
        [] => Finding::error(
            &id,
            &m.file,
            1,
            format!("no `# {}: <value>` marker line", m.key),
        )
        .fix(format!(
            "add `# {}: <release>` after comparing by hand",
            m.key
        )),
        [one] if one.value.is_empty() => Finding::error(
            &id,
            &m.file,
            one.line,
            format!("the `{}` marker has no value", m.key),
        )
        .fix(format!(
            "write the release it was compared with after `{}:`",
            m.key
        )),
        [_] => return lines.into_iter().next(),
        [_, second, ..] => {
            let at: Vec<String> = lines.iter().map(|l| l.line.to_string()).collect();
            Finding::error(
                &id,
                &m.file,
                second.line,
                format!(
                    "the `{}` marker appears {} times (lines {}); it must appear once",
                    m.key,
                    lines.len(),
                    at.join(", ")
                ),
            )
            .fix("keep one marker line")
        }
    };
    sink.push(finding);
    None
}

/// Whether the ARG the marker vouches for (`pin`), if it names one, has a
/// value; `false` after the finding. An empty or missing ARG vouches for
/// nothing (issue 13: `ARG CNI_PLUGINS_VERSION=` passed).
fn pin_has_value(m: &Marker, df: &Dockerfile, sink: &mut Sink) -> bool {
    let Some(name) = &m.pin else {
        return true;
    };
    let (at, message) = match pinned(df, name) {
        None => (
            1,
            format!(
                "no `ARG {name}=<value>` holds the value the `{}` marker vouches for",
                m.key
            ),
        ),
        Some((value, at)) if value.trim().is_empty() => (
            at,
            format!(
                "`ARG {name}=` is empty: the `{}` marker vouches for no value",
                m.key
            ),
        ),
        Some(_) => return true,
    };
    sink.push(
        Finding::error(MARKER.member(&m.name), &m.file, at, message)
            .fix(format!("set `ARG {name}=` to the value that was compared")),
    );
    false
}

/// The value the marker must equal; `None` after the finding when it
/// cannot be read or is empty.
fn expected_value(input: &Input<'_>, m: &Marker, sink: &mut Sink) -> Result<Option<Expected>> {
    let expected = match expected(input, m)? {
        Ok(e) => e,
        Err(finding) => {
            sink.push(finding);
            return Ok(None);
        }
    };
    if expected.value.is_empty() {
        sink.push(
            Finding::error(
                MARKER.member(&m.name),
                &expected.file,
                expected.line,
                format!("the value the `{}` marker must equal is empty", m.key),
            )
            .fix("set it, or point `expect` at the right key"),
        );
        return Ok(None);
    }
    Ok(Some(expected))
}

/// The release the marker vouches for, and the chain that resolved it when
/// `--fix` moved the marker to `expected`; `None` after the finding when the
/// marker differs from `expected` and stays so.
fn settle_mismatch(
    input: &Input<'_>,
    m: &Marker,
    text: &str,
    line: &MarkerLine,
    expected: &Expected,
    pin: Option<&Pin<'_>>,
    sink: &mut Sink,
) -> Result<Option<(String, Option<String>)>> {
    if line.value == expected.value {
        return Ok(Some((line.value.clone(), None)));
    }
    match (&m.resolver, pin) {
        (Some(resolver), Some(pin)) if input.fix && input.online => {
            let what = format!(
                "{} could not resolve what {} {} ships",
                MARKER.member(&m.name),
                subject(m),
                expected.value
            );
            let answer = resolve(input, resolver, &expected.value);
            let Some(resolution) = unreachable::answered(answer, sink, &what, &m.file, line.line)?
            else {
                return Ok(None);
            };
            let moved = fix_marker(input, m, text, line.line, expected, pin, resolution, sink)?;
            Ok(moved.map(|chain| (expected.value.clone(), Some(chain))))
        }
        _ => {
            sink.push(stale(m, line, expected));
            Ok(None)
        }
    }
}

/// The finding for a marker that differs from its expected value, with the
/// way to settle it: `--online --fix` when a resolver can check the move.
fn stale(m: &Marker, line: &MarkerLine, expected: &Expected) -> Finding {
    let fix = if m.resolver.is_some() {
        format!(
            "run `revendor check --online --fix`: it moves the marker when {} {} ships the pinned CNI plugins version, and explains the decision when it does not",
            subject(m),
            expected.value
        )
    } else {
        format!("compare again, then set the marker to `{}`", expected.value)
    };
    Finding::error(
        MARKER.member(&m.name),
        &m.file,
        line.line,
        format!(
            "the marker says {}, but {}:{} says {}",
            line.value, expected.file, expected.line, expected.value
        ),
    )
    .fix(fix)
}

/// Online, with a resolver and a pin: the release the marker vouches for
/// (`vouched`, at `line`) must ship the pinned CNI plugins version.
/// `resolved` is the chain `--fix` already found for it, if any.
fn confirm_shipped(
    input: &Input<'_>,
    m: &Marker,
    line: usize,
    vouched: &str,
    resolved: Option<String>,
    pin: Option<&Pin<'_>>,
    sink: &mut Sink,
) -> Result<()> {
    let online = input.online && m.resolver.is_some();
    let (Some(resolver), Some((pin_name, pin_value, pin_line)), true) = (&m.resolver, pin, online)
    else {
        return Ok(());
    };
    let id = MARKER.member(&m.name);
    let subject = subject(m);
    let what = format!("{id} could not resolve what {subject} {vouched} ships");
    let chain = match resolved {
        Some(chain) => chain,
        None => match unreachable::answered(
            resolve(input, resolver, vouched),
            sink,
            &what,
            &m.file,
            line,
        )? {
            None => return Ok(()),
            Some(Resolution::Found { cni, chain }) if &cni == pin_value => chain,
            Some(Resolution::Found { cni, chain }) => {
                sink.push(
                    Finding::error(
                        &id,
                        &m.file,
                        line,
                        format!(
                            "{subject} {vouched} ships CNI plugins {cni} ({chain}), but `{pin_name}` is {pin_value} (line {pin_line})"
                        ),
                    )
                    .fix(decision(subject, &cni, pin_name, pin_value)),
                );
                return Ok(());
            }
            Some(Resolution::Unknown(reason)) => {
                sink.push(
                    Finding::error(
                        &id,
                        &m.file,
                        line,
                        format!("cannot tell which CNI plugins {subject} {vouched} ships: {reason}"),
                    )
                    .fix(format!(
                        "compare {subject} {vouched} with `{pin_name}` by hand, and report the layout change so the resolver can follow it"
                    )),
                );
                return Ok(());
            }
        },
    };
    input.ctx.shell.verbose(format!("{id}: {chain}"));
    Ok(())
}

/// Moves the marker when `resolution` says the expected release ships the
/// pinned version; otherwise records why not. Returns the chain when moved.
#[allow(clippy::too_many_arguments)] // one caller; each argument a different fact
fn fix_marker(
    input: &Input<'_>,
    m: &Marker,
    text: &str,
    line: usize,
    expected: &Expected,
    (pin_name, pin_value, pin_line): &Pin<'_>,
    resolution: Resolution,
    sink: &mut Sink,
) -> Result<Option<String>> {
    let id = MARKER.member(&m.name);
    let subject = subject(m);
    let new = &expected.value;
    match resolution {
        Resolution::Found { cni, chain } if &cni == pin_value => {
            let edited = rewrite_marker(text, &m.key, new).map_err(|e| {
                crate::config::ConfigError::at(
                    input.ctx.root.join(&m.file),
                    Some(line),
                    e.to_string(),
                )
            })?;
            input.edit(&m.file, edited.into_bytes());
            sink.push(Finding::info(
                &id,
                &m.file,
                line,
                format!("moved the marker to {new}: {chain}, which is the pinned `{pin_name}`"),
            ));
            Ok(Some(chain))
        }
        Resolution::Found { cni, chain } => {
            sink.push(
                Finding::error(
                    &id,
                    &m.file,
                    line,
                    format!(
                        "not moving the marker to {new}: {subject} {new} ships CNI plugins {cni} ({chain}), but the image pins {pin_value} (`{pin_name}`, line {pin_line}); \
                         until both agree, the plugins on every {subject} node would flap between {pin_value} and {cni} as each installs its own"
                    ),
                )
                .fix(decision(subject, &cni, pin_name, pin_value)),
            );
            Ok(None)
        }
        Resolution::Unknown(reason) => {
            sink.push(
                Finding::error(
                    &id,
                    &m.file,
                    line,
                    format!("not moving the marker to {new}: cannot tell which CNI plugins {subject} {new} ships: {reason}"),
                )
                .fix(format!(
                    "compare {subject} {new} with `{pin_name}` by hand, then set the marker"
                )),
            );
            Ok(None)
        }
    }
}

/// The decision a person must make when the platform ships other plugins.
fn decision(subject: &str, cni: &str, pin_name: &str, pin_value: &str) -> String {
    format!(
        "a person decides which CNI plugins the nodes run: to follow {subject}, set `{pin_name}={cni}` and run `revendor check --online --fix` \
         (it rewrites the checksums from the release's sidecars and moves the marker); to keep {pin_value}, stay on a {subject} release that ships it"
    )
}

/// How messages name the resolver's subject.
fn subject(m: &Marker) -> &'static str {
    match m.resolver.as_deref() {
        Some("talos") => "Talos",
        Some("kube-ovn") => "kube-ovn",
        _ => "the release",
    }
}

/// The default of ARG `name` and its line (the first declaration with one).
pub(super) fn pinned(df: &Dockerfile, name: &str) -> Option<(String, usize)> {
    df.arg_values(name)
        .next()
        .map(|a| (a.value.clone().unwrap_or_default(), a.line))
}

/// The expected value, or the finding that says why it cannot be read. A
/// missing `expect.file` is a configuration error.
fn expected(input: &Input<'_>, m: &Marker) -> Result<std::result::Result<Expected, Finding>> {
    match &m.expect {
        Expect::Value(v) => Ok(Ok(Expected {
            value: v.clone(),
            file: "vendor.toml".to_owned(),
            line: m.line,
        })),
        Expect::Yaml {
            file,
            key,
            strip_digest,
        } => {
            let path = input.ctx.root.join(file);
            let Some(bytes) = paths::read_opt(&path)? else {
                return Err(crate::config::ConfigError::at(
                    input.ctx.root.join("vendor.toml"),
                    Some(m.line),
                    format!(
                        "`expect.file` = \"{file}\" of marker `{}` does not exist",
                        m.name
                    ),
                )
                .hint("fix the path (it is relative to the package directory)")
                .into());
            };
            match marker::expect_yaml(&String::from_utf8_lossy(&bytes), key, *strip_digest) {
                Ok(found) => Ok(Ok(Expected {
                    value: found.value,
                    file: file.clone(),
                    line: found.line,
                })),
                Err(e) => {
                    let line = match &e {
                        marker::Error::KeyMissing { line, .. }
                        | marker::Error::NotText { line, .. }
                        | marker::Error::Digest { line, .. } => *line,
                        marker::Error::Ambiguous { lines, .. } => {
                            lines.first().copied().unwrap_or(1)
                        }
                        marker::Error::Yaml(y) => y.line(),
                        _ => 1,
                    };
                    Ok(Err(Finding::error(
                        MARKER.member(&m.name),
                        file,
                        line,
                        format!("cannot read the value the marker must equal: {e}"),
                    )
                    .fix(format!(
                        "fix `{file}` or the [[marker]] at vendor.toml:{}",
                        m.line
                    ))))
                }
            }
        }
    }
}

/// The CNI plugins version `release` ships, by `resolver`.
pub(super) fn resolve(input: &Input<'_>, resolver: &str, release: &str) -> Result<Resolution> {
    match resolver {
        "talos" => talos(input, release),
        "kube-ovn" => kube_ovn(input, release),
        other => Ok(Resolution::Unknown(format!("no resolver named `{other}`"))),
    }
}

fn talos(input: &Input<'_>, release: &str) -> Result<Resolution> {
    let env = &input.ctx.env;
    let url = github::raw_file_url(env, "siderolabs/talos", Rev::Tag(release), "Makefile");
    let Some(makefile) = github::fetch_text(&input.ctx.client, &url)? else {
        return Ok(Resolution::Unknown(format!(
            "`{url}` does not exist (is {release} a Talos release?)"
        )));
    };
    let pkgs = match marker::talos_pkgs(&makefile) {
        Ok(p) => p,
        Err(e) => return Ok(Resolution::Unknown(format!("{e} (in `{url}`)"))),
    };
    let rev = match &pkgs.reference {
        PkgsRef::Tag(tag) => Rev::Tag(tag),
        PkgsRef::Commit(commit) => Rev::Commit(commit),
    };
    let url = github::raw_file_url(env, "siderolabs/pkgs", rev, "Pkgfile");
    let Some(pkgfile) = github::fetch_text(&input.ctx.client, &url)? else {
        return Ok(Resolution::Unknown(format!(
            "`{url}` does not exist (Talos {release} names pkgs {})",
            pkgs.pkgs.value
        )));
    };
    match marker::pkgfile_cni_version(&pkgfile) {
        Ok(cni) => Ok(Resolution::Found {
            chain: format!(
                "Talos {release} → pkgs {} → cni {}",
                pkgs.pkgs.value, cni.value
            ),
            cni: cni.value,
        }),
        Err(e) => Ok(Resolution::Unknown(format!("{e} (in `{url}`)"))),
    }
}

fn kube_ovn(input: &Input<'_>, release: &str) -> Result<Resolution> {
    let url = github::raw_file_url(
        &input.ctx.env,
        "kubeovn/kube-ovn",
        Rev::Tag(release),
        "dist/images/Dockerfile.base",
    );
    let Some(base) = github::fetch_text(&input.ctx.client, &url)? else {
        return Ok(Resolution::Unknown(format!(
            "`{url}` does not exist (is {release} a kube-ovn release?)"
        )));
    };
    match marker::kube_ovn_cni_version(&base) {
        Ok(cni) => Ok(Resolution::Found {
            chain: format!("kube-ovn {release} → cni {}", cni.value),
            cni: cni.value,
        }),
        Err(e) => Ok(Resolution::Unknown(format!("{e} (in `{url}`)"))),
    }
}
