//! Reading a multi-file unified diff into a [`PatchSet`].
//!
//! 1. Lines outside hunks collect as text until a `---` line directly followed by a `+++` line
//!    opens a file patch. That text becomes the file's header; for the first file, the part
//!    before its first `diff `/`Index: ` line is the set's preamble (a commit message).
//! 2. A `diff --git` line with no `---` before the next one is a git patch without text changes
//!    (mode change, pure rename, binary); it becomes a file patch with no hunks.
//! 3. Hunk bodies are read by count, never by prefix alone: the header's counts say where a hunk
//!    ends, so a removed line `-- x` is never mistaken for a file header. A body that ends early
//!    or runs long is an error naming the patch line.
//!
//! Two inputs are normalised rather than kept byte-exact, both as GNU patch reads them: a blank
//! line inside a hunk is an empty context line (mailers strip the lone space), and a last hunk
//! line cut short by the end of the patch file gets its newline back.

use thiserror::Error;

use super::model::{FilePatch, Hunk, Line, LineKind, PatchSet};

/// Why a patch file could not be read. `line` is the 1-based line of the patch file.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum ParseError {
    /// The `@@` line does not have the `@@ -a,b +c,d @@` shape.
    #[error("line {line}: malformed hunk header `{text}`")]
    HunkHeader {
        /// Patch line of the header.
        line: usize,
        /// The header as written.
        text: String,
    },
    /// A hunk appears before any `---`/`+++` pair.
    #[error("line {line}: hunk `{text}` is outside a file patch (no `---`/`+++` lines before it)")]
    OrphanHunk {
        /// Patch line of the header.
        line: usize,
        /// The header as written.
        text: String,
    },
    /// The hunk body ends before the header's counts are reached.
    #[error(
        "line {line}: hunk `{header}` ends after {old_found} old and {new_found} new lines, \
         but its header says {old_expected} and {new_expected}"
    )]
    Truncated {
        /// Patch line where the body stopped.
        line: usize,
        /// The hunk's `@@` header.
        header: String,
        /// Old-side count from the header.
        old_expected: usize,
        /// Old-side lines read.
        old_found: usize,
        /// New-side count from the header.
        new_expected: usize,
        /// New-side lines read.
        new_found: usize,
    },
    /// The hunk body has more lines of one kind than the header's counts allow.
    #[error("line {line}: hunk `{header}` has more {kind} lines than its header says")]
    Overflow {
        /// Patch line of the first surplus line.
        line: usize,
        /// The hunk's `@@` header.
        header: String,
        /// `context`, `removed` or `added`.
        kind: &'static str,
    },
    /// `\ No newline at end of file` after a line that is not the last of its side.
    #[error(
        "line {line}: `\\ No newline at end of file` follows a line that is not the last of its side"
    )]
    MisplacedMarker {
        /// Patch line of the marker.
        line: usize,
    },
    /// A `---`/`+++` pair with no hunk after it: a section that changes nothing. GNU patch
    /// calls such input garbage and `git apply` finds no patch in it; reading it as "no change"
    /// would make a patch cut to its headers pass as verified while it drops every change.
    #[error("line {line}: `{text}` opens a file section with no hunk after its `+++` line")]
    NoHunks {
        /// Patch line of the `---` line.
        line: usize,
        /// The `---` line as written.
        text: String,
    },
    /// Every file section is a git header without hunks (mode changes, renames) and none is
    /// binary: nothing in the patch changes a line.
    #[error("line {line}: no file section of the patch has a hunk; it changes no line")]
    NothingChanged {
        /// Patch line where the first section starts.
        line: usize,
    },
    /// Nothing in the input looks like a file patch: an empty file, or text that is not a diff.
    #[error("no file patch found: no `---`/`+++` pair and no `diff --git` line")]
    Empty,
}

/// A hunk whose header's counts did not match its body, found by [`parse_recounted`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recounted {
    /// Index of the file patch in the set.
    pub file: usize,
    /// Index of the hunk in its file patch.
    pub hunk: usize,
    /// Patch line of the `@@` header.
    pub line: usize,
    /// The header as written.
    pub header: String,
    /// Old-side lines the body has.
    pub old: usize,
    /// New-side lines the body has.
    pub new: usize,
}

/// Reads a unified diff (plain, `diff -u`, git or `git format-patch` output) without losing
/// any byte a writer needs to reproduce it.
pub fn parse(input: &[u8]) -> Result<PatchSet, ParseError> {
    read(input, None)
}

