//! A Helm chart repository (issue 18) answering what a repository should not: an index that
//! is not YAML, lacks the chart or lists a version twice; an archive whose bytes are not the
//! indexed digest, that climbs out of the chart's directory, holds links, several top
//! directories or no Chart.yaml, names another chart or version, or holds a file past Helm's
//! bound; and a vendor.toml or environment naming a repository that cannot be used.
//!
//! The rows start from a package of their own: chart `demo` 1.0.0 (packaged by Helm) adopted
//! from a repository on the test server, whose index a row rewrites to list a broken 1.1.0.

use super::support::chart_repo::ChartRepo;
use super::support::{GitHub, Revendor, TempPackage};
use super::{Case, Fixture, catalog_from};

const FILE: tar::EntryType = tar::EntryType::Regular;
const META: &[u8] = b"apiVersion: v2\nname: demo\nversion: 1.1.0\n";

fn vendor_toml(repo: &str) -> String {
    format!(
        "[upstream]\nhelm = \"{repo}\"\nchart = \"demo\"\nversion = \"1.0.0\"\n\n\
         [[vendor]]\nfrom = \"./\"\nto = \"charts/demo/\"\n"
    )
}

/// The package adopted at demo 1.0.0; the repository is kept in `keep[0]`.
fn adopted_chart() -> Fixture {
    let gh = GitHub::start();
    let repo = ChartRepo::start();
    let files = [
        ("Chart.yaml", "apiVersion: v2\nname: demo\nversion: 1.0.0\n"),
        ("values.yaml", "replicas: 1\n"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.as_bytes().to_vec()))
    .collect();
    repo.publish_files("demo", &files);
    let pkg = TempPackage::new();
    pkg.write("vendor.toml", vendor_toml(&repo.url()));
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update"]).expect(0);
    rv.run(&["check"]).expect(0);
    Fixture {
        gh,
        pkg,
        rv,
        env: Vec::new(),
        keep: vec![Box::new(repo)],
    }
}

fn repo(fx: &Fixture) -> &ChartRepo {
    fx.keep[0].downcast_ref().expect("the chart repository")
}

/// The index as Helm wrote it for 1.0.0, with `entry` (YAML lines of one more version, each
/// indented by four) listed first under `demo`.
fn index_with(fx: &Fixture, entry: &str) -> String {
    let path = repo(fx).dir().join("index.yaml");
    let index = std::fs::read_to_string(&path).unwrap();
    index.replacen(
        "  demo:\n",
        &format!("  demo:\n  - {}\n", entry.trim_start()),
        1,
    )
}

/// Publishes `archive` as demo 1.1.0, indexed with its own digest.
fn publish_archive(fx: &Fixture, archive: &[u8]) {
    let dir = repo(fx).dir();
    std::fs::write(dir.join("demo-1.1.0.tgz"), archive).unwrap();
    let digest = super::support::github::sha256_hex(archive);
    let index = index_with(
        fx,
        &format!(
            "name: demo\n    version: 1.1.0\n    digest: {digest}\n    urls:\n    - demo-1.1.0.tgz"
        ),
    );
    std::fs::write(dir.join("index.yaml"), index).unwrap();
}

/// A gzipped tar of `(name, type, contents)`, names written raw so hostile ones can be built.
fn tgz(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, kind, data) in entries {
        let mut h = tar::Header::new_gnu();
        h.set_mode(0o644);
        h.set_entry_type(*kind);
        h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        let body: &[u8] = if kind.is_symlink() {
            h.set_link_name(std::str::from_utf8(data).unwrap()).unwrap();
            &[]
        } else {
            data
        };
        h.set_size(body.len() as u64);
        h.set_cksum();
        builder.append(&h, body).unwrap();
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &builder.into_inner().unwrap()).unwrap();
    gz.finish().unwrap()
}

fn write_index(fx: &Fixture, text: &str) {
    std::fs::write(repo(fx).dir().join("index.yaml"), text).unwrap();
}

