//! `revendor check --all [ROOT]`: every package under ROOT, checked in
//! parallel, one report.
//!
//! 1. [`packages`] finds every directory holding a vendor.toml under ROOT
//!    (the `-C` directory by default); see `discover.rs` for what it skips.
//! 2. [`check_all`] runs [`check`](super::check::check()) on each, on at most
//!    `available_parallelism` scoped threads taking packages from one queue.
//!    A [`Context`] owns an HTTP client and a console that are not shared
//!    between threads, so each package's is opened on the thread that checks
//!    it, by the caller's `open`.
//! 3. Each package ends as its report or as the error that stopped it: one
//!    package's broken vendor.toml is that package's outcome, and the others
//!    still run. Nothing is printed here; `cli` prints the outcomes once all
//!    are in, package by package, so no two packages' lines interleave.
//!
//! The exit code is the worst package's ([`CheckAll::exit_code`]), in
//! DESIGN.md's order: 3 (something unreachable or failed) over 2 (a usage or
//! configuration error) over 1 (findings) over 0.

mod discover;

pub use discover::packages;

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::check::{CheckOptions, CheckReport, check};
use crate::config::repo::RepoConfig;
use crate::error::{Error, ExitCode, Result};
use crate::workspace::Context;

/// Flags of `revendor check --all`.
#[derive(Debug, Clone, Default)]
pub struct CheckAllOptions {
    /// Where to look for packages; the `-C` directory when absent.
    pub root: Option<PathBuf>,
    /// The flags every package is checked with.
    pub check: CheckOptions,
}

/// Opens the [`Context`] of the package at a directory; called on the
/// thread that checks it.
pub type Open<'a> = dyn Fn(PathBuf) -> Result<Context> + Sync + 'a;

/// One package's outcome.
#[derive(Debug)]
pub struct PackageCheck {
    /// Its directory relative to ROOT, `/`-separated (`.` for ROOT itself):
    /// the name every format shows.
    pub package: String,
    /// Its directory as the checks were given it: ROOT joined with `package`.
    pub dir: PathBuf,
    /// Its directory relative to the workspace (`GITHUB_WORKSPACE`, else the
    /// git root), `/`-separated: where annotations point and what the job
    /// matrix lists. The directory as given when it lies outside.
    pub workspace_path: String,
    /// The report, or what stopped this package's check.
    pub outcome: Result<CheckReport>,
}

impl PackageCheck {
    /// This package's exit code, as `revendor -C <package> check` would end.
    pub fn exit_code(&self) -> ExitCode {
        crate::error::exit_code(self.outcome.as_ref().map(CheckReport::outcome))
    }
}

/// What `check --all` found.
#[derive(Debug)]
pub struct CheckAll {
    /// Every package, sorted by [`PackageCheck::package`].
    pub packages: Vec<PackageCheck>,
}

impl CheckAll {
    /// The worst package's exit code.
    pub fn exit_code(&self) -> ExitCode {
        self.packages
            .iter()
            .map(PackageCheck::exit_code)
            .max_by_key(|code| *code as u8)
            .unwrap_or(ExitCode::Clean)
    }
}

