//! A real terminal for the tool: a private tmux server, one pane, keys sent to its shell and
//! the screen read back, as a person at a terminal would see it.
//!
//! 1. [`Tmux::available`] says whether `/usr/bin/tmux` (or `tmux` on `PATH`) runs; without it a
//!    test skips with a note, except in CI (`CI` set), where a missing tool is a broken install
//!    step and fails, as with the registry and buildah.
//! 2. [`Tmux::start`] runs a server on a socket in a temporary directory (never the user's
//!    server), with no configuration file, and a `/bin/sh` pane of a fixed size.
//! 3. [`Tmux::send`] types a line and Enter; [`Tmux::screen`] is `capture-pane -p -J`: the
//!    visible text with colours dropped and wrapped lines joined.
//! 4. Dropping it kills that server (by its socket), and the pane's processes with it.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A private tmux server with one pane.
pub struct Tmux {
    socket: PathBuf,
    _dir: tempfile::TempDir,
}

impl Tmux {
    /// Whether tmux runs here; prints the skip note for `test` when it does not, and panics
    /// when `CI` is set.
    pub fn available(test: &str) -> bool {
        let found = Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(
            found || std::env::var_os("CI").is_none(),
            "CI is set but tmux is missing (see scripts/install-test-deps)"
        );
        if !found {
            eprintln!("note: skipping {test}: tmux is not installed (Debian package tmux)");
        }
        found
    }

    /// A server with one `/bin/sh` pane of `width` × `height` cells, its prompt shown.
    ///
    /// Waiting for the prompt matters: keys sent earlier are echoed before it, and the command
    /// then starts with the cursor after the prompt instead of at the start of a line, where
    /// no program expects it.
    pub fn start(width: u16, height: u16) -> Tmux {
        let dir = tempfile::tempdir().expect("a directory for the tmux socket");
        let tmux = Tmux {
            socket: dir.path().join("socket"),
            _dir: dir,
        };
        let (w, h) = (width.to_string(), height.to_string());
        tmux.run(&[
            "new-session",
            "-d",
            "-s",
            "test",
            "-x",
            &w,
            "-y",
            &h,
            "/bin/sh",
        ]);
        let (screen, prompt) = tmux.wait_for(Duration::from_secs(10), |s| !s.is_empty());
        assert!(prompt, "the shell showed no prompt: {screen:?}");
        tmux
    }

    /// Types `line` into the pane's shell and presses Enter.
    pub fn send(&self, line: &str) {
        self.run(&["send-keys", "-t", "test", "-l", line]);
        self.run(&["send-keys", "-t", "test", "Enter"]);
    }

    /// The pane's text as shown now: no colours, wrapped lines joined, trailing blanks cut.
    pub fn screen(&self) -> String {
        let out = self.run(&["capture-pane", "-p", "-J", "-t", "test"]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
        let end = lines
            .iter()
            .rposition(|l| !l.is_empty())
            .map_or(0, |i| i + 1);
        lines[..end].join("\n")
    }

    /// Reads the screen every 50 ms until `done` holds for it, at most `timeout`; the last
    /// screen read, and whether `done` held.
    pub fn wait_for(&self, timeout: Duration, done: impl Fn(&str) -> bool) -> (String, bool) {
        let until = Instant::now() + timeout;
        loop {
            let screen = self.screen();
            if done(&screen) {
                return (screen, true);
            }
            if Instant::now() > until {
                return (screen, false);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(["-f", "/dev/null"])
            .args(args)
            .output()
            .expect("run tmux");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}