/// [`parse`] as `git apply --recount` reads: each hunk's counts are those of its body, which
/// runs up to the next `@@ `, `diff ` or `---`/`+++` line or the first line that is not a body
/// line, whatever the header says. Each header whose counts were wrong is listed. For adoption
/// only: everywhere else a header that lies is an error.
pub fn parse_recounted(input: &[u8]) -> Result<(PatchSet, Vec<Recounted>), ParseError> {
    let mut recounted = Vec::new();
    let set = read(input, Some(&mut recounted))?;
    Ok((set, recounted))
}

fn read(input: &[u8], mut recount: Option<&mut Vec<Recounted>>) -> Result<PatchSet, ParseError> {
    let lines: Vec<&[u8]> = super::diff::split(input).collect();
    let mut set = PatchSet {
        preamble: Vec::new(),
        files: Vec::new(),
        trailer: Vec::new(),
    };
    let mut text = Pending::default();
    let mut first_section = None;
    let mut i = 0;
    while let Some(&line) = lines.get(i) {
        if is_file_start(&lines, i) {
            first_section.get_or_insert(text.start_line.unwrap_or(i + 1));
            let header = text.take(&mut set);
            let file = set.files.len();
            let (hunks, next) = hunks(&lines, i + 2, file, recount.as_deref_mut())?;
            if hunks.is_empty() {
                return Err(ParseError::NoHunks {
                    line: i + 1,
                    text: show(line),
                });
            }
            set.files.push(FilePatch {
                header,
                old_line: Some(line.to_vec()),
                new_line: Some(lines[i + 1].to_vec()),
                hunks,
            });
            i = next;
            continue;
        }
        if line.starts_with(b"diff --git ") && text.git_open {
            first_section.get_or_insert(text.start_line.unwrap_or(1));
            let header = text.take(&mut set);
            set.files.push(header_only(header));
        }
        if line.starts_with(b"@@ ") {
            return Err(ParseError::OrphanHunk {
                line: i + 1,
                text: show(line),
            });
        }
        text.push(line, i + 1);
        i += 1;
    }
    if text.git_open {
        first_section.get_or_insert(text.start_line.unwrap_or(1));
        let header = text.take(&mut set);
        set.files.push(header_only(header));
    }
    if set.files.is_empty() {
        return Err(ParseError::Empty);
    }
    // A binary section changes bytes, not lines; `apply` names it.
    if set
        .files
        .iter()
        .all(|f| f.hunks.is_empty() && !f.is_binary())
    {
        return Err(ParseError::NothingChanged {
            line: first_section.unwrap_or(1),
        });
    }
    set.trailer = text.bytes;
    Ok(set)
}

/// Text between file patches, remembering where the next file's own header starts (its byte
/// offset in the text and its 1-based patch line).
#[derive(Default)]
struct Pending {
    bytes: Vec<u8>,
    header_start: Option<usize>,
    start_line: Option<usize>,
    git_open: bool,
}

impl Pending {
    fn push(&mut self, line: &[u8], number: usize) {
        if line.starts_with(b"diff ") || line.starts_with(b"Index: ") {
            self.header_start.get_or_insert(self.bytes.len());
            self.start_line.get_or_insert(number);
        }
        self.git_open |= line.starts_with(b"diff --git ");
        self.bytes.extend_from_slice(line);
    }

    /// The header of the file patch that starts now; before the first file, the text ahead of
    /// its header goes to the set's preamble.
    fn take(&mut self, set: &mut PatchSet) -> Vec<u8> {
        let mut header = std::mem::take(&mut self.bytes);
        if set.files.is_empty() {
            let start = self.header_start.unwrap_or(header.len());
            set.preamble = header.drain(..start).collect();
        }
        self.header_start = None;
        self.start_line = None;
        self.git_open = false;
        header
    }
}

fn header_only(header: Vec<u8>) -> FilePatch {
    FilePatch {
        header,
        old_line: None,
        new_line: None,
        hunks: Vec::new(),
    }
}

fn is_file_start(lines: &[&[u8]], i: usize) -> bool {
    lines[i].starts_with(b"--- ") && lines.get(i + 1).is_some_and(|l| l.starts_with(b"+++ "))
}

