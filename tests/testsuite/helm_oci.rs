//! issue 18: a Helm chart from an OCI registry as an upstream. Charts are packaged and pushed by
//! Helm's own engine into the real CNCF registry; revendor's pristine copy must equal what
//! Helm's own `pull oci://… --untar` writes, `+` travels as `_` in tags, a version pinned by
//! manifest digest is read by that digest, a re-pushed tag is new content, a tag that is an
//! image is refused, and credentials and token challenges are the registry client's.

use crate::registry_support::{self, Auth, Registry, content, have_registry, token};
use crate::support;

use std::collections::BTreeMap;

use revendor::image::Reference;
use revendor::registry::Credentials;
use support::chart_repo::{helm_pull_oci, package_files, push_files};
use support::{GitHub, Revendor, TempPackage};

const PATCH: &str = "--- a/values.yaml\n+++ b/values.yaml\n@@ -1,2 +1,2 @@\n-replicas: 1\n+replicas: 3\n image: demo\n";

/// The demo chart at `version`, with `appVersion` `app` and a template saying `salt`.
fn demo(version: &str, app: &str, salt: &str) -> BTreeMap<String, Vec<u8>> {
    [
        (
            "Chart.yaml",
            format!("apiVersion: v2\nname: demo\nversion: {version}\nappVersion: \"{app}\"\n"),
        ),
        ("values.yaml", "replicas: 1\nimage: demo\n".into()),
        (
            "templates/deploy.yaml",
            format!("kind: Deployment # {salt}\n"),
        ),
        ("tests/test-connection.yaml", "kind: Pod\n".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.into_bytes()))
    .collect()
}

/// vendor.toml for the demo chart of `oci://<host>/charts` at `version`.
fn vendor_toml(host: &str, version: &str) -> String {
    format!(
        "[upstream]\nhelm = \"oci://{host}/charts\"\nchart = \"demo\"\nversion = \"{version}\"\ntrack = \"1\"\n\n\
         [[vendor]]\nfrom = \"./\"\nto = \"charts/demo/\"\nexclude = [\"tests/**\"]\n\n\
         [[patch]]\nname = \"replicas\"\nfile = \"patches/replicas.patch\"\napplies-to = \"vendor\"\nstrip = 1\n\n\
         [[rewrite]]\nfile = \"images/demo/Dockerfile\"\ndockerfile-arg = \"VERSION\"\nwith = \"v{{app-version}}\"\n"
    )
}

fn package(host: &str, version: &str) -> TempPackage {
    let pkg = TempPackage::new();
    pkg.write("vendor.toml", vendor_toml(host, version))
        .write("patches/replicas.patch", PATCH)
        .write("images/demo/Dockerfile", "ARG VERSION=v0\nFROM scratch\n");
    pkg
}

/// The pristine copies: `upstream/` without the lock.
fn pristine(pkg: &TempPackage) -> BTreeMap<String, Vec<u8>> {
    let mut files = support::package::read_tree(&pkg.join("upstream"));
    files.remove("lock.toml");
    files
}

/// Helm's own untar of the chart at `version`, less what `exclude` drops.
fn helms(host: &str, version: &str) -> BTreeMap<String, Vec<u8>> {
    let mut files = helm_pull_oci(&format!("oci://{host}/charts/demo"), version);
    files.remove("tests/test-connection.yaml");
    files
}

/// The manifest digest `charts/demo:<tag>` names now, as the registry says.
fn digest(host: &str, tag: &str) -> String {
    let reference = Reference::parse(&format!("{host}/charts/demo:{tag}")).unwrap();
    registry_support::client(Credentials::none())
        .head_manifest(&reference)
        .unwrap()
        .to_string()
}

