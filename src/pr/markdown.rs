//! The pull request's title and Markdown body, rendered from a [`Summary`].
//!
//! The body has one section per kind of fact, in a fixed order: the
//! versions and their links, the patches, the image, the markers, what
//! changed upstream in the vendored files, the adaptations, the checks. A
//! section with nothing to say is left out. A patch is said to carry "the
//! same changes" only when its hunks' changes equal the base's, change for
//! change; one that gained or lost a change says so and quotes it, because
//! that is the part a reviewer must read.

use std::fmt::Write;

use super::summary::{
    Builder, Chart, Checks, FileStat, HunkChange, Image, Marker, Patch, Reverified, Section,
    Summary,
};

/// `chore(packages/system/multus): bump multus-cni to v4.3.0`: the
/// Conventional Commits form cozystack's commits and its pr-labeler expect.
/// The same version on both sides (patches or pins moved) is a refresh; a
/// package the base did not have is vendored.
pub fn title(s: &Summary) -> String {
    if !s.upstreams.is_empty() {
        return title_of_several(s);
    }
    let u = &s.upstream;
    match &u.from {
        Some(from) if *from == u.to => {
            format!("chore({}): refresh vendored {} {}", s.package, u.name, u.to)
        }
        Some(_) => format!("chore({}): bump {} to {}", s.package, u.name, u.to),
        None => format!("chore({}): vendor {} {}", s.package, u.name, u.to),
    }
}

/// Several upstreams: each that moved (`bump kube-ovn to v1.14.11, kamaji
/// to v2`), else each as it is (`refresh vendored a v1, b v2`).
fn title_of_several(s: &Summary) -> String {
    let moved: Vec<String> = s
        .upstreams
        .iter()
        .filter(|u| u.from.as_ref().is_some_and(|f| *f != u.to) || u.from.is_none())
        .map(|u| format!("{} to {}", u.called(), u.to))
        .collect();
    if moved.is_empty() {
        let all: Vec<String> = s
            .upstreams
            .iter()
            .map(|u| format!("{} {}", u.called(), u.to))
            .collect();
        return format!("chore({}): refresh vendored {}", s.package, all.join(", "));
    }
    format!("chore({}): bump {}", s.package, moved.join(", "))
}

/// The most characters GitHub takes in a pull request's body; a longer one
/// is refused with 422 "body is too long".
const BODY_LIMIT: usize = 65_536;

/// The Markdown body, within GitHub's 65,536 characters. A bump of a large chart
/// directory lists hundreds of files; when every line does not fit, the
/// file lists (the diffstat, the files added and removed, the adaptations)
/// are cut to their first entries, each cut saying how many it left out;
/// the JSON summary keeps them all, and the commit message, which has no
/// limit, every adaptation.
pub fn body(s: &Summary) -> String {
    body_with_footer(s, "")
}

/// [`body`] ending with `footer` (`.revendor.toml`'s `[pr] footer`, such as
/// the `release-note` block a pull request template asks for), which is
/// never cut: the facts above it make room for it.
pub fn body_with_footer(s: &Summary, footer: &str) -> String {
    let footer = if footer.is_empty() {
        String::new()
    } else {
        format!("\n{}\n", footer.trim_end())
    };
    let limit = BODY_LIMIT.saturating_sub(footer.chars().count());
    let full = render(s, None);
    if full.chars().count() <= limit {
        return full + &footer;
    }
    for most in [100, 30, 10, 3, 0] {
        let cut = render(s, Some(most));
        if cut.chars().count() <= limit {
            return cut + &footer;
        }
    }
    truncated(&render(s, Some(0)), limit) + &footer
}

/// `text` cut at a line to leave room for the note saying so: what is left
/// when even the shortest lists do not fit (patch sections quoting
/// thousands of changed lines).
fn truncated(text: &str, limit: usize) -> String {
    const NOTE: &str = "\n\n*(cut here: GitHub takes 65,536 characters; the commit message and `revendor pr --format json` hold the rest)*\n";
    let room = limit.saturating_sub(NOTE.chars().count());
    let end = text
        .char_indices()
        .nth(room)
        .map_or(text.len(), |(at, _)| at);
    let end = text[..end].rfind('\n').unwrap_or(end);
    format!("{}{NOTE}", &text[..end])
}

