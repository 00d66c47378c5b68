//! What one shell command of a RUN does, for the CNI checksum check.
//!
//! Each function recognizes one kind of command by its name and options
//! (see the recognized spellings in the parent module's docs); none of them
//! looks at text outside the command's own words and redirections.

use super::super::shell::{Command, Sep};

/// Apply a `set` command to the errexit state.
pub(super) fn apply_set(cmd: &Command, errexit: &mut bool) {
    let argv: Vec<String> = cmd.argv().iter().map(|w| w.unquoted()).collect();
    let mut i = 1;
    while let Some(arg) = argv.get(i) {
        let (on, cluster) = match (arg.strip_prefix('-'), arg.strip_prefix('+')) {
            (Some(c), _) if !c.is_empty() && !c.starts_with('-') => (true, c),
            (_, Some(c)) if !c.is_empty() => (false, c),
            _ => break,
        };
        if cluster.contains('e') {
            *errexit = on;
        }
        if cluster.contains('o') {
            i += 1;
            if argv.get(i).map(String::as_str) == Some("errexit") {
                *errexit = on;
            }
        }
        i += 1;
    }
}

/// A URL whose file name is a CNI plugins archive (`cni-plugins….tgz`).
pub(super) fn is_cni_url(url: &str) -> bool {
    let Some((_, rest)) = url.split_once("://") else {
        return false;
    };
    let file = rest.rsplit('/').next().unwrap_or_default();
    file.starts_with("cni-plugins") && (file.ends_with(".tgz") || file.ends_with(".tar.gz"))
}

/// Where a download writes.
pub(super) enum Output {
    /// A named file.
    File(String),
    /// Standard output.
    Stdout,
}

fn basename(url: &str) -> String {
    url.rsplit('/').next().unwrap_or_default().to_owned()
}

/// Where curl or wget (`name`, with expanded `argv`) writes `url`.
pub(super) fn download_output(name: &str, argv: &[String], url: &str, cmd: &Command) -> Output {
    if let Some((_, target)) = cmd.redirects.iter().find(|(op, _)| op == ">" || op == ">>") {
        return Output::File(target.unquoted());
    }
    let (short, long) = if name == "curl" {
        ('o', "--output")
    } else {
        ('O', "--output-document")
    };
    let mut remote = name == "wget";
    let mut i = 1;
    while let Some(arg) = argv.get(i) {
        i += 1;
        if arg == long {
            return output_file(argv.get(i));
        }
        if let Some(v) = arg.strip_prefix(long).and_then(|r| r.strip_prefix('=')) {
            return output_file(Some(&v.to_owned()));
        }
        if name == "curl" && (arg == "--remote-name" || arg == "--remote-name-all") {
            remote = true;
        }
        let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.starts_with('-')) else {
            continue;
        };
        if let Some(p) = cluster.find(short) {
            let rest = &cluster[p + 1..];
            return if rest.is_empty() {
                output_file(argv.get(i))
            } else {
                output_file(Some(&rest.to_owned()))
            };
        }
        if name == "curl" && cluster.contains('O') {
            remote = true;
        }
    }
    if remote {
        Output::File(basename(url))
    } else {
        Output::Stdout
    }
}

fn output_file(arg: Option<&String>) -> Output {
    match arg {
        Some(f) if f != "-" => Output::File(f.clone()),
        _ => Output::Stdout,
    }
}

/// A path without a leading `./`, for comparing file operands.
pub(super) fn normalize(path: &str) -> &str {
    path.strip_prefix("./").unwrap_or(path)
}

/// The `(digest, file)` a `sha256sum -c` command checks, if its input is
/// inline: piped from `prev` (echo/printf) or given with `<<<`.
pub(super) fn verify_input(cmd: &Command, prev: Option<&Command>) -> Option<(String, String)> {
    let argv: Vec<String> = cmd.argv().iter().map(|w| w.unquoted()).collect();
    let is_sha256 = match argv.first().map(|a| a.rsplit('/').next().unwrap_or(a)) {
        Some("sha256sum") => true,
        Some("shasum") => argv.windows(2).any(|w| w[0] == "-a" && w[1] == "256"),
        _ => false,
    };
    let check = argv.iter().skip(1).any(|a| {
        a == "--check"
            || a.strip_prefix('-')
                .is_some_and(|c| !c.starts_with('-') && c.contains('c'))
    });
    if !is_sha256 || !check {
        return None;
    }
    let text = if let Some((_, w)) = cmd.redirects.iter().find(|(op, _)| op == "<<<") {
        w.unquoted()
    } else {
        let prev = prev?;
        if prev.sep != Sep::Pipe {
            return None;
        }
        let pargs: Vec<String> = prev.argv().iter().map(|w| w.unquoted()).collect();
        match prev.name().as_deref() {
            Some("echo") => pargs
                .iter()
                .skip(1)
                .skip_while(|a| matches!(a.as_str(), "-n" | "-e" | "-E" | "-ne" | "-en"))
                .cloned()
                .collect::<Vec<_>>()
                .join(" "),
            Some("printf") => {
                let format = pargs.get(1)?.replace("\\n", "\n");
                let mut values = pargs.iter().skip(2);
                let mut out = String::new();
                let mut rest = format.as_str();
                while let Some(p) = rest.find('%') {
                    out.push_str(&rest[..p]);
                    match rest[p + 1..].chars().next() {
                        Some('s' | 'b') => out.push_str(values.next().map_or("", String::as_str)),
                        Some(c) => out.push(c),
                        None => {}
                    }
                    rest = rest.get(p + 2..).unwrap_or_default();
                }
                out.push_str(rest);
                out
            }
            _ => return None,
        }
    };
    let parts: Vec<&str> = text.split_whitespace().collect();
    match parts.as_slice() {
        [digest, file] => Some((
            (*digest).to_owned(),
            file.strip_prefix('*').unwrap_or(file).to_owned(),
        )),
        _ => None,
    }
}

