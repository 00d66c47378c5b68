//! Properties over generated packages, run in-process through the library (issue 13):
//! `render` after `update` changes nothing, whatever the upstream change and the patch.
//!
//! Each case is an upstream (a local git repository reached by `file://`) with a file at
//! v1.0.0 and an edited one at v1.1.0, and a package whose patch is a random edit of the
//! v1.0.0 file, plus a `[[rewrite]]` of its image line. The package is adopted at v1.0.0,
//! updated to v1.1.0 (a case whose update conflicts proves nothing and is skipped), then
//! rendered: the render must report no change and leave every byte as the update wrote it.
//!
//! The patch engine's own properties (a diff applies to give its new side, a rebase onto an
//! unchanged upstream is the patched file, refresh is idempotent) are unit tests in
//! `src/patch/mod.rs`.

use crate::support;

use proptest::prelude::*;
use revendor::console::{ColorChoice, Format, Settings, Shell, Verbosity};
use revendor::env::Env;
use revendor::error::Error;
use revendor::ops::render::{RenderOptions, render};
use revendor::ops::update::{UpdateOptions, update};
use revendor::patch::{parse, refresh, write_file};
use revendor::workspace::Context;
use support::{GitRepo, TempPackage};

const FILE: &str = "deploy/app.yml";
const TEMPLATE: &str = "templates/app.yml";
const IMAGE: &str = "- image: example.org/app:snapshot\n";

/// What happens to one line on one side.
#[derive(Clone, Debug)]
enum Edit {
    Keep,
    Drop,
    Replace(&'static str),
    InsertBefore(&'static str),
}

/// YAML sequence items and comments from a few distinct texts, so diffs meet repeats.
fn line() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["- a", "- b", "- c", "# note", "- d: 1", "- e"])
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    prop::collection::vec(
        prop_oneof![
            8 => Just(Edit::Keep),
            1 => Just(Edit::Drop),
            1 => line().prop_map(Edit::Replace),
            1 => line().prop_map(Edit::InsertBefore),
        ],
        24,
    )
}

/// The file: the image line, then `lines`.
fn file(lines: &[&str]) -> String {
    let mut text = IMAGE.to_owned();
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    text
}

fn edited<'a>(lines: &[&'a str], edits: &[Edit]) -> Vec<&'a str> {
    let mut out = Vec::new();
    for (l, e) in lines.iter().zip(edits.iter().cycle()) {
        match e {
            Edit::Keep => out.push(*l),
            Edit::Drop => {}
            Edit::Replace(r) => out.push(r),
            Edit::InsertBefore(r) => out.extend([*r, *l]),
        }
    }
    out
}

fn vendor_toml(url: &str) -> String {
    format!(
        r#"[upstream]
git = "{url}"
version = "v1.0.0"
track = ">=1.0.0, <2.0.0"

[[vendor]]
from = "{FILE}"
to = "{TEMPLATE}"

[[patch]]
name = "local"
file = "patches/local.patch"
applies-to = "vendor"

[[rewrite]]
file = "{TEMPLATE}"
lines-containing = "example.org/app"
replace = "snapshot"
with = "{{version}}"
"#
    )
}

fn context(pkg: &TempPackage, cache: &std::path::Path) -> Context {
    let env = Env {
        cache_dir: cache.to_path_buf(),
        ..Env::from_process()
    };
    let shell = Shell::new(Settings {
        format: Format::Human,
        verbosity: Verbosity::Quiet,
        progress: false,
        color: ColorChoice::Never,
        no_color: true,
        force_color: false,
    });
    Context::new(pkg.path().to_path_buf(), env, false, shell).expect("context")
}

fn to(version: &str) -> UpdateOptions {
    UpdateOptions {
        to: vec![version.to_owned()],
        ..UpdateOptions::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn render_after_update_changes_nothing(
        base in prop::collection::vec(line(), 1..20),
        upstream_edits in edits(),
        patch_edits in edits(),
    ) {
        let ours = edited(&base, &patch_edits);
        prop_assume!(ours != base);
        let (v1, v2) = (file(&base), file(&edited(&base, &upstream_edits)));

        let upstream = GitRepo::new();
        upstream.commit("v1.0.0", [(FILE, v1.as_str())]);
        upstream.tag("v1.0.0");
        upstream.commit("v1.1.0", [(FILE, v2.as_str())]);
        upstream.tag("v1.1.0");

        let template = parse(
            format!("--- a/{TEMPLATE}\n+++ b/{TEMPLATE}\n@@ -1 +1 @@\n-q\n+r\n").as_bytes(),
        )
        .unwrap()
        .files
        .remove(0);
        let patch = refresh(&template, v1.as_bytes(), file(&ours).as_bytes());
        let pkg = TempPackage::new();
        pkg.write("vendor.toml", vendor_toml(&upstream.url()))
            .write("patches/local.patch", write_file(&patch));
        let cache = tempfile::tempdir().unwrap();
        let ctx = context(&pkg, cache.path());

        update(&ctx, &to("v1.0.0")).expect("the package adopts");
        match update(&ctx, &to("v1.1.0")) {
            Ok(_) => {}
            Err(
                Error::PatchConflict(_)
                | Error::HandEdits(_)
                | Error::StrayFiles(_)
                | Error::PendingUpdate(_),
            ) => return Ok(()),
            Err(e) => panic!("update: {e}"),
        }
        let updated = pkg.snapshot();
        let report = render(&ctx, &RenderOptions::default()).expect("render");
        prop_assert_eq!(report.changed, Vec::<String>::new());
        prop_assert_eq!(pkg.snapshot(), updated);
    }
}
