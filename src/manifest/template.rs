//! Make a Helm template readable as YAML without rendering it.
//!
//! A rendered chart file may still hold Go template actions. Rendering needs
//! values and picks one branch; a contract must hold on every branch. So:
//!
//! 1. find every action `{{ … }}` with a small Go-template lexer (strings,
//!    raw strings, character constants and `/* */` comments may hold `}}`);
//! 2. a line made only of actions and whitespace (`{{- if … }}`, `{{- end }}`,
//!    `{{- $v := … }}`) becomes an empty line: the content of every branch
//!    stays, and every other line keeps its number;
//! 3. an action inside a YAML line (`image: {{ .Values.image }}`) is replaced
//!    by a placeholder of the same length in characters, so columns hold and
//!    the YAML parser sees a plain scalar; [`Masked::restore`] turns the
//!    placeholder back into the action's text in parsed values.
//!
//! The placeholder is `START digit… PAD…` in the Unicode private use area,
//! which YAML accepts in plain scalars and no real manifest contains.

use super::Error;

const START: char = '\u{E000}';
const PAD: char = '\u{E001}';
const DIGIT_BASE: u32 = 0xE100;
const DIGIT_RADIX: usize = 256;

/// A template with its actions neutralized, and the table to undo it.
#[derive(Debug, Clone)]
pub struct Masked {
    /// The YAML to parse: same number of lines, same character columns.
    pub text: String,
    actions: Vec<String>,
}

impl Masked {
    /// Replace every placeholder in a parsed value with its action's text.
    pub fn restore(&self, value: &str) -> String {
        if !value.contains(START) {
            return value.to_owned();
        }
        let mut out = String::with_capacity(value.len());
        let mut chars = value.chars().peekable();
        while let Some(c) = chars.next() {
            if c != START {
                out.push(c);
                continue;
            }
            let mut index = 0usize;
            while let Some(&d) = chars.peek() {
                let Some(digit) = digit_value(d) else { break };
                index = index * DIGIT_RADIX + digit;
                chars.next();
            }
            while chars.peek() == Some(&PAD) {
                chars.next();
            }
            match self.actions.get(index) {
                Some(action) => out.push_str(action),
                None => out.push(c),
            }
        }
        out
    }
}

fn digit_value(c: char) -> Option<usize> {
    let v = u32::from(c).checked_sub(DIGIT_BASE)?;
    usize::try_from(v).ok().filter(|v| *v < DIGIT_RADIX)
}

/// The placeholder for action `index`, exactly `len` characters long.
fn placeholder(index: usize, len: usize) -> Option<String> {
    let mut digits = Vec::new();
    let mut rest = index;
    loop {
        let d = u32::try_from(rest % DIGIT_RADIX).ok()?;
        digits.push(char::from_u32(DIGIT_BASE + d)?);
        rest /= DIGIT_RADIX;
        if rest == 0 {
            break;
        }
    }
    if digits.len() + 1 > len {
        return None;
    }
    let mut out = String::new();
    out.push(START);
    out.extend(digits.iter().rev());
    out.extend(std::iter::repeat_n(PAD, len - 1 - digits.len()));
    Some(out)
}

/// Byte ranges of every `{{ … }}` action in `text`.
fn actions(text: &str) -> Result<Vec<(usize, usize)>, Error> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b'{' && bytes[i + 1] == b'{' {
            let end = action_end(bytes, i + 2).ok_or_else(|| Error::Template {
                line: line_of(text, i),
                message: "unterminated template action".to_owned(),
            })?;
            found.push((i, end));
            i = end;
        } else {
            i += 1;
        }
    }
    Ok(found)
}

/// The byte just past the `}}` closing an action whose body starts at `from`.
fn action_end(bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    // A comment is `{{/* … */}}`, optionally with trim markers around it.
    let mut j = i;
    if bytes.get(j) == Some(&b'-') {
        j += 1;
    }
    while bytes.get(j).is_some_and(u8::is_ascii_whitespace) {
        j += 1;
    }
    if bytes.get(j..j + 2) == Some(b"/*") {
        i = find(bytes, j + 2, b"*/")? + 2;
    }
    while i < bytes.len() {
        match bytes[i] {
            b'"' | b'\'' => i = quoted_end(bytes, i)?,
            b'`' => i = find(bytes, i + 1, b"`")? + 1,
            b'}' if bytes.get(i + 1) == Some(&b'}') => return Some(i + 2),
            _ => i += 1,
        }
    }
    None
}

