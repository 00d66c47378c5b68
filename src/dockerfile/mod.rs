//! Read a Dockerfile by parsing it: stages, ARGs, comments, RUN scripts.
//!
//! `revendor check` asks structural questions of an image recipe: which image
//! the Go builder stage uses (`builder-go`), what `ARG VERSION` says
//! (`version-sync`), what a `# <key>: <value>` marker vouches for
//! (`marker:<name>`), and whether the CNI plugins archive is verified against
//! a pinned per-arch digest before it is unpacked (`cni-checksums`). A grep
//! cannot answer these once a line is continued, commented out or reordered,
//! so:
//!
//! 1. `lex` turns physical lines into instructions the way BuildKit does
//!    (directives, continuations, comments, heredocs), keeping lines;
//! 2. [`Dockerfile::parse`] reads stages (`FROM`) and `ARG`s from them;
//! 3. `shell` parses `RUN` scripts into commands for `cni`;
//! 4. `builder`, `marker` and `rewrite` answer the remaining questions
//!    and rewrite values in place, leaving every other byte alone.

mod arg_image;
mod builder;
mod cni;
mod lex;
mod marker;
mod rewrite;
mod shell;

use std::collections::HashMap;
use std::ops::Range;

use crate::image::Reference;

pub use arg_image::arg_image;
pub use builder::{BuilderProblem, check_builder};
pub use cni::{ArchPin, CniChecksums, CniProblem, cni_checksums};
pub use lex::{Comment, Heredoc, Instruction, Text};
pub use marker::{MarkerLine, rewrite_marker};
pub use rewrite::{digest_suffix, kept_digest, rewrite_arg};

/// Why a Dockerfile could not be read or rewritten.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The file does not follow Dockerfile syntax.
    #[error("invalid Dockerfile at line {line}: {message}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A rewrite named an `ARG` that has no `NAME=value` declaration.
    #[error("no `ARG {name}=…` in the Dockerfile")]
    ArgNotFound {
        /// The ARG name.
        name: String,
    },
    /// A rewrite named a marker key that no comment line carries.
    #[error("no `# {key}: …` marker line in the Dockerfile")]
    MarkerNotFound {
        /// The marker key.
        key: String,
    },
    /// The replacement cannot be written without quoting or breaking the line.
    #[error("`{value}` cannot be written as a bare value")]
    InvalidValue {
        /// The rejected value.
        value: String,
    },
    /// An `ARG` pins its value by digest, and the rewrite moves the value:
    /// the old digest would name the old image under the new tag (issue 20).
    #[error(
        "`ARG {name}={old}` pins `{was}` by digest; `{new}` needs its own digest, and the old one must not stay"
    )]
    StaleDigest {
        /// The ARG name.
        name: String,
        /// 1-based line of the declaration.
        line: usize,
        /// The value as written, digest included.
        old: String,
        /// `old` without its digest.
        was: String,
        /// The new value, which names no digest.
        new: String,
    },
}

impl Error {
    /// The 1-based line at fault, when the error has one.
    pub fn line(&self) -> Option<usize> {
        match self {
            Error::Syntax { line, .. } | Error::StaleDigest { line, .. } => Some(*line),
            _ => None,
        }
    }
}

/// A parsed Dockerfile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dockerfile {
    /// Every instruction in file order.
    pub instructions: Vec<Instruction>,
    /// Every comment line in file order (directives excluded).
    pub comments: Vec<Comment>,
    /// Every build stage in file order.
    pub stages: Vec<Stage>,
    /// Every `ARG` declaration in file order.
    pub args: Vec<Arg>,
}

/// One build stage, opened by `FROM`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stage {
    /// 0-based stage index.
    pub index: usize,
    /// The `AS` name, if any.
    pub name: Option<String>,
    /// The base as written after `FROM` (and its flags).
    pub image: String,
    /// What the base is once global ARG defaults are substituted.
    pub base: Base,
    /// The `--platform` flag, if any.
    pub platform: Option<String>,
    /// 1-based line of the `FROM`.
    pub line: usize,
    /// Indices into [`Dockerfile::instructions`] of this stage, FROM included.
    pub instructions: Range<usize>,
}

