//! The parsed form of a unified diff: a [`PatchSet`] of [`FilePatch`]es made of [`Hunk`]s.
//!
//! Everything is kept as bytes and verbatim where a user wrote it (headers, `---`/`+++` lines,
//! the text after `@@`), so [`write()`](super::write()) gives back the file that was parsed and a
//! refreshed patch keeps its author's style. A line's bytes include its terminator, so CRLF
//! content survives; a line without one is the last of its side and is written with
//! `\ No newline at end of file` after it.

use super::path;

/// A whole patch file: any number of file patches between a preamble and a trailer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatchSet {
    /// Text before the first file patch (a commit message, a diffstat), verbatim.
    pub preamble: Vec<u8>,
    /// The file patches in the order they appear.
    pub files: Vec<FilePatch>,
    /// Text after the last hunk of the last file (an email signature), verbatim.
    pub trailer: Vec<u8>,
}

/// The changes to one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilePatch {
    /// Every line between the previous file patch (or the preamble) and `---`, verbatim:
    /// `diff --git`, `index`, mode and rename lines, and any text a user put there.
    pub header: Vec<u8>,
    /// The `---` line with its terminator; `None` for a git patch that carries no text change
    /// (a mode change, a pure rename, a binary patch).
    pub old_line: Option<Vec<u8>>,
    /// The `+++` line with its terminator; `None` exactly when `old_line` is.
    pub new_line: Option<Vec<u8>>,
    /// The hunks in file order.
    pub hunks: Vec<Hunk>,
}

/// One `@@` block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hunk {
    /// First old line (1-based); for an empty old side, the line after which it applies.
    pub old_start: usize,
    /// Number of context and removed lines.
    pub old_len: usize,
    /// First new line (1-based); for an empty new side, the line after which it was.
    pub new_start: usize,
    /// Number of context and added lines.
    pub new_len: usize,
    /// Bytes after the closing `@@` up to the line end, verbatim: git's function context with
    /// its leading space, or empty.
    pub section: Vec<u8>,
    /// The hunk's lines in order.
    pub lines: Vec<Line>,
}

/// What a hunk line does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    /// ` `: present on both sides.
    Context,
    /// `-`: only in the old file.
    Remove,
    /// `+`: only in the new file.
    Add,
}

/// One hunk line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// Context, removed or added.
    pub kind: LineKind,
    /// The file's bytes for this line, terminator included; no terminator means the file ends
    /// here without a newline.
    pub text: Vec<u8>,
}

impl LineKind {
    /// The character that starts this kind of line in a patch.
    pub fn prefix(self) -> u8 {
        match self {
            LineKind::Context => b' ',
            LineKind::Remove => b'-',
            LineKind::Add => b'+',
        }
    }
}

impl Hunk {
    /// The `@@ -a,b +c,d @@ section` line as text, for messages; counts of 1 are left out as
    /// diff and git write them.
    pub fn header(&self) -> String {
        let section = String::from_utf8_lossy(path::trim_eol(&self.section));
        format!(
            "@@ -{} +{} @@{section}",
            range(self.old_start, self.old_len),
            range(self.new_start, self.new_len)
        )
    }

    /// The old side: context and removed lines, in order.
    pub fn old_lines(&self) -> impl Iterator<Item = &[u8]> {
        self.side(LineKind::Remove)
    }

    /// The new side: context and added lines, in order.
    pub fn new_lines(&self) -> impl Iterator<Item = &[u8]> {
        self.side(LineKind::Add)
    }

    fn side(&self, own: LineKind) -> impl Iterator<Item = &[u8]> {
        self.lines
            .iter()
            .filter(move |l| l.kind == own || l.kind == LineKind::Context)
            .map(|l| l.text.as_slice())
    }
}

/// A hunk range as a header writes it: `start` alone when the count is 1.
pub(crate) fn range(start: usize, len: usize) -> String {
    if len == 1 {
        start.to_string()
    } else {
        format!("{start},{len}")
    }
}

impl FilePatch {
    /// The old file's name as written (`a/x`), `None` for `/dev/null` or when unknown.
    pub fn old_name(&self) -> Option<String> {
        match &self.old_line {
            Some(line) => path::header_name(line.get(4..)?),
            None => self.git_names().map(|(old, _)| old),
        }
    }

    /// The new file's name as written (`b/x`), `None` for `/dev/null` or when unknown.
    pub fn new_name(&self) -> Option<String> {
        match &self.new_line {
            Some(line) => path::header_name(line.get(4..)?),
            None => self.git_names().map(|(_, new)| new),
        }
    }

    /// The name to show in messages: the new name, else the old one, unstripped.
    pub fn name(&self) -> String {
        self.new_name()
            .or_else(|| self.old_name())
            .unwrap_or_else(|| "<unnamed>".to_string())
    }

    /// The file this patch writes, like `patch -pN`: the new name with `strip` leading
    /// components removed, or the old name for a deletion. `None` when the name is absent or has
    /// too few components.
    pub fn target_path(&self, strip: usize) -> Option<String> {
        if let Some(to) = self
            .header_value(b"rename to ")
            .or_else(|| self.header_value(b"copy to "))
        {
            // git writes rename names without the a/ b/ prefix; `git apply -pN` strips N-1.
            return path::strip(&to, strip.saturating_sub(1));
        }
        let name = self.new_name().or_else(|| self.old_name())?;
        path::strip(&name, strip)
    }