fn quoted_end(bytes: &[u8], open: usize) -> Option<usize> {
    let quote = bytes[open];
    let mut i = open + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'\n' => return None,
            c if c == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

fn line_of(text: &str, byte: usize) -> usize {
    text.as_bytes()[..byte.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// Neutralize every template action in `text`; see the module docs.
///
/// Fails on an unterminated action, and on an action that spans lines while
/// sharing one of them with YAML content (there is no column-preserving way
/// to read that line).
pub fn mask(text: &str) -> Result<Masked, Error> {
    let spans = actions(text)?;
    let mut covered = vec![false; text.len()];
    for &(start, end) in &spans {
        covered[start..end].fill(true);
    }
    let mut out = String::with_capacity(text.len());
    let mut table = Vec::with_capacity(spans.len());
    let mut next_span = 0;
    let mut line_start = 0;
    for (index, line) in text.split_inclusive('\n').enumerate() {
        let line_end = line_start + line.len();
        let body = line.trim_end_matches(['\n', '\r']);
        let has_action = covered[line_start..line_end].contains(&true);
        let only_actions = body
            .char_indices()
            .all(|(i, c)| c.is_whitespace() || covered[line_start + i]);
        while next_span < spans.len() && spans[next_span].1 <= line_start {
            next_span += 1;
        }
        if has_action && only_actions {
            out.push_str(&line[body.len()..]);
        } else {
            let mut cursor = line_start;
            let mut k = next_span;
            while k < spans.len() && spans[k].0 < line_end {
                let (start, end) = spans[k];
                if start < line_start || end > line_start + body.len() {
                    return Err(Error::Template {
                        line: index + 1,
                        message: "a template action spanning lines shares a line with YAML"
                            .to_owned(),
                    });
                }
                out.push_str(&text[cursor..start]);
                let action = &text[start..end];
                let marker = placeholder(table.len(), action.chars().count()).ok_or_else(|| {
                    Error::Template {
                        line: index + 1,
                        message: "too many template actions".to_owned(),
                    }
                })?;
                out.push_str(&marker);
                table.push(action.to_owned());
                cursor = end;
                k += 1;
            }
            out.push_str(&text[cursor..line_end]);
        }
        line_start = line_end;
    }
    Ok(Masked {
        text: out,
        actions: table,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_line_actions_become_empty_lines() {
        let src =
            "a: 1\n{{- if has $x (list \"true\") }}\n  {{- $v := \"}}\" }}\nb: 2\n{{- end }}\n";
        let m = mask(src).unwrap();
        assert_eq!(m.text, "a: 1\n\n\nb: 2\n\n");
    }

    #[test]
    fn several_actions_on_one_line_are_still_a_template_line() {
        let src = "{{- if not (has $s (list \"a\")) }}{{- fail (printf \"got %q\" $s) }}{{- end }}\nk: v\n";
        assert_eq!(mask(src).unwrap().text, "\nk: v\n");
    }

    #[test]
    fn inline_actions_keep_columns_and_restore() {
        let src = "name: {{ .Release.Name }}-x\nimage: \"{{ .Values.image }}\"\n";
        let m = mask(src).unwrap();
        let lines: Vec<_> = m.text.lines().collect();
        assert_eq!(lines.len(), 2);
        for (masked, original) in lines.iter().zip(src.lines()) {
            assert_eq!(masked.chars().count(), original.chars().count());
        }
        let value: String = lines[0]["name: ".len()..].to_owned();
        assert_eq!(m.restore(&value), "{{ .Release.Name }}-x");
    }

    #[test]
    fn comments_and_raw_strings_may_hold_braces() {
        let src = "{{/* a }} comment */}}\n{{ `}}` }}\nk: v\n";
        assert_eq!(mask(src).unwrap().text, "\n\nk: v\n");
    }

    #[test]
    fn multi_line_whole_actions_are_blanked() {
        let src = "{{- /*\n  spans\n*/ -}}\nk: v\n";
        assert_eq!(mask(src).unwrap().text, "\n\n\nk: v\n");
    }

    #[test]
    fn unterminated_action_is_an_error_with_its_line() {
        let err = mask("a: 1\nb: {{ .Values.x\n").unwrap_err();
        assert!(matches!(err, Error::Template { line: 2, .. }), "{err:?}");
    }

    #[test]
    fn multi_line_action_sharing_a_yaml_line_is_an_error() {
        let err = mask("a: {{ include \"x\"\n . }}\n").unwrap_err();
        assert!(matches!(err, Error::Template { line: 1, .. }), "{err:?}");
    }

    #[test]
    fn placeholders_round_trip_many_actions() {
        let src: String = (0..300)
            .map(|i| format!("k{i}: {{{{ .V{i} }}}}\n"))
            .collect();
        let m = mask(&src).unwrap();
        for (i, line) in m.text.lines().enumerate() {
            let value = line.split_once(": ").unwrap().1;
            assert_eq!(m.restore(value), format!("{{{{ .V{i} }}}}"));
        }
    }
}
