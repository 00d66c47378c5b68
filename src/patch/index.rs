//! Where each line of a file occurs, so that placing a patch's hunks is linear in the file for
//! the whole patch, not per hunk (issue 23).
//!
//! The strict apply searches outward from where a hunk's header says it goes. A hunk whose
//! lines are not there (upstream changed its context: the 3-way merge's case) used to compare
//! every line of the file before failing, so a patch of a thousand such hunks read a
//! 100k-line file a thousand times. [`LineIndex`] is built once per file, the first time a
//! search goes past the lines near its start, and hands the search only the places where the
//! hunk's rarest line is: the same places in the same order, minus those that cannot match.
//!
//! It holds a hash and a position per line (16 bytes a line, no allocation per line); equal
//! hashes are only candidates, each checked byte for byte by the caller.

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher, Hasher};

/// Every line's hash with its 0-based position, sorted by hash, then position; and where
/// each hash's run of entries is, so that a line is found in one step rather than a binary
/// search, which at a million lines missed the CPU's caches at every step (issue 23).
pub(crate) struct LineIndex {
    entries: Vec<(u64, usize)>,
    runs: HashMap<u64, (usize, usize), BuildHasherDefault<Prehashed>>,
}

impl LineIndex {
    /// Indexes `lines`.
    pub(crate) fn new(lines: &[&[u8]]) -> LineIndex {
        let mut entries: Vec<(u64, usize)> = lines
            .iter()
            .enumerate()
            .map(|(at, line)| (hash(line), at))
            .collect();
        entries.sort_unstable();
        // Sized to the distinct lines, not all of them: a file of one line repeated
        // (a hostile upstream's 64 MiB of newlines) needs one slot, not one per line.
        let distinct = entries.chunk_by(|a, b| a.0 == b.0).count();
        let mut runs = HashMap::with_capacity_and_hasher(distinct, Default::default());
        for (start, run) in entries.chunk_by(|a, b| a.0 == b.0).scan(0, |at, run| {
            let start = *at;
            *at += run.len();
            Some((start, run))
        }) {
            runs.insert(run[0].0, (start, start + run.len()));
        }
        LineIndex { entries, runs }
    }

    /// The positions where `line` may be, ascending: a superset of where it is.
    fn positions(&self, line: &[u8]) -> impl ExactSizeIterator<Item = usize> + '_ {
        let (start, end) = self.runs.get(&hash(line)).copied().unwrap_or((0, 0));
        self.entries[start..end].iter().map(|&(_, at)| at)
    }

    fn count(&self, line: &[u8]) -> usize {
        self.positions(line).len()
    }

    /// The places in `lowest..=highest` where `pattern` may start, nearest `from` first and,
    /// at equal distance, the later first: the order of a search outward from `from`. Places
    /// within `near` of `from` are left out (the caller tried them).
    pub(crate) fn candidates(
        &self,
        pattern: &[&[u8]],
        from: isize,
        (lowest, highest): (isize, isize),
        near: isize,
    ) -> Vec<isize> {
        // The rarest line decides: every match has it at its offset in the pattern.
        let Some((k, rarest)) = pattern
            .iter()
            .enumerate()
            .min_by_key(|(_, line)| self.count(line))
        else {
            return Vec::new();
        };
        let starts = self
            .positions(rarest)
            .map(|at| at as isize - k as isize)
            .filter(|&at| at >= lowest && at <= highest && (at - from).abs() > near);
        let (later, earlier): (Vec<isize>, Vec<isize>) = starts.partition(|&at| at >= from);
        let mut order = Vec::with_capacity(later.len() + earlier.len());
        let (mut l, mut e) = (
            later.into_iter().peekable(),
            earlier.into_iter().rev().peekable(),
        );
        loop {
            let next = match (l.peek(), e.peek()) {
                (Some(&a), Some(&b)) if a - from <= from - b => l.next(),
                (Some(_), Some(_)) => e.next(),
                (Some(_), None) => l.next(),
                (None, Some(_)) => e.next(),
                (None, None) => return order,
            };
            order.extend(next);
        }
    }
}

fn hash(line: &[u8]) -> u64 {
    BuildHasherDefault::<DefaultHasher>::default().hash_one(line)
}

/// The hasher of [`LineIndex`]'s runs, whose keys are hashes already: a key is its own hash.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, key: u64) {
        self.0 = key;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<&[u8]> {
        text.split_inclusive('\n').map(str::as_bytes).collect()
    }

    #[test]
    fn candidates_are_the_rarest_lines_places_nearest_first_later_first() {
        let file = lines("x\na\nb\nx\na\nb\nc\nx\na\nb\n");
        let index = LineIndex::new(&file);
        // `b` and `a` are as rare; `a` comes first, at offset 0.
        let pattern = lines("a\nb\n");
        // `from` itself is within `near` (0) of `from`: the caller tried it.
        assert_eq!(index.candidates(&pattern, 4, (0, 8), 0), [1, 8]);
        assert_eq!(index.candidates(&pattern, 6, (0, 8), 0), [8, 4, 1]);
        assert_eq!(index.candidates(&pattern, 6, (2, 7), 0), [4]);
        assert_eq!(index.candidates(&pattern, 6, (0, 8), 2), [1]);
        // `c` is rarest: its one place, less its offset in the pattern.
        assert_eq!(index.candidates(&lines("a\nb\nc\n"), 0, (0, 7), 0), [4]);
        assert!(index.candidates(&lines("z\n"), 0, (0, 9), 0).is_empty());
    }

    #[test]
    fn equal_distance_takes_the_later_place() {
        let file = lines("a\n-\na\n-\na\n");
        let index = LineIndex::new(&file);
        assert_eq!(index.candidates(&lines("a\n"), 2, (0, 4), 0), [4, 0]);
        assert_eq!(index.candidates(&lines("a\n"), 1, (0, 4), 0), [2, 0, 4]);
    }
}
