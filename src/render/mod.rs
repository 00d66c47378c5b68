//! The vendored outputs: pin(rewrite(patches(upstream))), composed here and
//! nowhere else.
//!
//! 0. [`files`] lists the vendored files: each file `[[vendor]]`, and the
//!    files each directory `[[vendor]]` holds (the lock's, or upstream's
//!    listing at a release), with what vendor patches create inside them.
//! 1. The caller reads a vendored file's pristine copy, verified against
//!    the lock (`upstream::Pristine`: reading upstream/ and the download
//!    cache is `upstream`'s job, and render never reaches the network).
//! 2. [`Patches::load`] parses every `applies-to = "vendor"` patch;
//!    [`Patches::stack`] gives a vendored file's [`Stack`], the sections that
//!    target it (by upstream path or rendered path, after `strip`).
//! 3. [`Stack::apply`] walks them over the pristine copy: zero fuzz, offsets
//!    reported, one [`patch::Outcome`](crate::patch::Outcome) per section.
//! 4. [`finish`] applies the rewrites declared for the output and the pinned
//!    image reference.
//! 5. [`hand_edits`] compares the result with the file on disk.
//! 6. [`origin`] records what each output was made from, for the lock, and
//!    finds what a removed `[[vendor]]` or `[[patch]]` left behind.
//!
//! `update` walks the same stack with the 3-way rebase in between
//! ([`Stack::carry`]); `render` and `check` walk it as it is, offline. Only
//! adopting a package walks it with GNU patch's fuzz ([`Stack::fuzz`]).
//!
//! Commands do not build a stack themselves: [`Package`] holds a package's
//! patches with its lock and stamp, and walks and finishes one file for
//! every command, in steps 2 to 4.

mod dir;
mod hand_edit;
pub mod origin;
mod package;
mod patches;
pub mod pin;
pub mod rewrite;
mod stack;
mod stamp;
pub mod yaml_pin;

pub use dir::files;
pub use hand_edit::{HandEdit, hand_edits};
pub use package::{Expected, Package, load_locked, load_locked_starting};
pub use patches::{LoadedPatch, Patches, RecountedHunk, SectionId};
pub use stack::{FuzzyStep, Landed, SectionError, Stack, Step, Walk};
pub use stamp::Stamp;

use std::borrow::Cow;

use crate::config::{Config, Pin, RewriteKind};
use crate::error::{Error, Result};

/// Rewrites (with each one's upstream's placeholders) and pins (each one's
/// image's reference) applied to one rendered file. A file no rewrite or pin
/// changes is returned as it was given, borrowed or owned, without a copy,
/// and without being read as text: only a rewrite or a pin needs it to be
/// UTF-8 (a 5 MB file was validated for neither: issue 23).
pub fn finish<'a>(
    config: &Config,
    to: &str,
    patched: impl Into<Cow<'a, [u8]>>,
    stamp: &Stamp,
) -> Result<Cow<'a, [u8]>> {
    let rewritten = config.rewrites.iter().any(|r| r.file == to);
    let pinned = config
        .pins
        .iter()
        .any(|p| p.file == to && stamp.pin(p.image.as_deref()).is_some());
    if !rewritten && !pinned {
        return Ok(patched.into());
    }
    let mut text = String::from_utf8(patched.into().into_owned()).map_err(|_| Error::Render {
        file: to.to_owned(),
        line: None,
        message: "not UTF-8 text; rewrites and pins need text".into(),
    })?;
    for r in config.rewrites.iter().filter(|r| r.file == to) {
        text = rewrite::apply(r, &text, stamp.values(r.upstream.as_deref()))
            .map_err(|e| Error::Render {
                file: to.to_owned(),
                line: e.line(),
                message: format!(
                    "cannot apply the [[rewrite]] at vendor.toml:{}: {e}",
                    r.line
                ),
            })?
            .text;
    }
    for p in config.pins.iter().filter(|p| p.file == to) {
        if let Some(reference) = stamp.pin(p.image.as_deref()) {
            text = pin_text(to, &text, p, reference)?;
        }
    }
    Ok(Cow::Owned(text.into_bytes()))
}

