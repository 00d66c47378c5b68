//! Tests of the test harness itself: the GitHub stand-in, git repositories and packages.
//!
//! They talk to the stand-in the way the tool will, with reqwest's blocking client (and a raw
//! `TcpStream` where the HTTP framing itself is under test).

use crate::support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use reqwest::blocking::{Client, Response};
use serde_json::Value;
use support::github::{sha256_hex, sha256_sidecar};
use support::realworld::{self, MULTUS_MANIFEST, MULTUS_REPO, MULTUS_VERSIONS};
use support::server::{self, Pace, Response as Reply, Server};
use support::{GitHub, GitRepo, Realworld, TempPackage};

fn client() -> Client {
    support::tls::client_builder()
        .user_agent("revendor-selftest")
        .build()
        .expect("build the HTTP client")
}

fn get(url: &str) -> Response {
    client().get(url).send().expect("request the stand-in")
}

fn json(url: &str) -> Value {
    let response = get(url);
    assert_eq!(response.status(), 200, "GET {url}");
    response.json().expect("a JSON body")
}

fn header(response: &Response, name: &str) -> String {
    response
        .headers()
        .get(name)
        .unwrap_or_else(|| panic!("no `{name}` header"))
        .to_str()
        .expect("an ASCII header")
        .to_string()
}

/// The URL of `rel` in a `Link` header, if present.
fn link(response: &Response, rel: &str) -> Option<String> {
    let value = response.headers().get("link")?.to_str().ok()?;
    value.split(", ").find_map(|part| {
        let (url, params) = part.split_once(';')?;
        (params.trim() == format!("rel=\"{rel}\""))
            .then(|| url.trim_matches(['<', '>']).to_string())
    })
}

/// Follows `next` links from `url`, returning every page's tag names and the URLs visited.
fn all_pages(url: &str) -> (Vec<String>, Vec<String>) {
    let (mut tags, mut visited) = (Vec::new(), Vec::new());
    let mut next = Some(url.to_string());
    while let Some(url) = next {
        let response = get(&url);
        assert_eq!(response.status(), 200, "GET {url}");
        next = link(&response, "next");
        let page: Vec<Value> = response.json().expect("a JSON array");
        tags.extend(
            page.iter()
                .map(|r| r["tag_name"].as_str().unwrap().to_string()),
        );
        visited.push(url);
    }
    (tags, visited)
}

fn gunzip_tar(bytes: &[u8]) -> Vec<(String, tar::EntryType, u32, Vec<u8>)> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    archive
        .entries()
        .expect("a tar stream")
        .map(|entry| {
            let mut entry = entry.expect("a tar entry");
            let path = entry.path().expect("a path").to_string_lossy().into_owned();
            let kind = entry.header().entry_type();
            let mode = entry.header().mode().expect("a mode");
            let mut data = Vec::new();
            entry.read_to_end(&mut data).expect("entry data");
            (path, kind, mode, data)
        })
        .collect()
}

#[test]
fn releases_paginate_with_link_headers_pointing_at_the_repository_id() {
    let gh = GitHub::start();
    let repo = gh.repo("o/r");
    for minor in 0..5 {
        repo.release(&format!("v1.{minor}.0"), |r| r);
    }
    let first = get(&format!("{}/repos/o/r/releases?per_page=2", gh.api_url()));
    let next = link(&first, "next").expect("a next link");
    let last = link(&first, "last").expect("a last link");
    assert!(
        next.starts_with(&format!("{}/repositories/", gh.api_url())),
        "{next}"
    );
    assert!(next.ends_with("/releases?per_page=2&page=2"), "{next}");
    assert!(last.ends_with("/releases?per_page=2&page=3"), "{last}");
    assert_eq!(link(&first, "prev"), None);

    let (tags, visited) = all_pages(&format!("{}/repos/o/r/releases?per_page=2", gh.api_url()));
    assert_eq!(tags, ["v1.4.0", "v1.3.0", "v1.2.0", "v1.1.0", "v1.0.0"]);
    assert_eq!(visited.len(), 3);
    let last_page = get(&visited[2]);
    assert!(link(&last_page, "prev").unwrap().ends_with("page=2"));
    assert!(link(&last_page, "first").unwrap().ends_with("page=1"));
    assert_eq!(link(&last_page, "next"), None);
}

#[test]
fn releases_default_to_thirty_per_page_and_one_page_has_no_link() {
    let gh = GitHub::start();
    let repo = gh.repo("o/r");
    for patch in 0..35 {
        repo.release(&format!("v1.0.{patch}"), |r| r);
    }
    let first = get(&format!("{}/repos/o/r/releases", gh.api_url()));
    assert!(link(&first, "next").unwrap().ends_with("/releases?page=2"));
    assert_eq!(first.json::<Vec<Value>>().unwrap().len(), 30);
    let (tags, _) = all_pages(&format!("{}/repos/o/r/releases", gh.api_url()));
    assert_eq!(tags.len(), 35);

    gh.repo("o/small").release("v1.0.0", |r| r);
    let only = get(&format!("{}/repos/o/small/releases", gh.api_url()));
    assert!(only.headers().get("link").is_none());
}

