//! What GitHub (and a registry) answers: 404s, rate limits, odd releases,
//! loops, malformed JSON, hostile and truncated archives, retries, timeouts,
//! redirect loops, commits it cannot tell, tokens it refuses or echoes.

use std::io::Write;
use std::time::Duration;

use serde_json::json;
use tar::EntryType;

use super::support::server::{Response, Server};
use super::{Case, Fixture, LABELLED, MAIN_GO, RELEASES, REPO, catalog};

const ARCHIVE: &str = "/_codeload/example/app/tar.gz/refs/tags/v1.1.0";

/// The update that downloads that archive.
const TO_V110: &[&str] = &["update", "--to", "v1.1.0"];

/// A gzip tarball of `entries` with raw names and link targets, as a hostile
/// server would build it: `(name, kind, link, bytes)`.
fn hostile_tarball(entries: &[(&str, EntryType, &str, &[u8])]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, kind, link, data) in entries {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_entry_type(*kind);
        // set_path and set_link_name refuse `..` and absolute names: write the raw bytes.
        let old = h.as_old_mut();
        old.name[..name.len()].copy_from_slice(name.as_bytes());
        old.linkname[..link.len()].copy_from_slice(link.as_bytes());
        h.set_cksum();
        builder.append(&h, *data).unwrap();
    }
    let tar = builder.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&tar).unwrap();
    gz.finish().unwrap()
}

/// The v1.1.0 archive as the stand-in makes it, with `main.go` replaced by
/// `entry`.
fn archive_with(kind: EntryType, name: &str, link: &str) -> Vec<u8> {
    let regular = EntryType::Regular;
    hostile_tarball(&[
        (
            "app-1.1.0/deploy/app.yml",
            regular,
            "",
            LABELLED.text().as_bytes(),
        ),
        (
            "app-1.1.0/go.mod",
            regular,
            "",
            b"module example.org/app\n\ngo 1.25.0\n",
        ),
        (
            name,
            kind,
            link,
            if kind == regular {
                MAIN_GO.as_bytes()
            } else {
                b""
            },
        ),
    ])
}

fn serve_archive(fx: &Fixture, body: Vec<u8>) {
    fx.newer();
    fx.gh.respond_next(
        ARCHIVE,
        Response::bytes(200, "application/x-gzip", body),
        10,
    );
}

/// Serves the v1.1.0 archive with `main.go` replaced by the entry `name` of `kind`
/// linking to `link`.
fn serve_entry(fx: &Fixture, kind: EntryType, name: &str, link: &str) {
    serve_archive(fx, archive_with(kind, name, link));
}

/// The stand-in's own v1.1.0 archive.
fn real_archive(fx: &Fixture) -> Vec<u8> {
    fx.newer();
    fx.gh.archive(REPO, "v1.1.0")
}

