//! The `cni-checksums` question: is the CNI plugins archive verified against
//! a pinned digest, per architecture, before it is unpacked?
//!
//! The first `RUN` whose script runs `curl` or `wget` on a URL whose file name
//! starts with `cni-plugins` and ends in `.tgz`/`.tar.gz` is the download. In
//! that `RUN`, read as shell (see [`super::shell`]):
//!
//! 1. the archive is the download's output file: curl `-o F`/`--output F`/
//!    `-O`, wget `-O F`/default, or a `> F` redirection (`$VAR`s expanded from
//!    earlier assignments and visible `ARG` defaults);
//! 2. the verification is `echo "<digest>  <file>" | sha256sum -c` (or
//!    `printf … |`, or `sha256sum -c <<< "…"`, `--check` too) naming the
//!    archive. Checking a downloaded `.sha256` file does not count: it pins
//!    nothing;
//! 3. the pinned digest per platform is found, in this order:
//!    - `case "$TARGETARCH" in amd64) sha=<hex> ;; … esac` (or
//!      `$TARGETPLATFORM` with `linux/amd64)` patterns) assigning the variable
//!      the verification reads, to a literal or to `${ARG}` of an `ARG` with a
//!      default (the pin is then that ARG, at its line);
//!    - a variable that is itself an `ARG` with a default, or a literal digest:
//!      one pin for every platform;
//!    - failing both (or without a verification), `ARG
//!      CNI_PLUGINS_SHA256_<ARCH>=<hex>` declarations (`_AMD64`, `_ARM64`);
//! 4. the first `tar` reading the archive (`-f F`, `-xzf F`, `--file=F`,
//!    `xzf F`, `< F`) must come after the verification, and a failing
//!    verification must stop the build: `sha256sum` last in its pipeline, not
//!    negated, not followed by `||`, and either errexit on (`set -e…`,
//!    `set -o errexit`, or the stage's `SHELL` flags) or joined by `&&` to
//!    everything up to the extraction. errexit inside an `if` condition is
//!    not modelled.

use std::collections::HashMap;
use std::fmt;

mod command;

use self::command::{
    Output, apply_set, download_output, is_cni_url, normalize, tar_file, variable, verify_input,
};
use super::shell::{self, Command, Sep};
use super::{Dockerfile, Instruction, expand};
use crate::image::Digest;

/// The digest pinned for one platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchPin {
    /// The platform, as asked (`linux/amd64`).
    pub platform: String,
    /// The digest as written (see [`CniProblem::NotHex`] when malformed).
    pub sha256: String,
    /// The line where the digest is written.
    pub line: usize,
}

/// One way the CNI archive handling falls short.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CniProblem {
    /// No `RUN` downloads a CNI plugins archive.
    NoDownload,
    /// A `RUN` could not be read as shell (reported only when no download
    /// was found, since the download may hide in it).
    Unparsed {
        /// The RUN's line.
        line: usize,
        /// What could not be read.
        message: String,
    },
    /// The archive is piped or written to stdout, so nothing can check it
    /// before it is unpacked.
    Streamed {
        /// The download's line.
        line: usize,
    },
    /// No digest is pinned for a platform.
    MissingArch {
        /// The platform.
        platform: String,
        /// Where the pins are (or the download, when there are none).
        line: usize,
    },
    /// A pinned value is not 64 lowercase hex digits.
    NotHex {
        /// The platform.
        platform: String,
        /// The value found.
        value: String,
        /// Its line.
        line: usize,
    },
    /// No pinned `sha256sum -c` on the archive in the downloading RUN.
    NoVerify {
        /// The archive file.
        archive: String,
        /// The download's line.
        line: usize,
    },
    /// The verification can fail without stopping the build.
    Unguarded {
        /// The verification's line.
        line: usize,
        /// Why its failure is lost.
        reason: &'static str,
    },
    /// The archive is unpacked before it is verified.
    VerifyAfterExtract {
        /// The verification's line.
        verify_line: usize,
        /// The extraction's line.
        extract_line: usize,
    },
}

impl CniProblem {
    /// The line a finding should name (1 when there is no download at all).
    pub fn line(&self) -> usize {
        match self {
            CniProblem::NoDownload => 1,
            CniProblem::Unparsed { line, .. }
            | CniProblem::Streamed { line }
            | CniProblem::MissingArch { line, .. }
            | CniProblem::NotHex { line, .. }
            | CniProblem::NoVerify { line, .. }
            | CniProblem::Unguarded { line, .. } => *line,
            CniProblem::VerifyAfterExtract { extract_line, .. } => *extract_line,
        }
    }
}

