//! issue 21, one writer at a time: two `update`s of one directory package at once never leave
//! a tree mixing both, a reader never sees a writer's half-done tree, and a run that cannot
//! get the package gives up with exit 3 naming the process that holds it.

use crate::support;
use crate::vendor_dir::{REPO, package, serve};

use std::collections::BTreeMap;
use std::time::Duration;

use support::kill::{STAGING, restore, state};
use support::{GitHub, Revendor};

/// The package adopted at v1.0.0, its tree then, and its tree updated to v1.1.0.
type Trees = (BTreeMap<String, Vec<u8>>, BTreeMap<String, Vec<u8>>);

fn adopted(gh: &GitHub) -> (support::TempPackage, Revendor, Trees) {
    serve(gh);
    let pkg = package(&format!("[upstream]\ngithub = \"{REPO}\"\n"));
    let rv = Revendor::new(pkg.path(), gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    let old = state(pkg.path(), &[]);
    rv.run(&["update", "--to", "v1.1.0"]).expect(0);
    let new = state(pkg.path(), &[]);
    assert_ne!(old, new);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    assert_eq!(
        state(pkg.path(), &[]),
        old,
        "moving back leaves the adopted tree"
    );
    (pkg, rv, (old, new))
}

/// Twenty rounds of `update --to v1.1.0`, `update --to v1.0.0` and `check` started together:
/// both updates finish (the second waits for the first, or has nothing to do), the tree is
/// the one a single update leaves, and `check`, which reads the package before, between or
/// after them, always judges a whole tree.
#[test]
fn two_updates_and_a_check_at_once_never_mix_their_trees() {
    let gh = GitHub::start();
    let (pkg, rv, (old, new)) = adopted(&gh);
    let mut waited = 0;
    for round in 0..20 {
        restore(pkg.path(), &old, &[]);
        let (up, down) = if round % 2 == 0 {
            ("v1.1.0", "v1.0.0")
        } else {
            ("v1.0.0", "v1.1.0")
        };
        let children: Vec<_> = [
            vec!["update", "--to", up],
            vec!["update", "--to", down],
            vec!["check", "--offline"],
        ]
        .into_iter()
        .map(|args| {
            let child = rv
                .command(&args)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            (args, child)
        })
        .collect();
        let runs: Vec<_> = children
            .into_iter()
            .map(|(args, child)| (args, child.wait_with_output().unwrap()))
            .collect();
        for (args, out) in &runs {
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(0),
                "round {round}: {args:?}\n{stderr}"
            );
            if stderr.contains("Waiting for") {
                waited += 1;
                // Named by pid, unless the holder let go before its name was read.
                assert!(
                    stderr.contains("(pid ") || stderr.contains("for another revendor"),
                    "{stderr}"
                );
            }
        }
        let tree = state(pkg.path(), &[]);
        assert!(tree == old || tree == new, "round {round}: a mixed tree");
        assert!(!pkg.exists(STAGING), "round {round}");
        rv.run(&["check", "--offline"]).expect(0);
    }
    eprintln!("{waited} runs of 60 waited for another");
}

/// An update that holds the package (its trees request to GitHub hangs, and its first request
/// was answered, so it holds the lock, taken before any request): a second update gives up
/// after REVENDOR_LOCK_TIMEOUT with exit 3 naming it, and a check waits for it, then reads
/// the tree it wrote.
#[test]
fn a_second_writer_gives_up_naming_the_holder_and_a_reader_waits_for_it() {
    let gh = GitHub::start();
    let (pkg, rv, (_, new)) = adopted(&gh);
    gh.clear_requests();
    gh.hang_next("/repos/o/app/git/trees/", Duration::from_secs(8), 1);
    let mut holder = rv.command(&["update", "--to", "v1.1.0"]).spawn().unwrap();
    while gh.requests().count("/") == 0 {
        assert!(
            holder.try_wait().unwrap().is_none(),
            "the holder ended early"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let loser = Revendor::new(pkg.path(), &gh)
        .env("REVENDOR_LOCK_TIMEOUT", "0.5")
        .run(&["update", "--to", "v1.0.0"])
        .expect(3);
    let pid = format!("(pid {})", holder.id());
    assert!(loser.stderr.contains("Waiting for `"), "{}", loser.stderr);
    assert!(
        loser.stderr.contains("error: `")
            && loser.stderr.contains("update --to v1.1.0`")
            && loser.stderr.contains(&pid)
            && loser.stderr.contains("REVENDOR_LOCK_TIMEOUT"),
        "{}",
        loser.stderr
    );
    let reader = rv.run(&["check", "--offline"]).expect(0);
    assert!(reader.stderr.contains(&pid), "{}", reader.stderr);
    assert!(holder.wait().unwrap().success());
    assert_eq!(state(pkg.path(), &[]), new);
}
