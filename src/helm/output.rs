//! `helm template`'s output read back: each document with the template it
//! came from.
//!
//! Helm prints every document as `---`, then `# Source: <chart>/<path>`,
//! then the document. The source is what a contract's `file` selects by,
//! and what a finding points at.

/// One rendered document and the template it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// The template as Helm names it, `<chart name>/templates/…`.
    pub source: String,
    /// The document's text, without the separator and the source line.
    pub text: String,
}

impl Document {
    /// The template's path inside the chart directory: the source without
    /// the chart's name (`templates/a.yaml`; a subchart's stays under
    /// `charts/<name>/`).
    pub fn path_in_chart(&self) -> &str {
        self.source
            .split_once('/')
            .map_or(self.source.as_str(), |(_, rest)| rest)
    }
}

/// Every document of `stdout`, in order. Text before the first source line
/// (there is none from Helm) is dropped.
pub fn documents(stdout: &str) -> Vec<Document> {
    let mut out: Vec<Document> = Vec::new();
    let mut lines = stdout.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim_end() == "---"
            && let Some(source) = lines
                .peek()
                .and_then(|next| next.strip_prefix("# Source: "))
        {
            out.push(Document {
                source: source.trim_end().to_owned(),
                text: String::new(),
            });
            lines.next();
            continue;
        }
        if let Some(doc) = out.last_mut() {
            doc.text.push_str(line);
            doc.text.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_keep_their_source() {
        let out = "---\n# Source: c/templates/a.yaml\nkind: A\n---\n# Source: c/charts/s/templates/b.yaml\nkind: B\nx: |\n  ---\n";
        let docs = documents(out);
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].text, "kind: A\n");
        assert_eq!(docs[0].path_in_chart(), "templates/a.yaml");
        assert_eq!(docs[1].path_in_chart(), "charts/s/templates/b.yaml");
        assert_eq!(docs[1].text, "kind: B\nx: |\n  ---\n");
    }
}
