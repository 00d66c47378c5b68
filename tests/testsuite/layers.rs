//! Which modules may depend on which: the one place this rule lives.
//!
//! The engines at the bottom (patch, manifest, dockerfile, image, go) work on
//! bytes in memory and never reach the network, the disk writer or the
//! command line; `cli` is the only place that renders errors; `check` runs
//! below `ops` and reaches GitHub and registries only through `github`,
//! `upstream` and `registry`. A new dependency between modules is a design decision: change
//! [`ALLOWED`] here, in the same commit, on purpose.
//!
//! 1. Every module in `src/` (a directory or a file beside `lib.rs`) must
//!    have a row in [`ALLOWED`], and the rows must form no cycle.
//! 2. Each file of a module is scanned for the crate modules it names:
//!    `crate::x` paths in code, `use crate::{a, b::{c}, d as e}` groups, and
//!    `super::` chains that climb to the crate root. Comments and string
//!    literals are skipped, so a doc link is not a dependency.
//! 3. A name missing from the module's row is a violation; [`FORBIDDEN`]
//!    lists edges that must not be added to the table at all.
//! 4. Inside a folder, the files and sub-folders that are its modules
//!    (`ops/render.rs`, `ops/update.rs` with `ops/update/`) form no import
//!    circle either: each `crate::`, `super::` and `self::` path a file
//!    names is resolved to the module it reaches, and a path from one child
//!    of a folder into another is an edge between those two children.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// module → the crate modules it may name, bottom of the graph first.
const ALLOWED: &[(&str, &[&str])] = &[
    ("patch", &[]),
    ("manifest", &[]),
    // dockerfile → image, go: a FROM is an image::Reference, a pinned checksum
    // an image::Digest, a golang tag a go::Version; all three are bottom
    // engines on bytes, so the rule holds.
    ("dockerfile", &["go", "image"]),
    ("go", &[]),
    ("image", &[]),
    ("pr", &[]),
    ("env", &[]),
    ("console", &[]),
    // config → go: vendor.toml's `[image] go` is validated as a go::Version.
    // config → net: a `helm` repository over plain http must name this
    // machine, by the one loopback test every client uses (net is a leaf).
    ("journal", &[]),
    ("config", &["go", "journal", "net"]),
    ("error", &["builder", "config", "net", "patch", "registry"]),
    ("net", &[]),
    // helm → env, error, net: REVENDOR_HELM and PATH, an unreadable chart
    // file, and the cache's atomic writes.
    ("helm", &["env", "error", "net"]),
    ("paths", &["error", "journal"]),
    ("marker", &["dockerfile", "image", "manifest"]),
    ("registry", &["image", "net"]),
    // github → config, env, error, net: the one GitHub client, for
    // upstream, check and `pr --create`; config only for what a full commit
    // sha looks like (config::is_commit).
    ("github", &["config", "env", "error", "net"]),
    ("builder", &["image", "net"]),
    // upstream → manifest: a chart's Chart.yaml is read by the YAML reader
    // that keeps lines (manifest is a leaf). upstream → registry: an OCI
    // chart is read through the one registry client (auth, mirrors).
    (
        "upstream",
        &[
            "config", "env", "error", "github", "image", "manifest", "net", "paths", "registry",
        ],
    ),
    (
        "render",
        &[
            "config",
            "dockerfile",
            "error",
            "image",
            "manifest",
            "patch",
            "paths",
        ],
    ),
    (
        "workspace",
        &[
            "console", "env", "error", "net", "paths", "registry", "upstream",
        ],
    ),
    (
        "check",
        &[
            // builder: its content hash only, taken again for `image-stale`.
            "builder",
            "config",
            "dockerfile",
            "error",
            // github: raw files and release assets of other repositories
            // (a marker resolver, a CNI release sidecar).
            "github",
            "go",
            "helm",
            "image",
            "manifest",
            "marker",
            // net: its HttpError only, to tell a remote that did not answer
            // (`unreachable`) from one that did; requests go through upstream
            // and registry.
            "net",
            "patch",
            "paths",
            "registry",
            "render",
            "upstream",
            "workspace",
        ],
    ),
    // report → pr: a table cell's code span is the one the PR body's
    // names and versions use (pr::code; pr is a leaf).
    ("report", &["check", "console", "error", "pr"]),
    // git → env, net: a commit's identity (env::GitIdentity), a push's
    // token scrubbed from what git prints (net::scrub).
    ("git", &["env", "error", "net", "paths"]),
    // ops → env: `pr --create` commits as GIT_AUTHOR_* / GIT_COMMITTER_*
    // say (env::GitIdentity), read once in env like every variable.
    (
        "ops",
        &[
            "builder",
            "check",
            "config",
            "dockerfile",
            "env",
            "error",
            "git",
            "github",
            "go",
            "image",
            "patch",
            "paths",
            "pr",
            "registry",
            "render",
            "upstream",
            "workspace",
        ],
    ),
    (
        "cli",
        &[
            "config",
            "console",
            "env",
            "error",
            "image",
            "net",
            "ops",
            "registry",
            "report",
            "workspace",
        ],
    ),
];

