//! Helm: a package's chart rendered by `helm template`, for the contracts
//! that hold on what Helm renders (vendor.toml's `[[contract]]` with `helm`).
//!
//! A chart whose values decide its resources cannot be judged from the
//! template text, so revendor asks Helm itself, the binary the user has:
//!
//! 1. [`Helm::locate`] finds it: `REVENDOR_HELM`, else `helm` on `PATH`
//!    ([`Missing`] says which was looked for when there is none);
//! 2. [`Chart::read`] hashes the files of the chart Helm reads, once per
//!    run (`ignore.rs`);
//! 3. [`Helm::template`] renders the chart with its values.yaml and, when
//!    given, one values file on top (`helm template release-name CHART
//!    --values FILE`, in the package directory, offline), reading the
//!    result from the cache when nothing it depends on changed
//!    (`cache.rs`);
//! 4. [`output::documents`] splits the output into documents, each with the
//!    template it came from.
//!
//! Helm's refusal (a `fail` in a template, a values file that is not YAML)
//! is an [`Outcome`], not an error: a contract may assert exactly that.

mod cache;
mod ignore;
pub mod output;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::env::Env;
use crate::error::{Error, Result};

/// The release name every render uses, Helm's own default for `template`.
pub const RELEASE_NAME: &str = "release-name";

/// The helm binary a package's contracts render with.
#[derive(Debug, Clone)]
pub struct Helm {
    program: PathBuf,
    /// What a render's cache key knows the binary by: the hash of its real
    /// path, size and modification time, taken once.
    identity: String,
}

/// A chart's files as a render's cache key covers them (`ignore.rs`), read
/// and hashed once for every values set a run renders it with (issue 23:
/// each render walked and hashed the chart again).
#[derive(Debug, Clone)]
pub struct Chart {
    /// The chart directory, relative to the package directory.
    dir: String,
    /// The hash of every file Helm reads there, by path and bytes.
    digest: String,
}

impl Chart {
    /// Reads the chart at `dir` (relative to the package directory `root`).
    pub fn read(root: &Path, dir: &str) -> Result<Chart> {
        let mut key = cache::Key::new();
        for (rel, path) in ignore::chart_files(&root.join(dir))? {
            key.field(rel.as_bytes());
            key.field(&read(path)?);
        }
        Ok(Chart {
            dir: dir.to_owned(),
            digest: key.finish(),
        })
    }
}

/// Why there is no helm binary to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// `REVENDOR_HELM` is unset and no `helm` is on `PATH`.
    NotOnPath,
    /// `REVENDOR_HELM` names a path that is not an executable file, or a
    /// name that is not on `PATH`.
    NotFound(PathBuf),
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Missing::NotOnPath => f.write_str("no `helm` on PATH (REVENDOR_HELM is unset)"),
            Missing::NotFound(p) => write!(
                f,
                "REVENDOR_HELM is `{}`, which is not a program that can run",
                p.display()
            ),
        }
    }
}

/// What Helm did with one values set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It rendered: its standard output.
    Rendered(String),
    /// It refused (exit code not 0): what it printed, trimmed.
    Refused(String),
}

impl Helm {
    /// The binary `REVENDOR_HELM` names (a path, or a name looked up on
    /// `PATH`), else `helm` on `PATH`.
    pub fn locate(env: &Env) -> std::result::Result<Helm, Missing> {
        let found = match &env.helm {
            Some(named) if named.components().count() > 1 => {
                executable(named).then(|| named.clone())
            }
            Some(named) => on_path(env, named),
            None => on_path(env, Path::new("helm")),
        };
        match (found, &env.helm) {
            (Some(program), _) => Ok(Helm::new(program)),
            (None, Some(named)) => Err(Missing::NotFound(named.clone())),
            (None, None) => Err(Missing::NotOnPath),
        }
    }

    fn new(program: PathBuf) -> Helm {
        let mut key = cache::Key::new();
        let real = program.canonicalize().unwrap_or(program.clone());
        key.field(real.to_string_lossy().as_bytes());
        if let Ok(meta) = std::fs::metadata(&real) {
            key.field(&meta.len().to_le_bytes());
            let modified = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .unwrap_or_default();
            key.field(&modified.as_nanos().to_le_bytes());
        }
        Helm {
            program,
            identity: key.finish(),
        }
    }

    /// The program that runs.
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// Renders `chart` (read from the package directory `root`) with its
    /// values.yaml and, when given, the values file `values` (relative to
    /// `root`) on top; from the cache in `cache_dir` when the binary, the
    /// chart's files and the values file are as they were. An error is only
    /// a file that cannot be read or a helm that cannot be run.
    pub fn template(
        &self,
        root: &Path,
        chart: &Chart,
        values: Option<&str>,
        cache_dir: &Path,
    ) -> Result<Outcome> {
        let mut args = vec!["template", RELEASE_NAME, chart.dir.as_str()];
        args.extend(values.iter().flat_map(|v| ["--values", v]));
        let key = self.key(root, &args, chart, values)?;
        if let Some(hit) = cache::get(cache_dir, &key) {
            return Ok(hit);
        }
        let run_error = |source| Error::Io {
            action: "run",
            path: self.program.clone(),
            source,
        };
        let output = Command::new(&self.program)
            .args(&args)
            .current_dir(root)
            .stdin(Stdio::null())
            .output()
            .map_err(run_error)?;
        let outcome = match output.status.code() {
            Some(0) => Outcome::Rendered(String::from_utf8_lossy(&output.stdout).into_owned()),
            Some(_) => {
                let said = if output.stderr.iter().all(u8::is_ascii_whitespace) {
                    &output.stdout
                } else {
                    &output.stderr
                };
                Outcome::Refused(String::from_utf8_lossy(said).trim().to_owned())
            }
            None => {
                return Err(run_error(std::io::Error::other(
                    "helm was ended by a signal before it answered",
                )));
            }
        };
        cache::put(cache_dir, &key, &outcome);
        Ok(outcome)
    }

