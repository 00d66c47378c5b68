//! A YAML tree that remembers where every node came from.
//!
//! yaml-rust2's own `Yaml` value drops positions and rejects duplicate keys.
//! Both matter here: findings name `file:line`, and a Helm template with every
//! conditional branch included can legitimately hold the same key twice (one
//! per branch). So this module builds its own tree from the parser's marked
//! events:
//!
//! 1. every node keeps the 1-based line and 0-based character column of its
//!    first character (for a block mapping: its first key);
//! 2. mappings are ordered lists of pairs, duplicates kept;
//! 3. aliases are resolved by copying the anchored node, and the copies of
//!    one stream together are bounded ([`MAX_ALIAS_NODES`],
//!    [`MAX_ALIAS_BYTES`]): a "billion laughs" file, whose aliases of
//!    aliases expand a few lines into billions of nodes, is refused at the
//!    alias that crosses the bound instead of exhausting memory (issue 21).
//!    serde_yaml and saphyr bound expansion the same way, by counting what
//!    the aliases replay.

use std::collections::HashMap;

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

use super::Error;

/// The most nodes the aliases of one YAML stream may copy, all together.
pub const MAX_ALIAS_NODES: u64 = 100_000;
/// The most scalar text, in bytes, the aliases of one YAML stream may copy.
pub const MAX_ALIAS_BYTES: u64 = 16 << 20;

/// One YAML node with its position in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// The node's content.
    pub value: Value,
    /// 1-based line of the node's first character.
    pub line: usize,
    /// 0-based column of the node's first character, counted in characters
    /// (not bytes): a scalar's text starts here, after any quote.
    pub col: usize,
}

/// The content of a [`Node`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A scalar as written (no type resolution: `true`, `1` and `~` stay text).
    Scalar(Scalar),
    /// A mapping in source order; a key may appear more than once.
    Map(Vec<(Node, Node)>),
    /// A sequence in source order.
    Seq(Vec<Node>),
}

/// A scalar's text and the style it was written in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scalar {
    /// The scalar's value after YAML unescaping and folding.
    pub text: String,
    /// How the scalar was written; decides whether its text can be found
    /// verbatim on its source line.
    pub style: ScalarStyle,
}

/// How a scalar was written in the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarStyle {
    /// No quotes.
    Plain,
    /// `'…'`
    SingleQuoted,
    /// `"…"`
    DoubleQuoted,
    /// `|` block.
    Literal,
    /// `>` block.
    Folded,
}

/// A node reached by a key path, with the line that names it.
#[derive(Debug, Clone, Copy)]
pub struct Found<'a> {
    /// The line of the last key of the path (for an empty path, the node's
    /// own line): the line a finding about this field should name.
    pub line: usize,
    /// The value under that key.
    pub node: &'a Node,
}

impl Node {
    /// The scalar text, or `None` for a mapping or a sequence.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar(s) => Some(&s.text),
            _ => None,
        }
    }

    /// True for an empty plain scalar or YAML's null spellings (`~`, `null`).
    ///
    /// A key written with nothing after its colon parses to this, which is
    /// how a removed value usually shows up.
    pub fn is_null(&self) -> bool {
        match &self.value {
            Value::Scalar(s) => {
                s.style == ScalarStyle::Plain
                    && matches!(s.text.as_str(), "" | "~" | "null" | "Null" | "NULL")
            }
            _ => false,
        }
    }

    /// The pairs of a mapping; empty for anything else.
    pub fn entries(&self) -> &[(Node, Node)] {
        match &self.value {
            Value::Map(pairs) => pairs,
            _ => &[],
        }
    }

    /// The items of a sequence; empty for anything else.
    pub fn items(&self) -> &[Node] {
        match &self.value {
            Value::Seq(items) => items,
            _ => &[],
        }
    }

    /// The first value under `key` in this mapping.
    ///
    /// Use [`Node::lookup`] where duplicate keys (several template branches)
    /// must all be seen.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entries()
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }

    /// Every node reached by following `path` from here, one per combination
    /// of duplicate keys along the way; empty when the path does not exist.
    ///
    /// An empty path yields this node itself.
    pub fn lookup<S: AsRef<str>>(&self, path: &[S]) -> Vec<Found<'_>> {
        let mut current = vec![Found {
            line: self.line,
            node: self,
        }];
        for key in path {
            let key = key.as_ref();
            current = current
                .iter()
                .flat_map(|found| found.node.entries())
                .filter(|(k, _)| k.as_str() == Some(key))
                .map(|(k, v)| Found {
                    line: k.line,
                    node: v,
                })
                .collect();
        }
        current
    }
}

