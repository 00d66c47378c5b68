//! The real upstreams of the multus package, served by the [`GitHub`] stand-in.
//!
//! The data lives outside the repository and is found at run time through `REVENDOR_REALWORLD`
//! (it is never copied in). Tests start with
//! `let Some(rw) = Realworld::from_env() else { return };`, which prints a skip note when the
//! variable is unset.
//!
//! 1. multus-cni: the releases of `multus-cni/releases.json` (real tags, dates and order) behind
//!    the paginated endpoint, the tags on their real commits from `facts.toml`, and the thick
//!    manifest at v4.2.3, v4.2.4 and v4.3.0; `master` holds the unreleased manifest, which
//!    [`Realworld::publish_unreleased`] can release under a new tag.
//! 2. kube-ovn's chart directory at two releases ([`Realworld::register_kube_ovn_chart`]).
//! 3. The CNI plugins resolvers: Talos `Makefile`, pkgs `Pkgfile`, kube-ovn `Dockerfile.base`
//!    and the containernetworking/plugins checksum sidecars, with every value from `facts.toml`.
//!
//! The upstream Makefile, Pkgfile and Dockerfile are not part of the real-world data (only
//! their values and line formats are), so the free functions below write synthetic ones in
//! those formats. They place the look-alike lines a careless reader would match first
//! (`flannel_cni_version:` above `cni_version:`, `PKG_FLANNEL_CNI` next to `PKG_CNI`), and they
//! take explicit values, so tests without the real-world data use them too.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::github::{GitHub, derived_sha, sha256_sidecar};

/// The vendored upstream.
pub const MULTUS_REPO: &str = "k8snetworkplumbingwg/multus-cni";
/// The vendored file, relative to the multus-cni repository.
pub const MULTUS_MANIFEST: &str = "deployments/multus-daemonset-thick.yml";
/// The releases whose manifest the real-world data holds.
pub const MULTUS_VERSIONS: [&str; 3] = ["v4.2.3", "v4.2.4", "v4.3.0"];
/// Talos, whose Makefile names the pkgs build that ships the CNI plugins.
pub const TALOS_REPO: &str = "siderolabs/talos";
/// Talos' packages, whose Pkgfile pins the CNI plugins version.
pub const PKGS_REPO: &str = "siderolabs/pkgs";
/// kube-ovn, whose base image pins the CNI plugins version.
pub const KUBE_OVN_REPO: &str = "kubeovn/kube-ovn";
/// The CNI plugins, whose releases carry `.sha256` sidecars.
pub const CNI_PLUGINS_REPO: &str = "containernetworking/plugins";
/// The architectures the multus image is built for.
pub const ARCHES: [&str; 2] = ["amd64", "arm64"];

/// The real-world data directory and its parsed `facts.toml`.
pub struct Realworld {
    root: PathBuf,
    facts: toml::Table,
}

