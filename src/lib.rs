pub mod cli;
pub mod image;
pub mod registry;
