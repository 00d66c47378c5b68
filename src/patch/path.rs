//! File names inside patch headers: reading them out of `---`/`+++`/`diff --git` lines and
//! stripping leading components like `patch -pN`.
//!
//! A header name may carry a tab and a timestamp (`diff -u`), be C-quoted by git when it holds
//! unusual bytes (`"a/tab\there"`), or be `/dev/null` for a created or deleted file. Names that are
//! not UTF-8 are treated as absent: every caller needs a `String` key, and guessing one with a
//! lossy conversion would patch the wrong file.

/// The name a `---`/`+++` line body carries (the text after `--- `), without its terminator,
/// quotes or timestamp. `None` for `/dev/null` or a name that is not UTF-8.
pub(crate) fn header_name(body: &[u8]) -> Option<String> {
    let body = trim_eol(body);
    let raw = if body.first() == Some(&b'"') {
        unquote(body)?.0
    } else {
        let end = body.iter().position(|&b| b == b'\t').unwrap_or(body.len());
        body[..end].to_vec()
    };
    if raw == b"/dev/null" || raw.is_empty() {
        return None;
    }
    String::from_utf8(raw).ok()
}

/// Both names of a `diff --git a/x b/x` line (the text after `diff --git `).
///
/// Unquoted names may contain spaces, so the line is split where both halves name the same file
/// once their first component is dropped, as git itself does. Renames make the halves differ;
/// their names come from the `rename from`/`rename to` lines instead.
pub(crate) fn git_line_names(rest: &[u8]) -> Option<(String, String)> {
    let rest = trim_eol(rest);
    if rest.first() == Some(&b'"') {
        let (old, used) = unquote(rest)?;
        let tail = rest.get(used..)?.strip_prefix(b" ")?;
        let new = if tail.first() == Some(&b'"') {
            unquote(tail)?.0
        } else {
            tail.to_vec()
        };
        return Some((String::from_utf8(old).ok()?, String::from_utf8(new).ok()?));
    }
    let text = std::str::from_utf8(rest).ok()?;
    text.match_indices(' ').find_map(|(at, _)| {
        let (old, new) = (&text[..at], &text[at + 1..]);
        let same = strip(old, 1).is_some() && strip(old, 1) == strip(new, 1);
        same.then(|| (old.to_string(), new.to_string()))
    })
}

/// `name` without its first `n` components, like `patch -pN`: each component ends at a slash and
/// runs of slashes count as one. `None` when fewer than `n` slashes remain or nothing is left.
pub(crate) fn strip(name: &str, n: usize) -> Option<String> {
    let mut rest = name;
    for _ in 0..n {
        let slash = rest.find('/')?;
        rest = rest[slash..].trim_start_matches('/');
    }
    (!rest.is_empty()).then(|| rest.to_string())
}

/// `line` without its trailing `\n` or `\r\n`.
pub(crate) fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Decodes a git C-quoted name starting at `quoted[0] == b'"'`; returns the bytes and how many
/// input bytes the quoted name used, closing quote included.
fn unquote(quoted: &[u8]) -> Option<(Vec<u8>, usize)> {
    let mut out = Vec::new();
    let mut i = 1;
    loop {
        match *quoted.get(i)? {
            b'"' => return Some((out, i + 1)),
            b'\\' => {
                let esc = *quoted.get(i + 1)?;
                i += 2;
                out.push(match esc {
                    b'a' => 0x07,
                    b'b' => 0x08,
                    b'f' => 0x0c,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'v' => 0x0b,
                    b'0'..=b'3' => {
                        let digits = quoted.get(i..i + 2)?;
                        if !digits.iter().all(|d| (b'0'..=b'7').contains(d)) {
                            return None;
                        }
                        i += 2;
                        ((esc - b'0') << 6) | ((digits[0] - b'0') << 3) | (digits[1] - b'0')
                    }
                    other => other,
                });
            }
            byte => {
                out.push(byte);
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_name_drops_timestamp_and_terminator() {
        assert_eq!(
            header_name(b"a/x.yml\t2024-01-01 00:00:00.000000000 +0000\r\n").as_deref(),
            Some("a/x.yml")
        );
        assert_eq!(header_name(b"b/dir/y\n").as_deref(), Some("b/dir/y"));
        assert_eq!(header_name(b"/dev/null\n"), None);
        assert_eq!(header_name(b"b/\xff\n"), None);
    }

    #[test]
    fn header_name_unquotes_git_names() {
        assert_eq!(
            header_name(b"\"a/tab\\there \\\"q\\\" \\303\\251\"\n").as_deref(),
            Some("a/tab\there \"q\" \u{e9}")
        );
        assert_eq!(header_name(b"\"a/unterminated\n"), None);
        assert_eq!(header_name(b"\"a/\\9x\"\n").as_deref(), Some("a/9x"));
    }

    #[test]
    fn git_line_names_split_where_halves_agree() {
        assert_eq!(
            git_line_names(b"a/my file b/my file\n"),
            Some(("a/my file".into(), "b/my file".into()))
        );
        assert_eq!(
            git_line_names(b"\"a/x\\ty\" \"b/x\\ty\"\n"),
            Some(("a/x\ty".into(), "b/x\ty".into()))
        );
        assert_eq!(git_line_names(b"a/old b/new\n"), None);
    }

    #[test]
    fn strip_counts_components_like_patch() {
        let deep = "a/packages/system/multus/templates/x.yml";
        assert_eq!(strip(deep, 0).as_deref(), Some(deep));
        assert_eq!(
            strip(deep, 1).as_deref(),
            Some("packages/system/multus/templates/x.yml")
        );
        assert_eq!(strip(deep, 4).as_deref(), Some("templates/x.yml"));
        assert_eq!(strip(deep, 5).as_deref(), Some("x.yml"));
        assert_eq!(strip(deep, 6), None);
        assert_eq!(strip("a//b", 1).as_deref(), Some("b"));
        assert_eq!(strip("/abs/x", 1).as_deref(), Some("abs/x"));
        assert_eq!(strip("a/", 1), None);
    }
}
