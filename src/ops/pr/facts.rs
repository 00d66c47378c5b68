//! Every fact of the upgrade's [`Summary`], gathered from the base commit
//! and the working tree, so it is right whether or not the base had a lock.
//!
//! 1. The base commit's vendor.toml says the old version (its lock may not
//!    exist); the working tree's lock says the new one.
//! 2. The old pristine copies come from the base commit, or, when it holds
//!    none (a package adopted without a lock, or copies git ignores), from
//!    upstream at the old version, verified against the base's lock when it
//!    has one. The new ones are the working tree's.
//! 3. Patches (`patches.rs`), builder, image, markers, upstream diffstat and
//!    adaptations (`adaptations.rs`) are read from those two sides.
//! 4. The offline check runs on the working tree; a marker with a resolver
//!    is re-verified online unless `--offline` forbids it, and the summary
//!    says which happened.

use std::collections::BTreeMap;
use std::path::Path;

use super::adaptations::{self, Known};
use super::patches::{self, Copy, Inputs, NOT_BEFORE, NOT_NOW, Trees};
use crate::check::{self, Finding, Input, Severity, Sink};
use crate::config::lock::{LOCK_PATH, Lock};
use crate::config::{Config, Image, Selection, Upstream, Vendor};
use crate::dockerfile::{Base, Dockerfile};
use crate::error::{Error, Result};
use crate::git::{Change, Repo};
use crate::go;
use crate::ops::check::{CheckOptions, check};
use crate::paths;
use crate::pr::{self, Checks, FileStat, PlatformDigest, Reverified, Summary};
use crate::render::{self, Patches};
use crate::upstream;
use crate::workspace::Context;

/// The summary and what it was made from.
pub(super) struct Gathered {
    /// Every fact.
    pub summary: Summary,
    /// The package's changed files.
    pub changes: Vec<Change>,
    /// What the offline check found.
    pub findings: Vec<Finding>,
    /// The working tree's vendor.toml.
    pub config: Config,
}

/// The base commit's side of the package.
struct Before {
    config: Option<Config>,
    /// The first upstream's version, even when the config does not parse.
    version: Option<String>,
    lock: Option<Lock>,
}

impl Before {
    /// The version upstream `up` was at in the base commit: its vendor.toml
    /// version (the first upstream's as read when it does not parse), else
    /// its lock's (a branch's commit).
    fn version_of(&self, up: &Upstream, first: bool) -> Option<String> {
        let name = up.name.as_deref();
        let declared = match &self.config {
            Some(c) => c
                .upstreams
                .iter()
                .find(|u| u.name.as_deref() == name)
                .and_then(|u| u.version.clone()),
            None if first => self.version.clone(),
            None => None,
        };
        declared.or_else(|| {
            self.lock
                .as_ref()
                .and_then(|l| l.version(name))
                .map(str::to_owned)
        })
    }
}

