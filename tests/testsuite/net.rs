//! The one HTTP transport, end to end through the real binary and the GitHub stand-in: the
//! deadline covers the body, plain http goes only to loopback on every hop, the token goes only
//! to its own origin, and an error body that echoes the request never shows the token. The
//! faults of issue 13: a connection dropped mid-body, 500s then success, a redirect loop (and
//! a body slower than the timeout, above): bounded retries with backoff, then exit 3 naming
//! the URL.
//! A `git =` upstream over http obeys the same rules: fetched over smart HTTP through the same
//! transport, a server that never answers is the same timeout (exit 3 in `update`,
//! `unreachable` in `check --online`), a redirect to plain http elsewhere the same refusal.
//! (The registry side of the same rules is in `registry.rs`; the https→http policy, which needs
//! an https server, is unit-tested in `net::origin`.)

use crate::support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use support::github::Origin;
use support::{GitHub, GitRepo, Revendor, TempPackage};

const REPO: &str = "example/app";
const FILE: &str = "deploy/app.yml";
const RELEASES: &str = "/repos/example/app/releases";
pub(crate) const TOKEN: &str = "secret-token-0123456789";

/// `example/app` with `deploy/app.yml` and a release at each of `tags` (also for `tls.rs`).
pub(crate) fn upstream(gh: &GitHub, tags: &[&str]) {
    for tag in tags {
        gh.repo(REPO)
            .file_at(tag, FILE, format!("kind: ConfigMap # {tag}\n"))
            .release(tag, |r| r);
    }
}

/// A package vendoring `deploy/app.yml` of `example/app` at v1.0.0, tracking 1.x.
pub(crate) fn package() -> TempPackage {
    let pkg = TempPackage::new();
    pkg.write(
        "vendor.toml",
        format!(
            "[upstream]\ngithub = \"{REPO}\"\nversion = \"v1.0.0\"\ntrack = \">=1.0.0, <2.0.0\"\n\n\
             [[vendor]]\nfrom = \"{FILE}\"\nto = \"templates/app.yml\"\n"
        ),
    );
    pkg
}

#[test]
fn a_body_that_trickles_past_the_deadline_is_retried_then_named() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0", "v1.1.0"]);
    // A releases page is hundreds of bytes: at one byte per 100 ms it would take a minute.
    gh.trickle_next(RELEASES, Duration::from_millis(100), 100);
    let pkg = package();
    let rv = Revendor::new(pkg.path(), &gh).env("REVENDOR_HTTP_TIMEOUT", "0.5");
    // The message, not a time bound, shows each attempt cut at its deadline:
    // the whole page would have arrived after a minute, and no error.
    let out = rv.run(&["update", "--dry-run"]).expect(3);
    assert!(
        out.stderr.contains(&format!(
            "failed to fetch `{}{RELEASES}?per_page=100`: timed out after 0.5s, body included (4 attempts)",
            gh.api_url()
        )),
        "{}",
        out.stderr
    );
    assert_eq!(gh.requests().count(RELEASES), 4, "1 try + 3 retries");
}

#[test]
fn a_redirect_from_loopback_to_plain_http_elsewhere_is_refused() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0", "v1.1.0"]);
    gh.redirect_next(RELEASES, "http://example.invalid", 1);
    let pkg = package();
    let out = Revendor::new(pkg.path(), &gh)
        .run(&["update", "--dry-run"])
        .expect(3);
    assert!(
        out.stderr.contains(&format!(
            "refusing the redirect from `{}{RELEASES}?per_page=100` to \
             `http://example.invalid{RELEASES}?per_page=100`: plain http outside loopback is refused",
            gh.api_url()
        )),
        "{}",
        out.stderr
    );
    assert_eq!(
        gh.requests().statuses(RELEASES),
        [302],
        "refused, not retried"
    );
}