/// Reads the hunks starting at `i`; returns them and the index of the first line after them.
fn hunks(
    lines: &[&[u8]],
    mut i: usize,
    file: usize,
    mut recount: Option<&mut Vec<Recounted>>,
) -> Result<(Vec<Hunk>, usize), ParseError> {
    let mut hunks = Vec::new();
    while lines.get(i).is_some_and(|l| l.starts_with(b"@@ ")) {
        let counts = match recount.as_deref_mut() {
            None => None,
            Some(found) => {
                let (old, new) = count_body(lines, i + 1);
                if let Some(stated) = hunk_header(lines[i])
                    && (stated.old_len, stated.new_len) != (old, new)
                {
                    found.push(Recounted {
                        file,
                        hunk: hunks.len(),
                        line: i + 1,
                        header: show(lines[i]),
                        old,
                        new,
                    });
                }
                Some((old, new))
            }
        };
        let (hunk, next) = hunk(lines, i, counts)?;
        hunks.push(hunk);
        i = next;
    }
    if let (Some(last), Some(&line)) = (hunks.last(), lines.get(i)) {
        // A body line right after a complete hunk means the header undercounts. An email
        // signature (`-- `) and the next file's `---`/`+++` pair are not body lines.
        let signature = line == b"-- \n" || line == b"-- \r\n";
        if let Some(kind) = body_kind(line).filter(|_| !signature && !is_file_start(lines, i)) {
            return Err(ParseError::Overflow {
                line: i + 1,
                header: last.header(),
                kind: kind_name(kind),
            });
        }
    }
    Ok((hunks, i))
}

/// Old and new lines of the hunk body starting at `i`, counted as `git apply --recount` does.
/// An email signature (`-- ` before a line that is not a body line) ends it.
fn count_body(lines: &[&[u8]], mut i: usize) -> (usize, usize) {
    let (mut old, mut new) = (0, 0);
    while let Some(&line) = lines.get(i) {
        let signature = (line == b"-- \n" || line == b"-- \r\n")
            && lines
                .get(i + 1)
                .is_none_or(|next| body_kind(next).is_none());
        if line.starts_with(b"@@ ")
            || line.starts_with(b"diff ")
            || is_file_start(lines, i)
            || signature
        {
            break;
        }
        match body_kind(line) {
            Some(LineKind::Context) => (old, new) = (old + 1, new + 1),
            Some(LineKind::Remove) => old += 1,
            Some(LineKind::Add) => new += 1,
            None if line.first() == Some(&b'\\') => {}
            None => break,
        }
        i += 1;
    }
    (old, new)
}

/// One hunk at `at`; `counts`, when given, replace the header's.
fn hunk(
    lines: &[&[u8]],
    at: usize,
    counts: Option<(usize, usize)>,
) -> Result<(Hunk, usize), ParseError> {
    let mut hunk = hunk_header(lines[at]).ok_or_else(|| ParseError::HunkHeader {
        line: at + 1,
        text: show(lines[at]),
    })?;
    if let Some((old, new)) = counts {
        (hunk.old_len, hunk.new_len) = (old, new);
    }
    let (mut old, mut new) = (0, 0);
    let mut markers = Vec::new();
    let mut i = at + 1;
    while old < hunk.old_len
        || new < hunk.new_len
        || lines.get(i).is_some_and(|l| l.first() == Some(&b'\\'))
    {
        let Some(&line) = lines.get(i) else {
            return Err(truncated(&hunk, lines.len(), old, new));
        };
        if line.first() == Some(&b'\\') {
            let last = hunk.lines.last_mut().filter(|l| l.text.ends_with(b"\n"));
            let last = last.ok_or(ParseError::MisplacedMarker { line: i + 1 })?;
            last.text.pop();
            markers.push((hunk.lines.len() - 1, i + 1));
            i += 1;
            continue;
        }
        let Some(kind) = body_kind(line) else {
            return Err(truncated(&hunk, i + 1, old, new));
        };
        let fits_old = kind == LineKind::Add || old < hunk.old_len;
        let fits_new = kind == LineKind::Remove || new < hunk.new_len;
        if !(fits_old && fits_new) {
            return Err(ParseError::Overflow {
                line: i + 1,
                header: hunk.header(),
                kind: kind_name(kind),
            });
        }
        old += usize::from(kind != LineKind::Add);
        new += usize::from(kind != LineKind::Remove);
        let mut text = match line {
            b"\n" | b"\r\n" => line.to_vec(),
            _ => line[1..].to_vec(),
        };
        if !text.ends_with(b"\n") {
            text.push(b'\n');
        }
        hunk.lines.push(Line { kind, text });
        i += 1;
    }
    for (index, marker_line) in markers {
        if !is_last_of_its_side(&hunk.lines, index) {
            return Err(ParseError::MisplacedMarker { line: marker_line });
        }
    }
    Ok((hunk, i))
}

