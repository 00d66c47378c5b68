//! [`Context`]: what every command and every check works with — the package
//! directory, the environment, the HTTP client, the console and the download
//! cache — and the registry client built from them.
//!
//! It sits below `check` and `ops` (both take a `&Context`) and above the
//! transports it bundles (`net`, `registry`, `upstream::cache`), so neither
//! `check` nor `ops` needs the other to reach the network.
//!
//! 1. `cli` builds one [`Context`] per run with [`Context::open`], which
//!    first takes the package's lock for the run's [`Access`] (DESIGN.md,
//!    "One writer at a time"; `paths::lock`), then settles any transaction a
//!    killed run left behind. The lock is held as long as the context lives.
//! 2. Ops and checks read files under [`Context::root`], fetch through
//!    [`Context::client`] (via `upstream`) and reach registries through
//!    [`Context::registry`].

use std::path::PathBuf;

use crate::console::{Shell, Verbosity};
use crate::env::Env;
use crate::error::{Error, Result};
use crate::net::{Client, ClientOptions, Exchange};
use crate::paths::lock::Waiting;
use crate::paths::{self, PackageLock, Recovery};

pub use crate::paths::Access;
use crate::registry;
use crate::upstream::cache::Cache;

/// What every op needs: the package, the environment, the network, the console.
#[derive(Debug)]
pub struct Context {
    /// The package directory.
    pub root: PathBuf,
    /// The environment variables.
    pub env: Env,
    /// The HTTP client (counts requests for `-v`); TLS is set up on its first request only.
    pub client: Client,
    /// The console.
    pub shell: Shell,
    /// The content-addressed download cache.
    pub cache: Cache,
    /// The package's lock, released when the run ends.
    _lock: PackageLock,
}

impl Context {
    /// A context for a run that writes the package at `root`: [`Context::open`]
    /// with [`Access::Write`].
    pub fn new(root: PathBuf, env: Env, offline: bool, shell: Shell) -> Result<Context> {
        Context::open(root, env, offline, shell, Access::Write)
    }

    /// A context for the package at `root`, holding its lock for `access`
    /// (waiting up to `REVENDOR_LOCK_TIMEOUT` for another revendor there),
    /// and settling any transaction a killed run left behind before anything
    /// reads the tree.
    pub fn open(
        root: PathBuf,
        env: Env,
        offline: bool,
        shell: Shell,
        access: Access,
    ) -> Result<Context> {
        let token_origins = vec![
            env.api_url.clone(),
            env.raw_url.clone(),
            env.server_url.clone(),
        ];
        let client = Client::new(ClientOptions {
            token: env.token.clone(),
            token_origins,
            cache_dir: env.cache_dir.clone(),
            offline,
            retries: 3,
            timeout: env.http_timeout,
        });
        let waiting = Waiting {
            timeout: env.lock_timeout,
        };
        let (lock, recovery) = paths::hold(&root, access, &waiting, &mut |holder| {
            shell.status(
                "Waiting",
                format!(
                    "for {holder} to finish with `{}` (up to {}s, REVENDOR_LOCK_TIMEOUT)",
                    root.display(),
                    waiting.timeout.as_secs_f64()
                ),
            )
        })?;
        tell_recovery(&shell, recovery);
        if let Some(downloads) = shell.downloads() {
            client.set_progress(Box::new(move |url, done, total| {
                downloads.advance(url, done, total)
            }));
        }
        if shell.verbosity() == Verbosity::Verbose {
            let shell = shell.clone();
            client.set_request_hook(Box::new(move |x| shell.step("HTTP", exchange(x))));
        }
        let cache = Cache::new(&env.cache_dir);
        Ok(Context {
            root,
            env,
            client,
            shell,
            cache,
            _lock: lock,
        })
    }

    /// A registry client with the package's credentials (`DOCKER_CONFIG`)
    /// and mirrors (`REVENDOR_REGISTRY_MIRRORS`); a usage error under
    /// `--offline`, since every registry call needs the network.
    pub fn registry(&self) -> Result<registry::Client> {
        if self.client.offline() {
            return Err(Error::usage(
                "this command reads the image registry, and --offline forbids the network",
                "drop --offline",
            ));
        }
        let client = registry::Client::configured(
            &self.env.docker_config,
            self.env.registry_mirrors.as_deref(),
            self.env.http_timeout,
        )?;
        if self.shell.verbosity() == Verbosity::Verbose {
            let shell = self.shell.clone();
            client.set_request_hook(Box::new(move |x| shell.step("HTTP", exchange(x))));
        }
        Ok(client)
    }

    /// With `-v`, how many requests the run made and how many a 304 answered.
    pub fn report_network(&self) {
        let s = self.client.stats();
        if s.requests() > 0 {
            self.shell.verbose(format!(
                "{} HTTP requests, {} conditional, {} answered 304 Not Modified",
                s.requests(),
                s.conditional(),
                s.not_modified()
            ));
        }
    }
}

/// A request as `-v` prints it: `GET https://… 200`, `… 304 Not Modified
/// (the cached copy)`, `… no answer`.
fn exchange(x: &Exchange<'_>) -> String {
    let outcome = match x.status {
        Some(304) => "304 Not Modified (the cached copy)".to_string(),
        Some(status) => status.to_string(),
        None => "no answer".to_string(),
    };
    format!("{} {} {outcome}", x.method, x.url)
}

/// Tells on stderr what settling a killed run's transaction did to the
/// package (nothing to say when it was clean, or deferred before a commit).
fn tell_recovery(shell: &Shell, recovery: Recovery) {
    match recovery {
        Recovery::Clean => {}
        Recovery::Deferred { committed: true } => shell.warn(
            "an interrupted run had committed, and another revendor is reading the package: \
             it is read as that run's writes leave it; the next command that writes here \
             completes them",
        ),
        Recovery::Deferred { committed: false } => {}
        Recovery::RolledBack => shell.warn(
            "an interrupted run left no plan: every file is whole (the old one, or the \
                 one file such a run writes, renamed into place); its staged files were \
                 discarded",
        ),
        Recovery::Completed => {
            shell.warn("an interrupted run had committed; its writes were completed")
        }
        Recovery::ReadOnly {
            committed: true,
            reason,
        } => shell.warn(format!(
            "an interrupted run had committed, and its writes cannot be completed here \
             ({reason}): the package is read as they leave it; the files on disk stay \
             mixed until a revendor command runs where it can write"
        )),
        Recovery::ReadOnly {
            committed: false,
            reason,
        } => shell.warn(format!(
            "an interrupted run left no plan, and its staged files cannot be discarded \
             here ({reason}); every file is whole (the old one, or the one file such a \
             run writes, renamed into place)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exchange_names_method_url_and_outcome() {
        let x = |status| Exchange {
            method: "GET",
            url: "https://h/x",
            status,
        };
        assert_eq!(exchange(&x(Some(200))), "GET https://h/x 200");
        assert_eq!(
            exchange(&x(Some(304))),
            "GET https://h/x 304 Not Modified (the cached copy)"
        );
        assert_eq!(exchange(&x(None)), "GET https://h/x no answer");
    }
}