impl fmt::Display for CniProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CniProblem::NoDownload => f.write_str("no RUN downloads the CNI plugins archive"),
            CniProblem::Unparsed { message, .. } => {
                write!(f, "cannot read the RUN as shell: {message}")
            }
            CniProblem::Streamed { .. } => f.write_str(
                "the CNI plugins archive is streamed, so it cannot be verified before it is unpacked",
            ),
            CniProblem::MissingArch { platform, .. } => {
                write!(f, "no sha256 is pinned for the CNI plugins archive on {platform}")
            }
            CniProblem::NotHex {
                platform, value, ..
            } => write!(
                f,
                "the sha256 pinned for {platform} is `{value}`, not 64 lowercase hex digits"
            ),
            CniProblem::NoVerify { archive, .. } => write!(
                f,
                "`{archive}` is not checked with `sha256sum -c` against a pinned digest"
            ),
            CniProblem::Unguarded { reason, .. } => {
                write!(f, "a failed checksum does not stop the build: {reason}")
            }
            CniProblem::VerifyAfterExtract { verify_line, .. } => write!(
                f,
                "the CNI plugins archive is unpacked before its checksum is verified (line {verify_line})"
            ),
        }
    }
}

/// What [`cni_checksums`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CniChecksums {
    /// The archive file the download writes, as expanded.
    pub archive: Option<String>,
    /// The pinned digest of each asked platform that has one.
    pub pins: Vec<ArchPin>,
    /// Everything wrong; empty when the archive is safely pinned.
    pub problems: Vec<CniProblem>,
}

/// A command of a RUN with its line.
struct Located {
    cmd: Command,
    line: usize,
}

/// Read how the Dockerfile fetches, verifies and unpacks the CNI plugins
/// archive for each of `platforms` (e.g. `linux/amd64`); see the module docs.
pub fn cni_checksums<S: AsRef<str>>(df: &Dockerfile, platforms: &[S]) -> CniChecksums {
    let platforms: Vec<&str> = platforms.iter().map(AsRef::as_ref).collect();
    let mut unparsed = Vec::new();
    for (index, ins) in df.instructions.iter().enumerate() {
        if ins.keyword != "RUN" {
            continue;
        }
        let cmds = match commands(ins) {
            Ok(cmds) => cmds,
            Err(problem) => {
                unparsed.push(problem);
                continue;
            }
        };
        let args = visible_args(df, index, ins.line);
        if let Some(result) = examine(df, index, &cmds, &args, &platforms) {
            return result;
        }
    }
    let mut problems = vec![CniProblem::NoDownload];
    problems.extend(unparsed);
    let mut out = CniChecksums {
        problems,
        ..CniChecksums::default()
    };
    arg_pins(&args_all(df), &platforms, 1, &mut out);
    out
}

fn commands(ins: &Instruction) -> Result<Vec<Located>, CniProblem> {
    let mut out = Vec::new();
    let pieces = std::iter::once(&ins.args).chain(ins.heredocs.iter().map(|h| &h.body));
    for text in pieces {
        let cmds = shell::parse(&text.text).map_err(|e| CniProblem::Unparsed {
            line: text.line_at(e.at),
            message: e.message,
        })?;
        out.extend(cmds.into_iter().map(|cmd| Located {
            line: text.line_at(cmd.at),
            cmd,
        }));
    }
    Ok(out)
}

/// ARG defaults a RUN at `line` of instruction `index` sees: its stage's
/// declarations so far, a bare `ARG NAME` taking the global default.
fn visible_args(df: &Dockerfile, index: usize, line: usize) -> HashMap<String, (String, usize)> {
    let globals: HashMap<&str, (&str, usize)> = df
        .args
        .iter()
        .filter(|a| a.stage.is_none())
        .filter_map(|a| Some((a.name.as_str(), (a.value.as_deref()?, a.line))))
        .collect();
    let stage = df.stage_of(index).map(|s| s.index);
    let mut out = HashMap::new();
    for arg in df
        .args
        .iter()
        .filter(|a| a.stage.is_some() && a.stage == stage && a.line < line)
    {
        let value = match &arg.value {
            Some(v) => Some((v.clone(), arg.line)),
            None => globals
                .get(arg.name.as_str())
                .map(|(v, l)| ((*v).to_owned(), *l)),
        };
        if let Some(v) = value {
            out.insert(arg.name.clone(), v);
        }
    }
    out
}