/// The body with each file list cut to `most` entries (`None`: whole).
fn render(s: &Summary, most: Option<usize>) -> String {
    let mut b = String::new();
    if s.upstreams.is_empty() {
        intro(&mut b, s);
    } else {
        intro_of_several(&mut b, s);
    }
    patches(&mut b, &s.patches);
    let images = match s.images.as_slice() {
        [] => s.image.as_slice(),
        several => several,
    };
    let builders: Vec<(Option<&str>, &Builder)> = match s.builders.as_slice() {
        [] => s.builder.iter().map(|x| (None, x)).collect(),
        several => several
            .iter()
            .map(|x| (x.name.as_deref(), &x.builder))
            .collect(),
    };
    image(&mut b, &builders, images);
    markers(&mut b, &s.markers);
    diffstat(&mut b, &s.diffstat, most);
    if s.upstreams.is_empty() {
        arrived(&mut b, None, &s.added, &s.removed, most);
    } else {
        for u in &s.upstreams {
            arrived(&mut b, Some(u.called()), &u.added, &u.removed, most);
        }
    }
    adaptations(&mut b, s, most);
    checks(&mut b, &s.checks);
    b
}

/// The first `most` of `list` (all of it for `None`), and how many were left out.
fn first<T>(list: &[T], most: Option<usize>) -> (&[T], usize) {
    let shown = most.map_or(list.len(), |m| m.min(list.len()));
    (&list[..shown], list.len() - shown)
}

/// The line that stands for the `left` entries a cut list does not show.
fn left_out(left: usize) -> String {
    format!(
        "… and {left} more (`revendor pr --format json` lists every one; GitHub takes {BODY_LIMIT} characters)"
    )
}

fn intro(b: &mut String, s: &Summary) {
    let u = &s.upstream;
    let name = match &u.url {
        Some(url) => format!("[{}]({url})", u.name),
        None => format!("`{}`", u.source),
    };
    let _ = match &u.from {
        Some(from) if *from == u.to => writeln!(
            b,
            "Refreshes the vendored {name} {} in `{}`.",
            code(&u.to),
            s.package
        ),
        Some(from) => writeln!(
            b,
            "Bumps {name} from {} to {} in `{}`.",
            code(from),
            code(&u.to),
            s.package
        ),
        None => writeln!(
            b,
            "Vendors {name} {} in `{}`, a package new in this change.",
            code(&u.to),
            s.package
        ),
    };
    let mut links = Vec::new();
    if let Some(url) = &u.release_notes {
        links.push(format!("- Release notes: {url}"));
    }
    if let Some(url) = &u.compare {
        links.push(format!("- Upstream changes: {url}"));
    }
    if let Some(c) = &u.commit {
        links.push(format!("- Upstream commit: `{c}`"));
    }
    for (what, text) in u.chart.iter().flat_map(chart_lines) {
        links.push(format!("- {what}: {text}"));
    }
    if !links.is_empty() {
        let _ = writeln!(b, "\n{}", links.join("\n"));
    }
}

/// Several upstreams: one line each, with its links.
fn intro_of_several(b: &mut String, s: &Summary) {
    let _ = writeln!(
        b,
        "Moves the {} upstreams of `{}`:\n",
        s.upstreams.len(),
        s.package
    );
    for u in &s.upstreams {
        let name = match &u.url {
            Some(url) => format!("[{}]({url})", u.name),
            None => format!("`{}`", u.source),
        };
        let what = match &u.from {
            Some(from) if *from == u.to => format!("{} (unchanged)", code(&u.to)),
            Some(from) => format!("{} → {}", code(from), code(&u.to)),
            None => format!("{} (new in this change)", code(&u.to)),
        };
        let _ = writeln!(b, "- `{}`, {name}: {what}", u.called());
        if let Some(url) = &u.release_notes {
            let _ = writeln!(b, "  - release notes: {url}");
        }
        if let Some(url) = &u.compare {
            let _ = writeln!(b, "  - upstream changes: {url}");
        }
        if let Some(c) = &u.commit {
            let _ = writeln!(b, "  - upstream commit: `{c}`");
        }
        for (what, text) in u.chart.iter().flat_map(chart_lines) {
            let _ = writeln!(b, "  - {}: {text}", what.to_lowercase());
        }
    }
}

