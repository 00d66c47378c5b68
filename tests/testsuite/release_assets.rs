//! issue 20: `[[vendor]] asset = "…"`, a file published beside a GitHub release, through the
//! GitHub stand-in: picked by `track` as release files are (drafts and prereleases skipped),
//! verified against a published checksums asset when one is named and by the lock's sha256
//! always, downloaded through the release's redirect to its storage host without the token
//! leaving GitHub's origins, and refused with nothing written when it does not match.

use crate::support;

use support::github::{Origin, sha256_hex};
use support::{GitHub, Revendor, TempPackage};

const REPO: &str = "kubevirt/cdi";
const TOKEN: &str = "asset-secret-token";

/// The operator manifest release `tag` publishes.
fn operator(tag: &str) -> String {
    format!(
        "# cdi-operator {tag}\nkind: Namespace\nmetadata:\n  name: cdi\n---\nkind: Deployment\nmetadata:\n  name: cdi-operator\n  namespace: cdi\nspec:\n  replicas: 1\n  paused: false\n"
    )
}

/// A vendor patch renaming the namespace, as cozystack's `sed` did.
const NAMESPACE: &str = "--- a/templates/cdi-operator.yaml
+++ b/templates/cdi-operator.yaml
@@ -6,7 +6,7 @@
 kind: Deployment
 metadata:
   name: cdi-operator
-  namespace: cdi
+  namespace: cozy-kubevirt-cdi
 spec:
   replicas: 1
   paused: false
";

/// Releases `tags` of [`REPO`], each with the operator manifest as `name` and, with
/// `checksums`, a `checksums.txt` listing its sha256 (and another file's).
fn publish(gh: &GitHub, tags: &[&str], name: &str, checksums: bool) {
    for tag in tags {
        let asset = name.replace("{version}", tag);
        let bytes = operator(tag);
        let sums = format!(
            "{}  other.tar.gz\n{}  {asset}\n",
            sha256_hex(b"other"),
            sha256_hex(bytes.as_bytes())
        );
        gh.repo(REPO)
            .file_at(tag, "README.md", format!("cdi {tag}\n"))
            .release(tag, |r| {
                let r = r.asset(&asset, bytes).asset("other.tar.gz", "other");
                if checksums {
                    r.asset("checksums.txt", sums)
                } else {
                    r
                }
            });
    }
}

fn package(version: &str, asset: &str, checksums: bool) -> TempPackage {
    let sums = if checksums {
        "checksums = \"checksums.txt\"\n"
    } else {
        ""
    };
    let pkg = TempPackage::new();
    pkg.write(
        "vendor.toml",
        format!(
            "[upstream]\ngithub = \"{REPO}\"\nversion = \"{version}\"\ntrack = \">=1.0.0, <2.0.0\"\n\n\
             [[vendor]]\nasset = \"{asset}\"\nto = \"templates/cdi-operator.yaml\"\n{sums}\n\
             [[patch]]\nname = \"namespace\"\nfile = \"patches/namespace.diff\"\napplies-to = \"vendor\"\n"
        ),
    )
    .write("patches/namespace.diff", NAMESPACE);
    pkg
}

fn vendored(pkg: &TempPackage) -> String {
    pkg.read_string("templates/cdi-operator.yaml")
}

