//! A Helm chart in an OCI registry (issue 18) answering what a chart registry should not: a
//! tag whose manifest is an image, a chart layer whose bytes are not its digest, a registry
//! that answers 401 without a challenge, a chart it does not have; and a vendor.toml pin that
//! is not a digest.
//!
//! The rows start from a package of their own: chart `demo` 1.0.0, packaged and pushed by
//! Helm into the real CNCF registry, adopted from it; a row pushes a broken 1.1.0.

use crate::registry_support::{self, Auth, Registry, content};

use super::support::chart_repo::push_files;
use super::support::server::{Response, Server};
use super::support::{GitHub, Revendor, TempPackage};
use super::{Case, Fixture, catalog_from};

use revendor::image::{Manifest, Reference};
use revendor::registry::Credentials;

/// Chart `demo` at `version`.
fn demo(version: &str) -> std::collections::BTreeMap<String, Vec<u8>> {
    [
        (
            "Chart.yaml",
            format!("apiVersion: v2\nname: demo\nversion: {version}\n"),
        ),
        ("values.yaml", "replicas: 1\n".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.into_bytes()))
    .collect()
}

/// The package adopted at demo 1.0.0 from a registry kept in `keep[0]`.
fn adopted_oci_chart() -> Fixture {
    let registry = Registry::start(Auth::Anonymous);
    push_files(
        "demo",
        &demo("1.0.0"),
        &format!("oci://{}/charts", registry.host),
    );
    let gh = GitHub::start();
    let pkg = TempPackage::new();
    pkg.write(
        "vendor.toml",
        format!(
            "[upstream]\nhelm = \"oci://{}/charts\"\nchart = \"demo\"\nversion = \"1.0.0\"\n\n\
             [[vendor]]\nfrom = \"./\"\nto = \"charts/demo/\"\n",
            registry.host
        ),
    );
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update"]).expect(0);
    rv.run(&["check"]).expect(0);
    Fixture {
        gh,
        pkg,
        rv,
        env: Vec::new(),
        keep: vec![Box::new(registry)],
    }
}

fn registry(fx: &Fixture) -> &Registry {
    fx.keep[0].downcast_ref().expect("the registry")
}

/// Pushes demo 1.1.0 with Helm, then overwrites its chart layer in the registry's storage with
/// other bytes, which the registry serves as they are.
fn tamper_layer(fx: &mut Fixture) {
    let registry = registry(fx);
    push_files(
        "demo",
        &demo("1.1.0"),
        &format!("oci://{}/charts", registry.host),
    );
    let reference = Reference::parse(&format!("{}/charts/demo:1.1.0", registry.host)).unwrap();
    let fetched = registry_support::client(Credentials::none())
        .get_manifest(&reference)
        .unwrap();
    let Manifest::Image(image) = fetched.manifest else {
        panic!("Helm pushed an index");
    };
    let hex = image.layers[0].digest.hex().to_owned();
    let data = registry
        .dir
        .path()
        .join("data/docker/registry/v2/blobs/sha256")
        .join(&hex[..2])
        .join(&hex)
        .join("data");
    std::fs::write(data, b"not the chart that was pushed").unwrap();
}

pub(super) const CASES: &[Case] = &[
    Case {
        name: "an OCI tag whose manifest is an image",
        setup: |fx| {
            registry(fx).push_image(
                "charts/demo",
                "1.1.0",
                &content::image("linux/amd64", "an image"),
            );
        },
        args: &["update"],
        code: 3,
        words: &[
            "charts/demo:1.1.0",
            "not a Helm chart",
            "application/vnd.oci.image.config.v1+json",
        ],
    },
    Case {
        name: "an OCI chart layer whose bytes are not its digest",
        setup: tamper_layer,
        args: &["update"],
        code: 3,
        words: &["charts/demo", "hashes to"],
    },
    Case {
        name: "a registry answering 401 without a challenge",
        setup: |fx| {
            let server = Server::start(|_| Response::new(401));
            let host = registry(fx).host.clone();
            fx.edit("vendor.toml", &host, &server.host());
            fx.keep.push(Box::new(server));
        },
        args: &["update"],
        code: 3,
        words: &["not authorized", "without a WWW-Authenticate challenge"],
    },
    Case {
        name: "an OCI chart the registry does not have",
        setup: |fx| fx.edit("vendor.toml", "chart = \"demo\"", "chart = \"nope\""),
        args: &["update"],
        code: 3,
        words: &["chart `nope`", "not found"],
    },
    Case {
        name: "an OCI version pin that is not a digest",
        setup: |fx| fx.edit("vendor.toml", "\"1.0.0\"", "\"1.0.0@sha256:1356\""),
        args: &["update"],
        code: 2,
        words: &["vendor.toml:4", "is not `VERSION@sha256:<64 hex digits>`"],
    },
    Case {
        name: "a version pin on a chart repository that is not OCI",
        setup: |fx| {
            let host = registry(fx).host.clone();
            fx.edit(
                "vendor.toml",
                &format!("oci://{host}/charts"),
                "https://charts.example.com",
            );
            fx.edit(
                "vendor.toml",
                "\"1.0.0\"",
                &format!("\"1.0.0@sha256:{}\"", "a".repeat(64)),
            );
        },
        args: &["update"],
        code: 2,
        words: &["vendor.toml:4", "only an OCI chart"],
    },
];

#[test]
fn helm_oci_registries() {
    if !registry_support::have_registry("bad_input::helm_oci") {
        return;
    }
    catalog_from(adopted_oci_chart, CASES);
}
