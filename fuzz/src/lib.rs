//! What each fuzz target does with its input, one function per target (issue 13).
//!
//! The targets in `fuzz_targets/` call these under libFuzzer; the main crate's test suite
//! (`tests/testsuite/fuzz_corpus.rs`) includes this file and feeds every committed corpus file
//! through the same function, so CI replays the corpora on stable without libFuzzer.
//!
//! Each function reads untrusted bytes the way revendor meets them (a patch file, a vendored
//! file, vendor.toml, the lock, a Dockerfile, a rendered manifest, a registry answer) and
//! asserts what must hold for any input: no panic, and the invariants that make the reader
//! trustworthy (a written patch reads back the same, a lock written reads back equal, a merge
//! with one side unchanged is the other side). Inputs holding several files separate them with
//! a NUL byte, which none of the text formats use.

use std::path::Path;

use revendor::config::Config;
use revendor::config::lock::Lock;
use revendor::dockerfile::{Dockerfile, check_builder, cni_checksums, rewrite_arg, rewrite_marker};
use revendor::image::{Manifest as ImageManifest, MediaType};
use revendor::manifest::Manifest;
use revendor::patch::{
    self, FilePatch, Labels, Merge, Outcome, apply, apply_fuzzy, apply_reverse, apply_tree, parse,
    parse_recounted, rebase, refresh, write,
};

const LABELS: Labels<'static> = Labels {
    ours: "ours",
    base: "base",
    theirs: "theirs",
};

const PLATFORMS: [&str; 2] = ["linux/amd64", "linux/arm64"];

/// The part of `data` before the `n`th NUL byte (0-based) and after the one before it; the
/// last part runs to the end.
fn part(data: &[u8], n: usize) -> &[u8] {
    data.split(|&b| b == 0).nth(n).unwrap_or_default()
}

