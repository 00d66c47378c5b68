//! Physical lines to logical instructions, the way BuildKit's parser reads them.
//!
//! 1. Parser directives (`# syntax=…`, `# escape=…`) are read from the top
//!    until the first line that is not one; `escape` picks `\` or `` ` `` as
//!    the continuation character.
//! 2. Empty lines and comment lines (first non-blank character `#`) are not
//!    part of any instruction, even between continued lines; comments are
//!    kept with their lines so markers can be read and rewritten.
//! 3. An instruction runs on while a line ends with the escape character
//!    (trailing blanks allowed); the escape and the line break are removed and
//!    the next line is appended as is, as the shell will see it.
//! 4. `RUN`, `COPY` and `ADD` may open heredocs (`<<EOF`, `<<-"EOF"`); their
//!    bodies follow the instruction up to the terminator line.
//!
//! Every piece of joined text keeps where it came from (line and file byte
//! offset), so findings name lines and rewrites touch only the value.

use super::Error;

/// Where a run of joined text came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Segment {
    /// Offset in the joined text where this run starts.
    pub at: usize,
    /// Byte offset of the same text in the file.
    pub file: usize,
    /// 1-based line of the run.
    pub line: usize,
}

/// Joined text with its origin map.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Text {
    /// The text as BuildKit passes it on.
    pub text: String,
    pub(crate) segments: Vec<Segment>,
}

impl Text {
    fn push(&mut self, piece: &str, file: usize, line: usize) {
        self.segments.push(Segment {
            at: self.text.len(),
            file,
            line,
        });
        self.text.push_str(piece);
    }

    fn segment(&self, offset: usize) -> Option<&Segment> {
        let i = self.segments.partition_point(|s| s.at <= offset);
        self.segments.get(i.checked_sub(1)?)
    }

    /// The 1-based line holding byte `offset` of the joined text.
    pub fn line_at(&self, offset: usize) -> usize {
        self.segment(offset).map_or(0, |s| s.line)
    }

    /// The file byte offset of byte `offset` of the joined text.
    pub fn file_offset(&self, offset: usize) -> Option<usize> {
        self.segment(offset).map(|s| s.file + (offset - s.at))
    }
}

/// A heredoc body attached to an instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heredoc {
    /// The terminator word.
    pub word: String,
    /// The body lines, each ending with `\n`.
    pub body: Text,
}

/// One logical instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    /// The keyword, upper-cased (`RUN`, `FROM`, …).
    pub keyword: String,
    /// Everything after the keyword, continuations joined.
    pub args: Text,
    /// 1-based line of the keyword.
    pub line: usize,
    /// Heredoc bodies, in the order they were opened.
    pub heredocs: Vec<Heredoc>,
}

/// A comment line (`#` first), outside or between instruction lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    /// 1-based line.
    pub line: usize,
    /// The text after `#`, line break excluded.
    pub text: String,
    /// File byte offset of the first character after `#`.
    pub offset: usize,
}

/// The lexed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lexed {
    pub instructions: Vec<Instruction>,
    pub comments: Vec<Comment>,
}

/// A physical line: number, byte offset, text without its line break.
#[derive(Clone, Copy)]
struct Line<'a> {
    number: usize,
    offset: usize,
    text: &'a str,
}

fn lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut offset = 0;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        out.push(Line {
            number: i + 1,
            offset,
            text: raw.trim_end_matches(['\n', '\r']),
        });
        offset += raw.len();
    }
    out
}

/// A known directive (`# syntax=…`, `# escape=…`, `# check=…`); `None` for
/// anything else, which BuildKit reads as a comment ending the directives.
fn directive(line: &str) -> Option<(String, String)> {
    let rest = line.trim_start().strip_prefix('#')?;
    let (key, value) = rest.split_once('=')?;
    let key = key.trim().to_ascii_lowercase();
    matches!(key.as_str(), "syntax" | "escape" | "check").then(|| (key, value.trim().to_owned()))
}

fn comment_of(line: &Line<'_>) -> Option<Comment> {
    let lead = line.text.len() - line.text.trim_start().len();
    let rest = line.text[lead..].strip_prefix('#')?;
    Some(Comment {
        line: line.number,
        text: rest.to_owned(),
        offset: line.offset + lead + 1,
    })
}

/// The line without a trailing escape character (and blanks after it), if
/// it continues.
fn continued(text: &str, escape: char) -> Option<&str> {
    text.trim_end_matches([' ', '\t']).strip_suffix(escape)
}