/// Edges that stay out of [`ALLOWED`] whatever else changes, and why.
const FORBIDDEN: &[(&str, &str, &str)] = &[
    (
        "check",
        "ops",
        "ops::check runs the checks; a check reaching into ops makes a cycle",
    ),
    (
        "render",
        "upstream",
        "render composes outputs offline from bytes it is handed; fetching is the caller's",
    ),
    (
        "patch",
        "net",
        "patch works in memory on bytes it is handed",
    ),
];

/// What the scanner sees of Rust source: names, `::`, and single characters.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    PathSep,
    Punct(char),
}

/// The tokens of `src`, without comments, string and character literals,
/// lifetimes and numbers.
fn tokens(src: &str) -> Vec<Token> {
    let chars: Vec<char> = src.chars().collect();
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if let Some(end) = raw_string_end(&chars, i) {
            i = end;
        } else if c == '"' || (c == 'b' && at(i + 1) == '"') {
            i += if c == 'b' { 2 } else { 1 };
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c == '\'' {
            if at(i + 1) == '\\' {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                // A lifetime: drop the quote, then its name as an identifier.
                i += 1;
                while at(i).is_alphanumeric() || at(i) == '_' {
                    i += 1;
                }
            }
        } else if c.is_ascii_digit() {
            while at(i).is_alphanumeric() || at(i) == '_' {
                i += 1;
            }
        } else if c.is_alphabetic() || c == '_' {
            if c == 'r' && at(i + 1) == '#' {
                i += 2;
            }
            let start = i;
            while at(i).is_alphanumeric() || at(i) == '_' {
                i += 1;
            }
            out.push(Token::Ident(chars[start..i].iter().collect()));
        } else if c == ':' && at(i + 1) == ':' {
            out.push(Token::PathSep);
            i += 2;
        } else {
            out.push(Token::Punct(c));
            i += 1;
        }
    }
    out
}