#[test]
fn the_token_never_reaches_a_lookalike_origin_by_link_or_redirect() {
    let gh = GitHub::start_with_lookalike();
    let lookalike = gh.lookalike_url();
    assert!(lookalike.starts_with(&gh.api_url()) && lookalike != gh.api_url());
    let tags: Vec<String> = (0..130).map(|i| format!("v1.{i}.0")).collect();
    upstream(&gh, &tags.iter().map(String::as_str).collect::<Vec<_>>());
    gh.accept_token(TOKEN);
    gh.link_base(&lookalike);
    let pkg = package();
    let rv = Revendor::new(pkg.path(), &gh).env("GITHUB_TOKEN", TOKEN);
    let check = |what: &str| {
        let reqs = gh.requests();
        let (away, home): (Vec<_>, Vec<_>) = reqs
            .iter()
            .filter(|r| matches!(r.origin, Origin::Api | Origin::Lookalike))
            .partition(|r| r.origin == Origin::Lookalike);
        assert!(!away.is_empty(), "{what}: {:?}", reqs.targets());
        assert!(
            away.iter().all(|r| !r.authorization_sent),
            "{what}: the lookalike got the token"
        );
        assert!(
            home.iter().all(|r| r.authorization_sent),
            "{what}: the API did not"
        );
    };

    // Page 2 of the releases is linked on the lookalike.
    let out = rv.run(&["update", "--dry-run"]).expect(0);
    assert!(out.stdout.contains("-> v1.129.0"), "{}", out.stdout);
    check("next link");

    // The first page redirects there too.
    gh.clear_requests();
    gh.redirect_next(RELEASES, &lookalike, 1);
    let out = rv.run(&["update", "--dry-run"]).expect(0);
    assert!(out.stdout.contains("-> v1.129.0"), "{}", out.stdout);
    assert_eq!(gh.requests().statuses(&gh.api_url())[0], 302);
    check("redirect");
}

#[test]
fn error_bodies_that_echo_the_request_never_show_the_token() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0", "v1.1.0"]);
    let pkg = package();
    let rv = Revendor::new(pkg.path(), &gh).env("GITHUB_TOKEN", TOKEN);
    for status in [400, 401, 403, 422] {
        for json in [true, false] {
            gh.echo_next(RELEASES, status, json, 1);
            let out = rv.run(&["update", "--dry-run"]).expect(3);
            let case = format!("{status} json={json}:\n{}", out.stderr);
            assert!(!out.all().contains("secret-token"), "{case}");
            assert!(out.stderr.contains(&format!("answered {status}")), "{case}");
            if json {
                // The recognized message is shown, scrubbed.
                assert!(
                    out.stderr.contains("authorization: Bearer <redacted>"),
                    "{case}"
                );
            } else {
                // A body of no known format is not shown at all.
                assert!(!out.stderr.contains("user-agent"), "{case}");
            }
        }
    }
}

/// Issue 13: a connection dropped halfway through the body (its `Content-Length` announcing
/// more) is retried like a refused one, and the retry's whole body is what gets vendored.
#[test]
fn a_connection_dropped_mid_body_is_retried_then_the_file_is_whole() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0", "v1.1.0"]);
    let raw = format!("{}/{REPO}/", gh.raw_url());
    gh.cut_next(&raw, 2);
    let pkg = package();
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update"]).expect(0);
    assert_eq!(
        pkg.read_string("templates/app.yml"),
        "kind: ConfigMap # v1.1.0\n"
    );
    // v1.0.0's file cut twice then whole, then v1.1.0's.
    assert_eq!(gh.requests().count(&raw), 4);
}

/// Issue 13: a body cut short on every attempt ends with exit 3 naming the URL, after the
/// bounded retries, and nothing written.
#[test]
fn a_connection_dropped_mid_body_every_time_exits_3_naming_the_url() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0", "v1.1.0"]);
    let raw = format!("{}/{REPO}/", gh.raw_url());
    gh.cut_next(&raw, 100);
    let pkg = package();
    let before = pkg.snapshot();
    let out = Revendor::new(pkg.path(), &gh).run(&["update"]).expect(3);
    assert!(
        out.stderr.contains(&format!(
            "failed to fetch `{raw}refs/tags/v1.0.0/{FILE}`: transfer failed"
        )),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("(on all 4 attempts)"), "{}", out.stderr);
    assert_eq!(gh.requests().count(&raw), 4, "1 try + 3 retries");
    assert_eq!(pkg.snapshot(), before);
}

/// Issue 13: 500s are retried with backoff (0.25 s, doubling), then the answer that comes is
/// used; 500s on every attempt end with exit 3 naming the URL.
#[test]
fn server_errors_are_retried_with_backoff_then_named() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0", "v1.1.0"]);
    gh.fail_next(RELEASES, 500, 2);
    let pkg = package();
    let rv = Revendor::new(pkg.path(), &gh);
    let out = rv.run(&["update", "--dry-run"]).expect(0);
    assert!(out.stdout.contains("-> v1.1.0"), "{}", out.stdout);
    let reqs = gh.requests();
    assert_eq!(reqs.statuses(RELEASES), [500, 500, 200]);
    let gaps = reqs.gaps(RELEASES);
    assert!(
        gaps[0] >= Duration::from_millis(250) && gaps[1] >= Duration::from_millis(500),
        "waits of 0.25 s then 0.5 s: {gaps:?}"
    );

    gh.clear_requests();
    gh.fail_next(RELEASES, 500, 100);
    let out = rv.run(&["update", "--dry-run"]).expect(3);
    assert!(
        out.stderr.contains(&format!(
            "`{}{RELEASES}?per_page=100` answered 500",
            gh.api_url()
        )),
        "{}",
        out.stderr
    );
    let reqs = gh.requests();
    assert_eq!(reqs.statuses(RELEASES), [500; 4], "1 try + 3 retries");
    let gaps = reqs.gaps(RELEASES);
    assert!(
        gaps.windows(2).all(|w| w[1] > w[0]) && gaps[2] >= Duration::from_secs(1),
        "waits of 0.25, 0.5 and 1 s: {gaps:?}"
    );
}

