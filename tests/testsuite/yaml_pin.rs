//! `[[pin]] yaml = …` through `revendor image pin` against the real CNCF registry (issue 12):
//! the three shapes cozystack's values.yaml files use, kube-ovn's one key holding
//! `tag@sha256:…`, kamaji's `repository` and `tag`, cilium's `repository`, `tag` and `digest`,
//! written into one values.yaml where only the pinned lines change; then `check` covers them.

use crate::registry_support::{self, Auth, Registry, have_registry};
use crate::support;

use registry_support::content::multi_arch;
use revendor::image::MediaType;
use support::{GitHub, Revendor, TempPackage};

const BOTH: [&str; 2] = ["linux/amd64", "linux/arm64"];

const VALUES: &str = "\
# cozystack values: comments, quotes and order stay
global:
  registry:
    address: ghcr.io/cozystack/cozystack
  images:
    kubeovn:
      repository: kubeovn
      tag: v1.15.10@sha256:af10da442a0c6dc7df47a0ef752e2eb5c247bb0b43069fdfcb2aa51511185ea2
kamaji:
  image:
    pullPolicy: IfNotPresent
    repository: clastix/kamaji   # upstream's
    tag: \"edge-25.7.1\"
cilium:
  image:
    repository: 'quay.io/cilium/cilium'
    tag: v1.17.4
    digest: \"\"
    useDigest: true
";

fn package(repository: &str) -> TempPackage {
    let pkg = TempPackage::new();
    pkg.write(
        "vendor.toml",
        format!(
            r#"[upstream]
git = "file:///nonexistent/upstream"
version = "v1.0.0"

[image]
repository = "{repository}"
tag = "v1.0.0"
context = "images/app"
platforms = ["linux/amd64", "linux/arm64"]

[[pin]]
file = "values.yaml"
yaml = "global.images.kubeovn.tag"

[[pin]]
file = "values.yaml"
yaml = {{ repository = "kamaji.image.repository", tag = "kamaji.image.tag" }}

[[pin]]
file = "values.yaml"
yaml = {{ repository = "cilium.image.repository", tag = "cilium.image.tag", digest = "cilium.image.digest" }}

[checks]
builder-go = "allow"
"#
        ),
    )
    .write(
        "upstream/lock.toml",
        "[upstream]\nsource = \"git:file:///nonexistent/upstream\"\nversion = \"v1.0.0\"\n",
    )
    .write("images/app/Dockerfile", "FROM scratch\nARG VERSION=v1.0.0\n")
    .write("values.yaml", VALUES);
    pkg
}

#[test]
fn values_yaml_pins_of_all_three_shapes_change_only_the_pinned_lines() {
    if !have_registry("values_yaml_pins_of_all_three_shapes") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    let image = multi_arch(&BOTH, "values", MediaType::OciIndex);
    registry.push_multi_arch("team/app", "v1.0.0", &image);
    let repository = format!("{}/team/app", registry.host);
    let pkg = package(&repository);
    let gh = GitHub::start();
    let rv = Revendor::new(pkg.path(), &gh)
        .env("DOCKER_CONFIG", &pkg.join(".docker").display().to_string());

    let run = rv.run(&["image", "pin"]).expect(0);
    let digest = image.index.digest.to_string();
    for site in [8, 12, 13, 16, 17, 18] {
        assert!(
            run.stdout.contains(&format!("  at values.yaml:{site}\n")),
            "{}",
            run.stdout
        );
    }
    let values = pkg.read_string("values.yaml");
    let expected = VALUES
        .replace(
            "tag: v1.15.10@sha256:af10da442a0c6dc7df47a0ef752e2eb5c247bb0b43069fdfcb2aa51511185ea2",
            &format!("tag: v1.0.0@{digest}"),
        )
        .replace(
            "repository: clastix/kamaji   # upstream's\n    tag: \"edge-25.7.1\"",
            &format!("repository: {repository}   # upstream's\n    tag: \"v1.0.0@{digest}\""),
        )
        .replace(
            "repository: 'quay.io/cilium/cilium'\n    tag: v1.17.4\n    digest: \"\"",
            &format!("repository: '{repository}'\n    tag: v1.0.0\n    digest: \"{digest}\""),
        );
    assert_eq!(values, expected);
    let changed: Vec<usize> = VALUES
        .lines()
        .zip(values.lines())
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(changed, [8, 12, 13, 16, 17, 18]);
    assert_eq!(VALUES.lines().count(), values.lines().count());

    // Pinning what is pinned changes no byte; the check finds every key right.
    let before = pkg.snapshot();
    let run = rv.run(&["image", "pin"]).expect(0);
    assert!(run.stdout.ends_with("no file changed\n"), "{}", run.stdout);
    assert_eq!(pkg.snapshot(), before);
    rv.run(&["--offline", "check"]).expect(0);

    // A stale digest key is image-pin's, at its line.
    pkg.write(
        "values.yaml",
        values.replace(&format!("digest: \"{digest}\""), "digest: \"\""),
    );
    let run = rv.run(&["--offline", "check"]).expect(1);
    assert!(
        run.stdout.contains(&format!(
            "values.yaml:18: error: `cilium.image.digest` is ``, not `{digest}`"
        )),
        "{}",
        run.stdout
    );
    // A key the file does not have is named with the line of the part that exists.
    pkg.write("values.yaml", values.replace("    digest:", "    digests:"));
    let run = rv.run(&["image", "pin"]).expect(2);
    assert!(
        run.stderr
            .contains("values.yaml:15: no key `cilium.image.digest`"),
        "{}",
        run.stderr
    );
}
