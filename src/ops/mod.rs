//! One file per command, each a pipeline over the other modules.
//!
//! `update` is `upstream::resolve → upstream::fetch_file → render (patch,
//! rewrite, pin) → patch::refresh → paths::Transaction::commit`; `render` is
//! the same without the network. `image build` is `builder::content_hash →
//! builder::plan → Step::run → registry::Client::resolve_index_with_retry →
//! image_pin::write_pin`. Every op takes the run's
//! [`crate::workspace::Context`].

pub mod check;
pub mod check_all;
pub mod image_build;
pub mod image_pin;
pub mod outcome;
pub mod pin_base;
pub mod pr;
pub mod refresh;
pub mod render;
pub mod tag_guard;
pub mod update;
