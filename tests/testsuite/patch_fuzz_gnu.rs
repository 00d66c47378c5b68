//! `patch::apply_fuzzy` against the real GNU patch: generated files, patches made with exact
//! hunks, and files that drifted under them (lines inserted above, context lines changed,
//! lines deleted). For each case `patch -f -F2 --dry-run` says which hunks needed an offset or
//! fuzz and `patch -f -F2 -o` gives the result; the fuzzy apply must agree on all three:
//! whether every hunk lands, where and with what fuzz each lands, and the bytes.
//!
//! Also the real case the fuzz exists for: cozystack's kube-ovn cozyconfig.diff on the
//! upstream chart at v1.14.5 (REVENDOR_REALWORLD).

// Tests print skip notes and read their own switch (REVENDOR_REALWORLD).
use crate::support;

use std::path::Path;
use std::process::Command;

use revendor::patch::{self, FilePatch, Landing};
use support::Realworld;

/// A small deterministic generator (xorshift), so a failure names a case that reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// Lines from a few repeated values and many unique ones, so hunks have both ambiguous and
/// telling context.
fn line(rng: &mut Rng, serial: &mut usize) -> String {
    const COMMON: [&str; 5] = ["", "}", "  end", "---", "    x: 1"];
    if rng.chance(30) {
        COMMON[rng.below(COMMON.len())].to_string()
    } else {
        *serial += 1;
        format!("line {serial}")
    }
}

fn join(lines: &[String]) -> Vec<u8> {
    lines
        .iter()
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .into_bytes()
}

/// `old` edited in a few places: replaced, inserted and deleted lines.
fn edit(rng: &mut Rng, serial: &mut usize, old: &[String], edits: usize) -> Vec<String> {
    let mut new = old.to_vec();
    for _ in 0..edits {
        let at = rng.below(new.len().max(1));
        match rng.below(3) {
            0 if !new.is_empty() => new[at] = line(rng, serial),
            1 => new.insert(at, line(rng, serial)),
            _ if new.len() > 1 => {
                new.remove(at);
            }
            _ => {}
        }
    }
    new
}

struct Gnu {
    applied: bool,
    content: Vec<u8>,
    landings: Vec<(isize, usize)>,
}

/// `patch -f -F2` on `base`: the dry run's messages, then the output file.
fn gnu(dir: &Path, base: &[u8], diff: &[u8], hunks: usize) -> Gnu {
    let (file, patch_file, out) = (dir.join("f"), dir.join("p"), dir.join("out"));
    std::fs::write(&file, base).unwrap();
    std::fs::write(&patch_file, diff).unwrap();
    let dry = Command::new("patch")
        .args(["-f", "-F2", "--dry-run"])
        .arg(&file)
        .arg(&patch_file)
        .output()
        .expect("run GNU patch");
    let said = String::from_utf8_lossy(&dry.stdout).into_owned();
    let mut landings = vec![(0, 0); hunks];
    for message in said.lines() {
        let Some(rest) = message.strip_prefix("Hunk #") else {
            continue;
        };
        let (number, rest) = rest.split_once(' ').unwrap();
        let number: usize = number.parse().unwrap();
        if !rest.starts_with("succeeded") {
            continue;
        }
        let fuzz = rest.split_once("with fuzz ").map_or(0, |(_, f)| {
            f.split([' ', '.']).next().unwrap().parse().unwrap()
        });
        let offset = rest
            .split_once("(offset ")
            .map_or(0, |(_, o)| o.split(' ').next().unwrap().parse().unwrap());
        landings[number - 1] = (offset, fuzz);
    }
    let _ = std::fs::remove_file(&out);
    let real = Command::new("patch")
        .args(["-f", "-F2", "-s", "-o"])
        .arg(&out)
        .arg(&file)
        .arg(&patch_file)
        .output()
        .expect("run GNU patch");
    assert_eq!(
        real.status.success(),
        dry.status.success(),
        "the dry run and the real run agree"
    );
    Gnu {
        applied: real.status.success(),
        content: std::fs::read(&out).unwrap_or_default(),
        landings,
    }
}

fn template() -> FilePatch {
    patch::parse(b"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n")
        .unwrap()
        .files
        .remove(0)
}