/// Every ARG default in the file, for the fallback pin shape.
fn args_all(df: &Dockerfile) -> HashMap<String, (String, usize)> {
    df.args
        .iter()
        .filter_map(|a| Some((a.name.clone(), (a.value.clone()?, a.line))))
        .collect()
}

/// Errexit from the stage's `SHELL` flags (before `-c`).
fn shell_errexit(df: &Dockerfile, index: usize) -> bool {
    let Some(stage) = df.stage_of(index) else {
        return false;
    };
    let shell = df.instructions[stage.instructions.start..index]
        .iter()
        .rev()
        .find(|i| i.keyword == "SHELL");
    let Some(argv) = shell.and_then(|i| serde_json::from_str::<Vec<String>>(&i.args.text).ok())
    else {
        return false;
    };
    let flags: Vec<&str> = argv
        .iter()
        .skip(1)
        .take_while(|a| a.as_str() != "-c")
        .map(String::as_str)
        .collect();
    let mut on = false;
    for (i, flag) in flags.iter().enumerate() {
        if let Some(cluster) = flag.strip_prefix('-').filter(|c| !c.starts_with('-')) {
            on |= cluster.contains('e')
                || (cluster.ends_with('o') && flags.get(i + 1) == Some(&"errexit"));
        }
    }
    on
}

/// The longest shell variable value [`examine`] keeps: `PATH_MAX`, more than any file name or
/// URL it looks for.
const MAX_VALUE: usize = 4096;

/// A shell variable assigned earlier in the RUN, else a visible ARG default.
fn resolve(
    vars: &HashMap<String, String>,
    args: &HashMap<String, (String, usize)>,
    name: &str,
) -> Option<String> {
    vars.get(name)
        .cloned()
        .or_else(|| args.get(name).map(|(v, _)| v.clone()))
}

/// Examine RUN `index`; `None` when it does not download the archive.
fn examine(
    df: &Dockerfile,
    index: usize,
    cmds: &[Located],
    args: &HashMap<String, (String, usize)>,
    platforms: &[&str],
) -> Option<CniChecksums> {
    let (k, output, vars) = download(cmds, args)?;
    let download_line = cmds[k].line;
    let mut out = CniChecksums::default();
    let archive = match output {
        Output::File(f) => normalize(&expand(&f, &|n: &str| resolve(&vars, args, n))).to_owned(),
        Output::Stdout => {
            out.problems.push(CniProblem::Streamed {
                line: download_line,
            });
            arg_pins(&args_all(df), platforms, download_line, &mut out);
            return Some(out);
        }
    };
    out.archive = Some(archive.clone());
    let lookup = |n: &str| resolve(&vars, args, n);
    let verify = (k + 1..cmds.len()).find_map(|j| {
        let prev = j.checked_sub(1).map(|p| &cmds[p].cmd);
        let (digest, file) = verify_input(&cmds[j].cmd, prev)?;
        (normalize(&expand(&file, &lookup)) == archive).then_some((j, digest))
    });
    let extract = (k + 1..cmds.len()).find(|&e| {
        cmds[e].cmd.name().as_deref() == Some("tar")
            && tar_file(&cmds[e].cmd).is_some_and(|f| normalize(&expand(&f, &lookup)) == archive)
    });
    let Some((j, digest)) = verify else {
        out.problems.push(CniProblem::NoVerify {
            archive,
            line: download_line,
        });
        arg_pins(&args_all(df), platforms, download_line, &mut out);
        return Some(out);
    };
    let verify_line = cmds[j].line;
    if let Some(e) = extract.filter(|&e| e < j) {
        out.problems.push(CniProblem::VerifyAfterExtract {
            verify_line,
            extract_line: cmds[e].line,
        });
    }
    if let Some(reason) = unguarded(df, index, cmds, j, extract) {
        out.problems.push(CniProblem::Unguarded {
            line: verify_line,
            reason,
        });
    }
    pins(df, cmds, j, &digest, args, platforms, &mut out);
    Some(out)
}

