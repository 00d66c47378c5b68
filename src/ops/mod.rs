//! One file per command, each a pipeline over the other modules.
//!
//! `update` is `upstream::resolve → upstream::fetch_file → render (patch,
//! rewrite, pin) → patch::refresh → paths::Transaction::commit`; `render` is
//! the same without the network. `image build` is `builder::content_hash →
//! builder::plan → Step::run → registry::Client::resolve_index_with_retry →
//! image_pin::write_pin`. [`Context`] carries what every op needs.

pub mod check;
pub mod image_build;
pub mod image_pin;
pub mod pin_base;
pub mod pr;
pub mod refresh;
pub mod render;
pub mod update;

use std::path::PathBuf;

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
            timeout: env.http_timeout,
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
        if let Some(bar) = shell.download_bar() {
            client.set_progress(Box::new(move |url, done, total| {
                let name = url.rsplit('/').next().unwrap_or(url).to_string();
                bar.set_message(name);
                bar.set_length(total.unwrap_or(done));
                bar.set_position(done);
                if total == Some(done) {
                    bar.finish_and_clear();
                    bar.reset();
                }
            }));
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
