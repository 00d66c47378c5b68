//! Serialising a [`PatchSet`] back to bytes.
//!
//! Verbatim parts (preamble, headers, `---`/`+++` lines, `@@` sections, trailer) are written as
//! they were read, so `write(parse(x)) == x` for any patch `parse` keeps byte-exact. Hunk
//! headers are rebuilt from their numbers the way diff and git print them (a count of 1 is left
//! out), and a line without a terminator is followed by the standard
//! `\ No newline at end of file`.

use super::model::{FilePatch, Hunk, PatchSet, range};

const NO_NEWLINE: &[u8] = b"\\ No newline at end of file\n";

/// The patch file for `set`.
pub fn write(set: &PatchSet) -> Vec<u8> {
    let mut out = set.preamble.clone();
    for file in &set.files {
        write_file_into(file, &mut out);
    }
    out.extend_from_slice(&set.trailer);
    out
}

/// One file patch on its own, header included.
pub fn write_file(file: &FilePatch) -> Vec<u8> {
    let mut out = Vec::new();
    write_file_into(file, &mut out);
    out
}

fn write_file_into(file: &FilePatch, out: &mut Vec<u8>) {
    out.extend_from_slice(&file.header);
    for line in [&file.old_line, &file.new_line].into_iter().flatten() {
        out.extend_from_slice(line);
    }
    for hunk in &file.hunks {
        write_hunk(hunk, out);
    }
}

fn write_hunk(hunk: &Hunk, out: &mut Vec<u8>) {
    let numbers = format!(
        "@@ -{} +{} @@",
        range(hunk.old_start, hunk.old_len),
        range(hunk.new_start, hunk.new_len)
    );
    out.extend_from_slice(numbers.as_bytes());
    out.extend_from_slice(&hunk.section);
    out.push(b'\n');
    for line in &hunk.lines {
        out.push(line.kind.prefix());
        out.extend_from_slice(&line.text);
        if !line.text.ends_with(b"\n") {
            out.push(b'\n');
            out.extend_from_slice(NO_NEWLINE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse::parse;
    use super::*;

    #[test]
    fn round_trips_git_plain_and_crlf_patches() {
        let patches: [&[u8]; 3] = [
            b"Subject: x\n\ndiff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@ fn f()\n a\n-b\n+B\n-- \n2.43.0\n",
            b"--- a/x\t2024-01-01 10:00:00\n+++ b/x\t2024-01-02 10:00:00\n@@ -0,0 +1 @@\n+z\n\\ No newline at end of file\n",
            b"--- a/x\r\n+++ b/x\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n",
        ];
        for patch in patches {
            assert_eq!(
                write(&parse(patch).unwrap()),
                patch,
                "{}",
                String::from_utf8_lossy(patch)
            );
        }
    }

    #[test]
    fn explicit_counts_of_one_are_normalised() {
        let set = parse(b"--- a/x\n+++ b/x\n@@ -3,1 +3,1 @@\n-a\n+b\n").unwrap();
        assert_eq!(
            write_file(&set.files[0]),
            b"--- a/x\n+++ b/x\n@@ -3 +3 @@\n-a\n+b\n"
        );
    }
}