/// A one-hunk patch of `x`: what [`refresh`] turns into the diff of two contents.
fn template() -> FilePatch {
    parse(b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-q\n+r\n")
        .expect("the template patch parses")
        .files
        .remove(0)
}

/// The patch reader: what it accepts writes back to bytes that read back the same, and the
/// lenient reader for adoption (`--recount`) never panics.
pub fn patch_parse(data: &[u8]) {
    if let Ok(set) = parse(data) {
        let written = write(&set);
        let again = parse(&written).expect("a written patch parses");
        assert_eq!(again, set, "a written patch reads back the same");
        for file in &set.files {
            for strip in 0..3 {
                let _ = file.target_path(strip);
                let _ = file.source_path(strip);
            }
            let _ = (
                file.name(),
                file.is_new(),
                file.is_delete(),
                file.is_binary(),
            );
        }
    }
    if let Ok((set, _)) = parse_recounted(data) {
        let _ = write(&set);
    }
}

/// The strict applier on a patch and a random file (`patch NUL file`): whatever it accepts,
/// the rebase onto an unchanged upstream gives the same bytes, and the diff of the file and
/// the result applies back to the result.
pub fn patch_apply(data: &[u8]) {
    let (patch, base) = (part(data, 0), part(data, 1));
    let Ok(set) = parse(patch) else {
        return;
    };
    for file in &set.files {
        let _ = apply_reverse(file, base);
        let _ = apply_fuzzy(file, base, 2);
        let Ok(applied) = apply(file, base) else {
            continue;
        };
        let rebased = rebase(base, file, base, &LABELS).expect("the patch applies to its base");
        assert_eq!(
            rebased.content(),
            applied.content.as_slice(),
            "rebasing onto an unchanged upstream is the patched file"
        );
        let exact = refresh(file, base, &applied.content);
        let again = apply(&exact, base).expect("a refreshed patch applies to its base");
        assert_eq!(
            again.content, applied.content,
            "a refreshed patch gives the same file"
        );
    }
    let tree = set
        .files
        .iter()
        .filter_map(|f| f.target_path(1))
        .map(|path| (path, base.to_vec()))
        .collect();
    let _ = apply_tree(&set, 1, &tree);
}

/// The 3-way merge on three files (`base NUL ours NUL theirs`): a side equal to the base
/// yields the other side, and the rebase of the diff of base and ours onto theirs, which the
/// update runs, never fails on its own base.
pub fn merge3(data: &[u8]) {
    let (base, ours, theirs) = (part(data, 0), part(data, 1), part(data, 2));
    let merged = patch::merge3(base, ours, theirs, &LABELS);
    if ours == base {
        assert_eq!(
            merged,
            Merge::Clean(theirs.to_vec()),
            "ours unchanged: theirs"
        );
    } else if theirs == base || theirs == ours {
        assert_eq!(
            merged,
            Merge::Clean(ours.to_vec()),
            "theirs unchanged: ours"
        );
    }
    let patch = refresh(&template(), base, ours);
    let outcome = rebase(base, &patch, theirs, &LABELS).expect("a diff applies to its base");
    if let Outcome::Conflict { marked, .. } = &outcome {
        let _ = patch::marker_lines(marked);
    }
}

/// vendor.toml as text: validation never panics, whatever the keys, types and values, and
/// the version edit `update` makes never panics either.
pub fn vendor_toml(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    // A directory that does not exist: the reader may look for files, and finds none.
    let dir = Path::new("/nonexistent/revendor-fuzz");
    let _ = Config::parse(dir, &dir.join("vendor.toml"), &text);
    let path = Path::new("vendor.toml");
    let _ = revendor::config::edit::set_upstream_version(path, &text, None, "v9.9.9");
    let _ = revendor::config::edit::remove_patch(path, &text, "p");
}

/// The lock as text: what it accepts writes back (fresh, and as an edit of the same text) to
/// a lock that reads back equal.
pub fn lock(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let path = Path::new("upstream/lock.toml");
    let Ok(lock) = Lock::parse(path, &text) else {
        return;
    };
    for previous in [None, Some(&*text)] {
        let written = lock.to_toml(previous);
        let again = Lock::parse(path, &written).expect("a written lock parses");
        assert_eq!(again, lock, "a written lock reads back equal");
    }
    let _ = Lock::line_of_key(&text, "upstream", None, "version");
}

/// A Dockerfile: parsing, the builder and CNI checksum checks, markers, and the two in-place
/// rewrites never panic, and a rewritten file still parses.
pub fn dockerfile(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(df) = Dockerfile::parse(&text) else {
        return;
    };
    let _ = check_builder(&df, None);
    let _ = cni_checksums(&df, &PLATFORMS);
    let _ = df.markers("talos-cni-plugins-checked-against");
    for name in ["VERSION", "CNI_PLUGINS_VERSION"] {
        let _ = df.arg_values(name).count();
        if let Ok(rewritten) = rewrite_arg(&text, name, "v9.9.9") {
            Dockerfile::parse(&rewritten).expect("a rewritten Dockerfile parses");
        }
    }
    if let Ok(rewritten) = rewrite_marker(&text, "talos-cni-plugins-checked-against", "v1.2.3") {
        Dockerfile::parse(&rewritten).expect("a Dockerfile with a rewritten marker parses");
    }
}

/// The shell reader, reached as the CNI checksum check reaches it: the input is a `RUN`
/// heredoc's script, and as one `RUN` line (newlines joined as continuations).
pub fn shell(data: &[u8]) {
    let script = String::from_utf8_lossy(data);
    let heredoc = format!("FROM scratch\nARG TARGETARCH\nRUN <<EOF\n{script}\nEOF\n");
    let continued = format!(
        "FROM scratch\nARG TARGETARCH\nRUN {}\n",
        script.replace('\n', " \\\n")
    );
    for text in [heredoc, continued] {
        if let Ok(df) = Dockerfile::parse(&text) {
            let _ = cni_checksums(&df, &PLATFORMS);
        }
    }
}

/// The YAML reader for rendered manifests (Helm lines tolerated): parsing and the lookups
/// contracts and pins make never panic.
pub fn yaml(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(manifest) = Manifest::parse(&text) else {
        return;
    };
    let _ = manifest.images();
    for doc in manifest.documents() {
        let _ = (doc.kind(), doc.name(), doc.line());
        let _ = doc.field(&["spec", "template", "spec", "containers"]);
        let _ = doc.field_str(&["metadata", "name"]);
        let _ = doc.json(&["data", "daemon-config.json"], &["multusMasterCNI"]);
        for c in doc.containers() {
            let _ = c.label();
        }
        let _ = doc.containers_lacking(&["resources", "limits", "memory"]);
    }
    let _ = manifest.select("DaemonSet", None).count();
}

/// A registry's manifest answer, with each content type a registry may send: parsing never
/// panics, and a parsed index lists its children.
pub fn image_manifest(data: &[u8]) {
    let types = [
        None,
        Some(MediaType::OciIndex.as_str()),
        Some(MediaType::OciManifest.as_str()),
        Some(MediaType::DockerManifestList.as_str()),
        Some(MediaType::DockerManifest.as_str()),
        Some("text/plain"),
    ];
    for content_type in types {
        if let Ok(manifest) = ImageManifest::parse(data, content_type) {
            let _ = manifest.media_type();
            if let ImageManifest::Index(index) = &manifest {
                let _ = index.children().count();
            }
        }
    }
}