impl Realworld {
    /// Reads `REVENDOR_REALWORLD`; `None` (after printing a skip note) when it is unset.
    /// Panics when it is set but unreadable: a broken setup must not pass as a skip.
    pub fn from_env() -> Option<Realworld> {
        let Some(root) = std::env::var_os("REVENDOR_REALWORLD") else {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI is set but REVENDOR_REALWORLD is not: .ci/run sets it to ../shared/realworld"
            );
            eprintln!(
                "note: skipping, REVENDOR_REALWORLD is not set (it names the real-world data)"
            );
            return None;
        };
        Some(Realworld::open(Path::new(&root)))
    }

    /// Opens the data at `root`.
    pub fn open(root: &Path) -> Realworld {
        let text = std::fs::read_to_string(root.join("facts.toml"))
            .unwrap_or_else(|e| panic!("read `{}/facts.toml`: {e}", root.display()));
        let facts = toml::from_str(&text)
            .unwrap_or_else(|e| panic!("parse `{}/facts.toml`: {e}", root.display()));
        Realworld {
            root: root.to_path_buf(),
            facts,
        }
    }

    /// The data directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The bytes of `rel` in the data directory.
    pub fn read(&self, rel: &str) -> Vec<u8> {
        let path = self.root.join(rel);
        std::fs::read(&path).unwrap_or_else(|e| panic!("read `{}`: {e}", path.display()))
    }

    /// The parsed `facts.toml`.
    pub fn facts(&self) -> &toml::Table {
        &self.facts
    }

    /// The fact at `keys` (e.g. `["talos", "cni-by-talos", "v1.13.6"]`); panics naming the
    /// path when it is missing.
    pub fn fact(&self, keys: &[&str]) -> &toml::Value {
        let (first, rest) = keys.split_first().expect("a non-empty fact path");
        rest.iter()
            .fold(self.facts.get(*first), |value, key| value?.get(*key))
            .unwrap_or_else(|| panic!("facts.toml has no {}", keys.join(".")))
    }

    /// The string fact at `keys`.
    pub fn fact_str(&self, keys: &[&str]) -> &str {
        self.fact(keys)
            .as_str()
            .unwrap_or_else(|| panic!("facts.toml {} is not a string", keys.join(".")))
    }

    /// The string-to-string table at `keys` (e.g. `["talos", "cni-by-talos"]`).
    pub fn fact_map(&self, keys: &[&str]) -> BTreeMap<String, String> {
        let table = self
            .fact(keys)
            .as_table()
            .unwrap_or_else(|| panic!("facts.toml {} is not a table", keys.join(".")));
        table
            .iter()
            .map(|(k, v)| {
                let v = v
                    .as_str()
                    .unwrap_or_else(|| panic!("facts.toml {}.{k} is not a string", keys.join(".")));
                (k.clone(), v.to_string())
            })
            .collect()
    }

    /// The list of strings at `keys` (e.g. `["multus-cni", "tags"]`).
    pub fn fact_list(&self, keys: &[&str]) -> Vec<String> {
        let array = self
            .fact(keys)
            .as_array()
            .unwrap_or_else(|| panic!("facts.toml {} is not an array", keys.join(".")));
        array
            .iter()
            .map(|v| {
                v.as_str()
                    .unwrap_or_else(|| panic!("facts.toml {} holds a non-string", keys.join(".")))
                    .to_string()
            })
            .collect()
    }

    /// The thick manifest at one of [`MULTUS_VERSIONS`].
    pub fn multus_manifest(&self, version: &str) -> Vec<u8> {
        self.read(&format!("multus-cni/{version}/{MULTUS_MANIFEST}"))
    }

    /// The thick manifest on master after v4.3.0 (the shape of the next release).
    pub fn unreleased_manifest(&self) -> Vec<u8> {
        let commit = self.unreleased_commit();
        self.read(&format!(
            "multus-cni/unreleased-{}/{MULTUS_MANIFEST}",
            &commit[..7]
        ))
    }

    /// The commit on master after v4.3.0 that the unreleased manifest comes from.
    pub fn unreleased_commit(&self) -> &str {
        self.fact_str(&["multus-cni", "unreleased", "commit"])
    }

    /// The unreleased commit's date, at noon UTC (facts.toml gives the day).
    fn unreleased_date(&self) -> String {
        let day = self.fact_str(&["multus-cni", "unreleased", "date"]);
        format!("{day}T12:00:00Z")
    }

    /// The real commit of a multus-cni tag, where facts.toml knows it.
    pub fn multus_commit(&self, tag: &str) -> Option<String> {
        let tags = self.fact(&["multus-cni", "tag"]).as_table()?;
        tags.values()
            .find(|entry| entry.get("tag").and_then(toml::Value::as_str) == Some(tag))
            .and_then(|entry| entry.get("commit")?.as_str())
            .map(str::to_string)
    }

    /// Registers multus-cni: every release of `releases.json` (draft, prerelease, name, id and
    /// dates as recorded), tags on their real commits where known, the manifest at each of
    /// [`MULTUS_VERSIONS`], and `master` at the unreleased commit with its manifest.
    pub fn register_multus(&self, gh: &GitHub) {
        let text = self.read("multus-cni/releases.json");
        let releases: Vec<serde_json::Value> = serde_json::from_slice(&text)
            .unwrap_or_else(|e| panic!("parse multus-cni/releases.json: {e}"));
        let repo = gh.repo(MULTUS_REPO);
        for release in &releases {
            let field = |key: &str| release.get(key).and_then(|v| v.as_str());
            let tag = field("tag_name").expect("releases.json: tag_name");
            let created_at = field("created_at").expect("releases.json: created_at");
            if let Some(commit) = self.multus_commit(tag) {
                repo.tag(tag, &commit);
            }
            repo.release(tag, |r| {
                let mut r = r
                    .name(field("name"))
                    .draft(release["draft"].as_bool().unwrap_or(false))
                    .prerelease(release["prerelease"].as_bool().unwrap_or(false))
                    .created_at(created_at)
                    .published_at(field("published_at"))
                    .body(field("body"));
                if let Some(id) = release["id"].as_u64() {
                    r = r.id(id);
                }
                if let Some(target) = field("target_commitish") {
                    r = r.target_commitish(target);
                }
                r
            });
            repo.commit_info(tag, created_at, &format!("Release {tag}"));
        }
        for version in MULTUS_VERSIONS {
            repo.file_at(version, MULTUS_MANIFEST, self.multus_manifest(version));
        }
        let unreleased = self.unreleased_commit();
        repo.branch("master", unreleased)
            .file_at(unreleased, MULTUS_MANIFEST, self.unreleased_manifest())
            .commit_info(unreleased, &self.unreleased_date(), "Unreleased master");
    }

    /// Registers a multus-cni source tree at each release and at the unreleased commit, for
    /// the Go source patch: the Go source is not in the data, so `pkg/multus/multus.go` is
    /// [`multus_go`] at the line the patched block has there (954 at v4.2.x, 1060 from v4.3.0
    /// on), and `go.mod` carries the real `go` directive from facts.toml.
    pub fn register_multus_source(&self, gh: &GitHub) {
        let patch =
            self.read("cozystack-multus/images/multus-cni/patches/fix-del-without-cache.diff");
        let tags = self.fact(&["multus-cni", "tag"]).clone();
        let tags = tags
            .as_table()
            .expect("facts.toml multus-cni.tag is a table");
        let unreleased = self.fact(&["multus-cni", "unreleased"]).clone();
        let mut revs: Vec<(String, String)> = tags
            .values()
            .map(|t| {
                let field = |k: &str| t.get(k).and_then(|v| v.as_str()).unwrap_or_default();
                (field("tag").to_string(), field("go-directive").to_string())
            })
            .collect();
        let field = |k: &str| {
            unreleased
                .get(k)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
        };
        revs.push((
            field("commit").to_string(),
            field("go-directive").to_string(),
        ));
        let repo = gh.repo(MULTUS_REPO);
        for (rev, go) in revs {
            let line = if rev.starts_with("v4.2.") { 954 } else { 1060 };
            repo.file_at(&rev, "pkg/multus/multus.go", multus_go(&patch, line))
                .file_at(
                    &rev,
                    "go.mod",
                    format!("module gopkg.in/k8snetworkplumbingwg/multus-cni.v4\n\ngo {go}\n"),
                );
        }
    }

    /// Tags the unreleased commit as `tag` (e.g. `v4.4.0`) and publishes a release for it,
    /// dated the commit's day: the newest release from then on. Call after
    /// [`Realworld::register_multus`].
    pub fn publish_unreleased(&self, gh: &GitHub, tag: &str) {
        let commit = self.unreleased_commit();
        let date = self.unreleased_date();
        gh.repo(MULTUS_REPO)
            .tag(tag, commit)
            .file_at(commit, MULTUS_MANIFEST, self.unreleased_manifest())
            .release(tag, |r| r.created_at(&date).target_commitish("master"));
    }

    /// The pkgs build a Talos release names in its Makefile (`PKGS ?=`). Talos releases that
    /// facts.toml knows only a CNI version for get a synthetic describe.
    pub fn pkgs_for_talos(&self, talos: &str) -> String {
        self.fact_map(&["talos", "pkgs-by-talos"])
            .remove(talos)
            .unwrap_or_else(|| {
                let minor = talos.rsplit_once('.').map_or(talos, |(minor, _)| minor);
                format!("{minor}.0-1-g{}", &derived_sha(talos)[..7])
            })
    }

    /// Registers what resolving the CNI plugins version of Talos `talos` reads: the Makefile at
    /// the Talos tag and the Pkgfile at the pkgs ref, with `cni-by-talos` from facts.toml.
    pub fn register_talos(&self, gh: &GitHub, talos: &str) {
        let cni = self
            .fact_map(&["talos", "cni-by-talos"])
            .remove(talos)
            .unwrap_or_else(|| panic!("facts.toml has no CNI version for Talos {talos}"));
        register_talos(gh, talos, &self.pkgs_for_talos(talos), &cni);
    }

    /// [`Realworld::register_talos`] for every Talos release in `cni-by-talos`, with releases
    /// (an `-rc` one as a prerelease) in version order, so the newest stable one is latest.
    pub fn register_all_talos(&self, gh: &GitHub) {
        let mut versions: Vec<String> = self
            .fact_map(&["talos", "cni-by-talos"])
            .into_keys()
            .collect();
        versions.sort_by_key(|v| semver_key(v));
        for talos in &versions {
            self.register_talos(gh, talos);
            gh.repo(TALOS_REPO)
                .release(talos, |r| r.prerelease(talos.contains('-')));
        }
    }

    /// Registers kube-ovn's `dist/images/Dockerfile.base` at `version` with the CNI plugins
    /// version of `cni-by-kube-ovn`.
    pub fn register_kube_ovn(&self, gh: &GitHub, version: &str) {
        let cni = self
            .fact_map(&["kube-ovn", "cni-by-kube-ovn"])
            .remove(version)
            .unwrap_or_else(|| panic!("facts.toml has no CNI version for kube-ovn {version}"));
        register_kube_ovn(gh, version, &cni);
    }

    /// Registers the containernetworking/plugins release `version` with both architectures'
    /// archives and `.sha256` sidecars. Sidecars carry the real checksums from facts.toml where
    /// it has them; the archives are stand-ins (the real binaries are not in the data), so
    /// checking a downloaded archive against such a sidecar fails. Without a fact, the sidecar
    /// matches the stand-in.
    pub fn register_cni_plugins(&self, gh: &GitHub, version: &str) {
        let key_version = version.replace('.', "-");
        let sums: Vec<(String, Option<String>)> = ARCHES
            .iter()
            .map(|arch| {
                let key = format!("sha256-{arch}-{key_version}");
                let sum = self
                    .fact(&["cni-plugins"])
                    .get(&key)
                    .and_then(|v| v.as_str())
                    .map(str::to_string);
                (arch.to_string(), sum)
            })
            .collect();
        let plugins: Vec<String> = ["staged", "not-staged"]
            .iter()
            .flat_map(|key| self.fact_list(&["cni-plugins", key]))
            .collect();
        register_cni_plugins(gh, version, &sums, &plugins);
    }
}

