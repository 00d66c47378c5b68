//! Enough of POSIX sh to read a `RUN` script as a list of commands.
//!
//! The CNI checksum check needs to know, of the script the shell will run,
//! which command downloads, which verifies and which extracts, in what order,
//! whether errexit is on, and what a `case "$TARGETARCH"` arm assigns. It does
//! not need to run anything, so this is a reader, not a shell:
//!
//! 1. [`tokens`] splits the text into words (quotes, escapes, `$(…)`,
//!    `${…}` and backquotes kept inside one word), operators, and drops
//!    comments — a `#` at a word start runs to the end of the line, which after
//!    Dockerfile continuation joining is the end of the whole `RUN`;
//! 2. [`parse`] turns tokens into a flat list of simple [`Command`]s, each
//!    with the separator after it and the innermost `case` arm it runs in.
//!    Reserved words (`if`, `then`, `fi`, `do`, …) are skipped, so the
//!    commands inside compound statements are listed in source order.
//!
//! Values are kept as written (`$VAR` stays `$VAR`); expansion is the
//! caller's business.

/// A word as written, and where it starts in the script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// The raw text, quotes included.
    pub raw: String,
    /// Byte offset of the word in the script.
    pub at: usize,
    /// Byte offset just past the word.
    pub end: usize,
}

impl Word {
    /// The word with quoting removed; expansions stay as written.
    pub fn unquoted(&self) -> String {
        unquote(&self.raw)
    }
}

/// Remove shell quoting from `raw`, leaving `$…` text alone.
pub(crate) fn unquote(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    out.push(c);
                }
            }
            '"' => {
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.peek() {
                            Some(&n @ ('$' | '`' | '"' | '\\')) => {
                                out.push(n);
                                chars.next();
                            }
                            _ => out.push('\\'),
                        },
                        _ => out.push(c),
                    }
                }
            }
            '\\' => {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// What follows a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sep {
    /// `;` or a line break.
    Seq,
    /// `&&`
    And,
    /// `||`
    Or,
    /// `|`
    Pipe,
    /// `&`
    Background,
    /// The end of the script, of a `case` arm, or a subshell `)`.
    End,
}

/// The `case` arm a command runs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Arm {
    /// The `case` subject, unquoted (`$TARGETARCH`).
    pub subject: String,
    /// The arm's patterns, unquoted.
    pub patterns: Vec<String>,
}

/// One simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Command {
    /// Assignments and words, in order (redirections excluded).
    pub words: Vec<Word>,
    /// Redirections: operator and target.
    pub redirects: Vec<(String, Word)>,
    /// Byte offset of the command's first token.
    pub at: usize,
    /// The separator after it.
    pub sep: Sep,
    /// Preceded by `!`.
    pub negated: bool,
    /// The innermost `case` arm it runs in.
    pub arm: Option<Arm>,
}

impl Command {
    fn is_assignment(word: &Word) -> bool {
        let raw = word.raw.as_str();
        raw.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    }

    /// Leading `NAME=value` words, unquoted.
    pub fn assignments(&self) -> Vec<(String, String)> {
        self.words
            .iter()
            .take_while(|w| Self::is_assignment(w))
            .filter_map(|w| {
                let (name, value) = w.raw.split_once('=')?;
                Some((name.to_owned(), unquote(value)))
            })
            .collect()
    }

    /// The command words after any leading assignments.
    pub fn argv(&self) -> &[Word] {
        let skip = self
            .words
            .iter()
            .take_while(|w| Self::is_assignment(w))
            .count();
        &self.words[skip..]
    }

    /// The command's name without its directory (`/usr/bin/curl` → `curl`).
    pub fn name(&self) -> Option<String> {
        let first = self.argv().first()?.unquoted();
        Some(first.rsplit('/').next().unwrap_or(&first).to_owned())
    }
}

/// A script the reader could not follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShellError {
    /// Byte offset in the script.
    pub at: usize,
    /// What is wrong.
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(Word),
    Op(&'static str, usize),
}

const OPS: [&str; 20] = [
    ";;&", "<<<", "<<-", ";;", ";&", "&&", "||", "<<", ">>", ">&", "<&", ">|", "<>", ";", "&", "|",
    "(", ")", "<", ">",
];