#[test]
fn release_json_is_shaped_like_the_api() {
    let gh = GitHub::start();
    gh.repo("o/r").release("v2.0.0", |r| {
        r.name(None)
            .created_at("2025-10-30T14:32:53Z")
            .asset_with_sha256("tool-v2.0.0.tgz", b"archive bytes".to_vec())
    });
    let release = json(&format!("{}/repos/o/r/releases/tags/v2.0.0", gh.api_url()));
    assert_eq!(release["tag_name"], "v2.0.0");
    assert_eq!(release["name"], Value::Null);
    assert_eq!(release["draft"], false);
    assert_eq!(release["prerelease"], false);
    assert_eq!(release["created_at"], "2025-10-30T14:32:53Z");
    assert_eq!(release["published_at"], "2025-10-30T14:32:53Z");
    assert_eq!(
        release["tarball_url"],
        format!("{}/repos/o/r/tarball/v2.0.0", gh.api_url())
    );
    let by_id = json(release["url"].as_str().unwrap());
    assert_eq!(by_id, release);
    let assets = release["assets"].as_array().unwrap();
    let names: Vec<&str> = assets.iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["tool-v2.0.0.tgz", "tool-v2.0.0.tgz.sha256"]);
    assert_eq!(assets[0]["size"], 13);
    assert_eq!(
        assets[0]["browser_download_url"],
        format!(
            "{}/o/r/releases/download/v2.0.0/tool-v2.0.0.tgz",
            gh.server_url()
        )
    );
}

#[test]
#[should_panic(expected = "tag it before adding files")]
fn moving_a_tag_away_from_its_files_is_refused() {
    let gh = GitHub::start();
    gh.repo("o/r")
        .file_at("v1.0.0", "a.txt", "a")
        .tag("v1.0.0", "db30741512795c258b3ba383a571a66850e8baac");
}

#[test]
fn releases_without_a_date_are_newer_than_the_ones_before() {
    let gh = GitHub::start();
    gh.repo("o/r")
        .release("v1.0.0", |r| r.created_at("2026-05-29T15:05:10Z"))
        .release("v0.9.0", |r| r);
    let release = json(&format!("{}/repos/o/r/releases/latest", gh.api_url()));
    assert_eq!(release["tag_name"], "v0.9.0");
    assert_eq!(release["created_at"], "2026-05-30T15:05:10Z");
}

#[test]
fn latest_skips_drafts_and_prereleases_and_drafts_need_a_token() {
    let gh = GitHub::start();
    gh.repo("o/r")
        .release("v1.0.0", |r| r)
        .release("v1.1.0-rc.1", |r| r.prerelease(true))
        .release("v1.1.0", |r| r.draft(true));
    let latest = json(&format!("{}/repos/o/r/releases/latest", gh.api_url()));
    assert_eq!(latest["tag_name"], "v1.0.0");

    let (anonymous, _) = all_pages(&format!("{}/repos/o/r/releases", gh.api_url()));
    assert_eq!(anonymous, ["v1.1.0-rc.1", "v1.0.0"]);
    let authorized: Vec<Value> = client()
        .get(format!("{}/repos/o/r/releases", gh.api_url()))
        .bearer_auth("any-token")
        .send()
        .unwrap()
        .json()
        .unwrap();
    let draft = &authorized[0];
    assert_eq!(draft["tag_name"], "v1.1.0");
    assert_eq!(draft["draft"], true);
    assert_eq!(draft["published_at"], Value::Null);
    let missing = get(&format!("{}/repos/o/r/releases/tags/v1.1.0", gh.api_url()));
    assert_eq!(missing.status(), 404);
}

#[test]
fn unknown_repositories_and_releases_answer_404_json() {
    let gh = GitHub::start();
    gh.repo("o/empty");
    for path in [
        "/repos/o/missing/releases",
        "/repos/o/empty/releases/latest",
        "/repos/o/empty/releases/tags/v1.0.0",
        "/repos/o/empty/git/ref/tags/v1.0.0",
    ] {
        let response = get(&format!("{}{path}", gh.api_url()));
        assert_eq!(response.status(), 404, "{path}");
        let body: Value = response.json().unwrap();
        assert_eq!(body["message"], "Not Found", "{path}");
        assert!(body["documentation_url"].is_string(), "{path}");
    }
    assert_eq!(
        json(&format!("{}/repos/o/empty/releases", gh.api_url())),
        Value::Array(vec![])
    );
}

#[test]
fn tags_resolve_to_commits_through_refs_and_annotated_tag_objects() {
    let gh = GitHub::start();
    let commit = "db30741512795c258b3ba383a571a66850e8baac";
    let repo = gh.repo("o/r");
    repo.tag("v1.0.0", commit)
        .annotated_tag("v1.0.1", commit, "Release v1.0.1");
    let api = gh.api_url();

    let light = json(&format!("{api}/repos/o/r/git/ref/tags/v1.0.0"));
    assert_eq!(light["ref"], "refs/tags/v1.0.0");
    assert_eq!(light["object"]["type"], "commit");
    assert_eq!(light["object"]["sha"], commit);

    let annotated = json(&format!("{api}/repos/o/r/git/ref/tags/v1.0.1"));
    assert_eq!(annotated["object"]["type"], "tag");
    let object = annotated["object"]["sha"].as_str().unwrap();
    assert_ne!(object, commit);
    let peeled = json(&format!("{api}/repos/o/r/git/tags/{object}"));
    assert_eq!(peeled["object"]["sha"], commit);
    assert_eq!(peeled["tag"], "v1.0.1");

    for rev in ["v1.0.0", "v1.0.1", commit, &commit[..7]] {
        let found = json(&format!("{api}/repos/o/r/commits/{rev}"));
        assert_eq!(found["sha"], commit, "{rev}");
    }
    let plain = client()
        .get(format!("{api}/repos/o/r/commits/v1.0.0"))
        .header("accept", "application/vnd.github.sha")
        .send()
        .unwrap();
    assert_eq!(plain.text().unwrap(), commit);
    let unknown = get(&format!("{api}/repos/o/r/commits/nope"));
    assert_eq!(unknown.status(), 422);

    let tags = json(&format!("{api}/repos/o/r/tags"));
    let names: Vec<&str> = tags
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["v1.0.1", "v1.0.0"]);
    assert_eq!(repo.sha("v1.0.1"), commit);
}

