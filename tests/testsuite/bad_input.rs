//! The bad-input catalog (issue 13): one row per way a package, its lock, its
//! patches, its Dockerfile or its upstream can be wrong, each with the exit
//! code it must end with and the words its one-line message must hold (the
//! file, and the line where there is one).
//!
//! Every row starts from the same package, adopted at v1.0.0 of a GitHub
//! stand-in (a vendored manifest with a patch, a source patch, an image with
//! a Dockerfile and a marker, a pin and a contract), breaks one thing, runs
//! one command with `-v` and `GITHUB_TOKEN` set to a marker, and then holds
//! the run to what every row must keep:
//!
//! - no panic: exit code not 101, no "panicked" or `RUST_BACKTRACE` text;
//! - nothing written: the package tree, byte for byte and directory for
//!   directory, is what it was before the command;
//! - the token is never printed, on either stream.
//!
//! The rows live in tables by category, one test per table, so a failing
//! category names itself; each test runs its whole table and reports every
//! row that broke, not just the first.

use crate::support;

use std::any::Any;
use std::collections::BTreeMap;
use std::path::Path;

use support::daemonset::{
    DOCKERFILE, LABELLED, LOCK, PATCH, PINNED, PRISTINE, REPO, TEMPLATE, VendorToml,
};
use support::{GitHub, Revendor, Run, TempPackage};

const TOKEN: &str = "ghp_catalogTOKENmarker0123456789abcdef";
const SOURCE_PATCH: &str = "image/patches/greet.diff";
const RELEASES: &str = "/repos/example/app/releases";

// ---------------------------------------------------------------------------------------------
// The package every row starts from

/// The vendor.toml every row starts from; line numbers below refer to its text: `[[vendor]]` is line 6, its `to`
/// line 8, the vendor patch's `[[patch]]` line 10, the source patch's
/// `strip` line 19, `[[rewrite]]` line 21, `[image]` line 26, and a table
/// appended by a row (after a blank line) starts at line 50.
fn vendor_toml() -> String {
    VendorToml::new()
        .greet_patch()
        .dockerfile_rewrite()
        .image()
        .pin()
        .marker()
        .contract()
        .text()
}

const MAIN_GO: &str = "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n";

const SOURCE_PATCH_TEXT: &str = "--- a/main.go
+++ b/main.go
@@ -1,5 +1,5 @@
 package main
 
 func main() {
-\tprintln(\"hello\")
+\tprintln(\"hello, cozy\")
 }
";

/// The CNI plugins archive of `arch`, as containernetworking/plugins
/// publishes it (a stand-in's bytes).
fn cni_archive(arch: &str) -> String {
    format!("cni plugins for {arch}\n")
}

fn cni_asset(arch: &str) -> String {
    format!("cni-plugins-linux-{arch}-v1.6.2.tgz")
}

/// The image recipe. Line 2 is `ARG VERSION`, line 3 the marker, line 4
/// `ARG CNI_PLUGINS_VERSION`, line 18 the last `RUN`.
fn dockerfile() -> String {
    let sha = |arch: &str| support::github::sha256_hex(cni_archive(arch).as_bytes());
    format!(
        "FROM golang:1.26@sha256:{zero} AS builder
ARG VERSION=v1.0.0
# cni-checked-against: v1.2.3
ARG CNI_PLUGINS_VERSION=v1.6.2
ARG CNI_PLUGINS_SHA256_AMD64={amd64}
ARG CNI_PLUGINS_SHA256_ARM64={arm64}
ARG TARGETARCH
RUN set -eu; \\
    case \"${{TARGETARCH}}\" in \\
      amd64) sha=\"${{CNI_PLUGINS_SHA256_AMD64}}\" ;; \\
      arm64) sha=\"${{CNI_PLUGINS_SHA256_ARM64}}\" ;; \\
      *) exit 1 ;; \\
    esac; \\
    archive=\"cni-plugins-linux-${{TARGETARCH}}-${{CNI_PLUGINS_VERSION}}.tgz\"; \\
    curl -fsSLo \"/tmp/${{archive}}\" \"https://github.com/containernetworking/plugins/releases/download/${{CNI_PLUGINS_VERSION}}/${{archive}}\"; \\
    echo \"${{sha}}  /tmp/${{archive}}\" | sha256sum -c -; \\
    tar -xzf \"/tmp/${{archive}}\" -C /cni-plugins ./bridge
RUN go build ./...
",
        zero = "0".repeat(64),
        amd64 = sha("amd64"),
        arm64 = sha("arm64"),
    )
}