/// Parse every document of a YAML stream into position-keeping trees.
///
/// An empty document (only comments, or `---` followed by `---`) becomes an
/// empty plain scalar so document indices still count every `---`.
pub fn parse_documents(text: &str) -> Result<Vec<Node>, Error> {
    let mut builder = Builder::default();
    let mut parser = Parser::new_from_str(text);
    parser.load(&mut builder, true).map_err(|e| Error::Yaml {
        line: e.marker().line(),
        col: e.marker().col() + 1,
        message: e.info().to_owned(),
    })?;
    match builder.error {
        Some(err) => Err(err),
        None => Ok(builder.docs),
    }
}

/// A container being filled while its children arrive.
enum Frame {
    Seq(Node, usize),
    Map(Node, usize, Option<Node>),
}

/// Receives the parser's marked events and assembles [`Node`] trees.
#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    docs: Vec<Node>,
    anchors: HashMap<usize, Node>,
    error: Option<Error>,
    /// Whether the current document produced a root node yet.
    has_root: bool,
    /// Nodes and scalar bytes the aliases copied so far.
    copied: (u64, u64),
}

/// The nodes of `node`'s tree and the bytes of its scalars' text.
fn weight(node: &Node) -> (u64, u64) {
    match &node.value {
        Value::Scalar(s) => (1, s.text.len() as u64),
        Value::Seq(items) => items.iter().map(weight).fold((1, 0), add),
        Value::Map(pairs) => pairs
            .iter()
            .flat_map(|(k, v)| [weight(k), weight(v)])
            .fold((1, 0), add),
    }
}

fn add(a: (u64, u64), b: (u64, u64)) -> (u64, u64) {
    (a.0.saturating_add(b.0), a.1.saturating_add(b.1))
}

impl Builder {
    fn insert(&mut self, node: Node, anchor: usize) {
        if anchor > 0 {
            self.anchors.insert(anchor, node.clone());
        }
        match self.stack.last_mut() {
            None => {
                self.docs.push(node);
                self.has_root = true;
            }
            Some(Frame::Seq(seq, _)) => {
                if let Value::Seq(items) = &mut seq.value {
                    items.push(node);
                }
            }
            Some(Frame::Map(map, _, pending)) => match pending.take() {
                None => *pending = Some(node),
                Some(key) => {
                    if let Value::Map(pairs) = &mut map.value {
                        pairs.push((key, node));
                    }
                }
            },
        }
    }

    /// A copy of the node anchored as `id`, unless the copies made so far
    /// pass the bound on what aliases may expand to (a billion laughs):
    /// then, or for an unknown anchor, the error at `line`.
    fn alias(&mut self, id: usize, line: usize, col: usize) {
        match self.anchors.get(&id) {
            Some(node) => {
                self.copied = add(self.copied, weight(node));
                if self.copied.0 > MAX_ALIAS_NODES || self.copied.1 > MAX_ALIAS_BYTES {
                    self.error = Some(Error::Yaml {
                        line,
                        col: col + 1,
                        message: format!(
                            "its aliases expand to more than {MAX_ALIAS_NODES} nodes or {} MiB of text, the most revendor reads",
                            MAX_ALIAS_BYTES >> 20
                        ),
                    });
                } else {
                    self.insert(node.clone(), 0);
                }
            }
            None => {
                self.error.get_or_insert(Error::Yaml {
                    line,
                    col: col + 1,
                    message: "alias to an unknown anchor".to_owned(),
                });
            }
        }
    }
}

