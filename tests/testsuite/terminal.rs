//! `revendor update` in a real terminal (tmux), its downloads throttled so the progress bars
//! are on screen while it runs: after the run the screen holds the status lines and the
//! summary, in order, and no bar (issue 11: a download bar stayed on screen as
//! `⠴ multus-daemonset-thick.yml 0 B/7.73 KiB` after a successful run).
//!
//! Skipped with a note when tmux is missing, except in CI.

// Tests print skip notes and read their own switches; clippy.toml's bans are for the tool.
use crate::support;

use std::time::Duration;

use support::{GitHub, Tmux, app};

/// A progress bar's text: the file name, then `<bytes>/<total>`.
fn has_bar(screen: &str) -> bool {
    screen.lines().any(|l| {
        l.contains("app.yml ") && l.contains("B/") && (l.ends_with(" B") || l.ends_with("KiB"))
    })
}

/// Braille spinner frames (U+2800..U+28FF), indicatif's default ticks.
fn has_spinner(screen: &str) -> bool {
    screen
        .chars()
        .any(|c| ('\u{2800}'..='\u{28ff}').contains(&c))
}

#[test]
fn update_over_a_slow_network_leaves_no_bar_on_screen() {
    if !Tmux::available("update_over_a_slow_network_leaves_no_bar_on_screen") {
        return;
    }
    let gh = GitHub::start();
    app::serve(&gh, &["v1.0.0", "v1.1.0"]);
    // Both downloads (the locked version, then the target) take 1.5 s each.
    gh.throttle_next(&format!("/{}/", app::REPO), Duration::from_millis(1500), 2);
    let pkg = app::package("v1.0.0");
    let cache = tempfile::tempdir().unwrap();

    let env: Vec<String> = gh
        .env()
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .chain([format!("REVENDOR_CACHE_DIR={}", cache.path().display())])
        .collect();
    let command = format!(
        "cd {} && env -u NO_COLOR -u CLICOLOR_FORCE -u GITHUB_TOKEN -u GH_TOKEN {} {} update; \
         echo \"__DO\"\"NE__ $?\"",
        pkg.path().display(),
        env.join(" "),
        env!("CARGO_BIN_EXE_revendor"),
    );
    let tmux = Tmux::start(200, 50);
    let prompt = tmux.screen();
    tmux.send(&command);

    let (screen, seen) = tmux.wait_for(Duration::from_secs(20), has_bar);
    assert!(seen, "no progress bar while the download ran:\n{screen}");
    let (screen, done) = tmux.wait_for(Duration::from_secs(30), |s| s.contains("\n__DONE__ "));
    assert!(done, "the run did not finish:\n{screen}");

    let after: Vec<&str> = screen
        .lines()
        .skip_while(|l| !l.contains("__DO\"\"NE__"))
        .skip(1)
        .collect();
    assert_eq!(
        after,
        [
            // Issue 20: adopted at `version` and written, then moved.
            "    Adopting github:example/app at v1.0.0",
            "    Fetching deploy/app.yml at v1.0.0",
            "     Adopted the package at v1.0.0 (upstream/lock.toml written); now the move",
            "    Updating github:example/app v1.0.0 -> v1.1.0",
            "    Fetching deploy/app.yml at v1.1.0",
            "adopted the package at v1.0.0 (no lock before), then moved to v1.1.0",
            "upstream: v1.0.0 -> v1.1.0",
            "patch namespace on templates/app.yml: exact",
            "created templates/app.yml",
            "created upstream/deploy/app.yml",
            "created upstream/lock.toml",
            "updated vendor.toml",
            "__DONE__ 0",
            prompt.as_str(),
        ],
        "the screen after the run:\n{screen}"
    );
    assert!(!has_bar(&screen) && !has_spinner(&screen), "{screen}");
}
