//! The tracking issue of `pr --report`, as pure functions: which packages
//! need a person and why ([`rows`]), and the Markdown ([`open_body`],
//! [`closed_body`]), from the packages of a `check --all --format json`
//! document ([`Checked`]).
//!
//! `ops::pr::report` reads the document (or runs the check), finds the
//! issue and writes it; nothing here touches git or the network.

mod body;
mod rows;

pub use body::{MARKER, closed_body, open_body};
pub use rows::{Checked, Document, Failed, Row, rows};
