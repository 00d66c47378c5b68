//! Golden cases for `revendor::patch`, plus the real multus patch when `REVENDOR_REALWORLD` is set.
//!
//! Each directory under `tests/patch/` is one case:
//!
//! - `base`: the pristine upstream the patch was made against, `ours`: base with the patch
//!   applied, `theirs`: the new upstream, `change.patch`: the patch (written by GNU diff or git);
//! - `expected`: the rebased file (the marked file for a conflict), `outcome`: how it landed,
//!   `refreshed.patch`: the patch refreshed against `theirs` (not for a conflict or a change
//!   already upstream).
//!
//! `base`, `ours`, `theirs` and `expected` are files for a one-file patch, and directories
//! (strip 1) for a multi-file one. `SNAPSHOTS=overwrite cargo test --test testsuite -- patch_golden` rewrites
//! `expected`, `outcome` and `refreshed.patch`; review the diff before committing.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use revendor::patch::{
    self, FilePatch, Labels, Outcome, PatchSet, Tree, apply, apply_tree, parse, rebase,
    rebase_tree, refresh, refresh_set, write,
};

const LABELS: Labels<'static> = Labels {
    ours: "patched v1.0.0",
    base: "v1.0.0",
    theirs: "v1.1.0",
};

#[test]
fn golden_cases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/patch");
    let mut cases: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() >= 12, "golden cases went missing: {cases:?}");
    for case in cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let patch_bytes = fs::read(case.join("change.patch")).unwrap();
        let set = parse(&patch_bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            write(&set),
            patch_bytes,
            "{name}: write(parse(x)) must give x back"
        );
        if case.join("base").is_dir() {
            tree_case(&name, &case, &set);
        } else {
            file_case(&name, &case, &set);
        }
    }
}

fn file_case(name: &str, case: &Path, set: &PatchSet) {
    let [file] = set.files.as_slice() else {
        panic!("{name}: a file case needs a one-file patch");
    };
    let base = fs::read(case.join("base")).unwrap();
    let theirs = fs::read(case.join("theirs")).unwrap();
    let ours = apply(file, &base).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(
        ours.offsets.iter().filter(|&&o| o != 0).count(),
        0,
        "{name}: patch is not exact on base"
    );
    same(
        name,
        "ours",
        &ours.content,
        &fs::read(case.join("ours")).unwrap(),
    );
    let outcome = rebase(&base, file, &theirs, &LABELS).unwrap_or_else(|e| panic!("{name}: {e}"));
    golden(case, "expected", outcome.content());
    golden(
        case,
        "outcome",
        format!("{}\n", describe(&outcome)).as_bytes(),
    );
    if has_refresh(&outcome) {
        let refreshed = check_refreshed(name, case, set, &[&theirs], &[outcome.content()]);
        assert_clean_gnu(name, gnu_dry_run(&refreshed, &[(None, &theirs)], 0));
    }
}

fn tree_case(name: &str, case: &Path, set: &PatchSet) {
    let base = read_tree(&case.join("base"));
    let theirs = read_tree(&case.join("theirs"));
    let ours = apply_tree(set, 1, &base).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(ours.tree, read_tree(&case.join("ours")), "{name}: ours");
    let rebased =
        rebase_tree(set, 1, &base, &theirs, &LABELS).unwrap_or_else(|e| panic!("{name}: {e}"));
    golden_tree(case, &rebased.tree);
    let outcome: String = rebased
        .files
        .iter()
        .map(|f| {
            format!(
                "{}{}: {}\n",
                f.path,
                if f.deleted { " (deleted)" } else { "" },
                describe(&f.outcome)
            )
        })
        .collect();
    golden(case, "outcome", outcome.as_bytes());
    if rebased.files.iter().all(|f| has_refresh(&f.outcome)) {
        let olds: Vec<Vec<u8>> = set.files.iter().map(|f| read_old(f, &theirs)).collect();
        let news: Vec<Vec<u8>> = set
            .files
            .iter()
            .map(|f| {
                rebased
                    .tree
                    .get(&f.target_path(1).unwrap())
                    .cloned()
                    .unwrap_or_default()
            })
            .collect();
        let refreshed = check_refreshed(name, case, set, &slices(&olds), &slices(&news));
        let files: Vec<(Option<&str>, &[u8])> = theirs
            .iter()
            .map(|(p, c)| (Some(p.as_str()), c.as_slice()))
            .collect();
        assert_clean_gnu(name, gnu_dry_run(&refreshed, &files, 1));
    }
}

