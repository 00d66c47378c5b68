//! Conflict regions of a 3-way merge, written with the caller's labels.
//!
//! [`merge3`](super::merge3) hands over its result as [`Piece`]s, clean text and (ours, base,
//! theirs) triples of exact bytes; [`render`] writes them with git-style markers and counts the
//! lines each region ends up on.

/// One conflicting region of a merge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConflictHunk {
    /// 1-based line of the `<<<<<<<` marker in the marked output.
    pub line_start: usize,
    /// 1-based line of the `>>>>>>>` marker in the marked output.
    pub line_end: usize,
    /// The patched side's lines.
    pub ours: Vec<u8>,
    /// The common ancestor's lines.
    pub base: Vec<u8>,
    /// The new upstream's lines.
    pub theirs: Vec<u8>,
}

/// Names for the three sides in conflict markers, such as `patched v4.2.3`, `v4.2.3`, `v4.3.0`.
#[derive(Clone, Copy, Debug)]
pub struct Labels<'a> {
    /// The patched old upstream.
    pub ours: &'a str,
    /// The old upstream.
    pub base: &'a str,
    /// The new upstream.
    pub theirs: &'a str,
}

/// The 1-based lines of `text` that are diff3 conflict markers: seven `<`, `|`, `=` or `>`,
/// alone or followed by a space and a label, as `render` writes them (and git does). A file
/// that holds one still has a conflict to resolve.
pub fn marker_lines(text: &[u8]) -> Vec<usize> {
    text.split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, line)| {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            [b'<', b'|', b'=', b'>'].iter().any(|&c| {
                line.len() >= 7
                    && line[..7].iter().all(|&b| b == c)
                    && (line.len() == 7 || line[7] == b' ')
            })
        })
        .map(|(i, _)| i + 1)
        .collect()
}

/// A piece of merge output.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    Clean(&'a [u8]),
    Conflict {
        ours: &'a [u8],
        base: &'a [u8],
        theirs: &'a [u8],
    },
}

/// Writes `pieces` with git-style 7-character markers carrying `labels`; returns the marked
/// bytes and one [`ConflictHunk`] per conflict. A side that ends without a newline gets one
/// before the next marker, as `git merge-file` does, so every marker starts a line. Markers end
/// with `eol`.
pub(crate) fn render(
    pieces: &[Piece<'_>],
    labels: &Labels<'_>,
    eol: &[u8],
) -> (Vec<u8>, Vec<ConflictHunk>) {
    let mut out = Marked {
        bytes: Vec::new(),
        lines: 0,
        eol,
    };
    let mut hunks = Vec::new();
    for piece in pieces {
        match *piece {
            Piece::Clean(text) => out.text(text),
            Piece::Conflict { ours, base, theirs } => {
                out.marker(b"<<<<<<< ours", labels.ours);
                let line_start = out.lines;
                out.text(ours);
                out.marker(b"||||||| base", labels.base);
                out.text(base);
                out.marker(b"=======", "");
                out.text(theirs);
                out.marker(b">>>>>>> theirs", labels.theirs);
                hunks.push(ConflictHunk {
                    line_start,
                    line_end: out.lines,
                    ours: ours.to_vec(),
                    base: base.to_vec(),
                    theirs: theirs.to_vec(),
                });
            }
        }
    }
    (out.bytes, hunks)
}

struct Marked<'a> {
    bytes: Vec<u8>,
    lines: usize,
    eol: &'a [u8],
}

impl Marked<'_> {
    fn text(&mut self, text: &[u8]) {
        self.bytes.extend_from_slice(text);
        self.lines += text.iter().filter(|&&b| b == b'\n').count();
    }

    fn marker(&mut self, marker: &[u8], label: &str) {
        let eol = self.eol;
        if self.bytes.last().is_some_and(|&b| b != b'\n') {
            self.text(eol);
        }
        self.bytes.extend_from_slice(marker);
        if !label.is_empty() {
            self.bytes
                .extend_from_slice(format!(" ({label})").as_bytes());
        }
        self.text(eol);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LABELS: Labels<'static> = Labels {
        ours: "patched v1",
        base: "v1",
        theirs: "v2",
    };

    #[test]
    fn marker_lines_are_the_four_markers_only() {
        let text = b"a\n<<<<<<< ours (patched v1)\nO\n||||||| base (v1)\nB\n=======\nT\n>>>>>>> theirs (v2)\r\n\
                     ======== longer\n<<<<<<<x\n=======\n";
        assert_eq!(marker_lines(text), [2, 4, 6, 8, 11]);
        assert!(marker_lines(b"a: <<<<<<<\n").is_empty());
    }

    #[test]
    fn render_labels_markers_and_counts_lines() {
        let pieces = [
            Piece::Clean(b"a\nb\n"),
            Piece::Conflict {
                ours: b"O\n",
                base: b"B",
                theirs: b"",
            },
            Piece::Clean(b"z\n"),
        ];
        let (marked, hunks) = render(&pieces, &LABELS, b"\n");
        assert_eq!(
            String::from_utf8(marked).unwrap(),
            "a\nb\n<<<<<<< ours (patched v1)\nO\n||||||| base (v1)\nB\n=======\n>>>>>>> theirs (v2)\nz\n"
        );
        assert_eq!((hunks[0].line_start, hunks[0].line_end), (3, 8));
        assert_eq!(hunks[0].base, b"B");
    }
}
