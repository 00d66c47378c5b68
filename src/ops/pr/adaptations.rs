//! `Adaptations:`: one line per changed file of the package saying what
//! changed in it, as cozystack's upgrade commits list them
//! (`images/multus-cni/Dockerfile: ARG VERSION v4.2.3 → v4.3.0`).
//!
//! Each kind of file revendor knows is read as what it is: vendor.toml's
//! version, the lock's fields, a pristine copy's and a rendered file's
//! version and line counts, a patch's result, a Dockerfile's ARG defaults,
//! FROM images and markers. Any other file gets its one changed line, or its
//! line counts.

use crate::config::Config;
use crate::config::lock::{LOCK_PATH, Lock, LockedUpstream};
use crate::dockerfile::{Base, Dockerfile};
use crate::pr::{Adaptation, Patch, Upstream};

use super::patches::Copy;
use crate::git::{Change, Status};

/// What the descriptions draw on.
pub(super) struct Known<'a> {
    /// The working tree's vendor.toml.
    pub config: &'a Config,
    /// The base commit's lock, if it had one.
    pub base_lock: Option<&'a Lock>,
    /// Every upstream, in vendor.toml order (one for an unnamed
    /// `[upstream]`): each file is told with its own upstream's versions.
    pub upstreams: &'a [Upstream],
    /// Each vendored file at both versions, a directory's one by one.
    pub copies: &'a [Copy],
    /// Each patch's result.
    pub patches: &'a [Patch],
}

/// The line for one changed file; `old` and `new` are its bytes at the
/// base and in the work tree.
pub(super) fn describe(
    k: &Known<'_>,
    change: &Change,
    old: Option<&[u8]>,
    new: Option<&[u8]>,
) -> Adaptation {
    let path = change.path.as_str();
    let (old, new) = (old.unwrap_or_default(), new.unwrap_or_default());
    let counts = || counts(old, new);
    let pristine = k.copies.iter().find(|c| c.vendor.pristine() == path);
    let rendered = k.copies.iter().find(|c| c.vendor.to == path);
    // The upstream a vendored file comes from, as the text names it.
    let of = |c: &Copy| {
        let name = c.vendor.upstream.as_deref();
        let u = k
            .upstreams
            .iter()
            .find(|u| u.label.as_deref() == name)
            .or(k.upstreams.first());
        (
            u.map_or("upstream", |u| u.called()),
            u.map_or("", |u| u.to.as_str()),
        )
    };
    // `deploy/app.yml`, or with several upstreams `tool`'s.
    let upstream_file = |c: &Copy| match &c.vendor.upstream {
        Some(name) => format!("upstream `{name}`'s `{}`", c.vendor.from),
        None => format!("upstream `{}`", c.vendor.from),
    };
    let change_text = match (change.status, path, pristine, rendered) {
        (Status::Deleted, _, Some(c), _) if c.removed_upstream() => {
            let (name, to) = of(c);
            format!("pristine copy removed: {name} {to} no longer has it")
        }
        (Status::Deleted, _, _, Some(c)) if c.removed_upstream() => {
            let (name, to) = of(c);
            format!("removed: {name} {to} no longer has `{}`", c.vendor.from)
        }
        (Status::Deleted, _, _, _) if path.starts_with("upstream/") => {
            "pristine copy removed: no longer vendored".to_owned()
        }
        (Status::Deleted, _, _, _) => "removed".to_owned(),
        (_, "vendor.toml", _, _) => vendor_toml(old, new),
        (_, LOCK_PATH, _, _) => lock(k, new),
        (status, _, Some(c), _) => {
            let how = match status {
                Status::Added => "added".to_owned(),
                _ => counts(),
            };
            format!(
                "pristine copy of {} at {} ({how})",
                upstream_file(c),
                of(c).1
            )
        }
        (_, _, None, Some(c)) => {
            let (name, to) = of(c);
            format!(
                "rendered from {name} {to} with its patches, rewrites and pin ({})",
                counts()
            )
        }
        _ if k.patches.iter().any(|p| p.file == path) => patch(
            k.patches
                .iter()
                .find(|p| p.file == path)
                .expect("found above"),
        ),
        _ => match dockerfile(k.config, path, old, new) {
            Some(text) => text,
            None => generic(change.status, old, new),
        },
    };
    Adaptation {
        file: path.to_owned(),
        change: change_text,
    }
}

/// `+3 -1`: lines added and removed from `old` to `new`.
pub(super) fn counts(old: &[u8], new: &[u8]) -> String {
    let (added, removed) = line_counts(old, new);
    format!("+{added} -{removed}")
}