/// Refreshes `set` for `olds -> news`. The result is golden, parses back to itself, refreshes to
/// itself, and applies exactly.
fn check_refreshed(
    name: &str,
    case: &Path,
    set: &PatchSet,
    olds: &[&[u8]],
    news: &[&[u8]],
) -> Vec<u8> {
    let refreshed = refresh_set(set, olds, news).unwrap();
    let bytes = write(&refreshed);
    golden(case, "refreshed.patch", &bytes);
    let reparsed = parse(&bytes).unwrap_or_else(|e| panic!("{name}: refreshed patch: {e}"));
    assert_eq!(
        reparsed, refreshed,
        "{name}: refreshed patch does not parse back"
    );
    let again = refresh_set(&reparsed, olds, news).unwrap();
    same(name, "refresh twice", &write(&again), &bytes);
    for ((file, old), new) in refreshed.files.iter().zip(olds).zip(news) {
        let applied = apply(file, old).unwrap_or_else(|e| panic!("{name}: refreshed: {e}"));
        assert!(
            applied.offsets.iter().all(|&o| o == 0),
            "{name}: refreshed hunks moved"
        );
        same(name, "refreshed apply", &applied.content, new);
    }
    bytes
}

fn has_refresh(outcome: &Outcome) -> bool {
    !matches!(
        outcome,
        Outcome::Conflict { .. } | Outcome::AlreadyUpstream { .. }
    )
}

/// The outcome as the `outcome` file writes it: kind, then offsets or conflict line ranges.
fn describe(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Offset { offsets, .. } => {
            let offsets: Vec<String> = offsets.iter().map(|o| format!("{o:+}")).collect();
            format!("offset {}", offsets.join(" "))
        }
        Outcome::Conflict { hunks, .. } => {
            let ranges: Vec<String> = hunks
                .iter()
                .map(|h| format!("{}-{}", h.line_start, h.line_end))
                .collect();
            format!("conflict {}", ranges.join(" "))
        }
        other => other.kind().to_string(),
    }
}

fn read_old(file: &FilePatch, tree: &Tree) -> Vec<u8> {
    [file.target_path(1), file.source_path(1)]
        .into_iter()
        .flatten()
        .find_map(|p| tree.get(&p).cloned())
        .unwrap_or_default()
}

fn slices(contents: &[Vec<u8>]) -> Vec<&[u8]> {
    contents.iter().map(Vec::as_slice).collect()
}

fn overwrite() -> bool {
    std::env::var_os("SNAPSHOTS").is_some_and(|v| v == "overwrite")
}

fn golden(case: &Path, file: &str, actual: &[u8]) {
    let path = case.join(file);
    if overwrite() {
        fs::write(&path, actual).unwrap();
        return;
    }
    let expected = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    same(&path.display().to_string(), "", actual, &expected);
}

fn golden_tree(case: &Path, actual: &Tree) {
    let dir = case.join("expected");
    if overwrite() {
        let _ = fs::remove_dir_all(&dir);
        for (path, content) in actual {
            let target = dir.join(path);
            fs::create_dir_all(target.parent().unwrap()).unwrap();
            fs::write(target, content).unwrap();
        }
        return;
    }
    assert_eq!(actual, &read_tree(&dir), "{}", dir.display());
}

fn same(name: &str, what: &str, actual: &[u8], expected: &[u8]) {
    assert!(
        actual == expected,
        "{name} {what}: got\n{}\nexpected\n{}",
        String::from_utf8_lossy(actual),
        String::from_utf8_lossy(expected)
    );
}

fn read_tree(root: &Path) -> Tree {
    fn walk(root: &Path, dir: &Path, tree: &mut Tree) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, tree);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                tree.insert(rel, fs::read(&path).unwrap());
            }
        }
    }
    let mut tree = BTreeMap::new();
    walk(root, root, &mut tree);
    tree
}

