//! The commit message of the upgrade: the title, the versions (of each
//! upstream, when there are several), each patch's
//! result, the `Adaptations:` lines, and the trailers (revendor's own, which
//! tells its commits from a maintainer's, and `Signed-off-by:` for DCO).

use std::fmt::Write;

use super::markdown::{adaptation_lines, section};
use super::summary::Summary;

/// The message for `summary` under `title` (the pull request's);
/// `trailers` (`Key`, `value`) end it, one per line, as git's trailer block.
pub fn commit_message(title: &str, s: &Summary, trailers: &[(String, String)]) -> String {
    let mut m = format!("{title}\n\n");
    let each = match s.upstreams.as_slice() {
        [] => std::slice::from_ref(&s.upstream),
        several => several,
    };
    for u in each {
        let name = if s.upstreams.is_empty() {
            u.name.as_str()
        } else {
            u.called()
        };
        match &u.from {
            Some(from) if *from != u.to => {
                let _ = writeln!(m, "{name} {from} -> {}", u.to);
            }
            _ => {
                let _ = writeln!(m, "{name} {}", u.to);
            }
        }
        if let Some(url) = u.compare.as_ref().or(u.release_notes.as_ref()) {
            let _ = writeln!(m, "{url}");
        }
    }
    if !s.patches.is_empty() {
        m.push_str("\nPatches:\n");
        for p in &s.patches {
            let results: Vec<String> = p.sections.iter().map(section).collect();
            let _ = write!(m, "- {}: {}", p.name, results.join("; "));
            if p.new {
                m.push_str("; new");
            }
            if !p.adopted.is_empty() {
                let _ = write!(m, "; {} change(s) adopted", p.adopted.len());
            }
            if !p.dropped.is_empty() {
                let _ = write!(m, "; {} change(s) dropped", p.dropped.len());
            }
            m.push('\n');
        }
    }
    if !s.adaptations.is_empty() {
        let _ = write!(m, "\n{}", adaptation_lines(s, None, |t: &str| t.to_owned()));
    }
    if !trailers.is_empty() {
        m.push('\n');
        for (k, v) in trailers {
            let _ = writeln!(m, "{k}: {v}");
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::super::summary::{Adaptation, Upstream};
    use super::*;

    #[test]
    fn the_trailers_end_the_message() {
        let s = Summary {
            package: "packages/app".into(),
            upstream: Upstream {
                name: "app".into(),
                from: Some("v1.0.0".into()),
                to: "v1.1.0".into(),
                ..Upstream::default()
            },
            adaptations: vec![Adaptation {
                file: "vendor.toml".into(),
                change: "version v1.0.0 → v1.1.0".into(),
            }],
            ..Summary::default()
        };
        let trailers = [
            ("Revendor-Package".to_owned(), "packages/app".to_owned()),
            (
                "Signed-off-by".to_owned(),
                "A U Thor <a@example.com>".to_owned(),
            ),
        ];
        assert_eq!(
            commit_message(&crate::pr::title(&s), &s, &trailers),
            "chore(packages/app): bump app to v1.1.0\n\napp v1.0.0 -> v1.1.0\n\n\
             Adaptations:\n- vendor.toml: version v1.0.0 → v1.1.0\n\n\
             Revendor-Package: packages/app\nSigned-off-by: A U Thor <a@example.com>\n"
        );
    }
}