#[test]
fn etag_answers_304_to_a_matching_if_none_match_and_the_log_says_so() {
    let gh = GitHub::start();
    gh.repo("o/r")
        .release("v1.0.0", |r| r)
        .file_at("v1.0.0", "a.txt", "one\n");
    let url = format!("{}/repos/o/r/releases", gh.api_url());
    let first = get(&url);
    let etag = header(&first, "etag");
    assert!(etag.starts_with('"') && etag.len() == 66, "strong: {etag}");

    let again = client()
        .get(&url)
        .header("if-none-match", &etag)
        .send()
        .unwrap();
    assert_eq!(again.status(), 304);
    assert_eq!(header(&again, "etag"), etag);
    assert!(again.bytes().unwrap().is_empty());

    gh.repo("o/r").release("v1.1.0", |r| r);
    let changed = client()
        .get(&url)
        .header("if-none-match", &etag)
        .send()
        .unwrap();
    assert_eq!(changed.status(), 200);
    assert_ne!(header(&changed, "etag"), etag);

    let raw = format!("{}/o/r/v1.0.0/a.txt", gh.raw_url());
    let raw_etag = header(&get(&raw), "etag");
    let cached = client()
        .get(&raw)
        .header("if-none-match", format!("W/{raw_etag}"))
        .send()
        .unwrap();
    assert_eq!(cached.status(), 304);

    let log = gh.requests();
    let conditional: Vec<(bool, u16)> = log
        .matching("/repos/o/r/releases")
        .iter()
        .map(|r| (r.conditional(), r.status))
        .collect();
    assert_eq!(conditional, [(false, 200), (true, 304), (true, 200)]);
    assert_eq!(log.statuses("/o/r/v1.0.0/a.txt"), [200, 304]);
}

#[test]
fn rate_limit_answers_403_with_github_headers_until_switched_off() {
    let gh = GitHub::start();
    gh.repo("o/r").release("v1.0.0", |r| r);
    let url = format!("{}/repos/o/r/releases", gh.api_url());
    let normal = get(&url);
    assert_eq!(header(&normal, "x-ratelimit-limit"), "60");
    assert_eq!(header(&normal, "x-ratelimit-remaining"), "59");

    gh.rate_limit(true);
    let limited = get(&url);
    assert_eq!(limited.status(), 403);
    assert_eq!(header(&limited, "x-ratelimit-remaining"), "0");
    assert_eq!(header(&limited, "x-ratelimit-limit"), "60");
    let reset: u64 = header(&limited, "x-ratelimit-reset").parse().unwrap();
    assert_eq!(Some(reset), gh.rate_limit_reset());
    let body: Value = limited.json().unwrap();
    let message = body["message"].as_str().unwrap();
    assert!(
        message.starts_with("API rate limit exceeded for "),
        "{message}"
    );

    let authorized = client().get(&url).bearer_auth("t").send().unwrap();
    assert_eq!(authorized.status(), 403);
    assert_eq!(header(&authorized, "x-ratelimit-limit"), "5000");

    // Raw files and downloads are not API calls.
    gh.repo("o/r").file_at("v1.0.0", "a.txt", "a");
    assert_eq!(
        get(&format!("{}/o/r/v1.0.0/a.txt", gh.raw_url())).status(),
        200
    );

    gh.rate_limit(false);
    assert_eq!(get(&url).status(), 200);
}

#[test]
fn rate_limit_for_a_while_then_succeeds() {
    let gh = GitHub::start();
    gh.repo("o/r");
    let url = format!("{}/repos/o/r/releases", gh.api_url());
    gh.rate_limit_for(Duration::from_secs(1));
    assert_eq!(get(&url).status(), 403);
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(get(&url).status(), 200);
}

#[test]
fn tokens_are_checked_and_only_their_presence_is_logged() {
    let gh = GitHub::start();
    gh.repo("o/r");
    gh.accept_token("s3cret-token");
    let url = format!("{}/repos/o/r/releases", gh.api_url());
    let wrong = client().get(&url).bearer_auth("other").send().unwrap();
    assert_eq!(wrong.status(), 401);
    assert_eq!(wrong.json::<Value>().unwrap()["message"], "Bad credentials");
    let right = client()
        .get(&url)
        .header("authorization", "token s3cret-token")
        .send()
        .unwrap();
    assert_eq!(right.status(), 200);
    assert_eq!(get(&url).status(), 200);

    let log = gh.requests();
    let sent: Vec<bool> = log.iter().map(|r| r.authorization_sent).collect();
    assert_eq!(sent, [true, true, false]);
    assert!(!format!("{log:?}").contains("s3cret-token"));
}

