//! `revendor check` on cozystack's real multus package (REVENDOR_REALWORLD),
//! laid out as in cozystack's repository: `packages/system/multus` with the
//! Talos installer profile and kube-ovn values where its markers' `expect`
//! files point. The package is adopted with `revendor update --to v4.3.0`
//! against the real upstream manifests, then checked as it is, after one
//! mutation at a time, and online against the stand-in for GitHub and a real
//! registry.
//!
//! The Dockerfile is ours, in cozystack's shape, with every value (builder
//! digest, CNI plugins version and checksums, marker releases) from
//! facts.toml; kube-ovn's values.yaml is a small one of ours.

use crate::support;

#[allow(dead_code)]
use crate::registry_support;

use revendor::image::MediaType;
use serde_json::Value;
use support::multus_dockerfile::multus_dockerfile;
use support::realworld::{
    cozystack_vendor_toml, pkgs_describe_commit, register_cni_plugins, register_talos,
};
use support::{GitHub, GitRepo, Realworld, Revendor, Run, TempPackage};

use registry_support::content::multi_arch;
use registry_support::{Auth, Registry, have_registry};

const PKG: &str = "packages/system/multus";
const TEMPLATE: &str = "templates/multus-daemonset-thick.yml";
const PATCH: &str = "patches/customize-deployment.patch";
const GO_PATCH: &str = "images/multus-cni/patches/fix-del-without-cache.diff";
const DOCKERFILE: &str = "images/multus-cni/Dockerfile";
const INSTALLER: &str = "packages/core/talos/images/talos/profiles/installer.yaml";
const KUBE_OVN_VALUES: &str = "packages/system/kubeovn/values.yaml";
const IMAGE_REPOSITORY: &str = "cozystack/cozystack/multus-cni";

/// The real upstreams on the stand-in.
struct World {
    rw: Realworld,
    gh: GitHub,
}

fn world() -> Option<World> {
    let rw = Realworld::from_env()?;
    let gh = GitHub::start();
    rw.register_multus(&gh);
    rw.register_multus_source(&gh);
    Some(World { rw, gh })
}

impl World {
    /// What the online checks read for the shipped releases: Talos's
    /// Makefile and pkgs' Pkgfile, kube-ovn's base Dockerfile, the CNI
    /// plugins release with its sidecars.
    fn register_resolvers(&self) {
        self.rw
            .register_talos(&self.gh, self.rw.fact_str(&["talos", "shipped"]));
        self.rw
            .register_kube_ovn(&self.gh, self.rw.fact_str(&["kube-ovn", "vendored"]));
        self.rw
            .register_cni_plugins(&self.gh, self.rw.fact_str(&["cni-plugins", "pinned"]));
    }

    fn fact(&self, keys: &[&str]) -> String {
        self.rw.fact_str(keys).to_owned()
    }
}

/// Our Dockerfile in cozystack's shape, every value from facts.toml, with its header comment.
fn dockerfile(w: &World) -> String {
    let version = w.fact(&["cozystack-multus", "dockerfile-arg-version"]);
    multus_dockerfile(&w.rw, &version).replacen(
        "# syntax=docker/dockerfile:1\n",
        "# syntax=docker/dockerfile:1
# multus-cni built from upstream source with cozystack's source patches,
# plus the reference CNI plugins that install-cni-plugins stages on nodes.

",
        1,
    )
}

/// Every file of the workspace: the multus package, the installer profile
/// and kube-ovn's values. With `digest`, the template's pin names it instead
/// of cozystack's (for a registry that holds it).
fn workspace(w: &World, digest: Option<&str>) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for f in ["Chart.yaml", "values.yaml", TEMPLATE, PATCH, GO_PATCH] {
        let mut bytes = w.rw.read(&format!("cozystack-multus/{f}"));
        if let (TEMPLATE, Some(digest)) = (f, digest) {
            let pinned = w.fact(&["cozystack-multus", "pinned-image"]);
            let old = pinned.split_once('@').map(|(_, d)| d).unwrap_or_default();
            bytes = String::from_utf8(bytes)
                .unwrap()
                .replace(old, digest)
                .into_bytes();
        }
        files.push((format!("{PKG}/{f}"), bytes));
    }
    files.push((
        format!("{PKG}/vendor.toml"),
        cozystack_vendor_toml("v4.3.0").into_bytes(),
    ));
    files.push((format!("{PKG}/{DOCKERFILE}"), dockerfile(w).into_bytes()));
    files.push((
        INSTALLER.to_owned(),
        w.rw.read("cozystack-talos/installer.yaml"),
    ));
    files.push((
        KUBE_OVN_VALUES.to_owned(),
        kube_ovn_values(&w.fact(&["kube-ovn", "vendored"])),
    ));
    files
}

fn kube_ovn_values(version: &str) -> Vec<u8> {
    format!(
        "global:\n  registry:\n    address: ghcr.io/kubeovn\n  images:\n    kubeovn:\n      repository: kube-ovn\n      tag: {version}@sha256:{}\n",
        "5".repeat(64)
    )
    .into_bytes()
}

/// The workspace in a temporary directory, adopted at v4.3.0.
struct Cozystack {
    pkg: TempPackage,
    rv: Revendor,
}

