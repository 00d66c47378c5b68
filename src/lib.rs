pub mod cli;
pub mod manifest;
