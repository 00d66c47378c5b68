//! The source-tree hash: one sha256 for an upstream tree's files, however the
//! archive that carried them was compressed.
//!
//! GitHub makes tag archives on demand with `git archive`; in 2023 it changed
//! their compression, and every sha256 pinned on archive bytes broke while the
//! files inside stayed the same. The lock therefore records this hash of the
//! extracted tree (`source-tree-sha256`), shaped after Go's dirhash `h1:` with
//! the execute bit and symbolic links added:
//!
//! 1. The entries are the tree's regular files and symbolic links, each named
//!    by its `/`-separated UTF-8 path relative to the tree's root (for an
//!    archive: with its top directory, `multus-cni-4.3.0/`, removed).
//!    Directories are not entries, so an empty directory changes nothing; nor
//!    are submodules, pax headers, hard links or devices, which a git tree or
//!    `git archive` does not hold as files.
//! 2. Each entry gives one line, `<mode> <sha256>  <path>\n`: mode `100644`
//!    for a file, `100755` for a file whose owner execute bit is set, `120000` for a
//!    symbolic link (git's modes); sha256 is the lowercase hex of the file's
//!    bytes, or of the link's target exactly as stored.
//! 3. The lines are sorted by path, byte by byte; the tree hash is the sha256
//!    (lowercase hex) of their concatenation.
//!
//! A path holding a newline would make the lines ambiguous and is refused.
//! The tree is what `git archive <tag>` writes: files marked `export-ignore`
//! in `.gitattributes` are left out and `export-subst` is expanded there, so a
//! hash computed from a local `git archive` of the tag equals the hash of
//! GitHub's archive. docs/reference.md gives a shell recipe for the same hash.

use std::collections::BTreeMap;

use crate::image::Digest;

/// How an entry is recorded: git's mode for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A regular file without an execute bit: `100644`.
    File,
    /// A regular file with the owner's execute bit: `100755`.
    Executable,
    /// A symbolic link, hashed by its target: `120000`.
    Symlink,
}

impl Mode {
    /// The regular-file mode for Unix permission bits: executable when the
    /// owner's execute bit is set, as git decides.
    pub fn of_permissions(bits: u32) -> Mode {
        if bits & 0o100 != 0 {
            Mode::Executable
        } else {
            Mode::File
        }
    }

    fn octal(self) -> &'static str {
        match self {
            Mode::File => "100644",
            Mode::Executable => "100755",
            Mode::Symlink => "120000",
        }
    }
}

/// A path the hash cannot name unambiguously.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("entry {0:?} has a newline in its path, which the source-tree hash cannot record")]
pub struct UnhashablePath(pub String);

/// Collects a tree's entries in any order and gives its hash.
///
/// An entry added twice under one path keeps the last, as extracting an
/// archive in order would.
#[derive(Debug, Clone, Default)]
pub struct TreeHasher {
    lines: BTreeMap<String, String>,
}

impl TreeHasher {
    /// A hasher with no entries yet.
    pub fn new() -> TreeHasher {
        TreeHasher::default()
    }

    /// Records `path` with its mode and bytes (a link's target for a
    /// [`Mode::Symlink`]).
    pub fn add(&mut self, path: &str, mode: Mode, bytes: &[u8]) -> Result<(), UnhashablePath> {
        if path.contains('\n') {
            return Err(UnhashablePath(path.to_owned()));
        }
        let line = format!("{} {}  {path}\n", mode.octal(), Digest::of(bytes).hex());
        self.lines.insert(path.to_owned(), line);
        Ok(())
    }

    /// The tree hash: 64 lowercase hex digits.
    pub fn finish(&self) -> String {
        let listing: String = self.lines.values().map(String::as_str).collect();
        Digest::of(listing.as_bytes()).hex().to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(entries: &[(&str, Mode, &[u8])]) -> String {
        let mut h = TreeHasher::new();
        for (path, mode, bytes) in entries {
            h.add(path, *mode, bytes).unwrap();
        }
        h.finish()
    }

    /// The definition, spelled out: the sha256 of the sorted listing.
    #[test]
    fn is_the_sha256_of_the_sorted_listing() {
        let listing = format!(
            "100755 {}  a.sh\n120000 {}  b\n100644 {}  dir/go.mod\n",
            Digest::of(b"#!/bin/sh\n").hex(),
            Digest::of(b"dir/go.mod").hex(),
            Digest::of(b"module x\n").hex(),
        );
        let got = hash(&[
            ("dir/go.mod", Mode::File, b"module x\n"),
            ("b", Mode::Symlink, b"dir/go.mod"),
            ("a.sh", Mode::Executable, b"#!/bin/sh\n"),
        ]);
        assert_eq!(got, Digest::of(listing.as_bytes()).hex());
    }

    #[test]
    fn every_part_of_an_entry_counts() {
        let base = hash(&[("a", Mode::File, b"x")]);
        assert_ne!(base, hash(&[("a", Mode::Executable, b"x")]));
        assert_ne!(base, hash(&[("a", Mode::Symlink, b"x")]));
        assert_ne!(base, hash(&[("a", Mode::File, b"y")]));
        assert_ne!(base, hash(&[("b", Mode::File, b"x")]));
        assert_ne!(
            base,
            hash(&[("a", Mode::File, b"x"), ("b", Mode::File, b"")])
        );
        assert_eq!(
            base,
            hash(&[("a", Mode::File, b"old"), ("a", Mode::File, b"x")])
        );
    }

    #[test]
    fn the_empty_tree_hashes_the_empty_listing() {
        assert_eq!(hash(&[]), Digest::of(b"").hex());
    }

    #[test]
    fn permissions_give_the_mode() {
        assert_eq!(Mode::of_permissions(0o664), Mode::File);
        assert_eq!(Mode::of_permissions(0o775), Mode::Executable);
        assert_eq!(Mode::of_permissions(0o744), Mode::Executable);
        assert_eq!(Mode::of_permissions(0o655), Mode::File);
    }

    #[test]
    fn a_newline_in_a_path_is_refused() {
        let err = TreeHasher::new().add("a\nb", Mode::File, b"").unwrap_err();
        assert!(err.to_string().contains("newline"), "{err}");
    }
}