#[test]
fn the_api_refuses_requests_without_a_user_agent() {
    let gh = GitHub::start();
    gh.repo("o/r");
    let response = raw_http(
        &gh.api_url(),
        "GET /repos/o/r/releases HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(response.starts_with("HTTP/1.1 403 "), "{response}");
    assert!(response.contains("User-Agent"), "{response}");
}

#[test]
fn faults_fail_the_next_requests_then_let_them_through() {
    let gh = GitHub::start();
    gh.repo("o/r").file_at("v1.0.0", "a.txt", "a");
    gh.fail_next("/repos/o/r/releases", 503, 2);
    gh.fail_next(&format!("{}/o/r/", gh.raw_url()), 502, 1);
    let api = format!("{}/repos/o/r/releases", gh.api_url());
    let raw = format!("{}/o/r/v1.0.0/a.txt", gh.raw_url());
    let statuses: Vec<u16> = [&api, &raw, &api, &raw, &api]
        .iter()
        .map(|url| get(url).status().as_u16())
        .collect();
    assert_eq!(statuses, [503, 502, 503, 200, 200]);
    // A full-URL prefix reaches one origin only.
    let archive = format!("{}/o/r/archive/refs/tags/v1.0.0.tar.gz", gh.server_url());
    assert_eq!(get(&archive).status(), 200);
}

#[test]
fn hangs_outlast_a_client_timeout_then_succeed() {
    let gh = GitHub::start();
    gh.repo("o/r").file_at("v1.0.0", "a.txt", "a");
    gh.hang_next("/o/r/", Duration::from_secs(3), 1);
    let url = format!("{}/o/r/v1.0.0/a.txt", gh.raw_url());
    let impatient = support::tls::client_builder()
        .user_agent("revendor-selftest")
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let error = impatient
        .get(&url)
        .send()
        .expect_err("the request times out");
    assert!(error.is_timeout(), "{error}");
    assert_eq!(impatient.get(&url).send().unwrap().status(), 200);
}

#[test]
fn a_throttled_body_arrives_whole_in_pieces_over_the_time_given() {
    let gh = GitHub::start();
    let body = "x".repeat(4000);
    gh.repo("o/r").file_at("v1.0.0", "a.txt", body.as_str());
    gh.throttle_next("/o/r/", Duration::from_millis(800), 1);
    let url = format!("{}/o/r/v1.0.0/a.txt", gh.raw_url());
    let start = std::time::Instant::now();
    let mut response = get(&url);
    assert_eq!(header(&response, "content-length"), "4000");
    let (received, reads) = read_counting(&mut response);
    let elapsed = start.elapsed();
    assert_eq!(received, body.as_bytes());
    // Only a floor: a busy machine makes the body later, never sooner, so
    // nothing here can fail from load (no upper bound on any time).
    assert!(elapsed >= Duration::from_millis(700), "{elapsed:?}");
    assert!(reads >= 10, "the body came in {reads} reads");
    let (again, unthrottled_reads) = read_counting(&mut get(&url));
    assert_eq!(again, body.as_bytes(), "the next request is answered whole");
    assert!(
        unthrottled_reads < reads,
        "only the next request is spread: {unthrottled_reads} reads, then {reads}"
    );
}

/// `response`'s body, and in how many reads it came.
fn read_counting(response: &mut Response) -> (Vec<u8>, usize) {
    let mut reads = 0;
    let mut received = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = response.read(&mut buf).unwrap();
        if n == 0 {
            return (received, reads);
        }
        reads += 1;
        received.extend_from_slice(&buf[..n]);
    }
}

#[test]
fn raw_files_are_served_by_tag_sha_abbreviation_and_branch() {
    let gh = GitHub::start();
    let sha = "705a59eaf96c86e1e977a2fe7b4f5cb19c96c4e6";
    gh.repo("o/r")
        .tag("v4.2.4", sha)
        .branch("release/4.2", sha)
        .file_at("v4.2.4", "deployments/x.yml", "kind: DaemonSet\n");
    let raw = gh.raw_url();
    for rev in [
        "v4.2.4",
        "refs/tags/v4.2.4",
        sha,
        &sha[..7],
        "release/4.2",
        "refs/heads/release/4.2",
    ] {
        let response = get(&format!("{raw}/o/r/{rev}/deployments/x.yml"));
        assert_eq!(response.status(), 200, "{rev}");
        assert_eq!(response.text().unwrap(), "kind: DaemonSet\n", "{rev}");
    }
    for missing in [
        "/o/r/v4.2.4/nope.yml",
        "/o/r/v9.9.9/deployments/x.yml",
        "/o/x/v4.2.4/a",
    ] {
        let response = get(&format!("{raw}{missing}"));
        assert_eq!(response.status(), 404, "{missing}");
        assert_eq!(response.text().unwrap(), "404: Not Found");
    }
}