/// The first of `cmds` that downloads the CNI plugins archive (`curl` or
/// `wget` on its URL): its index, where it writes the archive, and the
/// shell variables assigned before it.
fn download(
    cmds: &[Located],
    args: &HashMap<String, (String, usize)>,
) -> Option<(usize, Output, HashMap<String, String>)> {
    let mut vars: HashMap<String, String> = HashMap::new();
    for (k, located) in cmds.iter().enumerate() {
        let lookup = |name: &str| resolve(&vars, args, name);
        let cmd = &located.cmd;
        let name = cmd.name();
        if let Some(name @ ("curl" | "wget")) = name.as_deref() {
            let argv: Vec<String> = cmd
                .argv()
                .iter()
                .map(|w| expand(&w.unquoted(), &lookup))
                .collect();
            if let Some(url) = argv.iter().skip(1).find(|a| is_cni_url(a)) {
                let output = download_output(name, &argv, url, cmd);
                return Some((k, output, vars));
            }
        }
        if cmd.argv().is_empty() && cmd.arm.is_none() {
            for (n, v) in cmd.assignments() {
                let value = expand(&v, &|name: &str| resolve(&vars, args, name));
                // `x=$x$x`, repeated, doubles a value each time (fuzzing found 3 GB
                // in 2 KB of script): a value longer than any path or URL is not
                // followed, and later `$x`s stay as written.
                if value.len() <= MAX_VALUE {
                    vars.insert(n, value);
                } else {
                    vars.remove(&n);
                }
            }
        }
    }
    None
}

/// Why a failing verification at `j` would not stop the build, if it would not.
fn unguarded(
    df: &Dockerfile,
    index: usize,
    cmds: &[Located],
    j: usize,
    extract: Option<usize>,
) -> Option<&'static str> {
    let cmd = &cmds[j].cmd;
    // `!` binds to the whole pipeline, so it sits on its first command.
    let mut first = j;
    while first > 0 && cmds[first - 1].cmd.sep == Sep::Pipe {
        first -= 1;
    }
    if cmds[first..=j].iter().any(|c| c.cmd.negated) {
        return Some("the check is negated with `!`");
    }
    match cmd.sep {
        Sep::Pipe => return Some("the check is not the last command of its pipeline"),
        Sep::Or => return Some("`||` after the check discards its failure"),
        Sep::Background => return Some("the check runs in the background"),
        Sep::And => {
            // errexit ignores every command of an AND-OR list but the last,
            // so only a chain reaching the extraction protects it.
            let chained = extract.is_some_and(|e| {
                e > j
                    && cmds[j..e]
                        .iter()
                        .all(|c| matches!(c.cmd.sep, Sep::And | Sep::Pipe))
            });
            return (!chained).then_some(
                "`&&` after the check does not reach the extraction, and errexit ignores it",
            );
        }
        Sep::Seq | Sep::End => {}
    }
    let mut errexit = shell_errexit(df, index);
    for c in &cmds[..j] {
        if c.cmd.name().as_deref() == Some("set") {
            apply_set(&c.cmd, &mut errexit);
        }
    }
    (!errexit).then_some("errexit (`set -e`) is not on when the check runs")
}

fn arch_matches(subject: &str, pattern: &str, platform: &str) -> bool {
    match subject {
        "$TARGETARCH" | "${TARGETARCH}" => platform.split('/').nth(1) == Some(pattern),
        "$TARGETPLATFORM" | "${TARGETPLATFORM}" => platform == pattern,
        _ => false,
    }
}

fn push_pin(out: &mut CniChecksums, platform: &str, value: String, line: usize) {
    if Digest::from_hex(&value).is_err() {
        out.problems.push(CniProblem::NotHex {
            platform: platform.to_owned(),
            value: value.clone(),
            line,
        });
    }
    out.pins.push(ArchPin {
        platform: platform.to_owned(),
        sha256: value,
        line,
    });
}

