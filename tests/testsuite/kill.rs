//! A run killed at any moment (issue 13): `update` and `render` killed at random points a
//! hundred times each (`image pin`, `check --fix` and `pr --create` are killed in their own
//! files, beside their setups); every entry point finishing an interrupted write before it
//! reads; a read-only package read as its interrupted write leaves it; and the journal
//! fsyncing the directories it renamed into before it removes its plan.
//!
//! Kills are SIGKILL (`Child::kill`), nothing the process can catch.

use crate::support;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use support::kill::{Rounds, STAGING, Tally, restore};
use support::{GitHub, Revendor, TempPackage, app};

/// The app package adopted at v1.0.0, with v1.1.0 released.
fn adopted(gh: &GitHub) -> (TempPackage, Revendor) {
    app::serve(gh, &["v1.0.0", "v1.1.0"]);
    let pkg = app::package("v1.0.0");
    let rv = Revendor::new(pkg.path(), gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    (pkg, rv)
}

/// Runs `check --offline`, the next command of every round: it finishes or discards an
/// interrupted write, then judges the tree (0 or 1, never a failure to read it).
fn check(rv: &Revendor) {
    let run = rv.run(&["check", "--offline"]);
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
}

/// Kills `revendor <command>` a hundred times in the package as it is (see [`Rounds`]), with
/// `check --offline` as the next command of each round.
fn kill_rounds(name: &str, pkg: &TempPackage, rv: &Revendor, seed: u64, command: &str) -> Tally {
    let old = support::kill::state(pkg.path(), &[]);
    let rounds = Rounds {
        name,
        dir: pkg.path(),
        ignore: &[],
        cache: Some(rv.cache()),
        min: 100,
        seed,
    };
    rounds.run(
        || {
            rv.run(&[command]).expect(0);
        },
        || rv.spawn(&[command]),
        || check(rv),
        || restore(pkg.path(), &old, &[]),
    )
}

#[test]
fn sigkill_during_update_leaves_the_old_tree_or_the_new_one() {
    let gh = GitHub::start();
    let (pkg, rv) = adopted(&gh);
    kill_rounds("update", &pkg, &rv, 0x9e37_79b9_7f4a_7c15, "update");
}

#[test]
fn sigkill_during_render_leaves_the_old_tree_or_the_new_one() {
    let gh = GitHub::start();
    let (pkg, rv) = adopted(&gh);
    // A new patch: render writes the template and the lock (the patch's sha256).
    let patch = pkg
        .read_string("patches/namespace.patch")
        .replace("cozy-app", "cozy-other");
    pkg.write("patches/namespace.patch", patch);
    kill_rounds("render", &pkg, &rv, 0x2545_f491_4f6c_dd1d, "render");
}

/// A render writing one file (the rendered template, removed) writes no plan: its staged file
/// renamed into place is the commit point.
#[test]
fn sigkill_during_a_one_file_render_leaves_the_old_tree_or_the_new_one() {
    let gh = GitHub::start();
    let (pkg, rv) = adopted(&gh);
    std::fs::remove_file(pkg.join("templates/app.yml")).unwrap();
    let tally = kill_rounds(
        "one-file render",
        &pkg,
        &rv,
        0x853c_49e6_748f_ea9b,
        "render",
    );
    assert_eq!(tally.planned, 0, "a one-file write has no plan: {tally:?}");
}

/// The package as an update to v1.1.0 killed after its commit point leaves it: every changed
/// file staged, half of them already renamed into place. Returns the tree the finished write
/// leaves.
fn interrupted(pkg: &TempPackage, gh: &GitHub) -> BTreeMap<String, Vec<u8>> {
    let old = support::kill::state(pkg.path(), &[]);
    Revendor::new(pkg.path(), gh).run(&["update"]).expect(0);
    let new = pkg.snapshot();
    restore(pkg.path(), &old, &[]);
    let changed: Vec<&String> = new.keys().filter(|p| old.get(*p) != new.get(*p)).collect();
    assert!(changed.len() >= 3, "{changed:?}");
    let mut plan = String::new();
    for (n, path) in changed.iter().enumerate() {
        plan.push_str(&format!("write {n} {path}\n"));
        if n % 2 == 0 {
            pkg.write(path, &new[*path]);
        } else {
            pkg.write(&format!("{STAGING}/{n}"), &new[*path]);
        }
    }
    pkg.write(&format!("{STAGING}/plan"), plan);
    new
}

fn without_staging(tree: BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    tree.into_iter()
        .filter(|(p, _)| !p.starts_with(&format!("{STAGING}/")))
        .collect()
}

/// Every command finishes an interrupted write before it reads the package, whatever it goes
/// on to do (or fail at, as `image pin` without an `[image]` and `pr` outside git do).
#[test]
fn every_command_finishes_an_interrupted_write_first() {
    let gh = GitHub::start();
    let commands: [&[&str]; 7] = [
        &["check", "--offline"],
        &["render"],
        &["update", "--dry-run"],
        &["update", "--continue"],
        &["patch", "refresh"],
        &["image", "pin"],
        &["pr"],
    ];
    let (pkg, _) = adopted(&gh);
    let old = support::kill::state(pkg.path(), &[]);
    for args in commands {
        let new = interrupted(&pkg, &gh);
        let run = Revendor::new(pkg.path(), &gh).run(args);
        assert!(!pkg.exists(STAGING), "{args:?}: {}", run.stderr);
        assert_eq!(pkg.snapshot(), new, "{args:?}");
        assert!(
            run.stderr
                .contains("an interrupted run had committed; its writes were completed"),
            "{args:?}: {}",
            run.stderr
        );
        restore(pkg.path(), &old, &[]);
    }
}

/// `path` and everything under it read-only (`a-w`).
fn read_only(path: &Path, on: bool) {
    let meta = std::fs::symlink_metadata(path).unwrap();
    if meta.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            read_only(&entry.unwrap().path(), on);
        }
    }
    let mode = match (meta.is_dir(), on) {
        (true, true) => 0o555,
        (true, false) => 0o755,
        (false, true) => 0o444,
        (false, false) => 0o644,
    };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Whether this process may write into a directory it made read-only (root may).