const REDIRECTS: [&str; 10] = ["<<<", "<<-", "<<", ">>", ">&", "<&", ">|", "<>", "<", ">"];

fn err(at: usize, message: &str) -> ShellError {
    ShellError {
        at,
        message: message.to_owned(),
    }
}

/// The byte past the quote closing the one at `open`.
fn single_quote_end(b: &[u8], open: usize) -> Result<usize, ShellError> {
    b[open + 1..]
        .iter()
        .position(|c| *c == b'\'')
        .map(|p| open + 1 + p + 1)
        .ok_or_else(|| err(open, "unterminated single quote"))
}

fn double_quote_end(b: &[u8], open: usize) -> Result<usize, ShellError> {
    let mut i = open + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Ok(i + 1),
            b'$' if matches!(b.get(i + 1), Some(b'(' | b'{')) => i = dollar_end(b, i)?,
            b'`' => i = backquote_end(b, i)?,
            _ => i += 1,
        }
    }
    Err(err(open, "unterminated double quote"))
}

fn backquote_end(b: &[u8], open: usize) -> Result<usize, ShellError> {
    let mut i = open + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'`' => return Ok(i + 1),
            _ => i += 1,
        }
    }
    Err(err(open, "unterminated backquote"))
}

/// The byte past `$(…)` or `${…}` starting at the `$` at `at`.
fn dollar_end(b: &[u8], at: usize) -> Result<usize, ShellError> {
    let (open, close) = match b.get(at + 1) {
        Some(b'(') => (b'(', b')'),
        _ => (b'{', b'}'),
    };
    let mut depth = 0usize;
    let mut i = at + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'\'' if open == b'(' => i = single_quote_end(b, i)? - 1,
            b'"' => i = double_quote_end(b, i)? - 1,
            b'`' => i = backquote_end(b, i)? - 1,
            c if c == open => depth += 1,
            c if c == close => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Ok(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    Err(err(at, "unterminated expansion"))
}

/// Split a script into tokens; see the module docs.
fn tokens(script: &str) -> Result<Vec<Token>, ShellError> {
    let b = script.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\r' => i += 1,
            b'\n' => {
                out.push(Token::Op("\n", i));
                i += 1;
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'\\' if b.get(i + 1) == Some(&b'\n') => i += 2,
            _ => {
                if let Some(op) = OPS.iter().find(|op| b[i..].starts_with(op.as_bytes())) {
                    out.push(Token::Op(op, i));
                    i += op.len();
                    continue;
                }
                let start = i;
                while i < b.len() {
                    match b[i] {
                        b' ' | b'\t' | b'\r' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<'
                        | b'>' => break,
                        b'\\' => i = (i + 2).min(b.len()),
                        b'\'' => i = single_quote_end(b, i)?,
                        b'"' => i = double_quote_end(b, i)?,
                        b'`' => i = backquote_end(b, i)?,
                        b'$' if matches!(b.get(i + 1), Some(b'(' | b'{')) => i = dollar_end(b, i)?,
                        _ => i += 1,
                    }
                }
                out.push(Token::Word(Word {
                    raw: script[start..i].to_owned(),
                    at: start,
                    end: i,
                }));
            }
        }
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    len: usize,
}

fn word_is(token: Option<&Token>, text: &str) -> bool {
    matches!(token, Some(Token::Word(w)) if w.raw == text)
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    fn at(&self) -> usize {
        match self.peek() {
            Some(Token::Word(w)) => w.at,
            Some(Token::Op(_, at)) => *at,
            None => self.len,
        }
    }

    fn list(&mut self, arm: Option<&Arm>, out: &mut Vec<Command>) -> Result<(), ShellError> {
        loop {
            match self.peek() {
                None => return Ok(()),
                Some(Token::Op(";;" | ";&" | ";;&", at)) => {
                    return match arm {
                        Some(_) => Ok(()),
                        None => Err(err(*at, "`;;` outside a case")),
                    };
                }
                Some(t @ Token::Word(_)) if arm.is_some() && word_is(Some(t), "esac") => {
                    return Ok(());
                }
                Some(Token::Op(";" | "\n" | "&&" | "||" | "|" | "&" | "(" | ")", _)) => {
                    self.pos += 1;
                }
                Some(_) => self.command(arm, out)?,
            }
        }
    }

    fn command(&mut self, arm: Option<&Arm>, out: &mut Vec<Command>) -> Result<(), ShellError> {
        let mut negated = false;
        while let Some(Token::Word(w)) = self.peek() {
            match w.raw.as_str() {
                "if" | "then" | "else" | "elif" | "do" | "while" | "until" | "{" | "fi"
                | "done" | "}" => self.pos += 1,
                "!" => {
                    negated = !negated;
                    self.pos += 1;
                }
                "case" => return self.case(out),
                _ => break,
            }
        }
        let at = self.at();
        let mut words: Vec<Word> = Vec::new();
        let mut redirects = Vec::new();
        let sep = loop {
            match self.peek().cloned() {
                None => break Sep::End,
                Some(Token::Word(w)) => {
                    words.push(w);
                    self.pos += 1;
                }
                Some(Token::Op(op, op_at)) if REDIRECTS.contains(&op) => {
                    // `2>&1`: the digits right before the operator are its fd.
                    if words.last().is_some_and(|w| {
                        w.end == op_at && w.raw.bytes().all(|c| c.is_ascii_digit())
                    }) {
                        words.pop();
                    }
                    self.pos += 1;
                    match self.next() {
                        Some(Token::Word(target)) => redirects.push((op.to_owned(), target)),
                        _ => return Err(err(op_at, "redirection without a target")),
                    }
                }
                Some(Token::Op(op, _)) => {
                    let sep = match op {
                        ";" | "\n" => Sep::Seq,
                        "&&" => Sep::And,
                        "||" => Sep::Or,
                        "|" => Sep::Pipe,
                        "&" => Sep::Background,
                        _ => break Sep::End,
                    };
                    self.pos += 1;
                    break sep;
                }
            }
        };
        if !words.is_empty() || !redirects.is_empty() {
            out.push(Command {
                words,
                redirects,
                at,
                sep,
                negated,
                arm: arm.cloned(),
            });
        }
        Ok(())
    }

    fn skip_newlines(&mut self) {
        while matches!(self.peek(), Some(Token::Op("\n", _))) {
            self.pos += 1;
        }
    }

    fn case(&mut self, out: &mut Vec<Command>) -> Result<(), ShellError> {
        let case_at = self.at();
        self.pos += 1;
        let subject = match self.next() {
            Some(Token::Word(w)) => w.unquoted(),
            _ => return Err(err(case_at, "case without a subject")),
        };
        self.skip_newlines();
        if !word_is(self.peek(), "in") {
            return Err(err(case_at, "case without `in`"));
        }
        self.pos += 1;
        loop {
            while matches!(self.peek(), Some(Token::Op("\n" | ";", _))) {
                self.pos += 1;
            }
            match self.peek() {
                None => return Err(err(case_at, "case without `esac`")),
                Some(t) if word_is(Some(t), "esac") => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(Token::Op("(", _)) => self.pos += 1,
                _ => {}
            }
            let mut patterns = Vec::new();
            loop {
                match self.next() {
                    Some(Token::Word(w)) => patterns.push(w.unquoted()),
                    _ => return Err(err(case_at, "case arm without a pattern")),
                }
                match self.next() {
                    Some(Token::Op("|", _)) => {}
                    Some(Token::Op(")", _)) => break,
                    _ => return Err(err(case_at, "case pattern without `)`")),
                }
            }
            let arm = Arm {
                subject: subject.clone(),
                patterns,
            };
            self.list(Some(&arm), out)?;
            match self.peek() {
                Some(Token::Op(";;" | ";&" | ";;&", _)) => self.pos += 1,
                Some(t) if word_is(Some(t), "esac") => {}
                _ => return Err(err(case_at, "case without `esac`")),
            }
        }
    }
}

/// Parse a script into its simple commands, in source order.
pub(crate) fn parse(script: &str) -> Result<Vec<Command>, ShellError> {
    let mut parser = Parser {
        tokens: tokens(script)?,
        pos: 0,
        len: script.len(),
    };
    let mut out = Vec::new();
    parser.list(None, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(script: &str) -> Vec<(String, Sep)> {
        parse(script)
            .unwrap()
            .iter()
            .map(|c| (c.name().unwrap_or_default(), c.sep))
            .collect()
    }

    #[test]
    fn splits_commands_with_their_separators() {
        let got = names("set -eux; curl -o f u && echo \"a; b\" | sha256sum -c - || true\nls");
        let expected = [
            ("set", Sep::Seq),
            ("curl", Sep::And),
            ("echo", Sep::Pipe),
            ("sha256sum", Sep::Or),
            ("true", Sep::Seq),
            ("ls", Sep::End),
        ];
        let expected: Vec<_> = expected
            .iter()
            .map(|(n, s)| ((*n).to_owned(), *s))
            .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn comments_run_to_the_end_of_the_line() {
        let got = names("set -e;  # set +e; tar x\necho");
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].0, "echo");
    }

    #[test]
    fn quotes_and_expansions_stay_in_one_word() {
        let cmds = parse("echo \"${sha256}  /tmp/x.tgz\" $(a | b) 'c;d' `e f` x\\ y").unwrap();
        let words: Vec<_> = cmds[0].words.iter().map(Word::unquoted).collect();
        assert_eq!(
            words,
            [
                "echo",
                "${sha256}  /tmp/x.tgz",
                "$(a | b)",
                "c;d",
                "`e f`",
                "x y"
            ]
        );
    }

    #[test]
    fn case_arms_are_attached_to_their_commands() {
        let script = "case \"$TARGETARCH\" in\n  amd64|x86_64) sha=\"aa\" ;;\n  (arm64) sha=bb; other=1 ;;\n  *) echo no; exit 1 ;;\nesac; echo done";
        let cmds = parse(script).unwrap();
        let got: Vec<_> = cmds
            .iter()
            .map(|c| {
                (
                    c.assignments(),
                    c.arm
                        .as_ref()
                        .map(|a| (a.subject.clone(), a.patterns.clone())),
                )
            })
            .collect();
        let arch = |p: &[&str]| {
            Some((
                "$TARGETARCH".to_owned(),
                p.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(),
            ))
        };
        assert_eq!(
            got[0],
            (
                vec![("sha".to_owned(), "aa".to_owned())],
                arch(&["amd64", "x86_64"])
            )
        );
        assert_eq!(got[1].1, arch(&["arm64"]));
        assert_eq!(got[3].1, arch(&["*"]));
        assert_eq!(cmds.last().unwrap().name().as_deref(), Some("echo"));
        assert_eq!(cmds.last().unwrap().arm, None);
    }

    #[test]
    fn redirections_are_separated_from_words() {
        let cmds = parse("curl -fsSL u > /tmp/a.tgz 2>&1; sha256sum -c <<< \"x  f\"").unwrap();
        assert_eq!(cmds[0].words.len(), 3);
        let targets: Vec<_> = cmds[0]
            .redirects
            .iter()
            .map(|(op, w)| (op.as_str(), w.raw.as_str()))
            .collect();
        assert_eq!(targets, [(">", "/tmp/a.tgz"), (">&", "1")]);
        assert_eq!(cmds[1].redirects[0].1.unquoted(), "x  f");
    }

    #[test]
    fn compound_statements_are_flattened_and_negation_kept() {
        let cmds = parse("if ! sha256sum -c s; then exit 1; fi; tar -xf a").unwrap();
        let got: Vec<_> = cmds
            .iter()
            .map(|c| (c.name().unwrap(), c.negated))
            .collect();
        assert_eq!(
            got,
            [
                ("sha256sum".to_owned(), true),
                ("exit".to_owned(), false),
                ("tar".to_owned(), false)
            ]
        );
    }

    #[test]
    fn unbalanced_input_is_an_error() {
        for bad in [
            "echo 'x",
            "echo \"x",
            "echo $(x",
            "case x in a) y",
            "a >",
            ";;",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
