//! issue 20: the examples of `examples/cozystack/` written from cozystack's Makefiles with the
//! shapes Helm charts do not cover: release assets (kubevirt-cdi, rabbitmq-operator) and
//! upstreams with nothing to vendor (http-cache). Each example's vendor.toml is used as
//! written (its GitHub URLs pointed at the stand-in), its upstreams serve a fixture at the
//! example's versions, and the package holds what cozystack committed: the rendered files
//! (the Makefile's `sed`/`yq` steps as the example's patches, made here by `diff -u`) or the
//! Dockerfile's ARGs. `update` adopts the package without changing a byte, and `check
//! --offline` is clean.

use crate::support;

use std::path::Path;
use std::process::Command;

use support::example_toml::{tables, value};
use support::{GitHub, GitRepo, Revendor, TempPackage};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/cozystack");

fn example(name: &str) -> (String, toml::Table) {
    let text = std::fs::read_to_string(Path::new(ROOT).join(name).join("vendor.toml")).unwrap();
    let doc = text.parse().unwrap();
    (text, doc)
}

/// An operator manifest as a release publishes it: a Namespace document, then a Deployment
/// in it.
fn manifest(asset: &str, version: &str) -> String {
    format!(
        "# {asset} {version}\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: upstream-system\n---\n\
         apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: operator\n  namespace: upstream-system\n\
         spec:\n  replicas: 1\n"
    )
}

/// What cozystack's `yq 'del(select(.kind=="Namespace"))'` and `sed s/upstream-system/…/g`
/// leave of [`manifest`].
fn cozystack_edit(manifest: &str) -> String {
    let docs: Vec<&str> = manifest.split("---\n").collect();
    docs.iter()
        .filter(|d| !d.contains("kind: Namespace"))
        .copied()
        .collect::<Vec<_>>()
        .join("---\n")
        .replace("upstream-system", "cozy-package")
}

/// `diff -u` of `old` to `new` as a patch on `to` (`a/`, `b/` prefixes).
fn unified_diff(old: &str, new: &str, to: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::write(&a, old).unwrap();
    std::fs::write(&b, new).unwrap();
    let out = Command::new("diff")
        .args([
            "-u",
            "--label",
            &format!("a/{to}"),
            "--label",
            &format!("b/{to}"),
        ])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "diff found no difference");
    String::from_utf8(out.stdout).unwrap()
}

/// Publishes every asset the example vendors at its upstream's version, and writes the
/// package as cozystack committed it: each vendored file edited, its patch the edit.
fn adopt_asset_example(name: &str) {
    let (text, doc) = example(name);
    let (upstreams, vendors, patches) = (
        tables(&doc, "upstream"),
        tables(&doc, "vendor"),
        tables(&doc, "patch"),
    );
    let gh = GitHub::start();
    let pkg = TempPackage::new();
    pkg.write("vendor.toml", &text);
    for vendor in &vendors {
        let up = upstreams
            .iter()
            .find(|u| value(u, "name") == value(vendor, "upstream"))
            .expect("the vendor's upstream");
        let (repo, version) = (value(up, "github").unwrap(), value(up, "version").unwrap());
        let asset = value(vendor, "asset").unwrap();
        let to = value(vendor, "to").unwrap();
        let pristine = manifest(&asset, &version);
        let committed = cozystack_edit(&pristine);
        gh.repo(&repo)
            .file_at(&version, "README.md", "upstream\n")
            .release(&version, |r| {
                r.asset(&asset.replace("{version}", &version), pristine.clone())
            });
        let patch = patches
            .iter()
            .find(|p| value(p, "upstream") == value(vendor, "upstream"))
            .expect("a patch per vendored asset");
        pkg.write(
            &value(patch, "file").unwrap(),
            unified_diff(&pristine, &committed, &to),
        )
        .write(&to, &committed);
    }
    let before = pkg.snapshot();
    let rv = Revendor::new(pkg.path(), &gh);
    let out = rv.run(&["update"]).expect(0);
    assert!(out.stderr.contains("Adopting"), "{name}: {}", out.all());
    for vendor in &vendors {
        let to = value(vendor, "to").unwrap();
        assert_eq!(pkg.read(&to), before[&to], "{name}: {to}");
    }
    rv.run(&["--offline", "check"]).expect(0);
}