#[test]
fn an_oci_chart_is_vendored_as_helm_pulls_it_updated_across_a_plus_and_rendered_offline() {
    if !have_registry("helm_oci") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    let host = registry.host.clone();
    let remote = format!("oci://{host}/charts");
    push_files("demo", &demo("1.0.0", "2.0.0", "a"), &remote);
    let gh = GitHub::start();
    let pkg = package(&host, "1.0.0");
    let rv = Revendor::new(pkg.path(), &gh);

    rv.run(&["update"]).expect(0);
    assert_eq!(pristine(&pkg), helms(&host, "1.0.0"));
    assert_eq!(
        pkg.read_string("charts/demo/values.yaml"),
        "replicas: 3\nimage: demo\n"
    );
    assert!(!pkg.exists("charts/demo/tests/test-connection.yaml"));
    assert_eq!(
        pkg.read_string("images/demo/Dockerfile"),
        "ARG VERSION=v2.0.0\nFROM scratch\n"
    );
    let lock = pkg.read_string("upstream/lock.toml");
    let pushed = digest(&host, "1.0.0");
    for expected in [
        format!("source = \"helm:oci://{host}/charts#demo\""),
        format!("archive = \"oci://{host}/charts/demo:1.0.0\""),
        format!("archive-sha256 = \"{}\"", &pushed["sha256:".len()..]),
        "app-version = \"2.0.0\"".to_owned(),
    ] {
        assert!(lock.contains(&expected), "{expected}\n{lock}");
    }
    rv.run(&["check"]).expect(0);

    // A version with build metadata: pushed under `1.1.0_build.5`, listed and vendored as
    // `1.1.0+build.5`.
    push_files("demo", &demo("1.1.0+build.5", "2.1.0", "b"), &remote);
    let newer = rv.run(&["check", "--online"]).expect(1);
    assert!(
        newer
            .all()
            .contains("1.1.0+build.5 is newer than the vendored 1.0.0"),
        "{}",
        newer.all()
    );
    rv.run(&["update"]).expect(0);
    assert_eq!(pristine(&pkg), helms(&host, "1.1.0+build.5"));
    assert!(
        pkg.read_string("vendor.toml")
            .contains("version = \"1.1.0+build.5\"")
    );
    assert_eq!(
        pkg.read_string("images/demo/Dockerfile"),
        "ARG VERSION=v2.1.0\nFROM scratch\n"
    );
    rv.run(&["check", "--online"]).expect(0);

    // The tag pushed again with other files: new content at the same version.
    push_files("demo", &demo("1.1.0+build.5", "2.1.1", "c"), &remote);
    let moved = rv.run(&["check", "--online"]).expect(1);
    assert!(moved.all().contains("was pushed again"), "{}", moved.all());
    let update = rv.run(&["update"]).expect(0);
    assert!(
        update.stderr.contains("names new content"),
        "{}",
        update.stderr
    );
    assert_eq!(pristine(&pkg), helms(&host, "1.1.0+build.5"));
    assert!(
        pkg.read_string("charts/demo/templates/deploy.yaml")
            .contains("# c")
    );
    let repushed = digest(&host, "1.1.0_build.5");
    assert!(
        pkg.read_string("upstream/lock.toml")
            .contains(&repushed["sha256:".len()..])
    );
    rv.run(&["check", "--online"]).expect(0);

    // The registry gone and the cache empty: render and check still work.
    drop(registry);
    std::fs::remove_dir_all(rv.cache()).unwrap();
    std::fs::remove_file(pkg.join("charts/demo/values.yaml")).unwrap();
    rv.run(&["--offline", "render"]).expect(0);
    assert_eq!(
        pkg.read_string("charts/demo/values.yaml"),
        "replicas: 3\nimage: demo\n"
    );
    rv.run(&["--offline", "check"]).expect(0);
}

#[test]
fn a_version_pinned_by_digest_is_read_by_it_and_the_pin_moves_with_an_update() {
    if !have_registry("helm_oci") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    let host = registry.host.clone();
    let remote = format!("oci://{host}/charts");
    push_files("demo", &demo("1.0.0", "2.0.0", "pinned"), &remote);
    let pinned = digest(&host, "1.0.0");
    let expected = helms(&host, "1.0.0");
    push_files("demo", &demo("1.0.0", "2.0.0", "re-pushed"), &remote);
    assert_ne!(digest(&host, "1.0.0"), pinned);

    let gh = GitHub::start();
    let pkg = package(&host, &format!("1.0.0@{pinned}"));
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update"]).expect(0);
    assert_eq!(
        pristine(&pkg),
        expected,
        "the pinned manifest, not the tag's"
    );
    assert!(
        pkg.read_string("upstream/lock.toml")
            .contains(&pinned["sha256:".len()..])
    );
    // The tag moved, but the version is pinned: nothing to report.
    rv.run(&["check", "--online"]).expect(0);

    // Another pin than the lock's: version-sync says so offline.
    let other = format!("sha256:{}", "e".repeat(64));
    let toml = pkg.read_string("vendor.toml");
    pkg.write("vendor.toml", toml.replace(&pinned, &other));
    let run = rv.run(&["check"]).expect(1);
    assert!(run.all().contains("version-sync"), "{}", run.all());
    assert!(run.all().contains(&other), "{}", run.all());
    pkg.write("vendor.toml", &toml);

    // An update to a newer version keeps the pin form, with the new manifest's digest.
    push_files("demo", &demo("1.2.0", "2.2.0", "next"), &remote);
    rv.run(&["update"]).expect(0);
    let next = digest(&host, "1.2.0");
    assert!(
        pkg.read_string("vendor.toml")
            .contains(&format!("version = \"1.2.0@{next}\"")),
        "{}",
        pkg.read_string("vendor.toml")
    );
    rv.run(&["check", "--online"]).expect(0);
}

#[test]
fn a_tag_whose_manifest_is_an_image_is_refused_and_nothing_is_written() {
    if !have_registry("helm_oci") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    registry.push_image(
        "charts/demo",
        "1.0.0",
        &content::image("linux/amd64", "not a chart"),
    );
    let gh = GitHub::start();
    let pkg = package(&registry.host, "1.0.0");
    let rv = Revendor::new(pkg.path(), &gh);
    let before = pkg.snapshot();
    let run = rv.run(&["update"]).expect(3);
    assert!(
        run.stderr.contains("not a Helm chart")
            && run
                .stderr
                .contains("application/vnd.oci.image.config.v1+json"),
        "{}",
        run.stderr
    );
    assert_eq!(pkg.snapshot(), before, "nothing written");
}