/// Where a raw string (`r"…"`, `r#"…"#`, `br"…"`) starting at `i` ends.
fn raw_string_end(chars: &[char], i: usize) -> Option<usize> {
    let mut j = i;
    if chars.get(j) == Some(&'b') {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|&&c| c == '#').count();
    j += hashes;
    if chars.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < chars.len() {
        if chars[j] == '"' && chars[j + 1..].iter().take_while(|&&c| c == '#').count() >= hashes {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(j)
}

/// The crate modules a file names. `depth` is how many `super::` reach the
/// crate root from the file's top (1 for `src/x.rs` and `src/x/mod.rs`, 2
/// for `src/x/y.rs`); inline `mod name { … }` blocks add one each.
fn crate_modules(src: &str, depth: usize) -> BTreeSet<String> {
    let toks = tokens(src);
    let ident = |i: usize| match toks.get(i) {
        Some(Token::Ident(s)) => Some(s.as_str()),
        _ => None,
    };
    let mut out = BTreeSet::new();
    let mut braces = 0usize;
    let mut inline_mods: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Token::Punct('{') => braces += 1,
            Token::Punct('}') => {
                braces = braces.saturating_sub(1);
                if inline_mods.last() == Some(&braces) {
                    inline_mods.pop();
                }
            }
            Token::Ident(kw)
                if kw == "mod"
                    && ident(i + 1).is_some()
                    && toks.get(i + 2) == Some(&Token::Punct('{')) =>
            {
                inline_mods.push(braces);
            }
            _ => {}
        }
        let starts_path = i == 0 || toks[i - 1] != Token::PathSep;
        let root = if ident(i) == Some("crate") && toks.get(i + 1) == Some(&Token::PathSep) {
            Some(i + 2)
        } else if ident(i) == Some("super") && starts_path {
            let mut j = i;
            let mut climbed = 0;
            while ident(j) == Some("super") && toks.get(j + 1) == Some(&Token::PathSep) {
                climbed += 1;
                j += 2;
            }
            (climbed == depth + inline_mods.len()).then_some(j)
        } else {
            None
        };
        if let Some(start) = root {
            first_segments(&toks, start, &mut out);
        }
        i += 1;
    }
    out
}

/// The first segment of each path in the use tree at `start`, just after
/// `crate::`: one name, `*`, or each member of a `{…}` group (`self` is the
/// crate itself and names no module).
fn first_segments(toks: &[Token], start: usize, out: &mut BTreeSet<String>) {
    match toks.get(start) {
        Some(Token::Ident(name)) => {
            out.insert(name.clone());
        }
        Some(Token::Punct('*')) => {
            out.insert("*".to_owned());
        }
        Some(Token::Punct('{')) => {
            let mut depth = 0;
            let mut expect = true;
            for tok in &toks[start..] {
                match tok {
                    Token::Punct('{') => {
                        depth += 1;
                        expect = depth == 1;
                    }
                    Token::Punct('}') => {
                        depth -= 1;
                        if depth == 0 {
                            return;
                        }
                    }
                    Token::Punct(',') if depth == 1 => expect = true,
                    Token::Ident(name) if expect => {
                        if name != "self" {
                            out.insert(name.clone());
                        }
                        expect = false;
                    }
                    Token::Punct('*') if expect => {
                        out.insert("*".to_owned());
                        expect = false;
                    }
                    _ => expect = false,
                }
            }
        }
        _ => {}
    }
}

/// Every `.rs` file under `path` with its `super::` depth to the crate root.
fn files(src: &Path, path: &Path, out: &mut Vec<(PathBuf, usize)>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            files(src, &entry.unwrap().path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        let parts = path.strip_prefix(src).unwrap().components().count();
        let depth = if path.file_name().is_some_and(|n| n == "mod.rs") {
            parts - 1
        } else {
            parts
        };
        out.push((path.to_owned(), depth));
    }
}

/// The crate's top-level modules: directories and files in `src/` other
/// than the crate root and the binary.
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let is_rs = path.extension().is_some_and(|e| e == "rs");
        if path.is_dir() || (is_rs && name != "lib" && name != "main") {
            out.insert(name, path);
        }
    }
    out
}

/// The crate modules named anywhere in a module, itself excluded.
fn uses_of(src: &Path, module: &str, path: &Path) -> BTreeSet<String> {
    let mut found = Vec::new();
    files(src, path, &mut found);
    let mut uses = BTreeSet::new();
    for (file, depth) in found {
        uses.extend(crate_modules(
            &std::fs::read_to_string(file).unwrap(),
            depth,
        ));
    }
    uses.remove(module);
    uses
}

