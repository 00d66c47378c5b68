//! The tracking issue's Markdown: a hidden marker that finds it again, one
//! table row per package that needs a person, and the body a closed issue
//! is left with.
//!
//! Every cell is escaped: a finding's message quotes upstream text, which
//! must not end a cell (`|`), start a line, open a code span, mention
//! someone, or forge the marker. The table is bounded twice, by
//! [`MAX_ROWS`] and by GitHub's 65,536-character limit on a body, the rest
//! summed up as "and N more".

use super::rows::Row;

/// The hidden line every body `pr --report` writes starts with: the issue
/// is found again by it, whatever its title or labels became.
pub const MARKER: &str = "<!-- revendor:report -->";

/// Most rows the table lists.
pub const MAX_ROWS: usize = 100;

/// Most bytes a body may have: under GitHub's limit of 65,536 characters,
/// whatever the characters.
const MAX_BODY: usize = 60_000;

/// Most characters of one cell.
const MAX_CELL: usize = 600;

/// The body listing `rows` (at least one).
pub fn open_body(rows: &[Row]) -> String {
    let noun = if rows.len() == 1 {
        "package needs"
    } else {
        "packages need"
    };
    let mut out = format!(
        "{MARKER}\n{} vendored {noun} a person: `revendor pr --report` found what blocks each \
         from `revendor check --all --online`, and the command that resolves it. It keeps this \
         issue up to date and closes it when nothing is left; edits here are overwritten.\n\n\
         | package | what blocks it | findings | command |\n| --- | --- | --- | --- |\n",
        rows.len()
    );
    // Room for the "and N more" line.
    let budget = MAX_BODY - 200;
    let mut shown = 0;
    for row in rows.iter().take(MAX_ROWS) {
        let line = table_row(row);
        if out.len() + line.len() > budget {
            break;
        }
        out.push_str(&line);
        shown += 1;
    }
    if shown < rows.len() {
        out.push_str(&format!(
            "\nand {} more: run `revendor check --all --online` to see every finding.\n",
            rows.len() - shown
        ));
    }
    out
}

/// The body of the issue closed because no package needs a person.
pub fn closed_body() -> String {
    format!(
        "{MARKER}\nNothing needs a person: every vendored package is up to date, or its update \
         applies and has its pull request. `revendor pr --report` reopens this issue when a \
         package needs one again.\n"
    )
}

/// `| package | reason | findings | command |`.
fn table_row(row: &Row) -> String {
    let findings: Vec<String> = row.findings.iter().map(|id| code(id)).collect();
    format!(
        "| {} | {} | {} | {} |\n",
        code(&row.package),
        cell(&row.reason),
        findings.join(", "),
        code(&row.command)
    )
}

/// `text` as plain table-cell text: Markdown, HTML and mentions escaped,
/// one line, at most [`MAX_CELL`] characters.
pub fn cell(text: &str) -> String {
    let mut out = String::new();
    for c in bounded(text).chars() {
        match c {
            '\\' | '|' | '`' | '*' | '_' | '[' | ']' | '~' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            // A word joiner after `@` keeps it from mentioning anyone.
            '@' => out.push_str("@\u{2060}"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// `text` as a code span in a table cell; as [`cell`] text when it holds
/// a backtick or a control character, which a code span cannot carry.
pub fn code(text: &str) -> String {
    let text = bounded(text);
    if text.chars().any(|c| c == '`' || c.is_control()) {
        return cell(&text);
    }
    // GitHub's tables split on `|` before reading code spans: escaped, it
    // stays in the span.
    format!("`{}`", text.replace('|', "\\|"))
}

/// `text` cut to [`MAX_CELL`] characters, with `…` when cut.
fn bounded(text: &str) -> String {
    match text.char_indices().nth(MAX_CELL) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(package: &str, reason: &str) -> Row {
        Row {
            package: package.to_owned(),
            reason: reason.to_owned(),
            findings: vec!["upstream-newer".to_owned()],
            command: format!("revendor -C {package} update --to v2 --keep-conflicts"),
        }
    }

    #[test]
    fn a_row_per_package_under_the_marker() {
        let body = open_body(&[row("packages/a", "v2: ns would conflict")]);
        assert!(body.starts_with(MARKER), "{body}");
        assert!(body.contains("1 vendored package needs a person"), "{body}");
        assert!(
            body.ends_with(
                "| `packages/a` | v2: ns would conflict | `upstream-newer` | `revendor -C packages/a update --to v2 --keep-conflicts` |\n"
            ),
            "{body}"
        );
    }

    #[test]
    fn hostile_text_stays_in_its_cell() {
        let hostile = "a|b\n| x | y |\r`code` <!-- revendor:report --> @team [l](http://e) *b*";
        let escaped = cell(hostile);
        assert_eq!(
            escaped,
            "a\\|b \\| x \\| y \\| \\`code\\` &lt;\\!-- revendor:report --&gt; @\u{2060}team \\[l\\](http://e) \\*b\\*"
        );
        assert!(!escaped.contains('\n'));
        assert_eq!(code("a|b"), "`a\\|b`");
        assert_eq!(code("a`b"), "a\\`b");
        let body = open_body(&[row("p`|\n", hostile)]);
        assert_eq!(body.matches(MARKER).count(), 1, "{body}");
        let table: Vec<&str> = body.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(table.len(), 3, "{body}");
    }

    #[test]
    fn the_table_is_bounded_with_the_rest_counted() {
        let many: Vec<Row> = (0..150)
            .map(|i| row(&format!("packages/p{i}"), "conflict"))
            .collect();
        let body = open_body(&many);
        assert!(
            body.ends_with(
                "\nand 50 more: run `revendor check --all --online` to see every finding.\n"
            ),
            "{body}"
        );
        let long = "x".repeat(5000);
        let huge: Vec<Row> = (0..150).map(|i| row(&format!("p{i}"), &long)).collect();
        let body = open_body(&huge);
        assert!(body.len() < MAX_BODY, "{}", body.len());
        assert!(body.contains("more: run"), "{body}");
        assert!(cell(&long).chars().count() <= MAX_CELL + 1);
    }
}
