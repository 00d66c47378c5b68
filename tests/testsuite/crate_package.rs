//! The crate `cargo install revendor` builds (issue 22, "Install"): `cargo
//! package --list` names the sources, the lock and the docs the unit tests
//! read, and nothing of the multus package, the tests or the build output.

use std::process::Command;

#[test]
fn the_crate_holds_the_sources_and_nothing_of_the_package() {
    let out = Command::new(env!("CARGO"))
        .args([
            "package",
            "--list",
            "--locked",
            "--offline",
            "--allow-dirty",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "cargo package --list failed:\n{stderr}"
    );
    let list = String::from_utf8(out.stdout).unwrap();
    let files: Vec<&str> = list.lines().collect();
    for needed in [
        "Cargo.toml",
        "Cargo.lock",
        "README.md",
        "src/main.rs",
        "src/lib.rs",
        "src/cli/mod.rs",
        "docs/reference.md",
        "docs/checks.md",
    ] {
        assert!(
            files.contains(&needed),
            "{needed} is not in the crate:\n{list}"
        );
    }
    let foreign = [
        "tests/",
        "benches/",
        "target/",
        "examples/",
        "upstream/",
        "templates/",
        ".tools/",
    ];
    for file in &files {
        assert!(
            !foreign.iter().any(|dir| file.starts_with(dir)),
            "{file} should not be in the crate"
        );
    }
}
