//! Where a line diff may be cut into independent pieces: patience anchors.
//!
//! An anchor is a line that occurs exactly once in each of two texts; of those, the longest
//! chain in the same order in both is kept (patience sorting, `O(n log n)`). Anchors next to
//! each other in both texts form a run of common lines, and each run is cut in its middle:
//! what lies between two cuts is diffed on its own.
//!
//! Why: histogram diff builds its histogram anew for each common block it finds, so one call on
//! a whole file costs the file's length times the number of changes (a 1M-line file with
//! 10,000 changes: a minute). Cut at anchors it is thousands of small diffs, linear in all.
//! A cut in the middle of a run leaves the diff of each piece room to slide its changes as it
//! would on the whole file.

use imara_diff::Token;

/// An aligned position in two texts: line `.0` of the old one is line `.1` of the new one.
pub(crate) type Cut = (usize, usize);

/// Where to cut base against ours, and base against theirs.
pub(crate) type Cuts = (Vec<Cut>, Vec<Cut>);

/// Aligned cut positions `(old, new)`, strictly increasing in both, inside runs of common lines.
pub(crate) fn cuts(old: &[Token], new: &[Token], tokens: u32) -> Vec<Cut> {
    middles(anchors(old, new, tokens).into_iter().map(|(o, n)| [o, n]))
        .map(|[o, n]| (o as usize, n as usize))
        .collect()
}

/// Cut positions for the two diffs of a 3-way merge, `base` against `ours` and against
/// `theirs`, at the same lines of `base`: where both sides made the same change, both diffs
/// then see the same pieces and place the change alike (cut apart, a repeated line can go to
/// different places in each, and a change both made looks like two).
pub(crate) fn shared_cuts(base: &[Token], ours: &[Token], theirs: &[Token], tokens: u32) -> Cuts {
    let to_ours = anchors(base, ours, tokens);
    let to_theirs = anchors(base, theirs, tokens);
    let mut theirs_at = to_theirs.iter().peekable();
    // Base lines anchored on both sides, as (base, ours, theirs): both lists go up in base.
    let both = to_ours.iter().filter_map(move |&(b, o)| {
        while theirs_at.next_if(|&&(tb, _)| tb < b).is_some() {}
        theirs_at
            .next_if(|&&(tb, _)| tb == b)
            .map(|&(_, t)| [b, o, t])
    });
    middles(both)
        .map(|[b, o, t]| {
            let (b, o, t) = (b as usize, o as usize, t as usize);
            ((b, o), (b, t))
        })
        .unzip()
}

/// The middle of each run of `anchors` that follow one another in every text.
fn middles<const N: usize>(
    anchors: impl Iterator<Item = [u32; N]>,
) -> impl Iterator<Item = [u32; N]> {
    let mut anchors = anchors.peekable();
    std::iter::from_fn(move || {
        let first = anchors.next()?;
        let mut len = 1;
        while anchors
            .next_if(|next| (0..N).all(|k| next[k] == first[k] + len))
            .is_some()
        {
            len += 1;
        }
        Some(first.map(|at| at + len / 2))
    })
}

/// How often a token occurs in each text (0, 1, or 2 for more), and where it last is in `new`.
#[derive(Clone, Copy, Default)]
struct Seen {
    old: u8,
    new: u8,
    new_at: u32,
}

/// The longest chain of lines unique in both texts that keeps their order in both (line
/// numbers as `u32`, as imara-diff's tokens: a million anchors take 8 MB).
fn anchors(old: &[Token], new: &[Token], tokens: u32) -> Vec<(u32, u32)> {
    let mut seen = vec![Seen::default(); tokens as usize];
    for (at, &token) in new.iter().enumerate() {
        let s = &mut seen[u32::from(token) as usize];
        s.new = s.new.saturating_add(1).min(2);
        s.new_at = at as u32;
    }
    for &token in old {
        let s = &mut seen[u32::from(token) as usize];
        s.old = s.old.saturating_add(1).min(2);
    }
    let unique: Vec<(u32, u32)> = old
        .iter()
        .enumerate()
        .filter_map(|(at, &token)| {
            let s = seen[u32::from(token) as usize];
            (s.old == 1 && s.new == 1).then_some((at as u32, s.new_at))
        })
        .collect();
    drop(seen);
    longest_increasing(&unique)
}

/// The longest subsequence of `pairs` (increasing in `.0`) that increases in `.1` too.
fn longest_increasing(pairs: &[(u32, u32)]) -> Vec<(u32, u32)> {
    const NONE: u32 = u32::MAX;
    // tails[k]: the pair ending the best chain of length k + 1 found so far (smallest `.1`).
    let mut tails: Vec<u32> = Vec::new();
    let mut previous: Vec<u32> = Vec::with_capacity(pairs.len());
    for (i, &(_, n)) in pairs.iter().enumerate() {
        // Texts are mostly in the same order: extending the longest chain needs no search.
        let k = match tails.last() {
            Some(&t) if pairs[t as usize].1 >= n => {
                tails.partition_point(|&t| pairs[t as usize].1 < n)
            }
            _ => tails.len(),
        };
        previous.push(if k == 0 { NONE } else { tails[k - 1] });
        if k == tails.len() {
            tails.push(i as u32);
        } else {
            tails[k] = i as u32;
        }
    }
    let mut chain = Vec::with_capacity(tails.len());
    let mut at = tails.last().copied().unwrap_or(NONE);
    while at != NONE {
        chain.push(pairs[at as usize]);
        at = previous[at as usize];
    }
    chain.reverse();
    chain
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Vec<Token> {
        text.bytes().map(|b| Token::from(u32::from(b))).collect()
    }

    #[test]
    fn anchors_are_unique_lines_in_order() {
        // `x` repeats and `c`/`d` swap: neither can anchor both ways.
        let (old, new) = (tokens("abxcdxe"), tokens("xabdce"));
        let found = anchors(&old, &new, 256);
        assert_eq!(found, [(0, 1), (1, 2), (4, 3), (6, 5)]);
    }

    #[test]
    fn runs_are_cut_in_their_middle() {
        let (old, new) = (tokens("abcdXefg"), tokens("abcdYefg"));
        assert_eq!(cuts(&old, &new, 256), [(2, 2), (6, 6)]);
        assert_eq!(cuts(&tokens("aa"), &tokens("aa"), 256), []);
    }

    #[test]
    fn shared_cuts_are_at_the_same_base_lines() {
        // `b` anchors base and ours only, `d e` and `e f` follow on in one side only: the runs
        // are those of all three texts.
        let (base, ours, theirs) = (tokens("abcdefgh"), tokens("abcdXefgh"), tokens("acdefgYh"));
        let (to_ours, to_theirs) = shared_cuts(&base, &ours, &theirs, 256);
        assert_eq!(to_ours, [(0, 0), (3, 3), (5, 6), (7, 8)]);
        assert_eq!(to_theirs, [(0, 0), (3, 2), (5, 4), (7, 7)]);
    }

    #[test]
    fn longest_increasing_keeps_the_longest_chain() {
        let pairs = [(0, 3), (1, 0), (2, 1), (3, 4), (4, 2)];
        assert_eq!(longest_increasing(&pairs), [(1, 0), (2, 1), (4, 2)]);
        assert_eq!(longest_increasing(&[]), []);
    }
}
