//! A vendored directory (issue 12's `from`/`to` ending in `/`): globs that
//! are not globs, a `from` and a `to` that disagree on being a directory, a
//! directory upstream lacks, and the trees API answering what GitHub never
//! should (malformed, truncated, entries leaving the directory, blob ids that
//! are none) or a raw file whose bytes are not the blob the tree named.
//!
//! The rows start from the catalog's package with one more `[[vendor]]`
//! appended at line 50: `charts/app/` of the upstream into `charts/app/`,
//! its `tests/` excluded (line 53).

use super::support::server::Response;
use super::support::{GitHub, TempPackage};
use super::{Case, Fixture, REPO, catalog_from};

const TREES_V1_1: &str = "/repos/example/app/git/trees/v1.1.0";
const VALUES_V1_1: &str = "/example/app/refs/tags/v1.1.0/charts/app/values.yaml";
const ARCHIVE_V1_1: &str = "/_codeload/example/app/tar.gz/refs/tags/v1.1.0";

const DIR_TOML: &str = "[[vendor]]
from = \"charts/app/\"
to = \"charts/app/\"
exclude = [\"tests/**\"]
";

/// The chart at `version`: its values change between releases, the rest
/// does not; `tests/` is excluded by the package.
fn chart(version: &str) -> [(&'static str, String); 4] {
    [
        (
            "charts/app/Chart.yaml",
            "apiVersion: v2\nname: app\nversion: 1.0.0\n".to_owned(),
        ),
        (
            "charts/app/values.yaml",
            format!("image: app:{version}\nreplicas: 1\n"),
        ),
        (
            "charts/app/templates/svc.yaml",
            "kind: Service\nname: app\n".to_owned(),
        ),
        ("charts/app/tests/t.yaml", "kind: Pod\n".to_owned()),
    ]
}

fn publish_chart(gh: &GitHub, version: &str) {
    let repo = gh.repo(REPO);
    for (path, text) in chart(version) {
        repo.file_at(version, path, text);
    }
}

/// The catalog's package with the chart directory vendored and adopted.
fn adopted_dir() -> Fixture {
    Fixture::adopt(
        |gh| publish_chart(gh, "v1.0.0"),
        |pkg: &TempPackage| {
            let toml = pkg.read_string("vendor.toml");
            pkg.write("vendor.toml", format!("{toml}\n{DIR_TOML}"));
            for (path, text) in chart("v1.0.0") {
                if !path.contains("/tests/") {
                    pkg.write(path, text);
                }
            }
        },
    )
}

/// Publishes v1.1.0, the chart with it.
fn newer(fx: &Fixture) {
    publish_chart(&fx.gh, "v1.1.0");
    fx.newer();
}

/// v1.1.0 published, its tree answered by `tree` (a JSON value) instead.
fn serve_tree(fx: &Fixture, tree: &serde_json::Value) {
    newer(fx);
    fx.gh
        .respond_next(TREES_V1_1, Response::json(200, tree), 10);
}

/// A tree answer listing one blob entry at `path` with `sha`.
fn tree_of(path: &str, sha: &str) -> serde_json::Value {
    serde_json::json!({
        "sha": "1".repeat(40),
        "truncated": false,
        "tree": [{ "path": path, "mode": "100644", "type": "blob", "sha": sha, "size": 1 }],
    })
}

pub(super) const CASES: &[Case] = &[
    Case {
        name: "dir: an `exclude` glob that is not a glob",
        setup: |fx| fx.edit("vendor.toml", "[\"tests/**\"]", "[\"tests/[\"]"),
        args: &["check"],
        code: 2,
        words: &["vendor.toml:53", "`exclude` glob \"tests/[\" is not a glob"],
    },
    Case {
        name: "dir: an `include` glob that is not a glob",
        setup: |fx| fx.append_toml("include = [\"templates/{\"]"),
        args: &["render"],
        code: 2,
        words: &[
            "vendor.toml:55",
            "`include` glob \"templates/{\" is not a glob",
        ],
    },
    Case {
        name: "dir: `include` = [] selects nothing",
        setup: |fx| fx.append_toml("include = []"),
        args: &["check"],
        code: 2,
        words: &["vendor.toml:55", "`include` = [] selects nothing"],
    },
    Case {
        name: "dir: `from` ends in / but `to` does not",
        setup: |fx| fx.edit("vendor.toml", "to = \"charts/app/\"", "to = \"charts/app\""),
        args: &["check"],
        code: 2,
        words: &["vendor.toml:52", "so `to` = \"charts/app\" must be one too"],
    },
    Case {
        name: "dir: `to` ends in / but `from` does not",
        setup: |fx| {
            fx.edit(
                "vendor.toml",
                "from = \"charts/app/\"",
                "from = \"charts/app/values.yaml\"",
            )
        },
        args: &["check"],
        code: 2,
        words: &[
            "vendor.toml:52",
            "but `from` = \"charts/app/values.yaml\" is a file",
        ],
    },
    Case {
        name: "dir: `exclude` on a file's [[vendor]]",
        setup: |fx| {
            fx.edit(
                "vendor.toml",
                "to = \"templates/app.yml\"\n",
                "to = \"templates/app.yml\"\nexclude = [\"*\"]\n",
            )
        },
        args: &["render"],
        code: 2,
        words: &["vendor.toml:9", "`exclude` selects files of a directory"],
    },
    Case {
        name: "dir: a file vendored into the vendored directory",
        setup: |fx| {
            fx.append_toml("[[vendor]]\nfrom = \"deploy/app.yml\"\nto = \"charts/app/app.yml\"\n")
        },
        args: &["check"],
        code: 2,
        words: &["vendor.toml:57", "is inside the vendored directory"],
    },
    Case {
        name: "dir: a directory upstream lacks",
        setup: |fx| {
            newer(fx);
            fx.edit(
                "vendor.toml",
                "from = \"charts/app/\"",
                "from = \"charts/gone/\"",
            );
        },
        args: &["update", "--to", "v1.1.0"],
        code: 2,
        words: &[
            "vendor.toml:50",
            "`from` = \"charts/gone/\" is not in the upstream at v1.1.0",
        ],
    },
    Case {
        name: "dir: a tree answer that is not JSON",
        setup: |fx| {
            newer(fx);
            fx.gh.respond_next(
                TREES_V1_1,
                Response::bytes(200, "application/json", "{\"tree\": [{\"path\""),
                10,
            );
        },
        args: &["update", "--to", "v1.1.0"],
        code: 3,
        words: &[TREES_V1_1, "a git tree"],
    },
    Case {
        name: "dir: a tree answer without its entries",
        setup: |fx| {
            serve_tree(
                fx,
                &serde_json::json!({ "sha": "1".repeat(40), "tree": null }),
            )
        },
        args: &["update", "--to", "v1.1.0"],
        code: 3,
        words: &[TREES_V1_1, "a git tree"],
    },
    Case {
        name: "dir: a truncated tree is read from the archive",
        setup: |fx| {
            newer(fx);
            fx.gh.truncate_trees(2);
        },
        args: &["update", "--to", "v1.1.0", "--dry-run"],
        code: 0,
        words: &[],
    },
    Case {
        name: "dir: a truncated tree whose archive is cut short",
        setup: |fx| {
            newer(fx);
            fx.gh.truncate_trees(2);
            let mut archive = fx.gh.archive(REPO, "v1.1.0");
            archive.truncate(archive.len() - 8);
            fx.gh.respond_next(
                ARCHIVE_V1_1,
                Response::bytes(200, "application/x-gzip", archive),
                10,
            );
        },
        args: &["update", "--to", "v1.1.0"],
        code: 3,
        words: &["v1.1.0.tar.gz", "usable tar.gz archive"],
    },
    Case {
        name: "dir: a tree entry that climbs out with ..",
        setup: |fx| {
            serve_tree(
                fx,
                &tree_of("charts/app/../../../etc/passwd", &"a".repeat(40)),
            )
        },
        args: &["update", "--to", "v1.1.0"],
        code: 3,
        words: &[
            TREES_V1_1,
            "`charts/app/../../../etc/passwd` is not a clean relative path",
        ],
    },
    Case {
        name: "dir: a tree entry with an absolute path",
        setup: |fx| serve_tree(fx, &tree_of("/etc/passwd", &"a".repeat(40))),
        args: &["update", "--to", "v1.1.0"],
        code: 3,
        words: &[TREES_V1_1, "`/etc/passwd` is not a clean relative path"],
    },
    Case {
        name: "dir: a tree entry whose sha is no blob id",
        setup: |fx| {
            serve_tree(
                fx,
                &tree_of("charts/app/values.yaml", &"../".repeat(14)[..40]),
            )
        },
        args: &["update", "--to", "v1.1.0"],
        code: 3,
        words: &[TREES_V1_1, "`charts/app/values.yaml`", "blob id"],
    },
    Case {
        name: "dir: a raw file whose bytes are not the blob the tree named",
        setup: |fx| {
            newer(fx);
            fx.gh.respond_next(
                VALUES_V1_1,
                Response::bytes(200, "text/plain", "image: evil:latest\n"),
                10,
            );
        },
        args: &["update", "--to", "v1.1.0"],
        code: 3,
        words: &["charts/app/values.yaml at v1.1.0", "git blob id"],
    },
    Case {
        name: "dir: a symlink inside the directory pointing outside is never followed",
        setup: |fx| {
            fx.gh.repo(REPO).symlink_at(
                "v1.1.0",
                "charts/app/templates/passwd.yaml",
                "/etc/passwd",
            );
            newer(fx);
        },
        args: &["update", "--to", "v1.1.0", "--dry-run"],
        code: 0,
        words: &[],
    },
    Case {
        name: "dir: cached blobs whose bytes no longer match their id",
        setup: |fx| {
            newer(fx);
            super::disk::corrupt_cache(fx, "git-blob");
        },
        args: &["update", "--to", "v1.1.0", "--dry-run"],
        code: 0,
        words: &[],
    },
];

#[test]
fn directory_catalog() {
    catalog_from(adopted_dir, CASES);
}
