//! GitHub's limits on what one workflow step may write, kept by revendor so
//! nothing it reports is dropped without a word.
//!
//! 1. Annotations: GitHub shows at most 10 of each kind (`error`,
//!    `warning`, `notice`) per step and drops the rest silently. revendor
//!    writes the first [`ANNOTATIONS_PER_KIND`] of each kind, then one plain
//!    log line per kind saying how many more there are; the step summary
//!    lists them all.
//! 2. The step summary: GitHub refuses a `$GITHUB_STEP_SUMMARY` over 1 MiB
//!    and shows none of it. revendor appends only what fits beside what the
//!    step already wrote, cut at a line, with a last line saying what was
//!    cut.

/// Annotations of one kind GitHub shows per step.
pub const ANNOTATIONS_PER_KIND: usize = 10;

/// The most a step summary may hold, in bytes.
pub const SUMMARY_BYTES: u64 = 1024 * 1024;

/// The kinds of annotation, in the order their summary lines are written.
const KINDS: [(&str, &str); 3] = [
    ("error", "errors"),
    ("warning", "warnings"),
    ("notice", "notices"),
];

/// `commands` (one workflow command per line, as this module's callers
/// form them) with at most [`ANNOTATIONS_PER_KIND`] annotations of each
/// kind, in their order, then `and N more errors: see the step summary`
/// for each kind that had more. Lines that are no annotation stay.
pub fn cap_annotations(commands: &str) -> String {
    let mut shown = [0usize; KINDS.len()];
    let mut out = String::with_capacity(commands.len());
    for line in commands.split_inclusive('\n') {
        let kind = KINDS.iter().position(|(name, _)| {
            line.strip_prefix("::")
                .and_then(|rest| rest.strip_prefix(name))
                .is_some_and(|rest| rest.starts_with([' ', ':']))
        });
        match kind {
            Some(k) if shown[k] >= ANNOTATIONS_PER_KIND => shown[k] += 1,
            Some(k) => {
                shown[k] += 1;
                out.push_str(line);
            }
            None => out.push_str(line),
        }
    }
    for (n, (name, plural)) in shown.iter().zip(KINDS) {
        let more = n.saturating_sub(ANNOTATIONS_PER_KIND);
        if more > 0 {
            let word = if more == 1 { name } else { plural };
            out.push_str(&format!(
                "and {more} more {word}: see the step summary (GitHub shows {ANNOTATIONS_PER_KIND} of each kind per step)\n"
            ));
        }
    }
    out
}

/// `markdown` as it fits in `room` bytes: whole when it does; else cut at
/// the last line break that leaves room for a closing line saying how many
/// lines and bytes were cut; empty when not even that line fits.
pub fn fit_summary(markdown: &str, room: u64) -> String {
    let room = usize::try_from(room).unwrap_or(usize::MAX);
    if markdown.len() <= room {
        return markdown.to_owned();
    }
    let note = |lines: usize, bytes: usize| {
        format!(
            "\n**revendor cut this summary here:** {lines} more lines ({bytes} bytes) do not fit in GitHub's 1 MiB step summary; `--format json` has every finding.\n"
        )
    };
    // The note is at most this long, whatever it counts.
    let longest = note(markdown.len(), markdown.len()).len();
    let Some(budget) = room.checked_sub(longest) else {
        return String::new();
    };
    let cut = markdown[..=floor_boundary(markdown, budget)]
        .rfind('\n')
        .map_or(0, |at| at + 1);
    let rest = &markdown[cut..];
    let mut out = markdown[..cut].to_owned();
    out.push_str(&note(rest.lines().count(), rest.len()));
    out
}

/// The largest char boundary of `s` at or below `at`, not past its end.
fn floor_boundary(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len().saturating_sub(1));
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_is_capped_at_ten_and_the_rest_counted() {
        let mut commands = String::new();
        for i in 0..25 {
            commands.push_str(&format!("::error file=a,line={i}::e{i}\n"));
        }
        commands.push_str("::warning::w\n::notice::n\nplain\n");
        for i in 0..11 {
            commands.push_str(&format!("::warning title=t::w{i}\n"));
        }
        let out = cap_annotations(&commands);
        assert_eq!(out.matches("::error ").count(), 10);
        assert!(out.contains("::error file=a,line=9::e9\n"));
        assert!(!out.contains("e10"));
        assert_eq!(out.matches("::warning").count(), 10);
        assert!(out.contains("::notice::n\nplain\n"));
        assert!(out.ends_with(
            "and 15 more errors: see the step summary (GitHub shows 10 of each kind per step)\n\
             and 2 more warnings: see the step summary (GitHub shows 10 of each kind per step)\n"
        ));
        let few = "::error::a\n::warning::b\n";
        assert_eq!(cap_annotations(few), few);
    }

    #[test]
    fn a_summary_over_its_room_is_cut_at_a_line_with_a_last_line_saying_so() {
        let markdown: String = (0..1000).map(|i| format!("| row {i} | é |\n")).collect();
        assert_eq!(fit_summary(&markdown, 1 << 20), markdown);
        let fitted = fit_summary(&markdown, 2000);
        assert!(fitted.len() <= 2000, "{}", fitted.len());
        let (kept, note) = fitted.split_once("\n**revendor cut").unwrap();
        assert!(
            markdown.starts_with(kept) && kept.ends_with("|\n"),
            "{kept}"
        );
        let cut = &markdown[kept.len()..];
        assert!(
            note.contains(&format!(
                "{} more lines ({} bytes)",
                cut.lines().count(),
                cut.len()
            )),
            "{note}"
        );
        assert_eq!(fit_summary(&markdown, 20), "");
    }
}