/// The releases of kube-ovn whose chart the real-world data holds, oldest first.
pub const KUBE_OVN_CHART_VERSIONS: [&str; 2] = ["v1.14.5", "v1.14.11"];
/// The Go file cozystack's kube-ovn source patch changes.
pub const KUBE_OVN_GO: &str = "pkg/ovn_leader_checker/ovn.go";

impl Realworld {
    /// Registers kube-ovn's chart releases: each of [`KUBE_OVN_CHART_VERSIONS`] tagged on its
    /// real commit (facts.toml `kube-ovn-chart.commits`) with the chart directory of the data,
    /// and a release for it. The Go source is not in the data, so [`KUBE_OVN_GO`] is
    /// [`file_for_patch`] of cozystack's source patch at both.
    pub fn register_kube_ovn_chart(&self, gh: &GitHub) {
        let commits = self.fact_map(&["kube-ovn-chart", "commits"]);
        let go = file_for_patch(
            &self.read("cozystack-kubeovn-before/images/kubeovn/patches/northd_probe.diff"),
        );
        let repo = gh.repo(KUBE_OVN_REPO);
        for version in KUBE_OVN_CHART_VERSIONS {
            let commit = commits
                .get(version)
                .unwrap_or_else(|| panic!("facts.toml has no kube-ovn-chart commit for {version}"));
            repo.tag(version, commit)
                .dir_at(version, &self.root.join("kube-ovn").join(version))
                .file_at(version, KUBE_OVN_GO, go.clone())
                .release(version, |r| r);
        }
    }
}

