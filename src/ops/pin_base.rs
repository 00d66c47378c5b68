//! `revendor image pin-base [NAME]`: pin every `FROM` image of each image's
//! Dockerfile to the digest of its multi-platform index.
//!
//! The images are every `[[image]]` or the one named; each of their
//! Dockerfiles is pinned once, even when several images build from it: its
//! bases are then verified for the platforms of all of them, and the lock
//! entry and `go` of each of them follow it.
//!
//! 1. Parse the Dockerfile; every stage built on a registry image (not
//!    `scratch`, not an earlier stage) must name it literally with a tag.
//! 2. With `--go X`, the golang builder stages move to Go `X` (`golang:1.26`
//!    becomes `golang:1.27`, a variant suffix kept) and the `go` of every
//!    image built from a Dockerfile with such a stage follows in vendor.toml. Without it a
//!    builder on another Go release than its image's `go` is an error:
//!    moving the builder is always explicit.
//! 3. Resolve each `name:tag` by `HEAD` (free against Docker Hub's pull
//!    limit); when the digest is new, read the index once to verify it holds
//!    every configured platform.
//! 4. Replace only the image word of each `FROM` with `name:tag@sha256:…`
//!    (flags, `AS name`, spacing and comments stay), record the bases in the
//!    lock entry of every image pinned there, and commit it all at once.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use super::image_pin::{platforms, selected};
use crate::check;
use crate::config::lock::{LOCK_PATH, Lock};
use crate::config::{Config, ConfigError, Image, edit};
use crate::dockerfile::{self, Base, BuilderProblem, Dockerfile, Stage, check_builder};
use crate::error::{Error, Result};
use crate::go;
use crate::image::{Digest, Manifest, Platform, Reference};
use crate::paths::{self, Transaction};
use crate::registry;
use crate::workspace::Context;

/// Flags of `revendor image pin-base`.
#[derive(Debug, Clone, Default)]
pub struct PinBaseOptions {
    /// The `[[image]]` whose Dockerfile to pin; every image when `None`.
    pub image: Option<String>,
    /// Move the golang builder stages to this Go minor (`1.27`).
    pub go: Option<String>,
    /// Resolve and show; write nothing.
    pub dry_run: bool,
}

/// One `FROM` image and what it became.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PinnedBase {
    /// 1-based line of the `FROM`.
    pub line: usize,
    /// The image as it was written.
    pub before: String,
    /// The image as pinned.
    pub after: String,
}

/// What `pin-base` did to one Dockerfile.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PinBaseReport {
    /// The Dockerfile, relative to the package.
    pub dockerfile: String,
    /// The names of the `[[image]]`s built from it; left out for an
    /// unnamed `[image]`, so one image keeps its document's shape.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
    /// Every registry image of the Dockerfile.
    pub bases: Vec<PinnedBase>,
    /// Files whose bytes changed (or would, with `--dry-run`): this
    /// Dockerfile and the vendor.toml and lock shared by every image.
    pub changed: Vec<String>,
    /// Nothing was written (`--dry-run`).
    pub dry_run: bool,
}

impl PinBaseReport {
    /// Lines for people: every Dockerfile's bases, then each file written
    /// once.
    pub fn human_all(reports: &[Self]) -> String {
        let mut s = String::new();
        for r in reports {
            for b in &r.bases {
                if b.before == b.after {
                    s.push_str(&format!(
                        "{}:{}: {} (unchanged)\n",
                        r.dockerfile, b.line, b.after
                    ));
                } else {
                    s.push_str(&format!(
                        "{}:{}: {} -> {}\n",
                        r.dockerfile, b.line, b.before, b.after
                    ));
                }
            }
        }
        let mut changed: Vec<&String> = reports.iter().flat_map(|r| &r.changed).collect();
        changed.sort();
        changed.dedup();
        if changed.is_empty() {
            s.push_str("no file changed\n");
        }
        let verb = if reports.iter().any(|r| r.dry_run) {
            "would write"
        } else {
            "wrote"
        };
        for f in changed {
            s.push_str(&format!("{verb} {f}\n"));
        }
        s
    }
}