/// Gathers the summary of the package at `ctx.root` against `base`;
/// `scope` is the Conventional Commits scope.
///
/// What it holds, in the order it is gathered: each upstream's two sides
/// (the base commit's version and source, the working tree's locked
/// version and source); each vendored file's pristine copy on both sides
/// ([`Copy`]); each patch's result recomputed from them (`patches.rs`); the
/// offline check's findings; each upstream's facts (commits, go.mod, the
/// files that arrived and went); an adaptation per changed file; the images
/// and their Go builders; the markers and the upstream diffstat. Every one
/// is read from the base commit and the working tree, never from a report.
pub(super) fn gather(ctx: &Context, repo: &Repo, base: git2::Oid, scope: &str) -> Result<Gathered> {
    let config = Config::load(&ctx.root)?;
    let Some(lock) = Lock::load(&ctx.root)? else {
        return Err(Error::usage(
            "this package has no upstream/lock.toml yet",
            "run `revendor update` first",
        ));
    };
    let tree = repo.tree(base)?;
    let before = before(ctx, repo, &tree);
    let changes = repo.changed(&tree)?;
    let base_config = before.config.as_ref().unwrap_or(&config);
    let sides = sides(ctx, &config, base_config, &lock, &before);
    let copies = copies(ctx, repo, &tree, &config, &lock, &before, &sides)?;
    let patch_results = patch_results(repo, &tree, &config, base_config, &sides, &copies)?;

    let (findings, checks) = offline_check(ctx);
    let (arrived_now, gone_now) = match &before.lock {
        Some(old) => (arrived(&lock, old), arrived(old, &lock)),
        None => (Vec::new(), Vec::new()),
    };
    let mut upstreams = upstream_summaries(ctx, &sides, &lock, &before, &arrived_now, &gone_now);
    let known = Known {
        config: &config,
        base_lock: before.lock.as_ref(),
        upstreams: &upstreams,
        copies: &copies,
        patches: &patch_results,
    };
    let adaptations = adaptations(ctx, repo, &tree, &known, &changes);
    let upstream = upstreams[0].clone();
    if upstreams.len() == 1 {
        upstreams.clear();
    }
    let mut images = images(repo, &tree, &config, &lock, before.lock.as_ref());
    let image = images.first().cloned();
    if images.len() == 1 {
        images.clear();
    }
    let mut builders = image_builders(ctx, repo, &tree, &config, &lock, before.lock.as_ref());
    let builder = builders.first().map(|b| b.builder.clone());
    if builders.len() == 1 {
        builders.clear();
    }
    drop(sides);
    let summary = Summary {
        package: scope.to_owned(),
        upstream,
        upstreams,
        patches: patch_results,
        builder,
        builders,
        image,
        images,
        markers: markers(ctx, repo, &tree, &config, &lock, &findings),
        diffstat: diffstats(&config, &copies),
        added: arrived_now.into_iter().map(|(_, f)| f).collect(),
        removed: gone_now.into_iter().map(|(_, f)| f).collect(),
        adaptations,
        checks,
    };
    Ok(Gathered {
        summary,
        changes,
        findings,
        config,
    })
}

/// Each upstream's facts, with the files that arrived (`arrived_now`) and
/// went (`gone_now`) with it.
fn upstream_summaries(
    ctx: &Context,
    sides: &[Side<'_>],
    lock: &Lock,
    before: &Before,
    arrived_now: &[(Option<String>, String)],
    gone_now: &[(Option<String>, String)],
) -> Vec<pr::Upstream> {
    sides
        .iter()
        .map(|side| {
            let mine = |files: &[(Option<String>, String)]| {
                files
                    .iter()
                    .filter(|(u, _)| *u == side.up.name)
                    .map(|(_, f)| f.clone())
                    .collect()
            };
            pr::Upstream {
                added: mine(arrived_now),
                removed: mine(gone_now),
                chart: chart_facts(ctx, side, lock, before.lock.as_ref()),
                ..upstream_facts(side, lock)
            }
        })
        .collect()
}

/// Each image's Go builder, before and after.
fn image_builders(
    ctx: &Context,
    repo: &Repo,
    tree: &git2::Tree<'_>,
    config: &Config,
    lock: &Lock,
    base_lock: Option<&Lock>,
) -> Vec<pr::ImageBuilder> {
    config
        .images
        .iter()
        .map(|image| pr::ImageBuilder {
            name: image.name.clone(),
            builder: builder(ctx, repo, tree, config, image, lock, base_lock),
        })
        .collect()
}

/// What each of `changes` adapts, told from its bytes in the base commit
/// (`tree`) and in the working tree ([`adaptations::describe`]).
fn adaptations(
    ctx: &Context,
    repo: &Repo,
    tree: &git2::Tree<'_>,
    known: &Known<'_>,
    changes: &[Change],
) -> Vec<pr::Adaptation> {
    changes
        .iter()
        .map(|c| {
            let old = repo.read_at(tree, &c.path);
            let new = paths::read_opt(&ctx.root.join(&c.path)).ok().flatten();
            adaptations::describe(known, c, old.as_deref(), new.as_deref())
        })
        .collect()
}

/// Each upstream of the working tree's `config` on both sides: its version
/// and source in the base commit (`base_config`, `before`) and in the
/// working tree's `lock`.
fn sides<'a>(
    ctx: &'a Context,
    config: &'a Config,
    base_config: &'a Config,
    lock: &Lock,
    before: &Before,
) -> Vec<Side<'a>> {
    config
        .upstreams
        .iter()
        .enumerate()
        .map(|(i, up)| {
            let name = up.name.as_deref();
            let was = base_config
                .upstreams
                .iter()
                .find(|u| u.name.as_deref() == name)
                .unwrap_or(up);
            Side {
                up,
                from: before.version_of(up, i == 0),
                to: lock.version(name).unwrap_or_default().to_owned(),
                source: upstream::open(up, &ctx.env, &ctx.client),
                base_source: upstream::open(was, &ctx.env, &ctx.client),
            }
        })
        .collect()
}