#[test]
fn archives_round_trip_through_a_redirect_like_git_archive() {
    let gh = GitHub::start();
    let sha = "db30741512795c258b3ba383a571a66850e8baac";
    gh.repo("k8snetworkplumbingwg/multus-cni")
        .tag("v4.3.0", sha)
        .file_at("v4.3.0", "deployments/x.yml", "x\n")
        .file_at("v4.3.0", "go.mod", "module m\n")
        .executable_at("v4.3.0", "hack/build-go.sh", "#!/bin/sh\n");
    let url = format!(
        "{}/k8snetworkplumbingwg/multus-cni/archive/refs/tags/v4.3.0.tar.gz",
        gh.server_url()
    );
    let bytes = get(&url).bytes().unwrap();
    let entries = gunzip_tar(&bytes);
    let (pax, kind, _, data) = &entries[0];
    assert_eq!(
        (pax.as_str(), *kind),
        ("pax_global_header", tar::EntryType::XGlobalHeader)
    );
    assert_eq!(String::from_utf8_lossy(data), format!("52 comment={sha}\n"));
    let listing: Vec<(&str, u32)> = entries[1..]
        .iter()
        .map(|(path, _, mode, _)| (path.as_str(), *mode))
        .collect();
    assert_eq!(
        listing,
        [
            ("multus-cni-4.3.0/", 0o775),
            ("multus-cni-4.3.0/deployments/", 0o775),
            ("multus-cni-4.3.0/deployments/x.yml", 0o664),
            ("multus-cni-4.3.0/go.mod", 0o664),
            ("multus-cni-4.3.0/hack/", 0o775),
            ("multus-cni-4.3.0/hack/build-go.sh", 0o775),
        ]
    );
    let files: BTreeMap<&str, &[u8]> = entries
        .iter()
        .map(|(path, _, _, data)| (path.as_str(), data.as_slice()))
        .collect();
    assert_eq!(files["multus-cni-4.3.0/go.mod"], b"module m\n");
    let log = gh.requests();
    assert_eq!(
        log.statuses("/k8snetworkplumbingwg/multus-cni/archive/"),
        [302]
    );
    assert_eq!(log.statuses("/_codeload/"), [200]);

    // The API's tarball_url gives git's legacy top directory, owner-repo-sha7.
    let legacy = get(&format!(
        "{}/repos/k8snetworkplumbingwg/multus-cni/tarball/v4.3.0",
        gh.api_url()
    ))
    .bytes()
    .unwrap();
    assert_eq!(
        gunzip_tar(&legacy)[1].0,
        "k8snetworkplumbingwg-multus-cni-db30741/"
    );
    let missing = format!(
        "{}/k8snetworkplumbingwg/multus-cni/archive/refs/tags/v9.tar.gz",
        gh.server_url()
    );
    assert_eq!(get(&missing).status(), 404);
}

#[test]
fn release_assets_download_with_their_sha256_sidecar() {
    let gh = GitHub::start();
    let archive = b"not really a tarball".to_vec();
    gh.repo("containernetworking/plugins")
        .release("v1.9.1", |r| {
            r.asset_with_sha256("cni-plugins-linux-amd64-v1.9.1.tgz", archive.clone())
        });
    let base = format!(
        "{}/containernetworking/plugins/releases/download/v1.9.1",
        gh.server_url()
    );
    let downloaded = get(&format!("{base}/cni-plugins-linux-amd64-v1.9.1.tgz"))
        .bytes()
        .unwrap();
    assert_eq!(downloaded.as_ref(), archive.as_slice());
    let sidecar = get(&format!("{base}/cni-plugins-linux-amd64-v1.9.1.tgz.sha256"))
        .text()
        .unwrap();
    assert_eq!(
        sidecar,
        format!(
            "{}  cni-plugins-linux-amd64-v1.9.1.tgz\n",
            sha256_hex(&archive)
        )
    );
    assert_eq!(get(&format!("{base}/nope.tgz")).status(), 404);
    assert_eq!(gh.requests().statuses(&base), [302, 302, 404]);
}

/// Sends `request` on a fresh connection and reads until the server closes it.
fn raw_http(base: &str, request: &str) -> String {
    let mut stream = TcpStream::connect(base.trim_start_matches("http://")).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

#[test]
fn one_connection_serves_several_requests_and_head_has_no_body() {
    let gh = GitHub::start();
    gh.repo("o/r").file_at("v1", "a.txt", "hello\n");
    let mut stream = TcpStream::connect(gh.raw_url().trim_start_matches("http://")).unwrap();
    stream
        .write_all(b"HEAD /o/r/v1/a.txt HTTP/1.1\r\nHost: x\r\n\r\nGET /o/r/v1/a.txt HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut reader = BufReader::new(stream);
    let mut read_head = || {
        let mut head = Vec::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                return head;
            }
            head.push(line.trim_end().to_string());
        }
    };
    let head = read_head();
    assert_eq!(head[0], "HTTP/1.1 200 OK");
    assert!(head.contains(&"content-length: 6".to_string()), "{head:?}");
    assert!(
        head.contains(&"connection: keep-alive".to_string()),
        "{head:?}"
    );
    let get = read_head();
    assert_eq!(get[0], "HTTP/1.1 200 OK", "the HEAD answer carried no body");
    let mut body = [0; 6];
    reader.read_exact(&mut body).unwrap();
    assert_eq!(&body, b"hello\n");
}

#[test]
fn malformed_requests_get_400() {
    let gh = GitHub::start();
    let response = raw_http(&gh.raw_url(), "garbage\r\n\r\n");
    assert!(response.starts_with("HTTP/1.1 400 "), "{response}");
}

#[test]
fn a_trickled_body_arrives_whole_and_slowly_and_every_request_is_kept() {
    let server = Server::start(|request| {
        Reply::bytes(200, "text/plain", request.path().as_bytes().to_vec())
            .paced(Pace::per_byte(Duration::from_millis(30)))
    });
    let started = Instant::now();
    let response = get(&format!("{}/abcdef?x=a+b&y=%2F", server.url()));
    assert_eq!(response.text().unwrap(), "/abcdef");
    assert!(started.elapsed() >= Duration::from_millis(7 * 30));
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].query_pairs(),
        [("x".into(), "a b".into()), ("y".into(), "/".into())]
    );
    assert_eq!(server.host(), server.url().trim_start_matches("http://"));
}