/// Lines added and removed from `old` to `new`.
pub(super) fn line_counts(old: &[u8], new: &[u8]) -> (usize, usize) {
    let patch = diffy::create_patch_bytes(old, new);
    let mut added = 0;
    let mut removed = 0;
    for hunk in patch.hunks() {
        for line in hunk.lines() {
            match line {
                diffy::Line::Insert(_) => added += 1,
                diffy::Line::Delete(_) => removed += 1,
                diffy::Line::Context(_) => {}
            }
        }
    }
    (added, removed)
}

/// The lines only `old` has and the lines only `new` has, trimmed.
fn changed_lines(old: &[u8], new: &[u8]) -> (Vec<String>, Vec<String>) {
    let patch = diffy::create_patch_bytes(old, new);
    let (mut removed, mut added) = (Vec::new(), Vec::new());
    let text = |l: &[u8]| String::from_utf8_lossy(l).trim().to_owned();
    for hunk in patch.hunks() {
        for line in hunk.lines() {
            match line {
                diffy::Line::Insert(l) => added.push(text(l)),
                diffy::Line::Delete(l) => removed.push(text(l)),
                diffy::Line::Context(_) => {}
            }
        }
    }
    (removed, added)
}

/// vendor.toml's versions: `[upstream] version a → b`, or with several
/// upstreams each that moved (`[[upstream]] chart version a → b`).
fn vendor_toml(old: &[u8], new: &[u8]) -> String {
    let (removed, added) = changed_lines(old, new);
    let (before, now) = (versions(old), versions(new));
    let moved: Vec<String> = now
        .iter()
        .filter_map(|(name, b)| {
            let a = before.iter().find(|(n, _)| n == name)?.1.as_str();
            (a != b).then(|| match name {
                Some(n) => format!("[[upstream]] {n} version {a} → {b}"),
                None => format!("[upstream] version {a} → {b}"),
            })
        })
        .collect();
    if moved.is_empty() {
        return generic(Status::Modified, old, new);
    }
    let other = removed.len().max(added.len()).saturating_sub(moved.len());
    let mut text = moved.join(", ");
    if other > 0 {
        text.push_str(&format!(
            ", and {other} other line{} changed",
            plural(other)
        ));
    }
    text
}

/// Each upstream's `version` in a vendor.toml, with its `name` (`None` for
/// an unnamed `[upstream]`); empty when it does not parse.
fn versions(text: &[u8]) -> Vec<(Option<String>, String)> {
    let Ok(table) = toml::from_str::<toml::Table>(&String::from_utf8_lossy(text)) else {
        return Vec::new();
    };
    let of = |t: &toml::Value| -> Option<(Option<String>, String)> {
        let version = t.get("version")?.as_str()?.to_owned();
        let name = t.get("name").and_then(|n| n.as_str()).map(str::to_owned);
        Some((name, version))
    };
    match table.get("upstream") {
        Some(toml::Value::Array(all)) => all.iter().filter_map(of).collect(),
        Some(one) => of(one).into_iter().collect(),
        None => Vec::new(),
    }
}

/// What the working tree's lock (`new`) says, against the base's when it
/// had one.
fn lock(k: &Known<'_>, new: &[u8]) -> String {
    let Ok(now) = Lock::parse(
        std::path::Path::new(LOCK_PATH),
        &String::from_utf8_lossy(new),
    ) else {
        return "rewritten (it does not parse)".to_owned();
    };
    match k.base_lock {
        None => written(k, &now),
        Some(before) => changed(before, &now),
    }
}

/// A lock new in this change: each upstream with its version and commit,
/// after its name, then what it verifies.
fn written(k: &Known<'_>, now: &Lock) -> String {
    // Each upstream with its version and commit, after its name.
    let mut parts: Vec<String> = now
        .upstreams
        .iter()
        .map(|up| {
            let name = up
                .name
                .as_deref()
                .unwrap_or_else(|| k.upstreams.first().map_or("upstream", |u| u.called()));
            let mut text = format!("{name} {}", up.version);
            if let Some(c) = &up.commit {
                text.push_str(&format!(" at {}", short(c)));
            }
            text
        })
        .collect();
    if let Some(first) = parts.first_mut() {
        first.insert_str(0, "written: ");
    }
    parts.push(format!(
        "{} pristine file{}",
        now.files.len(),
        plural(now.files.len())
    ));
    parts.push(format!(
        "{} patch{} verified",
        now.patches.len(),
        if now.patches.len() == 1 { "" } else { "es" }
    ));
    for up in &now.upstreams {
        if let Some(d) = &up.go_directive {
            match &up.name {
                Some(n) => parts.push(format!("{n}'s go.mod `go {d}`")),
                None => parts.push(format!("go.mod `go {d}`")),
            }
        }
    }
    for image in &now.images {
        parts.push(format!("image {}", image.reference));
    }
    parts.join(", ")
}

