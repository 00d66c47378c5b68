//! The last lock this process parsed, by its text (issue 23): `update`
//! reads the lock, then its closing check reads it again before the commit,
//! and `check` reads it twice; at 10,000 files each parse of the 1.7 MB
//! lock costs tens of milliseconds, a clone of the parsed rows a few.
//!
//! A lock is a function of its text alone (the path only names it in
//! errors), so a text read again byte for byte is the lock parsed before.
//! Only a lock that parsed is remembered (by [`crate::config::lock::Lock::parse`]):
//! a malformed one is parsed again, and says where it is wrong each time. A
//! changed lock (what `update` commits) is a new text and is parsed anew.

use std::sync::Mutex;

/// One remembered parse: the text parsed last, and what it parsed to.
pub(super) struct Memo<T>(Mutex<Option<(String, T)>>);

impl<T: Clone> Memo<T> {
    /// A memo that remembers nothing yet.
    pub(super) const fn new() -> Memo<T> {
        Memo(Mutex::new(None))
    }

    /// What `text` parsed to, when it is the text parsed last.
    pub(super) fn recall(&self, text: &str) -> Option<T> {
        let last = self.0.lock().ok()?;
        match last.as_ref() {
            Some((known, parsed)) if known == text => Some(parsed.clone()),
            _ => None,
        }
    }

    /// Remembers that `text` parsed to `parsed`, in place of the one before.
    pub(super) fn remember(&self, text: &str, parsed: &T) {
        if let Ok(mut last) = self.0.lock() {
            *last = Some((text.to_owned(), parsed.clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_recalled_only_as_what_it_parsed_to() {
        let memo = Memo::new();
        assert_eq!(memo.recall("a"), None);
        memo.remember("a", &1);
        assert_eq!(memo.recall("a"), Some(1));
        assert_eq!(memo.recall("a\n"), None, "one byte more is another text");
        memo.remember("b", &2);
        assert_eq!(memo.recall("b"), Some(2));
        assert_eq!(memo.recall("a"), None, "only the last parse is kept");
    }
}
