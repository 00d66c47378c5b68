//! Tests of the test harness itself: the GitHub stand-in, git repositories, packages.

mod support;

use support::GitHub;

#[test]
fn starts() {
    let gh = GitHub::start();
    assert!(gh.api_url().starts_with("http://127.0.0.1:"));
}