/// A chart's lines under its versions: the app version it ships (and the
/// one before), its `home` and its `sources`, each link only when it is
/// an http(s) URL ([`link`]).
fn chart_lines(c: &Chart) -> Vec<(&'static str, String)> {
    let mut lines = Vec::new();
    match (&c.app_from, &c.app_to) {
        (Some(from), Some(to)) if from != to => {
            lines.push(("App version", format!("{} → {}", code(from), code(to))));
        }
        (_, Some(to)) => lines.push(("App version", code(to))),
        (_, None) => {}
    }
    if let Some(home) = c.home.as_deref().and_then(link) {
        lines.push(("Chart home", home));
    }
    let sources: Vec<String> = c.sources.iter().filter_map(|s| link(s)).collect();
    if !sources.is_empty() {
        lines.push(("Chart sources", sources.join(", ")));
    }
    lines
}

/// `url` as a Markdown autolink (`<https://…>`) when it is an absolute
/// http(s) URL; its serialized form percent-encodes every space, `<`, `>`,
/// quote, backtick and control character, so upstream text cannot end the
/// link or start other Markdown. `None` for anything else (`javascript:`,
/// a relative path, text that is not a URL).
fn link(url: &str) -> Option<String> {
    let parsed = reqwest::Url::parse(url.trim()).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return None;
    }
    Some(format!("<{parsed}>"))
}

fn patches(b: &mut String, patches: &[Patch]) {
    if patches.is_empty() {
        return;
    }
    let _ = writeln!(b, "\n### Patches\n");
    for p in patches {
        let _ = writeln!(b, "- `{}` (`{}`):", p.name, p.file);
        if p.new {
            let _ = writeln!(
                b,
                "  - new in this change: every hunk below is to be reviewed"
            );
        }
        for s in &p.sections {
            let _ = writeln!(b, "  - on {}: {}", code(&s.target), section(s));
        }
        changes(
            b,
            "adopted**: made by this patch, not by the base's (a hand edit folded in, or written into it)",
            &p.adopted,
        );
        changes(
            b,
            "dropped**: made by the base's patch, no longer by this one",
            &p.dropped,
        );
        if !p.new && p.adopted.is_empty() && p.dropped.is_empty() {
            let moved = p.sections.iter().any(|s| !s.moved.is_empty());
            let _ = writeln!(
                b,
                "  - the same changes as the base's patch, change for change{}",
                if moved {
                    "; only where they apply moved"
                } else {
                    ""
                }
            );
        }
    }
}

/// How one section landed, in words.
pub(super) fn section(s: &Section) -> String {
    let moved: Vec<String> = s
        .moved
        .iter()
        .map(|m| format!("hunk {} {:+}", m.hunk, m.offset))
        .collect();
    let text = match s.result.as_str() {
        "exact" => "applies exactly".to_owned(),
        "offset" => format!("applies at an offset ({})", moved.join(", ")),
        "merged" => "merged (3-way): the strict apply failed, the merge is clean".to_owned(),
        "conflict" => "conflicts with the new upstream".to_owned(),
        "already-upstream" => "already upstream: the new release makes this change".to_owned(),
        "not-recomputed" => "not recomputed".to_owned(),
        other => other.to_owned(),
    };
    match &s.note {
        Some(note) => format!("{text} ({note})"),
        None => text,
    }
}