#[test]
fn lookalike_listeners_are_other_ports_behind_a_common_prefix() {
    let (short, long) = server::listen_lookalike();
    let (short, long) = (
        Server::serve(short, |_| Reply::new(204)),
        Server::serve(long, |_| Reply::new(204)),
    );
    assert!(
        long.url().starts_with(&short.url()),
        "{} {}",
        short.url(),
        long.url()
    );
    assert_ne!(long.url(), short.url());
    assert_eq!(get(&long.url()).status(), 204);
    assert_eq!((short.requests().len(), long.requests().len()), (0, 1));
}

#[test]
fn env_names_the_three_origins() {
    let gh = GitHub::start();
    let env: BTreeMap<&str, String> = gh.env().into_iter().collect();
    assert_eq!(env["GITHUB_API_URL"], gh.api_url());
    assert_eq!(env["GITHUB_SERVER_URL"], gh.server_url());
    assert_eq!(env["REVENDOR_RAW_URL"], gh.raw_url());
    let distinct: std::collections::BTreeSet<&String> = env.values().collect();
    assert_eq!(distinct.len(), 3);
}

#[test]
fn git_repos_hold_commits_and_every_kind_of_tag() {
    let repo = GitRepo::new();
    let first = repo.commit("first", [("deployments/x.yml", "one\n")]);
    repo.tag("v3.9").annotated_tag("v4.0.0-alpha", "alpha");
    let second = repo.commit(
        "second",
        [("deployments/x.yml", "two\n"), ("go.mod", "module m\n")],
    );
    repo.annotated_tag("v4.0.0", "Release v4.0.0");
    assert_ne!(first, second);
    assert_eq!(repo.rev_parse("v3.9"), first);
    assert_eq!(repo.rev_parse("v4.0.0-alpha"), first);
    assert_eq!(repo.rev_parse("v4.0.0"), second);
    assert_eq!(repo.git(&["cat-file", "-t", "v4.0.0"]), "tag");
    assert_eq!(repo.git(&["cat-file", "-t", "v3.9"]), "commit");

    // Fixed identities and dates: the same script gives the same ids anywhere.
    let again = GitRepo::new();
    assert_eq!(
        again.commit("first", [("deployments/x.yml", "one\n")]),
        first
    );

    // A clone through the file:// URL sees the tags.
    let clone = tempfile::tempdir().unwrap();
    let target = clone.path().join("c");
    repo.git(&["clone", "--quiet", &repo.url(), target.to_str().unwrap()]);
    let listed = repo.git(&["ls-remote", "--tags", &repo.url()]);
    for tag in [
        "refs/tags/v3.9",
        "refs/tags/v4.0.0-alpha^{}",
        "refs/tags/v4.0.0^{}",
    ] {
        assert!(listed.contains(tag), "{tag} in {listed}");
    }
    assert_eq!(
        std::fs::read(target.join("deployments/x.yml")).unwrap(),
        b"two\n"
    );

    repo.remove("go.mod");
    repo.commit("drop go.mod", Vec::<(&str, &str)>::new());
    assert!(repo.git(&["ls-files"]).lines().all(|f| f != "go.mod"));
}

#[test]
fn temp_packages_snapshot_and_list_files() {
    let package = TempPackage::new();
    package
        .write("vendor.toml", "[upstream]\n")
        .write("upstream/deployments/x.yml", b"x\n");
    assert_eq!(
        package.files(),
        ["upstream/deployments/x.yml", "vendor.toml"]
    );
    assert_eq!(package.dirs(), ["upstream", "upstream/deployments"]);
    let before = package.snapshot();
    assert_eq!(before["vendor.toml"], b"[upstream]\n");
    package.write("upstream/.tmp-1", "leftover");
    assert_ne!(package.snapshot(), before);
    package.remove("upstream/.tmp-1");
    assert_eq!(package.snapshot(), before);

    let copy = TempPackage::new();
    copy.copy_from(package.path(), "pkg");
    assert_eq!(copy.read_string("pkg/vendor.toml"), "[upstream]\n");
}

#[test]
fn synthetic_resolver_files_carry_the_values_given() {
    let gh = GitHub::start();
    realworld::register_talos(&gh, "v1.13.6", "v1.13.0-43-gd8c80cc", "v1.9.1");
    realworld::register_talos(&gh, "v1.13.0", "v1.13.0", "v1.9.0");
    realworld::register_kube_ovn(&gh, "v1.15.10", "v1.9.1");
    let raw = gh.raw_url();
    let makefile = get(&format!(
        "{raw}/siderolabs/talos/refs/tags/v1.13.6/Makefile"
    ))
    .text()
    .unwrap();
    assert!(makefile.lines().any(|l| l == "PKGS ?= v1.13.0-43-gd8c80cc"));
    assert!(
        makefile
            .lines()
            .any(|l| l == "PKGS_PREFIX ?= ghcr.io/siderolabs")
    );
    assert!(
        makefile
            .lines()
            .any(|l| l == "PKG_CNI ?= $(PKGS_PREFIX)/cni:$(PKGS)")
    );
    let pkgfile = get(&format!("{raw}/siderolabs/pkgs/d8c80cc/Pkgfile"))
        .text()
        .unwrap();
    assert!(pkgfile.lines().any(|l| l == "  cni_version: v1.9.1"));
    assert!(
        pkgfile
            .lines()
            .any(|l| l == "  flannel_cni_version: v1.9.1-flannel1")
    );
    let bare = get(&format!("{raw}/siderolabs/pkgs/v1.13.0/Pkgfile"))
        .text()
        .unwrap();
    assert!(bare.lines().any(|l| l == "  cni_version: v1.9.0"));
    let base = get(&format!(
        "{raw}/kubeovn/kube-ovn/refs/tags/v1.15.10/dist/images/Dockerfile.base"
    ))
    .text()
    .unwrap();
    assert!(base.lines().any(|l| l == "ARG CNI_PLUGINS_VERSION=v1.9.1"));
}