/// Publishes `tag` of the upstream: the manifest, go.mod and main.go.
fn release(gh: &GitHub, tag: &str) {
    gh.repo(REPO)
        .file_at(tag, "deploy/app.yml", LABELLED.text())
        .file_at(tag, "go.mod", "module example.org/app\n\ngo 1.25.0\n")
        .file_at(tag, "main.go", MAIN_GO)
        .release(tag, |r| r);
}

/// The CNI plugins release the recipe pins, with its `.sha256` sidecars.
fn cni_release(gh: &GitHub) {
    gh.repo("containernetworking/plugins")
        .release("v1.6.2", |r| {
            r.asset_with_sha256(&cni_asset("amd64"), cni_archive("amd64"))
                .asset_with_sha256(&cni_asset("arm64"), cni_archive("arm64"))
        });
}

/// One row's world: the stand-in, the package adopted at v1.0.0, what the
/// row adds to the environment, and servers it keeps alive.
struct Fixture {
    gh: GitHub,
    pkg: TempPackage,
    rv: Revendor,
    env: Vec<(String, String)>,
    keep: Vec<Box<dyn Any>>,
}

impl Fixture {
    fn adopted() -> Fixture {
        Fixture::adopted_with(|_| {})
    }

    /// Adopted against a stand-in `prepare` set up first.
    fn adopted_with(prepare: fn(&GitHub)) -> Fixture {
        Fixture::adopt(prepare, |_| {})
    }

    /// Adopted against a stand-in `prepare` set up first, the package
    /// written and then given more by `extend` (a `[[vendor]]` appended at
    /// line 50 and its committed files).
    fn adopt(prepare: fn(&GitHub), extend: fn(&TempPackage)) -> Fixture {
        let gh = GitHub::start();
        prepare(&gh);
        release(&gh, "v1.0.0");
        cni_release(&gh);
        let pkg = TempPackage::new();
        pkg.write("vendor.toml", vendor_toml())
            .write(PATCH, LABELLED.namespace_patch())
            .write(SOURCE_PATCH, SOURCE_PATCH_TEXT)
            .write(DOCKERFILE, dockerfile())
            .write(TEMPLATE, LABELLED.rendered(PINNED));
        extend(&pkg);
        let rv = Revendor::new(pkg.path(), &gh);
        rv.run(&["update", "--to", "v1.0.0"]).expect(0);
        rv.run(&["check"]).expect(0);
        Fixture {
            gh,
            pkg,
            rv,
            env: Vec::new(),
            keep: Vec::new(),
        }
    }

    fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        self.pkg.write(rel, bytes);
    }

    /// Replaces `from` by `to` in `rel`; `from` must be there.
    fn edit(&self, rel: &str, from: &str, to: &str) {
        let text = self.pkg.read_string(rel);
        assert!(text.contains(from), "`{rel}` has no `{from}`:\n{text}");
        self.pkg.write(rel, text.replacen(from, to, 1));
    }

    /// Appends `text` to vendor.toml after a blank line: a table appended
    /// this way starts at line 50.
    fn append_toml(&self, text: &str) {
        let toml = self.pkg.read_string("vendor.toml");
        self.pkg.write("vendor.toml", format!("{toml}\n{text}"));
    }

    fn env(&mut self, key: &str, value: impl Into<String>) {
        self.env.push((key.to_owned(), value.into()));
    }

    /// Sets the lock's sha256 for `old` to that of `new`, as if the lock had
    /// vouched for `new` all along.
    fn vouch(&self, old: &[u8], new: &[u8]) {
        let (old, new) = (
            support::github::sha256_hex(old),
            support::github::sha256_hex(new),
        );
        self.edit(LOCK, &old, &new);
    }

    /// Replaces the pristine copy by `bytes` and makes the lock vouch for
    /// them: the applier then meets `bytes` as the upstream file.
    fn pristine(&self, bytes: &[u8]) {
        let old = self.pkg.read(PRISTINE);
        self.write(PRISTINE, bytes);
        self.vouch(&old, bytes);
    }

    /// Publishes v1.1.0 like v1.0.0.
    fn newer(&self) {
        release(&self.gh, "v1.1.0");
    }

    fn run(&self, args: &[&str]) -> Run {
        let mut cmd = self.rv.command(&[&["-v"], args].concat());
        cmd.env("GITHUB_TOKEN", TOKEN);
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run revendor");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Rows and the rules every row is held to

/// One way in which input can be bad.
struct Case {
    /// What is broken.
    name: &'static str,
    /// Breaks it: files written, stand-in behaviour, environment.
    setup: fn(&mut Fixture),
    /// The command (`-v` is added in front).
    args: &'static [&'static str],
    /// The exit code it must end with.
    code: i32,
    /// What the message must say: the first word (the file, with its line
    /// where there is one) on the message's own line, every word in the
    /// message with its `Caused by:` lines. Empty for a row that must pass.
    words: &'static [&'static str],
}