fn changes(b: &mut String, what: &str, changes: &[HunkChange]) {
    if changes.is_empty() {
        return;
    }
    let n = changes.len();
    let _ = writeln!(
        b,
        "  - **{n} change{} {what}; review {}:",
        plural(n),
        if n == 1 { "it" } else { "them" }
    );
    for c in changes {
        let _ = writeln!(b, "\n    ```diff\n    --- {0}\n    +++ {0}", c.target);
        let _ = writeln!(b, "    {}", c.header);
        for l in &c.removed {
            let _ = writeln!(b, "    -{l}");
        }
        for l in &c.added {
            let _ = writeln!(b, "    +{l}");
        }
        let _ = writeln!(b, "    ```");
    }
    b.push('\n');
}

/// The builders (each named when the package has several images), then
/// the pinned images.
fn image(b: &mut String, builders: &[(Option<&str>, &Builder)], images: &[Image]) {
    if builders.is_empty() && images.is_empty() {
        return;
    }
    let _ = writeln!(b, "\n### Image\n");
    for (name, x) in builders {
        let _ = writeln!(b, "- {}", builder_line(*name, x));
    }
    for i in images {
        image_line(b, i);
    }
}

/// One pinned image, named when the package has several.
fn image_line(b: &mut String, i: &Image) {
    match &i.name {
        Some(name) => {
            let _ = write!(b, "- Pinned image `{name}`: `{}`", i.reference);
        }
        None => {
            let _ = write!(b, "- Pinned image: `{}`", i.reference);
        }
    }
    match &i.before {
        Some(before) => {
            let _ = writeln!(b, " (was `{before}`)");
        }
        None => {
            let _ = writeln!(b, " (unchanged)");
        }
    }
    if i.platforms.is_empty() {
        let _ = writeln!(
            b,
            "  - per-platform digests: not in the lock (`revendor image pin` records them)"
        );
    }
    for p in &i.platforms {
        let _ = writeln!(b, "  - `{}`: `{}`", p.platform, p.digest);
    }
}

fn builder_line(name: Option<&str>, x: &Builder) -> String {
    let called = match name {
        Some(name) => format!("Builder of `{name}`"),
        None => "Builder".to_owned(),
    };
    let mut line = match &x.image {
        Some(image) => format!("{called}: `{image}` in `{}`", x.dockerfile),
        None => format!("{called}: no golang stage in `{}`", x.dockerfile),
    };
    if let Some(before) = &x.image_before {
        let _ = write!(line, " (was `{before}`)");
    }
    if let Some(go) = &x.go {
        let _ = write!(line, ", Go {go}");
    }
    match &x.go_directive {
        Some(d) => {
            let _ = write!(line, "; upstream's go.mod: `go {d}`");
        }
        None => line.push_str("; upstream's go.mod `go` directive: not recorded in the lock"),
    }
    if let Some(before) = &x.go_directive_before {
        let _ = write!(line, " (was `go {before}`)");
    }
    line.push_str(match x.satisfied {
        Some(true) => ": satisfied",
        Some(false) => ": **not satisfied**, the builder's Go is older",
        None => "",
    });
    line
}

fn markers(b: &mut String, markers: &[Marker]) {
    if markers.is_empty() {
        return;
    }
    let _ = writeln!(b, "\n### Markers\n");
    for m in markers {
        let value = match &m.value {
            Some(v) => format!("{} in `{}`", code(&format!("# {}: {v}", m.key)), m.file),
            None => format!("no `# {}:` line in `{}`", m.key, m.file),
        };
        let before = m
            .before
            .as_ref()
            .map(|v| format!(" (was {v})"))
            .unwrap_or_default();
        let offline = match &m.offline {
            None => "agrees with its `expect`".to_owned(),
            Some(message) => format!("**offline: {message}**"),
        };
        let online = match (&m.reverified, &m.resolver) {
            (Reverified::NoResolver, _) | (_, None) => {
                "no online resolver, so compared offline only".to_owned()
            }
            (Reverified::Offline, Some(_)) => "not re-verified (offline)".to_owned(),
            (Reverified::Agrees, Some(r)) => format!(
                "re-verified online by the `{r}` resolver: the release it names ships the pinned version it vouches for"
            ),
            (Reverified::Disagrees(message), Some(r)) => {
                format!("**re-verified online by the `{r}` resolver: {message}**")
            }
            (Reverified::Failed(why), Some(r)) => {
                format!("not re-verified: the `{r}` resolver could not run ({why})")
            }
        };
        let _ = writeln!(b, "- `{}`: {value}{before}; {offline}; {online}", m.name);
    }
}

