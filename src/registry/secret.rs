//! `Secret`: a password or token that must never be printed.
//!
//! Every credential and token in `registry` is held in a `Secret`, so deriving `Debug` on any
//! struct that contains one stays safe, and there is no `Display` to format one into an error by
//! accident. The only way out is [`Secret::expose`], which is greppable.

use std::fmt;

use serde::{Deserialize, Deserializer};

/// A string whose `Debug` output is `<redacted>` and which has no `Display`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The secret itself, for building an `Authorization` header and nothing else.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the value is empty (Docker config files hold empty placeholders).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Secret, D::Error> {
        String::deserialize(deserializer).map(Secret)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_value() {
        let secret = Secret::new("hunter2");
        assert_eq!(format!("{secret:?}"), "<redacted>");
        assert_eq!(format!("{:?}", Some(&secret)), "Some(<redacted>)");
        assert_eq!(secret.expose(), "hunter2");
    }
}
