pub mod cli;
pub mod dockerfile;
pub mod manifest;