/// The files of vendored directories upstream (`named`, when there are
/// several) added and removed.
fn arrived(
    b: &mut String,
    named: Option<&str>,
    added: &[String],
    removed: &[String],
    most: Option<usize>,
) {
    let upstream = named.map_or_else(|| "upstream".to_owned(), |n| format!("upstream `{n}`"));
    for (list, what) in [
        (added, "added, vendored now"),
        (removed, "removed, deleted here"),
    ] {
        if !list.is_empty() {
            let _ = writeln!(b, "\nFiles {upstream} {what}:\n");
            let (shown, left) = first(list, most);
            for f in shown {
                let _ = writeln!(b, "- {}", code(f));
            }
            if left > 0 {
                let _ = writeln!(b, "- {}", left_out(left));
            }
        }
    }
}

fn diffstat(b: &mut String, stats: &[FileStat], most: Option<usize>) {
    if stats.is_empty() {
        return;
    }
    let _ = writeln!(b, "\n### Upstream changes in the vendored files\n\n```text");
    let (shown, left) = first(stats, most);
    let width = shown.iter().map(|s| s.file.len()).max().unwrap_or(0);
    let (mut added, mut removed, mut compared) = (0, 0, 0);
    // Every file counts in the totals, the cut ones too.
    for (at, s) in stats.iter().enumerate() {
        let what = match (s.status.as_str(), &s.note) {
            ("unknown", note) => format!("not compared: {}", note.as_deref().unwrap_or("")),
            (status, _) => {
                compared += 1;
                added += s.added;
                removed += s.removed;
                let tag = match status {
                    "added" => " (new)",
                    "removed" => " (gone)",
                    _ => "",
                };
                format!("+{} -{}{tag}", s.added, s.removed)
            }
        };
        if at < shown.len() {
            let _ = writeln!(b, " {:width$} | {what}", s.file);
        }
    }
    if left > 0 {
        let _ = writeln!(b, " {}", left_out(left));
    }
    if compared > 0 {
        let _ = writeln!(
            b,
            " {compared} file{} compared, {added} insertion{}(+), {removed} deletion{}(-)",
            plural(compared),
            plural(added),
            plural(removed)
        );
    }
    b.push_str("```\n");
}

fn adaptations(b: &mut String, s: &Summary, most: Option<usize>) {
    if s.adaptations.is_empty() {
        return;
    }
    let _ = write!(
        b,
        "\n### Adaptations\n\n{}",
        adaptation_lines(s, most, code)
    );
}

/// `Adaptations:` and one `- file: change` line per changed file (the first
/// `most` of them, when cut), as cozystack's upgrade commits list them, the
/// file as `quote` writes it (a code span in the body); shared with the
/// commit message, which lists them all, as they are.
pub(super) fn adaptation_lines(
    s: &Summary,
    most: Option<usize>,
    quote: fn(&str) -> String,
) -> String {
    let mut out = String::from("Adaptations:\n");
    let (shown, left) = first(&s.adaptations, most);
    for a in shown {
        let _ = writeln!(out, "- {}: {}", quote(&a.file), a.change);
    }
    if left > 0 {
        let _ = writeln!(out, "- {}", left_out(left));
    }
    out
}

fn checks(b: &mut String, c: &Checks) {
    let _ = writeln!(b, "\n### Checks\n");
    if c.errors == 0 && c.warnings == 0 {
        let _ = writeln!(b, "- `{}` on the working tree: clean", c.command);
        return;
    }
    let _ = writeln!(
        b,
        "- `{}` on the working tree: {} error{}, {} warning{}:",
        c.command,
        c.errors,
        plural(c.errors),
        c.warnings,
        plural(c.warnings)
    );
    for f in &c.findings {
        let _ = writeln!(b, "  - {f}");
    }
}