/// A package tree: every file's bytes (symlinks as their target) and every
/// directory.
type Tree = (BTreeMap<String, Vec<u8>>, Vec<String>);

fn tree(dir: &Path) -> Tree {
    (
        support::package::read_tree(dir),
        support::package::read_dirs(dir),
    )
}

/// Every message of the output: its own line, and its whole text. An
/// `error:` or `warning:` goes on over its `Caused by:` and indented lines;
/// any other line (a finding, a status) is a message of its own.
fn messages(output: &str) -> Vec<(&str, String)> {
    let lines: Vec<&str> = output.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let mut text = (*line).to_owned();
        if line.starts_with("error:") || line.starts_with("warning:") {
            for next in &lines[i + 1..] {
                if !(next.starts_with("  ") || next.starts_with("Caused by:")) {
                    break;
                }
                text.push('\n');
                text.push_str(next);
            }
        }
        out.push((*line, text));
    }
    out
}

/// Runs one row on the package `start` makes; the reasons it broke the
/// rules, if any.
fn check_case(start: fn() -> Fixture, case: &Case) -> Result<(), String> {
    let mut fx = start();
    (case.setup)(&mut fx);
    let before = tree(fx.pkg.path());
    let run = fx.run(case.args);
    let after = tree(fx.pkg.path());
    drop(fx.keep);
    verdict(case, &run, &before, &after)
}

/// Holds one run to the rules every row keeps (module doc) and to its own
/// exit code and words.
fn verdict(case: &Case, run: &Run, before: &Tree, after: &Tree) -> Result<(), String> {
    let all = run.all();
    let mut broken = Vec::new();
    if run.code != case.code {
        broken.push(format!("exit {} (expected {})", run.code, case.code));
    }
    if run.code == 101 || all.contains("panicked") || all.contains("RUST_BACKTRACE") {
        broken.push("panicked".to_owned());
    }
    if before != after {
        let changed: Vec<&String> = after
            .0
            .keys()
            .chain(before.0.keys())
            .filter(|k| before.0.get(*k) != after.0.get(*k))
            .collect();
        broken.push(format!(
            "wrote to the package: {changed:?}, dirs {:?} -> {:?}",
            before.1, after.1
        ));
    }
    if all.contains(TOKEN) {
        broken.push("printed the token".to_owned());
    }
    if let [first, ..] = case.words
        && !messages(&all)
            .iter()
            .any(|(line, text)| line.contains(first) && case.words.iter().all(|w| text.contains(w)))
    {
        broken.push(format!("no message says all of {:?}", case.words));
    }
    if broken.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{}: {}\n--- stdout\n{}--- stderr\n{}",
            case.name,
            broken.join("; "),
            run.stdout,
            run.stderr
        ))
    }
}

/// Runs every row of `cases` on the package every row starts from, then
/// fails with every broken one.
fn catalog(cases: &[Case]) {
    catalog_from(Fixture::adopted, cases);
}

/// Runs every row of `cases` on the package `start` makes, then fails with
/// every broken one.
fn catalog_from(start: fn() -> Fixture, cases: &[Case]) {
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|c| check_case(start, c).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} rows broke:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

mod bounds;
mod config;
mod dir;
mod disk;
mod files;
mod github;
mod helm;
mod helm_oci;
mod lock;
mod patch;

#[test]
fn the_catalog_holds_at_least_45_rows() {
    let rows = [
        bounds::CASES,
        config::CASES,
        dir::CASES,
        lock::CASES,
        patch::CASES,
        files::CASES,
        github::CASES,
        helm::CASES,
        helm_oci::CASES,
        disk::READ_ONLY_CASES,
        disk::CACHE_CASES,
    ]
    .iter()
    .map(|t| t.len())
    .sum::<usize>();
    assert!(rows >= 45, "{rows} rows");
}
