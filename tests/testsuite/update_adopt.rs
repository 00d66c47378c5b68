//! Issue 9, item 5: adopting a package (no lock) whose patch GNU patch applies only with fuzz
//! and whose hunk header's counts lie. The real binary against the GitHub stand-in; with
//! REVENDOR_REALWORLD, cozystack's kube-ovn patches on the real chart files at v1.14.5.

// Tests print skip notes and read their own switch (REVENDOR_REALWORLD).
use crate::support;

use support::{GitHub, Realworld, Revendor, TempPackage};

const REPO: &str = "example/app";
const FILE: &str = "deploy/app.yml";
const OUT: &str = "templates/app.yml";

const UPSTREAM: &str = "\
kind: Deployment
metadata:
  name: app
  namespace: default
spec:
  replicas: 1
  template:
    spec:
      containers:
        - name: app
          image: example.org/app:snapshot
          resources:
            limits:
              memory: 64Mi
";

/// Made against an older upstream (a StatefulSet with 3 replicas): hunk 1 lands on v1.0.0
/// only with fuzz 2. Hunk 2's header says 4 new lines; its body has 5.
const PATCH: &str = "\
--- a/templates/app.yml
+++ b/templates/app.yml
@@ -1,7 +1,7 @@
 kind: StatefulSet
 metadata:
   name: app
-  namespace: default
+  namespace: cozy-app
 spec:
   replicas: 3
   template:
@@ -12,3 +12,4 @@
           resources:
             limits:
               memory: 64Mi
+            requests:
+              memory: 32Mi
";

const VENDOR_TOML: &str = "\
[upstream]
github = \"example/app\"
version = \"v1.0.0\"

[[vendor]]
from = \"deploy/app.yml\"
to = \"templates/app.yml\"

[[patch]]
name = \"cozy\"
file = \"patches/cozy.patch\"
applies-to = \"vendor\"
";

/// What GNU `patch -F2` makes of PATCH with its header counted right: the committed file.
fn committed() -> String {
    UPSTREAM.replace("namespace: default", "namespace: cozy-app")
        + "            requests:\n              memory: 32Mi\n"
}

fn package(gh: &GitHub, rendered: &str) -> TempPackage {
    gh.repo(REPO)
        .file_at("v1.0.0", FILE, UPSTREAM)
        .release("v1.0.0", |r| r);
    let pkg = TempPackage::new();
    pkg.write("vendor.toml", VENDOR_TOML)
        .write("patches/cozy.patch", PATCH)
        .write(OUT, rendered);
    pkg
}

#[test]
fn a_fuzzy_patch_with_a_lying_header_is_adopted_and_refreshed_when_it_gives_the_committed_file() {
    let gh = GitHub::start();
    let pkg = package(&gh, &committed());
    let rv = Revendor::new(pkg.path(), &gh);
    let out = rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    assert!(
        out.stdout.contains(
            "patch cozy on templates/app.yml: hunk 1 (patches/cozy.patch:3) needed fuzz 2 (offset +0); refreshed to exact"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "patch cozy on templates/app.yml: hunk 2 (patches/cozy.patch:12) has a header that lies \
             (`@@ -12,3 +12,4 @@` for a body of 3 old and 5 new lines), recounted; refreshed to exact"
        ),
        "{}",
        out.stdout
    );
    assert_eq!(
        pkg.read_string(OUT),
        committed(),
        "the committed file is unchanged"
    );
    let lock = pkg.read_string("upstream/lock.toml");
    assert!(lock.contains("version = \"v1.0.0\""), "{lock}");
    let refreshed = pkg.read_string("patches/cozy.patch");
    assert!(
        refreshed.contains("@@ -1,7 +1,7 @@\n kind: Deployment\n")
            && refreshed.contains("@@ -12,3 +12,5 @@\n"),
        "{refreshed}"
    );
    // Exact now: GNU patch applies it with no fuzz and no offset.
    let scratch = tempfile::tempdir().unwrap();
    std::fs::write(scratch.path().join("app.yml"), UPSTREAM).unwrap();
    std::fs::write(scratch.path().join("p"), &refreshed).unwrap();
    let gnu = std::process::Command::new("patch")
        .args(["-F0", "app.yml", "p"])
        .current_dir(scratch.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&gnu.stdout);
    assert!(gnu.status.success() && !said.contains("Hunk"), "{said}");
    assert_eq!(
        std::fs::read_to_string(scratch.path().join("app.yml")).unwrap(),
        committed()
    );
    rv.run(&["check"]).expect(0);
    let out = rv.run(&["render"]).expect(0);
    assert!(out.stdout.contains("no file changed"), "{}", out.stdout);
}

#[test]
fn a_fuzzy_result_that_is_not_the_committed_file_is_refused_naming_patch_and_hunk() {
    let gh = GitHub::start();
    let pkg = package(
        &gh,
        &committed().replace("namespace: cozy-app", "namespace: other"),
    );
    let before = pkg.snapshot();
    let out = Revendor::new(pkg.path(), &gh)
        .run(&["update", "--to", "v1.0.0"])
        .expect(1);
    assert!(
        out.stderr.contains(
            "patch `cozy` hunk 1 for `templates/app.yml` (patches/cozy.patch:3) needed fuzz 2"
        ) && out
            .stderr
            .contains("then `templates/app.yml` differs from the committed file at line 4"),
        "{}",
        out.stderr
    );
    assert_eq!(pkg.snapshot(), before, "nothing is written");
}

