//! A small upstream and the package that vendors it, for tests of what the tool prints:
//! `example/app` publishes `deploy/app.yml` (about 8 KiB, so a download has a size to show),
//! and the package patches its namespace.

use super::{GitHub, TempPackage};

/// The upstream repository.
pub const REPO: &str = "example/app";
/// The vendored file in it.
pub const FILE: &str = "deploy/app.yml";

/// `deploy/app.yml` at `version`.
pub fn manifest(version: &str) -> String {
    let mut s = String::from("kind: Deployment\nmetadata:\n  name: app\n  namespace: default\n");
    s.push_str(&format!(
        "spec:\n  replicas: 1\n  paused: false\n# built from {version}\n"
    ));
    for i in 0..160 {
        s.push_str(&format!(
            "# padding line {i:03} to give the download a size\n"
        ));
    }
    s
}

const PATCH: &str = "--- a/templates/app.yml
+++ b/templates/app.yml
@@ -1,7 +1,7 @@
 kind: Deployment
 metadata:
   name: app
-  namespace: default
+  namespace: cozy-app
 spec:
   replicas: 1
   paused: false
";

/// vendor.toml at `version`, tracking 1.x.
pub fn vendor_toml(version: &str) -> String {
    format!(
        r#"[upstream]
github = "{REPO}"
version = "{version}"
track = ">=1.0.0, <2.0.0"

[[vendor]]
from = "{FILE}"
to = "templates/app.yml"

[[patch]]
name = "namespace"
file = "patches/namespace.patch"
applies-to = "vendor"
"#
    )
}

/// Publishes a release of `example/app` for each tag.
pub fn serve(gh: &GitHub, tags: &[&str]) {
    for tag in tags {
        gh.repo(REPO)
            .file_at(tag, FILE, manifest(tag))
            .release(tag, |r| r);
    }
}

/// The package at `version`, without a lock (the first `update` adopts it).
pub fn package(version: &str) -> TempPackage {
    let pkg = TempPackage::new();
    pkg.write("vendor.toml", vendor_toml(version))
        .write("patches/namespace.patch", PATCH);
    pkg
}

/// `templates/app.yml` as the package renders it from `manifest(version)`: what a Makefile
/// left committed at that version.
pub fn rendered(version: &str) -> String {
    manifest(version).replace("namespace: default", "namespace: cozy-app")
}
