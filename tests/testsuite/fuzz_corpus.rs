//! The fuzz corpora, replayed on stable (issue 13): every file under `fuzz/corpus/<target>/`
//! (the hand-made seeds and every input a fuzzer ever crashed on) goes through the same
//! function its cargo-fuzz target calls, so CI runs them without nightly or libFuzzer.

#[path = "../../fuzz/src/lib.rs"]
mod targets;

use std::path::Path;

const FUZZ: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz");

/// What a target does with one input.
type Target = fn(&[u8]);

/// Each target by its `fuzz_targets/<name>.rs` name, with the function it calls.
const TARGETS: [(&str, Target); 9] = [
    ("patch_parse", targets::patch_parse),
    ("patch_apply", targets::patch_apply),
    ("merge3", targets::merge3),
    ("vendor_toml", targets::vendor_toml),
    ("lock", targets::lock),
    ("dockerfile", targets::dockerfile),
    ("shell", targets::shell),
    ("yaml", targets::yaml),
    ("image_manifest", targets::image_manifest),
];

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn every_fuzz_target_is_replayed_here() {
    let mut targets: Vec<String> = names_in(&Path::new(FUZZ).join("fuzz_targets"))
        .into_iter()
        .map(|n| n.trim_end_matches(".rs").to_owned())
        .collect();
    targets.sort();
    let mut replayed: Vec<String> = TARGETS.iter().map(|(n, _)| n.to_string()).collect();
    replayed.sort();
    assert_eq!(targets, replayed);
}

#[test]
fn every_corpus_file_passes_its_target() {
    for (target, run) in TARGETS {
        let dir = Path::new(FUZZ).join("corpus").join(target);
        let files = names_in(&dir);
        assert!(!files.is_empty(), "no seeds for {target}");
        for name in files {
            let bytes = std::fs::read(dir.join(&name)).unwrap();
            let outcome = std::panic::catch_unwind(|| run(&bytes));
            assert!(outcome.is_ok(), "fuzz/corpus/{target}/{name} fails");
        }
    }
}