#[test]
fn with_a_lock_fuzz_and_lying_headers_stay_errors() {
    let gh = GitHub::start();
    let pkg = package(&gh, &committed());
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    // The original patch back, under a lock: strict again.
    pkg.write("patches/cozy.patch", PATCH);
    let before = pkg.snapshot();
    let out = rv.run(&["update", "--to", "v1.0.0"]).expect(2);
    assert!(
        out.stderr.contains("patches/cozy.patch:") && out.stderr.contains("malformed patch"),
        "{}",
        out.stderr
    );
    let told_the_truth = PATCH.replace("+12,4", "+12,5");
    pkg.write("patches/cozy.patch", &told_the_truth);
    let out = rv.run(&["update", "--to", "v1.0.0"]).expect(1);
    assert!(
        out.stderr
            .contains("hunk #1 `@@ -1,7 +1,7 @@` does not apply"),
        "{}",
        out.stderr
    );
    let mut expected = before;
    expected.insert("patches/cozy.patch".into(), told_the_truth.into_bytes());
    assert_eq!(pkg.snapshot(), expected, "nothing is written");
}

const KUBE_OVN: &str = "kubeovn/kube-ovn";
const CHART_FILES: [&str; 3] = [
    "charts/kube-ovn/templates/ovncni-ds.yaml",
    "charts/kube-ovn/templates/controller-deploy.yaml",
    "charts/kube-ovn/values.yaml",
];

/// cozystack's kube-ovn package before its v1.14.11 bump, one [[vendor]] per patched chart
/// file (until directories can be vendored): the two patches GNU patch applied, the values.yaml
/// hunk of cozyconfig.diff only with fuzz 2. Adopted, then updated, it gives the chart
/// cozystack committed at v1.14.11.
#[test]
fn cozystack_kube_ovn_is_adopted_at_v1_14_5_with_its_fuzzy_patch_refreshed() {
    let Some(rw) = Realworld::from_env() else {
        eprintln!("REVENDOR_REALWORLD is not set; skipping the kube-ovn adoption");
        return;
    };
    let gh = GitHub::start();
    for tag in ["v1.14.5", "v1.14.11"] {
        let repo = gh.repo(KUBE_OVN);
        for file in CHART_FILES {
            repo.file_at(tag, file, rw.read(&format!("kube-ovn/{tag}/{file}")));
        }
        repo.release(tag, |r| r);
    }
    let pkg = TempPackage::new();
    let mut toml = format!(
        "[upstream]\ngithub = \"{KUBE_OVN}\"\nversion = \"v1.14.5\"\ntrack = \">=1.14.0, <1.15.0\"\n"
    );
    for file in CHART_FILES {
        toml.push_str(&format!(
            "\n[[vendor]]\nfrom = \"{file}\"\nto = \"{file}\"\n"
        ));
        pkg.write(file, rw.read(&format!("cozystack-kubeovn-before/{file}")));
    }
    for name in ["cozyconfig", "mtu"] {
        let file = format!("patches/{name}.diff");
        toml.push_str(&format!(
            "\n[[patch]]\nname = \"{name}\"\nfile = \"{file}\"\napplies-to = \"vendor\"\nstrip = 4\n"
        ));
        pkg.write(&file, rw.read(&format!("cozystack-kubeovn-before/{file}")));
    }
    pkg.write("vendor.toml", toml);
    let rv = Revendor::new(pkg.path(), &gh);
    let out = rv.run(&["update", "--to", "v1.14.5"]).expect(0);
    assert!(
        out.stdout.contains(
            "patch cozyconfig on charts/kube-ovn/values.yaml: hunk 1 (patches/cozyconfig.diff:"
        ) && out
            .stdout
            .contains("needed fuzz 2 (offset +10); refreshed to exact"),
        "{}",
        out.stdout
    );
    for file in CHART_FILES {
        assert!(
            pkg.read(file) == rw.read(&format!("cozystack-kubeovn-before/{file}")),
            "{file}: the committed chart is unchanged"
        );
    }
    assert!(
        pkg.read_string("upstream/lock.toml")
            .contains("version = \"v1.14.5\"")
    );
    rv.run(&["check"]).expect(0);
    let out = rv.run(&["render"]).expect(0);
    assert!(out.stdout.contains("no file changed"), "{}", out.stdout);

    let out = rv.run(&["update"]).expect(0);
    assert!(
        out.stdout.contains("upstream: v1.14.5 -> v1.14.11"),
        "{}",
        out.stdout
    );
    for file in CHART_FILES {
        assert!(
            pkg.read(file) == rw.read(&format!("cozystack-kubeovn-after/{file}")),
            "{file} is cozystack's at v1.14.11"
        );
    }
}
