//! A Dockerfile ARG that pins its value by digest (issue 20): cilium's
//! `ARG VERSION=v1.19.1@sha256:…` under `FROM quay.io/cilium/cilium:${VERSION}`. Moving the
//! version resolves the new tag's digest through the real registry (standing in for quay.io
//! as a mirror) and writes it; the old digest never survives. `render`, offline, refuses an
//! ARG whose digest is not its value's, with the command that resolves it, and writes nothing.

use crate::registry_support::{Auth, Registry, have_registry};
use crate::support;

use registry_support::content::multi_arch;
use revendor::image::MediaType;
use support::{GitHub, Revendor, app};

use crate::registry_support;

const DOCKERFILE: &str = "images/cilium/Dockerfile";

fn dockerfile(value: &str) -> String {
    format!("ARG VERSION={value}\nFROM quay.io/cilium/cilium:${{VERSION}}\nRUN true\n")
}

#[test]
fn a_moved_arg_gets_the_new_tags_digest_and_never_keeps_the_old() {
    if !have_registry("a_moved_arg_gets_the_new_tags_digest") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    let both = ["linux/amd64", "linux/arm64"];
    let old = multi_arch(&both, "cilium v1.0.0", MediaType::OciIndex);
    let new = multi_arch(&both, "cilium v1.1.0", MediaType::OciIndex);
    registry.push_multi_arch("cilium/cilium", "v1.0.0", &old);
    registry.push_multi_arch("cilium/cilium", "v1.1.0", &new);
    let (old, new) = (old.index.digest.to_string(), new.index.digest.to_string());

    let gh = GitHub::start();
    app::serve(&gh, &["v1.0.0", "v1.1.0"]);
    let pkg = app::package("v1.0.0");
    let vendor_toml = pkg.read_string("vendor.toml")
        + "\n[[rewrite]]\nfile = \"images/cilium/Dockerfile\"\ndockerfile-arg = \"VERSION\"\nwith = \"{version}\"\n";
    pkg.write("vendor.toml", vendor_toml);
    pkg.write(DOCKERFILE, dockerfile(&format!("v1.0.0@{old}")));
    let rv = Revendor::new(pkg.path(), &gh).env(
        "REVENDOR_REGISTRY_MIRRORS",
        &format!("quay.io={}", registry.host),
    );

    // Adopting at the version the ARG names keeps its digest, and asks nothing of the registry.
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    assert_eq!(
        pkg.read_string(DOCKERFILE),
        dockerfile(&format!("v1.0.0@{old}"))
    );
    rv.run(&["render"]).expect(0);
    assert_eq!(
        pkg.read_string(DOCKERFILE),
        dockerfile(&format!("v1.0.0@{old}"))
    );

    let before = pkg.snapshot();
    rv.run(&["update", "--to", "v1.1.0", "--dry-run"]).expect(0);
    assert_eq!(pkg.snapshot(), before);

    // Online the new tag's digest is read from the registry, and said.
    let run = rv.run(&["update", "--to", "v1.1.0"]).expect(0);
    assert_eq!(
        pkg.read_string(DOCKERFILE),
        dockerfile(&format!("v1.1.0@{new}"))
    );
    assert!(
        run.stdout.contains(&format!(
            "{DOCKERFILE}:1: ARG VERSION moved to v1.1.0 pinned at {new}"
        )),
        "{}",
        run.stdout
    );
    rv.run(&["check"]).expect(0);

    // An ARG set back by hand to the old tag with its digest: render (offline) refuses to keep
    // that digest under the locked tag, with the command that resolves the new one.
    pkg.write(DOCKERFILE, dockerfile(&format!("v1.0.0@{old}")));
    let before = pkg.snapshot();
    let run = rv.run(&["render"]).expect(2);
    assert!(
        run.stderr.starts_with("error: ")
            && run.stderr.contains(&format!(
            "{DOCKERFILE}:1: `ARG VERSION=v1.0.0@{old}` pins `v1.0.0` by digest; `v1.1.0` needs its own digest"
        )) && run
            .stderr
            .contains("run `revendor update` online: it resolves the new tag's digest"),
        "{}",
        run.stderr
    );
    assert_eq!(pkg.snapshot(), before);
    let run = rv.run(&["check"]).expect(1);
    assert!(
        run.stdout.contains("version-sync")
            && run
                .stdout
                .contains("run `revendor update` online: it resolves the new tag's digest"),
        "{}",
        run.stdout
    );
    rv.run(&["update"]).expect(0);
    assert_eq!(
        pkg.read_string(DOCKERFILE),
        dockerfile(&format!("v1.1.0@{new}"))
    );
}
