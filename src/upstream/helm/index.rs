//! A chart repository's `index.yaml`: the versions of one chart, read fast.
//!
//! Real indexes are large (the prometheus-community one is several MB, and
//! every chart of the repository is in it), while an update needs one
//! chart's entries. So:
//!
//! 1. `chart_block` finds the chart's block by its lines: the top-level
//!    `entries:` key, then the child key naming the chart, up to the next
//!    child key (Helm writes every index in this block style). No YAML is
//!    parsed for the other charts.
//! 2. That block, or the whole document when the lines do not have that
//!    shape (flow style, JSON), goes through the YAML parser as a stream of
//!    events (`Reader`): the fields an [`Entry`] needs are read, every
//!    other value skipped, and no tree is built, so an alias (`*a`) is never
//!    expanded and cannot amplify an index into gigabytes.
//!
//! A version listed twice is refused: which of the two archives a version
//! means would be a guess.

use std::str::Chars;

use yaml_rust2::parser::{Event, Parser};

/// One version of a chart, as the index lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `version`, exactly as written.
    pub version: String,
    /// `appVersion`, when listed.
    pub app_version: Option<String>,
    /// `urls`: where the archive is, relative to the index or absolute.
    pub urls: Vec<String>,
    /// `digest`: the archive's sha256 in hex, when listed.
    pub digest: Option<String>,
    /// The line of the entry in index.yaml (1-based).
    pub line: usize,
}

/// Why an index cannot be read; rendered after "did not answer a chart
/// repository index".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    /// Not UTF-8, not YAML, or not the shape of an index.
    #[error("{0}")]
    Malformed(String),
    /// `entries` has no key for the chart.
    #[error("it lists no chart `{0}`")]
    NoChart(String),
}

/// The versions of `chart` that `text` (an index.yaml) lists, in its order.
pub fn versions(text: &[u8], chart: &str) -> Result<Vec<Entry>, IndexError> {
    let text = std::str::from_utf8(text).map_err(|e| {
        IndexError::Malformed(format!("it is not UTF-8 text (byte {})", e.valid_up_to()))
    })?;
    let entries = match chart_block(text, chart) {
        Block::Found { text: block, line } => Reader::new(block, line - 1).versions(&[chart])?,
        Block::Absent => return Err(IndexError::NoChart(chart.to_owned())),
        Block::Unknown => Reader::new(text, 0).versions(&["entries", chart])?,
    };
    let entries = entries.ok_or_else(|| IndexError::NoChart(chart.to_owned()))?;
    for (i, e) in entries.iter().enumerate() {
        if let Some(first) = entries[..i].iter().find(|f| f.version == e.version) {
            return Err(IndexError::Malformed(format!(
                "chart `{chart}` lists version {} twice (lines {} and {})",
                e.version, first.line, e.line
            )));
        }
    }
    Ok(entries)
}

/// Where a chart's entries are in the index's text.
#[derive(Debug, PartialEq, Eq)]
enum Block<'t> {
    /// Its block: the key line and the lines under it, from line `line`.
    Found { text: &'t str, line: usize },
    /// `entries:` is there in block style and has no key for the chart.
    Absent,
    /// The text does not have the block shape: parse all of it.
    Unknown,
}

/// Finds `chart`'s block under a top-level `entries:` by indentation alone.
fn chart_block<'t>(text: &'t str, chart: &str) -> Block<'t> {
    let mut lines = Lines::new(text);
    if !lines.any(|l| l.indent == 0 && key_of(l.body) == Some("entries") && l.rest_is_empty()) {
        return Block::Unknown;
    }
    let mut child_indent = None;
    let mut start: Option<(usize, usize)> = None;
    for l in lines {
        if l.is_blank() {
            continue;
        }
        if l.indent == 0 {
            return end_block(text, start, l.offset);
        }
        let indent = *child_indent.get_or_insert(l.indent);
        let is_item = l.body.starts_with("- ") || l.body == "-";
        if l.indent < indent || (l.indent == indent && !is_item) {
            if start.is_some() {
                return end_block(text, start, l.offset);
            }
            if l.indent == indent && key_of(l.body) == Some(chart) {
                start = Some((l.offset, l.number));
            }
        }
    }
    end_block(text, start, text.len())
}

