//! Which modules may depend on which. The engines at the bottom (patch,
//! manifest, dockerfile, image, go) work on bytes in memory and must never reach
//! the network, the disk writer or the command line; `cli` is the only place
//! that renders errors. A new dependency between modules is a design
//! decision: change the table here, in the same commit, on purpose.

// Tests and benchmarks print skip notes and figures, and read their own
// switches (REVENDOR_REALWORLD, SNAPSHOTS): clippy.toml's bans are for the tool.
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// module → the crate modules it may name.
const ALLOWED: &[(&str, &[&str])] = &[
    ("patch", &[]),
    ("manifest", &[]),
    // dockerfile → image, go: a FROM is an image::Reference, a pinned checksum
    // an image::Digest, a golang tag a go::Version; all three are bottom
    // engines on bytes, so the rule holds.
    ("dockerfile", &["go", "image"]),
    ("go", &[]),
    ("image", &[]),
    ("net", &["error"]),
    // marker, upstream, render → image: sha256 is image::Digest's alone.
    ("marker", &["dockerfile", "image", "manifest"]),
    ("registry", &["image", "net"]),
    // config → go: vendor.toml's `[image] go` is validated as a go::Version.
    ("config", &["config", "go"]),
    ("paths", &["error"]),
    (
        "upstream",
        &["config", "env", "error", "image", "net", "paths"],
    ),
    (
        "render",
        &[
            "config",
            "dockerfile",
            "error",
            "image",
            "manifest",
            "patch",
            "paths",
            "upstream",
        ],
    ),
    ("report", &["check", "error"]),
    ("pr", &[]),
    ("builder", &["image", "net"]),
    (
        "check",
        &[
            "config",
            "dockerfile",
            "error",
            "go",
            "image",
            "manifest",
            "marker",
            "ops",
            "patch",
            "paths",
            "registry",
            "render",
            "upstream",
        ],
    ),
];

fn crate_uses(path: &Path, out: &mut BTreeSet<String>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            crate_uses(&entry.unwrap().path(), out);
        }
        return;
    }
    if path.extension().is_some_and(|e| e == "rs") {
        let text = std::fs::read_to_string(path).unwrap();
        for (i, _) in text.match_indices("crate::") {
            let name: String = text[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
}

#[test]
fn modules_depend_only_on_what_the_table_allows() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = BTreeMap::new();
    for (module, allowed) in ALLOWED {
        let mut path = src.join(module);
        if !path.exists() {
            path = src.join(format!("{module}.rs"));
        }
        assert!(
            path.exists(),
            "module `{module}` is in the table but not in src/"
        );
        let mut uses = BTreeSet::new();
        crate_uses(&path, &mut uses);
        let extra: Vec<String> = uses
            .into_iter()
            .filter(|u| u != module && !allowed.contains(&u.as_str()))
            .collect();
        if !extra.is_empty() {
            violations.insert(*module, extra);
        }
    }
    assert!(
        violations.is_empty(),
        "modules reaching past their layer: {violations:?}"
    );
}
