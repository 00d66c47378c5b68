//! `revendor image pin-base [NAME]` on a package of several `[[image]]`s, through the real
//! binary against the real registry standing in for Docker Hub as a mirror (issue 12): every
//! image's Dockerfile pinned once (two images sharing one included), one image by name, `--go`
//! moving only the image named, an unknown name refused with the known ones, and the
//! builder-go advice naming the image.

use crate::registry_support::{self, Auth, Registry, have_registry};
use crate::support;

use std::path::Path;

use registry_support::content::{MultiArch, multi_arch};
use revendor::config::lock::Lock;
use revendor::image::MediaType;
use support::{GitHub, Revendor, TempPackage};

const LOCK: &str = "upstream/lock.toml";
const CHART: &str = "images/chart/Dockerfile";
const TOOL: &str = "images/tool/Dockerfile";
const CHART_DOCKERFILE: &str = "FROM golang:1.26 AS builder\nRUN go version\n\nFROM debian:stable-slim\nCOPY --from=builder /go /go\n";
const TOOL_DOCKERFILE: &str = "# the tool\nFROM  golang:1.26 AS build\nFROM debian:stable-slim\n";

/// Three images: `chart`, and `tool` and `tool-debug` built from one Dockerfile.
fn package() -> TempPackage {
    let pkg = TempPackage::new();
    let mut vendor_toml =
        "[upstream]\ngit = \"file:///nonexistent/upstream\"\nversion = \"v1.0.0\"\n".to_owned();
    for (name, context) in [
        ("chart", "images/chart"),
        ("tool", "images/tool"),
        ("tool-debug", "images/tool"),
    ] {
        vendor_toml.push_str(&format!(
            "\n[[image]]\nname = \"{name}\"\nrepository = \"ghcr.io/o/{name}\"\ntag = \"v1\"\ncontext = \"{context}\"\nplatforms = [\"linux/amd64\", \"linux/arm64\"]\ngo = \"1.26\"   # {name}'s builder\n"
        ));
    }
    pkg.write("vendor.toml", vendor_toml);
    let mut lock =
        "[upstream]\nsource = \"git:file:///nonexistent/upstream\"\nversion = \"v1.0.0\"\n"
            .to_owned();
    for name in ["chart", "tool", "tool-debug"] {
        lock.push_str(&format!(
            "\n[[image]]\nname = \"{name}\"\nreference = \"ghcr.io/o/{name}:v1@sha256:{}\"\n",
            "0".repeat(64)
        ));
    }
    pkg.write(LOCK, lock);
    pkg.write(CHART, CHART_DOCKERFILE);
    pkg.write(TOOL, TOOL_DOCKERFILE);
    pkg
}

fn lock(pkg: &TempPackage) -> Lock {
    Lock::parse(Path::new(LOCK), &pkg.read_string(LOCK)).unwrap()
}

fn bases(pkg: &TempPackage, image: &str) -> Vec<(String, String)> {
    lock(pkg)
        .image(Some(image))
        .cloned()
        .unwrap()
        .bases
        .into_iter()
        .collect()
}

fn index(image: &MultiArch) -> String {
    image.index.digest.to_string()
}