fn end_block<'t>(text: &'t str, start: Option<(usize, usize)>, end: usize) -> Block<'t> {
    match start {
        Some((from, line)) => Block::Found {
            text: &text[from..end],
            line,
        },
        None => Block::Absent,
    }
}

/// The key a block-mapping line starts with (`name:` or a quoted `"name":`),
/// when it is one.
fn key_of(body: &str) -> Option<&str> {
    let (key, _) = body.split_once(':')?;
    let key = key.trim_end();
    for q in ['"', '\''] {
        if let Some(inner) = key.strip_prefix(q).and_then(|k| k.strip_suffix(q)) {
            return Some(inner);
        }
    }
    (!key.contains([' ', '{', '[', '#'])).then_some(key)
}

/// One line of the index, split into its indentation and the rest.
#[derive(Debug, Clone, Copy)]
struct Line<'t> {
    /// 1-based line number.
    number: usize,
    /// Byte offset of the line's start.
    offset: usize,
    /// Leading spaces.
    indent: usize,
    /// The rest, without its line break.
    body: &'t str,
}

impl Line<'_> {
    /// Empty, or only a comment: no part of the structure.
    fn is_blank(&self) -> bool {
        let body = self.body.trim();
        body.is_empty() || body.starts_with('#')
    }

    /// Whether nothing but a comment follows the key's colon.
    fn rest_is_empty(&self) -> bool {
        let rest = self.body.split_once(':').map_or("", |(_, r)| r.trim());
        rest.is_empty() || rest.starts_with('#')
    }
}

/// The lines of a text, with numbers and offsets.
struct Lines<'t> {
    text: &'t str,
    offset: usize,
    number: usize,
}

impl<'t> Lines<'t> {
    fn new(text: &'t str) -> Lines<'t> {
        Lines {
            text,
            offset: 0,
            number: 0,
        }
    }
}

impl<'t> Iterator for Lines<'t> {
    type Item = Line<'t>;

    fn next(&mut self) -> Option<Line<'t>> {
        if self.offset >= self.text.len() {
            return None;
        }
        let rest = &self.text[self.offset..];
        let len = memchr::memchr(b'\n', rest.as_bytes()).map_or(rest.len(), |n| n + 1);
        let raw = rest[..len].trim_end_matches(['\n', '\r']);
        let body = raw.trim_start_matches(' ');
        let line = Line {
            number: self.number + 1,
            offset: self.offset,
            indent: raw.len() - body.len(),
            body,
        };
        self.offset += len;
        self.number += 1;
        Some(line)
    }
}

/// Reads entries from the YAML parser's events, skipping what it does not
/// need.
struct Reader<'t> {
    parser: Parser<Chars<'t>>,
    /// Lines before the parsed text in index.yaml.
    line_offset: usize,
}

