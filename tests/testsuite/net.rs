//! The one HTTP transport, end to end through the real binary and the GitHub stand-in: the
//! deadline covers the body, plain http goes only to loopback on every hop, the token goes only
//! to its own origin, and an error body that echoes the request never shows the token.
//! (The registry side of the same rules is in `registry.rs`; the https→http policy, which needs
//! an https server, is unit-tested in `net::origin`.)

use crate::support;

use std::time::{Duration, Instant};

use support::github::Origin;
use support::{GitHub, Revendor, TempPackage};

const REPO: &str = "example/app";
const FILE: &str = "deploy/app.yml";
const RELEASES: &str = "/repos/example/app/releases";
const TOKEN: &str = "secret-token-0123456789";

fn upstream(gh: &GitHub, tags: &[&str]) {
    for tag in tags {
        gh.repo(REPO)
            .file_at(tag, FILE, format!("kind: ConfigMap # {tag}\n"))
            .release(tag, |r| r);
    }
}

fn package() -> TempPackage {
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
    let started = Instant::now();
    let out = rv.run(&["update", "--dry-run"]).expect(3);
    let took = started.elapsed();
    // Four attempts of 0.5 s and backoffs of 0.25 + 0.5 + 1 s, with room for a slow machine.
    assert!(took < Duration::from_secs(15), "took {took:?}");
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
