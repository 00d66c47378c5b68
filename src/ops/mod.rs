//! One file per command, each a pipeline over the other modules.
//!
//! `update` is `upstream::resolve → upstream::fetch_file → render (patch,
//! rewrite, pin) → patch::refresh → paths::Transaction::commit`; `render` is
//! the same without the network. [`Context`] carries what every op needs.

pub mod check;
pub mod refresh;
pub mod render;
pub mod update;

use std::path::PathBuf;
use std::time::Duration;

use crate::env::Env;
use crate::error::Result;
use crate::net::{Client, ClientOptions};
use crate::paths::{self, Recovery};
use crate::report::Shell;
use crate::upstream::cache::Cache;

/// What every op needs: the package, the environment, the network, the console.
#[derive(Debug)]
pub struct Context {
    /// The package directory.
    pub root: PathBuf,
    /// The environment variables.
    pub env: Env,
    /// The HTTP client (counts requests for `-v`).
    pub client: Client,
    /// The console.
    pub shell: Shell,
    /// The content-addressed download cache.
    pub cache: Cache,
}

impl Context {
    /// A context for the package at `root`, finishing any transaction a
    /// killed run left behind before anything reads the tree.
    pub fn new(root: PathBuf, env: Env, offline: bool, shell: Shell) -> Result<Context> {
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
            timeout: Duration::from_secs(30),
        })?;
        match paths::recover(&root)? {
            Recovery::Clean => {}
            Recovery::RolledBack => {
                shell.warn("an interrupted run had not committed; its staged files were discarded")
            }
            Recovery::Completed => {
                shell.warn("an interrupted run had committed; its writes were completed")
            }
        }
        let cache = Cache::new(&env.cache_dir);
        Ok(Context {
            root,
            env,
            client,
            shell,
            cache,
        })
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