    /// The file this patch reads, like [`FilePatch::target_path`] but from the old name; `None`
    /// for a new file.
    pub fn source_path(&self, strip: usize) -> Option<String> {
        if self.is_new() {
            return None;
        }
        if let Some(from) = self
            .header_value(b"rename from ")
            .or_else(|| self.header_value(b"copy from "))
        {
            return path::strip(&from, strip.saturating_sub(1));
        }
        let name = self.old_name().or_else(|| self.new_name())?;
        path::strip(&name, strip)
    }

    /// Whether the patch creates its file: `--- /dev/null` or git's `new file mode`.
    pub fn is_new(&self) -> bool {
        self.old_is_dev_null() || self.header_has(b"new file mode ")
    }

    /// Whether the patch deletes its file: `+++ /dev/null` or git's `deleted file mode`.
    pub fn is_delete(&self) -> bool {
        self.new_is_dev_null() || self.header_has(b"deleted file mode ")
    }

    /// Whether git renamed the file (the old name goes away).
    pub fn is_rename(&self) -> bool {
        self.header_has(b"rename from ")
    }

    /// Whether this is a git binary patch, which revendor does not apply.
    pub fn is_binary(&self) -> bool {
        self.header_has(b"GIT binary patch") || self.header_has(b"Binary files ")
    }

    fn old_is_dev_null(&self) -> bool {
        self.old_line
            .as_deref()
            .is_some_and(|l| is_dev_null(l.get(4..).unwrap_or_default()))
    }

    fn new_is_dev_null(&self) -> bool {
        self.new_line
            .as_deref()
            .is_some_and(|l| is_dev_null(l.get(4..).unwrap_or_default()))
    }

    fn header_lines(&self) -> impl Iterator<Item = &[u8]> {
        self.header.split_inclusive(|&b| b == b'\n')
    }

    fn header_has(&self, start: &[u8]) -> bool {
        self.header_lines().any(|l| l.starts_with(start))
    }

    fn header_value(&self, key: &[u8]) -> Option<String> {
        let line = self.header_lines().find(|l| l.starts_with(key))?;
        path::header_name(&line[key.len()..])
    }

    fn git_names(&self) -> Option<(String, String)> {
        let line = self
            .header_lines()
            .filter(|l| l.starts_with(b"diff --git "))
            .last()?;
        path::git_line_names(&line[b"diff --git ".len()..])
    }
}

fn is_dev_null(body: &[u8]) -> bool {
    let body = path::trim_eol(body);
    let end = body.iter().position(|&b| b == b'\t').unwrap_or(body.len());
    &body[..end] == b"/dev/null"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, old: Option<&str>, new: Option<&str>) -> FilePatch {
        FilePatch {
            header: header.as_bytes().to_vec(),
            old_line: old.map(|o| format!("--- {o}\n").into_bytes()),
            new_line: new.map(|n| format!("+++ {n}\n").into_bytes()),
            hunks: Vec::new(),
        }
    }

    #[test]
    fn target_path_strips_like_patch() {
        let f = file(
            "",
            Some("a/packages/system/multus/templates/x.yml"),
            Some("b/packages/system/multus/templates/x.yml"),
        );
        assert_eq!(f.target_path(4).as_deref(), Some("templates/x.yml"));
        assert_eq!(
            f.source_path(1).as_deref(),
            Some("packages/system/multus/templates/x.yml")
        );
        assert_eq!(f.target_path(9), None);
    }

    #[test]
    fn deletion_falls_back_to_old_name() {
        let f = file(
            "",
            Some("a/gone.txt\t2024-01-01"),
            Some("/dev/null\t1970-01-01"),
        );
        assert!(f.is_delete() && !f.is_new());
        assert_eq!(f.target_path(1).as_deref(), Some("gone.txt"));
        assert_eq!(f.name(), "a/gone.txt");
    }

    #[test]
    fn new_file_has_no_source() {
        let f = file(
            "new file mode 100644\n",
            Some("/dev/null"),
            Some("b/new.txt"),
        );
        assert!(f.is_new());
        assert_eq!(f.source_path(1), None);
        assert_eq!(f.target_path(1).as_deref(), Some("new.txt"));
    }

    #[test]
    fn git_header_only_patches_name_their_files() {
        let mode = file(
            "diff --git a/my x b/my x\nold mode 100644\nnew mode 100755\n",
            None,
            None,
        );
        assert_eq!(mode.target_path(1).as_deref(), Some("my x"));
        let rename = file(
            "diff --git a/old b/new\nsimilarity index 100%\nrename from d/old\nrename to d/new\n",
            None,
            None,
        );
        assert!(rename.is_rename());
        assert_eq!(rename.source_path(1).as_deref(), Some("d/old"));
        assert_eq!(rename.target_path(2).as_deref(), Some("new"));
    }

    #[test]
    fn hunk_header_leaves_out_counts_of_one() {
        let hunk = Hunk {
            old_start: 5,
            old_len: 1,
            new_start: 0,
            new_len: 0,
            section: b" fn main()\r".to_vec(),
            lines: Vec::new(),
        };
        assert_eq!(hunk.header(), "@@ -5 +0,0 @@ fn main()");
    }
}