#[test]
fn a_checksummed_asset_moves_by_track_and_renders_offline() {
    let gh = GitHub::start();
    publish(
        &gh,
        &["v1.0.0", "v1.1.0", "v2.0.0"],
        "cdi-operator.yaml",
        true,
    );
    publish(&gh, &["v1.2.0-rc.1", "v1.3.0"], "cdi-operator.yaml", true);
    gh.repo(REPO)
        .release("v1.2.0-rc.1", |r| r.prerelease(true))
        .release("v1.3.0", |r| r.draft(true));
    let pkg = package("v1.0.0", "cdi-operator.yaml", true);
    let rv = Revendor::new(pkg.path(), &gh);
    let out = rv.run(&["update"]).expect(0);
    assert!(out.stdout.contains("v1.0.0 -> v1.1.0"), "{}", out.all());
    let t = vendored(&pkg);
    assert!(
        t.contains("# cdi-operator v1.1.0\n") && t.contains("namespace: cozy-kubevirt-cdi\n"),
        "{t}"
    );
    assert_eq!(
        pkg.read_string("upstream/cdi-operator.yaml"),
        operator("v1.1.0")
    );
    let lock = pkg.read_string("upstream/lock.toml");
    let sha = sha256_hex(operator("v1.1.0").as_bytes());
    assert!(
        lock.contains("from = \"cdi-operator.yaml\"") && lock.contains(&sha),
        "{lock}"
    );
    assert!(
        gh.requests()
            .count("/repos/kubevirt/cdi/releases/tags/v1.1.0")
            >= 1,
        "{:?}",
        gh.requests().targets()
    );
    rv.run(&["--offline", "check"]).expect(0);
    std::fs::remove_dir_all(rv.cache()).unwrap();
    pkg.remove("templates/cdi-operator.yaml");
    rv.run(&["--offline", "render"]).expect(0);
    assert_eq!(vendored(&pkg), t);
    // --to a release outside track is taken, with its own asset.
    rv.run(&["update", "--to", "v2.0.0"]).expect(0);
    assert!(vendored(&pkg).contains("# cdi-operator v2.0.0\n"));
}

#[test]
fn an_asset_named_by_version_without_checksums_is_held_to_the_lock() {
    let gh = GitHub::start();
    publish(
        &gh,
        &["v1.0.0", "v1.1.0"],
        "cdi-operator-{version}.yaml",
        false,
    );
    let pkg = package("v1.0.0", "cdi-operator-{version}.yaml", false);
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    assert!(vendored(&pkg).contains("# cdi-operator v1.0.0\n"));
    assert!(pkg.exists("upstream/cdi-operator-{version}.yaml"));
    // The release's asset is replaced at the same version: the lock's sha256 refuses it.
    std::fs::remove_dir_all(rv.cache()).unwrap();
    pkg.remove("upstream/cdi-operator-{version}.yaml");
    gh.repo(REPO).release("v1.0.0", |r| {
        r.asset("cdi-operator-v1.0.0.yaml", "kind: Evil\n")
    });
    let before = pkg.snapshot();
    let out = rv.run(&["update", "--to", "v1.0.0"]).expect(3);
    assert!(out.stderr.contains("sha256"), "{}", out.all());
    assert_eq!(pkg.snapshot(), before);
    // Moving on needs the locked base too; with the release's own asset back, it moves.
    let out = rv.run(&["update"]).expect(3);
    assert!(
        out.stderr.contains("at v1.0.0` has sha256"),
        "{}",
        out.stderr
    );
    gh.repo(REPO).release("v1.0.0", |r| {
        r.asset("cdi-operator-v1.0.0.yaml", operator("v1.0.0"))
    });
    rv.run(&["update"]).expect(0);
    assert!(vendored(&pkg).contains("# cdi-operator v1.1.0\n"));
}

#[test]
fn an_asset_that_does_not_match_its_checksums_is_refused_with_nothing_written() {
    let gh = GitHub::start();
    publish(&gh, &["v1.0.0", "v1.1.0"], "cdi-operator.yaml", true);
    let pkg = package("v1.0.0", "cdi-operator.yaml", true);
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    gh.repo(REPO).release("v1.1.0", |r| {
        r.asset(
            "checksums.txt",
            format!("{}  cdi-operator.yaml\n", sha256_hex(b"else")),
        )
    });
    let before = pkg.snapshot();
    let out = rv.run(&["update"]).expect(3);
    assert!(
        out.stderr
            .contains("release asset `cdi-operator.yaml` at v1.1.0")
            && out.stderr.contains("checksums.txt"),
        "{}",
        out.stderr
    );
    assert_eq!(pkg.snapshot(), before);
    // A checksums asset that does not list the asset is refused too.
    gh.repo(REPO).release("v1.1.0", |r| {
        r.asset(
            "checksums.txt",
            format!("{}  other.tar.gz\n", sha256_hex(b"other")),
        )
    });
    let out = rv.run(&["update"]).expect(3);
    assert!(
        out.stderr
            .contains("lists no sha256 for `cdi-operator.yaml`"),
        "{}",
        out.stderr
    );
    assert_eq!(pkg.snapshot(), before);
}

