//! revendor's integration tests, one binary (as cargo's own testsuite is):
//! `support` and `registry_support` compile once, and every module below runs
//! the real binary against real local parts (git repositories, the CNCF
//! registry, buildah, a GitHub stand-in on loopback).

// Tests and benchmarks print skip notes and figures, and read their own
// switches (REVENDOR_REALWORLD, SNAPSHOTS): clippy.toml's bans are for the tool.
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

mod registry_support;
mod support;

mod adopt_matching;
mod adopt_then_move;
mod analyzers_realworld;
mod arg_digest;
mod bad_input;
mod check;
mod check_all;
mod check_realworld;
mod cli_help;
mod console;
mod crate_package;
mod examples;
mod examples_assets;
mod examples_helm;
mod examples_oci;
mod fresh_clone;
mod fuzz_corpus;
mod helm_contract;
mod helm_oci;
mod helm_realworld;
mod helm_repo;
mod hostile_text;
mod image;
mod image_e2e;
mod kill;
mod kubeovn_realworld;
mod layers;
mod net;
mod nightly;
mod offline;
mod one_writer;
mod output_formats;
mod patch_fuzz_gnu;
mod patch_golden;
mod patch_merge_file;
mod pin_base_images;
mod pr;
mod pr_builders;
mod pr_report;
mod pr_upstreams;
mod properties;
mod reference_doc;
mod registry;
mod registry_head;
mod release_assets;
mod removed;
mod render;
mod source_conflict;
mod source_tree;
mod started_patch;
mod support_selftest;
mod terminal;
mod tls;
mod update;
mod update_adopt;
mod update_continue;
mod update_realworld;
mod update_upstreamed;
mod upstreams;
mod upstreams_dir;
mod vendor_dir;
mod yaml_pin;