/// Every patch's result on every side, in vendor.toml order: recomputed
/// from the base commit's patches (read from `tree`) and the working
/// tree's, over `copies` ([`patches::results`]).
fn patch_results(
    repo: &Repo,
    tree: &git2::Tree<'_>,
    config: &Config,
    base_config: &Config,
    sides: &[Side<'_>],
    copies: &[Copy],
) -> Result<Vec<pr::Patch>> {
    let base_bytes: BTreeMap<String, Vec<u8>> = base_config
        .patches
        .iter()
        .filter_map(|p| Some((p.name.clone(), repo.read_at(tree, &p.file)?)))
        .collect();
    let mut patch_results = Vec::new();
    for side in sides {
        let mut trees = Trees::new(&*side.base_source, &*side.source);
        patch_results.extend(patches::results(
            &Inputs {
                config,
                upstream: side.up.name.as_deref(),
                base_config,
                base_bytes: &base_bytes,
                from: side.from.as_deref(),
                to: &side.to,
                copies,
            },
            &mut trees,
        )?);
    }
    patch_results.sort_by_key(|r| {
        config
            .patches
            .iter()
            .position(|p| p.name == r.name)
            .unwrap_or(usize::MAX)
    });
    Ok(patch_results)
}

/// The base commit's vendor.toml, its version and its lock; each `None`
/// when the base has none (or, for the config, when it no longer parses:
/// the working tree's then stands in).
fn before(ctx: &Context, repo: &Repo, tree: &git2::Tree<'_>) -> Before {
    let text = repo
        .read_at(tree, "vendor.toml")
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    let config = text.as_ref().and_then(|t| {
        Config::parse(&ctx.root, Path::new("vendor.toml (base)"), t)
            .map_err(|e| {
                ctx.shell.warn(format!(
                    "the base commit's vendor.toml does not parse ({e}); its patches are read as the working tree's declares them"
                ))
            })
            .ok()
    });
    let version = config
        .as_ref()
        .and_then(|c| c.upstreams[0].version.clone())
        .or_else(|| {
            let table: toml::Table = toml::from_str(text.as_deref()?).ok()?;
            Some(table.get("upstream")?.get("version")?.as_str()?.to_owned())
        });
    let lock = repo
        .read_at(tree, LOCK_PATH)
        .and_then(|b| Lock::parse(Path::new(LOCK_PATH), &String::from_utf8_lossy(&b)).ok());
    Before {
        config,
        version,
        lock,
    }
}

/// One upstream of the package, at the base commit and in the working tree.
struct Side<'a> {
    up: &'a Upstream,
    /// The version in the base commit, when it had the upstream.
    from: Option<String>,
    /// The locked version in the working tree.
    to: String,
    source: Box<dyn upstream::Source + 'a>,
    /// The base commit's source of the upstream.
    base_source: Box<dyn upstream::Source + 'a>,
}

