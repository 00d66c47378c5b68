//! issue 21, upstream treated as hostile in its names: a file name holding a line break, a
//! GitHub workflow command and an ANSI sequence, refused by `update`, reaches no terminal or
//! log raw in any format: no line of either stream starts a workflow command revendor did not
//! write, and no escape character is printed.

use crate::support;
use crate::vendor_dir::{REPO, package, serve};

use support::{GitHub, Revendor};

const HOSTILE: &str =
    "charts/app/templates/a\n::warning title=pwned::all patches applied\x1b[2J\x1b]0;t\x07.yaml";

#[test]
fn a_hostile_file_name_is_escaped_in_every_format() {
    let gh = GitHub::start();
    serve(&gh);
    gh.repo(REPO).file_at("v1.1.0", HOSTILE, "kind: x\n");
    let pkg = package(&format!("[upstream]\ngithub = \"{REPO}\"\n"));
    let rv = Revendor::new(pkg.path(), &gh);
    rv.run(&["update", "--to", "v1.0.0"]).expect(0);
    // `update` takes no `--format github` (issue 22: refused, exit 2, with
    // nothing printed on stdout; tests/testsuite/output_formats.rs).
    for format in ["human", "json"] {
        let run = rv
            .run(&["--format", format, "update", "--to", "v1.1.0"])
            .expect(3);
        let all = run.all();
        assert!(all.contains("all patches applied"), "{format}: {all}");
        assert!(
            !all.contains('\x1b') && !all.contains('\x07'),
            "{format}: {all:?}"
        );
        for line in all.lines() {
            assert!(!line.trim_start().starts_with("::"), "{format}: {line:?}");
        }
    }
}