/// What a stage builds on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Base {
    /// A registry image, read with [`Reference::parse_lenient`]: a malformed digest makes it
    /// unpinned, not unreadable.
    Image(Reference),
    /// An earlier stage, by index.
    Stage(usize),
    /// `scratch`.
    Scratch,
    /// Not readable without build arguments (an unset ARG, say).
    Unknown(String),
    /// Written out, but not an image reference (`FROM Golang`): the parse error's message.
    Invalid(String),
}

/// One `NAME[=value]` of an `ARG` instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    /// The ARG name.
    pub name: String,
    /// The default value, quotes removed.
    pub value: Option<String>,
    /// 1-based line of the declaration.
    pub line: usize,
    /// The stage declaring it; `None` before the first `FROM` (global).
    pub stage: Option<usize>,
    /// File byte range of the value as written, quotes excluded.
    pub span: Option<Range<usize>>,
}

impl Dockerfile {
    /// Parse Dockerfile text.
    pub fn parse(text: &str) -> Result<Self, Error> {
        let lexed = lex::lex(text)?;
        let mut df = Dockerfile {
            instructions: lexed.instructions,
            comments: lexed.comments,
            stages: Vec::new(),
            args: Vec::new(),
        };
        for index in 0..df.instructions.len() {
            let stage = df.stages.len().checked_sub(1);
            let ins = &df.instructions[index];
            match ins.keyword.as_str() {
                "FROM" => {
                    if let Some(last) = df.stages.last_mut() {
                        last.instructions.end = index;
                    }
                    let from = parse_from(ins, &df.stages, &df.args)?;
                    df.stages.push(Stage {
                        index: df.stages.len(),
                        instructions: index..index + 1,
                        ..from
                    });
                }
                "ARG" => {
                    let args = parse_arg(ins, stage)?;
                    df.args.extend(args);
                }
                _ => {}
            }
        }
        let total = df.instructions.len();
        if let Some(last) = df.stages.last_mut() {
            last.instructions.end = total;
        }
        Ok(df)
    }

    /// Every declaration of ARG `name` with a default value.
    pub fn arg_values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Arg> + 'a {
        self.args
            .iter()
            .filter(move |a| a.name == name && a.value.is_some())
    }

    /// The stage holding instruction `index`, if it is after the first FROM.
    pub fn stage_of(&self, index: usize) -> Option<&Stage> {
        self.stages.iter().find(|s| s.instructions.contains(&index))
    }
}

/// Split on blanks outside quotes; each word with its byte offset.
pub(crate) fn split_words(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    let mut quote = None;
    for (i, c) in text.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                start.get_or_insert(i);
            }
            None if c.is_whitespace() => {
                if let Some(s) = start.take() {
                    out.push((s, &text[s..i]));
                }
            }
            None => {
                start.get_or_insert(i);
            }
        }
    }
    if let Some(s) = start {
        out.push((s, &text[s..]));
    }
    out
}

