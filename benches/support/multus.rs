//! The repository's own multus package as a benchmark adopts it: its
//! vendor.toml, chart, patches, image recipe and the values files its Helm
//! contracts render with, without the rendered template, the pristine copy
//! or the lock, which `update` then writes (and so fills the cache with the
//! source archive a warm check reads).

use std::fs;
use std::path::Path;

/// Files and directories of the root package an adoption starts from.
const FILES: [&str; 7] = [
    "vendor.toml",
    "Chart.yaml",
    "values.yaml",
    ".helmignore",
    "patches",
    "images",
    "tests/values",
];

/// Writes the unadopted multus package into `dir`.
pub fn unadopted(dir: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for rel in FILES {
        copy(&root.join(rel), &dir.join(rel));
    }
}

fn copy(from: &Path, to: &Path) {
    if from.is_dir() {
        for entry in fs::read_dir(from).expect("read a package directory") {
            let entry = entry.expect("a directory entry");
            copy(&entry.path(), &to.join(entry.file_name()));
        }
        return;
    }
    fs::create_dir_all(to.parent().expect("a parent")).expect("create a directory");
    fs::copy(from, to).expect("copy a package file");
}