/// A file that the one-file `patch` applies to exactly: each hunk's old side at its line, the
/// text after its `@@` (git's function context) on the line before, and comment lines between
/// (which git's function-context rule does not pick).
pub fn file_for_patch(patch: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(patch);
    let mut lines: Vec<String> = Vec::new();
    let mut hunk: Option<usize> = None;
    let fill = |lines: &mut Vec<String>, upto: usize| {
        while lines.len() < upto {
            lines.push(format!("\t// line {}", lines.len() + 1));
        }
    };
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("@@ -") {
            let start: usize = rest
                .split([',', ' '])
                .next()
                .and_then(|n| n.parse().ok())
                .expect("a hunk header");
            let context = rest.split_once("@@").map_or("", |(_, c)| c).trim_start();
            fill(&mut lines, start.saturating_sub(2));
            if !context.is_empty() && lines.len() + 1 < start {
                lines.push(context.to_string());
            }
            fill(&mut lines, start - 1);
            hunk = Some(start);
            continue;
        }
        if hunk.is_none() {
            continue;
        }
        if let Some(old) = line.strip_prefix(' ').or_else(|| line.strip_prefix('-')) {
            lines.push(old.to_string());
        } else if line.is_empty() {
            lines.push(String::new());
        }
    }
    lines.push("// end of file".to_string());
    let mut out = lines.join("\n");
    out.push('\n');
    out.into_bytes()
}