#[test]
fn pin_base_pins_each_images_dockerfile_once_or_the_one_named() {
    if !have_registry("pin_base_pins_each_images_dockerfile") {
        return;
    }
    let registry = Registry::start(Auth::Anonymous);
    let both = ["linux/amd64", "linux/arm64"];
    let golang_126 = multi_arch(&both, "golang 1.26", MediaType::OciIndex);
    let golang_127 = multi_arch(&both, "golang 1.27", MediaType::OciIndex);
    let debian = multi_arch(&both, "debian", MediaType::DockerManifestList);
    registry.push_multi_arch("library/golang", "1.26", &golang_126);
    registry.push_multi_arch("library/golang", "1.27", &golang_127);
    registry.push_multi_arch("library/debian", "stable-slim", &debian);
    let pkg = package();
    let gh = GitHub::start();
    let rv = Revendor::new(pkg.path(), &gh).env(
        "REVENDOR_REGISTRY_MIRRORS",
        &format!("docker.io={}", registry.host),
    );
    let vendor_toml = pkg.read_string("vendor.toml");
    let (g126, g127, deb) = (index(&golang_126), index(&golang_127), index(&debian));

    // An unknown name: a usage error naming the known images, nothing written.
    let before = pkg.snapshot();
    let run = rv.run(&["image", "pin-base", "nope"]).expect(2);
    assert!(
        run.stderr.contains("no [[image]] named `nope`")
            && run.stderr.contains("known images: chart, tool, tool-debug"),
        "{}",
        run.stderr
    );
    assert_eq!(pkg.snapshot(), before);

    // No name: both Dockerfiles, the shared one once, every image's lock entry.
    let run = rv.run(&["--format", "json", "image", "pin-base"]).expect(0);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["schema"], 1);
    let reports = doc["dockerfiles"]
        .as_array()
        .expect("one report per Dockerfile");
    assert_eq!(reports.len(), 2, "{doc:#}");
    assert_eq!(reports[0]["dockerfile"], CHART);
    assert_eq!(reports[0]["images"], serde_json::json!(["chart"]));
    assert_eq!(reports[1]["dockerfile"], TOOL);
    assert_eq!(
        reports[1]["images"],
        serde_json::json!(["tool", "tool-debug"])
    );
    assert_eq!(
        reports[1]["changed"],
        serde_json::json!([TOOL, LOCK]),
        "each report lists its own Dockerfile and the shared lock"
    );
    assert_eq!(
        pkg.read_string(CHART),
        CHART_DOCKERFILE
            .replace("golang:1.26", &format!("golang:1.26@{g126}"))
            .replace("debian:stable-slim", &format!("debian:stable-slim@{deb}"))
    );
    assert_eq!(
        pkg.read_string(TOOL),
        TOOL_DOCKERFILE
            .replace("golang:1.26", &format!("golang:1.26@{g126}"))
            .replace("debian:stable-slim", &format!("debian:stable-slim@{deb}"))
    );
    let pinned = vec![
        ("debian:stable-slim".to_owned(), deb.clone()),
        ("golang:1.26".to_owned(), g126.clone()),
    ];
    for image in ["chart", "tool", "tool-debug"] {
        assert_eq!(bases(&pkg, image), pinned, "{image}");
    }
    assert_eq!(pkg.read_string("vendor.toml"), vendor_toml);

    // One image by name, --go: its Dockerfile and its `go` move, nothing of the others.
    let tool_before = pkg.read_string(TOOL);
    let run = rv
        .run(&["image", "pin-base", "chart", "--go", "1.27"])
        .expect(0);
    assert!(
        run.stdout.contains(&format!(
            "{CHART}:1: golang:1.26@{g126} -> golang:1.27@{g127}\n"
        )) && !run.stdout.contains(TOOL),
        "{}",
        run.stdout
    );
    assert_eq!(
        pkg.read_string(CHART),
        CHART_DOCKERFILE
            .replace("golang:1.26", &format!("golang:1.27@{g127}"))
            .replace("debian:stable-slim", &format!("debian:stable-slim@{deb}"))
    );
    assert_eq!(pkg.read_string(TOOL), tool_before);
    assert_eq!(
        pkg.read_string("vendor.toml"),
        vendor_toml.replace(
            "go = \"1.26\"   # chart's builder",
            "go = \"1.27\"   # chart's builder"
        )
    );
    assert_eq!(
        bases(&pkg, "chart"),
        vec![
            ("debian:stable-slim".to_owned(), deb.clone()),
            ("golang:1.27".to_owned(), g127.clone()),
        ]
    );
    assert_eq!(bases(&pkg, "tool"), pinned);

    // A builder behind its image's `go`: the advice names that image.
    let text = pkg.read_string("vendor.toml");
    pkg.write(
        "vendor.toml",
        text.replace(
            "go = \"1.26\"   # tool's builder",
            "go = \"1.27\"   # tool's builder",
        ),
    );
    let before = pkg.snapshot();
    let run = rv.run(&["image", "pin-base", "tool"]).expect(2);
    assert!(
        run.stderr.contains("expected Go 1.27")
            && run
                .stderr
                .contains("`revendor image pin-base tool --go 1.27`"),
        "{}",
        run.stderr
    );
    assert_eq!(pkg.snapshot(), before);
    // `check` gives the same next command.
    let run = rv.run(&["--offline", "check"]);
    assert!(
        run.all().contains(
            "run `revendor image pin-base tool --go 1.27`: it moves the builder to Go 1.27"
        ),
        "{}",
        run.all()
    );
    assert_eq!(pkg.snapshot(), before);
    // Named or not, moving a shared Dockerfile moves the `go` of every image built from it.
    rv.run(&["image", "pin-base", "tool", "--go", "1.27"])
        .expect(0);
    let text = pkg.read_string("vendor.toml");
    assert_eq!(text.matches("go = \"1.27\"").count(), 3, "{text}");
    assert_eq!(
        pkg.read_string(TOOL),
        TOOL_DOCKERFILE
            .replace("golang:1.26", &format!("golang:1.27@{g127}"))
            .replace("debian:stable-slim", &format!("debian:stable-slim@{deb}"))
    );
}