/// The names of `uses` that `module`'s row does not allow.
fn violations(module: &str, uses: &BTreeSet<String>) -> Vec<String> {
    let allowed = row(module).unwrap_or(&[]);
    uses.iter()
        .filter(|u| !allowed.contains(&u.as_str()))
        .cloned()
        .collect()
}

/// A table of rows: module → the modules it may name.
type Table<'a> = &'a [(&'a str, &'a [&'a str])];

fn row(module: &str) -> Option<&'static [&'static str]> {
    row_of(ALLOWED, module)
}

fn row_of<'a>(table: Table<'a>, module: &str) -> Option<&'a [&'a str]> {
    table.iter().find(|(m, _)| *m == module).map(|(_, a)| *a)
}

/// A cycle among the rows of `table`, as the path that closes it.
fn cycle<'a>(table: Table<'a>) -> Option<Vec<&'a str>> {
    fn visit<'a>(
        table: Table<'a>,
        m: &'a str,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<&'a str>> {
        if let Some(at) = path.iter().position(|p| *p == m) {
            let mut cycle = path[at..].to_vec();
            cycle.push(m);
            return Some(cycle);
        }
        if !done.insert(m) {
            return None;
        }
        path.push(m);
        for next in row_of(table, m).unwrap_or(&[]) {
            if let Some(c) = visit(table, next, path, done) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    table
        .iter()
        .find_map(|(m, _)| visit(table, m, &mut Vec::new(), &mut done))
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn every_module_has_a_row_and_every_row_a_module() {
    let modules = modules(&src());
    let missing: Vec<&String> = modules.keys().filter(|m| row(m).is_none()).collect();
    assert!(
        missing.is_empty(),
        "modules with no row in ALLOWED: {missing:?}"
    );
    let stale: Vec<&str> = ALLOWED
        .iter()
        .map(|(m, _)| *m)
        .filter(|m| !modules.contains_key(*m))
        .collect();
    assert!(stale.is_empty(), "rows naming no module in src/: {stale:?}");
    for (module, allowed) in ALLOWED {
        for a in *allowed {
            assert!(
                modules.contains_key(*a),
                "`{module}` may use `{a}`, which is not a module"
            );
        }
    }
}

#[test]
fn the_table_has_no_cycle() {
    assert_eq!(cycle(ALLOWED), None, "a cycle among the modules");
}

#[test]
fn forbidden_edges_stay_out_of_the_table() {
    for (from, to, why) in FORBIDDEN {
        assert!(
            !row(from).unwrap_or(&[]).contains(to),
            "`{from}` must not depend on `{to}`: {why}"
        );
    }
}

#[test]
fn modules_depend_only_on_what_the_table_allows() {
    let src = src();
    let mut all = BTreeMap::new();
    for (module, path) in modules(&src) {
        let extra = violations(&module, &uses_of(&src, &module, &path));
        if !extra.is_empty() {
            all.insert(module, extra);
        }
    }
    assert!(all.is_empty(), "modules reaching past their layer: {all:?}");
}

/// A module's place in the crate: `["ops", "update", "edits"]`.
type ModPath = Vec<String>;

/// The module path of a file under `src` (`ops/update.rs` and
/// `ops/update/mod.rs` are both `["ops", "update"]`).
fn module_of(src: &Path, file: &Path) -> ModPath {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut path: ModPath = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if path.last().is_some_and(|l| l == "mod") {
        path.pop();
    }
    path
}

/// Every module path `src` names, resolved from the file's own module
/// `here`: `crate::a::b`, `super::…` and `self::…` paths, each member of a
/// `{…}` group expanded. Inline `mod name { … }` blocks are one level
/// deeper.
fn module_paths(src: &str, here: &[String]) -> Vec<ModPath> {
    let toks = tokens(src);
    let ident = |i: usize| match toks.get(i) {
        Some(Token::Ident(s)) => Some(s.as_str()),
        _ => None,
    };
    let mut out = Vec::new();
    let mut braces = 0usize;
    let mut inline: Vec<(usize, String)> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Token::Punct('{') => braces += 1,
            Token::Punct('}') => {
                braces = braces.saturating_sub(1);
                if inline.last().is_some_and(|(b, _)| *b == braces) {
                    inline.pop();
                }
            }
            Token::Ident(kw) if kw == "mod" && toks.get(i + 2) == Some(&Token::Punct('{')) => {
                if let Some(name) = ident(i + 1) {
                    inline.push((braces, name.to_owned()));
                }
            }
            _ => {}
        }
        let starts_path = i == 0 || toks[i - 1] != Token::PathSep;
        let mut module: ModPath = here.to_vec();
        module.extend(inline.iter().map(|(_, n)| n.clone()));
        let base = match ident(i) {
            Some("crate") if toks.get(i + 1) == Some(&Token::PathSep) => Some((Vec::new(), i + 2)),
            Some("self") if starts_path && toks.get(i + 1) == Some(&Token::PathSep) => {
                Some((module, i + 2))
            }
            Some("super") if starts_path && toks.get(i + 1) == Some(&Token::PathSep) => {
                let mut j = i;
                while ident(j) == Some("super") && toks.get(j + 1) == Some(&Token::PathSep) {
                    module.pop();
                    j += 2;
                }
                Some((module, j))
            }
            _ => None,
        };
        // A unit test's imports are no dependency of the module.
        let in_tests = inline.iter().any(|(_, name)| name == "tests");
        if let Some((prefix, start)) = base.filter(|_| !in_tests) {
            use_tree(&toks, start, prefix, &mut out);
        }
        i += 1;
    }
    out
}