/// Orders `v1.10.8` before `v1.13.0` and `v1.14.0-rc.1` before `v1.14.0`.
fn semver_key(version: &str) -> (Vec<u64>, bool, String) {
    let version = version.trim_start_matches('v');
    let (core, pre) = version.split_once('-').unwrap_or((version, ""));
    let numbers = core.split('.').map(|n| n.parse().unwrap_or(0)).collect();
    (numbers, pre.is_empty(), pre.to_string())
}

/// A synthetic siderolabs/talos Makefile with the lines a resolver reads.
pub fn talos_makefile(pkgs: &str) -> String {
    format!(
        "# Synthetic stand-in for the siderolabs/talos Makefile: only the variables the CNI\n\
         # plugins resolver reads, among look-alikes.\n\
         REGISTRY ?= ghcr.io\n\
         USERNAME ?= siderolabs\n\
         TOOLS_PREFIX ?= ghcr.io/siderolabs/tools\n\
         TOOLS ?= v0.0.0-tools\n\
         PKGS_PREFIX ?= ghcr.io/siderolabs\n\
         PKGS ?= {pkgs}\n\
         EXTRAS ?= v0.0.0-extras\n\
         \n\
         PKG_FHS ?= $(PKGS_PREFIX)/fhs:$(PKGS)\n\
         PKG_FLANNEL_CNI ?= $(PKGS_PREFIX)/flannel-cni:$(PKGS)\n\
         PKG_CNI ?= $(PKGS_PREFIX)/cni:$(PKGS)\n\
         PKG_KERNEL ?= $(PKGS_PREFIX)/kernel:$(PKGS)\n\
         \n\
         all: initramfs kernel installer\n"
    )
}

/// A synthetic siderolabs/pkgs Pkgfile: `vars:` (two-space indent) with the look-alike
/// `flannel_cni_version:` placed before `cni_version:`, each under a renovate comment.
pub fn pkgs_pkgfile(cni_version: &str) -> String {
    format!(
        "# syntax = ghcr.io/siderolabs/bldr:v0.0.0\n\
         # Synthetic stand-in for the siderolabs/pkgs Pkgfile.\n\
         \n\
         format: v1alpha2\n\
         \n\
         vars:\n\
         \x20 TOOLS_IMAGE: ghcr.io/siderolabs/tools:v0.0.0-tools\n\
         \n\
         \x20 # renovate: datasource=github-releases depName=flannel-io/cni-plugin\n\
         \x20 flannel_cni_version: {cni_version}-flannel1\n\
         \n\
         \x20 # renovate: datasource=github-releases depName=containernetworking/plugins\n\
         \x20 cni_version: {cni_version}\n\
         \x20 cni_sha256: 0000000000000000000000000000000000000000000000000000000000000000\n\
         \n\
         labels:\n\
         \x20 org.opencontainers.image.source: https://github.com/siderolabs/pkgs\n"
    )
}

