//! docs/reference.md keeps in step with the contract (issue 11): every
//! command, flag, environment variable and check id that DESIGN.md names is
//! in it, and what this revendor does not do yet is marked **planned** there
//! (asked of the binary's own `--help` and of docs/checks.md), while nothing
//! it does is. The README and the docs link only to files in this
//! repository, so every link works on GitHub.
//!
//! DESIGN.md is not in this repository; it is read from beside the
//! real-world data (`$REVENDOR_REALWORLD/../DESIGN.md`). Without it the
//! contract half is skipped with a note, except on CI.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

fn design() -> Option<String> {
    let path = std::env::var_os("REVENDOR_REALWORLD")
        .map(|rw| PathBuf::from(rw).join("../DESIGN.md"))
        .filter(|p| p.is_file());
    match path {
        Some(p) => Some(std::fs::read_to_string(p).unwrap()),
        None => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI=true but $REVENDOR_REALWORLD/../DESIGN.md is not there"
            );
            eprintln!("note: skipping, DESIGN.md is not at $REVENDOR_REALWORLD/../DESIGN.md");
            None
        }
    }
}

/// The text outside fenced code blocks.
fn prose(markdown: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The spans between backquotes.
fn spans(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// The `## ` (or `### `) section whose heading starts with `heading`, up to
/// the next heading of the same or a higher level.
fn section<'a>(markdown: &'a str, heading: &str) -> Option<&'a str> {
    let level = heading.chars().take_while(|c| *c == '#').count();
    let mut offset = 0;
    let mut start = None;
    for line in markdown.split_inclusive('\n') {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        let is_heading = hashes > 0 && line[hashes..].starts_with(' ');
        match start {
            None if line.starts_with(heading) => start = Some(offset),
            Some(from) if is_heading && hashes <= level => return Some(&markdown[from..offset]),
            _ => {}
        }
        offset += line.len();
    }
    start.map(|from| &markdown[from..])
}

/// The paragraph of `text` that starts with `start`.
fn paragraph<'a>(text: &'a str, start: &str) -> &'a str {
    text.split("\n\n")
        .find(|p| p.trim_start().starts_with(start))
        .unwrap_or_else(|| panic!("DESIGN.md has no paragraph starting with {start:?}"))
}

/// `--name` and `-X` flags in a span.
fn flags(span: &str) -> Vec<String> {
    span.split(|c: char| c.is_whitespace() || matches!(c, '[' | ']' | '|' | ','))
        .filter(|w| {
            (w.starts_with("--") && w.len() > 2)
                || (w.len() == 2 && w.starts_with('-') && w.as_bytes()[1].is_ascii_alphabetic())
        })
        .map(str::to_owned)
        .collect()
}

/// A command DESIGN.md names: its path (`image pin-base`) and flags.
#[derive(Debug)]
struct Named {
    path: String,
    flags: Vec<String>,
}

/// Every command span of DESIGN.md: those starting `revendor `, and those
/// starting with one of the top-level commands those name and giving a flag
/// (`update --adopt-edits`; a bare `patch` is GNU patch).
fn commands(prose: &str) -> Vec<Named> {
    let word =
        |w: &&str| w.chars().all(|c| c.is_ascii_lowercase() || c == '-') && !w.starts_with('-');
    let top: BTreeSet<&str> = spans(prose)
        .into_iter()
        .filter_map(|s| s.strip_prefix("revendor "))
        .filter_map(|s| s.split_whitespace().next())
        .collect();
    spans(prose)
        .into_iter()
        .filter_map(|s| {
            let (prefixed, s) = match s.strip_prefix("revendor ") {
                Some(rest) => (true, rest),
                None => (false, s),
            };
            let first = s.split_whitespace().next()?;
            let named = Named {
                path: s
                    .split_whitespace()
                    .take_while(word)
                    .collect::<Vec<_>>()
                    .join(" "),
                flags: flags(s),
            };
            (top.contains(first) && (prefixed || !named.flags.is_empty())).then_some(named)
        })
        .collect()
}

