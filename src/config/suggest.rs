//! "Did you mean": the valid key nearest to a misspelt one.
//!
//! serde names the keys valid in the table where an unknown one was found
//! (`unknown field `trak`, expected one of `github`, `git`, `version`,
//! `track`, …`), so the candidates come from its message and are always the
//! keys of that table. The nearest is by edit distance, a swap of two
//! neighbouring letters counting as one edit (`verison`), and only within a
//! third of the key's length, so a key that is simply wrong gets no guess.

/// `did you mean `track`?` for serde's unknown-field message, when a valid
/// key is near enough.
pub(super) fn unknown_key(message: &str) -> Option<String> {
    let rest = message.trim().strip_prefix("unknown field `")?;
    let (key, rest) = rest.split_once('`')?;
    let expected = rest
        .trim_start_matches(',')
        .trim()
        .strip_prefix("expected")?;
    // The candidates are the words between backticks.
    let candidates = expected.split('`').skip(1).step_by(2);
    closest(key, candidates).map(|k| format!("did you mean `{k}`?"))
}

/// The candidate nearest to `word`, if any is within a third of its length
/// (at least one edit); the first of equally near ones.
fn closest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .map(|c| (distance(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Edits (insert, delete, substitute, swap neighbours) from `a` to `b`: the
/// optimal string alignment distance.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const UPSTREAM: &str = "unknown field `trak`, expected one of `github`, `git`, `version`, `track`, `allow-prerelease`";

    #[test]
    fn a_typo_suggests_the_key_of_that_table() {
        assert_eq!(
            unknown_key(UPSTREAM).as_deref(),
            Some("did you mean `track`?")
        );
        let swapped = UPSTREAM.replace("`trak`", "`verison`");
        assert_eq!(
            unknown_key(&swapped).as_deref(),
            Some("did you mean `version`?")
        );
        let one = "unknown field `fiel`, expected `file`";
        assert_eq!(unknown_key(one).as_deref(), Some("did you mean `file`?"));
    }

    #[test]
    fn a_key_far_from_every_candidate_gets_no_guess() {
        let far = UPSTREAM.replace("`trak`", "`colour`");
        assert_eq!(unknown_key(&far), None);
        assert_eq!(unknown_key("missing field `version`"), None);
    }

    #[test]
    fn distance_counts_a_swap_as_one_edit() {
        assert_eq!(distance("trak", "track"), 1);
        assert_eq!(distance("verison", "version"), 1);
        assert_eq!(distance("", "git"), 3);
        assert_eq!(distance("github", "github"), 0);
    }
}
