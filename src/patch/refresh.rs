//! Rewriting a file patch with exact hunks for `old -> new`, in its author's style.
//!
//! 1. `old` and `new` are diffed line by line (`diff.rs`); changes at most six unchanged lines
//!    apart share a hunk, and each hunk has 3 lines of context on either side, as diff and git
//!    write them.
//! 2. The header and the `---`/`+++` lines are kept verbatim, but for an `index` line's blob
//!    ids, which, when the hunks change, are made those of `old` and `new` (as long as the author's, at least git's 7
//!    digits; an all-zero id, a created or deleted side, stays). `git apply --3way` looks blobs
//!    up by them, so a kept id from the patch's first making would name a file it no longer
//!    describes.
//! 3. If any original hunk carried function context after `@@`, every new hunk gets git's
//!    default one: the nearest line above the hunk that starts with a letter, `_` or `$`, cut to
//!    80 bytes and stripped of trailing whitespace.
//!
//! A patch that is already exact refreshes to the same bytes.

use std::ops::Range;

use super::Error;
use super::diff::{Lines, Token, estimate};
use super::model::{FilePatch, Hunk, Line, LineKind, PatchSet};
use super::path::trim_eol;
use sha1::Digest;

/// Unchanged lines shown around each change, as diff and git show them by default.
const CONTEXT: usize = 3;

/// git's limit for function context after `@@` (xdiff's `func_line` buffer).
const FUNCTION_CONTEXT_MAX: usize = 80;

/// `original` with its hunks replaced by exact ones that turn `old` into `new`.
pub fn refresh(original: &FilePatch, old: &[u8], new: &[u8]) -> FilePatch {
    let mut lines = Lines::with_capacity(estimate(old) + estimate(new) / 8);
    let old_tokens = lines.intern(old);
    let new_tokens = lines.intern_like(new, &old_tokens);
    let changes = lines.changes(&old_tokens, &new_tokens);
    let text = |tokens: &[Token], kind: LineKind| -> Vec<Line> {
        tokens
            .iter()
            .map(|&t| Line {
                kind,
                text: lines.text(t).to_vec(),
            })
            .collect()
    };
    let mut hunks: Vec<Hunk> = Vec::new();
    for group in changes.chunk_by(|a, b| b.old.start - a.old.end <= 2 * CONTEXT) {
        let (first, last) = (&group[0], &group[group.len() - 1]);
        let above = first.old.start.min(CONTEXT);
        let below = (old_tokens.len() - last.old.end).min(CONTEXT);
        let old_range = first.old.start - above..last.old.end + below;
        let new_range = first.new.start - above..last.new.end + below;
        let mut body = text(
            &old_tokens[old_range.start..first.old.start],
            LineKind::Context,
        );
        for (k, change) in group.iter().enumerate() {
            body.extend(text(&old_tokens[change.old.clone()], LineKind::Remove));
            body.extend(text(&new_tokens[change.new.clone()], LineKind::Add));
            let until = group
                .get(k + 1)
                .map_or(old_range.end, |next| next.old.start);
            body.extend(text(&old_tokens[change.old.end..until], LineKind::Context));
        }
        hunks.push(Hunk {
            old_start: header_start(&old_range),
            old_len: old_range.len(),
            new_start: header_start(&new_range),
            new_len: new_range.len(),
            section: Vec::new(),
            lines: body,
        });
    }
    let wants_context = original
        .hunks
        .iter()
        .any(|h| !trim_eol(&h.section).is_empty());
    // A patch file saved with CRLF line ends has `\r` at the end of each `@@` line.
    let cr = original
        .hunks
        .first()
        .is_some_and(|h| h.section.ends_with(b"\r"));
    let old_lines: Vec<&[u8]> = super::diff::split(old).collect();
    for hunk in &mut hunks {
        if wants_context {
            hunk.section = function_context(&old_lines, hunk);
        }
        if cr {
            hunk.section.push(b'\r');
        }
    }
    // An exact patch keeps its bytes, `index` line included; new hunks mean new blobs.
    let header = if hunks == original.hunks {
        original.header.clone()
    } else {
        fresh_index(&original.header, old, new)
    };
    FilePatch {
        header,
        old_line: original.old_line.clone(),
        new_line: original.new_line.clone(),
        hunks,
    }
}