fn parse_from(ins: &Instruction, stages: &[Stage], args: &[Arg]) -> Result<Stage, Error> {
    let words = split_words(&ins.args.text);
    let mut platform = None;
    let mut rest = Vec::new();
    for (_, w) in &words {
        match w.strip_prefix("--") {
            Some(flag) if rest.is_empty() => {
                if let Some(value) = flag.strip_prefix("platform=") {
                    platform = Some(value.to_owned());
                }
            }
            _ => rest.push(*w),
        }
    }
    let syntax = |message: &str| Error::Syntax {
        line: ins.line,
        message: message.to_owned(),
    };
    let (image, name) = match rest.as_slice() {
        [image] => (*image, None),
        [image, r#as, name] if r#as.eq_ignore_ascii_case("as") => (*image, Some(*name)),
        [] => return Err(syntax("FROM names no image")),
        _ => return Err(syntax("FROM takes an image and an optional `AS name`")),
    };
    let globals: HashMap<&str, &str> = args
        .iter()
        .filter(|a| a.stage.is_none())
        .filter_map(|a| Some((a.name.as_str(), a.value.as_deref()?)))
        .collect();
    let resolved = expand(image, &|name| globals.get(name).map(|v| (*v).to_owned()));
    let base = if resolved.contains('$') {
        Base::Unknown(resolved)
    } else if resolved.eq_ignore_ascii_case("scratch") {
        Base::Scratch
    } else if let Some(earlier) = stages.iter().find(|s| {
        s.name
            .as_deref()
            .is_some_and(|n| n.eq_ignore_ascii_case(&resolved))
    }) {
        Base::Stage(earlier.index)
    } else {
        match Reference::parse_lenient(&resolved) {
            Ok(r) => Base::Image(r),
            Err(e) => Base::Invalid(e.to_string()),
        }
    };
    Ok(Stage {
        index: 0,
        name: name.map(str::to_owned),
        image: image.to_owned(),
        base,
        platform,
        line: ins.line,
        instructions: 0..0,
    })
}

/// The file range of `inner`, the value at byte `at` of the joined `text`. Its first and last
/// bytes are mapped, not its end: a value may run across a continuation (the range then holds
/// the `\` and the line break, and a rewrite replaces them too), and a position at the end of
/// the joined text has no byte of its own (`ARG VERSION=\` at the end of the file). An empty
/// value sits just after the `=` or its opening quote, both one byte. Fuzzing found both
/// (issue 13).
fn value_span(text: &Text, inner: &str, at: usize) -> Option<Range<usize>> {
    let Some(last) = inner.chars().next_back() else {
        let after = text.file_offset(at.checked_sub(1)?)? + 1;
        return Some(after..after);
    };
    let end = at + inner.len() - last.len_utf8();
    Some(text.file_offset(at)?..text.file_offset(end)? + last.len_utf8())
}

fn parse_arg(ins: &Instruction, stage: Option<usize>) -> Result<Vec<Arg>, Error> {
    let words = split_words(&ins.args.text);
    if words.is_empty() {
        return Err(Error::Syntax {
            line: ins.line,
            message: "ARG names nothing".to_owned(),
        });
    }
    words
        .into_iter()
        .map(|(at, word)| {
            let line = ins.args.line_at(at);
            let (name, value) = match word.split_once('=') {
                Some((name, raw)) => {
                    let raw_at = at + name.len() + 1;
                    let (inner, inner_at) = unquote_whole(raw, raw_at);
                    let span = value_span(&ins.args, inner, inner_at);
                    (name, Some((inner.to_owned(), span)))
                }
                None => (word, None),
            };
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(Error::Syntax {
                    line,
                    message: format!("`{name}` is not an ARG name"),
                });
            }
            let (value, span) = value.map_or((None, None), |(v, s)| (Some(v), s));
            Ok(Arg {
                name: name.to_owned(),
                value,
                line,
                stage,
                span,
            })
        })
        .collect()
}

/// A value without the quotes around all of it, and where it then starts.
fn unquote_whole(raw: &str, at: usize) -> (&str, usize) {
    for q in ['"', '\''] {
        if raw.len() >= 2 && raw.starts_with(q) && raw.ends_with(q) {
            return (&raw[1..raw.len() - 1], at + 1);
        }
    }
    (raw, at)
}