fn permissions_bind() -> bool {
    let dir = tempfile::tempdir().unwrap();
    read_only(dir.path(), true);
    let written = std::fs::write(dir.path().join("probe"), "x").is_ok();
    read_only(dir.path(), false);
    !written
}

/// `cmd` as it runs for a user who cannot write the read-only package: as is when permissions
/// bind this process, else as `nobody` through `setpriv` (root ignores permission bits).
fn as_reader(cmd: Command) -> Option<Command> {
    if permissions_bind() {
        return Some(cmd);
    }
    let setpriv = Path::new("/usr/bin/setpriv");
    if !setpriv.exists() {
        return None;
    }
    let mut wrapped = Command::new(setpriv);
    wrapped
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(v) => wrapped.env(key, v),
            None => wrapped.env_remove(key),
        };
    }
    Some(wrapped)
}

/// Issue 13: "a read-only package holding an interrupted write fails even `check` with a
/// bare Permission denied". It is checked as the write leaves it, says so, and changes no
/// byte; a write there refuses to start until the interrupted one is finished, naming what to
/// do; once the package is writable, the next command finishes it on disk.
#[test]
fn a_read_only_package_is_checked_as_its_interrupted_write_leaves_it() {
    let gh = GitHub::start();
    let (pkg, _) = adopted(&gh);
    let new = interrupted(&pkg, &gh);
    let rv = Revendor::new(pkg.path(), &gh);
    let mixed = pkg.snapshot();
    assert_ne!(without_staging(mixed.clone()), new);
    std::fs::set_permissions(rv.cache(), std::fs::Permissions::from_mode(0o777)).unwrap();
    read_only(pkg.path(), true);
    let run = |args: &[&str]| {
        let mut cmd = as_reader(rv.command(args))?;
        let out = cmd.output().unwrap();
        Some((
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ))
    };
    let Some((code, stderr)) = run(&["check", "--offline"]) else {
        read_only(pkg.path(), false);
        eprintln!("skipped: running as root without /usr/bin/setpriv");
        return;
    };
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(
            "warning: an interrupted run had committed, and its writes cannot be completed here"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("Permission denied"), "{stderr}");
    assert!(
        stderr.contains(
            "the files on disk stay mixed until a revendor command runs where it can write"
        ),
        "{stderr}"
    );
    assert_eq!(pkg.snapshot(), mixed, "nothing on disk changed");

    let (code, stderr) = run(&["update", "--to", "v1.0.0"]).unwrap();
    assert_eq!(code, 3, "{stderr}");
    assert!(
        stderr.contains("must be finished first, and could not be"),
        "{stderr}"
    );
    assert!(
        stderr.contains("help: make the package writable and run any revendor command there"),
        "{stderr}"
    );
    assert_eq!(pkg.snapshot(), mixed, "nothing on disk changed");

    read_only(pkg.path(), false);
    rv.run(&["check", "--offline"]).expect(0);
    assert_eq!(pkg.snapshot(), new);
}