/// `header` with the blob ids of its `index` line (`index <old>..<new>[ <mode>]`) made those
/// of `old` and `new`; a header without one is returned as it is.
fn fresh_index(header: &[u8], old: &[u8], new: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(header.len());
    for line in header.split_inclusive(|&b| b == b'\n') {
        match index_ids(line) {
            Some((before, after, rest)) => {
                out.extend_from_slice(b"index ");
                out.extend_from_slice(&abbreviated(before, old));
                out.extend_from_slice(b"..");
                out.extend_from_slice(&abbreviated(after, new));
                out.extend_from_slice(rest);
            }
            None => out.extend_from_slice(line),
        }
    }
    out
}

/// The two ids of an `index` line and what follows them (mode, line end).
fn index_ids(line: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let ids = line.strip_prefix(b"index ")?;
    let end = ids
        .iter()
        .position(|b| !b.is_ascii_hexdigit() && *b != b'.')
        .unwrap_or(ids.len());
    let (pair, rest) = ids.split_at(end);
    let dots = pair.windows(2).position(|w| w == b"..")?;
    let (before, after) = (&pair[..dots], &pair[dots + 2..]);
    let hex = |id: &[u8]| !id.is_empty() && id.iter().all(u8::is_ascii_hexdigit);
    (hex(before) && hex(after)).then_some((before, after, rest))
}

/// The git blob id of `content`, as long as `was` (at least 7 digits), or `was` itself when
/// it is all zeros (the side of a created or deleted file).
fn abbreviated(was: &[u8], content: &[u8]) -> Vec<u8> {
    if was.iter().all(|&b| b == b'0') {
        return was.to_vec();
    }
    let mut sha1 = sha1::Sha1::new();
    sha1.update(format!("blob {}\0", content.len()).as_bytes());
    sha1.update(content);
    let hex: String = sha1.finalize().iter().map(|b| format!("{b:02x}")).collect();
    hex.as_bytes()[..was.len().clamp(7, hex.len())].to_vec()
}

/// [`refresh`] for every file of `set`: `olds[i]` and `news[i]` belong to `set.files[i]`.
pub fn refresh_set(set: &PatchSet, olds: &[&[u8]], news: &[&[u8]]) -> Result<PatchSet, Error> {
    if olds.len() != set.files.len() || news.len() != set.files.len() {
        return Err(Error::RefreshCount {
            files: set.files.len(),
            olds: olds.len(),
            news: news.len(),
        });
    }
    let files = set
        .files
        .iter()
        .zip(olds.iter().zip(news))
        .map(|(file, (old, new))| refresh(file, old, new))
        .collect();
    Ok(PatchSet {
        preamble: set.preamble.clone(),
        files,
        trailer: set.trailer.clone(),
    })
}

/// A hunk header's start for the 0-based `range`: its first line (1-based), or for an empty
/// range the line after which it sits.
fn header_start(range: &Range<usize>) -> usize {
    if range.is_empty() {
        range.start
    } else {
        range.start + 1
    }
}

/// git's default function context for `hunk` (xdiff's `def_ff`), with its leading space, or
/// nothing when no line above qualifies.
fn function_context(old: &[&[u8]], hunk: &Hunk) -> Vec<u8> {
    let first = if hunk.old_len > 0 {
        hunk.old_start.saturating_sub(1)
    } else {
        hunk.old_start
    };
    let above = &old[..first.min(old.len())];
    let Some(found) = above.iter().rev().find(|l| {
        l.first()
            .is_some_and(|&b| b.is_ascii_alphabetic() || b == b'_' || b == b'$')
    }) else {
        return Vec::new();
    };
    let mut text = &found[..found.len().min(FUNCTION_CONTEXT_MAX)];
    while let Some((&last, rest)) = text.split_last() {
        if !(last.is_ascii_whitespace() || last == 0x0b) {
            break;
        }
        text = rest;
    }
    [b" ", text].concat()
}

