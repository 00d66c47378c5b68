//! [`hand_edits`]: the lines of a rendered file that no patch carries.
//!
//! The rendered file on disk is compared with what the package renders; each
//! region where they differ is a [`HandEdit`], numbered by its lines in the
//! file on disk. `update` stops on them (or folds them into a patch with
//! `--adopt-edits`) and `check` reports them as `render-drift`, from this one
//! diff.

/// One region of a rendered file that differs from the render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandEdit {
    /// First line of the region in the file on disk (1-based). A pure
    /// removal points at the line after it.
    pub line: usize,
    /// Last line of it (equal to `line` for a pure removal).
    pub last: usize,
    /// Lines on disk that the render does not have, without their line end.
    pub added: Vec<String>,
    /// Lines of the render missing on disk, without their line end.
    pub removed: Vec<String>,
}

/// The regions where `on_disk` differs from `rendered`, in file order.
pub fn hand_edits(rendered: &str, on_disk: &str) -> Vec<HandEdit> {
    let mut options = diffy::DiffOptions::new();
    options.set_context_len(0);
    let diff = options.create_patch(rendered, on_disk);
    diff.hunks()
        .iter()
        .map(|h| {
            let mut line = h.new_range().start();
            let mut first = None;
            let mut last = line;
            let mut added = Vec::new();
            let mut removed = Vec::new();
            for l in h.lines() {
                match l {
                    diffy::Line::Context(_) => line += 1,
                    diffy::Line::Insert(t) => {
                        first.get_or_insert(line);
                        last = line;
                        added.push(t.trim_end_matches(['\n', '\r']).to_owned());
                        line += 1;
                    }
                    diffy::Line::Delete(t) => {
                        // A removal sits before the line now at `line`
                        // (diffy numbers an empty new range one lower).
                        let at = if h.new_range().is_empty() {
                            line + 1
                        } else {
                            line
                        };
                        first.get_or_insert(at);
                        removed.push(t.trim_end_matches(['\n', '\r']).to_owned());
                    }
                }
            }
            let line = first.unwrap_or(line);
            HandEdit {
                line,
                last: last.max(line),
                added,
                removed,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_edit_per_region_at_its_line_on_disk() {
        let edits = hand_edits("a\nb\nc\nd\ne\nf\ng\n", "a\nB\nc\nd\ne\nf\ng\nh\n");
        assert_eq!(
            edits,
            [
                HandEdit {
                    line: 2,
                    last: 2,
                    added: vec!["B".into()],
                    removed: vec!["b".into()],
                },
                HandEdit {
                    line: 8,
                    last: 8,
                    added: vec!["h".into()],
                    removed: vec![],
                },
            ]
        );
    }

    #[test]
    fn a_removal_points_at_the_line_after_it() {
        let edits = hand_edits("a\nb\nc\n", "a\nc\n");
        assert_eq!((edits[0].line, edits[0].last), (2, 2));
        assert_eq!(edits[0].removed, ["b"]);
        assert!(edits[0].added.is_empty());
    }

    #[test]
    fn several_added_lines_span_their_region_and_crlf_is_dropped() {
        let edits = hand_edits("a\r\nb\r\n", "a\r\nx\r\ny\r\nb\r\n");
        assert_eq!(edits.len(), 1);
        assert_eq!((edits[0].line, edits[0].last), (2, 3));
        assert_eq!(edits[0].added, ["x", "y"]);
    }

    #[test]
    fn the_same_file_has_none() {
        assert!(hand_edits("a\nb\n", "a\nb\n").is_empty());
    }
}
