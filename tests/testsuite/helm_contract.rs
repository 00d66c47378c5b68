//! Contracts on what Helm renders (issue 19), on the repository's own multus
//! package, with the real Helm engine (`support::helm`).
//!
//! The package's kube-multus container takes its resources from values, so
//! `memory-limits` holds on `helm template` with the defaults and with an
//! override, and `memory-required` holds when Helm refuses the overrides
//! that null either memory key.

use crate::support;

use std::path::Path;

use support::helm::{binary, root_package};
use support::realworld::multus_go;
use support::{GitHub, Realworld, Revendor, Run, TempPackage};

const TEMPLATE: &str = "templates/multus-daemonset-thick.yml";

/// A GitHub stand-in nothing is asked of: every check here is offline.
fn offline(pkg: &TempPackage) -> (GitHub, Revendor) {
    let gh = GitHub::start();
    let rv = Revendor::new(pkg.path(), &gh).env("REVENDOR_HELM", binary().to_str().unwrap());
    (gh, rv)
}

fn json(run: &Run) -> serde_json::Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.all()))
}

/// (id, file, message) of every error finding.
fn errors(run: &Run) -> Vec<(String, String, String)> {
    json(run)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap().to_owned();
            (s("id"), s("file"), s("message"))
        })
        .collect()
}

fn cache_entries(cache: &Path) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(cache.join("helm")) else {
        return Vec::new();
    };
    let mut names: Vec<String> = dir
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn issue_19_the_repository_package_checks_clean_through_helm_and_renders_once() {
    let pkg = root_package();
    let (_gh, rv) = offline(&pkg);
    let run = rv
        .run(&["check", "--offline", "--format", "json"])
        .expect(0);
    assert_eq!(errors(&run), [], "{}", run.stdout);
    // The defaults, the override, and the two overrides Helm must refuse.
    let first = cache_entries(rv.cache());
    assert_eq!(first.len(), 4, "{first:?}");
    let stamps = |names: &[String]| -> Vec<std::time::SystemTime> {
        names
            .iter()
            .map(|n| {
                std::fs::metadata(rv.cache().join("helm").join(n))
                    .unwrap()
                    .modified()
                    .unwrap()
            })
            .collect()
    };
    let before = stamps(&first);
    rv.run(&["check", "--offline", "--format", "json"])
        .expect(0);
    assert_eq!(
        cache_entries(rv.cache()),
        first,
        "nothing changed: no new render"
    );
    assert_eq!(stamps(&first), before, "every render came from the cache");
}