/// Each value of the lock that this change moved, `before` → `now`.
fn changed(before: &Lock, now: &Lock) -> String {
    let mut parts = fields_changed(before, now);
    parts.extend(entries_changed(before, now));
    if parts.is_empty() {
        "rewritten, same values".to_owned()
    } else {
        parts.join(", ")
    }
}

/// Each upstream's version, commit and go directive, and each image's
/// reference, that differs between the two locks, with both values.
fn fields_changed(before: &Lock, now: &Lock) -> Vec<String> {
    let mut parts = Vec::new();
    let mut field = |name: &str, a: Option<&str>, b: Option<&str>| {
        if a != b {
            parts.push(format!(
                "{name} {} → {}",
                a.unwrap_or("none"),
                b.unwrap_or("none")
            ));
        }
    };
    // Each upstream's and image's fields, after its name when it has one.
    for up in &now.upstreams {
        let was = before.upstream(up.name.as_deref());
        let key = |k: &str| match &up.name {
            Some(n) => format!("{n} {k}"),
            None => k.to_owned(),
        };
        field(
            &key("version"),
            was.map(|w| w.version.as_str()),
            Some(&up.version),
        );
        fn commit(u: &LockedUpstream) -> Option<&str> {
            u.commit.as_deref().map(short)
        }
        field(&key("commit"), was.and_then(commit), commit(up));
        field(
            &key("go-directive"),
            was.and_then(|w| w.go_directive.as_deref()),
            up.go_directive.as_deref(),
        );
    }
    for image in &now.images {
        let key = match &image.name {
            Some(n) => format!("image {n}"),
            None => "image".to_owned(),
        };
        field(
            &key,
            before
                .image(image.name.as_deref())
                .map(|i| i.reference.as_str()),
            Some(&image.reference),
        );
    }
    parts
}

/// The files, patches and per-platform digests whose entries differ
/// between the two locks.
fn entries_changed(before: &Lock, now: &Lock) -> Vec<String> {
    let mut parts = Vec::new();
    let files: Vec<&str> = now
        .files
        .iter()
        .filter(|f| before.file_sha256(f.upstream.as_deref(), &f.from) != Some(f.sha256.as_str()))
        .map(|f| f.from.as_str())
        .collect();
    if !files.is_empty() {
        parts.push(format!("sha256 of {}", files.join(", ")));
    }
    let gone: Vec<&str> = before
        .files
        .iter()
        .filter(|f| now.file_sha256(f.upstream.as_deref(), &f.from).is_none())
        .map(|f| f.from.as_str())
        .collect();
    if !gone.is_empty() {
        parts.push(format!("no longer {}", gone.join(", ")));
    }
    let patches: Vec<&str> = now
        .patches
        .iter()
        .filter(|p| before.patch_sha256(&p.name) != Some(p.sha256.as_str()))
        .map(|p| p.name.as_str())
        .collect();
    if !patches.is_empty() {
        parts.push(format!("sha256 of patch {}", patches.join(", ")));
    }
    let platforms = |l: &Lock| -> Vec<_> { l.images.iter().map(|i| i.platforms.clone()).collect() };
    if platforms(before) != platforms(now) {
        parts.push("per-platform digests".to_owned());
    }
    parts
}

fn patch(p: &Patch) -> String {
    if p.new {
        return "new patch".to_owned();
    }
    let mut parts: Vec<String> = p
        .sections
        .iter()
        .map(|s| {
            let moved: Vec<String> = s
                .moved
                .iter()
                .map(|m| format!("hunk {} {:+}", m.hunk, m.offset))
                .collect();
            match s.result.as_str() {
                "offset" => format!("{} moved ({})", s.target, moved.join(", ")),
                result => format!("{}: {result}", s.target),
            }
        })
        .collect();
    parts.push("refreshed to exact hunks".to_owned());
    if !p.adopted.is_empty() {
        parts.push(format!(
            "{} change{} adopted",
            p.adopted.len(),
            plural(p.adopted.len())
        ));
    }
    if !p.dropped.is_empty() {
        parts.push(format!(
            "{} change{} dropped",
            p.dropped.len(),
            plural(p.dropped.len())
        ));
    }
    parts.join("; ")
}