/// The file a `tar` command reads.
pub(super) fn tar_file(cmd: &Command) -> Option<String> {
    if let Some((_, w)) = cmd.redirects.iter().find(|(op, _)| op == "<") {
        return Some(w.unquoted());
    }
    let argv: Vec<String> = cmd.argv().iter().map(|w| w.unquoted()).collect();
    let mut i = 1;
    while let Some(arg) = argv.get(i) {
        i += 1;
        if arg == "--file" {
            return argv.get(i).cloned();
        }
        if let Some(f) = arg.strip_prefix("--file=") {
            return Some(f.to_owned());
        }
        let cluster = match arg.strip_prefix('-') {
            Some(c) if !c.starts_with('-') => c,
            // Old style: `tar xzf FILE` — the first word is a bare cluster.
            None if i == 2 => arg.as_str(),
            _ => continue,
        };
        if let Some(p) = cluster.find('f') {
            let rest = &cluster[p + 1..];
            return if rest.is_empty() {
                argv.get(i).cloned()
            } else {
                Some(rest.to_owned())
            };
        }
    }
    None
}

/// A `$NAME` or `${NAME}` reference, alone.
pub(super) fn variable(text: &str) -> Option<&str> {
    let name = text.strip_prefix('$')?;
    let name = name
        .strip_prefix('{')
        .and_then(|n| n.strip_suffix('}'))
        .unwrap_or(name);
    let valid = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then_some(name)
}

#[cfg(test)]
mod tests {
    use super::super::super::shell::parse;
    use super::*;

    fn one(script: &str) -> Command {
        parse(script).unwrap().remove(0)
    }

    fn output(script: &str) -> Option<String> {
        let cmd = one(script);
        let argv: Vec<String> = cmd.argv().iter().map(|w| w.unquoted()).collect();
        let name = cmd.name().unwrap();
        let url = argv.iter().find(|a| is_cni_url(a)).unwrap().clone();
        match download_output(&name, &argv, &url, &cmd) {
            Output::File(f) => Some(f),
            Output::Stdout => None,
        }
    }

    const URL: &str = "https://h/d/cni-plugins-linux-amd64-v1.tgz";

    #[test]
    fn download_outputs() {
        let cases = [
            (format!("curl -fsSL {URL} -o /a.tgz"), Some("/a.tgz")),
            (format!("curl -fsSLo/a.tgz {URL}"), Some("/a.tgz")),
            (format!("curl --output=/a.tgz {URL}"), Some("/a.tgz")),
            (
                format!("curl -fsSLO {URL}"),
                Some("cni-plugins-linux-amd64-v1.tgz"),
            ),
            (format!("curl -fsSL {URL} > /a.tgz"), Some("/a.tgz")),
            (format!("curl -fsSL {URL}"), None),
            (
                format!("wget -q {URL}"),
                Some("cni-plugins-linux-amd64-v1.tgz"),
            ),
            (format!("wget -qO /a.tgz {URL}"), Some("/a.tgz")),
            (format!("wget -O- {URL}"), None),
        ];
        for (script, expected) in cases {
            assert_eq!(output(&script).as_deref(), expected, "{script}");
        }
        assert!(!is_cni_url(
            "https://h/cni-plugins-linux-amd64-v1.tgz.sha256"
        ));
        assert!(!is_cni_url("cni-plugins-linux-amd64-v1.tgz"));
    }

    #[test]
    fn tar_operands() {
        for script in [
            "tar -xzf /a.tgz",
            "tar -x -z -f /a.tgz -C /o",
            "tar --file=/a.tgz -x",
            "tar --file /a.tgz -x",
            "tar xzf /a.tgz",
            "tar -xz < /a.tgz",
            "tar -xzf/a.tgz",
        ] {
            assert_eq!(
                tar_file(&one(script)).as_deref(),
                Some("/a.tgz"),
                "{script}"
            );
        }
        assert_eq!(tar_file(&one("tar -xz -C /o")), None);
    }

    #[test]
    fn set_flags() {
        for (script, expected) in [
            ("set -eux", true),
            ("set -euo pipefail", true),
            ("set -o errexit", true),
            ("set -ux", false),
            ("set -o pipefail", false),
            ("set -- -e", false),
        ] {
            let mut errexit = false;
            apply_set(&one(script), &mut errexit);
            assert_eq!(errexit, expected, "{script}");
        }
        let mut errexit = true;
        apply_set(&one("set +e"), &mut errexit);
        assert!(!errexit);
        apply_set(&one("set -e; "), &mut errexit);
        apply_set(&one("set +o errexit"), &mut errexit);
        assert!(!errexit);
    }

    #[test]
    fn variables_are_whole_references_only() {
        assert_eq!(variable("$sha"), Some("sha"));
        assert_eq!(variable("${SHA_1}"), Some("SHA_1"));
        for not in ["sha", "$1x", "${a}b", "$a-b", "$"] {
            assert_eq!(variable(not), None, "{not}");
        }
    }
}