fn adopted(w: &World) -> Cozystack {
    let pkg = TempPackage::new();
    for (path, bytes) in workspace(w, None) {
        pkg.write(&path, bytes);
    }
    let rv = Revendor::new(&pkg.join(PKG), &w.gh);
    rv.run(&["update", "--to", "v4.3.0"]).expect(0);
    Cozystack { pkg, rv }
}

impl Cozystack {
    fn read(&self, rel: &str) -> String {
        self.pkg.read_string(&format!("{PKG}/{rel}"))
    }

    fn write(&self, rel: &str, text: &str) {
        self.pkg.write(&format!("{PKG}/{rel}"), text);
    }

    fn edit(&self, rel: &str, from: &str, to: &str) {
        let text = self.read(rel);
        assert!(text.contains(from), "`{from}` is not in {rel}");
        self.write(rel, &text.replacen(from, to, 1));
    }

    fn check(&self, args: &[&str]) -> Run {
        let mut all = vec!["check", "--format", "json"];
        all.extend_from_slice(args);
        self.rv.run(&all)
    }
}

/// One finding of the JSON report.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    id: String,
    severity: String,
    file: String,
    line: usize,
    message: String,
}

fn findings(run: &Run) -> Vec<Found> {
    let doc: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", run.stdout, run.stderr));
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| Found {
            id: f["id"].as_str().unwrap().to_owned(),
            severity: f["severity"].as_str().unwrap().to_owned(),
            file: f["file"].as_str().unwrap().to_owned(),
            line: f["line"].as_u64().unwrap() as usize,
            message: f["message"].as_str().unwrap().to_owned(),
        })
        .collect()
}

fn errors(run: &Run) -> Vec<Found> {
    findings(run)
        .into_iter()
        .filter(|f| f.severity == "error")
        .collect()
}

/// The 1-based line of the first line of `text` containing `needle` after
/// the first line containing `after`.
fn line_of(text: &str, after: &str, needle: &str) -> usize {
    let start = text
        .lines()
        .position(|l| l.contains(after))
        .unwrap_or_else(|| panic!("no `{after}`"));
    text.lines()
        .enumerate()
        .skip(start)
        .find(|(_, l)| l.contains(needle))
        .map(|(i, _)| i + 1)
        .unwrap_or_else(|| panic!("no `{needle}` after `{after}`"))
}

#[test]
fn cozystacks_package_is_clean() {
    let Some(w) = world() else { return };
    let c = adopted(&w);
    let run = c.check(&[]).expect(0);
    assert_eq!(findings(&run), [], "{}", run.stdout);
    let human = c.rv.run(&["check"]).expect(0);
    assert_eq!(human.stdout, "multus: clean, no findings\n");
}