/// The paths of the use tree (or plain path) at `start`, each after
/// `prefix`; returns the index just past it.
fn use_tree(toks: &[Token], start: usize, prefix: ModPath, out: &mut Vec<ModPath>) -> usize {
    let mut path = prefix;
    let mut i = start;
    loop {
        match toks.get(i) {
            Some(Token::Ident(name)) => {
                if name != "self" {
                    path.push(name.clone());
                }
                i += 1;
                if toks.get(i) == Some(&Token::PathSep) {
                    i += 1;
                    continue;
                }
                out.push(path);
                return i;
            }
            Some(Token::Punct('{')) => {
                i += 1;
                while let Some(tok) = toks.get(i) {
                    match tok {
                        Token::Punct('}') => return i + 1,
                        Token::Punct(',') => i += 1,
                        Token::Ident(kw) if kw == "as" => i += 2,
                        _ => {
                            let next = use_tree(toks, i, path.clone(), out);
                            i = if next > i { next } else { i + 1 };
                        }
                    }
                }
                return i;
            }
            _ => {
                out.push(path);
                return i;
            }
        }
    }
}

/// Each folder's child modules (the crate root's folder is `[]`).
type Children = BTreeMap<ModPath, BTreeSet<String>>;

/// The children of every folder under `src` (the crate root included) and
/// the edges between them: folder → child → the children it names.
type Edges = BTreeMap<ModPath, BTreeMap<String, BTreeSet<String>>>;

/// The import edges between the children of each folder, from `files`
/// (each file's module path and source) and `children` (each folder's
/// child modules).
fn folder_edges(
    files: &[(ModPath, String)],
    children: &BTreeMap<ModPath, BTreeSet<String>>,
) -> Edges {
    let mut edges = Edges::new();
    for (here, text) in files {
        for target in module_paths(text, here) {
            let common = here.iter().zip(&target).take_while(|(a, b)| a == b).count();
            let (Some(from), Some(to)) = (here.get(common), target.get(common)) else {
                continue;
            };
            let folder = here[..common].to_vec();
            if children.get(&folder).is_some_and(|c| c.contains(to)) {
                edges
                    .entry(folder)
                    .or_default()
                    .entry(from.clone())
                    .or_default()
                    .insert(to.clone());
            }
        }
    }
    edges
}