/// Each vendored file at both versions, each of its upstream (`sides`): a
/// directory's files are those either lock lists (and those a patch
/// creates), so a file upstream added or removed is one too.
fn copies(
    ctx: &Context,
    repo: &Repo,
    tree: &git2::Tree<'_>,
    config: &Config,
    lock: &Lock,
    before: &Before,
    sides: &[Side<'_>],
) -> Result<Vec<Copy>> {
    let listing = lock
        .files
        .iter()
        .chain(before.lock.iter().flat_map(|l| &l.files))
        .map(|f| (f.upstream.as_deref(), f.from.as_str()));
    let files = render::files(config, listing, &Patches::load(config)?)?;
    let locked = |l: &Lock, v: &Vendor| l.file_sha256(v.upstream.as_deref(), &v.from).is_some();
    Ok(files
        .into_iter()
        .map(|v| {
            if v.created {
                // A patch creates it: its pristine copy is empty on both sides.
                return Copy {
                    vendor: v,
                    old: Ok(Vec::new()),
                    new: Ok(Vec::new()),
                };
            }
            let side = sides
                .iter()
                .find(|s| s.up.name == v.upstream)
                .unwrap_or(&sides[0]);
            let base_source = &*side.base_source;
            let vendored_before = before.config.as_ref().is_none_or(|c| {
                c.vendor.iter().any(|b| {
                    b.upstream == v.upstream
                        && (b.from == v.from || b.selects_from(&v.from).is_some())
                })
            }) && before.lock.as_ref().is_none_or(|l| locked(l, &v));
            let old = match (repo.read_at(tree, &v.pristine()), &side.from) {
                (Some(bytes), _) => Ok(bytes),
                (None, _) if !vendored_before => Err(NOT_BEFORE.to_owned()),
                (None, None) => Err("the base commit has no such package".to_owned()),
                (None, Some(version)) => {
                    ctx.shell.status(
                        "Fetching",
                        format!("{} at {version} (the base commit holds no pristine copy)", v.from),
                    );
                    let expected = before
                        .lock
                        .as_ref()
                        .and_then(|l| l.file_sha256(v.upstream.as_deref(), &v.from));
                    upstream::fetch_file(base_source, &ctx.cache, version, &v.from, expected)
                        .map_err(|e| {
                            format!("the base commit holds no pristine copy, and fetching it at {version} failed: {e}")
                        })
                }
            };
            let new = match paths::read_opt(&ctx.root.join(v.pristine())) {
                Ok(Some(bytes)) => Ok(bytes),
                Ok(None) if !locked(lock, &v) => Err(NOT_NOW.to_owned()),
                Ok(None) => Err(format!("the working tree has no `{}`", v.pristine())),
                Err(e) => Err(e.to_string()),
            };
            Copy { vendor: v, old, new }
        })
        .collect())
}

/// The offline check on the working tree, as findings and as the summary's
/// `checks`; a check that cannot run is one error that says why.
fn offline_check(ctx: &Context) -> (Vec<Finding>, Checks) {
    let command = "revendor check --offline".to_owned();
    let findings = match check(ctx, &CheckOptions::default()) {
        Ok(report) => report.findings,
        Err(e) => {
            return (
                Vec::new(),
                Checks {
                    command,
                    errors: 1,
                    warnings: 0,
                    findings: vec![format!("the check could not run: {e}")],
                },
            );
        }
    };
    let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
    let checks = Checks {
        command,
        errors: count(Severity::Error),
        warnings: count(Severity::Warning),
        findings: findings
            .iter()
            .filter(|f| f.severity != Severity::Info)
            .map(|f| {
                format!(
                    "`{}` {}:{}: {}: {}",
                    f.id, f.file, f.line, f.severity, f.message
                )
            })
            .collect(),
    };
    (findings, checks)
}

fn upstream_facts(side: &Side<'_>, lock: &Lock) -> pr::Upstream {
    let (from, to) = (side.from.clone(), side.to.clone());
    // A branch or a commit has no release page.
    let release = matches!(side.up.selection, Selection::Tags(_));
    let pages = side.source.pages(from.as_deref(), &to, release);
    pr::Upstream {
        label: side.up.name.clone(),
        source: side.up.source.describe(),
        name: pages.name,
        url: pages.url,
        from,
        to,
        release_notes: pages.release_notes,
        compare: pages.compare,
        commit: lock
            .upstream(side.up.name.as_deref())
            .and_then(|l| l.commit.clone()),
        added: Vec::new(),
        removed: Vec::new(),
        chart: None,
    }
}

/// For a chart (a lock entry with an archive): the app versions the locks
/// record at both sides, and the links of the Chart.yaml vendored now. The
/// links need the chart's archive; when it cannot be read, the body goes
/// without them and says why on the console.
fn chart_facts(
    ctx: &Context,
    side: &Side<'_>,
    lock: &Lock,
    base_lock: Option<&Lock>,
) -> Option<pr::Chart> {
    let name = side.up.name.as_deref();
    let locked = lock.upstream(name)?;
    locked.archive_sha256.as_ref()?;
    let artifact = side.source.artifact(&side.to).unwrap_or_else(|e| {
        ctx.shell.warn(format!(
            "the pull request links no Chart.yaml `home` or `sources` of {}: {e}",
            side.up.label()
        ));
        None
    });
    let (home, sources) = artifact.map(|a| (a.home, a.sources)).unwrap_or_default();
    Some(pr::Chart {
        app_from: base_lock
            .and_then(|l| l.upstream(name))
            .and_then(|l| l.app_version.clone()),
        app_to: locked.app_version.clone(),
        home,
        sources,
    })
}

/// The golang stage of a Dockerfile, as written, and the Go its tag names.
fn golang(text: &[u8]) -> Option<(String, Option<go::Version>)> {
    let df = Dockerfile::parse(&String::from_utf8_lossy(text)).ok()?;
    df.stages.iter().find_map(|s| match &s.base {
        Base::Image(r) if r.is_docker_official("golang") => Some((
            r.to_string(),
            r.tag().and_then(go::Version::from_tag).map(|(v, _)| v),
        )),
        _ => None,
    })
}

/// `image`'s golang builder stage, now and in the base commit, against the
/// go.mod `go` directive of the upstream it is built from.
fn builder(
    ctx: &Context,
    repo: &Repo,
    tree: &git2::Tree<'_>,
    config: &Config,
    image: &Image,
    lock: &Lock,
    base_lock: Option<&Lock>,
) -> pr::Builder {
    let upstream = config.image_upstream(image);
    let now = paths::read_opt(&ctx.root.join(&image.dockerfile))
        .ok()
        .flatten()
        .and_then(|b| golang(&b));
    let was = repo
        .read_at(tree, &image.dockerfile)
        .and_then(|b| golang(&b))
        .map(|(r, _)| r);
    let directive = lock.upstream(upstream).and_then(|u| u.go_directive.clone());
    let satisfied = match (&now, directive.as_deref().and_then(go::Version::parse)) {
        (Some((_, Some(have))), Some(needed)) => Some(have.satisfies(&needed)),
        _ => None,
    };
    let before = base_lock
        .and_then(|l| l.upstream(upstream))
        .and_then(|u| u.go_directive.clone());
    pr::Builder {
        dockerfile: image.dockerfile.clone(),
        image_before: was.filter(|w| now.as_ref().is_none_or(|(n, _)| n != w)),
        image: now.as_ref().map(|(r, _)| r.clone()),
        go: now.and_then(|(_, v)| v).map(|v| v.to_string()),
        go_directive_before: before.filter(|b| Some(b) != directive.as_ref()),
        go_directive: directive,
        satisfied,
    }
}

/// Each pinned image, in the lock's order.
fn images(
    repo: &Repo,
    tree: &git2::Tree<'_>,
    config: &Config,
    lock: &Lock,
    base_lock: Option<&Lock>,
) -> Vec<pr::Image> {
    let read = render::read_pins(config, |f| repo.read_at(tree, f)).unwrap_or_default();
    lock.images
        .iter()
        .map(|now| {
            let name = now.name.as_deref();
            let before = base_lock
                .and_then(|l| l.image(name).map(|i| i.reference.clone()))
                .or_else(|| {
                    read.iter()
                        .find(|(n, _)| n.as_deref() == name)
                        .map(|(_, r)| r.clone())
                });
            image(now, before)
        })
        .collect()
}

fn image(now: &crate::config::lock::LockedImage, before: Option<String>) -> pr::Image {
    pr::Image {
        name: now.name.clone(),
        reference: now.reference.clone(),
        before: before.filter(|b| *b != now.reference),
        platforms: now
            .platforms
            .iter()
            .map(|(platform, digest)| PlatformDigest {
                platform: platform.clone(),
                digest: digest.clone(),
            })
            .collect(),
    }
}

fn markers(
    ctx: &Context,
    repo: &Repo,
    tree: &git2::Tree<'_>,
    config: &Config,
    lock: &Lock,
    findings: &[Finding],
) -> Vec<pr::Marker> {
    let error_of = |findings: &[Finding], name: &str| {
        findings
            .iter()
            .find(|f| f.id == format!("marker:{name}") && f.severity == Severity::Error)
            .map(|f| f.message.clone())
    };
    let verifiable = |m: &crate::config::Marker| m.resolver.is_some() && m.pin.is_some();
    let online = if ctx.client.offline() || !config.markers.iter().any(verifiable) {
        None
    } else {
        let input = Input::new(ctx, config, lock, true, false);
        let mut sink = Sink::new();
        Some(
            check::run_one("marker", &input, &mut sink)
                .map(|()| sink.into_findings())
                .map_err(|e| e.to_string()),
        )
    };
    let value = |bytes: Option<Vec<u8>>, key: &str| {
        let df = Dockerfile::parse(&String::from_utf8_lossy(&bytes?)).ok()?;
        df.markers(key).first().map(|l| l.value.clone())
    };
    config
        .markers
        .iter()
        .map(|m| {
            let now = value(
                paths::read_opt(&ctx.root.join(&m.file)).ok().flatten(),
                &m.key,
            );
            let was = value(repo.read_at(tree, &m.file), &m.key);
            let offline = error_of(findings, &m.name);
            let reverified = match (&online, verifiable(m), &offline) {
                (_, false, _) => Reverified::NoResolver,
                (None, true, _) => Reverified::Offline,
                (Some(_), true, Some(_)) => Reverified::Failed(
                    "its offline comparison failed, so the resolver was not asked".into(),
                ),
                (Some(Err(why)), true, None) => Reverified::Failed(why.clone()),
                (Some(Ok(found)), true, None) => match error_of(found, &m.name) {
                    Some(message) => Reverified::Disagrees(message),
                    None => Reverified::Agrees,
                },
            };
            pr::Marker {
                name: m.name.clone(),
                file: m.file.clone(),
                key: m.key.clone(),
                before: was.filter(|w| Some(w) != now.as_ref()),
                value: now,
                offline,
                resolver: m.resolver.clone(),
                reverified,
            }
        })
        .collect()
}

/// Each vendored file's line counts: every file `[[vendor]]`, and the files
/// of directories that changed (a chart's unchanged files say nothing).
fn diffstats(config: &Config, copies: &[Copy]) -> Vec<FileStat> {
    let own = |c: &Copy| {
        config
            .vendor
            .iter()
            .any(|v| !v.is_dir() && v.upstream == c.vendor.upstream && v.from == c.vendor.from)
    };
    copies
        .iter()
        .filter(|c| !c.vendor.created)
        .map(|c| (own(c), diffstat(c)))
        .filter(|(own, s)| *own || s.status != "changed" || s.added + s.removed > 0)
        .map(|(_, s)| s)
        .collect()
}

fn diffstat(copy: &Copy) -> FileStat {
    let stat = |status: &str, (added, removed): (usize, usize), note: Option<String>| FileStat {
        file: copy.vendor.from.clone(),
        added,
        removed,
        status: status.to_owned(),
        note,
    };
    match (&copy.old, &copy.new) {
        (Ok(old), Ok(new)) => stat("changed", adaptations::line_counts(old, new), None),
        (Err(why), Ok(new)) if why == NOT_BEFORE => {
            stat("added", adaptations::line_counts(b"", new), None)
        }
        (Ok(old), Err(why)) if why == NOT_NOW => {
            stat("removed", adaptations::line_counts(old, b""), None)
        }
        (Err(why), _) | (_, Err(why)) => stat("unknown", (0, 0), Some(why.clone())),
    }
}

/// The rendered paths of the upstream files `now` vouches for and `before`
/// did not, each with its upstream: what arrived between the two locks (the
/// other way round, what went). A file without an `[[output]]` record is
/// named by its upstream path.
fn arrived(now: &Lock, before: &Lock) -> Vec<(Option<String>, String)> {
    now.files
        .iter()
        .filter(|f| before.file_sha256(f.upstream.as_deref(), &f.from).is_none())
        .map(|f| {
            let file = now
                .outputs
                .iter()
                .find(|o| o.from == f.from && o.upstream == f.upstream)
                .map_or_else(|| f.from.clone(), |o| o.file.clone());
            (f.upstream.clone(), file)
        })
        .collect()
}