impl<'t> Reader<'t> {
    fn new(text: &'t str, line_offset: usize) -> Reader<'t> {
        Reader {
            parser: Parser::new_from_str(text),
            line_offset,
        }
    }

    /// The next event and its 1-based line in index.yaml.
    fn next(&mut self) -> Result<(Event, usize), IndexError> {
        let (event, mark) = self.parser.next_token().map_err(|e| {
            IndexError::Malformed(format!(
                "it is not YAML: line {}: {}",
                e.marker().line() + self.line_offset,
                e.info()
            ))
        })?;
        Ok((event, mark.line() + self.line_offset))
    }

    /// The sequence at `path` (mapping keys from the document's root) read
    /// as entries; `None` when a key of the path is absent.
    fn versions(mut self, path: &[&str]) -> Result<Option<Vec<Entry>>, IndexError> {
        loop {
            match self.next()?.0 {
                Event::StreamStart | Event::DocumentStart => {}
                Event::MappingStart(..) => break,
                _ => return Err(not_an_index("its top level is not a mapping")),
            }
        }
        for (depth, key) in path.iter().enumerate() {
            if !self.find_key(key)? {
                return Ok(None);
            }
            let last = depth + 1 == path.len();
            match self.next()?.0 {
                Event::MappingStart(..) if !last => {}
                Event::SequenceStart(..) if last => return self.entries().map(Some),
                _ if last => {
                    return Err(not_an_index(&format!("`{key}` is not a list of versions")));
                }
                _ => return Err(not_an_index(&format!("`{key}` is not a mapping"))),
            }
        }
        Ok(None)
    }

    /// Moves past the key `key` of the mapping being read, skipping the
    /// other keys' values; `false` at the mapping's end.
    fn find_key(&mut self, key: &str) -> Result<bool, IndexError> {
        loop {
            match self.next()?.0 {
                Event::MappingEnd => return Ok(false),
                Event::Scalar(k, ..) if k == key => return Ok(true),
                Event::Scalar(..) => self.skip_value()?,
                _ => return Err(not_an_index("a key is not text")),
            }
        }
    }

    /// Skips one value, however deeply nested.
    fn skip_value(&mut self) -> Result<(), IndexError> {
        let mut depth = 0usize;
        loop {
            match self.next()?.0 {
                Event::MappingStart(..) | Event::SequenceStart(..) => depth += 1,
                Event::MappingEnd | Event::SequenceEnd => depth -= 1,
                Event::Scalar(..) | Event::Alias(..) => {}
                _ => return Err(not_an_index("the document ends inside a value")),
            }
            if depth == 0 {
                return Ok(());
            }
        }
    }

    /// The entries of the sequence just opened.
    fn entries(&mut self) -> Result<Vec<Entry>, IndexError> {
        let mut out = Vec::new();
        loop {
            match self.next()? {
                (Event::SequenceEnd, _) => return Ok(out),
                (Event::MappingStart(..), line) => out.push(self.entry(line)?),
                (_, line) => {
                    return Err(not_an_index(&format!(
                        "the version at line {line} is not a mapping"
                    )));
                }
            }
        }
    }

    /// One entry's fields, its mapping just opened at `line`.
    fn entry(&mut self, line: usize) -> Result<Entry, IndexError> {
        let mut entry = Entry {
            version: String::new(),
            app_version: None,
            urls: Vec::new(),
            digest: None,
            line,
        };
        loop {
            let key = match self.next()? {
                (Event::MappingEnd, _) => break,
                (Event::Scalar(k, ..), _) => k,
                (_, at) => return Err(not_an_index(&format!("a key at line {at} is not text"))),
            };
            match key.as_str() {
                "version" => entry.version = self.scalar(&key)?,
                "appVersion" => entry.app_version = Some(self.scalar(&key)?),
                "digest" => entry.digest = Some(self.scalar(&key)?),
                "urls" => entry.urls = self.scalars(&key)?,
                _ => self.skip_value()?,
            }
        }
        if entry.version.is_empty() {
            return Err(not_an_index(&format!(
                "the entry at line {line} has no `version`"
            )));
        }
        Ok(entry)
    }

    /// A scalar value for `key`.
    fn scalar(&mut self, key: &str) -> Result<String, IndexError> {
        match self.next()? {
            (Event::Scalar(v, ..), _) => Ok(v),
            (_, line) => Err(not_an_index(&format!(
                "`{key}` at line {line} is not a single value"
            ))),
        }
    }

    /// A sequence of scalars for `key`.
    fn scalars(&mut self, key: &str) -> Result<Vec<String>, IndexError> {
        let (event, line) = self.next()?;
        if !matches!(event, Event::SequenceStart(..)) {
            return Err(not_an_index(&format!(
                "`{key}` at line {line} is not a list"
            )));
        }
        let mut out = Vec::new();
        loop {
            match self.next()? {
                (Event::SequenceEnd, _) => return Ok(out),
                (Event::Scalar(v, ..), _) => out.push(v),
                (_, line) => {
                    return Err(not_an_index(&format!(
                        "`{key}` at line {line} holds something other than text"
                    )));
                }
            }
        }
    }
}

fn not_an_index(why: &str) -> IndexError {
    IndexError::Malformed(format!("it is not a chart repository index: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const INDEX: &str = "apiVersion: v1\nentries:\n  alpine:\n  - apiVersion: v2\n    appVersion: 3.20.0\n    created: \"2026-01-01T00:00:00Z\"\n    description: |\n      multi\n\n      line\n    digest: aaaa\n    name: alpine\n    urls:\n    - charts/alpine-0.2.0.tgz\n    version: 0.2.0\n  \"coredns\":\n  # a comment\n  - appVersion: 1.13.1\n    digest: bbbb\n    maintainers:\n    - name: x\n    name: coredns\n    urls:\n    - https://example.com/coredns-1.46.0.tgz\n    version: 1.46.0\n  - digest: cccc\n    urls: [coredns-1.43.2.tgz]\n    version: 1.43.2\n  zeta:\n  - version: 1.0.0\n    urls: [z.tgz]\ngenerated: \"2026-01-01T00:00:00Z\"\n";

    #[test]
    fn reads_one_charts_versions_from_its_block() {
        let block = chart_block(INDEX, "coredns");
        let Block::Found { text, line } = block else {
            panic!("{block:?}")
        };
        assert_eq!(line, 16);
        assert!(
            text.starts_with("  \"coredns\":")
                && text.ends_with("[coredns-1.43.2.tgz]\n    version: 1.43.2\n")
        );
        let v = versions(INDEX.as_bytes(), "coredns").unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].version, "1.46.0");
        assert_eq!(v[0].app_version.as_deref(), Some("1.13.1"));
        assert_eq!(v[0].urls, ["https://example.com/coredns-1.46.0.tgz"]);
        assert_eq!((v[0].digest.as_deref(), v[0].line), (Some("bbbb"), 18));
        assert_eq!((v[1].version.as_str(), v[1].line), ("1.43.2", 26));
        assert_eq!(
            versions(INDEX.as_bytes(), "zeta").unwrap()[0].urls,
            ["z.tgz"]
        );
        assert_eq!(
            versions(INDEX.as_bytes(), "alpine").unwrap()[0].version,
            "0.2.0"
        );
    }

    #[test]
    fn flow_style_and_json_are_read_whole() {
        let json = r#"{"apiVersion":"v1","entries":{"a":[{"version":"1.0.0","urls":["a.tgz"],"digest":"dd"}]}}"#;
        assert_eq!(chart_block(json, "a"), Block::Unknown);
        let v = versions(json.as_bytes(), "a").unwrap();
        assert_eq!(
            (v[0].version.as_str(), v[0].digest.as_deref()),
            ("1.0.0", Some("dd"))
        );
        assert_eq!(
            versions(json.as_bytes(), "b").unwrap_err(),
            IndexError::NoChart("b".into())
        );
    }

    #[test]
    fn a_missing_chart_and_a_version_listed_twice_are_refused() {
        assert_eq!(
            versions(INDEX.as_bytes(), "nginx").unwrap_err(),
            IndexError::NoChart("nginx".into())
        );
        let twice = "entries:\n  a:\n  - version: 1.0.0\n  - version: 1.0.0\n";
        let err = versions(twice.as_bytes(), "a").unwrap_err().to_string();
        assert!(
            err.contains("lists version 1.0.0 twice (lines 3 and 4)"),
            "{err}"
        );
    }

    #[test]
    fn what_is_not_an_index_says_so() {
        let html = b"<html><body>Not Found</body></html>";
        let err = versions(html, "a").unwrap_err().to_string();
        assert!(err.contains("not a chart repository index"), "{err}");
        let err = versions(b"\"entries\n", "a").unwrap_err().to_string();
        assert!(err.contains("not YAML"), "{err}");
        let err = versions(b"\xff\xfe", "a").unwrap_err().to_string();
        assert!(err.contains("not UTF-8"), "{err}");
        let err = versions(b"entries:\n  a:\n  - version: [1]\n", "a")
            .unwrap_err()
            .to_string();
        assert!(err.contains("`version` at line 3"), "{err}");
    }

    /// Aliases are skipped, never expanded: a "billion laughs" costs nothing.
    #[test]
    fn aliases_outside_the_fields_read_are_skipped() {
        let text = "x: &a [1, 1]\ny: &b [*a, *a, *a]\nentries: {a: [{version: 1.0.0, urls: [a.tgz], annotations: *b}]}\n";
        assert_eq!(versions(text.as_bytes(), "a").unwrap()[0].version, "1.0.0");
    }
}