/// `text` as a Markdown code span nothing in it can end or break out of:
/// fenced with one backtick more than its longest run of them, padded with
/// a space when it starts or ends with one, and its control characters
/// (a line break would end the list item and start a block of its own)
/// written as escapes. Names and versions from upstream go through it, and
/// the step summary's table cells (`report`), pipes escaped there.
pub fn code(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            escaped.extend(c.escape_unicode());
        } else {
            escaped.push(c);
        }
    }
    let longest = escaped.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if escaped.starts_with('`') || escaped.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{escaped}{pad}{fence}")
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::super::summary::*;
    use super::*;

    /// A backtick or a line break in an upstream name never ends the code
    /// span (issue 21: a mention, a link and HTML rendered from a file name).
    #[test]
    fn a_charts_app_versions_and_links_are_named_and_only_http_links_kept() {
        let chart = Chart {
            app_from: Some("1.12.3".into()),
            app_to: Some("1.13.1".into()),
            home: Some("javascript:alert(1)".into()),
            sources: vec![
                "https://github.com/coredns/helm".into(),
                "https://evil.example/a b>`<x>)".into(),
                "not a url".into(),
            ],
        };
        let lines = chart_lines(&chart);
        assert_eq!(
            lines,
            [
                ("App version", "`1.12.3` → `1.13.1`".to_owned()),
                (
                    "Chart sources",
                    "<https://github.com/coredns/helm>, <https://evil.example/a%20b%3E%60%3Cx%3E)>"
                        .to_owned()
                ),
            ]
        );
        let same = Chart {
            app_from: Some("1.0".into()),
            app_to: Some("1.0".into()),
            home: Some("http://h.example/".into()),
            ..Chart::default()
        };
        assert_eq!(
            chart_lines(&same),
            [
                ("App version", "`1.0`".to_owned()),
                ("Chart home", "<http://h.example/>".to_owned())
            ]
        );
    }

    #[test]
    fn a_code_span_holds_any_name() {
        assert_eq!(code("a.yml"), "`a.yml`");
        assert_eq!(code("a`@x"), "``a`@x``");
        assert_eq!(code("`a``"), "``` `a`` ```");
        assert_eq!(code("a\n- b"), "`a\\u{a}- b`");
    }

    fn sample() -> Summary {
        Summary {
            package: "packages/system/multus".into(),
            upstream: Upstream {
                source: "github:k8snetworkplumbingwg/multus-cni".into(),
                name: "multus-cni".into(),
                url: Some("https://github.com/k8snetworkplumbingwg/multus-cni".into()),
                from: Some("v4.2.3".into()),
                to: "v4.3.0".into(),
                release_notes: Some(
                    "https://github.com/k8snetworkplumbingwg/multus-cni/releases/tag/v4.3.0".into(),
                ),
                compare: Some(
                    "https://github.com/k8snetworkplumbingwg/multus-cni/compare/v4.2.3...v4.3.0"
                        .into(),
                ),
                commit: Some("db30741512795c258b3ba383a571a66850e8baac".into()),
                ..Upstream::default()
            },
            patches: vec![
                Patch {
                    name: "customize-deployment".into(),
                    file: "patches/customize-deployment.patch".into(),
                    applies_to: "vendor".into(),
                    sections: vec![Section {
                        target: "deployments/multus-daemonset-thick.yml".into(),
                        result: "offset".into(),
                        moved: vec![HunkMove { hunk: 5, offset: 1 }],
                        note: None,
                    }],
                    adopted: vec![HunkChange {
                        target: "templates/multus-daemonset-thick.yml".into(),
                        header: "@@ -60,6 +60,7 @@".into(),
                        removed: vec![],
                        added: vec!["        \"multusMasterCNI\": \"05-cilium.conflist\",".into()],
                    }],
                    dropped: vec![],
                    new: false,
                },
                Patch {
                    name: "fix-del-without-cache".into(),
                    file: "images/multus-cni/patches/fix-del-without-cache.diff".into(),
                    applies_to: "source".into(),
                    sections: vec![Section {
                        target: "pkg/multus/multus.go".into(),
                        result: "offset".into(),
                        moved: vec![HunkMove {
                            hunk: 1,
                            offset: 106,
                        }],
                        note: None,
                    }],
                    ..Patch::default()
                },
            ],
            checks: Checks {
                command: "revendor check --offline".into(),
                ..Checks::default()
            },
            ..Summary::default()
        }
    }

    #[test]
    fn several_upstreams_are_each_named_with_the_files_they_added_and_removed() {
        let mut s = sample();
        let up = |label: &str, from: &str, to: &str| Upstream {
            label: Some(label.into()),
            source: format!("github:o/{label}"),
            name: label.into(),
            from: Some(from.into()),
            to: to.into(),
            ..Upstream::default()
        };
        let mut chart = up("chart", "v1.0.0", "v1.1.0");
        chart.added = vec!["charts/app/new.yaml".into()];
        chart.removed = vec!["charts/app/old.yaml".into()];
        s.upstreams = vec![chart, up("tool", "v2.0.0", "v2.0.0")];
        s.images = vec![
            Image {
                name: Some("a".into()),
                reference: "r/a:v1@sha256:00".into(),
                ..Image::default()
            },
            Image {
                name: Some("b".into()),
                reference: "r/b:v1@sha256:11".into(),
                ..Image::default()
            },
        ];
        assert_eq!(
            title(&s),
            "chore(packages/system/multus): bump chart to v1.1.0"
        );
        let b = body(&s);
        for line in [
            "- `chart`, `github:o/chart`: `v1.0.0` → `v1.1.0`\n",
            "- `tool`, `github:o/tool`: `v2.0.0` (unchanged)\n",
            "Files upstream `chart` added, vendored now:\n\n- `charts/app/new.yaml`\n",
            "Files upstream `chart` removed, deleted here:\n\n- `charts/app/old.yaml`\n",
            "- Pinned image `a`: `r/a:v1@sha256:00`",
            "- Pinned image `b`: `r/b:v1@sha256:11`",
        ] {
            assert!(b.contains(line), "{line:?} not in:\n{b}");
        }
        s.upstreams[0].from = Some("v1.1.0".into());
        assert_eq!(
            title(&s),
            "chore(packages/system/multus): refresh vendored chart v1.1.0, tool v2.0.0"
        );
    }

    #[test]
    fn several_images_name_each_builder() {
        let mut s = sample();
        let builder = |dockerfile: &str, go: &str, directive: &str, satisfied: bool| Builder {
            dockerfile: dockerfile.into(),
            image: Some(format!("golang:{go}")),
            go: Some(go.into()),
            go_directive: Some(directive.into()),
            satisfied: Some(satisfied),
            ..Builder::default()
        };
        s.builder = Some(builder("images/a/Dockerfile", "1.26", "1.25.0", true));
        s.builders = vec![
            ImageBuilder {
                name: Some("a".into()),
                builder: builder("images/a/Dockerfile", "1.26", "1.25.0", true),
            },
            ImageBuilder {
                name: Some("b".into()),
                builder: builder("images/b/Dockerfile", "1.25", "1.26.1", false),
            },
        ];
        let b = body(&s);
        for line in [
            "- Builder of `a`: `golang:1.26` in `images/a/Dockerfile`, Go 1.26; upstream's go.mod: `go 1.25.0`: satisfied\n",
            "- Builder of `b`: `golang:1.25` in `images/b/Dockerfile`, Go 1.25; upstream's go.mod: `go 1.26.1`: **not satisfied**, the builder's Go is older\n",
        ] {
            assert!(b.contains(line), "{line:?} not in:\n{b}");
        }
        assert!(!b.contains("- Builder: "), "{b}");
    }

    #[test]
    fn the_title_is_a_conventional_commit_naming_the_package_path() {
        assert_eq!(
            title(&sample()),
            "chore(packages/system/multus): bump multus-cni to v4.3.0"
        );
        let mut same = sample();
        same.upstream.from = Some("v4.3.0".into());
        assert_eq!(
            title(&same),
            "chore(packages/system/multus): refresh vendored multus-cni v4.3.0"
        );
        same.upstream.from = None;
        assert_eq!(
            title(&same),
            "chore(packages/system/multus): vendor multus-cni v4.3.0"
        );
    }

    /// issue 10: a patch that gained a hunk must never read as "the changes
    /// are the same"; only one whose changes did not change may.
    #[test]
    fn a_patch_that_gained_a_change_quotes_it_and_never_claims_sameness() {
        let body = body(&sample());
        let (first, second) = body.split_once("- `fix-del-without-cache`").unwrap();
        assert!(
            first.contains("**1 change adopted**: made by this patch, not by the base's"),
            "{first}"
        );
        assert!(
            first.contains("    +        \"multusMasterCNI\": \"05-cilium.conflist\","),
            "{first}"
        );
        assert!(!first.contains("the same changes"), "{first}");
        assert!(
            second.contains("the same changes as the base's patch"),
            "{second}"
        );
        assert!(
            second.contains("applies at an offset (hunk 1 +106)"),
            "{second}"
        );
    }

    #[test]
    fn a_marker_never_reads_as_reverified_when_its_resolver_did_not_run() {
        let mut s = sample();
        s.markers = vec![Marker {
            name: "talos".into(),
            file: "images/multus-cni/Dockerfile".into(),
            key: "talos-cni-plugins-checked-against".into(),
            value: Some("v1.13.6".into()),
            resolver: Some("talos".into()),
            reverified: Reverified::Offline,
            ..Marker::default()
        }];
        let text = body(&s);
        assert!(
            text.contains("agrees with its `expect`; not re-verified (offline)"),
            "{text}"
        );
        assert!(!text.contains("re-verified online"), "{text}");
    }

    #[test]
    fn the_same_summary_gives_the_same_bytes() {
        assert_eq!(body(&sample()), body(&sample().clone()));
    }

    /// A chart of 3,000 files: every list would not fit GitHub's limit, so each is cut
    /// with the count it left out, and the totals still count every file.
    #[test]
    fn a_body_too_long_for_github_cuts_its_file_lists_and_says_so() {
        let mut s = sample();
        let files: Vec<String> = (0..3000)
            .map(|i| format!("charts/big/templates/file-{i:04}.yaml"))
            .collect();
        s.diffstat = files
            .iter()
            .map(|f| FileStat {
                file: f.clone(),
                added: 1,
                removed: 0,
                status: "changed".into(),
                note: None,
            })
            .collect();
        s.added = files.clone();
        s.adaptations = files
            .iter()
            .map(|f| Adaptation {
                file: f.clone(),
                change: "rendered from multus-cni v4.3.0 with its patches (+1 -0)".into(),
            })
            .collect();
        assert!(render(&s, None).chars().count() > BODY_LIMIT);
        let b = body(&s);
        assert!(b.chars().count() <= BODY_LIMIT, "{}", b.len());
        assert!(b.contains("- `charts/big/templates/file-0000.yaml`"), "{b}");
        assert!(!b.contains("file-2999"), "{b}");
        assert!(
            b.contains(" 3000 files compared, 3000 insertions(+), 0 deletions(-)"),
            "{b}"
        );
        assert!(
            b.contains("… and 2900 more (`revendor pr --format json` lists every one"),
            "{b}"
        );
        assert!(
            b.contains("### Checks"),
            "the sections after the lists stay"
        );
        assert!(
            super::super::message::commit_message(&title(&s), &s, &[])
                .contains("- charts/big/templates/file-2999.yaml: rendered")
        );
    }

    /// Even with every list cut to nothing a body can be too long (a patch quoting a
    /// huge change): it is cut at a line and says where the rest is.
    #[test]
    fn a_body_still_too_long_is_cut_at_a_line_and_says_so() {
        let mut s = sample();
        s.patches[0].adopted[0].added = (0..20_000).map(|i| format!("line {i}")).collect();
        let b = body(&s);
        assert!(b.chars().count() <= BODY_LIMIT, "{}", b.len());
        assert!(b.ends_with("hold the rest)*\n"), "{}", &b[b.len() - 200..]);
    }

    #[test]
    fn a_body_that_fits_is_not_cut() {
        assert_eq!(body(&sample()), render(&sample(), None));
    }
}
