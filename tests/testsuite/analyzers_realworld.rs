//! The analyzers against the real files of the multus package.
//!
//! The files are read at run time from `$REVENDOR_REALWORLD` (see
//! /work/shared/realworld/README.md); every test is skipped, with a note, when
//! the variable is unset. Mutations are applied in memory to the real text.

use std::path::PathBuf;

use revendor::manifest::{Contract, Manifest, Select};
use revendor::marker;

fn realworld() -> Option<PathBuf> {
    match std::env::var_os("REVENDOR_REALWORLD") {
        Some(dir) => Some(PathBuf::from(dir)),
        None => {
            eprintln!("note: REVENDOR_REALWORLD is unset; skipping the real-world test");
            None
        }
    }
}

fn read(root: &std::path::Path, rel: &str) -> String {
    let path = root.join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

fn facts(root: &std::path::Path) -> toml::Table {
    read(root, "facts.toml").parse().expect("facts.toml parses")
}

fn fact<'a>(facts: &'a toml::Table, section: &str, key: &str) -> &'a str {
    facts[section][key].as_str().expect("a string fact")
}

const TEMPLATE: &str = "cozystack-multus/templates/multus-daemonset-thick.yml";

fn strings(path: &[&str]) -> Vec<String> {
    path.iter().map(|s| (*s).to_owned()).collect()
}

fn master_cni() -> Contract {
    Contract {
        name: "master-cni".to_owned(),
        select: Select {
            kind: "ConfigMap".to_owned(),
            name: Some("multus-daemon-config".to_owned()),
        },
        field: strings(&["data", "daemon-config.json"]),
        json: Some(strings(&["multusMasterCNI"])),
        equals: Some("05-cilium.conflist".to_owned()),
        every_container: None,
    }
}

fn memory_limits() -> Contract {
    Contract {
        name: "memory-limits".to_owned(),
        select: Select {
            kind: "DaemonSet".to_owned(),
            name: None,
        },
        field: Vec::new(),
        json: None,
        equals: None,
        every_container: Some(strings(&["resources", "limits", "memory"])),
    }
}

/// 1-based number of the only line of `text` equal to `line` after trimming.
fn line_of(text: &str, line: &str) -> usize {
    let hits: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim() == line)
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(hits.len(), 1, "`{line}` occurs {} times", hits.len());
    hits[0]
}

#[test]
fn cozystack_template_holds_both_contracts() {
    let Some(root) = realworld() else { return };
    let text = read(&root, TEMPLATE);
    let manifest = Manifest::parse(&text).expect("the template loads");
    assert_eq!(master_cni().evaluate(&manifest), []);
    assert_eq!(memory_limits().evaluate(&manifest), []);

    let config = manifest
        .select("ConfigMap", Some("multus-daemon-config"))
        .next()
        .expect("the daemon config");
    let master = config
        .json(&["data", "daemon-config.json"], &["multusMasterCNI"])
        .expect("multusMasterCNI reads");
    assert_eq!(master.len(), 1);
    assert_eq!(master[0].value, "05-cilium.conflist");
    assert_eq!(
        master[0].line,
        line_of(&text, "\"multusMasterCNI\": \"05-cilium.conflist\",")
    );

    let ds = manifest
        .select("DaemonSet", None)
        .next()
        .expect("the DaemonSet");
    let names: Vec<_> = ds.containers().iter().filter_map(|c| c.name).collect();
    assert_eq!(
        names,
        [
            "kube-multus",
            "install-multus-binary",
            "install-cni-plugins"
        ]
    );
}

#[test]
fn cozystack_template_has_exactly_the_three_container_images() {
    let Some(root) = realworld() else { return };
    let text = read(&root, TEMPLATE);
    let pinned = fact(&facts(&root), "cozystack-multus", "pinned-image").to_owned();
    let images = Manifest::parse(&text).expect("loads").images();
    let containers: Vec<_> = images
        .iter()
        .filter_map(|i| i.container.as_deref())
        .collect();
    assert_eq!(
        containers,
        [
            "kube-multus",
            "install-multus-binary",
            "install-cni-plugins"
        ]
    );
    let lines: Vec<&str> = text.lines().collect();
    for image in &images {
        assert_eq!(image.value, pinned);
        let span = image.span.clone().expect("a plain one-line image");
        assert_eq!(&lines[image.line - 1][span], pinned);
    }
}

#[test]
fn nested_master_cni_does_not_hide_a_changed_top_level_one() {
    let Some(root) = realworld() else { return };
    let text = read(&root, TEMPLATE);
    let original = "\"multusMasterCNI\": \"05-cilium.conflist\",";
    let mutated = text.replacen(
        original,
        "\"wrapper\": {\"multusMasterCNI\": \"05-cilium.conflist\"},\n        \"multusMasterCNI\": \"10-flannel.conflist\",",
        1,
    );
    assert_ne!(mutated, text);
    let manifest = Manifest::parse(&mutated).expect("the mutated template loads");
    let violations = master_cni().evaluate(&manifest);
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert_eq!(
        violations[0].line,
        line_of(&mutated, "\"multusMasterCNI\": \"10-flannel.conflist\",")
    );
    assert!(violations[0].message.contains("10-flannel.conflist"));
}