/// The kind of a hunk body line, `None` for anything else. A bare blank line is context.
fn body_kind(line: &[u8]) -> Option<LineKind> {
    match line {
        b"\n" | b"\r\n" => Some(LineKind::Context),
        _ => match line.first()? {
            b' ' => Some(LineKind::Context),
            b'-' => Some(LineKind::Remove),
            b'+' => Some(LineKind::Add),
            _ => None,
        },
    }
}

fn kind_name(kind: LineKind) -> &'static str {
    match kind {
        LineKind::Context => "context",
        LineKind::Remove => "removed",
        LineKind::Add => "added",
    }
}

fn is_last_of_its_side(lines: &[Line], index: usize) -> bool {
    let kind = lines[index].kind;
    lines[index + 1..].iter().all(|later| match kind {
        LineKind::Context => false,
        LineKind::Remove => later.kind == LineKind::Add,
        LineKind::Add => later.kind == LineKind::Remove,
    })
}

fn truncated(hunk: &Hunk, line: usize, old: usize, new: usize) -> ParseError {
    ParseError::Truncated {
        line,
        header: hunk.header(),
        old_expected: hunk.old_len,
        old_found: old,
        new_expected: hunk.new_len,
        new_found: new,
    }
}

/// Parses `@@ -a[,b] +c[,d] @@section`; the hunk comes back without lines.
fn hunk_header(line: &[u8]) -> Option<Hunk> {
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    let rest = body.strip_prefix(b"@@ -")?;
    let (old, rest) = split_at_space(rest)?;
    let (new, rest) = split_at_space(rest.strip_prefix(b"+")?)?;
    let section = rest.strip_prefix(b"@@")?.to_vec();
    let (old_start, old_len) = hunk_range(old)?;
    let (new_start, new_len) = hunk_range(new)?;
    if (old_len > 0 && old_start == 0) || (new_len > 0 && new_start == 0) {
        return None;
    }
    Some(Hunk {
        old_start,
        old_len,
        new_start,
        new_len,
        section,
        lines: Vec::new(),
    })
}

fn split_at_space(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let at = bytes.iter().position(|&b| b == b' ')?;
    Some((&bytes[..at], &bytes[at + 1..]))
}

fn hunk_range(text: &[u8]) -> Option<(usize, usize)> {
    let mut parts = text.splitn(2, |&b| b == b',');
    let start = number(parts.next()?)?;
    let len = parts.next().map_or(Some(1), number)?;
    Some((start, len))
}

/// A hunk header's number, at most `isize::MAX`: the appliers count offsets
/// as `isize`, and no file has more lines than that.
fn number(digits: &[u8]) -> Option<usize> {
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits)
        .ok()?
        .parse()
        .ok()
        .filter(|n| isize::try_from(*n).is_ok())
}

fn show(line: &[u8]) -> String {
    String::from_utf8_lossy(super::path::trim_eol(line)).into_owned()
}