#[test]
fn kubevirt_cdi_adopts_its_release_asset() {
    adopt_asset_example("kubevirt-cdi");
}

#[test]
fn rabbitmq_operator_adopts_two_assets_of_two_repositories() {
    adopt_asset_example("rabbitmq-operator");
}

/// The Dockerfile's ARG lines as cozystack committed them.
const ARGS: &str = "ARG NGINX_VERSION=1.25.3
ARG IP2LOCATION_C_VERSION=8.6.1
ARG IP2PROXY_C_VERSION=4.1.2
ARG IP2LOCATION_NGINX_VERSION=8.6.0
ARG IP2PROXY_NGINX_VERSION=8.1.1
ARG FIFTYONEDEGREES_NGINX_VERSION=3.2.21.1
ARG NGINX_CACHE_PURGE_VERSION=2.5.3
ARG NGINX_VTS_VERSION=0.2.2
";

#[test]
fn http_cache_adopts_seven_versions_with_nothing_vendored_and_moves_one() {
    let (text, doc) = example("http-cache");
    let gh = GitHub::start();
    let prefix = "https://github.com/";
    let mut repos = Vec::new();
    for up in tables(&doc, "upstream") {
        let url = value(&up, "git").unwrap();
        let full = url
            .strip_prefix(prefix)
            .unwrap()
            .strip_suffix(".git")
            .unwrap();
        let repo = GitRepo::new();
        repo.commit("source", [("README", format!("{full}\n"))]);
        repo.tag(&value(&up, "version").unwrap());
        gh.repo(full).serve_git(&repo);
        repos.push((value(&up, "name").unwrap(), repo));
    }
    // The package sits in a platform repository, as in cozystack, for `pr` to compare with.
    let platform = GitRepo::new();
    let dockerfile = format!("FROM ubuntu:22.04 AS stage\n\n{ARGS}\nRUN make\n");
    let vendor_toml = text.replace(prefix, &format!("{}/", gh.server_url()));
    platform.commit(
        "http-cache",
        [
            ("packages/http-cache/vendor.toml", vendor_toml.as_str()),
            (
                "packages/http-cache/images/nginx-cache/Dockerfile",
                &dockerfile,
            ),
        ],
    );
    let pkg = platform.path().join("packages/http-cache");
    let read = |rel: &str| std::fs::read_to_string(pkg.join(rel)).unwrap();
    let rv = Revendor::new(&pkg, &gh)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1");
    let out = rv.run(&["update"]).expect(0);
    assert!(out.stderr.contains("Adopting"), "{}", out.all());
    assert_eq!(read("images/nginx-cache/Dockerfile"), dockerfile);
    let lock = read("upstream/lock.toml");
    for (name, repo) in &repos {
        let head = repo.head();
        assert!(
            lock.contains(&format!("name = \"{name}\"")) && lock.contains(&head),
            "{name}: {lock}"
        );
    }
    rv.run(&["--offline", "check"]).expect(0);
    platform.commit("adopt", Vec::<(&str, &str)>::new());

    // nginx tags release-1.25.4: only its ARG moves, read through the tag pattern.
    let nginx = &repos.iter().find(|(n, _)| n == "nginx").unwrap().1;
    nginx.commit("1.25.4", [("README", "nginx 1.25.4\n")]);
    nginx.tag("release-1.25.4");
    let out = rv.run(&["update"]).expect(0);
    assert!(
        out.stdout.contains("release-1.25.3 -> release-1.25.4"),
        "{}",
        out.all()
    );
    assert_eq!(
        read("images/nginx-cache/Dockerfile"),
        dockerfile.replace("NGINX_VERSION=1.25.3", "NGINX_VERSION=1.25.4")
    );
    rv.run(&["--offline", "check"]).expect(0);
    rv.run(&["--offline", "render"]).expect(0);
    let pr = rv.run(&["--offline", "pr"]).expect(0).stdout;
    assert!(
        pr.starts_with("chore(packages/http-cache): bump nginx to release-1.25.4"),
        "{pr}"
    );
}