#[cfg(test)]
mod tests {
    use super::super::apply::apply;
    use super::super::parse::parse;
    use super::super::write::write_file;
    use super::*;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("l{i}\n")).collect()
    }

    fn plain() -> FilePatch {
        parse(b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-q\n+r\n")
            .unwrap()
            .files
            .remove(0)
    }

    #[test]
    fn hunks_six_lines_apart_are_joined_like_git() {
        let old = numbered(20);
        let new = old.replace("l4\n", "L4\n").replace("l11\n", "L11\n");
        let refreshed = refresh(&plain(), old.as_bytes(), new.as_bytes());
        assert_eq!(refreshed.hunks.len(), 1);
        assert_eq!(refreshed.hunks[0].header(), "@@ -1,14 +1,14 @@");
        let apart = old.replace("l4\n", "L4\n").replace("l12\n", "L12\n");
        assert_eq!(
            refresh(&plain(), old.as_bytes(), apart.as_bytes())
                .hunks
                .len(),
            2
        );
    }

    #[test]
    fn keeps_header_and_names_verbatim_with_the_index_ids_made_fresh() {
        let original = parse(
            b"diff --git a/deep/x b/deep/x\nindex abc..def 100644\n--- a/deep/x\t2024\n+++ b/deep/x\n@@ -1 +1 @@\n-q\n+r\n",
        )
        .unwrap()
        .files
        .remove(0);
        let refreshed = refresh(&original, b"a\nb\n", b"a\nB\n");
        assert_eq!(
            write_file(&refreshed),
            b"diff --git a/deep/x b/deep/x\nindex 422c2b7..55dce13 100644\n--- a/deep/x\t2024\n+++ b/deep/x\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n"
        );
    }

    #[test]
    fn index_ids_keep_zeros_and_the_authors_length() {
        let header = b"diff --git a/x b/x\nnew file mode 100644\nindex 0000000..0123456789ab\n";
        assert_eq!(
            fresh_index(header, b"", b"a\nB\n"),
            b"diff --git a/x b/x\nnew file mode 100644\nindex 0000000..55dce135f593\n"
        );
        let no_index = b"diff --git a/x b/x\n";
        assert_eq!(fresh_index(no_index, b"a", b"b"), no_index);
        let not_ids = b"index of things\n";
        assert_eq!(fresh_index(not_ids, b"a", b"b"), not_ids);
    }

    #[test]
    fn function_context_follows_git() {
        let original = parse(b"--- a/x\n+++ b/x\n@@ -1 +1 @@ f\n-q\n+r\n")
            .unwrap()
            .files
            .remove(0);
        let long = format!("func {}  \n", "x".repeat(100));
        let old = format!("{long}\tbody\n  more\n$var\n1\n2\n3\n4\n5\n");
        let new = old.replace("5\n", "five\n");
        let refreshed = refresh(&original, old.as_bytes(), new.as_bytes());
        assert_eq!(refreshed.hunks[0].section, b" $var");
        let new = old.replace("\tbody\n", "\tBODY\n");
        let refreshed = refresh(&original, old.as_bytes(), new.as_bytes());
        assert_eq!(refreshed.hunks[0].section, b"");
        let old = format!("{long}1\n2\n3\n4\n");
        let new = old.replace("4\n", "four\n");
        let section = refresh(&original, old.as_bytes(), new.as_bytes())
            .hunks
            .remove(0)
            .section;
        assert_eq!(section.len(), 1 + FUNCTION_CONTEXT_MAX);
        assert!(section.starts_with(b" func xxx"));
        let without = refresh(&plain(), old.as_bytes(), new.as_bytes());
        assert_eq!(without.hunks[0].section, b"");
    }

    #[test]
    fn refresh_is_exact_and_idempotent_with_eof_markers() {
        let old = b"a\nb\nc";
        let new = b"a\nB\nc\nd";
        let once = refresh(&plain(), old, new);
        assert_eq!(apply(&once, old).unwrap().content, new);
        let twice = refresh(&once, old, new);
        assert_eq!(write_file(&once), write_file(&twice));
        assert!(write_file(&once).ends_with(b"+d\n\\ No newline at end of file\n"));
    }

    #[test]
    fn refresh_set_needs_one_content_pair_per_file() {
        let set = parse(b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-q\n+r\n").unwrap();
        let err = refresh_set(&set, &[], &[]).unwrap_err();
        assert!(matches!(
            err,
            Error::RefreshCount {
                files: 1,
                olds: 0,
                news: 0
            }
        ));
        let done = refresh_set(&set, &[b"q\n"], &[b"s\n"]).unwrap();
        assert_eq!(done.files[0].hunks[0].lines[1].text, b"s\n");
    }
}