/// The template with the `memory:` limit of the container named `name`
/// removed (the first `memory:` under its `limits:`).
fn drop_memory_limit(text: &str, name: &str) -> String {
    let mut out = Vec::new();
    let mut in_container = false;
    let mut in_limits = false;
    let mut dropped = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("- name: ") {
            in_container = trimmed == format!("- name: {name}");
        }
        if in_container && trimmed == "limits:" {
            in_limits = true;
        } else if in_limits && !dropped && trimmed.starts_with("memory:") {
            dropped = true;
            continue;
        }
        out.push(line);
    }
    assert!(dropped, "no memory limit found for {name}");
    out.join("\n") + "\n"
}

#[test]
fn a_removed_memory_limit_names_the_container_and_its_line() {
    let Some(root) = realworld() else { return };
    let text = read(&root, TEMPLATE);
    for name in [
        "install-multus-binary",
        "install-cni-plugins",
        "kube-multus",
    ] {
        let mutated = drop_memory_limit(&text, name);
        let manifest = Manifest::parse(&mutated).expect("the mutated template loads");
        let violations = memory_limits().evaluate(&manifest);
        assert_eq!(violations.len(), 1, "{name}: {violations:?}");
        assert_eq!(
            violations[0].line,
            line_of(&mutated, &format!("- name: {name}"))
        );
        assert!(
            violations[0].message.contains(&format!("`{name}`")),
            "{}",
            violations[0].message
        );
    }
}

#[test]
fn talos_installer_version_is_the_shipped_release() {
    let Some(root) = realworld() else { return };
    let text = read(&root, "cozystack-talos/installer.yaml");
    let shipped = fact(&facts(&root), "talos", "shipped").to_owned();
    let got = marker::expect_yaml(&text, "version", false).expect("version reads");
    assert_eq!(got.value, shipped);
    assert_eq!(got.line, line_of(&text, &format!("version: {shipped}")));
}

#[test]
fn upstream_manifests_lack_what_the_local_patch_adds() {
    let Some(root) = realworld() else { return };
    let facts = facts(&root);
    let upstream_image = fact(&facts, "multus-cni", "upstream-image").to_owned();
    for dir in ["v4.2.3", "v4.2.4", "v4.3.0", "unreleased-95a0932"] {
        let rel = format!("multus-cni/{dir}/deployments/multus-daemonset-thick.yml");
        let text = read(&root, &rel);
        let manifest = Manifest::parse(&text).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let images = manifest.images();
        assert_eq!(images.len(), 2, "{rel}");
        assert!(images.iter().all(|i| i.value == upstream_image), "{rel}");

        let limits = memory_limits().evaluate(&manifest);
        assert_eq!(limits.len(), 1, "{rel}: {limits:?}");
        assert_eq!(
            limits[0].line,
            line_of(&text, "- name: install-multus-binary")
        );

        let master = master_cni().evaluate(&manifest);
        assert_eq!(master.len(), 1, "{rel}: {master:?}");
        assert_eq!(master[0].line, line_of(&text, "daemon-config.json: |"));
        assert!(master[0].message.contains("has no key `multusMasterCNI`"));
    }
}

#[test]
fn pkgs_describes_of_talos_releases_resolve_to_refs() {
    let Some(root) = realworld() else { return };
    let facts = facts(&root);
    let by_talos = facts["talos"]["pkgs-by-talos"]
        .as_table()
        .expect("pkgs-by-talos");
    for (talos, describe) in by_talos {
        let describe = describe.as_str().expect("a describe");
        let got = marker::pkgs_ref(describe).unwrap_or_else(|e| panic!("{talos}: {e}"));
        match describe.rsplit_once("-g") {
            Some((_, hash)) => assert_eq!(got, marker::PkgsRef::Commit(hash.to_owned())),
            None => assert_eq!(got, marker::PkgsRef::Tag(describe.to_owned())),
        }
    }
}

#[test]
fn cni_sidecars_in_the_published_format_read_back() {
    let Some(root) = realworld() else { return };
    let facts = facts(&root);
    let version = fact(&facts, "cni-plugins", "pinned");
    for arch in ["amd64", "arm64"] {
        let sha = fact(&facts, "cni-plugins", &format!("sha256-{arch}-v1-9-1"));
        let asset = marker::cni_asset(arch, version);
        let sidecar = format!("{sha}  {asset}\n");
        let got = marker::sidecar_sha256(&sidecar, &asset).expect("the sidecar reads");
        assert_eq!(got.value, sha);
        let other = marker::cni_asset(if arch == "amd64" { "arm64" } else { "amd64" }, version);
        assert!(marker::sidecar_sha256(&sidecar, &other).is_err());
    }
}