/// Issue 13: a redirect loop is followed a bounded number of hops, never retried (another
/// attempt meets the same loop), and ends with exit 3 naming the URL.
#[test]
fn a_redirect_loop_is_bounded_and_named() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0", "v1.1.0"]);
    // Every hop answers 302 to itself.
    gh.redirect_next(RELEASES, &gh.api_url(), 1000);
    let pkg = package();
    let out = Revendor::new(pkg.path(), &gh)
        .run(&["update", "--dry-run"])
        .expect(3);
    assert!(
        out.stderr.contains(&format!(
            "failed to fetch `{}{RELEASES}?per_page=100`",
            gh.api_url()
        )),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("too many redirects"), "{}", out.stderr);
    assert_eq!(
        gh.requests().statuses(RELEASES),
        [302; 10],
        "10 hops, one attempt"
    );
}

/// issue 21: an expired token (the API answers 401 `Bad credentials`) does not blind the
/// nightly check: the offline findings are all there in every format, the refusal is the
/// finding `unreachable` whose fix names the token variables, the exit code is 3, and the token
/// is never printed.
#[test]
fn a_refused_token_is_an_unreachable_finding_beside_every_other_one() {
    let gh = GitHub::start();
    upstream(&gh, &["v1.0.0", "v1.1.0"]);
    let pkg = package();
    Revendor::new(pkg.path(), &gh)
        .run(&["update", "--to", "v1.0.0"])
        .expect(0);
    pkg.write("templates/app.yml", "kind: ConfigMap # edited\n");
    gh.accept_token(TOKEN);
    let expired = "expired-token-9876543210";
    let rv = Revendor::new(pkg.path(), &gh).env("GITHUB_TOKEN", expired);
    for format in ["human", "json", "github"] {
        let run = rv.run(&["--format", format, "check", "--online"]).expect(3);
        let all = run.all();
        assert!(!all.contains(expired), "{format}: {all}");
        for word in [
            "render-drift",
            "unreachable",
            "401",
            "GITHUB_TOKEN (or GH_TOKEN)",
        ] {
            assert!(
                run.stdout.contains(word),
                "{format}: {word}\n{}",
                run.stdout
            );
        }
        if format == "json" {
            let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
            let findings = doc["findings"].as_array().unwrap();
            let refused = findings.iter().find(|f| f["id"] == "unreachable").unwrap();
            assert!(
                refused["fix"].as_str().unwrap().contains("GITHUB_TOKEN"),
                "{refused}"
            );
        }
    }
}

/// The git upstream of these tests, v1.0.0 and v1.1.0, served over smart HTTP at
/// `{server}/example/app.git`.
fn git_upstream(gh: &GitHub) -> GitRepo {
    let repo = GitRepo::new();
    for tag in ["v1.0.0", "v1.1.0"] {
        repo.commit(tag, [(FILE, format!("kind: ConfigMap # {tag}\n"))]);
        repo.tag(tag);
    }
    gh.repo(REPO).serve_git(&repo);
    repo
}

fn git_package(url: &str) -> TempPackage {
    let pkg = TempPackage::new();
    pkg.write(
        "vendor.toml",
        format!(
            "[upstream]\ngit = \"{url}\"\nversion = \"v1.0.0\"\ntrack = \">=1.0.0, <2.0.0\"\n\n\
             [[vendor]]\nfrom = \"{FILE}\"\nto = \"templates/app.yml\"\n"
        ),
    );
    pkg
}

const GIT_REFS: &str = "/example/app.git/info/refs?service=git-upload-pack";

#[test]
fn a_git_upstream_over_http_is_fetched_through_the_transport() {
    let gh = GitHub::start();
    let _repo = git_upstream(&gh);
    let pkg = git_package(&format!("{}/example/app.git", gh.server_url()));
    let out = Revendor::new(pkg.path(), &gh)
        .run(&["-v", "update"])
        .expect(0);
    assert_eq!(
        pkg.read_string("templates/app.yml"),
        "kind: ConfigMap # v1.1.0\n"
    );
    // `-v` names each request the transport sent: the git ones too.
    let refs = format!("GET {}{GIT_REFS}", gh.server_url());
    assert!(out.stderr.contains(&refs), "{}", out.stderr);
    let log = gh.requests();
    assert!(
        log.count("/example/app.git/git-upload-pack") >= 1,
        "{log:?}"
    );
}