#[test]
fn the_fuzzy_apply_lands_every_hunk_where_gnu_patch_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (mut fuzzed, mut failed, mut moved) = (0, 0, 0);
    for case in 0..400 {
        let mut serial = 0;
        let len = 8 + rng.below(50);
        let old: Vec<String> = (0..len).map(|_| line(&mut rng, &mut serial)).collect();
        let edits = 1 + rng.below(4);
        let new = edit(&mut rng, &mut serial, &old, edits);
        let diff = patch::refresh(&template(), &join(&old), &join(&new));
        if diff.hunks.is_empty() {
            continue;
        }
        let drift = rng.below(6);
        let mut drifted = edit(&mut rng, &mut serial, &old, drift);
        for _ in 0..rng.below(15) {
            drifted.insert(0, line(&mut rng, &mut serial));
        }
        let base = join(&drifted);
        let bytes = patch::write_file(&diff);
        let expected = gnu(dir.path(), &base, &bytes, diff.hunks.len());
        let ours = patch::apply_fuzzy(&diff, &base, 2);
        let show = || {
            format!(
                "case {case}\n--- patch\n{}\n--- file\n{}",
                String::from_utf8_lossy(&bytes),
                String::from_utf8_lossy(&base)
            )
        };
        match ours {
            Ok(result) => {
                assert!(expected.applied, "only GNU fails: {}", show());
                assert_eq!(
                    result.content,
                    expected.content,
                    "different bytes: {}",
                    show()
                );
                let landings: Vec<(isize, usize)> = result
                    .landings
                    .iter()
                    .map(|l: &Landing| (l.offset, l.fuzz))
                    .collect();
                assert_eq!(landings, expected.landings, "{}", show());
                fuzzed += usize::from(landings.iter().any(|l| l.1 > 0));
                moved += usize::from(landings.iter().any(|l| l.0 != 0));
            }
            Err(e) => {
                assert!(!expected.applied, "only ours fails ({e}): {}", show());
                failed += 1;
            }
        }
    }
    // The generator must reach every kind of case, or the comparison proves little.
    assert!(
        fuzzed >= 20 && failed >= 20 && moved >= 50,
        "fuzzed {fuzzed}, failed {failed}, moved {moved}"
    );
}

/// cozystack's cozyconfig.diff and mtu.diff on kube-ovn v1.14.5's chart: GNU patch applies
/// each section as the fuzzy apply does (the values.yaml one only with fuzz 2), and the
/// results are cozystack's committed files.
#[test]
fn kube_ovn_patches_land_on_v1_14_5_as_gnu_patch_lands_them() {
    let Some(rw) = Realworld::from_env() else {
        eprintln!("REVENDOR_REALWORLD is not set; skipping the kube-ovn fuzz comparison");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut files = std::collections::BTreeMap::new();
    let mut fuzzed = Vec::new();
    for name in ["cozyconfig", "mtu"] {
        let text = rw.read(&format!("cozystack-kubeovn-before/patches/{name}.diff"));
        for section in patch::parse(&text).unwrap().files {
            let path = section.target_path(4).unwrap();
            let base = files
                .remove(&path)
                .unwrap_or_else(|| rw.read(&format!("kube-ovn/v1.14.5/{path}")));
            let hunks = section.hunks.len();
            let expected = gnu(dir.path(), &base, &patch::write_file(&section), hunks);
            let ours = patch::apply_fuzzy(&section, &base, 2).unwrap();
            assert!(expected.applied, "{name} on {path}");
            assert_eq!(ours.content, expected.content, "{name} on {path}");
            let landings: Vec<(isize, usize)> =
                ours.landings.iter().map(|l| (l.offset, l.fuzz)).collect();
            assert_eq!(landings, expected.landings, "{name} on {path}");
            if landings.iter().any(|l| l.1 > 0) {
                fuzzed.push((name, path.clone(), landings));
            }
            files.insert(path, ours.content);
        }
    }
    for (path, content) in &files {
        assert!(
            *content == rw.read(&format!("cozystack-kubeovn-before/{path}")),
            "{path} is cozystack's committed file"
        );
    }
    assert_eq!(
        fuzzed,
        [(
            "cozyconfig",
            "charts/kube-ovn/values.yaml".to_string(),
            vec![(10, 2)]
        )]
    );
}
