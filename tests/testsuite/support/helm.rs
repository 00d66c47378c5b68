//! The helm the tests render with, and the repository's own package to
//! render: the contracts on what Helm renders (issue 19) run the real Helm
//! engine, never a stand-in.
//!
//! `make test-deps` installs `.tools/venv/bin/revendor-test-helm`, a `helm
//! template` over Helm v4's Go SDK (PyPI helm-python-sdk); `REVENDOR_HELM`,
//! when set, names another (a helm 3.x or 4.x binary works the same).

use std::path::{Path, PathBuf};

use super::TempPackage;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// `REVENDOR_HELM`, else the test tool when it is installed.
pub fn configured() -> Option<PathBuf> {
    if let Some(named) = std::env::var_os("REVENDOR_HELM").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(named));
    }
    let tool = Path::new(ROOT).join(".tools/venv/bin/revendor-test-helm");
    tool.exists().then_some(tool)
}

/// The helm binary; a test that renders cannot run without one.
pub fn binary() -> PathBuf {
    configured().unwrap_or_else(|| {
        panic!(
            "no helm to render with: run `make test-deps` (it installs \
             .tools/venv/bin/revendor-test-helm), or set REVENDOR_HELM to a helm 3.x or 4.x"
        )
    })
}

/// The files of the repository root's multus package that a check reads:
/// vendor.toml, the chart (with its .helmignore), the pristine copies and
/// lock, the patches, the image recipe and the values files its contracts
/// render with.
pub const ROOT_PACKAGE: &[&str] = &[
    "vendor.toml",
    "Chart.yaml",
    "values.yaml",
    ".helmignore",
    "templates",
    "upstream",
    "patches",
    "images",
    "tests/values",
];

/// A copy of the repository root's package.
pub fn root_package() -> TempPackage {
    let pkg = TempPackage::new();
    for rel in ROOT_PACKAGE {
        let src = Path::new(ROOT).join(rel);
        if src.is_dir() {
            pkg.copy_from(&src, rel);
        } else {
            pkg.write(rel, std::fs::read(&src).unwrap());
        }
    }
    pkg
}