/// A synthetic kubeovn/kube-ovn `dist/images/Dockerfile.base` with `ARG CNI_PLUGINS_VERSION=`.
pub fn kube_ovn_dockerfile_base(cni_version: &str) -> String {
    format!(
        "# syntax = docker/dockerfile:experimental\n\
         # Synthetic stand-in for kube-ovn's dist/images/Dockerfile.base.\n\
         FROM ubuntu:24.04\n\
         \n\
         ARG ARCH\n\
         ARG DEBIAN_FRONTEND=noninteractive\n\
         # renovate: datasource=github-releases depName=cni-plugin packageName=containernetworking/plugins versioning=semver\n\
         ARG CNI_PLUGINS_VERSION={cni_version}\n\
         # renovate: datasource=github-releases depName=kube-bench packageName=aquasecurity/kube-bench\n\
         ARG KUBE_BENCH_VERSION=v0.0.0\n\
         \n\
         RUN curl -sSf -L --retry 5 https://github.com/containernetworking/plugins/releases/download/${{CNI_PLUGINS_VERSION}}/cni-plugins-linux-${{ARCH}}-${{CNI_PLUGINS_VERSION}}.tgz \\\n\
         \x20   | tar -xz -C /opt/cni/bin ./loopback ./portmap ./macvlan\n"
    )
}

/// The commit a pkgs `git describe` names: for `v1.13.0-43-gd8c80cc` a full sha beginning
/// with `d8c80cc` (so the abbreviation resolves), for a bare tag `None`.
pub fn pkgs_describe_commit(describe: &str) -> Option<String> {
    let (_, abbrev) = describe.rsplit_once("-g")?;
    if abbrev.len() < 7 || !abbrev.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let rest = derived_sha(describe);
    Some(format!("{abbrev}{}", &rest[..40 - abbrev.len()]))
}

/// Registers Talos `talos` naming pkgs build `pkgs` whose Pkgfile pins `cni_version`: the
/// Makefile at the Talos tag; the Pkgfile at the tag `pkgs` if it is a bare tag, else at the
/// commit its `-g<abbrev>` names.
pub fn register_talos(gh: &GitHub, talos: &str, pkgs: &str, cni_version: &str) {
    gh.repo(TALOS_REPO)
        .file_at(talos, "Makefile", talos_makefile(pkgs));
    let pkgs_rev = pkgs_describe_commit(pkgs).unwrap_or_else(|| pkgs.to_string());
    gh.repo(PKGS_REPO)
        .file_at(&pkgs_rev, "Pkgfile", pkgs_pkgfile(cni_version));
}

/// Registers kube-ovn `version` (a tag) whose base image pins `cni_version`.
pub fn register_kube_ovn(gh: &GitHub, version: &str, cni_version: &str) {
    gh.repo(KUBE_OVN_REPO).file_at(
        version,
        "dist/images/Dockerfile.base",
        kube_ovn_dockerfile_base(cni_version),
    );
}

/// The release asset name of the CNI plugins archive.
pub fn cni_plugins_asset(arch: &str, version: &str) -> String {
    format!("cni-plugins-linux-{arch}-{version}.tgz")
}

/// Registers the containernetworking/plugins release `version` with, per `(arch, sha256)`,
/// a stand-in archive holding `plugins` and its `.sha256` sidecar: the given checksum, or
/// the stand-in's own when `None`.
pub fn register_cni_plugins(
    gh: &GitHub,
    version: &str,
    sums: &[(String, Option<String>)],
    plugins: &[String],
) {
    gh.repo(CNI_PLUGINS_REPO).release(version, |mut release| {
        for (arch, sum) in sums {
            let name = cni_plugins_asset(arch, version);
            let archive = cni_plugins_tgz(arch, version, plugins);
            release = match sum {
                Some(sum) => release
                    .asset(&name, archive)
                    .asset(&format!("{name}.sha256"), sha256_sidecar(sum, &name)),
                None => release.asset_with_sha256(&name, archive),
            };
        }
        release
    });
}