/// The journal removes its plan only after the directories it renamed into are fsynced: a
/// crash after that cannot lose a rename that no plan records any more. Read from the
/// system calls of a real update (strace).
#[test]
fn the_journal_fsyncs_the_directories_it_renamed_into_before_removing_its_plan() {
    let gh = GitHub::start();
    let (pkg, rv) = adopted(&gh);
    let Some(text) = traced(&rv, &["update"]) else {
        return;
    };
    let calls: Vec<&str> = text.lines().filter(|l| l.contains("= 0")).collect();

    let staging = format!("{}/{STAGING}", pkg.path().display());
    let quoted =
        |l: &str| -> Vec<String> { l.split('"').skip(1).step_by(2).map(str::to_owned).collect() };
    // The roll-forward: renames out of the staging directory into the package.
    let renames: Vec<(usize, String)> = calls
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains("rename"))
        .filter_map(|(i, l)| {
            let names = quoted(l);
            let (from, to) = (names.first()?, names.last()?);
            (from.starts_with(&staging) && !to.starts_with(&staging)).then(|| (i, to.clone()))
        })
        .collect();
    assert!(renames.len() >= 3, "{text}");
    let plan_removed = calls
        .iter()
        .position(|l| {
            l.contains("unlink")
                && (l.contains(&format!("{staging}/plan\""))
                    || (l.contains(&format!("<{staging}>")) && l.contains("\"plan\"")))
        })
        .unwrap_or_else(|| panic!("the plan is removed:\n{text}"));
    let last_rename = renames.iter().map(|(i, _)| *i).max().unwrap();
    assert!(last_rename < plan_removed, "{text}");
    for (_, to) in &renames {
        let dir = Path::new(to).parent().unwrap().display().to_string();
        let synced = calls[last_rename..plan_removed]
            .iter()
            .any(|l| l.contains("fsync(") && l.contains(&format!("<{dir}>")));
        assert!(synced, "{dir} is not fsynced before the plan goes:\n{text}");
    }
}