/// Substitute `$NAME`, `${NAME}`, `${NAME:-default}` and `${NAME:+alt}`
/// where `lookup` knows the name; anything unknown is left as written.
pub(crate) fn expand(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(inner) = after.strip_prefix('{')
            && let Some(close) = inner.find('}')
        {
            let body = &inner[..close];
            let (name, op) = match body.find(":-").or_else(|| body.find(":+")) {
                Some(p) => (&body[..p], Some((&body[p..p + 2], &body[p + 2..]))),
                None => (body, None),
            };
            let value = lookup(name);
            let replaced = match (op, value) {
                (None, Some(v)) => Some(v),
                (Some((":-", default)), v) => Some(
                    v.filter(|v| !v.is_empty())
                        .unwrap_or_else(|| default.to_owned()),
                ),
                (Some((_, alt)), Some(v)) => Some(if v.is_empty() {
                    String::new()
                } else {
                    alt.to_owned()
                }),
                _ => None,
            };
            match replaced {
                Some(v) => out.push_str(&v),
                None => out.push_str(&rest[i..i + 2 + close + 1]),
            }
            rest = &inner[close + 1..];
            continue;
        }
        let len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        match (len > 0).then(|| lookup(&after[..len])).flatten() {
            Some(v) => out.push_str(&v),
            None => out.push_str(&rest[i..i + 1 + len]),
        }
        rest = &after[len..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "\
# syntax=docker/dockerfile:1
ARG GO=1.26
ARG BASE=debian:stable-slim
FROM --platform=$BUILDPLATFORM golang:${GO} AS build
ARG VERSION=\"v4.3.0\" \\
    OTHER
RUN echo $VERSION
from ${BASE}@sha256:abc
copy --from=build /x /x
FROM build as again
FROM scratch
";

    #[test]
    fn reads_stages_with_resolved_bases() {
        let df = Dockerfile::parse(FILE).unwrap();
        let got: Vec<_> = df
            .stages
            .iter()
            .map(|s| (s.index, s.name.as_deref(), s.line, s.base.clone()))
            .collect();
        assert_eq!(got[0].2, 4);
        assert_eq!(
            got[0].3,
            Base::Image(Reference::parse("golang:1.26").unwrap())
        );
        assert_eq!(df.stages[0].platform.as_deref(), Some("$BUILDPLATFORM"));
        assert_eq!(
            got[1].3,
            Base::Image(Reference::parse_lenient("debian:stable-slim@sha256:abc").unwrap())
        );
        assert_eq!(
            (got[2].1, got[2].3.clone()),
            (Some("again"), Base::Stage(0))
        );
        assert_eq!(got[3].3, Base::Scratch);
        assert_eq!(df.stages[1].instructions, 5..7);
        assert_eq!(df.stage_of(6).map(|s| s.index), Some(1));
        assert_eq!(df.stage_of(1).map(|s| s.index), None);
    }

    #[test]
    fn a_base_that_is_no_reference_is_invalid_not_unknown() {
        let df = Dockerfile::parse("ARG X\nFROM Golang:1.26\nFROM $X\n").unwrap();
        assert!(
            matches!(&df.stages[0].base, Base::Invalid(m) if m.contains("`Golang:1.26`")),
            "{:?}",
            df.stages[0].base
        );
        assert!(matches!(&df.stages[1].base, Base::Unknown(_)));
    }

    #[test]
    fn reads_args_with_lines_values_and_spans() {
        let df = Dockerfile::parse(FILE).unwrap();
        let got: Vec<_> = df
            .args
            .iter()
            .map(|a| (a.name.as_str(), a.value.as_deref(), a.line, a.stage))
            .collect();
        assert_eq!(
            got,
            [
                ("GO", Some("1.26"), 2, None),
                ("BASE", Some("debian:stable-slim"), 3, None),
                ("VERSION", Some("v4.3.0"), 5, Some(0)),
                ("OTHER", None, 6, Some(0)),
            ]
        );
        let version = df.arg_values("VERSION").next().unwrap();
        assert_eq!(&FILE[version.span.clone().unwrap()], "v4.3.0");
    }

    #[test]
    fn malformed_from_and_arg_are_errors() {
        for (text, line) in [("FROM\n", 1), ("FROM a b\n", 1), ("FROM a\nARG =x\n", 2)] {
            let err = Dockerfile::parse(text).unwrap_err();
            assert!(
                matches!(err, Error::Syntax { line: l, .. } if l == line),
                "{text}: {err:?}"
            );
        }
    }

    #[test]
    fn expand_substitutes_known_names_only() {
        let vars = |n: &str| (n == "A").then(|| "1".to_owned());
        assert_eq!(
            expand("x$A-${A}-$B-${B:-d}-${A:+y}-${C}", &vars),
            "x1-1-$B-d-y-${C}"
        );
    }

    #[test]
    fn split_words_keeps_quoted_blanks() {
        let words: Vec<_> = split_words("A=\"x y\"  B='z'")
            .into_iter()
            .map(|(_, w)| w)
            .collect();
        assert_eq!(words, ["A=\"x y\"", "B='z'"]);
    }
}