/// A small stand-in for a CNI plugins archive: one `./<plugin>` shell script per plugin at
/// the top level, like the real archive's layout.
pub fn cni_plugins_tgz(arch: &str, version: &str, plugins: &[String]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    for plugin in plugins {
        let script = format!("#!/bin/sh\necho {plugin} {version} linux/{arch}\n");
        let mut header = tar::Header::new_gnu();
        header.set_mode(0o755);
        header.set_size(script.len() as u64);
        header.set_mtime(0);
        tar.append_data(&mut header, format!("./{plugin}"), script.as_bytes())
            .expect("write to a Vec");
    }
    tar.into_inner()
        .and_then(|gz| gz.finish())
        .expect("finish the archive")
}

/// A Go file whose lines from `at` on are the old side of `patch`'s hunks, inside the function
/// git names after `@@`, so the patch applies exactly at line `at`.
pub fn multus_go(patch: &[u8], at: usize) -> Vec<u8> {
    let text = String::from_utf8_lossy(patch);
    let mut out = String::from("package multus\n");
    for n in 2..at - 1 {
        out.push_str(&format!("// filler line {n}\n"));
    }
    out.push_str(
        "func CmdDel(args *skel.CmdArgs, exec invoke.Exec, kubeClient *k8s.ClientInfo) error {\n",
    );
    let mut in_hunk = false;
    for line in text.lines() {
        if line.starts_with("@@") {
            in_hunk = true;
            continue;
        }
        if !in_hunk {
            continue;
        }
        if let Some(rest) = line.strip_prefix(' ').or_else(|| line.strip_prefix('-')) {
            out.push_str(rest);
            out.push('\n');
        } else if line.is_empty() {
            out.push('\n');
        }
    }
    out.push_str("// end of file\n");
    out.into_bytes()
}

/// cozystack's multus vendor.toml (DESIGN.md's example) at `version`: its
/// markers read the Talos installer profile and kube-ovn values two and one
/// directories up, as in cozystack's tree (`packages/system/multus`).
pub fn cozystack_vendor_toml(version: &str) -> String {
    COZYSTACK_VENDOR_TOML.replace("@VERSION@", version)
}

const COZYSTACK_VENDOR_TOML: &str = r#"[upstream]
github = "k8snetworkplumbingwg/multus-cni"
version = "@VERSION@"
track = ">=4.0.0, <5.0.0"

[[vendor]]
from = "deployments/multus-daemonset-thick.yml"
to = "templates/multus-daemonset-thick.yml"

[[patch]]
name = "customize-deployment"
file = "patches/customize-deployment.patch"
applies-to = "vendor"
strip = 4

[[patch]]
name = "fix-del-without-cache"
file = "images/multus-cni/patches/fix-del-without-cache.diff"
applies-to = "source"
strip = 1

[[rewrite]]
file = "templates/multus-daemonset-thick.yml"
lines-containing = "multus-cni"
replace = "snapshot-thick"
with = "{version}-thick"

[[rewrite]]
file = "images/multus-cni/Dockerfile"
dockerfile-arg = "VERSION"
with = "{version}"

[image]
repository = "ghcr.io/cozystack/cozystack/multus-cni"
tag = "v1.6.0"
context = "images/multus-cni"
platforms = ["linux/amd64", "linux/arm64"]
go = "1.26"

[[pin]]
file = "templates/multus-daemonset-thick.yml"
repository = "ghcr.io/cozystack/cozystack/multus-cni"

[[contract]]
name = "master-cni"
file = "templates/multus-daemonset-thick.yml"
select = { kind = "ConfigMap", name = "multus-daemon-config" }
field = ["data", "daemon-config.json"]
json = ["multusMasterCNI"]
equals = "05-cilium.conflist"

[[contract]]
name = "memory-limits"
file = "templates/multus-daemonset-thick.yml"
select = { kind = "DaemonSet" }
every-container = ["resources", "limits", "memory"]

[[marker]]
name = "talos"
file = "images/multus-cni/Dockerfile"
key = "talos-cni-plugins-checked-against"
expect = { file = "../../core/talos/images/talos/profiles/installer.yaml", yaml = "version" }
pin = "CNI_PLUGINS_VERSION"
resolver = "talos"

[[marker]]
name = "kube-ovn"
file = "images/multus-cni/Dockerfile"
key = "kube-ovn-cni-plugins-checked-against"
expect = { file = "../kubeovn/values.yaml", yaml = "global.images.kubeovn.tag", strip-digest = true }
pin = "CNI_PLUGINS_VERSION"
resolver = "kube-ovn"
"#;