impl ParseError {
    /// The 1-based line of the patch file at fault; 1 when the whole file is (empty, or not a
    /// diff).
    pub fn line(&self) -> usize {
        match self {
            ParseError::HunkHeader { line, .. }
            | ParseError::OrphanHunk { line, .. }
            | ParseError::Truncated { line, .. }
            | ParseError::Overflow { line, .. }
            | ParseError::MisplacedMarker { line }
            | ParseError::NoHunks { line, .. }
            | ParseError::NothingChanged { line } => *line,
            ParseError::Empty => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIT: &str = "\
From 1234 Mon Sep 17 00:00:00 2001
Subject: [PATCH] change things

---
 x.txt | 2 +-
 1 file changed

diff --git a/x.txt b/x.txt
index 1111111..2222222 100644
--- a/x.txt
+++ b/x.txt
@@ -1,3 +1,3 @@ fn main() {
 a
-b
+B
 c
diff --git a/new.txt b/new.txt
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/new.txt
@@ -0,0 +1 @@
+hello
\\ No newline at end of file
diff --git a/mode.sh b/mode.sh
old mode 100644
new mode 100755
-- 
2.43.0
";

    #[test]
    fn git_series_parses_into_files_with_preamble() {
        let set = parse(GIT.as_bytes()).unwrap();
        assert!(String::from_utf8_lossy(&set.preamble).ends_with(" 1 file changed\n\n"));
        assert_eq!(set.files.len(), 3);
        let x = &set.files[0];
        assert!(x.header.starts_with(b"diff --git a/x.txt b/x.txt\nindex "));
        assert_eq!(x.hunks[0].section, b" fn main() {");
        assert_eq!(x.hunks[0].lines.len(), 4);
        let new = &set.files[1];
        assert!(new.is_new());
        assert_eq!(new.hunks[0].lines[0].text, b"hello");
        let mode = &set.files[2];
        assert!(mode.hunks.is_empty() && mode.old_line.is_none());
        assert_eq!(mode.target_path(1).as_deref(), Some("mode.sh"));
        assert!(mode.header.ends_with(b"2.43.0\n"));
    }

    #[test]
    fn counts_decide_where_hunks_end() {
        let patch = "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n--- a\n+++ b\n same\n";
        let set = parse(patch.as_bytes()).unwrap();
        let lines = &set.files[0].hunks[0].lines;
        assert_eq!(lines[0].kind, LineKind::Remove);
        assert_eq!(lines[0].text, b"-- a\n");
        assert_eq!(lines[1].kind, LineKind::Add);
    }

    #[test]
    fn short_hunk_names_line_and_counts() {
        let patch = "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+B\nnot a body line\n";
        let err = parse(patch.as_bytes()).unwrap_err();
        assert_eq!(
            err,
            ParseError::Truncated {
                line: 7,
                header: "@@ -1,3 +1,3 @@".into(),
                old_expected: 3,
                old_found: 2,
                new_expected: 3,
                new_found: 2,
            }
        );
        assert!(
            err.to_string()
                .starts_with("line 7: hunk `@@ -1,3 +1,3 @@` ends after 2 old")
        );
        let at_eof = parse(b"--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n").unwrap_err();
        assert!(matches!(at_eof, ParseError::Truncated { line: 4, .. }));
    }

    #[test]
    fn long_hunk_is_an_error() {
        let inside = parse(b"--- a/x\n+++ b/x\n@@ -1 +1,2 @@\n-a\n-b\n+c\n").unwrap_err();
        assert!(matches!(
            inside,
            ParseError::Overflow {
                line: 5,
                kind: "removed",
                ..
            }
        ));
        let after = parse(b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n").unwrap_err();
        assert!(matches!(
            after,
            ParseError::Overflow {
                line: 6,
                kind: "added",
                ..
            }
        ));
    }

    #[test]
    fn malformed_headers_are_errors() {
        for header in [
            "@@ -1,x +1 @@",
            "@@ -1 +1",
            "@@ -0,2 +1 @@",
            "@@ 1 +1 @@",
            "@@ -+1 +1 @@",
            // Past isize::MAX: the appliers' offsets would overflow.
            "@@ -9223372036854775808 +1 @@",
            "@@ -1,9223372036854775808 +1 @@",
        ] {
            let patch = format!("--- a/x\n+++ b/x\n{header}\n a\n");
            let err = parse(patch.as_bytes()).unwrap_err();
            assert!(
                matches!(err, ParseError::HunkHeader { line: 3, .. }),
                "{header}: {err}"
            );
        }
        let orphan = parse(b"hello\n@@ -1 +1 @@\n-a\n+b\n").unwrap_err();
        assert!(matches!(orphan, ParseError::OrphanHunk { line: 2, .. }));
        assert_eq!(parse(b"just text\n").unwrap_err(), ParseError::Empty);
    }

    /// issue 9: a patch cut down to its `---`/`+++` lines is refused, as GNU patch ("Only
    /// garbage was found") and `git apply` ("No valid patches in input") refuse it.
    #[test]
    fn a_section_without_hunks_is_an_error_at_its_line() {
        let headers = parse(b"From: someone\n\n--- a/x\n+++ b/x\n").unwrap_err();
        assert_eq!(
            headers,
            ParseError::NoHunks {
                line: 3,
                text: "--- a/x".into()
            }
        );
        assert_eq!(
            headers.to_string(),
            "line 3: `--- a/x` opens a file section with no hunk after its `+++` line"
        );
        let second = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n--- a/y\n+++ b/y\n";
        assert!(matches!(
            parse(second.as_bytes()).unwrap_err(),
            ParseError::NoHunks { line: 6, .. }
        ));
        let modes = "note\ndiff --git a/s b/s\nold mode 100644\nnew mode 100755\n";
        assert_eq!(
            parse(modes.as_bytes()).unwrap_err(),
            ParseError::NothingChanged { line: 2 }
        );
        assert_eq!(parse(b"").unwrap_err().line(), 1);
        assert_eq!(parse(b"just text\n").unwrap_err().line(), 1);
    }

    #[test]
    fn markers_strip_the_newline_of_their_line_only() {
        let patch = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n";
        let set = parse(patch.as_bytes()).unwrap();
        let lines = &set.files[0].hunks[0].lines;
        assert_eq!(
            (lines[0].text.as_slice(), lines[1].text.as_slice()),
            (&b"a"[..], &b"a\n"[..])
        );
        let misplaced =
            "--- a/x\n+++ b/x\n@@ -1,2 +1 @@\n-a\n\\ No newline at end of file\n-b\n+c\n";
        let err = parse(misplaced.as_bytes()).unwrap_err();
        assert_eq!(err, ParseError::MisplacedMarker { line: 5 });
    }

    #[test]
    fn crlf_and_blank_context_lines() {
        let patch = b"--- a/x\r\n+++ b/x\r\n@@ -1,2 +1,2 @@\r\n a\r\n\r\n-b\r\n+B\r\n";
        let err = parse(patch).unwrap_err();
        assert!(matches!(err, ParseError::Overflow { line: 6, .. }));
        let patch = b"--- a/x\r\n+++ b/x\r\n@@ -1,3 +1,3 @@\r\n a\r\n\r\n-b\r\n+B\r\n";
        let set = parse(patch).unwrap();
        let lines = &set.files[0].hunks[0].lines;
        assert_eq!(lines[0].text, b"a\r\n");
        assert_eq!(lines[1].text, b"\r\n");
        assert_eq!(set.files[0].hunks[0].section, b"\r");
    }

    /// kube-ovn's mtu.diff shape: the header says one new line more than the body has.
    #[test]
    fn recounting_reads_a_header_that_lies_by_its_body() {
        let lying = "--- a/x\n+++ b/x\n@@ -1,3 +1,5 @@ spec:\n a\n+b\n c\n d\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-e\n+f\n";
        assert!(matches!(
            parse(lying.as_bytes()),
            Err(ParseError::Overflow { line: 8, .. })
        ));
        let (set, recounted) = parse_recounted(lying.as_bytes()).unwrap();
        assert_eq!(
            recounted,
            [Recounted {
                file: 0,
                hunk: 0,
                line: 3,
                header: "@@ -1,3 +1,5 @@ spec:".into(),
                old: 3,
                new: 4,
            }]
        );
        let hunk = &set.files[0].hunks[0];
        assert_eq!((hunk.old_len, hunk.new_len, hunk.lines.len()), (3, 4, 4));
        assert_eq!(set.files[1].hunks[0].lines.len(), 2);
        assert_eq!(
            crate_free_write(&set),
            lying.replace("+1,5", "+1,4"),
            "written back, the header tells the truth"
        );
        let overcount = "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n d\n-- \n2.43.0\n";
        let (set, recounted) = parse_recounted(overcount.as_bytes()).unwrap();
        assert_eq!((recounted[0].old, recounted[0].new), (3, 3));
        assert_eq!(set.trailer, b"-- \n2.43.0\n");
        let (_, none) = parse_recounted(GIT.as_bytes()).unwrap();
        assert!(none.is_empty(), "true headers are not listed");
    }

    fn crate_free_write(set: &PatchSet) -> String {
        String::from_utf8(super::super::write::write(set)).unwrap()
    }

    #[test]
    fn plain_diff_header_and_trailer() {
        let patch = "notes\ndiff -u a/x b/x\n--- a/x\t2024-01-01\n+++ b/x\t2024-01-02\n@@ -1 +1 @@\n-a\n+b\nbye\n";
        let set = parse(patch.as_bytes()).unwrap();
        assert_eq!(set.preamble, b"notes\n");
        assert_eq!(set.files[0].header, b"diff -u a/x b/x\n");
        assert_eq!(set.trailer, b"bye\n");
    }
}
