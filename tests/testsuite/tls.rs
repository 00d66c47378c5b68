//! HTTPS end to end: the real binary makes real TLS handshakes with the GitHub stand-in served
//! over TLS, its certificate signed by a CA made in the test. A run trusts that CA the way a
//! user on Linux does (`SSL_CERT_FILE`), vendors over https with its token, and a run that
//! trusts another CA refuses the server in one line, exit 3, without sending the token. A
//! binary without a working TLS stack (no crypto provider, no roots loaded) fails the first.

use crate::support;

use crate::net::{TOKEN, package, upstream};
use support::tls::{Leaf, TestCa};
use support::{GitHub, Revendor};

#[test]
fn an_update_over_https_trusts_the_ca_in_ssl_cert_file_and_sends_the_token() {
    let ca = TestCa::new("revendor test CA");
    let gh = GitHub::start_tls(&ca);
    assert!(gh.api_url().starts_with("https://127.0.0.1:"));
    upstream(&gh, &["v1.0.0", "v1.1.0"]);
    let pkg = package();
    let (key, file) = ca.trust();
    let out = Revendor::new(pkg.path(), &gh)
        .env(key, &file)
        .env("GITHUB_TOKEN", TOKEN)
        .run(&["update"])
        .expect(0);
    assert!(!out.all().contains(TOKEN), "{}", out.all());
    assert_eq!(pkg.read("templates/app.yml"), b"kind: ConfigMap # v1.1.0\n");
    let requests = gh.requests();
    assert!(
        requests.iter().any(|r| r.authorization_sent),
        "the token went to its own origin over TLS: {:?}",
        requests.targets()
    );
}

#[test]
fn a_certificate_from_an_untrusted_ca_is_refused_in_one_line_without_the_token() {
    let ca = TestCa::new("revendor test CA");
    let other = TestCa::new("another CA");
    let gh = GitHub::start_tls(&ca);
    upstream(&gh, &["v1.0.0", "v1.1.0"]);
    let pkg = package();
    let (key, file) = other.trust();
    let out = Revendor::new(pkg.path(), &gh)
        .env(key, &file)
        .env("GITHUB_TOKEN", TOKEN)
        .run(&["update", "--dry-run"])
        .expect(3);
    // One error line naming the URL and why, one help line naming how to trust a CA; and no
    // retries: the next attempt would be shown the same certificate.
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", out.stderr);
    assert!(
        lines[0].starts_with(&format!("error: failed to fetch `{}/", gh.api_url())),
        "{}",
        out.stderr
    );
    assert!(
        lines[0].ends_with(
            ": the server's certificate is not trusted (signed by a CA not trusted here)"
        ),
        "{}",
        out.stderr
    );
    assert!(
        lines[1].starts_with("  help: ") && lines[1].contains("SSL_CERT_FILE"),
        "{}",
        out.stderr
    );
    assert!(!out.all().contains(TOKEN), "{}", out.all());
    assert!(
        gh.requests().is_empty(),
        "no request reached the server: {:?}",
        gh.requests().targets()
    );
}

/// The stand-in serving `leaf`, signed by a CA the run trusts: the run's stderr, which exits
/// 3 with no request having reached the server and no retry.
fn refused(leaf: Leaf) -> (GitHub, String) {
    let ca = TestCa::with_leaf("revendor test CA", leaf);
    let gh = GitHub::start_tls(&ca);
    upstream(&gh, &["v1.0.0", "v1.1.0"]);
    let pkg = package();
    let (key, file) = ca.trust();
    let out = Revendor::new(pkg.path(), &gh)
        .env(key, &file)
        .run(&["update", "--dry-run"])
        .expect(3);
    assert_eq!(out.stderr.lines().count(), 2, "{}", out.stderr);
    assert!(gh.requests().is_empty(), "{:?}", gh.requests().targets());
    (gh, out.stderr)
}

/// An expired certificate from a trusted CA is refused in one line that says it expired, and
/// the hint names the clock, which is as often the cause as the server.
#[test]
fn an_expired_certificate_is_refused_saying_so() {
    let (gh, stderr) = refused(Leaf::Expired);
    let first = stderr.lines().next().unwrap();
    assert!(
        first.starts_with(&format!("error: failed to fetch `{}/", gh.api_url()))
            && first.contains("the server's certificate is not trusted (")
            && first.contains("expired"),
        "{stderr}"
    );
    assert!(stderr.contains("clock"), "{stderr}");
}

/// A certificate from a trusted CA for another name than the URL's is refused in one line
/// naming both, and the hint names the URL's host as the thing to check.
#[test]
fn a_certificate_for_another_name_is_refused_naming_it() {
    let (_gh, stderr) = refused(Leaf::OtherName);
    let first = stderr.lines().next().unwrap();
    assert!(
        first.contains("the server's certificate is not trusted (")
            && first.contains("other.example")
            && first.contains("127.0.0.1"),
        "{stderr}"
    );
    assert!(stderr.contains("another name"), "{stderr}");
}

/// A trusted server redirects to one whose certificate is not trusted (a release asset's
/// storage host, say): the error names the URL asked for and the host it was redirected to,
/// without the rest of that URL, and the token never leaves for the other origin.
#[test]
fn a_redirect_to_an_untrusted_server_names_the_host_it_went_to() {
    let ca = TestCa::new("revendor test CA");
    let gh = GitHub::start_tls(&ca);
    let elsewhere = GitHub::start_tls(&TestCa::new("another CA"));
    upstream(&gh, &["v1.0.0", "v1.1.0"]);
    gh.redirect_next("/repos/example/app/releases", &elsewhere.api_url(), 1);
    let pkg = package();
    let (key, file) = ca.trust();
    let out = Revendor::new(pkg.path(), &gh)
        .env(key, &file)
        .env("GITHUB_TOKEN", TOKEN)
        .run(&["update", "--dry-run"])
        .expect(3);
    let host = elsewhere.api_url().replace("https://", "");
    let first = out.stderr.lines().next().unwrap();
    assert!(
        first.starts_with(&format!("error: failed to fetch `{}/repos/", gh.api_url()))
            && first.contains("(signed by a CA not trusted here, at `")
            && first.contains(&format!("at `{host}`, where the request was redirected)")),
        "{}",
        out.stderr
    );
    assert!(!out.all().contains(TOKEN), "{}", out.all());
    assert!(elsewhere.requests().is_empty());
}