    /// The cache key of one render: binary, arguments, values file, chart.
    fn key(
        &self,
        root: &Path,
        args: &[&str],
        chart: &Chart,
        values: Option<&str>,
    ) -> Result<String> {
        let mut key = cache::Key::new();
        key.field(self.identity.as_bytes());
        args.iter().for_each(|a| key.field(a.as_bytes()));
        if let Some(values) = values {
            key.field(&read(root.join(values))?);
        }
        key.field(chart.digest.as_bytes());
        Ok(key.finish())
    }
}

/// A file a render's key covers.
fn read(path: PathBuf) -> Result<Vec<u8>> {
    std::fs::read(&path).map_err(|source| Error::Io {
        action: "read",
        path,
        source,
    })
}

/// The first executable file named `name` in a directory of `PATH`.
fn on_path(env: &Env, name: &Path) -> Option<PathBuf> {
    let path = env.path.as_deref()?;
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|p| executable(p))
}

/// Whether `path` is a file someone may execute.
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(helm: Option<&str>, path: Option<&Path>) -> Env {
        Env {
            helm: helm.map(PathBuf::from),
            path: path.map(|p| p.to_string_lossy().into_owned()),
            ..Env::from_process()
        }
    }

    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn locate_takes_revendor_helm_then_path() {
        let bin = tempfile::tempdir().unwrap();
        assert_eq!(
            Helm::locate(&env(None, Some(bin.path()))).unwrap_err(),
            Missing::NotOnPath
        );
        let helm = script(bin.path(), "helm", "exit 0");
        assert_eq!(
            Helm::locate(&env(None, Some(bin.path()))).unwrap().program,
            helm
        );
        let other = script(bin.path(), "helm4", "exit 0");
        let by_name = Helm::locate(&env(Some("helm4"), Some(bin.path()))).unwrap();
        assert_eq!(by_name.program, other);
        let by_path = env(Some(other.to_str().unwrap()), None);
        assert_eq!(Helm::locate(&by_path).unwrap().program, other);
        let gone = env(Some("/nonexistent/helm"), Some(bin.path()));
        assert_eq!(
            Helm::locate(&gone).unwrap_err(),
            Missing::NotFound(PathBuf::from("/nonexistent/helm"))
        );
    }

    #[test]
    fn a_render_is_cached_until_an_input_changes() {
        let pkg = tempfile::tempdir().unwrap();
        let bin = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        std::fs::write(pkg.path().join("Chart.yaml"), "name: c\n").unwrap();
        std::fs::write(pkg.path().join("v.yaml"), "a: 1\n").unwrap();
        // Counts its runs in a file beside it, and echoes its arguments.
        let count = bin.path().join("runs");
        let helm = script(
            bin.path(),
            "helm",
            &format!("echo x >>{}\necho \"$@\"", count.display()),
        );
        let helm = Helm::new(helm);
        let render = || {
            let chart = Chart::read(pkg.path(), ".").unwrap();
            helm.template(pkg.path(), &chart, Some("v.yaml"), cache.path())
                .unwrap()
        };
        let runs = || std::fs::read_to_string(&count).unwrap().lines().count();
        assert_eq!(
            render(),
            Outcome::Rendered("template release-name . --values v.yaml\n".into())
        );
        assert_eq!(
            render(),
            Outcome::Rendered("template release-name . --values v.yaml\n".into())
        );
        assert_eq!(runs(), 1, "the second render is the cached one");
        std::fs::write(pkg.path().join("v.yaml"), "a: 2\n").unwrap();
        render();
        assert_eq!(runs(), 2, "a changed values file renders again");
        std::fs::write(pkg.path().join("Chart.yaml"), "name: d\n").unwrap();
        render();
        assert_eq!(runs(), 3, "a changed chart file renders again");
    }

    #[test]
    fn a_refusal_keeps_what_helm_said() {
        let pkg = tempfile::tempdir().unwrap();
        let bin = tempfile::tempdir().unwrap();
        let helm = Helm::new(script(
            bin.path(),
            "helm",
            "echo 'Error: no memory limit' >&2\nexit 1",
        ));
        let cache = tempfile::tempdir().unwrap();
        let chart = Chart::read(pkg.path(), ".").unwrap();
        assert_eq!(
            helm.template(pkg.path(), &chart, None, cache.path())
                .unwrap(),
            Outcome::Refused("Error: no memory limit".into())
        );
    }
}
