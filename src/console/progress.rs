//! [`Downloads`]: one progress bar per download, inside the shell's
//! `MultiProgress`, cleared when the body is complete.
//!
//! The bars live in the same [`indicatif::MultiProgress`] the shell prints
//! through (`suspend`), so a status line never lands on top of a bar and a
//! finished bar leaves no line behind (issue 11: a reused bar, reset after it
//! finished and drawn again between status lines, stayed on screen as
//! `⠴ multus-daemonset-thick.yml 0 B/7.73 KiB`).

use std::sync::Mutex;

use indicatif::{MultiProgress, ProgressBar, ProgressFinish, ProgressStyle};

/// Drives download bars from the HTTP client's progress hook.
#[derive(Debug)]
pub struct Downloads {
    bars: MultiProgress,
    /// The download in flight: its URL and its bar.
    current: Mutex<Option<(String, ProgressBar)>>,
}

impl Downloads {
    pub(super) fn new(bars: MultiProgress) -> Downloads {
        Downloads {
            bars,
            current: Mutex::new(None),
        }
    }

    /// `url` has `done` bytes of `total`: a new URL gets a new bar (the old
    /// one is cleared), a complete body clears its bar. A body that is
    /// complete on its first call never shows a bar.
    pub fn advance(&self, url: &str, done: u64, total: Option<u64>) {
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if current.as_ref().is_some_and(|(u, _)| u != url) {
            clear(current.take());
        }
        if total == Some(done) {
            clear(current.take());
            return;
        }
        let (_, bar) = current.get_or_insert_with(|| (url.to_string(), self.bar(url)));
        bar.set_length(total.unwrap_or(done));
        bar.set_position(done);
    }

    fn bar(&self, url: &str) -> ProgressBar {
        let style = ProgressStyle::with_template("{spinner} {msg} {bytes}/{total_bytes}")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        let name = url.rsplit('/').next().unwrap_or(url).to_string();
        // Cleared even when dropped unfinished (a transfer that failed).
        let bar = ProgressBar::new(0)
            .with_style(style)
            .with_message(name)
            .with_finish(ProgressFinish::AndClear);
        self.bars.add(bar)
    }
}

fn clear(entry: Option<(String, ProgressBar)>) {
    if let Some((_, bar)) = entry {
        bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use indicatif::ProgressDrawTarget;

    fn downloads() -> Downloads {
        Downloads::new(MultiProgress::with_draw_target(ProgressDrawTarget::hidden()))
    }

    fn live(d: &Downloads) -> Option<(String, ProgressBar)> {
        d.current.lock().unwrap().clone()
    }

    #[test]
    fn a_complete_body_clears_its_bar() {
        let d = downloads();
        d.advance("http://h/a.yml", 10, Some(100));
        let (url, bar) = live(&d).expect("a bar while the body downloads");
        assert_eq!(url, "http://h/a.yml");
        assert_eq!(bar.message(), "a.yml");
        assert_eq!((bar.position(), bar.length()), (10, Some(100)));
        d.advance("http://h/a.yml", 100, Some(100));
        assert!(bar.is_finished());
        assert!(live(&d).is_none());
        // The client reports the total once more after the last chunk: no
        // new bar for a body already done.
        d.advance("http://h/a.yml", 100, Some(100));
        assert!(live(&d).is_none());
    }

    #[test]
    fn a_new_download_finishes_the_one_before() {
        let d = downloads();
        d.advance("http://h/a.yml", 10, None);
        let (_, first) = live(&d).unwrap();
        d.advance("http://h/b.tar.gz", 5, Some(50));
        assert!(first.is_finished());
        assert_eq!(live(&d).unwrap().1.message(), "b.tar.gz");
    }
}
