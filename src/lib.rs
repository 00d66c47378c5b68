pub mod cli;
pub mod patch;
