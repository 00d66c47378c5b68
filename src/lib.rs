pub mod cli;
pub mod dockerfile;
pub mod manifest;
pub mod marker;