/// One Dockerfile of a selected image, read and parsed, and every image
/// built from it (pinning it moves them all).
struct Recipe<'c> {
    dockerfile: &'c str,
    images: Vec<&'c Image>,
    text: String,
    df: Dockerfile,
}

impl Recipe<'_> {
    /// Whether a stage builds on golang, which `--go` moves.
    fn on_golang(&self) -> bool {
        self.df
            .stages
            .iter()
            .any(|s| matches!(&s.base, Base::Image(r) if r.is_docker_official("golang")))
    }
}

/// A Dockerfile pinned in memory.
struct Pinned {
    text: String,
    bases: Vec<PinnedBase>,
}

/// Resolves and pins every base image of the Dockerfiles of the selected
/// images (every image, or the one named), in one write.
pub fn pin_base(ctx: &Context, opts: &PinBaseOptions) -> Result<Vec<PinBaseReport>> {
    let config = Config::load(&ctx.root)?;
    let images = selected(&config, opts.image.as_deref())?;
    let go_flag = go_flag(opts.go.as_deref())?;
    let recipes = recipes(ctx, &config, images)?;
    if go_flag.is_some() && !recipes.iter().any(Recipe::on_golang) {
        return Err(ConfigError::at(
            ctx.root.join(recipes[0].dockerfile),
            None,
            "no stage builds on golang, so --go has nothing to move",
        )
        .into());
    }
    let client = ctx.registry()?;
    let mut resolved: HashMap<String, Digest> = HashMap::new();
    let mut pinned = Vec::new();
    for recipe in &recipes {
        pinned.push(pin_recipe(
            ctx,
            &config,
            recipe,
            go_flag.as_ref(),
            &client,
            &mut resolved,
        )?);
    }
    let mut txn = stage(ctx, &recipes, &pinned, go_flag.as_ref())?;
    let changed = if opts.dry_run {
        txn.changed_paths()?
    } else {
        txn.commit()?
    };
    Ok(reports(&recipes, pinned, &changed, opts.dry_run))
}

/// `--go`'s value, which must be a Go minor (`1.27`).
fn go_flag(text: Option<&str>) -> Result<Option<go::Version>> {
    let Some(text) = text else {
        return Ok(None);
    };
    match go::Version::parse(text) {
        Some(go) if go.is_minor() => Ok(Some(go)),
        _ => Err(Error::usage(
            format!("--go `{text}` is not a Go minor"),
            "pass a Go minor such as --go 1.27",
        )),
    }
}

/// Each Dockerfile of the selected images once, read and parsed, with every
/// image built from it.
fn recipes<'c>(
    ctx: &Context,
    config: &'c Config,
    images: Vec<&'c Image>,
) -> Result<Vec<Recipe<'c>>> {
    let mut recipes: Vec<Recipe<'_>> = Vec::new();
    for image in images {
        if recipes.iter().any(|r| r.dockerfile == image.dockerfile) {
            continue;
        }
        let path = ctx.root.join(&image.dockerfile);
        let text = String::from_utf8(paths::read(&path)?)
            .map_err(|_| ConfigError::at(&path, None, "the Dockerfile is not UTF-8 text"))?;
        let df = parse_dockerfile(&path, &text)?;
        recipes.push(Recipe {
            dockerfile: &image.dockerfile,
            images: config
                .images
                .iter()
                .filter(|i| i.dockerfile == image.dockerfile)
                .collect(),
            text,
            df,
        });
    }
    Ok(recipes)
}