/// The journal's system calls (renames, fsyncs, removals) of `revendor <args>`, as
/// `strace -f -y` writes them; `None` (the test skipped) without strace.
fn traced(rv: &Revendor, args: &[&str]) -> Option<String> {
    if Command::new("strace").arg("-V").output().is_err() {
        eprintln!("skipped: strace is not installed");
        return None;
    }
    let trace = tempfile::NamedTempFile::new().unwrap();
    let mut cmd = Command::new("strace");
    let run = rv.command(args);
    cmd.args(["-f", "-y", "-qq", "-o"])
        .arg(trace.path())
        .args([
            "-e",
            "trace=rename,renameat,renameat2,fsync,unlink,unlinkat,rmdir",
        ])
        .arg(run.get_program())
        .args(run.get_args());
    for (key, value) in run.get_envs() {
        match value {
            Some(v) => cmd.env(key, v),
            None => cmd.env_remove(key),
        };
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(std::fs::read_to_string(trace.path()).unwrap())
}

/// A write of one file syncs its staged copy, renames it into place and syncs the directory
/// it went into, in that order, and writes no plan: two fsyncs, not five (issue 23).
#[test]
fn a_one_file_write_is_synced_renamed_and_its_directory_synced_without_a_plan() {
    let gh = GitHub::start();
    let (pkg, rv) = adopted(&gh);
    std::fs::remove_file(pkg.join("templates/app.yml")).unwrap();
    let Some(text) = traced(&rv, &["render"]) else {
        return;
    };
    let calls: Vec<&str> = text.lines().filter(|l| l.contains("= 0")).collect();
    assert!(!text.contains("plan"), "{text}");
    let staged = format!("{}/{STAGING}/0", pkg.path().display());
    let template = format!("{}/templates", pkg.path().display());
    let fsyncs: Vec<&&str> = calls.iter().filter(|l| l.contains("fsync(")).collect();
    assert_eq!(fsyncs.len(), 2, "{text}");
    assert!(fsyncs[0].contains(&format!("<{staged}>")), "{text}");
    assert!(fsyncs[1].contains(&format!("<{template}>")), "{text}");
    let at = |what: &[String]| {
        calls
            .iter()
            .position(|l| what.iter().all(|w| l.contains(w.as_str())))
            .unwrap_or_else(|| panic!("{what:?}:\n{text}"))
    };
    let rename = at(&[
        "rename".to_owned(),
        format!("\"{staged}\""),
        format!("\"{template}/app.yml\""),
    ]);
    assert!(
        at(&["fsync(".to_owned(), format!("<{staged}>")]) < rename,
        "{text}"
    );
    assert!(rename < at(&[format!("<{template}>")]), "{text}");
}

/// A plan revendor did not write (committed by someone, or crafted) that names paths outside
/// the package is refused before anything moves: the file it names survives, the package is
/// as it was, and the error names the plan's line.
#[test]
fn a_plan_naming_a_path_outside_the_package_is_refused_whole() {
    let gh = GitHub::start();
    let (pkg, _) = adopted(&gh);
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "keep me").unwrap();
    let climb = "../".repeat(pkg.path().components().count());
    let target = format!(
        "{climb}{}",
        victim.display().to_string().trim_start_matches('/')
    );
    pkg.write(
        &format!("{STAGING}/plan"),
        format!("remove templates/nothing.yml\nremove {target}\n"),
    );
    let before = pkg.snapshot();
    for args in [&["check", "--offline"][..], &["render"]] {
        let run = Revendor::new(pkg.path(), &gh).run(args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "{STAGING}/plan:2: `remove {target}` is not a step revendor writes"
            )),
            "{args:?}: {}",
            run.stderr
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        assert_eq!(pkg.snapshot(), before, "{args:?}");
    }
}

/// issue 21, the symlinked plan: a plan whose paths go through a symlinked
/// directory inside the package (`evil -> /outside`) made `check --offline`
/// delete and create files outside it, since only a literal `..` was
/// refused. Each step's path is now resolved on disk first: the plan is
/// refused whole, naming its line, and nothing outside moves.
#[test]
fn a_plan_through_a_symlinked_directory_is_refused_whole() {
    let gh = GitHub::start();
    let (pkg, _) = adopted(&gh);
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "keep me").unwrap();
    std::os::unix::fs::symlink(outside.path(), pkg.path().join("evil")).unwrap();
    pkg.write(&format!("{STAGING}/0"), "planted");
    pkg.write(
        &format!("{STAGING}/plan"),
        "remove evil/victim\nwrite 0 evil/planted\n",
    );
    let before = pkg.snapshot();
    for args in [&["check", "--offline"][..], &["render"]] {
        let run = Revendor::new(pkg.path(), &gh).run(args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "{STAGING}/plan:1: `remove evil/victim` is not a step revendor writes"
            )) && run.stderr.contains("outside the package"),
            "{args:?}: {}",
            run.stderr
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        assert!(!outside.path().join("planted").exists());
        assert_eq!(pkg.snapshot(), before, "{args:?}");
    }
}