#[test]
fn realworld_multus_is_served_with_real_tags_dates_and_manifests() {
    let Some(rw) = Realworld::from_env() else {
        return;
    };
    let gh = GitHub::start();
    rw.register_multus(&gh);
    let api = gh.api_url();
    let recorded: Vec<Value> =
        serde_json::from_slice(&rw.read("multus-cni/releases.json")).unwrap();

    let mut served = Vec::new();
    let mut next = Some(format!("{api}/repos/{MULTUS_REPO}/releases?per_page=5"));
    while let Some(url) = next {
        let response = get(&url);
        next = link(&response, "next");
        served.extend(response.json::<Vec<Value>>().unwrap());
    }
    assert_eq!(served.len(), recorded.len());
    for (served, recorded) in served.iter().zip(&recorded) {
        for key in [
            "tag_name",
            "name",
            "draft",
            "prerelease",
            "created_at",
            "published_at",
            "id",
        ] {
            assert_eq!(
                served[key], recorded[key],
                "{key} of {}",
                recorded["tag_name"]
            );
        }
    }
    let latest = json(&format!("{api}/repos/{MULTUS_REPO}/releases/latest"));
    assert_eq!(
        latest["tag_name"],
        rw.fact_str(&["multus-cni", "newest-release"])
    );

    for version in MULTUS_VERSIONS {
        let url = format!(
            "{}/{MULTUS_REPO}/refs/tags/{version}/{MULTUS_MANIFEST}",
            gh.raw_url()
        );
        assert_eq!(
            get(&url).bytes().unwrap().as_ref(),
            rw.multus_manifest(version).as_slice()
        );
        let commit = json(&format!("{api}/repos/{MULTUS_REPO}/commits/{version}"));
        assert_eq!(commit["sha"].as_str(), rw.multus_commit(version).as_deref());
    }
    let master = get(&format!(
        "{}/{MULTUS_REPO}/master/{MULTUS_MANIFEST}",
        gh.raw_url()
    ));
    assert_eq!(
        master.bytes().unwrap().as_ref(),
        rw.unreleased_manifest().as_slice()
    );

    rw.publish_unreleased(&gh, "v4.4.0");
    let latest = json(&format!("{api}/repos/{MULTUS_REPO}/releases/latest"));
    assert_eq!(latest["tag_name"], "v4.4.0");
    let archive = get(&format!(
        "{}/{MULTUS_REPO}/archive/refs/tags/v4.4.0.tar.gz",
        gh.server_url()
    ))
    .bytes()
    .unwrap();
    let entries = gunzip_tar(&archive);
    let manifest = entries
        .iter()
        .find(|(path, ..)| *path == format!("multus-cni-4.4.0/{MULTUS_MANIFEST}"))
        .expect("the manifest in the archive");
    assert_eq!(manifest.3, rw.unreleased_manifest());
}

#[test]
fn realworld_resolvers_serve_the_facts() {
    let Some(rw) = Realworld::from_env() else {
        return;
    };
    let gh = GitHub::start();
    rw.register_all_talos(&gh);
    let raw = gh.raw_url();
    for (talos, cni) in rw.fact_map(&["talos", "cni-by-talos"]) {
        let makefile = get(&format!(
            "{raw}/siderolabs/talos/refs/tags/{talos}/Makefile"
        ))
        .text()
        .unwrap();
        let pkgs = makefile
            .lines()
            .find_map(|l| l.strip_prefix("PKGS ?= "))
            .expect("a PKGS line");
        assert_eq!(pkgs, rw.pkgs_for_talos(&talos));
        let pkgs_ref = pkgs.rsplit_once("-g").map_or(pkgs, |(_, abbrev)| abbrev);
        let pkgfile = get(&format!("{raw}/siderolabs/pkgs/{pkgs_ref}/Pkgfile"))
            .text()
            .unwrap();
        assert!(
            pkgfile
                .lines()
                .any(|l| l == format!("  cni_version: {cni}")),
            "{talos}"
        );
    }
    let stable = json(&format!(
        "{}/repos/siderolabs/talos/releases/latest",
        gh.api_url()
    ));
    assert_eq!(stable["tag_name"], rw.fact_str(&["talos", "newest-stable"]));

    for (version, cni) in rw.fact_map(&["kube-ovn", "cni-by-kube-ovn"]) {
        rw.register_kube_ovn(&gh, &version);
        let url = format!("{raw}/kubeovn/kube-ovn/refs/tags/{version}/dist/images/Dockerfile.base");
        let text = get(&url).text().unwrap();
        assert!(
            text.lines()
                .any(|l| l == format!("ARG CNI_PLUGINS_VERSION={cni}"))
        );
    }

    let pinned = rw.fact_str(&["cni-plugins", "pinned"]).to_string();
    rw.register_cni_plugins(&gh, &pinned);
    for arch in realworld::ARCHES {
        let name = realworld::cni_plugins_asset(arch, &pinned);
        let key = format!("sha256-{arch}-{}", pinned.replace('.', "-"));
        let url = format!(
            "{}/containernetworking/plugins/releases/download/{pinned}/{name}.sha256",
            gh.server_url()
        );
        assert_eq!(
            get(&url).text().unwrap(),
            sha256_sidecar(rw.fact_str(&["cni-plugins", &key]), &name)
        );
    }
}