/// The pinned Dockerfiles, the lock's bases of every image built from them
/// and (with `--go`) vendor.toml's `go`, staged as one write.
fn stage(
    ctx: &Context,
    recipes: &[Recipe<'_>],
    pinned: &[Pinned],
    go_flag: Option<&go::Version>,
) -> Result<Transaction> {
    let mut txn = Transaction::new(&ctx.root);
    let mut lock = Lock::load(&ctx.root)?;
    let mut lock_moved = false;
    let vendor_path = ctx.root.join("vendor.toml");
    let mut vendor_toml = String::from_utf8_lossy(&paths::read(&vendor_path)?).into_owned();
    let mut go_moved = false;
    for (recipe, p) in recipes.iter().zip(pinned) {
        let new_df = parse_dockerfile(&ctx.root.join(recipe.dockerfile), &p.text)?;
        txn.stage(recipe.dockerfile, p.text.clone().into_bytes());
        for image in &recipe.images {
            if let Some(lock) = &mut lock
                && let Some(locked) = lock.images.iter_mut().find(|i| i.name == image.name)
            {
                locked.bases = pinned_bases(&new_df);
                lock_moved = true;
            }
            if let Some(go) = go_flag
                && recipe.on_golang()
                && !image.go.as_ref().is_some_and(|r| r.admits(go))
            {
                // `go = ">=1.26"` stays a minimum when it moves.
                let wanted = match &image.go {
                    Some(r) => r.moved_to(go),
                    None => go::Requirement {
                        minor: go.clone(),
                        minimum: false,
                    },
                };
                let (name, wanted) = (image.name.as_deref(), wanted.to_string());
                vendor_toml = edit::set_image_go(&vendor_path, &vendor_toml, name, &wanted)?;
                go_moved = true;
            }
        }
    }
    if go_moved {
        txn.stage("vendor.toml", vendor_toml.into_bytes());
    }
    if let Some(lock) = lock
        && lock_moved
    {
        let previous = paths::read_opt(&ctx.root.join(LOCK_PATH))?
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        txn.stage(LOCK_PATH, lock.to_toml(previous.as_deref()).into_bytes());
    }
    Ok(txn)
}

/// One report per Dockerfile; each names the files `changed` that are its
/// own or shared (vendor.toml, the lock).
fn reports(
    recipes: &[Recipe<'_>],
    pinned: Vec<Pinned>,
    changed: &[String],
    dry_run: bool,
) -> Vec<PinBaseReport> {
    let is_recipe = |f: &str| recipes.iter().any(|r| r.dockerfile == f);
    recipes
        .iter()
        .zip(pinned)
        .map(|(recipe, p)| PinBaseReport {
            dockerfile: recipe.dockerfile.to_owned(),
            images: recipe
                .images
                .iter()
                .filter_map(|i| i.name.clone())
                .collect(),
            bases: p.bases,
            changed: changed
                .iter()
                .filter(|f| *f == recipe.dockerfile || !is_recipe(f))
                .cloned()
                .collect(),
            dry_run,
        })
        .collect()
}

/// The Dockerfile of `recipe` with every registry base pinned (moved to
/// `go_flag` first); `resolved` carries the digests across Dockerfiles.
fn pin_recipe(
    ctx: &Context,
    config: &Config,
    recipe: &Recipe<'_>,
    go_flag: Option<&go::Version>,
    client: &registry::Client,
    resolved: &mut HashMap<String, Digest>,
) -> Result<Pinned> {
    let path = ctx.root.join(recipe.dockerfile);
    let (text, df) = (&recipe.text, &recipe.df);
    let (wrong_go, platforms_wanted) = demands(config, recipe, go_flag)?;
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let mut bases = Vec::new();
    for stage in &df.stages {
        let at = |message: String| ConfigError::at(&path, Some(stage.line), message);
        let current = match &stage.base {
            Base::Image(current) => current,
            Base::Invalid(message) => return Err(at(message.clone()).into()),
            Base::Stage(_) | Base::Scratch | Base::Unknown(_) => continue,
        };
        if stage.image.contains('$') {
            return Err(at(format!(
                "FROM names its image through a build argument (`{}`)",
                stage.image
            ))
            .hint("write the image in the FROM line so pin-base can pin it")
            .into());
        }
        if let Some((problem, advice)) = wrong_go.iter().find(|(p, _)| p.line() == stage.line) {
            return Err(at(problem.to_string()).hint(advice.clone()).into());
        }
        let Some(tag) = current.tag() else {
            return Err(at(format!("FROM `{}` has no tag to resolve", stage.image))
                .hint("name the tag to follow, such as debian:stable-slim")
                .into());
        };
        let tag = match go_flag {
            Some(go) if current.is_docker_official("golang") => retag(tag, go),
            _ => tag.to_owned(),
        };
        let name_tag = format!("{}:{tag}", current.name());
        let digest = match resolved.get(&name_tag) {
            Some(d) => d.clone(),
            None => {
                ctx.shell.status("Resolving", &name_tag);
                let reference = Reference::parse(&name_tag).map_err(|e| at(e.to_string()))?;
                let d = resolve_base(client, &reference, current, &platforms_wanted)?;
                resolved.insert(name_tag.clone(), d.clone());
                d
            }
        };
        let after = format!("{name_tag}@{digest}");
        edits.push((
            image_span(df, stage, text).ok_or_else(|| {
                at(format!(
                    "cannot find `{}` in the FROM line to rewrite it",
                    stage.image
                ))
            })?,
            after.clone(),
        ));
        bases.push(PinnedBase {
            line: stage.line,
            before: stage.image.clone(),
            after,
        });
    }

    Ok(Pinned {
        text: edited(text, edits),
        bases,
    })
}

/// A golang stage on another Go release than vendor.toml's, and the advice
/// for it.
type WrongGo = (BuilderProblem, String);

/// What the images built from `recipe` ask of its bases: the golang stages
/// on another Go release than vendor.toml's (with the advice for each),
/// and every platform the bases must hold.
fn demands(
    config: &Config,
    recipe: &Recipe<'_>,
    go_flag: Option<&go::Version>,
) -> Result<(Vec<WrongGo>, Vec<Platform>)> {
    let mut wrong_go = Vec::new();
    let mut platforms_wanted: Vec<Platform> = Vec::new();
    for image in &recipe.images {
        for problem in builder_on_other_go(&recipe.df, image, go_flag) {
            let advice = check::builder_advice(
                &problem,
                image.go.as_ref(),
                check::builder_command_name(config, image),
            );
            wrong_go.push((problem, advice));
        }
        for p in platforms(config, image)? {
            if !platforms_wanted.contains(&p) {
                platforms_wanted.push(p);
            }
        }
    }
    Ok((wrong_go, platforms_wanted))
}

/// `text` with each span of `edits` replaced (the spans do not overlap).
fn edited(text: &str, mut edits: Vec<(Range<usize>, String)>) -> String {
    let mut new_text = text.to_owned();
    edits.sort_by_key(|(span, _)| std::cmp::Reverse(span.start));
    for (span, replacement) in edits {
        new_text.replace_range(span, &replacement);
    }
    new_text
}

/// `name:tag` → digest of every stage base pinned by digest, for the lock.
pub(crate) fn pinned_bases(df: &Dockerfile) -> BTreeMap<String, String> {
    df.stages
        .iter()
        .filter_map(|s| match &s.base {
            Base::Image(r) => Some((
                format!("{}:{}", r.name(), r.tag()?),
                r.digest()?.to_string(),
            )),
            _ => None,
        })
        .collect()
}

/// Parses the Dockerfile, naming it and the line on failure.
pub(crate) fn parse_dockerfile(path: &std::path::Path, text: &str) -> Result<Dockerfile> {
    Dockerfile::parse(text).map_err(|e| {
        ConfigError::at(path, e.line(), e.to_string())
            .hint("fix the Dockerfile")
            .into()
    })
}

/// The golang stages whose tag names another Go release than vendor.toml's,
/// unless `--go` moves them anyway.
fn builder_on_other_go(
    df: &Dockerfile,
    image: &Image,
    go_flag: Option<&go::Version>,
) -> Vec<BuilderProblem> {
    match (go_flag, image.go.as_ref()) {
        (None, Some(go)) => check_builder(df, Some(go))
            .into_iter()
            .filter(|p| matches!(p, BuilderProblem::GoVersion { .. }))
            .collect(),
        _ => Vec::new(),
    }
}

/// The digest `reference` resolves to; a digest other than `current`'s is
/// verified to be an index holding every platform before it is used.
pub(crate) fn resolve_base(
    client: &registry::Client,
    reference: &Reference,
    current: &Reference,
    platforms: &[Platform],
) -> Result<Digest> {
    let digest = client.head_manifest(reference)?;
    if current.digest() == Some(&digest) {
        return Ok(digest);
    }
    let fetched = client.get_manifest(&reference.with_digest(digest.clone()))?;
    let index = match fetched.manifest {
        Manifest::Index(index) => index,
        Manifest::Image(image) => {
            return Err(client.not_an_index(reference, &image, platforms).into());
        }
    };
    let missing: Vec<Platform> = platforms
        .iter()
        .filter(|want| {
            !index
                .children()
                .any(|(p, _)| p.is_some_and(|p| p.matches(want)))
        })
        .cloned()
        .collect();
    if !missing.is_empty() {
        return Err(registry::Error::Platforms {
            reference: reference.to_string(),
            missing,
            unexpected: Vec::new(),
        }
        .into());
    }
    Ok(digest)
}

/// The file byte range of the image word of a stage's `FROM`.
fn image_span(df: &Dockerfile, stage: &Stage, text: &str) -> Option<Range<usize>> {
    let from = df.instructions.get(stage.instructions.start)?;
    let (at, word) = dockerfile::split_words(&from.args.text)
        .into_iter()
        .find(|(_, w)| !w.starts_with("--"))?;
    let start = from.args.file_offset(at)?;
    let span = start..start + word.len();
    (text.get(span.clone()) == Some(word)).then_some(span)
}

/// `tag` moved to Go minor `go`: the version is replaced and any variant
/// suffix kept (`1.26.3-bookworm` → `1.27-bookworm`); a tag naming no
/// version (`bookworm`) becomes `go` alone.
fn retag(tag: &str, go: &go::Version) -> String {
    match go::Version::from_tag(tag) {
        Some((_, variant)) => format!("{go}{variant}"),
        None => go.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retag_keeps_the_variant() {
        let go = go::Version::parse("1.27").unwrap();
        assert_eq!(retag("1.26", &go), "1.27");
        assert_eq!(retag("1.26.3-bookworm", &go), "1.27-bookworm");
        assert_eq!(retag("1.23-alpine3.20", &go), "1.27-alpine3.20");
        assert_eq!(retag("1.26rc1", &go), "1.27");
        assert_eq!(retag("bookworm", &go), "1.27");
    }

    #[test]
    fn image_span_is_the_image_word_only() {
        let text = "ARG X=1\nFROM  --platform=$BUILDPLATFORM golang:1.26 AS build\nFROM debian:stable-slim@sha256:00\n";
        let df = Dockerfile::parse(text).unwrap();
        let spans: Vec<&str> = df
            .stages
            .iter()
            .map(|s| &text[image_span(&df, s, text).unwrap()])
            .collect();
        assert_eq!(spans, ["golang:1.26", "debian:stable-slim@sha256:00"]);
    }

    #[test]
    fn pinned_bases_are_keyed_by_name_and_tag() {
        let d = "a".repeat(64);
        let text = format!(
            "FROM golang:1.26@sha256:{d} AS b\nFROM golang:1.26@sha256:{d}\nFROM b\nFROM debian:stable-slim\nFROM scratch\n"
        );
        let bases = pinned_bases(&Dockerfile::parse(&text).unwrap());
        assert_eq!(
            bases.into_iter().collect::<Vec<_>>(),
            [("golang:1.26".to_owned(), format!("sha256:{d}"))]
        );
    }
}
