//! SIGKILL at seeded random moments of a run, and what must hold after each kill (issue 13).
//!
//! [`Rounds::run`] times one whole run of the command, then, round after round, starts it,
//! kills it after a delay drawn from a seeded RNG over that time, and checks the tree. Every
//! other delay is drawn from the run's last third instead (to a little past its end), where
//! the writes are: a run spends most of its time starting, reading and fetching.
//!
//! A tree's state is its files with their bytes and its directories, so an empty directory left
//! behind counts as a difference.
//!
//! 1. once what the killed run started has ended too (a `git push` it ran goes on: [`settle`]),
//!    every file is whole, its old bytes or its new ones; and unless
//!    `.revendor-txn/plan` exists, the tree is exactly the old one or the new one (the README's
//!    promise: a mixed tree exists only while its plan does);
//! 2. the next command (which finishes or discards the interrupted write first) leaves the old
//!    tree or the new one, the new one whenever a plan was there, and no staging directory;
//! 3. the download cache holds no temporary file;
//! 4. the tree is put back to the old one for the next round.
//!
//! It goes on for at least [`Rounds::min`] rounds, and until kills have landed on both sides
//! of the commit point (a loaded machine stretches runs) or twice that many.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use super::package::{read_dirs, read_tree};

/// What a state holds for a directory: its path with a trailing `/`, and these bytes.
const DIRECTORY: &[u8] = b"<directory>";

/// The staging directory of a transaction, inside the package.
pub const STAGING: &str = ".revendor-txn";

/// A xorshift generator: the same seed gives the same kill delays.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Starts from `seed` (zero is replaced, xorshift would stay at zero).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    /// A value in `0..n` (`n` at least 1).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// What the kills left, right after each one.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Tally {
    /// Rounds.
    pub rounds: usize,
    /// The old tree, nothing staged.
    pub old: usize,
    /// The old tree and a staging directory without a plan (killed before the commit point).
    pub staged: usize,
    /// A plan: the tree old, new or mixed, finished by the next command.
    pub planned: usize,
    /// Of those, a tree mixing old and new files.
    pub mixed: usize,
    /// The new tree, nothing staged (killed after the write).
    pub new: usize,
}

/// One command to kill, the tree it writes, and its two states.
pub struct Rounds<'a> {
    /// What the report calls it.
    pub name: &'a str,
    /// The tree the command writes: the package.
    pub dir: &'a Path,
    /// Paths under `dir` the command does not own (a Docker config, …), left out of states.
    pub ignore: &'a [&'a str],
    /// The download cache the command uses, checked for temporary files.
    pub cache: Option<&'a Path>,
    /// Rounds at least.
    pub min: usize,
    /// The RNG seed.
    pub seed: u64,
}

impl Rounds<'_> {
    /// Every file with its bytes and every directory (`path/`), staging and `ignore` left out.
    fn state(&self) -> BTreeMap<String, Vec<u8>> {
        state(self.dir, self.ignore)
    }

    /// Runs the rounds: `spawn` starts the command, `next` runs the next command to completion
    /// (it must recover first), `reset` brings the old tree back. The tree must be the old one
    /// when called; `complete` runs the command uninterrupted three times (each followed by
    /// `reset`), to learn the new tree and time a run (the median).
    pub fn run(
        &self,
        complete: impl Fn(),
        spawn: impl Fn() -> Child,
        next: impl Fn(),
        reset: impl Fn(),
    ) -> Tally {
        let old = self.state();
        let mut spans = Vec::new();
        let mut new = old.clone();
        for _ in 0..3 {
            let started = Instant::now();
            complete();
            spans.push(started.elapsed());
            new = self.state();
            assert_ne!(old, new, "{}: the command changes nothing", self.name);
            reset();
            assert_eq!(self.state(), old, "{}: reset", self.name);
        }
        spans.sort();
        let span = spans[1];

        let mut rng = Rng::new(self.seed);
        let mut t = Tally::default();
        let span_us = span.as_micros().max(1000) as u64;
        while t.rounds < self.min || (t.rounds < 2 * self.min && (t.old == 0 || t.new == 0)) {
            t.rounds += 1;
            let delay = if t.rounds % 2 == 0 {
                span_us * 2 / 3 + rng.below(span_us * 2 / 5)
            } else {
                rng.below(span_us)
            };
            let child = spawn();
            std::thread::sleep(Duration::from_micros(delay));
            kill(child);
            let round = format!("{} round {}", self.name, t.rounds);

            let now = self.state();
            for (path, bytes) in &now {
                assert!(
                    old.get(path) == Some(bytes) || new.get(path) == Some(bytes),
                    "{round}: {path} is neither its old nor its new version"
                );
            }
            let plan = self.dir.join(STAGING).join("plan").exists();
            if plan {
                t.planned += 1;
                t.mixed += usize::from(now != old && now != new);
            } else {
                assert!(
                    now == old || now == new,
                    "{round}: a mixed tree on disk without a plan: {:?}",
                    differing(&old, &new, &now)
                );
                if now == new {
                    t.new += 1;
                } else if self.dir.join(STAGING).exists() {
                    t.staged += 1;
                } else {
                    t.old += 1;
                }
            }

            next();
            let after = self.state();
            assert!(
                !self.dir.join(STAGING).exists(),
                "{round}: staging left behind"
            );
            assert!(
                after == old || after == new,
                "{round}: a mixed tree after the next command: {:?}",
                differing(&old, &new, &after)
            );
            assert!(!plan || after == new, "{round}: a committed write was lost");
            if let Some(cache) = self.cache {
                let temporary: Vec<String> = read_tree(cache)
                    .into_keys()
                    .filter(|p| p.ends_with(".tmp"))
                    .collect();
                assert!(
                    temporary.is_empty(),
                    "{round}: left in the cache: {temporary:?}"
                );
            }
            if after != old {
                reset();
                assert_eq!(self.state(), old, "{round}: reset");
            }
        }
        eprintln!("{}: {span:?} a run; {t:?}", self.name);
        assert!(
            t.old + t.staged > 0 && t.new + t.planned > 0,
            "{}: kills landed on both sides of the commit point: {t:?}",
            self.name
        );
        t
    }
}