/// Runs GNU `patch --dry-run -F0` on `files` written to a temporary directory; `None` as a path
/// means "the one file", named on the command line. Returns `None` when GNU patch is absent.
fn gnu_dry_run(
    patch_bytes: &[u8],
    files: &[(Option<&str>, &[u8])],
    strip: usize,
) -> Option<(bool, String)> {
    let gnu = Path::new("/usr/bin/patch");
    if !gnu.exists() {
        eprintln!("note: /usr/bin/patch not found; skipping the GNU patch cross-check");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let patch_file = dir.path().join("refreshed.patch");
    fs::write(&patch_file, patch_bytes).unwrap();
    let work = dir.path().join("work");
    fs::create_dir_all(&work).unwrap();
    let mut command = Command::new(gnu);
    command
        .current_dir(&work)
        .args(["--dry-run", "--batch", "-F0", &format!("-p{strip}"), "-i"])
        .arg(&patch_file);
    for (path, content) in files {
        let target = work.join(path.unwrap_or("target"));
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        fs::write(&target, content).unwrap();
        if path.is_none() {
            command.arg(&target);
        }
    }
    let output = command.output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    Some((output.status.success(), text))
}

fn assert_clean_gnu(name: &str, result: Option<(bool, String)>) {
    if let Some((ok, text)) = result {
        assert!(
            ok,
            "{name}: GNU patch rejected the refreshed patch:\n{text}"
        );
        assert!(
            !text.contains("offset") && !text.contains("fuzz"),
            "{name}: GNU patch needed offset or fuzz:\n{text}"
        );
    }
}

/// The real multus manifest patch against real upstream releases; see
/// /work/shared/realworld/facts.toml for the facts asserted here.
#[test]
fn realworld_multus_manifest_patch() {
    let Some(root) = std::env::var_os("REVENDOR_REALWORLD").map(PathBuf::from) else {
        eprintln!("note: REVENDOR_REALWORLD is not set; skipping the real multus patch test");
        return;
    };
    let read = |rel: &str| fs::read(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let manifest = "deployments/multus-daemonset-thick.yml";
    let patch_bytes = read("cozystack-multus/patches/customize-deployment.patch");
    let set = parse(&patch_bytes).unwrap();
    assert_eq!(write(&set), patch_bytes);
    let [file] = set.files.as_slice() else {
        panic!("customize-deployment.patch should patch one file");
    };
    assert_eq!(
        file.target_path(4).as_deref(),
        Some("templates/multus-daemonset-thick.yml")
    );
    assert_eq!(file.hunks.len(), 5);

    let v430 = read(&format!("multus-cni/v4.3.0/{manifest}"));
    let exact = apply(file, &v430).unwrap();
    assert_eq!(exact.offsets, [0; 5], "v4.3.0 applies exactly");

    let v423 = read(&format!("multus-cni/v4.2.3/{manifest}"));
    let older = apply(file, &v423).unwrap();
    assert_eq!(older.offsets, [-1; 5], "v4.2.3: all hunks at offset -1");
    let refreshed = refresh(file, &v423, &older.content);
    let refreshed_bytes = patch::write_file(&refreshed);
    assert!(refreshed_bytes.starts_with(b"--- a/packages/system/multus/templates/multus-daemonset-thick.yml\n+++ b/packages/system/multus/"));
    assert_eq!(apply(&refreshed, &v423).unwrap().offsets, [0; 5]);
    assert_eq!(
        patch::write_file(&refresh(&refreshed, &v423, &older.content)),
        refreshed_bytes
    );
    assert_clean_gnu(
        "realworld v4.2.3",
        gnu_dry_run(&refreshed_bytes, &[(None, &v423)], 0),
    );
    // Against the release it was made for, a refresh reproduces the patch.
    let same_again = patch::write_file(&refresh(file, &v430, &exact.content));
    same("realworld v4.3.0", "refresh", &same_again, &patch_bytes);

    let next = read(&format!("multus-cni/unreleased-95a0932/{manifest}"));
    let err = apply(file, &next).unwrap_err();
    let patch::ApplyError::Mismatch {
        hunk,
        line,
        expected,
        found,
        ..
    } = &err
    else {
        panic!("unexpected error: {err}");
    };
    assert_eq!(*hunk, 5, "{err}");
    assert!(
        expected.contains("terminationGracePeriodSeconds: 10"),
        "{err}"
    );
    assert!(
        found
            .as_deref()
            .is_some_and(|f| f.contains("terminationGracePeriodSeconds")),
        "{err}"
    );
    let landed = &next.split(|&b| b == b'\n').nth(line - 1).unwrap();
    assert!(String::from_utf8_lossy(landed).contains("terminationGracePeriodSeconds"));
    let mut first_four = file.clone();
    first_four.hunks.truncate(4);
    assert_eq!(
        apply(&first_four, &next).unwrap().offsets,
        [9; 4],
        "hunks 1-4 at offset +9"
    );

    let labels = Labels {
        ours: "patched v4.3.0",
        base: "v4.3.0",
        theirs: "95a0932",
    };
    let outcome = rebase(&v430, file, &next, &labels).unwrap();
    let Outcome::Conflict { hunks, marked } = &outcome else {
        panic!("expected a conflict, got {}", outcome.kind());
    };
    assert_eq!(hunks.len(), 1);
    let text = String::from_utf8_lossy(marked);
    assert!(text.contains("<<<<<<< ours (patched v4.3.0)\n"));
    assert!(text.contains("||||||| base (v4.3.0)\n"));
    assert!(text.contains(">>>>>>> theirs (95a0932)\n"));
    let theirs_side = String::from_utf8_lossy(&hunks[0].theirs);
    assert!(
        theirs_side.contains("terminationGracePeriodSeconds: 30"),
        "{theirs_side}"
    );
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[hunks[0].line_start - 1].starts_with("<<<<<<< "));
    assert!(lines[hunks[0].line_end - 1].starts_with(">>>>>>> "));
}

/// The real Go source patch, against a stand-in source tree built at run time from the patch's
/// own old side (upstream Go sources are not in the realworld folder).
#[test]
fn realworld_go_source_patch() {
    let Some(root) = std::env::var_os("REVENDOR_REALWORLD").map(PathBuf::from) else {
        eprintln!("note: REVENDOR_REALWORLD is not set; skipping the real Go source patch test");
        return;
    };
    let rel = "cozystack-multus/images/multus-cni/patches/fix-del-without-cache.diff";
    let patch_bytes = fs::read(root.join(rel)).unwrap();
    let set = parse(&patch_bytes).unwrap();
    assert_eq!(write(&set), patch_bytes);
    let [file] = set.files.as_slice() else {
        panic!("{rel} should patch one file");
    };
    assert!(
        file.header
            .starts_with(b"diff --git a/pkg/multus/multus.go b/pkg/multus/multus.go\nindex ")
    );
    assert_eq!(file.target_path(1).as_deref(), Some("pkg/multus/multus.go"));
    let hunk = &file.hunks[0];
    assert!(hunk.section.starts_with(b" func CmdDel("));

    // Upstream as the patch saw it: filler up to the hunk, then its old side. v4.3.0 has 106
    // more lines above (facts.toml: "applies at v4.3.0 with offset 106").
    let filler = |n: usize| -> Vec<u8> {
        (0..n)
            .flat_map(|i| format!("// {i}\n").into_bytes())
            .collect()
    };
    let old_side: Vec<u8> = hunk.old_lines().flatten().copied().collect();
    let at = |above: usize| -> Tree {
        let source = [filler(above), old_side.clone(), b"}\n".to_vec()].concat();
        [("pkg/multus/multus.go".to_string(), source)].into()
    };
    let v423 = at(hunk.old_start - 1);
    let v430 = at(hunk.old_start - 1 + 106);
    assert_eq!(apply_tree(&set, 1, &v423).unwrap().files[0].offsets, [0]);
    let rebased = rebase_tree(&set, 1, &v423, &v430, &LABELS).unwrap();
    assert!(
        matches!(&rebased.files[0].outcome, Outcome::Offset { offsets, .. } if offsets == &[106])
    );
    let patched = &rebased.tree["pkg/multus/multus.go"];
    let refreshed = refresh(file, &v430["pkg/multus/multus.go"], patched);
    // The header is kept but for the index line, which names the blobs the refreshed patch
    // now turns one into the other (`git apply --3way` looks them up).
    let index = format!(
        "index {}..{} 100644\n",
        git_blob(&v430["pkg/multus/multus.go"]),
        git_blob(patched)
    );
    assert_eq!(
        String::from_utf8_lossy(&refreshed.header),
        format!("diff --git a/pkg/multus/multus.go b/pkg/multus/multus.go\n{index}"),
    );
    assert_eq!(refreshed.hunks[0].old_start, hunk.old_start + 106);
}

/// `git hash-object` of `bytes`, cut to git's 7 digits.
fn git_blob(bytes: &[u8]) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("git")
        .args(["hash-object", "--stdin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("git runs");
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap()[..7].to_owned()
}
