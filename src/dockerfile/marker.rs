//! Comment markers: lines `# <key>: <value>` that vouch for something.
//!
//! A marker records a fact checked by hand, such as the Talos release the CNI
//! plugins pin was compared with. It is a whole comment line whose text,
//! after `#` and blanks, is exactly the key, a colon, and the value; a longer
//! key that merely ends with this one does not count. Every occurrence is
//! returned so a caller can flag a missing or duplicated marker.

use std::ops::Range;

use super::rewrite::{check_bare, splice};
use super::{Dockerfile, Error};

/// One marker line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkerLine {
    /// 1-based line.
    pub line: usize,
    /// The value, blanks around it removed; may be empty.
    pub value: String,
    /// File byte range of the value (empty, at the line's end, when the value
    /// is empty).
    pub span: Range<usize>,
}

impl Dockerfile {
    /// Every `# <key>: <value>` comment line, in file order.
    pub fn markers(&self, key: &str) -> Vec<MarkerLine> {
        self.comments
            .iter()
            .filter_map(|c| {
                let body = c.text.trim_start();
                let rest = body.strip_prefix(key)?.strip_prefix(':')?;
                let value = rest.trim();
                let lead = c.text.len() - rest.len() + (rest.len() - rest.trim_start().len());
                let start = c.offset + lead;
                Some(MarkerLine {
                    line: c.line,
                    value: value.to_owned(),
                    span: start..start + value.len(),
                })
            })
            .collect()
    }
}

/// Set the value of every `# <key>: …` line to `value`, keeping the rest of
/// each line; fails when there is no such line or `value` is not bare.
pub fn rewrite_marker(text: &str, key: &str, value: &str) -> Result<String, Error> {
    check_bare(value)?;
    let df = Dockerfile::parse(text)?;
    let markers = df.markers(key);
    if markers.is_empty() {
        return Err(Error::MarkerNotFound {
            key: key.to_owned(),
        });
    }
    // An empty value sits right after the colon; keep a blank before the new one.
    let edits: Vec<(Range<usize>, String)> = markers
        .iter()
        .map(|m| {
            let after_colon = m.value.is_empty() && text[..m.span.start].ends_with(':');
            let new = if after_colon {
                format!(" {value}")
            } else {
                value.to_owned()
            };
            (m.span.clone(), new)
        })
        .collect();
    Ok(splice(text, &edits))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "\
# syntax=docker/dockerfile:1
FROM x
# talos-cni-plugins-checked-against: v1.13.6
#   kube-ovn-cni-plugins-checked-against:   v1.15.10  
# other-talos-cni-plugins-checked-against: v0
RUN a \\
  # talos-cni-plugins-checked-against: v9
  b
";

    #[test]
    fn finds_exact_keys_with_lines_and_spans() {
        let df = Dockerfile::parse(FILE).unwrap();
        let talos = df.markers("talos-cni-plugins-checked-against");
        let got: Vec<_> = talos.iter().map(|m| (m.line, m.value.as_str())).collect();
        assert_eq!(got, [(3, "v1.13.6"), (7, "v9")]);
        let ovn = &df.markers("kube-ovn-cni-plugins-checked-against")[0];
        assert_eq!(&FILE[ovn.span.clone()], "v1.15.10");
        assert!(df.markers("checked-against").is_empty());
    }

    #[test]
    fn rewrites_values_in_place() {
        let out = rewrite_marker(FILE, "kube-ovn-cni-plugins-checked-against", "v1.16.2").unwrap();
        assert!(out.contains("\n#   kube-ovn-cni-plugins-checked-against:   v1.16.2  \n"));
        assert_eq!(out.replace("v1.16.2", "v1.15.10"), FILE);
    }

    #[test]
    fn empty_values_get_a_blank_before_the_new_one() {
        let out = rewrite_marker("# k:\n# k:\nFROM x\n", "k", "v1").unwrap();
        assert_eq!(out, "# k: v1\n# k: v1\nFROM x\n");
    }

    #[test]
    fn missing_marker_is_an_error() {
        assert_eq!(
            rewrite_marker("FROM x\n", "k", "v").unwrap_err(),
            Error::MarkerNotFound {
                key: "k".to_owned()
            }
        );
    }
}
