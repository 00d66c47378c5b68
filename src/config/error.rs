//! [`ConfigError`]: a malformed input named by file, line and key.

use std::fmt;
use std::path::PathBuf;

/// A configuration or input file that cannot be used as written.
///
/// Rendered on one line as `file:line: message`, with the hint (what to do)
/// printed after it by `cli`. The line is 1-based and absent only where the
/// problem is the file as a whole (missing, unreadable).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file at fault, as the user would name it.
    pub file: PathBuf,
    /// 1-based line, when the fault has one.
    pub line: Option<usize>,
    /// What is wrong, naming the key.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
}

impl ConfigError {
    /// An error at a line of `file`.
    pub fn at(file: impl Into<PathBuf>, line: Option<usize>, message: impl Into<String>) -> Self {
        ConfigError {
            file: file.into(),
            line,
            message: message.into(),
            hint: None,
        }
    }

    /// Adds what the user should do.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file.display(), line, self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

impl std::error::Error for ConfigError {}

/// The 1-based line holding byte `offset` of `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_of_counts_newlines_before_offset() {
        let text = "a\nbb\nccc\n";
        assert_eq!(line_of(text, 0), 1);
        assert_eq!(line_of(text, 2), 2);
        assert_eq!(line_of(text, 5), 3);
        assert_eq!(line_of(text, 999), 4);
    }

    #[test]
    fn display_names_file_and_line() {
        let e = ConfigError::at("vendor.toml", Some(3), "unknown key `x`");
        assert_eq!(e.to_string(), "vendor.toml:3: unknown key `x`");
    }
}