/// Split a file into instructions and comments.
pub(crate) fn lex(text: &str) -> Result<Lexed, Error> {
    let all = lines(text);
    let (escape, mut i) = directives(&all)?;
    let mut out = Lexed {
        instructions: Vec::new(),
        comments: Vec::new(),
    };
    while i < all.len() {
        let line = all[i];
        i += 1;
        if line.text.trim().is_empty() {
            continue;
        }
        if let Some(comment) = comment_of(&line) {
            out.comments.push(comment);
            continue;
        }
        let (keyword, args_at) = keyword(&line)?;
        let args = joined_args(&all, &mut i, &line, args_at, escape, &mut out.comments);
        let keyword = keyword.to_ascii_uppercase();
        let mut heredocs = Vec::new();
        if matches!(keyword.as_str(), "RUN" | "COPY" | "ADD") {
            for (word, strip_tabs) in heredoc_words(&args.text) {
                let body = heredoc_body(&all, &mut i, line.number, &word, strip_tabs)?;
                heredocs.push(Heredoc { word, body });
            }
        }
        out.instructions.push(Instruction {
            keyword,
            args,
            line: line.number,
            heredocs,
        });
    }
    Ok(out)
}

/// The escape character the parser directives at the top of the file pick
/// (`\` by default), and the index of the first line after them.
fn directives(all: &[Line<'_>]) -> Result<(char, usize), Error> {
    let mut escape = '\\';
    let mut i = 0;
    while let Some((key, value)) = all.get(i).and_then(|l| directive(l.text)) {
        if key == "escape" {
            escape = match value.as_str() {
                "\\" => '\\',
                "`" => '`',
                _ => {
                    return Err(Error::Syntax {
                        line: all[i].number,
                        message: format!("invalid escape directive `{value}`"),
                    });
                }
            };
        }
        i += 1;
    }
    Ok((escape, i))
}

/// The keyword opening an instruction `line`, as written, and the byte
/// offset in the line where its arguments start.
fn keyword<'a>(line: &Line<'a>) -> Result<(&'a str, usize), Error> {
    let lead = line.text.len() - line.text.trim_start().len();
    let body = &line.text[lead..];
    let word_len = body.find(|c: char| c.is_whitespace()).unwrap_or(body.len());
    let keyword = &body[..word_len];
    if !keyword.chars().all(|c| c.is_ascii_alphabetic()) {
        return Err(Error::Syntax {
            line: line.number,
            message: format!("`{keyword}` is not an instruction"),
        });
    }
    let args_at = lead + word_len + (body.len() - word_len - body[word_len..].trim_start().len());
    Ok((keyword, args_at))
}

/// The arguments of the instruction on `line` from byte `args_at`, joined
/// across continued lines from `all[*i]` on; `*i` ends past the last line
/// joined. Blank and comment lines inside a continuation are dropped (the
/// comments kept in `comments`).
fn joined_args<'a>(
    all: &[Line<'a>],
    i: &mut usize,
    line: &Line<'a>,
    args_at: usize,
    escape: char,
    comments: &mut Vec<Comment>,
) -> Text {
    let mut args = Text::default();
    let mut piece = &line.text[args_at..];
    let mut piece_offset = line.offset + args_at;
    let mut piece_line = line.number;
    while let Some(head) = continued(piece, escape) {
        args.push(head, piece_offset, piece_line);
        while let Some(next) = all.get(*i) {
            if next.text.trim().is_empty() {
                *i += 1;
            } else if let Some(comment) = comment_of(next) {
                comments.push(comment);
                *i += 1;
            } else {
                break;
            }
        }
        match all.get(*i) {
            Some(next) => {
                piece = next.text;
                piece_offset = next.offset;
                piece_line = next.number;
                *i += 1;
            }
            None => {
                piece = "";
                break;
            }
        }
    }
    args.push(piece, piece_offset, piece_line);
    args
}