/// ARG defaults, FROM images and markers that changed in a Dockerfile;
/// `None` when the file is not one or none of those changed.
fn dockerfile(config: &Config, path: &str, old: &[u8], new: &[u8]) -> Option<String> {
    let named = path
        .rsplit('/')
        .next()
        .is_some_and(|n| n.contains("Dockerfile"))
        || config.images.iter().any(|i| i.dockerfile == path);
    if !named {
        return None;
    }
    let parse = |b: &[u8]| Dockerfile::parse(&String::from_utf8_lossy(b)).ok();
    let (a, b) = (parse(old)?, parse(new)?);
    let mut parts = Vec::new();
    for arg in &b.args {
        let was = a
            .args
            .iter()
            .find(|x| x.name == arg.name && x.stage == arg.stage)
            .and_then(|x| x.value.clone());
        if let Some(value) = &arg.value
            && was.as_ref() != Some(value)
        {
            parts.push(format!(
                "ARG {} {} → {value}",
                arg.name,
                was.as_deref().unwrap_or("(none)")
            ));
        }
    }
    for stage in &b.stages {
        let before = a.stages.get(stage.index);
        let image = |s: &crate::dockerfile::Stage| match &s.base {
            Base::Image(r) => r.to_string(),
            _ => s.image.clone(),
        };
        if let Some(before) = before
            && image(before) != image(stage)
        {
            let name = stage
                .name
                .as_ref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default();
            parts.push(format!("FROM{name} {} → {}", image(before), image(stage)));
        }
    }
    for m in config.markers.iter().filter(|m| m.file == path) {
        let value = |df: &Dockerfile| df.markers(&m.key).first().map(|l| l.value.clone());
        if value(&a) != value(&b) {
            parts.push(format!(
                "# {}: {} → {}",
                m.key,
                value(&a).unwrap_or_else(|| "(none)".into()),
                value(&b).unwrap_or_else(|| "(none)".into())
            ));
        }
    }
    if parts.is_empty() {
        return None;
    }
    let (added, removed) = line_counts(old, new);
    let other = added.max(removed).saturating_sub(parts.len());
    if other > 0 {
        parts.push(format!("{other} other line{} changed", plural(other)));
    }
    Some(parts.join("; "))
}

fn generic(status: Status, old: &[u8], new: &[u8]) -> String {
    if status == Status::Added {
        let lines = new.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count();
        return format!("added ({lines} line{})", plural(lines));
    }
    let (removed, added) = changed_lines(old, new);
    match (removed.as_slice(), added.as_slice()) {
        ([a], [b]) if a.len() + b.len() <= 160 => format!("`{a}` → `{b}`"),
        _ => format!(
            "{} lines changed ({})",
            removed.len().max(added.len()),
            counts(old, new)
        ),
    }
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dockerfile_arg_is_named_with_both_values() {
        let config = Config::parse(
            std::path::Path::new("."),
            std::path::Path::new("vendor.toml"),
            "[upstream]\ngithub = \"o/r\"\nversion = \"v2\"\n",
        )
        .unwrap();
        let old = b"FROM golang:1.26 AS builder\nARG VERSION=v4.2.3\n";
        let new = b"FROM golang:1.26 AS builder\nARG VERSION=v4.3.0\n";
        assert_eq!(
            dockerfile(&config, "images/multus-cni/Dockerfile", old, new).unwrap(),
            "ARG VERSION v4.2.3 → v4.3.0"
        );
    }

    #[test]
    fn vendor_toml_names_the_version() {
        let old = b"[upstream]\ngithub = \"o/r\"\nversion = \"v1\"\n";
        let new = b"[upstream]\ngithub = \"o/r\"\nversion = \"v2\"\n";
        assert_eq!(vendor_toml(old, new), "[upstream] version v1 → v2");
    }

    #[test]
    fn vendor_toml_names_each_upstream_that_moved_with_its_own_versions() {
        let toml = |a: &str, b: &str| {
            format!(
                "[[upstream]]\nname = \"chart\"\ngithub = \"o/a\"\nversion = \"{a}\"\n\n\
                 [[upstream]]\nname = \"tool\"\ngithub = \"o/t\"\nversion = \"{b}\"\n"
            )
        };
        let (old, new) = (toml("v1", "v2"), toml("v1", "v3"));
        assert_eq!(
            vendor_toml(old.as_bytes(), new.as_bytes()),
            "[[upstream]] tool version v2 → v3"
        );
        let new = toml("v1.1", "v3");
        assert_eq!(
            vendor_toml(old.as_bytes(), new.as_bytes()),
            "[[upstream]] chart version v1 → v1.1, [[upstream]] tool version v2 → v3"
        );
    }

    #[test]
    fn one_changed_line_is_quoted() {
        assert_eq!(
            generic(Status::Modified, b"a\nb: 1\n", b"a\nb: 2\n"),
            "`b: 1` → `b: 2`"
        );
        assert_eq!(generic(Status::Added, b"", b"x\ny\n"), "added (2 lines)");
    }
}