#[test]
fn the_token_does_not_follow_an_asset_to_another_origin() {
    let gh = GitHub::start_with_lookalike();
    gh.accept_token(TOKEN);
    publish(&gh, &["v1.0.0"], "cdi-operator.yaml", true);
    let pkg = package("v1.0.0", "cdi-operator.yaml", true);
    let rv = Revendor::new(pkg.path(), &gh).env("GITHUB_TOKEN", TOKEN);
    // The asset's storage host is another loopback origin, which redirects once more to
    // itself: reqwest would send the first request's headers again on that second hop.
    gh.redirect_next("/_release-assets/", &gh.lookalike_url(), 2);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    assert!(vendored(&pkg).contains("# cdi-operator v1.0.0\n"));
    let reqs = gh.requests();
    let away = reqs.matching(&format!("{}/_release-assets/", gh.lookalike_url()));
    let statuses: Vec<u16> = away.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [302, 200], "{:?}", reqs.targets());
    assert!(away.iter().all(|r| r.origin == Origin::Lookalike));
    assert!(
        away.iter().all(|r| !r.authorization_sent),
        "the storage host got the token: {away:?}"
    );
    let home = reqs.matching("/kubevirt/cdi/releases/download/");
    assert_eq!(home.len(), 2, "{:?}", reqs.targets());
    assert!(home.iter().all(|r| r.authorization_sent));
}

#[test]
fn an_asset_the_release_lacks_names_vendor_toml() {
    let gh = GitHub::start();
    publish(&gh, &["v1.0.0"], "cdi-operator.yaml", false);
    let pkg = package("v1.0.0", "cdi-cr.yaml", false);
    let rv = Revendor::new(pkg.path(), &gh);
    let out = rv.run(&["update", "--to", "v1.0.0"]).expect(2);
    assert!(
        out.stderr.contains("vendor.toml:6")
            && out
                .stderr
                .contains("`asset` = \"cdi-cr.yaml\" is not in the upstream at v1.0.0")
            && out.stderr.contains("`cdi-operator.yaml`"),
        "{}",
        out.stderr
    );
    assert!(!pkg.exists("upstream/lock.toml"));
}

#[test]
fn an_asset_entry_that_cannot_be_one_is_refused_with_its_line() {
    let gh = GitHub::start();
    let cases = [
        (
            "[upstream]\ngit = \"https://example.org/r.git\"\nversion = \"v1.0.0\"\n\n[[vendor]]\nasset = \"a.yaml\"\nto = \"a.yaml\"\n",
            "vendor.toml:6",
            "its upstream is not `github =`",
        ),
        (
            "[upstream]\ngithub = \"o/r\"\nversion = \"v1.0.0\"\n\n[[vendor]]\nfrom = \"a.yaml\"\nasset = \"a.yaml\"\nto = \"a.yaml\"\n",
            "vendor.toml:6",
            "either `from`",
        ),
        (
            "[upstream]\ngithub = \"o/r\"\nversion = \"v1.0.0\"\n\n[[vendor]]\nasset = \"../a.yaml\"\nto = \"a.yaml\"\n",
            "vendor.toml:6",
            "is not the name of a release asset",
        ),
        (
            "[upstream]\ngithub = \"o/r\"\nversion = \"v1.0.0\"\n\n[[vendor]]\nfrom = \"a.yaml\"\nchecksums = \"sums\"\nto = \"a.yaml\"\n",
            "vendor.toml:7",
            "has no `asset`",
        ),
        (
            "[upstream]\ngithub = \"o/r\"\nversion = \"v1.0.0\"\n\n[[vendor]]\nfrom = \"./\"\nto = \"d/\"\n\n[[vendor]]\nasset = \"a.yaml\"\nto = \"a.yaml\"\n",
            "vendor.toml:9",
            "also a repository path the [[vendor]] on line 5 takes",
        ),
    ];
    for (text, at, says) in cases {
        let pkg = TempPackage::new();
        pkg.write("vendor.toml", text);
        let out = Revendor::new(pkg.path(), &gh)
            .run(&["--offline", "check"])
            .expect(2);
        assert!(
            out.stderr.contains(at) && out.stderr.contains(says),
            "{text}\n{}",
            out.stderr
        );
    }
}
