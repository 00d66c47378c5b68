//! Whole-process measurements for the benchmarks: wall time, CPU time and peak RSS of one
//! child, and the median of several runs. CPU time (user + system) is printed beside the wall
//! time because it holds still on a busy machine, where waiting for a core inflates the wall.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One finished child: its wall time and peak resident set size.
#[derive(Clone, Copy, Debug)]
pub struct Measured {
    /// Spawn to exit.
    pub wall: Duration,
    /// User plus system time of the child.
    pub cpu: Duration,
    /// Peak RSS in bytes of the measured program alone, as GNU time reports it.
    pub peak_rss: u64,
}

impl Measured {
    /// Runs `cmd` (stdin closed, stderr inherited, stdout to `stdout`) under GNU time and
    /// panics unless it exits 0.
    ///
    /// Why GNU time: Linux charges a child the peak RSS of the process it was forked or
    /// spawned from (the old address space's high-water mark is kept at exec), so a program
    /// started by this benchmark, which holds the inputs, would report at least the
    /// benchmark's own peak. GNU time is small, and what it forks reports its own peak. Its
    /// fork and exec are in the wall and CPU times of every command measured, the peer's too.
    // The child is reaped by wait4, which std's `Child::wait` cannot stand in for.
    #[allow(clippy::zombie_processes)]
    pub fn of(cmd: &Command, stdout: impl Into<Stdio>) -> Measured {
        let rss = tempfile::NamedTempFile::new().expect("a file for GNU time's report");
        let mut timed = Command::new(GNU_TIME);
        timed
            .args(["-f", "%M", "-o"])
            .arg(rss.path())
            .arg(cmd.get_program())
            .args(cmd.get_args());
        if let Some(dir) = cmd.get_current_dir() {
            timed.current_dir(dir);
        }
        for (key, value) in cmd.get_envs() {
            match value {
                Some(value) => timed.env(key, value),
                None => timed.env_remove(key),
            };
        }
        let started = Instant::now();
        let child = timed
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("{GNU_TIME}: {e} (install the `time` package)"));
        let pid = libc::pid_t::try_from(child.id()).expect("pid");
        let mut status = 0;
        // SAFETY: an all-zero rusage is a valid value of a plain C struct.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `pid` is our own unwaited child; `status` and `usage` outlive the call.
        // std's `Child::wait` would reap it without the rusage that wait4 returns.
        let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        let wall = started.elapsed();
        assert_eq!(reaped, pid, "wait4: {}", std::io::Error::last_os_error());
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "{cmd:?} failed: status {status}"
        );
        let time = |t: libc::timeval| {
            Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
                + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
        };
        let report = std::fs::read_to_string(rss.path()).expect("GNU time's report");
        let kib: u64 = report
            .lines()
            .last()
            .and_then(|l| l.trim().parse().ok())
            .unwrap_or_else(|| panic!("GNU time reported {report:?}"));
        Measured {
            wall,
            cpu: time(usage.ru_utime) + time(usage.ru_stime),
            peak_rss: kib * 1024,
        }
    }
}

/// GNU time (Debian's `time` package), which reports a program's own peak RSS.
const GNU_TIME: &str = "/usr/bin/time";

/// The medians of `runs` runs of `f`: wall time and CPU time each, and the largest peak RSS.
pub fn median(runs: usize, mut f: impl FnMut() -> Measured) -> Measured {
    let all: Vec<Measured> = (0..runs).map(|_| f()).collect();
    let middle = |mut times: Vec<Duration>| {
        times.sort();
        times[runs / 2]
    };
    Measured {
        wall: middle(all.iter().map(|m| m.wall).collect()),
        cpu: middle(all.iter().map(|m| m.cpu).collect()),
        peak_rss: all.iter().map(|m| m.peak_rss).max().unwrap_or(0),
    }
}

/// `a / b` of two durations.
pub fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

/// The line `make bench` is read by, one per figure with a goal:
/// `<what>: revendor/<peer> = X.XX (goal ≤ Y): met|missed, load average L`, on CPU time
/// (user + system), which holds still when other jobs share the cores.
#[allow(dead_code)] // not every benchmark has a goal against a peer
pub fn goal(what: &str, peer: &str, ours: &Measured, theirs: &Measured, goal: f64) {
    let r = ratio(ours.cpu, theirs.cpu);
    let verdict = if r <= goal { "met" } else { "missed" };
    println!(
        "{what}: revendor/{peer} = {r:.2} (goal ≤ {goal}): {verdict}, load average {}",
        load_average()
    );
}

/// The 1, 5 and 15-minute load averages, as /proc/loadavg gives them (empty elsewhere).
pub fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}