/// SIGKILLs `child` (spawned by `Revendor::spawn`, leading its process group), reaps it, and
/// [`settle`]s its group.
pub fn kill(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
    settle(child.id());
}

/// Waits until no process is left in process group `pgid`: a killed run's children (a
/// `git push`, a credential helper) are not killed with it and finish what they were doing,
/// which is part of what the kill leaves.
pub fn settle(pgid: u32) {
    let started = Instant::now();
    while in_group(pgid) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "process group {pgid} still runs"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Whether any process's group is `pgid` (`/proc/<pid>/stat`, field 5).
fn in_group(pgid: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // `pid (comm) state ppid pgrp …`: comm may hold spaces and parentheses.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid)
    })
}

/// The paths of `now` that are neither all old nor all new: which files are old, which new.
fn differing(
    old: &BTreeMap<String, Vec<u8>>,
    new: &BTreeMap<String, Vec<u8>>,
    now: &BTreeMap<String, Vec<u8>>,
) -> Vec<String> {
    let mut paths: Vec<&String> = old.keys().chain(new.keys()).chain(now.keys()).collect();
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .filter(|p| old.get(*p) != new.get(*p))
        .map(|p| {
            let side = if now.get(p) == new.get(p) {
                "new"
            } else {
                "old"
            };
            format!("{p}: {side}")
        })
        .collect()
}

/// The files and directories under `dir` (see [`Rounds`]), staging and `ignore` left out.
pub fn state(dir: &Path, ignore: &[&str]) -> BTreeMap<String, Vec<u8>> {
    let dirs = read_dirs(dir)
        .into_iter()
        .map(|d| (format!("{d}/"), DIRECTORY.to_vec()));
    read_tree(dir)
        .into_iter()
        .chain(dirs)
        .filter(|(path, _)| path != &format!("{STAGING}/"))
        .filter(|(path, _)| !path.starts_with(&format!("{STAGING}/")))
        .filter(|(path, _)| !ignore.iter().any(|i| path.starts_with(i)))
        .collect()
}

/// Makes the tree under `dir` hold `state` (taken by [`Rounds`]) again: files written back,
/// files and directories it does not hold removed (outside `ignore`).
pub fn restore(dir: &Path, state: &BTreeMap<String, Vec<u8>>, ignore: &[&str]) {
    let current = self::state(dir, ignore);
    for path in current.keys().filter(|p| !p.ends_with('/')) {
        if !state.contains_key(path) {
            std::fs::remove_file(dir.join(path)).unwrap();
        }
    }
    // Deepest first, so a directory is empty when its turn comes.
    for path in current.keys().rev().filter(|p| p.ends_with('/')) {
        if !state.contains_key(path) {
            std::fs::remove_dir(dir.join(path)).unwrap_or_else(|e| panic!("remove {path}: {e}"));
        }
    }
    for (path, bytes) in state {
        let target = dir.join(path);
        if path.ends_with('/') {
            std::fs::create_dir_all(&target).unwrap();
        } else if std::fs::read(&target).ok().as_deref() != Some(bytes.as_slice()) {
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::write(&target, bytes).unwrap();
        }
    }
}
