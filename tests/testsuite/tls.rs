//! HTTPS end to end: the real binary makes real TLS handshakes with the GitHub stand-in served
//! over TLS, its certificate signed by a CA made in the test. A run trusts that CA the way a
//! user on Linux does (`SSL_CERT_FILE`), vendors over https with its token, and a run that
//! trusts another CA refuses the server in one line, exit 3, without sending the token. A
//! binary without a working TLS stack (no crypto provider, no roots loaded) fails the first.

use crate::support;

use crate::net::{TOKEN, package, upstream};
use support::tls::TestCa;
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