/// `text` (of `file`) with `pin` written for `reference`: its container
/// `image:` fields, or its YAML keys.
pub fn pin_text(file: &str, text: &str, pin: &Pin, reference: &str) -> Result<String> {
    match &pin.yaml {
        None => pin::apply(text, pin, reference).map_err(|e| pin_error(file, &e)),
        Some(keys) => yaml_pin::apply(text, keys, reference).map_err(|e| Error::Render {
            file: file.to_owned(),
            line: Some(e.line()),
            message: format!("cannot pin the image at its YAML keys: {e}"),
        }),
    }
}

/// Rewrites of files that are not rendered from upstream (the Dockerfile's
/// `ARG VERSION`), applied in place: `(file, new contents)` for each file
/// with a rewrite, given its current contents.
pub fn rewrite_in_place(
    config: &Config,
    stamp: &Stamp,
    read: impl Fn(&str) -> Result<Vec<u8>>,
) -> Result<Vec<(String, Vec<u8>)>> {
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    for r in &config.rewrites {
        if config.vendor_rendering(&r.file).is_some() {
            continue;
        }
        let current = match out.iter().find(|(f, _)| *f == r.file) {
            Some((_, bytes)) => bytes.clone(),
            None => read(&r.file).map_err(|e| match e {
                Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                    crate::config::ConfigError::at(
                        config.root.join("vendor.toml"),
                        Some(r.line),
                        format!(
                            "[[rewrite]] of `{}`: no [[vendor]] renders it and the package has no such file",
                            r.file
                        ),
                    )
                    .hint("point `file` at a rendered output or at a file of the package")
                    .into()
                }
                e => e,
            })?,
        };
        let text = String::from_utf8(current).map_err(|_| Error::Render {
            file: r.file.clone(),
            line: None,
            message: "not UTF-8 text; rewrites need text".into(),
        })?;
        let result =
            rewrite::apply(r, &text, stamp.values(r.upstream.as_deref())).map_err(|e| {
                let hint = match &e {
                    crate::dockerfile::Error::StaleDigest { .. } => {
                        "run `revendor update` online: it resolves the new tag's digest"
                    }
                    _ => "fix the file so the rewrite can read it",
                };
                crate::config::ConfigError::at(config.root.join(&r.file), e.line(), e.to_string())
                    .hint(hint)
            })?;
        if result.lines.is_empty() {
            let what = match &r.kind {
                RewriteKind::DockerfileArg { name } => format!("no `ARG {name}=` line"),
                RewriteKind::Lines { needle, .. } => format!("no line containing `{needle}`"),
            };
            return Err(crate::config::ConfigError::at(
                config.root.join("vendor.toml"),
                Some(r.line),
                format!(
                    "[[rewrite]] of `{}` matches nothing: the file has {what}",
                    r.file
                ),
            )
            .hint("fix the rewrite or the file")
            .into());
        }
        match out.iter_mut().find(|(f, _)| *f == r.file) {
            Some(entry) => entry.1 = result.text.into_bytes(),
            None => out.push((r.file.clone(), result.text.into_bytes())),
        }
    }
    Ok(out)
}