/// Resolve the digest the verification at `j` reads into per-platform pins.
fn pins(
    df: &Dockerfile,
    cmds: &[Located],
    j: usize,
    digest: &str,
    args: &HashMap<String, (String, usize)>,
    platforms: &[&str],
    out: &mut CniChecksums,
) {
    let Some(var) = variable(digest) else {
        if digest.contains('$') {
            arg_pins(&args_all(df), platforms, cmds[j].line, out);
        } else {
            for p in platforms {
                push_pin(out, p, digest.to_owned(), cmds[j].line);
            }
        }
        return;
    };
    let arms: Vec<(&Located, Vec<String>, String)> = cmds[..j]
        .iter()
        .filter_map(|c| {
            let arm = c.cmd.arm.as_ref()?;
            let value = c.cmd.assignments().into_iter().find(|(n, _)| n == var)?.1;
            Some((c, arm.patterns.clone(), value))
        })
        .collect();
    if let Some((first, _, _)) = arms.first() {
        for p in platforms {
            let arm = arms.iter().find(|(c, patterns, _)| {
                let subject = c.cmd.arm.as_ref().map_or("", |a| a.subject.as_str());
                patterns.iter().any(|pat| arch_matches(subject, pat, p))
            });
            match arm {
                Some((c, _, value)) => {
                    let (value, line) = match variable(value).and_then(|n| args.get(n)) {
                        Some((v, l)) => (v.clone(), *l),
                        None => (value.clone(), c.line),
                    };
                    push_pin(out, p, value, line);
                }
                None => out.problems.push(CniProblem::MissingArch {
                    platform: (*p).to_owned(),
                    line: first.line,
                }),
            }
        }
        return;
    }
    if let Some((value, line)) = args.get(var) {
        for p in platforms {
            push_pin(out, p, value.clone(), *line);
        }
        return;
    }
    arg_pins(&args_all(df), platforms, cmds[j].line, out);
}

