//! Inputs past revendor's size bounds (issue 21): an upstream's file, a
//! tag archive that expands to gigabytes, a package file, and YAML whose
//! aliases expand a few lines into billions of nodes. Each is refused with
//! a one-line error before it takes the memory: exit 3 for a remote's
//! answer, 2 for the package's own files (1 where `check` reports a
//! marker's input as a finding, as for any YAML it cannot read).

use std::process::Command;

use super::{Case, Fixture, LABELLED, MAIN_GO, PATCH, REPO, catalog};
use crate::support::server::Response;

/// A "billion laughs": nine levels of nine aliases each; its seventh line
/// is the alias that crosses the bound on alias expansion.
fn alias_bomb() -> String {
    let mut text = String::from("a0: &a0 lol\n");
    for level in 1..10 {
        let items = vec![format!("*a{}", level - 1); 9].join(", ");
        text.push_str(&format!("a{level}: &a{level} [{items}]\n"));
    }
    text
}

/// Publishes v1.1.0 with `app` as its vendored manifest.
fn release_with(fx: &Fixture, app: impl Into<Vec<u8>>) {
    fx.gh
        .repo(REPO)
        .file_at("v1.1.0", "deploy/app.yml", app)
        .file_at("v1.1.0", "go.mod", "module example.org/app\n\ngo 1.25.0\n")
        .file_at("v1.1.0", "main.go", MAIN_GO)
        .release("v1.1.0", |r| r);
}

/// The upstream manifest with an alias bomb as its second document.
fn bombed_manifest() -> String {
    format!("{}---\n{}", LABELLED.text(), alias_bomb())
}

/// Points the marker's `expect` at `values.yaml`'s `cni`, whose file goes
/// on with an alias bomb (its alias past the bound on line 8).
fn bombed_expect_file(fx: &mut Fixture) {
    fx.write("values.yaml", format!("cni: v1.2.3\n{}", alias_bomb()));
    fx.edit(
        "vendor.toml",
        "expect = { value = \"v1.2.3\" }",
        "expect = { file = \"values.yaml\", yaml = \"cni\" }",
    );
}

/// A gzipped tar whose one file, `name`, is `size` zero bytes: about a
/// thousandth of `size` to download. Each MiB of zeros is compressed once
/// with a full flush, so the deflate stream repeats it, and its CRC is
/// combined rather than computed over the whole.
fn gzip_bomb(name: &str, size: u64) -> Vec<u8> {
    use flate2::{Compress, Compression, Crc, FlushCompress};
    const MIB: usize = 1 << 20;
    let deflate = |c: &mut Compress, input: &[u8], flush: FlushCompress| {
        let mut out = Vec::with_capacity(input.len() + 1024);
        c.compress_vec(input, &mut out, flush).unwrap();
        assert_eq!(c.total_in() as usize % MIB, input.len() % MIB);
        out
    };
    let mut header = tar::Header::new_gnu();
    header.set_path(name).unwrap();
    header.set_size(size);
    header.set_mode(0o644);
    header.set_cksum();
    let zeros = vec![0u8; MIB];
    let mut c = Compress::new(Compression::best(), false);
    let mut body = deflate(&mut c, header.as_bytes(), FlushCompress::Full);
    let mut crc = Crc::new();
    crc.update(header.as_bytes());
    let mut zero_crc = Crc::new();
    zero_crc.update(&zeros);
    let chunk = {
        let mut c = Compress::new(Compression::best(), false);
        deflate(&mut c, &zeros, FlushCompress::Full)
    };
    assert_eq!(size % MIB as u64, 0, "whole MiB");
    for _ in 0..size / MIB as u64 {
        body.extend_from_slice(&chunk);
        crc.combine(&zero_crc);
    }
    let end = [0u8; 1024];
    let mut c = Compress::new(Compression::best(), false);
    let mut tail = Vec::with_capacity(4096);
    c.compress_vec(&end, &mut tail, FlushCompress::Finish)
        .unwrap();
    body.extend_from_slice(&tail);
    crc.update(&end);
    let mut gz = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    gz.extend_from_slice(&body);
    gz.extend_from_slice(&crc.sum().to_le_bytes());
    let length = 512 + size + 1024;
    gz.extend_from_slice(&(length as u32).to_le_bytes());
    gz
}