/// The `yaml` pins of files that are not rendered from upstream (a chart's
/// values.yaml), written in place: `(file, new contents)` for each such
/// file with a pinned image, given its current contents (`staged`, when a
/// rewrite changed it first, else `read`).
pub fn pin_in_place(
    config: &Config,
    stamp: &Stamp,
    staged: &[(String, Vec<u8>)],
    read: impl Fn(&str) -> Result<Vec<u8>>,
) -> Result<Vec<(String, Vec<u8>)>> {
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    for p in &config.pins {
        let (Some(_), Some(reference)) = (&p.yaml, stamp.pin(p.image.as_deref())) else {
            continue;
        };
        if config.vendor_rendering(&p.file).is_some() {
            continue;
        }
        let current = match out.iter().chain(staged).find(|(f, _)| *f == p.file) {
            Some((_, bytes)) => bytes.clone(),
            None => read(&p.file)?,
        };
        let text = String::from_utf8(current).map_err(|_| Error::Render {
            file: p.file.clone(),
            line: None,
            message: "not UTF-8 text; pins need text".into(),
        })?;
        let pinned = pin_text(&p.file, &text, p, reference)?.into_bytes();
        match out.iter_mut().find(|(f, _)| *f == p.file) {
            Some(entry) => entry.1 = pinned,
            None => out.push((p.file.clone(), pinned)),
        }
    }
    Ok(out)
}

/// The pinned references found at the pin sites of the rendered files, for
/// a package adopted without a lock, by image name. All sites of an image
/// must agree.
pub fn read_pins(
    config: &Config,
    read: impl Fn(&str) -> Option<Vec<u8>>,
) -> Result<Vec<(Option<String>, String)>> {
    // Each image once, in vendor.toml's order of images.
    let mut names: Vec<Option<&str>> = Vec::new();
    for p in &config.pins {
        if !names.contains(&p.image.as_deref()) {
            names.push(p.image.as_deref());
        }
    }
    names.sort_by_key(|n| config.images.iter().position(|i| i.name.as_deref() == *n));
    let mut out = Vec::new();
    for name in names {
        if let Some(reference) = read_pin(config, name, &read)? {
            out.push((name.map(str::to_owned), reference));
        }
    }
    Ok(out)
}

/// The reference at the sites of image `image`'s pins; all must agree.
fn read_pin(
    config: &Config,
    image: Option<&str>,
    read: &impl Fn(&str) -> Option<Vec<u8>>,
) -> Result<Option<String>> {
    let mut found: Option<(String, String, usize)> = None;
    for p in config.pins.iter().filter(|p| p.image.as_deref() == image) {
        let Some(bytes) = read(&p.file) else { continue };
        let text = String::from_utf8_lossy(&bytes);
        if let Some(keys) = &p.yaml {
            let held = yaml_pin::read(&text, keys, &p.repository).map_err(|e| Error::Render {
                file: p.file.clone(),
                line: Some(e.line()),
                message: format!("cannot read the pinned image at its YAML keys: {e}"),
            })?;
            let line = yaml_pin::lines(&text, keys).map_or(1, |l| l[0]);
            match (&found, held) {
                (_, None) => {}
                (None, Some(v)) => found = Some((v, p.file.clone(), line)),
                (Some((v, f, l)), Some(held)) if *v != held => {
                    return Err(Error::PinsDisagree(format!(
                        "the pinned image differs between {f}:{l} (`{v}`) and {}:{line} (`{held}`)",
                        p.file
                    )));
                }
                (Some(_), Some(_)) => {}
            }
            continue;
        }
        let sites = pin::pin_sites(&text, p).map_err(|e| pin_error(&p.file, &e))?;
        for site in sites {
            if site.repository() != p.repository || !site.value.contains("@sha256:") {
                continue;
            }
            match &found {
                None => found = Some((site.value.clone(), p.file.clone(), site.line)),
                Some((v, f, l)) if *v != site.value => {
                    return Err(Error::PinsDisagree(format!(
                        "the pinned image differs between {f}:{l} (`{v}`) and {}:{} (`{}`)",
                        p.file, site.line, site.value
                    )));
                }
                Some(_) => {}
            }
        }
    }
    Ok(found.map(|(v, _, _)| v))
}

/// A pin that cannot be applied to a rendered file, naming the file and line.
fn pin_error(file: &str, e: &pin::Error) -> Error {
    Error::Render {
        file: file.to_owned(),
        line: Some(e.line()),
        message: format!("cannot pin images: {e}"),
    }
}