/// Every circle of one folder's children, each as the path that closes it
/// and starting from its least name, once.
fn folder_circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let mut removed: BTreeSet<(String, String)> = BTreeSet::new();
    let mut found = Vec::new();
    // One circle at a time: note it, cut its first edge, look again.
    loop {
        let cut: Vec<(&str, Vec<&str>)> = graph
            .iter()
            .map(|(m, to)| {
                let kept = to
                    .iter()
                    .filter(|t| !removed.contains(&(m.clone(), (*t).clone())));
                (m.as_str(), kept.map(String::as_str).collect())
            })
            .collect();
        let rows: Vec<(&str, &[&str])> = cut.iter().map(|(m, to)| (*m, to.as_slice())).collect();
        let Some(c) = cycle(&rows) else { break };
        let c: Vec<String> = c[..c.len() - 1].iter().map(|s| (*s).to_owned()).collect();
        removed.insert((c[0].clone(), c[1 % c.len()].clone()));
        let at = (0..c.len()).min_by_key(|&k| &c[k]).unwrap_or(0);
        let mut turned: Vec<String> = c[at..].iter().chain(&c[..at]).cloned().collect();
        turned.push(turned[0].clone());
        found.push(turned);
    }
    found
}

/// Every module file of the crate with its module path, and each folder's
/// child modules.
fn crate_tree(src: &Path) -> (Vec<(ModPath, String)>, Children) {
    let mut found = Vec::new();
    files(src, src, &mut found);
    let mut texts = Vec::new();
    let mut children = Children::new();
    for (file, _) in found {
        let module = module_of(src, &file);
        if let Some((last, folder)) = module.split_last()
            && !(folder.is_empty() && (last == "lib" || last == "main"))
        {
            children
                .entry(folder.to_vec())
                .or_default()
                .insert(last.clone());
        }
        texts.push((module, std::fs::read_to_string(&file).unwrap()));
    }
    (texts, children)
}

/// Import circles inside a folder that are known and owed to an issue:
/// `(folder, circle)`. Each must still exist (removing one means removing
/// its row here), and no other may appear.
const KNOWN_FOLDER_CIRCLES: &[(&str, &str, &str)] = &[];

#[test]
fn no_import_circle_inside_a_folder() {
    let (files, children) = crate_tree(&src());
    let mut circles = BTreeSet::new();
    for (folder, graph) in folder_edges(&files, &children) {
        for c in folder_circles(&graph) {
            circles.insert((folder.join("/"), c.join(" -> ")));
        }
    }
    let known: BTreeSet<(String, String)> = KNOWN_FOLDER_CIRCLES
        .iter()
        .map(|(f, c, _)| ((*f).to_owned(), (*c).to_owned()))
        .collect();
    let new: Vec<_> = circles.difference(&known).collect();
    assert!(new.is_empty(), "import circles inside a folder: {new:?}");
    let gone: Vec<_> = known.difference(&circles).collect();
    assert!(
        gone.is_empty(),
        "known circles that no longer exist (remove their rows): {gone:?}"
    );
}

/// The scanner sees a circle between two files of one folder, through
/// `super::`, `crate::` and grouped paths, and not a file naming its parent
/// or a sibling's item that is no module.
#[test]
fn the_folder_scanner_catches_a_circle_between_two_files() {
    let m = |p: &str| p.split('/').map(str::to_owned).collect::<ModPath>();
    let children: Children = [
        (Vec::new(), ["config"].map(str::to_owned).into()),
        (
            m("config"),
            ["named", "validate", "raw"].map(str::to_owned).into(),
        ),
    ]
    .into();
    let circle = [
        (
            m("config/named"),
            "use super::{raw::Raw, validate::check};".to_owned(),
        ),
        (
            m("config/validate"),
            "fn f() { crate::config::named::resolve(); }".to_owned(),
        ),
        (m("config/raw"), "use super::Config;".to_owned()),
    ];
    let edges = folder_edges(&circle, &children);
    assert_eq!(
        folder_circles(&edges[&m("config")]),
        [["named", "validate", "named"].map(str::to_owned).to_vec()]
    );
    let broken = [
        (
            m("config/named"),
            "use super::{raw::Raw, validate::check};".to_owned(),
        ),
        (
            m("config/validate"),
            "use super::raw::Raw; use super::Config;".to_owned(),
        ),
    ];
    assert!(folder_circles(&folder_edges(&broken, &children)[&m("config")]).is_empty());
}