#[test]
fn a_git_upstream_redirected_to_plain_http_elsewhere_is_refused() {
    let gh = GitHub::start();
    let _repo = git_upstream(&gh);
    gh.redirect_next(GIT_REFS, "http://0.0.0.0:9", 1);
    let pkg = git_package(&format!("{}/example/app.git", gh.server_url()));
    let out = Revendor::new(pkg.path(), &gh).run(&["update"]).expect(3);
    assert!(
        out.stderr.contains(&format!(
            "refusing the redirect from `{}{GIT_REFS}` to `http://0.0.0.0:9{GIT_REFS}`: \
             plain http outside loopback is refused",
            gh.server_url()
        )),
        "{}",
        out.stderr
    );
    assert_eq!(
        gh.requests().statuses(GIT_REFS),
        [302],
        "refused, not retried"
    );
}

/// A server on 127.0.0.1 that accepts every connection and never answers; counts them.
fn silent_server() -> (String, Arc<AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/app.git", listener.local_addr().unwrap());
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&accepted);
    let held = Mutex::new(Vec::new());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            count.fetch_add(1, Ordering::SeqCst);
            held.lock().unwrap().push(stream);
        }
    });
    (url, accepted)
}

#[test]
fn a_silent_git_server_times_out_as_a_github_request_does() {
    const TIMEOUT: f64 = 1.0;
    // The transport's own worst case for one request: 4 attempts of the timeout and backoffs
    // of 0.25 + 0.5 + 1 s; the margin is for a loaded machine.
    let bound = Duration::from_secs_f64(4.0 * TIMEOUT + 1.75 + 5.0);
    let gh = GitHub::start();
    let _repo = git_upstream(&gh);
    let served = format!("{}/example/app.git", gh.server_url());
    let pkg = git_package(&served);
    let rv = Revendor::new(pkg.path(), &gh).env("REVENDOR_HTTP_TIMEOUT", "1");
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);

    // The same package, its upstream now a server that never answers.
    let (silent, accepted) = silent_server();
    for file in ["vendor.toml", "upstream/lock.toml"] {
        let text = pkg.read_string(file).replace(&served, &silent);
        pkg.write(file, text);
    }
    let refs = format!("{silent}/info/refs?service=git-upload-pack");

    let started = Instant::now();
    let out = rv.run(&["update"]).expect(3);
    let took = started.elapsed();
    assert!(took < bound, "update took {took:?}");
    assert!(
        out.stderr.contains(&format!(
            "failed to fetch `{refs}`: timed out after 1s, body included (4 attempts)"
        )),
        "{}",
        out.stderr
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 4, "1 try + 3 retries");

    let started = Instant::now();
    let out = rv.run(&["check", "--online", "--format", "json"]).expect(3);
    let took = started.elapsed();
    assert!(took < bound, "check --online took {took:?}");
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let unreachable: Vec<&serde_json::Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "unreachable")
        .collect();
    assert_eq!(unreachable.len(), 1, "{}", out.stdout);
    let message = unreachable[0]["message"].as_str().unwrap();
    assert!(
        message.contains("upstream-newer could not list the releases")
            && message.contains(&format!("failed to fetch `{refs}`: timed out")),
        "{message}"
    );
}

/// issue 21: a 304 for page 1 of the releases that carries no `Link` (a proxy or mirror
/// dropped it) still leads to page 2: the client answers with the `Link` it stored with the
/// body.
#[test]
fn issue21_a_304_without_link_still_leads_to_the_next_page() {
    let gh = GitHub::start();
    let tags: Vec<String> = (0..130).map(|i| format!("v1.{i}.0")).collect();
    upstream(&gh, &tags.iter().map(String::as_str).collect::<Vec<_>>());
    let pkg = package();
    let rv = Revendor::new(pkg.path(), &gh);
    // Newest first: v1.5.0 is on page 2.
    rv.run(&["update", "--dry-run", "--to", "v1.5.0"]).expect(0);
    let page1 = format!("{RELEASES}?per_page=100");
    gh.respond_next(&page1, support::server::Response::new(304), 1);
    rv.run(&["update", "--dry-run", "--to", "v1.5.0"]).expect(0);
    let log = gh.requests();
    let page2 = log
        .targets()
        .into_iter()
        .filter(|t| t.ends_with("&page=2"))
        .count();
    assert_eq!(page2, 2, "both runs read page 2: {:?}", log.targets());
}