#[test]
fn git_repos_clone_over_smart_http_from_the_server_origin() {
    let gh = GitHub::start();
    let upstream = GitRepo::new();
    let commit = upstream.commit("first", [("deployments/x.yml", "one\n")]);
    upstream.annotated_tag("v4.3.0", "Release v4.3.0");
    gh.repo("o/r").serve_git(&upstream);
    let url = format!("{}/o/r.git", gh.server_url());

    // The git CLI (protocol v2, possibly with gzip-compressed negotiation).
    let listed = upstream.git(&["ls-remote", "--tags", &url]);
    assert!(
        listed.contains(&format!("{commit}\trefs/tags/v4.3.0^{{}}")),
        "{listed}"
    );
    let clones = tempfile::tempdir().unwrap();
    let by_cli = clones.path().join("cli");
    upstream.git(&["clone", "--quiet", &url, by_cli.to_str().unwrap()]);
    assert_eq!(
        std::fs::read(by_cli.join("deployments/x.yml")).unwrap(),
        b"one\n"
    );

    // libgit2 as the tool links it speaks http only through the tool's transport, inside a
    // fetch: `net.rs` fetches a git upstream through it end to end, from this same server.
    let log = gh.requests();
    assert!(log.count("/o/r.git/info/refs?service=git-upload-pack") >= 1);
    assert!(
        log.matching("/o/r").iter().all(|r| r.status == 200),
        "{log:?}"
    );
    assert_eq!(
        get(&format!("{}/o/missing.git/info/refs", gh.server_url())).status(),
        404
    );
}

/// The trees API names what git names: the root tree id, every entry's mode, type and id, in
/// git's order, as `git ls-tree -r -t` prints them for the same files committed with real git.
#[test]
fn git_trees_answer_as_git_itself_hashes_the_commit() {
    let files: [(&str, &[u8]); 5] = [
        ("charts/x/values.yaml", b"a: 1\n"),
        ("charts/x/templates/a.yaml", b"kind: A\n"),
        ("charts/x-y.txt", b"sorts before charts/x/ in git\n"),
        ("README.md", b"# r\n"),
        ("run.sh", b"#!/bin/sh\n"),
    ];
    let git = GitRepo::new();
    git.commit("files", files);
    std::os::unix::fs::symlink("README.md", git.path().join("link")).unwrap();
    let run = git.path().join("run.sh");
    let mut perms = std::fs::metadata(&run).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&run, perms).unwrap();
    git.commit("mode and link", std::iter::empty::<(&str, &[u8])>());

    let gh = GitHub::start();
    let repo = gh.repo("o/r");
    for (path, bytes) in files.iter().filter(|(p, _)| *p != "run.sh") {
        repo.file_at("v1", path, *bytes);
    }
    repo.executable_at("v1", "run.sh", &b"#!/bin/sh\n"[..])
        .symlink_at("v1", "link", "README.md");

    let tree = json(&format!(
        "{}/repos/o/r/git/trees/v1?recursive=1",
        gh.api_url()
    ));
    let ours: Vec<String> = tree["tree"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{} {} {}\t{}",
                e["mode"].as_str().unwrap(),
                e["type"].as_str().unwrap(),
                e["sha"].as_str().unwrap(),
                e["path"].as_str().unwrap()
            )
        })
        .collect();
    let theirs: Vec<String> = git
        .git(&["ls-tree", "-r", "-t", "HEAD"])
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(ours, theirs);
    assert_eq!(tree["sha"], git.git(&["rev-parse", "HEAD^{tree}"]).trim());
    assert_eq!(tree["truncated"], false);

    // One level without `recursive`, a subtree by its id, and the limit.
    let top = json(&format!("{}/repos/o/r/git/trees/v1", gh.api_url()));
    let charts = top["tree"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"] == "charts")
        .unwrap()
        .clone();
    assert_eq!(top["tree"].as_array().unwrap().len(), 4);
    let sub = json(&format!(
        "{}/repos/o/r/git/trees/{}",
        gh.api_url(),
        charts["sha"].as_str().unwrap()
    ));
    assert_eq!(sub["sha"], git.git(&["rev-parse", "HEAD:charts"]).trim());
    gh.truncate_trees(2);
    let cut = json(&format!(
        "{}/repos/o/r/git/trees/v1?recursive=1",
        gh.api_url()
    ));
    assert_eq!(cut["truncated"], true);
    assert_eq!(cut["tree"].as_array().unwrap().len(), 2);
    assert_eq!(
        get(&format!("{}/repos/o/r/git/trees/nope", gh.api_url())).status(),
        404
    );
}