fn names(src: &str, depth: usize) -> Vec<String> {
    crate_modules(src, depth).into_iter().collect()
}

#[test]
fn scanner_reads_grouped_and_nested_imports() {
    assert_eq!(names("use crate::{marker, paths};", 1), ["marker", "paths"]);
    assert_eq!(
        names(
            "use crate::{\n    self,\n    a::{b, c::{d}},\n    e as f,\n    g::*,\n};",
            1
        ),
        ["a", "e", "g"]
    );
    assert_eq!(names("use crate::*;", 1), ["*"]);
    assert_eq!(names("use crate :: {\n config ,\n};", 1), ["config"]);
}

#[test]
fn scanner_reads_paths_in_code() {
    let src = "fn f() { let c = crate::ops::image_pin::registry_client(ctx)?; }\n\
               impl X for crate::net::Client {}";
    assert_eq!(names(src, 1), ["net", "ops"]);
    assert_eq!(names("pub(crate) fn f() {}", 1), Vec::<String>::new());
}

#[test]
fn scanner_skips_comments_strings_and_char_literals() {
    let src = r##"
        //! See [`crate::ops`].
        /* crate::report /* nested crate::cli */ still a comment */
        const A: &str = "crate::upstream";
        const B: &str = r#"crate::net "quoted""#;
        fn f<'a>(x: &'a str) -> char { let _ = b"crate::x"; '{' }
        use crate::{paths, /* crate::cli */ image};
    "##;
    assert_eq!(names(src, 1), ["image", "paths"]);
}

#[test]
fn scanner_follows_super_to_the_crate_root_only() {
    assert_eq!(names("use super::super::ops::Context;", 2), ["ops"]);
    assert_eq!(names("use super::input::Input;", 2), Vec::<String>::new());
    assert_eq!(names("use super::{ops, paths};", 1), ["ops", "paths"]);
    let tests = "mod tests {\n    use super::*;\n    use super::super::net;\n}\nuse super::env;";
    assert_eq!(names(tests, 1), ["env", "net"]);
}

/// The rule the old scanner could not see: `use crate::{a, b}` read as an
/// empty name, so a grouped import past the layer went through.
#[test]
fn a_grouped_import_past_the_layer_is_caught() {
    let input = std::fs::read_to_string(src().join("check/input.rs")).unwrap();
    let mut uses = crate_modules(&input, 2);
    assert!(violations("check", &uses).is_empty());
    uses.extend(crate_modules("use crate::{marker, ops::Context};", 2));
    assert_eq!(violations("check", &uses), ["ops"]);
    let render = crate_modules("use crate::{paths, upstream::cache::Cache};", 1);
    assert_eq!(violations("render", &render), ["upstream"]);
}

/// The cycle this table was rewritten to break: `check` used `ops::Context`
/// while `ops::check` ran the checks.
#[test]
fn the_cycle_finder_finds_the_old_check_ops_cycle() {
    let old: Table<'_> = &[
        ("check", &["ops", "paths"]),
        ("ops", &["check", "paths"]),
        ("paths", &[]),
    ];
    assert_eq!(cycle(old), Some(vec!["check", "ops", "check"]));
    let layered: Table<'_> = &[
        ("check", &["workspace"]),
        ("ops", &["check", "workspace"]),
        ("workspace", &[]),
    ];
    assert_eq!(cycle(layered), None);
}