/// The body of heredoc `word` opened by the instruction at line `opened`:
/// the lines from `all[*i]` up to its terminator (leading tabs stripped for
/// `<<-`); `*i` ends past the terminator.
fn heredoc_body(
    all: &[Line<'_>],
    i: &mut usize,
    opened: usize,
    word: &str,
    strip_tabs: bool,
) -> Result<Text, Error> {
    let mut doc = Text::default();
    loop {
        let Some(next) = all.get(*i) else {
            return Err(Error::Syntax {
                line: opened,
                message: format!("heredoc `{word}` is never terminated"),
            });
        };
        *i += 1;
        let content = if strip_tabs {
            next.text.trim_start_matches('\t')
        } else {
            next.text
        };
        if content == word {
            return Ok(doc);
        }
        let skipped = next.text.len() - content.len();
        doc.push(content, next.offset + skipped, next.number);
        doc.text.push('\n');
    }
}

/// Heredoc openers (`<<WORD`, `<<-WORD`, quoted words) outside quotes, in
/// order, with whether leading tabs are stripped.
fn heredoc_words(args: &str) -> Vec<(String, bool)> {
    let bytes = args.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut quote: Option<u8> = None;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'\'' || b == b'"' => quote = Some(b),
            None if b == b'<'
                && bytes.get(i + 1) == Some(&b'<')
                && bytes.get(i + 2) != Some(&b'<') =>
            {
                let mut j = i + 2;
                let strip = bytes.get(j) == Some(&b'-');
                if strip {
                    j += 1;
                }
                let quoted = matches!(bytes.get(j), Some(b'"' | b'\''));
                if quoted {
                    j += 1;
                }
                let start = j;
                while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
                    j += 1;
                }
                if j > start {
                    out.push((args[start..j].to_owned(), strip));
                }
                i = j + usize::from(quoted);
                continue;
            }
            None => {}
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_continuations_dropping_comment_and_blank_lines() {
        let src = "FROM x\nRUN a \\\n  # note\n\n    && b \\  \n    c\n";
        let lexed = lex(src).unwrap();
        let run = &lexed.instructions[1];
        assert_eq!(run.keyword, "RUN");
        assert_eq!(run.args.text, "a     && b     c");
        assert_eq!(run.line, 2);
        assert_eq!(run.args.line_at(0), 2);
        assert_eq!(run.args.line_at(run.args.text.find('b').unwrap()), 5);
        assert_eq!(run.args.line_at(run.args.text.len() - 1), 6);
        assert_eq!(lexed.comments[0].line, 3);
        assert_eq!(lexed.comments[0].text, " note");
    }

    #[test]
    fn file_offsets_point_into_the_source() {
        let src = "ARG A=1\nRUN x \\\n  yz\n";
        let lexed = lex(src).unwrap();
        let run = &lexed.instructions[1];
        let at = run.args.text.find("yz").unwrap();
        let file = run.args.file_offset(at).unwrap();
        assert_eq!(&src[file..file + 2], "yz");
    }

    #[test]
    fn keywords_are_case_insensitive() {
        let lexed = lex("from x as y\n  run  echo\n").unwrap();
        let kw: Vec<_> = lexed
            .instructions
            .iter()
            .map(|i| i.keyword.as_str())
            .collect();
        assert_eq!(kw, ["FROM", "RUN"]);
        assert_eq!(lexed.instructions[1].args.text, "echo");
    }

    #[test]
    fn escape_directive_switches_to_backtick() {
        let src = "# escape=`\n# syntax=docker/dockerfile:1\nRUN a `\n  b\nRUN c \\\n";
        let lexed = lex(src).unwrap();
        assert_eq!(lexed.instructions[0].args.text, "a   b");
        assert_eq!(lexed.instructions[1].args.text, "c \\");
        assert!(lexed.comments.is_empty());
    }

    #[test]
    fn directives_stop_at_the_first_other_line() {
        for src in [
            "# a comment\n# escape=`\nRUN a `\n",
            "# note=x\n# escape=`\nRUN a `\n",
        ] {
            let lexed = lex(src).unwrap();
            assert_eq!(lexed.comments.len(), 2);
            assert_eq!(lexed.instructions[0].args.text, "a `");
        }
    }

    #[test]
    fn heredocs_are_collected_with_lines() {
        let src = "RUN <<EOF\nset -e\necho hi\nEOF\nRUN <<-\"X\" cat\n\tbody\n\tX\nRUN ok\n";
        let lexed = lex(src).unwrap();
        assert_eq!(lexed.instructions.len(), 3);
        let doc = &lexed.instructions[0].heredocs[0];
        assert_eq!(doc.word, "EOF");
        assert_eq!(doc.body.text, "set -e\necho hi\n");
        assert_eq!(doc.body.line_at(7), 3);
        assert_eq!(lexed.instructions[1].heredocs[0].body.text, "body\n");
    }

    #[test]
    fn bad_input_is_an_error_with_a_line() {
        assert!(matches!(
            lex("FROM x\n--bad\n"),
            Err(Error::Syntax { line: 2, .. })
        ));
        assert!(matches!(
            lex("RUN <<EOF\nno end\n"),
            Err(Error::Syntax { line: 1, .. })
        ));
        assert!(matches!(
            lex("# escape=x\n"),
            Err(Error::Syntax { line: 1, .. })
        ));
    }
}