/// The fallback shape: `ARG CNI_PLUGINS_SHA256_<ARCH>=<hex>`.
fn arg_pins(
    args: &HashMap<String, (String, usize)>,
    platforms: &[&str],
    missing_line: usize,
    out: &mut CniChecksums,
) {
    for p in platforms {
        let arch = p.split('/').nth(1).unwrap_or_default().to_ascii_uppercase();
        match args.get(&format!("CNI_PLUGINS_SHA256_{arch}")) {
            Some((value, line)) => push_pin(out, p, value.clone(), *line),
            None => out.problems.push(CniProblem::MissingArch {
                platform: (*p).to_owned(),
                line: missing_line,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    const PLATFORMS: [&str; 2] = ["linux/amd64", "linux/arm64"];

    /// A case-style recipe; line 8 pins amd64, 9 arm64, 15 verifies, 17 unpacks.
    fn recipe() -> String {
        format!(
            "# syntax=docker/dockerfile:1
ARG GO_IMAGE=golang:1.26
FROM ${{GO_IMAGE}} AS build
ARG TARGETARCH
ARG CNI_PLUGINS_VERSION=v1.9.1
RUN set -eux; \\
    case \"$TARGETARCH\" in \\
      amd64) sha256=\"{A}\" ;; \\
      arm64) sha256=\"{B}\" ;; \\
      *) echo \"unsupported: $TARGETARCH\" >&2; exit 1 ;; \\
    esac; \\
    curl -fsSL --retry 3 \\
      \"https://github.com/containernetworking/plugins/releases/download/${{CNI_PLUGINS_VERSION}}/cni-plugins-linux-${{TARGETARCH}}-${{CNI_PLUGINS_VERSION}}.tgz\" \\
      -o /tmp/cni-plugins.tgz; \\
    echo \"${{sha256}}  /tmp/cni-plugins.tgz\" | sha256sum -c -; \\
    mkdir -p /cni-plugins; \\
    tar -xz -C /cni-plugins -f /tmp/cni-plugins.tgz ./bridge ./host-local; \\
    rm /tmp/cni-plugins.tgz
FROM debian:stable-slim
COPY --from=build /cni-plugins /cni-plugins
"
        )
    }

    fn check(text: &str) -> CniChecksums {
        cni_checksums(&Dockerfile::parse(text).unwrap(), &PLATFORMS)
    }

    fn pins(result: &CniChecksums) -> Vec<(&str, &str, usize)> {
        result
            .pins
            .iter()
            .map(|p| (p.platform.as_str(), p.sha256.as_str(), p.line))
            .collect()
    }

    /// Fuzzing (issue 13, fuzz/corpus/shell/doubling-assignments): `x=$x$x` repeated doubled
    /// the value each time, to gigabytes in a short script. A value past `MAX_VALUE` is no
    /// longer followed.
    #[test]
    fn a_value_that_doubles_at_each_assignment_is_not_followed_past_a_path() {
        let text = format!(
            "FROM scratch\nRUN x=ab; {}curl -fsSLo \"/tmp/$x\" https://github.com/containernetworking/plugins/releases/download/v1.9.1/cni-plugins-linux-amd64-v1.9.1.tgz\n",
            "x=$x$x; ".repeat(64)
        );
        let got = check(&text);
        let archive = got.archive.expect("the download is found");
        assert!(
            archive.len() <= MAX_VALUE + "/tmp/".len(),
            "{}",
            archive.len()
        );
    }

    #[test]
    fn case_style_recipe_is_clean() {
        let got = check(&recipe());
        assert_eq!(got.problems, []);
        assert_eq!(got.archive.as_deref(), Some("/tmp/cni-plugins.tgz"));
        assert_eq!(pins(&got), [("linux/amd64", A, 8), ("linux/arm64", B, 9)]);
    }

    #[test]
    fn a_missing_arch_is_reported_at_the_pins() {
        let text = recipe().replace(&format!("      arm64) sha256=\"{B}\" ;; \\\n"), "");
        let got = check(&text);
        assert_eq!(
            got.problems,
            [CniProblem::MissingArch {
                platform: "linux/arm64".to_owned(),
                line: 8
            }]
        );
    }

    #[test]
    fn a_short_digest_is_not_hex() {
        let text = recipe().replace(B, "bbbb");
        let got = check(&text);
        assert_eq!(got.problems.len(), 1);
        assert_eq!(got.problems[0].line(), 9);
        assert_eq!(
            got.problems[0].to_string(),
            "the sha256 pinned for linux/arm64 is `bbbb`, not 64 lowercase hex digits"
        );
    }

    #[test]
    fn unpacking_before_the_check_is_reported_with_both_lines() {
        let verify = "    echo \"${sha256}  /tmp/cni-plugins.tgz\" | sha256sum -c -; \\\n";
        let text = recipe().replace(verify, "").replace(
            "    rm /tmp/cni-plugins.tgz\n",
            &format!("{verify}    rm /tmp/cni-plugins.tgz\n"),
        );
        let got = check(&text);
        assert_eq!(
            got.problems,
            [CniProblem::VerifyAfterExtract {
                verify_line: 17,
                extract_line: 16
            }]
        );
    }

    #[test]
    fn a_check_that_cannot_stop_the_build_is_unguarded() {
        for (from, to) in [
            ("set -eux;", "set -ux;"),
            ("sha256sum -c -;", "sha256sum -c - || true;"),
            ("sha256sum -c -;", "sha256sum -c - | cat;"),
            ("sha256sum -c -;", "sha256sum -c - && echo ok;"),
            ("set -eux;", "set -eux; set +e;"),
            ("echo \"${sha256}", "! echo \"${sha256}"),
        ] {
            let got = check(&recipe().replacen(from, to, 1));
            let unguarded: Vec<_> = got
                .problems
                .iter()
                .filter(|p| matches!(p, CniProblem::Unguarded { line: 15, .. }))
                .collect();
            assert_eq!(unguarded.len(), 1, "{to}: {:?}", got.problems);
        }
    }

    #[test]
    fn errexit_from_shell_or_an_and_chain_guards() {
        let text = recipe().replace("set -eux;", "true;");
        let shell = text.replace(
            "ARG TARGETARCH\n",
            "ARG TARGETARCH\nSHELL [\"/bin/bash\", \"-eo\", \"pipefail\", \"-c\"]\n",
        );
        assert_eq!(check(&shell).problems, []);
        let chained = text.replace(
            "sha256sum -c -; \\\n    mkdir -p /cni-plugins;",
            "sha256sum -c - && \\\n    mkdir -p /cni-plugins &&",
        );
        assert_eq!(check(&chained).problems, []);
    }

    #[test]
    fn a_commented_out_errexit_does_not_count() {
        let text = recipe().replace("RUN set -eux; \\\n", "RUN true; \\\n  # set -eux; \\\n");
        let got = check(&text);
        assert!(
            got.problems
                .iter()
                .any(|p| matches!(p, CniProblem::Unguarded { .. })),
            "{:?}",
            got.problems
        );
    }

    #[test]
    fn checking_another_file_is_no_verification() {
        let text = recipe().replace("  /tmp/cni-plugins.tgz\" |", "  /tmp/decoy.tgz\" |");
        let got = check(&text);
        assert_eq!(
            got.problems[0],
            CniProblem::NoVerify {
                archive: "/tmp/cni-plugins.tgz".to_owned(),
                line: 12
            }
        );
    }

    #[test]
    fn arg_pins_referenced_from_the_case_are_read_at_their_lines() {
        let text = recipe()
            .replace(
                "ARG CNI_PLUGINS_VERSION=v1.9.1\n",
                &format!("ARG CNI_PLUGINS_VERSION=v1.9.1\nARG CNI_PLUGINS_SHA256_AMD64={A}\nARG CNI_PLUGINS_SHA256_ARM64={B}\n"),
            )
            .replace(&format!("sha256=\"{A}\""), "sha256=\"${CNI_PLUGINS_SHA256_AMD64}\"")
            .replace(&format!("sha256=\"{B}\""), "sha256=\"${CNI_PLUGINS_SHA256_ARM64}\"");
        let got = check(&text);
        assert_eq!(got.problems, []);
        assert_eq!(pins(&got), [("linux/amd64", A, 6), ("linux/arm64", B, 7)]);
    }

    #[test]
    fn without_a_check_the_arg_shape_still_yields_pins() {
        let text = format!(
            "FROM alpine\nARG CNI_PLUGINS_SHA256_AMD64={A}\nARG CNI_PLUGINS_SHA256_ARM64=xyz\nRUN wget -q https://example.com/v1/cni-plugins-linux-amd64-v1.tgz && tar -xzf cni-plugins-linux-amd64-v1.tgz\n"
        );
        let got = check(&text);
        assert_eq!(
            got.archive.as_deref(),
            Some("cni-plugins-linux-amd64-v1.tgz")
        );
        assert_eq!(
            got.problems,
            [
                CniProblem::NoVerify {
                    archive: "cni-plugins-linux-amd64-v1.tgz".to_owned(),
                    line: 4
                },
                CniProblem::NotHex {
                    platform: "linux/arm64".to_owned(),
                    value: "xyz".to_owned(),
                    line: 3
                }
            ]
        );
        assert_eq!(pins(&got)[0], ("linux/amd64", A, 2));
    }

    #[test]
    fn other_verification_spellings_are_recognized() {
        let base = format!(
            "FROM alpine\nARG TARGETPLATFORM\nRUN set -e; case $TARGETPLATFORM in linux/amd64) S={A};; linux/arm64) S={B};; esac; \\\n  F=/tmp/c.tgz; \\\n  wget -O \"$F\" https://h/cni-plugins-linux-x-v1.tgz; \\\n  VERIFY; \\\n  tar xzf $F -C /opt\n"
        );
        for verify in [
            "printf '%s  %s\\n' \"$S\" \"$F\" | sha256sum --check",
            "sha256sum -c <<< \"$S *$F\"",
            "echo \"$S  ./tmp/../tmp/c.tgz\" | sha256sum -c - ; true",
        ] {
            let got = check(&base.replace("VERIFY", verify));
            if verify.contains("../") {
                assert!(
                    matches!(
                        got.problems.first(),
                        Some(CniProblem::NoVerify { line: 5, .. })
                    ),
                    "{verify}: {:?}",
                    got.problems
                );
            } else {
                assert_eq!(got.problems, [], "{verify}");
                assert_eq!(pins(&got), [("linux/amd64", A, 3), ("linux/arm64", B, 3)]);
            }
        }
    }

    #[test]
    fn heredoc_scripts_are_read() {
        let text = format!(
            "FROM alpine\nRUN <<EOF\nset -e\ncurl -fsSLo /a.tgz https://h/cni-plugins-linux-amd64-v1.tgz\necho \"{A}  /a.tgz\" | sha256sum -c\ntar -C /opt -xzf /a.tgz\nEOF\n"
        );
        let got = cni_checksums(&Dockerfile::parse(&text).unwrap(), &["linux/amd64"]);
        assert_eq!(got.problems, []);
        assert_eq!(pins(&got), [("linux/amd64", A, 5)]);
    }

    #[test]
    fn streamed_and_missing_downloads_are_reported() {
        let streamed =
            "FROM alpine\nRUN curl -fsSL https://h/cni-plugins-linux-amd64-v1.tgz | tar -xz\n";
        let got = check(streamed);
        assert_eq!(got.problems[0], CniProblem::Streamed { line: 2 });
        let got = check("FROM alpine\nRUN echo 'unterminated\nRUN true\n");
        assert_eq!(got.problems[0], CniProblem::NoDownload);
        assert!(matches!(
            got.problems[1],
            CniProblem::Unparsed { line: 2, .. }
        ));
        assert_eq!(got.problems.len(), 4, "{:?}", got.problems);
    }
}