pub(super) const CASES: &[Case] = &[
    Case {
        name: "bounds: a vendored file with a contract and a pin whose aliases expand past the bound",
        setup: |fx| release_with(fx, bombed_manifest()),
        args: &["update"],
        code: 2,
        words: &[
            "templates/app.yml",
            "aliases expand to more than 100000 nodes",
        ],
    },
    Case {
        name: "bounds: a marker's expect file whose aliases expand past the bound",
        setup: bombed_expect_file,
        args: &["check"],
        code: 1,
        words: &["values.yaml:8", "aliases expand to more than 100000 nodes"],
    },
    Case {
        name: "bounds: a vendored file larger than 64 MiB",
        setup: |fx| release_with(fx, vec![b'#'; (64 << 20) + 1]),
        args: &["update"],
        code: 3,
        words: &[
            "`deploy/app.yml` of github:example/app at v1.1.0",
            "at most 64 MiB a vendored file",
        ],
    },
    Case {
        name: "bounds: a tag archive that unpacks to more than 1 GiB",
        setup: |fx| {
            fx.newer();
            let bomb = gzip_bomb("app-1.1.0/big", 1100 << 20);
            let answer = Response::bytes(200, "application/gzip", bomb);
            fx.gh.respond_next("/example/app/archive/", answer, 10);
        },
        args: &["update"],
        code: 3,
        words: &["archive", "`app-1.1.0/big` is larger than 1024 MiB"],
    },
    Case {
        name: "bounds: a patch file larger than 64 MiB",
        setup: |fx| {
            let file = std::fs::File::options()
                .write(true)
                .open(fx.pkg.path().join(PATCH))
                .unwrap();
            file.set_len((64 << 20) + 1).unwrap();
        },
        args: &["render"],
        code: 2,
        words: &["patches/namespace.patch", "at most 64 MiB a file"],
    },
];

#[test]
fn bounds_catalog() {
    catalog(CASES);
}

/// `cmd` run under `ulimit -v` of about 2 GB, as a CI runner's memory
/// bounds it: before the bound on aliases, a bomb aborted with "memory
/// allocation failed" (exit 134).
fn under_memory_limit(cmd: &Command) -> (i32, String, String) {
    let mut limited = Command::new("bash");
    limited
        .arg("-c")
        .arg("ulimit -v 2000000; exec \"$0\" \"$@\"")
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => limited.env(key, value),
            None => limited.env_remove(key),
        };
    }
    let out = limited.output().expect("run bash");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), stdout, stderr)
}

/// The one `error:` line of `stderr`, which must name `file` and the bound.
fn assert_one_line_error(stderr: &str, file: &str) {
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains(file), "{stderr}");
    assert!(
        errors[0].contains("aliases expand to more than"),
        "{stderr}"
    );
}

#[test]
fn issue_21_an_alias_bomb_in_a_contracted_vendored_file_exits_2_under_a_memory_limit() {
    let fx = Fixture::adopted();
    release_with(&fx, bombed_manifest());
    let before = fx.pkg.read_string("templates/app.yml");
    let (code, _, stderr) = under_memory_limit(&fx.rv.command(&["update"]));
    assert_eq!(code, 2, "{stderr}");
    assert_one_line_error(&stderr, "templates/app.yml");
    assert_eq!(fx.pkg.read_string("templates/app.yml"), before);
}

#[test]
fn issue_21_an_alias_bomb_in_a_markers_expect_file_is_refused_under_a_memory_limit() {
    let mut fx = Fixture::adopted();
    bombed_expect_file(&mut fx);
    let (code, stdout, stderr) = under_memory_limit(&fx.rv.command(&["check"]));
    assert_eq!(
        code, 1,
        "a finding, as for any expect file that is not YAML: {stderr}"
    );
    let finding: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("aliases expand"))
        .collect();
    assert_eq!(finding.len(), 1, "{stdout}");
    assert!(finding[0].contains("values.yaml:8"), "{stdout}");
}