#[test]
fn a_private_chart_is_read_with_docker_config_credentials_and_a_public_one_anonymously() {
    if !have_registry("helm_oci") {
        return;
    }
    let registry = Registry::start(Auth::Token);
    let host = registry.host.clone();
    let scratch = tempfile::tempdir().unwrap();
    for path in ["charts/demo", "private/charts/demo"] {
        let tgz = package_files("demo", &demo("1.0.0", "2.0.0", path), scratch.path());
        let chart = content::chart("demo", "1.0.0", std::fs::read(tgz).unwrap());
        registry.push_image(path, "1.0.0", &chart);
    }
    let gh = GitHub::start();

    // Public: the registry's token challenge, answered anonymously.
    let pkg = package(&host, "1.0.0");
    let config = pkg.join(".docker");
    let rv = Revendor::new(pkg.path(), &gh).env("DOCKER_CONFIG", config.to_str().unwrap());
    rv.run(&["update"]).expect(0);
    assert!(
        pkg.read_string("charts/demo/templates/deploy.yaml")
            .contains("# charts/demo")
    );

    // Private: refused anonymously, read with the docker config's password.
    let private = TempPackage::new();
    private
        .write(
            "vendor.toml",
            vendor_toml(&host, "1.0.0").replace("/charts\"", "/private/charts\""),
        )
        .write("patches/replicas.patch", PATCH)
        .write("images/demo/Dockerfile", "ARG VERSION=v0\nFROM scratch\n");
    let docker = private.join("docker");
    let rv = Revendor::new(private.path(), &gh).env("DOCKER_CONFIG", docker.to_str().unwrap());
    let refused = rv.run(&["update"]).expect(3);
    assert!(
        refused.stderr.contains("refused anonymous access"),
        "{}",
        refused.stderr
    );
    registry_support::docker_config(
        private.path(),
        &serde_json::json!({"auths": {host.clone(): {"username": token::USER, "password": token::PASSWORD}}}),
    );
    let run = rv
        .env(
            "DOCKER_CONFIG",
            private.join("docker-config").to_str().unwrap(),
        )
        .run(&["update"])
        .expect(0);
    assert!(!run.all().contains(token::PASSWORD));
    assert!(
        private
            .read_string("charts/demo/templates/deploy.yaml")
            .contains("# private/charts/demo")
    );
}

#[test]
fn the_pull_request_names_the_chart_and_app_versions_and_links_its_http_sources_only() {
    if !have_registry("helm_oci") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    let host = registry.host.clone();
    let remote = format!("oci://{host}/charts");
    let with_links = |version: &str, app: &str| {
        let mut files = demo(version, app, version);
        files.insert(
            "Chart.yaml".into(),
            format!(
                "apiVersion: v2\nname: demo\nversion: {version}\nappVersion: \"{app}\"\n\
                 home: https://demo.example/home\nsources:\n- https://github.com/example/demo\n\
                 - javascript:alert(1)\n- \"https://evil.example/x> [click](y)\"\n"
            )
            .into_bytes(),
        );
        files
    };
    push_files("demo", &with_links("1.0.0", "2.0.0"), &remote);
    let gh = GitHub::start();
    let repo = support::GitRepo::new();
    repo.commit(
        "package",
        [
            ("packages/demo/vendor.toml", vendor_toml(&host, "1.0.0")),
            ("packages/demo/patches/replicas.patch", PATCH.to_owned()),
            (
                "packages/demo/images/demo/Dockerfile",
                "ARG VERSION=v0\nFROM scratch\n".to_owned(),
            ),
        ],
    );
    let rv = Revendor::new(&repo.path().join("packages/demo"), &gh)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1");
    rv.run(&["update"]).expect(0);
    repo.commit("adopt", Vec::<(&str, &str)>::new());
    push_files("demo", &with_links("1.1.0", "2.1.0"), &remote);
    rv.run(&["update"]).expect(0);

    let text = rv.run(&["pr"]).expect(0).stdout;
    for expected in [
        "from `1.0.0` to `1.1.0`",
        "- App version: `2.0.0` → `2.1.0`\n",
        "- Chart home: <https://demo.example/home>\n",
        "- Chart sources: <https://github.com/example/demo>, <https://evil.example/x%3E%20[click](y)>\n",
    ] {
        assert!(text.contains(expected), "{expected}\n{text}");
    }
    assert!(!text.contains("javascript"), "{text}");
    let json = rv.run(&["pr", "--format", "json"]).expect(0).stdout;
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    crate::pr_upstreams::assert_documented(&json);
    let chart = &json["summary"]["upstream"]["chart"];
    assert_eq!(
        (&chart["app_from"], &chart["app_to"]),
        (&"2.0.0".into(), &"2.1.0".into())
    );
    assert_eq!(
        chart["sources"][1], "javascript:alert(1)",
        "kept as written"
    );
}