fn position(mark: Marker) -> (usize, usize) {
    (mark.line(), mark.col())
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        if self.error.is_some() {
            // The stream is refused already; nothing built from here on is read.
            return;
        }
        let (line, col) = position(mark);
        match ev {
            Event::DocumentStart => self.has_root = false,
            Event::DocumentEnd => {
                if !self.has_root {
                    self.docs.push(Node {
                        value: Value::Scalar(Scalar {
                            text: String::new(),
                            style: ScalarStyle::Plain,
                        }),
                        line,
                        col,
                    });
                }
            }
            Event::Scalar(text, style, anchor, _) => {
                let style = match style {
                    TScalarStyle::Plain => ScalarStyle::Plain,
                    TScalarStyle::SingleQuoted => ScalarStyle::SingleQuoted,
                    TScalarStyle::DoubleQuoted => ScalarStyle::DoubleQuoted,
                    TScalarStyle::Literal => ScalarStyle::Literal,
                    TScalarStyle::Folded => ScalarStyle::Folded,
                };
                let node = Node {
                    value: Value::Scalar(Scalar { text, style }),
                    line,
                    col,
                };
                self.insert(node, anchor);
            }
            Event::SequenceStart(anchor, _) => {
                let node = Node {
                    value: Value::Seq(Vec::new()),
                    line,
                    col,
                };
                self.stack.push(Frame::Seq(node, anchor));
            }
            Event::MappingStart(anchor, _) => {
                let node = Node {
                    value: Value::Map(Vec::new()),
                    line,
                    col,
                };
                self.stack.push(Frame::Map(node, anchor, None));
            }
            Event::SequenceEnd | Event::MappingEnd => match self.stack.pop() {
                Some(Frame::Seq(node, anchor)) | Some(Frame::Map(node, anchor, _)) => {
                    self.insert(node, anchor)
                }
                None => {}
            },
            Event::Alias(id) => self.alias(id, line, col),
            Event::Nothing | Event::StreamStart | Event::StreamEnd => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Node {
        let mut docs = parse_documents(text).unwrap();
        assert_eq!(docs.len(), 1);
        docs.remove(0)
    }

    #[test]
    fn positions_are_one_based_lines_and_zero_based_columns() {
        let root = one("a:\n  b: 'x'\n  c: |\n    text\n");
        let b = root.lookup(&["a", "b"]);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].line, 2);
        assert_eq!((b[0].node.line, b[0].node.col), (2, 5));
        assert_eq!(b[0].node.as_str(), Some("x"));
        let c = root.lookup(&["a", "c"]);
        assert_eq!(c[0].line, 3);
        assert_eq!(c[0].node.as_str(), Some("text\n"));
    }

    #[test]
    fn duplicate_keys_are_all_reachable() {
        let root = one("k: 1\nk: 2\n");
        let found: Vec<_> = root
            .lookup(&["k"])
            .iter()
            .map(|f| (f.line, f.node.as_str().unwrap().to_owned()))
            .collect();
        assert_eq!(found, [(1, "1".to_owned()), (2, "2".to_owned())]);
        assert_eq!(root.get("k").and_then(Node::as_str), Some("1"));
    }

    #[test]
    fn empty_value_is_null_but_quoted_empty_is_not() {
        let root = one("a:\nb: ''\nc: ~\n");
        assert!(root.get("a").unwrap().is_null());
        assert!(!root.get("b").unwrap().is_null());
        assert!(root.get("c").unwrap().is_null());
    }

    #[test]
    fn aliases_copy_the_anchored_node() {
        let root = one("a: &x {k: v}\nb: *x\n");
        assert_eq!(root.lookup(&["b", "k"])[0].node.as_str(), Some("v"));
    }

    #[test]
    fn documents_are_split_and_empty_ones_counted() {
        let docs = parse_documents("# only a comment\n---\na: 1\n---\n---\nb: 2\n").unwrap();
        assert_eq!(docs.len(), 3);
        assert_eq!(docs[0].line, 3);
        assert!(docs[1].is_null());
        assert_eq!(docs[2].get("b").and_then(Node::as_str), Some("2"));
    }

    #[test]
    fn syntax_errors_carry_the_line() {
        let err = parse_documents("a: 1\nb: [unclosed\n").unwrap_err();
        assert!(
            matches!(err, Error::Yaml { line, .. } if line >= 2),
            "{err:?}"
        );
    }

    /// A "billion laughs": nine levels of nine aliases each.
    fn alias_bomb() -> String {
        let mut text = String::from("a0: &a0 lol\n");
        for level in 1..10 {
            let prev = format!("*a{}", level - 1);
            let items = [prev.as_str(); 9].join(", ");
            text.push_str(&format!("a{level}: &a{level} [{items}]\n"));
        }
        text
    }

    #[test]
    fn aliases_that_expand_past_the_bound_are_refused_at_their_line() {
        let err = parse_documents(&alias_bomb()).unwrap_err();
        assert!(
            matches!(&err, Error::Yaml { line: 7, message, .. } if message.contains("aliases expand")),
            "{err:?}"
        );
    }

    #[test]
    fn aliases_within_the_bound_are_copied() {
        let docs = parse_documents("base: &b {x: 1, y: [2, 3]}\none: *b\ntwo: *b\n").unwrap();
        assert_eq!(docs[0].get("two"), docs[0].get("base"));
    }
}