/// Whether `text` names `name` in backquotes: `` `name` `` or `` `name …` ``.
fn mentions(text: &str, name: &str) -> bool {
    spans(text).iter().any(|s| {
        s.strip_prefix(name).is_some_and(|rest| {
            !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
    })
}

/// The lines of `text` that name `name`.
fn lines_naming<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    text.lines().filter(|l| mentions(l, name)).collect()
}

fn help(path: &str) -> Option<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_revendor"))
        .args(path.split_whitespace())
        .arg("--help")
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn in_help(help: &str, flag: &str) -> bool {
    help.split(|c: char| c.is_whitespace() || c == ',')
        .any(|w| w == flag || w.starts_with(&format!("{flag}=")))
}

/// Holds `name`'s lines in `section` to the binary: each marked planned
/// when it is not implemented, at least one not marked when it is.
fn planned_as_built(
    problems: &mut Vec<String>,
    section: &str,
    what: &str,
    name: &str,
    built: bool,
) {
    let lines = lines_naming(section, name);
    if lines.is_empty() {
        problems.push(format!("{what}: docs/reference.md does not name `{name}`"));
    } else if !built && lines.iter().any(|l| !l.contains("planned")) {
        problems.push(format!(
            "{what}: `{name}` is not implemented, so docs/reference.md must mark it **planned**"
        ));
    } else if built && lines.iter().all(|l| l.contains("planned")) {
        problems.push(format!(
            "{what}: `{name}` works now; drop **planned** from docs/reference.md"
        ));
    }
}

#[test]
fn the_reference_names_everything_the_contract_does() {
    let Some(design) = design() else { return };
    let design = prose(&design);
    let reference = read("docs/reference.md");
    let mut problems = Vec::new();

    let global = paragraph(&design, "Global:");
    let top_help = help("").unwrap();
    let global_section = section(&reference, "### Global flags").expect("### Global flags");
    for flag in spans(global).into_iter().flat_map(flags) {
        planned_as_built(
            &mut problems,
            global_section,
            "global flag",
            &flag,
            in_help(&top_help, &flag),
        );
    }

    let commands = commands(&design);
    assert!(commands.len() >= 9, "{commands:#?}");
    for named in &commands {
        let heading = format!("### `revendor {}`", named.path);
        let Some(part) = section(&reference, &heading) else {
            problems.push(format!("no `{heading}` in docs/reference.md"));
            continue;
        };
        match help(&named.path) {
            Some(help) => {
                for flag in &named.flags {
                    let what = format!("revendor {}", named.path);
                    planned_as_built(&mut problems, part, &what, flag, in_help(&help, flag));
                }
            }
            None if !part.lines().next().unwrap_or_default().contains("planned") => {
                problems.push(format!(
                    "`revendor {}` does not run: mark its heading planned",
                    named.path
                ));
            }
            None => {}
        }
    }

    let env_section = section(&reference, "## Environment").expect("## Environment");
    let design_env = section(&design, "## Environment").expect("DESIGN.md ## Environment");
    let is_variable = |s: &&str| {
        let s = s.trim_start_matches('$');
        s.contains('_')
            && s.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    };
    for name in spans(design_env)
        .into_iter()
        .chain(spans(global))
        .filter(is_variable)
    {
        let name = name.trim_start_matches('$');
        if !mentions(env_section, name) {
            problems.push(format!(
                "environment: docs/reference.md does not name `{name}`"
            ));
        }
    }

    let ids_section = section(&reference, "## Check ids").expect("## Check ids");
    let design_ids = section(&design, "## check findings").expect("DESIGN.md ## check findings");
    let documented: BTreeSet<String> = read("docs/checks.md")
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .map(str::to_owned)
        .collect();
    let is_id = |s: &&str| {
        let base = s.strip_suffix(":<name>").unwrap_or(s);
        !base.is_empty()
            && base.starts_with(|c: char| c.is_ascii_lowercase())
            && base.chars().all(|c| c.is_ascii_lowercase() || c == '-')
    };
    let ids: BTreeSet<&str> = spans(design_ids).into_iter().filter(is_id).collect();
    assert!(ids.len() >= 13, "{ids:?}");
    for id in ids {
        planned_as_built(
            &mut problems,
            ids_section,
            "check id",
            id,
            documented.contains(id),
        );
    }

    assert!(
        problems.is_empty(),
        "docs/reference.md is out of step with DESIGN.md:\n{}",
        problems.join("\n")
    );
}

/// GitHub's anchor for a heading: lowercase, punctuation dropped, spaces
/// turned into hyphens.
fn anchor(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[test]
fn readme_and_docs_link_only_to_what_the_repository_holds() {
    let mut problems = Vec::new();
    let mut docs: Vec<String> = std::fs::read_dir(Path::new(ROOT).join("docs"))
        .unwrap()
        .map(|e| format!("docs/{}", e.unwrap().file_name().to_string_lossy()))
        .filter(|p| p.ends_with(".md"))
        .collect();
    docs.push("README.md".into());
    for doc in &docs {
        let text = prose(&read(doc));
        let dir = Path::new(doc).parent().unwrap();
        for link in text
            .split("](")
            .skip(1)
            .filter_map(|s| s.split_once(')').map(|(l, _)| l))
        {
            if link.starts_with("http://")
                || link.starts_with("https://")
                || link.starts_with("mailto:")
            {
                continue;
            }
            let (file, fragment) = link.split_once('#').unwrap_or((link, ""));
            let target = if file.is_empty() {
                PathBuf::from(doc)
            } else {
                dir.join(file)
            };
            let on_disk = Path::new(ROOT).join(&target);
            let inside = on_disk
                .canonicalize()
                .is_ok_and(|p| p.starts_with(Path::new(ROOT).canonicalize().unwrap()));
            if !inside {
                problems.push(format!("{doc}: `{link}` is not a file of this repository"));
                continue;
            }
            if !fragment.is_empty() {
                let headings = std::fs::read_to_string(&on_disk).unwrap_or_default();
                let found = prose(&headings)
                    .lines()
                    .filter(|l| l.starts_with('#'))
                    .any(|l| anchor(l.trim_start_matches('#').trim()) == fragment);
                if !found {
                    problems.push(format!(
                        "{doc}: `{link}` names no heading of {}",
                        target.display()
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