/// Each mutation makes exactly one error, with the expected id and line.
#[test]
fn each_single_mutation_fails_exactly_its_id_at_its_line() {
    let Some(w) = world() else { return };
    let c = adopted(&w);
    let clean = c.pkg.snapshot();
    let dockerfile = c.read(DOCKERFILE);
    let template = c.read(TEMPLATE);
    let pinned = w.fact(&["cozystack-multus", "pinned-image"]);
    let upstream = w.fact(&["multus-cni", "upstream-image"]);
    let talos = w.fact(&["talos", "shipped"]);
    let marker = format!("# talos-cni-plugins-checked-against: {talos}");
    let marker_line = line_of(&dockerfile, &marker, &marker);
    let arm64 = w.fact(&["cni-plugins", "sha256-arm64-v1-9-1"]);

    type Mutation<'a> = (
        &'a str,
        Box<dyn Fn(&Cozystack) + 'a>,
        &'a str,
        &'a str,
        usize,
    );
    let master = "        \"multusMasterCNI\": \"05-cilium.conflist\",\n";
    let mutations: Vec<Mutation<'_>> = vec![
        (
            "the marker changed",
            Box::new(|c| {
                c.edit(
                    DOCKERFILE,
                    &marker,
                    "# talos-cni-plugins-checked-against: v1.13.5",
                )
            }),
            "marker:talos",
            DOCKERFILE,
            marker_line,
        ),
        (
            "expect changed",
            Box::new(|c| {
                let path = c.pkg.join(INSTALLER);
                let text = std::fs::read_to_string(&path).unwrap();
                let text = text.replace(&format!("version: {talos}"), "version: v1.13.7");
                std::fs::write(path, text).unwrap();
            }),
            "marker:talos",
            DOCKERFILE,
            marker_line,
        ),
        (
            "multusMasterCNI nested while the top level names another conflist",
            Box::new(|c| {
                c.edit(
                    TEMPLATE,
                    master,
                    "        \"multusMasterCNI\": \"10-kube-ovn.conflist\",\n        \"previous\": {\n        \"multusMasterCNI\": \"05-cilium.conflist\"\n        },\n",
                );
                c.rv.run(&["update", "--to", "v4.3.0", "--adopt-edits"])
                    .expect(0);
            }),
            "contract:master-cni",
            TEMPLATE,
            line_of(&template, "multusMasterCNI", "multusMasterCNI"),
        ),
        (
            "the memory limit removed from the init container",
            Box::new(|c| {
                let text = c.read(TEMPLATE);
                let at = text.find("- name: install-multus-binary").unwrap();
                let limit = "            limits:\n              memory: \"128Mi\"\n";
                let cut = at + text[at..].find(limit).unwrap();
                c.write(
                    TEMPLATE,
                    &format!("{}{}", &text[..cut], &text[cut + limit.len()..]),
                );
                c.rv.run(&["update", "--to", "v4.3.0", "--adopt-edits"])
                    .expect(0);
            }),
            "contract:memory-limits",
            TEMPLATE,
            line_of(
                &template,
                "initContainers:",
                "- name: install-multus-binary",
            ),
        ),
        (
            "one image line left at the upstream image",
            Box::new(|c| {
                let text = c.read(TEMPLATE);
                let at = text.find("- name: install-multus-binary").unwrap();
                let rest = text[at..].replacen(&pinned, &upstream, 1);
                c.write(TEMPLATE, &format!("{}{rest}", &text[..at]));
            }),
            "image-pin",
            TEMPLATE,
            line_of(&template, "- name: install-multus-binary", "image:"),
        ),
        (
            "one arm64 checksum removed",
            Box::new(|c| {
                c.edit(
                    DOCKERFILE,
                    &format!("ARG CNI_PLUGINS_SHA256_ARM64={arm64}\n"),
                    "",
                )
            }),
            "cni-checksums",
            DOCKERFILE,
            // The case arm that reads the ARG, one line up once the ARG is gone.
            line_of(&dockerfile, "case", "arm64)") - 1,
        ),
        (
            "the builder unpinned",
            Box::new(|c| {
                let builder = w.fact(&["cozystack-multus", "builder-image"]);
                let bare = builder.split('@').next().unwrap().to_owned();
                c.edit(
                    DOCKERFILE,
                    &format!("{builder} AS builder"),
                    &format!("{bare} AS builder"),
                );
            }),
            "builder-go",
            DOCKERFILE,
            line_of(&dockerfile, "AS builder", "AS builder"),
        ),
        (
            "a hand edit in the template",
            Box::new(|c| {
                c.edit(
                    TEMPLATE,
                    "        \"multusConfigFile\": \"auto\",\n",
                    "        \"multusConfigFile\": \"auto\",\n        \"logLevel\": \"debug\",\n",
                )
            }),
            "render-drift",
            TEMPLATE,
            line_of(&template, "multusConfigFile", "multusConfigFile") + 1,
        ),
    ];

    for (what, mutate, id, file, line) in &mutations {
        for (path, bytes) in &clean {
            c.pkg.write(path, bytes);
        }
        c.check(&[]).expect(0);
        mutate(&c);
        let run = c.check(&[]).expect(1);
        let got = errors(&run);
        assert_eq!(got.len(), 1, "{what}: {got:#?}");
        assert_eq!(
            (got[0].id.as_str(), got[0].file.as_str(), got[0].line),
            (*id, *file, *line),
            "{what}: {}",
            got[0].message
        );
    }
}

#[test]
fn a_changed_expect_names_where_the_value_comes_from() {
    let Some(w) = world() else { return };
    let c = adopted(&w);
    let path = c.pkg.join(INSTALLER);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("version: v1.13.6", "version: v1.13.7")).unwrap();
    let run = c.rv.run(&["check"]).expect(1);
    assert!(
        run.stdout.contains(
            "the marker says v1.13.6, but ../../core/talos/images/talos/profiles/installer.yaml:6 says v1.13.7"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .starts_with("marker:talos\n  images/multus-cni/Dockerfile:")
    );
}

/// A registry holding a multi-arch image under cozystack's repository, read
/// as ghcr.io through a mirror, and the workspace pinned to it.
struct Online {
    c: Cozystack,
    registry: Registry,
}

fn online(w: &World) -> Option<Online> {
    if !have_registry("the online realworld check") {
        return None;
    }
    w.register_resolvers();
    let registry = Registry::start(Auth::Anonymous);
    let image = multi_arch(
        &["linux/amd64", "linux/arm64"],
        "multus",
        MediaType::OciIndex,
    );
    let digest = registry.push_multi_arch(IMAGE_REPOSITORY, "v1.6.0", &image);
    let pkg = TempPackage::new();
    for (path, bytes) in workspace(w, Some(&digest.to_string())) {
        pkg.write(&path, bytes);
    }
    let rv = Revendor::new(&pkg.join(PKG), &w.gh)
        .env(
            "REVENDOR_REGISTRY_MIRRORS",
            &format!("ghcr.io={}", registry.host),
        )
        .env("DOCKER_CONFIG", &pkg.join(".docker").display().to_string());
    rv.run(&["update", "--to", "v4.3.0"]).expect(0);
    Some(Online {
        c: Cozystack { pkg, rv },
        registry,
    })
}