/// Checks every package under the root; an error only when the flags are
/// contradictory, the tree cannot be walked, or it holds no package.
pub fn check_all(ctx: &Context, opts: &CheckAllOptions, open: &Open<'_>) -> Result<CheckAll> {
    opts.check.validate(ctx.client.offline())?;
    let root = opts.root.clone().unwrap_or_else(|| ctx.root.clone());
    let (found, excluded) = included_packages(ctx, &root)?;
    if found.is_empty() {
        return Err(Error::usage(
            format!(
                "no package (a directory holding vendor.toml) under `{}`{}",
                root.display(),
                match excluded {
                    0 => String::new(),
                    n => format!(" but the {n} that `[all] exclude` of .revendor.toml leaves out"),
                }
            ),
            "pass the directory that holds the packages: `revendor check --all packages/`",
        ));
    }
    let base = workspace_base(ctx, &root);
    let workers = std::thread::available_parallelism()
        .map(NonZeroUsize::get)
        .unwrap_or(1)
        .min(found.len());
    ctx.shell.verbose(format!(
        "checking {} packages on {workers} threads",
        found.len()
    ));
    let next = AtomicUsize::new(0);
    let mut outcomes: Vec<(usize, Result<CheckReport>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(package) = found.get(i) else {
                            return done;
                        };
                        let dir = root.join(package);
                        done.push((i, open(dir).and_then(|pkg| check(&pkg, &opts.check))));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    outcomes.sort_by_key(|(i, _)| *i);
    let packages = found
        .into_iter()
        .zip(outcomes)
        .map(|(package, (_, outcome))| {
            let dir = root.join(&package);
            PackageCheck {
                workspace_path: relative_to(base.as_deref(), &dir),
                dir,
                package,
                outcome,
            }
        })
        .collect();
    Ok(CheckAll { packages })
}

/// The packages under `root` that `.revendor.toml`'s `[all] exclude` (read
/// from `root` or a parent, up to the git root) does not leave out, and how
/// many it left out.
fn included_packages(ctx: &Context, root: &Path) -> Result<(Vec<String>, usize)> {
    let found = packages(root)?;
    let within = root
        .canonicalize()
        .map_err(crate::paths::io("read", root))?;
    let top = git2::Repository::discover(&within)
        .ok()
        .and_then(|repo| repo.workdir().and_then(|w| w.canonicalize().ok()))
        .unwrap_or_else(|| within.clone());
    let config = RepoConfig::find(&within, &top)?;
    let Some(file) = config
        .path
        .as_deref()
        .filter(|_| !config.all.exclude.is_empty())
    else {
        return Ok((found, 0));
    };
    let home = file.parent().unwrap_or(&top);
    let total = found.len();
    let kept: Vec<String> = found
        .into_iter()
        .filter(|package| {
            let rel = relative_to(Some(home), &root.join(package));
            !config.all.excludes(&rel)
        })
        .collect();
    let excluded = total - kept.len();
    if excluded > 0 {
        ctx.shell.verbose(format!(
            "leaving out {excluded} packages that `[all] exclude` of {} names",
            file.display()
        ));
    }
    Ok((kept, excluded))
}

/// `GITHUB_WORKSPACE`, else the work tree of the git repository holding
/// `root`, canonical; nothing when neither exists.
fn workspace_base(ctx: &Context, root: &Path) -> Option<PathBuf> {
    let base = match &ctx.env.workspace {
        Some(dir) => dir.clone(),
        None => git2::Repository::discover(root)
            .ok()?
            .workdir()?
            .to_path_buf(),
    };
    base.canonicalize().ok()
}

/// `dir` relative to `base`, `/`-separated (`.` for `base` itself); `dir`
/// as given when it is not under `base`.
fn relative_to(base: Option<&Path>, dir: &Path) -> String {
    let as_given = || {
        let text = dir.to_string_lossy().replace('\\', "/");
        text.strip_prefix("./").unwrap_or(&text).to_owned()
    };
    let Some(base) = base else {
        return as_given();
    };
    let Ok(real) = dir.canonicalize() else {
        return as_given();
    };
    match real.strip_prefix(base) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
        Ok(rel) => rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/"),
        Err(_) => as_given(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Finding;

    #[test]
    fn the_worst_package_decides_the_exit_code() {
        let package = |outcome| PackageCheck {
            package: "p".into(),
            dir: "p".into(),
            workspace_path: "p".into(),
            outcome,
        };
        let clean = || {
            package(Ok(CheckReport {
                package: "p".into(),
                findings: Vec::new(),
                changed: Vec::new(),
                unreachable: Vec::new(),
            }))
        };
        let drift = || {
            package(Ok(CheckReport {
                package: "p".into(),
                findings: vec![Finding::error("x", "f", 1, "m")],
                changed: Vec::new(),
                unreachable: Vec::new(),
            }))
        };
        let config = || package(Err(Error::usage("bad", "fix it")));
        let io = || {
            package(Err(Error::Io {
                action: "read",
                path: "x".into(),
                source: std::io::Error::other("gone"),
            }))
        };
        let worst = |packages| CheckAll { packages }.exit_code();
        assert_eq!(worst(vec![]), ExitCode::Clean);
        assert_eq!(worst(vec![clean(), clean()]), ExitCode::Clean);
        assert_eq!(worst(vec![clean(), drift()]), ExitCode::Findings);
        assert_eq!(worst(vec![drift(), config(), clean()]), ExitCode::Usage);
        assert_eq!(worst(vec![io(), config(), drift()]), ExitCode::Failure);
    }

    #[test]
    fn workspace_paths_are_relative_when_they_can_be() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("packages/system/multus");
        std::fs::create_dir_all(&pkg).unwrap();
        let base = dir.path().canonicalize().unwrap();
        assert_eq!(relative_to(Some(&base), &pkg), "packages/system/multus");
        assert_eq!(relative_to(Some(&base), dir.path()), ".");
        assert_eq!(
            relative_to(Some(&pkg.canonicalize().unwrap()), dir.path()),
            dir.path().to_string_lossy()
        );
        assert_eq!(relative_to(None, Path::new("./packages/a")), "packages/a");
    }
}
