//! Issue 20, item 8: a package whose committed files are another release's than vendor.toml's
//! `version` says (cozystack's kamaji: `26.3.6-edge` over 26.3.5-edge's charts). Adopting it
//! refuses the files as hand edits, and says which release near `version` they match, or
//! how many it checked. The real binary against the GitHub stand-in.

use crate::support;

use support::{GitHub, Revendor, TempPackage, app};

const OUT: &str = "templates/app.yml";

/// Five releases upstream; a package that says v1.3.0 over the file as it renders at
/// `committed_at`.
fn setup(committed_at: &str) -> (GitHub, TempPackage) {
    let gh = GitHub::start();
    app::serve(&gh, &["v1.0.0", "v1.1.0", "v1.2.0", "v1.3.0", "v1.4.0"]);
    let pkg = app::package("v1.3.0");
    pkg.write(OUT, app::rendered(committed_at));
    (gh, pkg)
}

#[test]
fn committed_files_of_an_older_release_are_named_with_what_to_do_issue_20() {
    let (gh, pkg) = setup("v1.1.0");
    let rv = Revendor::new(pkg.path(), &gh);
    let before = pkg.snapshot();
    let out = rv.run(&["update", "--to", "v1.3.0"]).expect(1);
    assert!(
        out.stderr.contains("hand edit")
            && out.stderr.contains(
                "the committed files match github:example/app v1.1.0 exactly, not v1.3.0: \
                 set `version = \"v1.1.0\"` in vendor.toml:3, then run `revendor update --to v1.3.0` \
                 (it adopts at v1.1.0, then moves to v1.3.0)"
            ),
        "{}",
        out.stderr
    );
    // Nearest first: v1.2.0, v1.4.0, then v1.1.0, which matches; v1.0.0 is not tried.
    for tag in ["v1.2.0", "v1.4.0", "v1.1.0"] {
        assert!(
            out.stderr.contains(&format!(
                "Comparing the committed files with github:example/app {tag}"
            )),
            "{}",
            out.stderr
        );
    }
    assert!(!out.stderr.contains("v1.0.0"), "{}", out.stderr);
    assert_eq!(pkg.snapshot(), before, "nothing is written");

    // The advice, followed, adopts the package and moves it.
    pkg.write("vendor.toml", app::vendor_toml("v1.1.0"));
    let out = rv.run(&["update", "--to", "v1.3.0"]).expect(0);
    assert!(
        out.stdout
            .starts_with("adopted the package at v1.1.0 (no lock before), then moved to v1.3.0\n"),
        "{}",
        out.stdout
    );
    assert_eq!(pkg.read_string(OUT), app::rendered("v1.3.0"));
}

#[test]
fn committed_files_no_near_release_renders_say_how_many_were_checked_issue_20() {
    let (gh, pkg) = setup("v0.9.0");
    let out = Revendor::new(pkg.path(), &gh).run(&["update"]).expect(1);
    assert!(
        out.stderr.contains(
            "none of the 4 releases nearest `version` (v1.2.0, v1.4.0, v1.1.0, v1.0.0) \
             renders the committed files either"
        ),
        "{}",
        out.stderr
    );
}
