//! A request held at the stand-in until the test lets it go: the test acts at a known point
//! of a run (after the requests before this one, before any after it), with no sleep.

use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

/// One held request: whether it arrived, and whether the test released it.
#[derive(Default)]
pub struct Gate {
    state: Mutex<(bool, bool)>,
    changed: Condvar,
}

/// How long a held request waits for a test that never releases it (a failed assertion
/// before `release`): then it is answered anyway, so the run under test can end.
const ABANDONED: Duration = Duration::from_secs(120);

impl Gate {
    /// Whether the held request has arrived.
    pub fn arrived(&self) -> bool {
        self.lock().0
    }

    /// Lets the held request be answered.
    pub fn release(&self) {
        self.lock().1 = true;
        self.changed.notify_all();
    }

    /// Called by the server: notes the arrival, then waits for the release.
    pub(super) fn hold(&self) {
        let mut state = self.lock();
        state.0 = true;
        let released = |s: &mut (bool, bool)| !s.1;
        drop(
            self.changed
                .wait_timeout_while(state, ABANDONED, |s| released(s))
                .unwrap_or_else(PoisonError::into_inner),
        );
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (bool, bool)> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