#[test]
fn online_resolves_talos_through_pkgs_to_the_cni_version() {
    let Some(w) = world() else { return };
    let Some(o) = online(&w) else { return };
    let run = o.c.check(&["--online", "-v"]).expect(0);
    assert_eq!(findings(&run), [], "{}", run.stderr);
    assert!(
        run.stderr
            .contains("marker:talos: Talos v1.13.6 → pkgs v1.13.0-43-gd8c80cc → cni v1.9.1"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("marker:kube-ovn: kube-ovn v1.15.10 → cni v1.9.1"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("image-exists: "), "{}", run.stderr);
    let reqs = w.gh.requests();
    let commit = pkgs_describe_commit("v1.13.0-43-gd8c80cc").unwrap();
    assert_eq!(
        reqs.count("/siderolabs/talos/refs/tags/v1.13.6/Makefile"),
        1
    );
    assert_eq!(
        reqs.count(&format!("/siderolabs/pkgs/{}/Pkgfile", &commit[..7])),
        1
    );
}

#[test]
fn online_reports_drift_when_the_pkgfile_names_another_cni_version() {
    let Some(w) = world() else { return };
    let Some(o) = online(&w) else { return };
    register_talos(&w.gh, "v1.13.6", "v1.13.0-43-gd8c80cc", "v1.9.2");
    let run = o.c.check(&["--online"]).expect(1);
    let got = errors(&run);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!(got[0].id, "marker:talos");
    assert!(
        got[0].message.contains(
            "Talos v1.13.6 ships CNI plugins v1.9.2 (Talos v1.13.6 → pkgs v1.13.0-43-gd8c80cc → cni v1.9.2), but `CNI_PLUGINS_VERSION` is v1.9.1"
        ),
        "{}",
        got[0].message
    );
}

#[test]
fn online_says_so_when_the_talos_makefile_layout_changed() {
    let Some(w) = world() else { return };
    let Some(o) = online(&w) else { return };
    w.gh.repo("siderolabs/talos").file_at(
        "v1.13.6",
        "Makefile",
        "PKGS_PREFIX ?= ghcr.io/siderolabs\nPKG_CNI ?= ghcr.io/siderolabs/cni:v1.13.0\n",
    );
    let run = o.c.check(&["--online"]).expect(1);
    let got = errors(&run);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert!(
        got[0]
            .message
            .contains("the Talos Makefile layout changed: `PKGS` is not assigned"),
        "{}",
        got[0].message
    );
}

#[test]
fn a_nightly_run_with_nothing_new_makes_only_conditional_requests() {
    let Some(w) = world() else { return };
    let Some(o) = online(&w) else { return };
    o.c.check(&["--online"]).expect(0);
    w.gh.clear_requests();
    let run = o.c.rv.run(&["check", "--online", "-v"]).expect(0);
    let reqs = w.gh.requests();
    assert!(!reqs.is_empty());
    for r in reqs.iter() {
        assert!(
            r.conditional(),
            "unconditional: {} ({:?})",
            r.target,
            reqs.targets()
        );
        assert!(
            r.status == 304 || r.status == 302,
            "{} answered {}",
            r.target,
            r.status
        );
    }
    assert!(reqs.iter().any(|r| r.target.contains("/releases")));
    assert!(
        run.stderr
            .contains("nothing changed upstream: all 6 requests were conditional and answered 304"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("6 HTTP requests, 6 conditional, 6 answered 304 Not Modified"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_newer_release_in_track_comes_with_a_dry_run_of_every_patch() {
    let Some(w) = world() else { return };
    let Some(o) = online(&w) else { return };
    w.rw.publish_unreleased(&w.gh, "v4.4.0");
    let run = o.c.check(&["--online"]).expect(1);
    let got = errors(&run);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!(
        (got[0].id.as_str(), got[0].file.as_str(), got[0].line),
        ("upstream-newer", "vendor.toml", 3)
    );
    assert!(
        got[0].message.starts_with(
            "v4.4.0 is newer than the vendored v4.3.0 (inside track `>=4.0.0, <5.0.0`); dry run: customize-deployment on templates/multus-daemonset-thick.yml: conflict (lines"
        ),
        "{}",
        got[0].message
    );
    assert!(
        got[0]
            .message
            .ends_with("fix-del-without-cache on pkg/multus/multus.go: exact"),
        "{}",
        got[0].message
    );
}

#[test]
fn a_sidecar_that_disagrees_with_a_pinned_checksum_is_reported_at_its_arg() {
    let Some(w) = world() else { return };
    let Some(o) = online(&w) else { return };
    let amd64 = w.fact(&["cni-plugins", "sha256-amd64-v1-9-1"]);
    let plugins = vec!["bridge".to_owned()];
    register_cni_plugins(
        &w.gh,
        "v1.9.1",
        &[
            ("amd64".to_owned(), Some(amd64)),
            ("arm64".to_owned(), Some("1".repeat(64))),
        ],
        &plugins,
    );
    let run = o.c.check(&["--online"]).expect(1);
    let got = errors(&run);
    assert_eq!(got.len(), 1, "{got:#?}");
    let dockerfile = o.c.read(DOCKERFILE);
    assert_eq!(
        (got[0].id.as_str(), got[0].line),
        (
            "cni-checksums",
            line_of(&dockerfile, "SHA256_ARM64=", "SHA256_ARM64=")
        )
    );
    assert!(
        got[0]
            .message
            .contains("cni-plugins-linux-arm64-v1.9.1.tgz.sha256` says 1111")
    );
}

#[test]
fn fix_moves_the_marker_when_the_new_talos_ships_the_pinned_plugins() {
    let Some(w) = world() else { return };
    let Some(o) = online(&w) else { return };
    w.rw.register_talos(&w.gh, "v1.13.9");
    let installer = o.c.pkg.join(INSTALLER);
    let text = std::fs::read_to_string(&installer).unwrap();
    std::fs::write(
        &installer,
        text.replace("version: v1.13.6", "version: v1.13.9"),
    )
    .unwrap();
    o.c.check(&[]).expect(1);

    let run = o.c.check(&["--online", "--fix"]).expect(0);
    let got = findings(&run);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!(
        (got[0].id.as_str(), got[0].severity.as_str()),
        ("marker:talos", "info")
    );
    assert!(got[0].message.starts_with(
        "moved the marker to v1.13.9: Talos v1.13.9 → pkgs v1.13.0-60-gf541ca4 → cni v1.9.1"
    ));
    assert!(
        o.c.read(DOCKERFILE)
            .contains("\n# talos-cni-plugins-checked-against: v1.13.9\n")
    );
    o.c.check(&["--online"]).expect(0);
}

#[test]
fn fix_refuses_a_marker_move_that_would_make_the_plugins_flap() {
    let Some(w) = world() else { return };
    let Some(o) = online(&w) else { return };
    w.rw.register_talos(&w.gh, "v1.10.8");
    let installer = o.c.pkg.join(INSTALLER);
    let text = std::fs::read_to_string(&installer).unwrap();
    std::fs::write(
        &installer,
        text.replace("version: v1.13.6", "version: v1.10.8"),
    )
    .unwrap();
    let before = o.c.pkg.snapshot();
    let run = o.c.check(&["--online", "--fix"]).expect(1);
    let got = errors(&run);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert!(
        got[0].message.starts_with(
            "not moving the marker to v1.10.8: Talos v1.10.8 ships CNI plugins v1.6.2"
        ),
        "{}",
        got[0].message
    );
    assert!(got[0].message.contains("flap between v1.9.1 and v1.6.2"));
    assert_eq!(o.c.pkg.snapshot(), before, "nothing is written");
}

/// A deliberate move of `CNI_PLUGINS_VERSION` (the working tree differs from
/// the commit) lets `--fix` take the checksums from the new release's
/// sidecars and move both markers to releases that ship it; the same version
/// with other published checksums is never rewritten.
#[test]
fn fix_rewrites_checksums_only_with_a_deliberate_version_change() {
    let Some(w) = world() else { return };
    let Some(o) = online(&w) else { return };
    let repo = GitRepo::new();
    let files: Vec<(String, Vec<u8>)> = o.c.pkg.snapshot().into_iter().collect();
    repo.commit("cozystack at v4.3.0", files);
    let package = repo.path().join(PKG);
    let rv = Revendor::new(&package, &w.gh)
        .env(
            "REVENDOR_REGISTRY_MIRRORS",
            &format!("ghcr.io={}", o.registry.host),
        )
        .env(
            "DOCKER_CONFIG",
            &o.c.pkg.join(".docker").display().to_string(),
        );

    // The same version, but v1.9.1's sidecars now say something else.
    register_cni_plugins(
        &w.gh,
        "v1.9.1",
        &[
            ("amd64".to_owned(), Some("2".repeat(64))),
            ("arm64".to_owned(), Some("3".repeat(64))),
        ],
        &["bridge".to_owned()],
    );
    let dockerfile = std::fs::read_to_string(package.join(DOCKERFILE)).unwrap();
    let run = rv
        .run(&["check", "--online", "--fix", "--format", "json"])
        .expect(1);
    let got = errors(&run);
    assert_eq!(got.len(), 2, "{got:#?}");
    assert!(got.iter().all(|f| f.id == "cni-checksums" && f.message.contains("is still the committed v1.9.1")));
    assert_eq!(
        std::fs::read_to_string(package.join(DOCKERFILE)).unwrap(),
        dockerfile
    );

    // A deliberate move to v1.9.0, which Talos v1.10.9 and kube-ovn v1.15.8 ship.
    register_cni_plugins(
        &w.gh,
        "v1.9.0",
        &[("amd64".to_owned(), None), ("arm64".to_owned(), None)],
        &["bridge".to_owned()],
    );
    w.rw.register_talos(&w.gh, "v1.10.9");
    w.rw.register_kube_ovn(&w.gh, "v1.15.8");
    std::fs::write(
        package.join(DOCKERFILE),
        dockerfile.replace(
            "ARG CNI_PLUGINS_VERSION=v1.9.1",
            "ARG CNI_PLUGINS_VERSION=v1.9.0",
        ),
    )
    .unwrap();
    let installer = repo.path().join(INSTALLER);
    let text = std::fs::read_to_string(&installer).unwrap();
    std::fs::write(
        &installer,
        text.replace("version: v1.13.6", "version: v1.10.9"),
    )
    .unwrap();
    std::fs::write(
        repo.path().join(KUBE_OVN_VALUES),
        kube_ovn_values("v1.15.8"),
    )
    .unwrap();

    let run = rv
        .run(&["check", "--online", "--fix", "--format", "json"])
        .expect(0);
    let got = findings(&run);
    let ids: Vec<&str> = got.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "cni-checksums",
            "cni-checksums",
            "marker:talos",
            "marker:kube-ovn"
        ],
        "{got:#?}"
    );
    assert!(got.iter().all(|f| f.severity == "info"));
    let fixed = std::fs::read_to_string(package.join(DOCKERFILE)).unwrap();
    assert!(fixed.contains("# talos-cni-plugins-checked-against: v1.10.9\n"));
    assert!(fixed.contains("# kube-ovn-cni-plugins-checked-against: v1.15.8\n"));
    assert!(!fixed.contains(&w.fact(&["cni-plugins", "sha256-arm64-v1-9-1"])));
    rv.run(&["check", "--online"]).expect(0);
}

#[test]
fn the_github_format_annotates_and_appends_a_summary() {
    let Some(w) = world() else { return };
    let c = adopted(&w);
    c.edit(
        DOCKERFILE,
        "checked-against: v1.13.6",
        "checked-against: v1.13.5",
    );
    let summary = c.pkg.join("summary.md");
    std::fs::write(&summary, "# earlier step\n").unwrap();
    let rv = Revendor::new(&c.pkg.join(PKG), &w.gh)
        .env("GITHUB_STEP_SUMMARY", &summary.display().to_string());
    let run = rv.run(&["check", "--format", "github"]).expect(1);
    let dir = c.pkg.join(PKG).display().to_string();
    assert!(
        run.stdout.starts_with(&format!(
            "::error file={}/images/multus-cni/Dockerfile,line=5,title=marker%3Atalos::the marker says v1.13.5",
            dir.replace(':', "%3A").replace(',', "%2C")
        )),
        "{}",
        run.stdout
    );
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(
        md.starts_with(
            "# earlier step\n### revendor check: multus\n\n1 error, 0 warnings\n\n| severity |"
        ),
        "{md}"
    );
    assert!(md.contains("| error | `marker:talos` |"), "{md}");
}

/// The repository root is itself the multus package (`make update`, then
/// `make check`): its vendor.toml, patches, Dockerfile and chart files,
/// adopted from the real releases, check clean offline and online. No image
/// is pinned before the first build, which is the one warning.
#[test]
fn the_repository_roots_package_is_clean_after_update() {
    let Some(w) = world() else { return };
    w.register_resolvers();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let pkg = TempPackage::new();
    for f in ["vendor.toml", "Chart.yaml", "values.yaml", ".helmignore"] {
        pkg.write(f, std::fs::read(root.join(f)).unwrap());
    }
    pkg.copy_from(&root.join("patches"), "patches");
    pkg.copy_from(&root.join("images"), "images");
    // The values files its contracts on what Helm renders read (issue 19).
    pkg.copy_from(&root.join("tests/values"), "tests/values");
    let rv = Revendor::new(pkg.path(), &w.gh);
    rv.run(&["update"]).expect(0);

    let run = rv.run(&["check", "--format", "json"]).expect(0);
    let got = findings(&run);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!(
        (got[0].id.as_str(), got[0].severity.as_str()),
        ("image-pin", "warning")
    );
    let run = rv
        .run(&["check", "--online", "--format", "json", "-v"])
        .expect(0);
    assert_eq!(errors(&run), [], "{}", run.stderr);
    assert!(
        run.stderr
            .contains("marker:talos: Talos v1.13.6 → pkgs v1.13.0-43-gd8c80cc → cni v1.9.1"),
        "{}",
        run.stderr
    );
}

/// A loopback port that nothing listens on: a registry that is down.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// A token the runs carry; no output may show it.
const TOKEN: &str = "ghp_issue9_never_printed";

/// The adopted workspace checked online with ghcr.io read through a
/// loopback port that nothing listens on, and a Talos release whose pkgs
/// moved the CNI plugins to v1.9.2.
fn registry_down(w: &World) -> (Cozystack, Revendor, u16) {
    let c = adopted(w);
    w.register_resolvers();
    register_talos(&w.gh, "v1.13.6", "v1.13.0-43-gd8c80cc", "v1.9.2");
    let port = closed_port();
    let rv = Revendor::new(&c.pkg.join(PKG), &w.gh)
        .env(
            "REVENDOR_REGISTRY_MIRRORS",
            &format!("ghcr.io=127.0.0.1:{port}"),
        )
        .env(
            "DOCKER_CONFIG",
            &c.pkg.join(".docker").display().to_string(),
        )
        .env("GITHUB_TOKEN", TOKEN);
    (c, rv, port)
}

/// Issue 9, "check --online goes blind when one remote does not answer":
/// with the registry down, the moved Talos pin is still reported, in the
/// human, JSON and github formats, next to `unreachable`; exit 3.
#[test]
fn with_the_registry_down_the_moved_talos_pin_is_reported_in_every_format() {
    let Some(w) = world() else { return };
    let (c, rv, port) = registry_down(&w);
    let registry = format!("127.0.0.1:{port}");
    let pin_line = line_of(&c.read(TEMPLATE), "image: ghcr.io/cozystack", "image:");
    let marker_line = line_of(&c.read(DOCKERFILE), "talos-cni", "talos-cni");
    let pinned = w.fact(&["cozystack-multus", "pinned-image"]);

    let run = rv.run(&["check", "--online", "--format", "json"]).expect(3);
    let got = errors(&run);
    let ids: Vec<(&str, &str, usize)> = got
        .iter()
        .map(|f| (f.id.as_str(), f.file.as_str(), f.line))
        .collect();
    assert_eq!(
        ids,
        [
            ("unreachable", TEMPLATE, pin_line),
            ("marker:talos", DOCKERFILE, marker_line),
        ],
        "{got:#?}"
    );
    assert!(
        got[0].message.starts_with(&format!(
            "image-exists could not verify `{pinned}`: failed to fetch `http://{registry}/v2/"
        )) && got[0].message.contains("Connection refused"),
        "{}",
        got[0].message
    );
    assert!(
        got[1]
            .message
            .contains("Talos v1.13.6 ships CNI plugins v1.9.2"),
        "{}",
        got[1].message
    );
    assert!(
        run.stderr.contains(&format!(
            "error: the check is incomplete: 1 remote did not answer (`http://{registry}/v2/"
        )),
        "{}",
        run.stderr
    );
    assert!(!run.all().contains(TOKEN));

    let human = rv.run(&["check", "--online"]).expect(3);
    assert!(
        human.stdout.contains(&format!(
            "marker:talos\n  {DOCKERFILE}:{marker_line}: error: Talos v1.13.6 ships CNI plugins v1.9.2"
        )),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains(&format!(
            "unreachable\n  {TEMPLATE}:{pin_line}: error: image-exists could not verify"
        )),
        "{}",
        human.stdout
    );
    assert!(human.stdout.ends_with("multus: 2 errors, 0 warnings\n"));
    assert!(!human.all().contains(TOKEN));

    let summary = c.pkg.join("summary.md");
    let github = rv
        .env("GITHUB_STEP_SUMMARY", &summary.display().to_string())
        .env("GITHUB_WORKSPACE", &c.pkg.path().display().to_string())
        .run(&["check", "--online", "--format", "github"])
        .expect(3);
    let annotations: Vec<&str> = github.stdout.lines().collect();
    assert_eq!(annotations.len(), 2, "{}", github.stdout);
    assert!(annotations[0].starts_with(&format!(
        "::error file={PKG}/{TEMPLATE},line={pin_line},title=unreachable::image-exists could not verify"
    )));
    assert!(annotations[1].starts_with(&format!(
        "::error file={PKG}/{DOCKERFILE},line={marker_line},title=marker%3Atalos::Talos v1.13.6 ships CNI plugins v1.9.2"
    )));
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.contains("| error | `unreachable` |"), "{md}");
    assert!(md.contains("| error | `marker:talos` |"), "{md}");
    assert!(!github.all().contains(TOKEN) && !md.contains(TOKEN));
}

/// Issue 9: a GitHub API outage during the nightly (the releases list
/// answers 503) with the registry down too still reports the drift it can
/// see: the moved Talos pin from the raw files and an offline finding.
#[test]
fn a_github_outage_during_the_nightly_still_reports_the_drift_it_can_see() {
    let Some(w) = world() else { return };
    let (c, rv, _port) = registry_down(&w);
    c.edit(DOCKERFILE, "ARG VERSION=v4.3.0", "ARG VERSION=v4.2.4");
    w.gh.fail_next("/repos/k8snetworkplumbingwg/multus-cni/releases", 503, 100);
    let run = rv.run(&["check", "--online", "--format", "json"]).expect(3);
    let mut ids: Vec<String> = errors(&run).into_iter().map(|f| f.id).collect();
    ids.sort();
    assert_eq!(
        ids,
        ["marker:talos", "unreachable", "unreachable", "version-sync"],
        "{}",
        run.stdout
    );
    let releases = errors(&run)
        .into_iter()
        .find(|f| f.id == "unreachable" && f.file == "vendor.toml")
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(
        releases.message.starts_with(
            "upstream-newer could not list the releases of github:k8snetworkplumbingwg/multus-cni: "
        ) && releases.message.contains("503"),
        "{}",
        releases.message
    );
    assert!(
        run.stderr.contains("2 remotes did not answer"),
        "{}",
        run.stderr
    );
    assert!(!run.all().contains(TOKEN));
}

/// Issue 9, "what update says when it ends": at v4.2.4 the builder is
/// golang:1.24.11, enough for its go.mod (`go 1.24.11`); v4.3.0's says
/// `go 1.25.0`. `update --to v4.3.0` writes the update, ends with that
/// finding and its next command, and exits 1 because the update caused it;
/// `check` and `image build` give the same advice.
#[test]
fn update_ends_with_the_finding_it_caused_and_the_next_command() {
    let Some(w) = world() else { return };
    let pkg = TempPackage::new();
    for (path, bytes) in workspace(&w, None) {
        pkg.write(&path, bytes);
    }
    let c = Cozystack {
        rv: Revendor::new(&pkg.join(PKG), &w.gh),
        pkg,
    };
    c.write(
        "vendor.toml",
        &cozystack_vendor_toml("v4.2.4").replace("go = \"1.26\"", "go = \"1.24\""),
    );
    let template = c.read(TEMPLATE);
    c.write(TEMPLATE, &template.replacen("      - nad\n", "", 1));
    let dockerfile = c
        .read(DOCKERFILE)
        .replace("golang:1.26@", "golang:1.24.11@")
        .replace("ARG VERSION=v4.3.0", "ARG VERSION=v4.2.4");
    c.write(DOCKERFILE, &dockerfile);
    let adopted = c.rv.run(&["update", "--to", "v4.2.4"]).expect(0);
    assert!(!adopted.stderr.contains("warning"), "{}", adopted.stderr);
    c.check(&[]).expect(0);

    let run = c.rv.run(&["update", "--to", "v4.3.0"]).expect(1);
    let builder = line_of(&dockerfile, "AS builder", "AS builder");
    let next = "run `revendor image pin-base --go 1.25`: it moves the builder and `[image] go` to Go 1.25 and pins it by digest";
    assert!(
        run.stderr.contains(&format!(
            "warning: builder-go: {DOCKERFILE}:{builder}: error: the builder's Go 1.24.11 is older than `go 1.25.0` in upstream's go.mod at v4.3.0 (caused by this update)\n  next: {next}\n"
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("the update is written, but its result has 2 error finding(s) it caused"),
        "{}",
        run.stderr
    );
    assert!(
        c.read("upstream/lock.toml")
            .contains("version = \"v4.3.0\"")
    );
    assert!(
        run.stdout.contains("upstream: v4.2.4 -> v4.3.0"),
        "{}",
        run.stdout
    );

    // The next check says the same, and so does the image build.
    let check = c.check(&[]).expect(1);
    let got = errors(&check);
    assert_eq!(got.len(), 2, "{got:#?}");
    let doc: Value = serde_json::from_str(&check.stdout).unwrap();
    for f in doc["findings"].as_array().unwrap() {
        assert_eq!(
            (f["id"].as_str(), f["fix"].as_str()),
            (Some("builder-go"), Some(next))
        );
    }
    let build =
        c.rv.run(&["--offline", "image", "build", "--dry-run"])
            .expect(2);
    assert!(
        build.stderr.contains(&format!(
            "{DOCKERFILE}:{builder}: the builder's Go 1.24.11 is older than `go 1.25.0`"
        )) && build
            .stderr
            .contains(&format!("  help: {next} (docs/reference.md#image)\n")),
        "{}",
        build.stderr
    );
}

/// Issue 9: an error the update did not cause (it was there before) is
/// printed with its next command, and the update still exits 0.
#[test]
fn an_error_that_was_there_before_the_update_is_a_warning_and_exit_0() {
    let Some(w) = world() else { return };
    let c = adopted(&w);
    c.edit(
        DOCKERFILE,
        "checked-against: v1.13.6",
        "checked-against: v1.13.5",
    );
    let run = c.rv.run(&["update", "--to", "v4.3.0"]).expect(0);
    assert!(
        run.stderr.contains(&format!(
            "warning: marker:talos: {DOCKERFILE}:5: error: the marker says v1.13.5, but ../../core/talos/images/talos/profiles/installer.yaml:6 says v1.13.6\n  next: run `revendor check --online --fix`"
        )),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("caused"), "{}", run.stderr);
    let json =
        c.rv.run(&["update", "--to", "v4.3.0", "--format", "json"])
            .expect(0);
    let doc: Value = serde_json::from_str(&json.stdout).unwrap();
    let closing = doc["findings"].as_array().unwrap();
    assert_eq!(closing.len(), 1, "{}", json.stdout);
    assert_eq!(
        (closing[0]["id"].as_str(), closing[0]["caused"].as_bool()),
        (Some("marker:talos"), Some(false))
    );
}

/// Issue 13: `check --online --fix` killed at a hundred random moments while it moves the
/// Talos marker: the Dockerfile is the old one or the fixed one, and nothing is left behind.
#[test]
fn sigkill_during_check_fix_leaves_the_old_marker_or_the_new_one() {
    let Some(w) = world() else { return };
    let Some(o) = online(&w) else { return };
    w.rw.register_talos(&w.gh, "v1.13.9");
    let installer = o.c.pkg.join(INSTALLER);
    let text = std::fs::read_to_string(&installer).unwrap();
    std::fs::write(
        &installer,
        text.replace("version: v1.13.6", "version: v1.13.9"),
    )
    .unwrap();
    let package = o.c.pkg.join(PKG);
    let before = support::kill::state(&package, &[]);
    let fix = ["check", "--online", "--fix"];
    let rounds = support::kill::Rounds {
        name: "check --fix",
        dir: &package,
        ignore: &[],
        cache: Some(o.c.rv.cache()),
        min: 100,
        seed: 0x94d0_49bb_1331_11eb,
    };
    rounds.run(
        || {
            o.c.rv.run(&fix).expect(0);
        },
        || o.c.rv.spawn(&fix),
        || {
            let run = o.c.rv.run(&["check", "--offline"]);
            assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
        },
        || support::kill::restore(&package, &before, &[]),
    );
}