#[test]
fn issue_19_without_the_templates_fail_render_fails_names_the_values_file() {
    let pkg = root_package();
    let template = pkg.read_string(TEMPLATE);
    let kept: String = template
        .lines()
        .filter(|l| !l.contains("fail \"container kube-multus: resources.limits.memory"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(
        kept, template,
        "the template refuses a missing memory limit"
    );
    pkg.write(TEMPLATE, kept);
    let (_gh, rv) = offline(&pkg);
    rv.run(&["render", "--adopt-edits"]).expect(0);
    let run = rv
        .run(&["check", "--offline", "--format", "json"])
        .expect(1);
    let got = errors(&run);
    assert_eq!(got.len(), 1, "{got:#?}");
    let (id, file, message) = &got[0];
    assert_eq!(id, "contract:memory-required");
    assert_eq!(file, "tests/values/null-memory-limit.yaml");
    assert!(
        message.contains("Helm renders the chart with `tests/values/null-memory-limit.yaml` (6 documents: CustomResourceDefinition/")
            && message.contains("contract `memory-required` says it must refuse these values"),
        "{message}"
    );
}

#[test]
fn issue_19_a_null_default_memory_limit_breaks_memory_limits_naming_the_container() {
    let pkg = root_package();
    let values = pkg.read_string("values.yaml");
    assert!(values.contains("  limits:\n    memory: 4Gi\n"), "{values}");
    pkg.write(
        "values.yaml",
        values.replace(
            "  limits:\n    memory: 4Gi\n",
            "  limits:\n    memory: null\n",
        ),
    );
    let (_gh, rv) = offline(&pkg);
    let run = rv
        .run(&["check", "--offline", "--format", "json"])
        .expect(1);
    let got = errors(&run);
    let limits: Vec<_> = got
        .iter()
        .filter(|(id, _, _)| id == "contract:memory-limits")
        .collect();
    assert!(!limits.is_empty(), "{got:#?}");
    for (_, file, message) in &limits {
        assert_eq!(file, "values.yaml");
        assert!(
            message.contains("with the chart's values.yaml")
                && message.contains("container kube-multus")
                && message.contains("resources.limits.memory"),
            "{message}"
        );
    }
}

#[test]
fn issue_19_a_helm_contract_without_helm_is_a_finding_with_a_fix_in_every_format() {
    let pkg = root_package();
    let gh = GitHub::start();
    let rv = Revendor::new(pkg.path(), &gh)
        .env("REVENDOR_HELM", "")
        .env("PATH", "/nonexistent");
    let run = rv
        .run(&["check", "--offline", "--format", "json"])
        .expect(1);
    let findings = json(&run)["findings"].as_array().unwrap().clone();
    let helm: Vec<_> = findings
        .iter()
        .filter(|f| {
            f["id"].as_str().is_some_and(|id| {
                ["contract:memory-limits", "contract:memory-required"].contains(&id)
            })
        })
        .collect();
    assert_eq!(helm.len(), 2, "{findings:#?}");
    for f in helm {
        assert_eq!(f["severity"], "error");
        assert_eq!(f["file"], "vendor.toml");
        let message = f["message"].as_str().unwrap();
        assert!(
            message.contains("no `helm` on PATH (REVENDOR_HELM is unset)"),
            "{message}"
        );
        let fix = f["fix"].as_str().unwrap();
        assert!(
            fix.contains("install Helm") && fix.contains("REVENDOR_HELM"),
            "{fix}"
        );
    }

    let human = rv.run(&["check", "--offline"]).expect(1);
    assert!(
        human.stdout.contains("contract:memory-limits")
            && human.stdout.contains("(fix: install Helm 3.x or 4.x"),
        "{}",
        human.all()
    );
    let github = rv
        .run(&["check", "--offline", "--format", "github"])
        .expect(1);
    assert!(
        github.stdout.lines().any(|l| l.starts_with("::error file=")
            && l.contains("vendor.toml,line=")
            && l.contains("title=contract%3Amemory-required")
            && l.contains("%0Afix: install Helm")),
        "{}",
        github.all()
    );

    let gone = Revendor::new(pkg.path(), &gh).env("REVENDOR_HELM", "/nonexistent/helm");
    let run = gone.run(&["check", "--offline"]).expect(1);
    assert!(
        run.stdout
            .contains("REVENDOR_HELM is `/nonexistent/helm`, which is not a program that can run"),
        "{}",
        run.all()
    );
}

/// An update from multus v4.2.4 to the real v4.3.0 keeps the values-driven
/// resources (customize-deployment carries them) and every contract holds.
#[test]
fn issue_19_an_update_to_real_v4_3_0_keeps_the_values_driven_resources() {
    let Some(rw) = Realworld::from_env() else {
        eprintln!("REVENDOR_REALWORLD is not set; skipping the v4.3.0 update test");
        return;
    };
    let gh = GitHub::start();
    rw.register_multus(&gh);
    rw.register_multus_source(&gh);
    let root = root_package();
    let go_patch = root.read("images/multus-cni/patches/fix-del-without-cache.diff");
    for tag in ["v4.2.4", "v4.3.0"] {
        gh.repo("k8snetworkplumbingwg/multus-cni").file_at(
            tag,
            "pkg/multus/multus.go",
            multus_go(&go_patch, 1060),
        );
    }
    let pkg = TempPackage::new();
    for rel in [
        "Chart.yaml",
        "values.yaml",
        ".helmignore",
        "patches/customize-deployment.patch",
        "images/multus-cni/patches/fix-del-without-cache.diff",
        "images/multus-cni/Dockerfile",
        "tests/values/incident.yaml",
        "tests/values/null-memory-limit.yaml",
        "tests/values/null-memory-request.yaml",
    ] {
        pkg.write(rel, root.read(rel));
    }
    let toml = root.read_string("vendor.toml");
    assert!(toml.contains("version = \"v4.3.0\""));
    pkg.write(
        "vendor.toml",
        toml.replace("version = \"v4.3.0\"", "version = \"v4.2.4\""),
    );
    let rv = Revendor::new(pkg.path(), &gh).env("REVENDOR_HELM", binary().to_str().unwrap());
    rv.run(&["update", "--to", "v4.2.4"]).expect(0);
    rv.run(&["update", "--to", "v4.3.0"]).expect(0);
    let template = pkg.read_string(TEMPLATE);
    assert!(
        template.contains("{{- toYaml .Values.resources | nindent 12 }}")
            && template.contains("fail \"container kube-multus: resources.requests.memory"),
        "{template}"
    );
    assert!(
        pkg.read_string("upstream/lock.toml").contains("v4.3.0"),
        "the package moved to v4.3.0"
    );
    let run = rv.run(&["check", "--offline", "--format", "json"]);
    let contracts: Vec<_> = errors(&run)
        .into_iter()
        .filter(|(id, _, _)| id.starts_with("contract:"))
        .collect();
    assert_eq!(contracts, [], "{}", run.all());
}

/// issue 19: `check --all` renders each package's values sets once, however
/// many contracts read them: a helm that logs each invocation before it
/// renders is asked four times (the defaults, the override, the two null
/// files), with an empty cache, for the package's three helm contracts.
#[test]
fn issue_19_check_all_renders_each_values_set_of_a_package_once() {
    use std::os::unix::fs::PermissionsExt;
    let pkg = root_package();
    let tools = TempPackage::new();
    let log = tools.path().join("calls.log");
    let wrapper = tools.path().join("helm");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            binary().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let gh = GitHub::start();
    let rv = Revendor::new(pkg.path(), &gh).env("REVENDOR_HELM", wrapper.to_str().unwrap());
    let run = rv
        .run(&["--format", "json", "check", "--all", "--offline"])
        .expect(0);
    let calls = std::fs::read_to_string(&log).unwrap_or_default();
    let templates: Vec<&str> = calls
        .lines()
        .filter(|l| l.starts_with("template"))
        .collect();
    assert_eq!(templates.len(), 4, "{calls}\n{}", run.all());
    let mut distinct = templates.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), 4, "each values set once: {calls}");
}
