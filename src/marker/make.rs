//! Variable assignments of a Makefile, read the way GNU make reads them.
//!
//! Only what the Talos resolver needs: `NAME op value` lines (`=`, `:=`,
//! `::=`, `?=`, `+=`, `!=`, with `export`/`override` prefixes) outside recipes
//! and `define` blocks, backslash continuations joined with one space, and
//! `#` comments removed. Assignments inside `ifeq`/`ifdef` branches are all
//! returned: a caller that finds one name assigned differently knows the file
//! no longer pins it in one place.

/// One variable assignment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Assignment {
    /// The variable name.
    pub name: String,
    /// The operator (`?=`, `:=`, …).
    pub op: String,
    /// The value, comment and surrounding blanks removed.
    pub value: String,
    /// 1-based line where the assignment starts.
    pub line: usize,
}

/// Strip a `#` comment that is not escaped as `\#`.
fn uncomment(line: &str) -> &str {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'#' => return &line[..i],
            _ => i += 1,
        }
    }
    line
}

/// Every assignment in `text`, in file order.
pub(crate) fn assignments(text: &str) -> Vec<Assignment> {
    let physical: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut in_define = false;
    let mut i = 0;
    while i < physical.len() {
        let start = i;
        let mut logical = physical[i].to_owned();
        i += 1;
        while logical.ends_with('\\') && i < physical.len() {
            logical.pop();
            logical = format!("{} {}", logical.trim_end(), physical[i].trim_start());
            i += 1;
        }
        if logical.starts_with('\t') {
            continue;
        }
        let line = uncomment(&logical).trim();
        let first = line.split_whitespace().next().unwrap_or_default();
        if in_define {
            in_define = first != "endef";
            continue;
        }
        if first == "define" {
            in_define = true;
            continue;
        }
        if let Some(a) = assignment(line, start + 1) {
            out.push(a);
        }
    }
    out
}

fn assignment(line: &str, number: usize) -> Option<Assignment> {
    let eq = line.find('=')?;
    let head = &line[..eq];
    let op_start = head.trim_end_matches(['?', ':', '+', '!']).len();
    let op = format!("{}=", &head[op_start..]);
    if !matches!(
        op.as_str(),
        "=" | ":=" | "::=" | ":::=" | "?=" | "+=" | "!="
    ) {
        return None;
    }
    let mut words: Vec<&str> = head[..op_start].split_whitespace().collect();
    while words.len() > 1 && matches!(words[0], "export" | "override" | "private") {
        words.remove(0);
    }
    let [name] = words.as_slice() else {
        return None;
    };
    if name.contains([':', '$', '(', ')']) {
        return None;
    }
    Some(Assignment {
        name: (*name).to_owned(),
        op,
        value: line[eq + 1..].trim().to_owned(),
        line: number,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<(String, String, String, usize)> {
        assignments(text)
            .into_iter()
            .map(|a| (a.name, a.op, a.value, a.line))
            .collect()
    }

    fn row(name: &str, op: &str, value: &str, line: usize) -> (String, String, String, usize) {
        (name.to_owned(), op.to_owned(), value.to_owned(), line)
    }

    #[test]
    fn reads_assignments_with_operators_and_lines() {
        let text = "# top\nA ?= a # note\nexport B := b\\\n  c\nC=\nD += \\#x\ntarget: dep\n\tE = recipe\ntarget: F = specific\n";
        assert_eq!(
            read(text),
            [
                row("A", "?=", "a", 2),
                row("B", ":=", "b c", 3),
                row("C", "=", "", 5),
                row("D", "+=", "\\#x", 6),
            ]
        );
    }

    #[test]
    fn skips_define_blocks_and_keeps_conditional_branches() {
        let text = "define X =\nY = inside\nendef\nifeq ($(A),1)\nZ ?= 1\nelse\nZ ?= 2\nendif\n";
        assert_eq!(read(text), [row("Z", "?=", "1", 5), row("Z", "?=", "2", 7)]);
    }
}