pub(super) const CASES: &[Case] = &[
    Case {
        name: "GitHub: a 404 with its JSON body",
        setup: |fx| {
            fx.gh.respond_next(
                RELEASES,
                Response::json(
                    404,
                    &json!({"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"}),
                ),
                10,
            )
        },
        args: &["update"],
        code: 3,
        words: &[RELEASES, "not found"],
    },
    Case {
        name: "GitHub: 403 rate limit with its reset time",
        setup: |fx| fx.gh.rate_limit(true),
        args: &["update"],
        code: 3,
        words: &["rate limit exceeded", RELEASES, "resets"],
    },
    Case {
        name: "GitHub: a release whose name is null",
        setup: |fx| {
            fx.newer();
            fx.gh.repo(REPO).release("v1.1.0", |r| r.name(None));
        },
        args: &["update", "--dry-run"],
        code: 0,
        words: &["v1.0.0 -> v1.1.0"],
    },
    Case {
        name: "GitHub: only drafts above the locked version",
        setup: |fx| {
            fx.newer();
            fx.gh.repo(REPO).release("v1.1.0", |r| r.draft(true));
        },
        args: &["update", "--dry-run"],
        code: 0,
        words: &["Checking github:example/app at v1.0.0"],
    },
    Case {
        name: "GitHub: only prereleases above the locked version",
        setup: |fx| {
            fx.newer();
            fx.gh.repo(REPO).release("v1.1.0", |r| r.prerelease(true));
        },
        args: &["update"],
        code: 0,
        words: &[],
    },
    Case {
        name: "GitHub: a Link header that loops back",
        setup: |fx| {
            let next = format!("<{}{RELEASES}?per_page=100>; rel=\"next\"", fx.gh.api_url());
            fx.gh.respond_next(
                RELEASES,
                Response::json(200, &json!([])).header("link", next),
                1000,
            )
        },
        args: &["update"],
        code: 3,
        words: &[RELEASES, "points back at a page already read"],
    },
    Case {
        name: "GitHub: malformed JSON",
        setup: |fx| {
            fx.gh.respond_next(
                RELEASES,
                Response::bytes(200, "application/json", "[{\"tag_name\": "),
                10,
            )
        },
        args: &["update"],
        code: 3,
        words: &[RELEASES, "did not answer a list of releases"],
    },
    Case {
        name: "GitHub: a truncated gzip",
        setup: |fx| {
            let body = real_archive(fx);
            serve_archive(fx, body[..body.len() / 2].to_vec());
        },
        args: TO_V110,
        code: 3,
        words: &["v1.1.0.tar.gz", "usable tar.gz"],
    },
    Case {
        name: "GitHub: an archive without its gzip trailer",
        setup: |fx| {
            let body = real_archive(fx);
            serve_archive(fx, body[..body.len() - 8].to_vec());
        },
        args: TO_V110,
        code: 3,
        words: &["v1.1.0.tar.gz", "gzip stream is cut short"],
    },
    Case {
        name: "GitHub: an archive entry with `../`",
        setup: |fx| serve_entry(fx, EntryType::Regular, "app-1.1.0/../../main.go", ""),
        args: TO_V110,
        code: 3,
        words: &["v1.1.0.tar.gz", "outside the tree"],
    },
    Case {
        name: "GitHub: an archive entry with an absolute path",
        setup: |fx| serve_entry(fx, EntryType::Regular, "/etc/main.go", ""),
        args: TO_V110,
        code: 3,
        words: &["v1.1.0.tar.gz", "outside the tree"],
    },
    Case {
        name: "GitHub: the patched source file is a symlink pointing outside",
        setup: |fx| serve_entry(fx, EntryType::Symlink, "app-1.1.0/main.go", "/etc/passwd"),
        args: TO_V110,
        code: 1,
        words: &[
            "image/patches/greet.diff",
            "a symlink to `/etc/passwd`",
            "never followed",
        ],
    },
    Case {
        name: "GitHub: the patched source file is a hard link pointing outside",
        setup: |fx| serve_entry(fx, EntryType::Link, "app-1.1.0/main.go", "../../etc/passwd"),
        args: TO_V110,
        code: 1,
        words: &[
            "image/patches/greet.diff",
            "a hard link to `../../etc/passwd`",
            "never followed",
        ],
    },
    Case {
        name: "GitHub: an unpatched symlink pointing outside is never followed",
        setup: |fx| {
            let regular = EntryType::Regular;
            serve_archive(
                fx,
                hostile_tarball(&[
                    (
                        "app-1.1.0/go.mod",
                        regular,
                        "",
                        b"module example.org/app\n\ngo 1.25.0\n",
                    ),
                    ("app-1.1.0/main.go", regular, "", MAIN_GO.as_bytes()),
                    ("app-1.1.0/etc", EntryType::Symlink, "/etc", b""),
                    (
                        "app-1.1.0/escape",
                        EntryType::Symlink,
                        "../../../../etc/passwd",
                        b"",
                    ),
                ]),
            )
        },
        args: &["update", "--to", "v1.1.0", "--dry-run"],
        code: 0,
        words: &[],
    },
    Case {
        name: "GitHub: an archive's symlink with no target",
        setup: |fx| serve_entry(fx, EntryType::Symlink, "app-1.1.0/etc", ""),
        args: TO_V110,
        code: 3,
        words: &["v1.1.0.tar.gz", "symbolic link `etc` has no target"],
    },
    Case {
        name: "GitHub: 500 then 200",
        setup: |fx| fx.gh.fail_next(RELEASES, 500, 1),
        args: &["update"],
        code: 0,
        words: &[],
    },
    Case {
        name: "GitHub: 500 on every attempt",
        setup: |fx| fx.gh.fail_next(RELEASES, 500, 10),
        args: &["update"],
        code: 3,
        words: &[RELEASES, "500"],
    },
    Case {
        name: "GitHub: slower than REVENDOR_HTTP_TIMEOUT",
        setup: |fx| {
            fx.env("REVENDOR_HTTP_TIMEOUT", "1");
            fx.gh.hang_next(RELEASES, Duration::from_secs(3), 10);
        },
        args: &["update"],
        code: 3,
        words: &[RELEASES, "timed out"],
    },
    Case {
        name: "GitHub: a redirect loop",
        setup: |fx| {
            let server = fx.gh.server_url();
            fx.gh.redirect_next("/_codeload/", &server, 100);
        },
        args: &["update"],
        code: 3,
        words: &["v1.0.0.tar.gz", "too many redirects"],
    },
    Case {
        name: "GitHub: the commits API answers 404",
        setup: |fx| {
            fx.newer();
            fx.gh.respond_next(
                "/repos/example/app/commits/",
                Response::json(404, &json!({"message": "Not Found"})),
                10,
            );
        },
        args: &["update", "--to", "v1.1.0", "--dry-run"],
        code: 0,
        words: &[
            "the lock records no `commit` for v1.1.0",
            "/repos/example/app/commits/v1.1.0",
        ],
    },
    Case {
        name: "GitHub: the commits API answers a null sha",
        setup: |fx| {
            fx.newer();
            fx.gh.respond_next(
                "/repos/example/app/commits/",
                Response::json(200, &json!({"sha": null})),
                10,
            );
        },
        args: &["update", "--to", "v1.1.0", "--dry-run"],
        code: 0,
        words: &[
            "the lock records no `commit` for v1.1.0",
            "/repos/example/app/commits/v1.1.0",
        ],
    },
    Case {
        name: "GitHub: a token it does not accept",
        setup: |fx| fx.gh.accept_token("ghp_someone_else"),
        args: &["update"],
        code: 3,
        words: &[RELEASES, "Bad credentials"],
    },
    Case {
        name: "GitHub: an error body echoing the token",
        setup: |fx| fx.gh.echo_next(RELEASES, 422, true, 10),
        args: &["update"],
        code: 3,
        words: &[RELEASES, "422"],
    },
    Case {
        name: "registry: a manifest whose digest does not match its body",
        setup: |fx| {
            let body = br#"{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}"#;
            let announced = format!("sha256:{}", "b".repeat(64));
            let server = Server::start(move |_| {
                Response::new(200)
                    .header("Content-Type", "application/vnd.oci.image.index.v1+json")
                    .header("Docker-Content-Digest", announced.clone())
                    .body(body.to_vec())
            });
            let repository = format!("{}/example/app", server.host());
            fx.edit(
                "vendor.toml",
                "repository = \"ghcr.io/example/app\"\ntag",
                &format!("repository = \"{repository}\"\ntag"),
            );
            fx.keep.push(Box::new(server));
        },
        args: &["image", "pin"],
        code: 3,
        words: &["hashes to", "Docker-Content-Digest"],
    },
    Case {
        name: "upstream's go.mod has a `go` directive that is not a Go version (issue 21)",
        setup: |fx| {
            fx.gh
                .repo(REPO)
                .file_at("v1.1.0", "deploy/app.yml", LABELLED.text())
                .file_at("v1.1.0", "go.mod", "module example.org/app\n\ngo 1.x.y\n")
                .file_at("v1.1.0", "main.go", MAIN_GO)
                .release("v1.1.0", |r| r);
        },
        args: &["update"],
        code: 3,
        words: &[
            "go.mod of github:example/app at v1.1.0",
            "`go 1.x.y` is not a Go version",
        ],
    },
];

#[test]
fn github_catalog() {
    catalog(CASES);
}