pub(super) const CASES: &[Case] = &[
    Case {
        name: "an index that is not YAML",
        setup: |fx| {
            write_index(
                fx,
                "apiVersion: v1\nentries:\n  demo:\n  - version: \"1.1.0\n",
            )
        },
        args: &["update"],
        code: 3,
        words: &["index.yaml", "not YAML"],
    },
    Case {
        name: "an index that lacks the chart",
        setup: |fx| {
            write_index(
                fx,
                "apiVersion: v1\nentries:\n  other:\n  - version: 1.0.0\n",
            )
        },
        args: &["update"],
        code: 3,
        words: &["chart `demo` not found", "index.yaml"],
    },
    Case {
        name: "an index that lists a version twice",
        setup: |fx| {
            let entry = "name: demo\n    version: 1.0.0\n    urls: [x.tgz]\n    digest: 00";
            write_index(fx, &index_with(fx, entry));
        },
        args: &["update"],
        code: 3,
        words: &["index.yaml", "lists version 1.0.0 twice"],
    },
    Case {
        name: "an archive whose bytes are not the index's digest",
        setup: |fx| {
            publish_archive(fx, &tgz(&[("demo/Chart.yaml", FILE, META)]));
            let path = repo(fx).dir().join("demo-1.1.0.tgz");
            std::fs::write(
                path,
                tgz(&[("demo/Chart.yaml", FILE, b"name: demo\nversion: 1.1.0\n#\n")]),
            )
            .unwrap();
        },
        args: &["update"],
        code: 3,
        words: &["demo-1.1.0.tgz", "index's digest of demo 1.1.0"],
    },
    Case {
        name: "an archive member with `../`",
        setup: |fx| {
            publish_archive(
                fx,
                &tgz(&[
                    ("demo/Chart.yaml", FILE, META),
                    ("demo/../../x", FILE, b"x"),
                ]),
            )
        },
        args: &["update"],
        code: 3,
        words: &[
            "demo-1.1.0.tgz",
            "would be written outside the chart's directory",
        ],
    },
    Case {
        name: "an absolute archive member",
        setup: |fx| {
            publish_archive(
                fx,
                &tgz(&[
                    ("/etc/cron.d/x", FILE, b"x"),
                    ("demo/Chart.yaml", FILE, META),
                ]),
            )
        },
        args: &["update"],
        code: 3,
        words: &["demo-1.1.0.tgz", "`/etc/cron.d/x` would be written outside"],
    },
    Case {
        name: "an archive holding a symlink",
        setup: |fx| {
            let link = (
                "demo/values.yaml",
                tar::EntryType::Symlink,
                b"/etc/passwd" as &[u8],
            );
            publish_archive(fx, &tgz(&[("demo/Chart.yaml", FILE, META), link]));
        },
        args: &["update"],
        code: 3,
        words: &["demo-1.1.0.tgz", "`demo/values.yaml` is a link"],
    },
    Case {
        name: "an archive of several top directories",
        setup: |fx| {
            publish_archive(
                fx,
                &tgz(&[("demo/Chart.yaml", FILE, META), ("other/x", FILE, b"x")]),
            )
        },
        args: &["update"],
        code: 3,
        words: &["demo-1.1.0.tgz", "several top directories"],
    },
    Case {
        name: "an archive without Chart.yaml",
        setup: |fx| publish_archive(fx, &tgz(&[("demo/values.yaml", FILE, b"x: 1\n")])),
        args: &["update"],
        code: 3,
        words: &["demo-1.1.0.tgz", "has no `demo/Chart.yaml`"],
    },
    Case {
        name: "an archive whose Chart.yaml names another chart",
        setup: |fx| {
            publish_archive(
                fx,
                &tgz(&[("demo/Chart.yaml", FILE, b"name: evil\nversion: 1.1.0\n")]),
            )
        },
        args: &["update"],
        code: 3,
        words: &[
            "demo-1.1.0.tgz",
            "names chart `evil` version 1.1.0, not `demo` version 1.1.0",
        ],
    },
    Case {
        name: "an archive whose Chart.yaml names another version",
        setup: |fx| {
            publish_archive(
                fx,
                &tgz(&[("demo/Chart.yaml", FILE, b"name: demo\nversion: 9.0.0\n")]),
            )
        },
        args: &["update"],
        code: 3,
        words: &["demo-1.1.0.tgz", "version 9.0.0, not `demo` version 1.1.0"],
    },
    Case {
        name: "an archive holding a file past Helm's bound (a gzip bomb)",
        setup: |fx| {
            let big = vec![0u8; (5 << 20) + 1];
            publish_archive(
                fx,
                &tgz(&[("demo/Chart.yaml", FILE, META), ("demo/big", FILE, &big)]),
            );
        },
        args: &["update"],
        code: 3,
        words: &["demo-1.1.0.tgz", "`demo/big` is larger than 5 MiB"],
    },
    Case {
        name: "a repository over plain http to another machine",
        setup: |fx| {
            let url = repo(fx).url();
            fx.edit("vendor.toml", &url, "http://charts.example.com/stable");
        },
        args: &["update"],
        code: 2,
        words: &["vendor.toml:2", "plain http to `charts.example.com`"],
    },
    Case {
        name: "REVENDOR_HELM_AUTH that is not host=user:password",
        setup: |fx| fx.env("REVENDOR_HELM_AUTH", "127.0.0.1=hunter2"),
        args: &["update"],
        code: 2,
        words: &["REVENDOR_HELM_AUTH", "`127.0.0.1`"],
    },
];

#[test]
fn helm_chart_repositories() {
    catalog_from(adopted_chart, CASES);
}
