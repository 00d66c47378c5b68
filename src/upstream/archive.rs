//! Unpacking upstream tarballs into memory, safely.
//!
//! Entries are kept in a map rather than written to disk, and each path is
//! checked first: absolute paths and `..` components are refused, so an
//! archive can never name anything outside its own tree. Links are not
//! followed or kept as files (they are the classic escape, and patching
//! source does not need them), only noted, so a patch aimed at one is told
//! why it finds no file; a symbolic link's target is part of the tree's hash
//! ([`tree_hash`](super::tree_hash)). The gzip stream is read to its end:
//! its trailer's CRC and length are checked, so an archive cut short is
//! refused.
//!
//! Sizes are bounded ([`Limits`], docs/reference.md "Limits"): the entries
//! an archive may hold, the bytes one file and all files together may
//! unpack to, each checked against the entry's header before its bytes are
//! read, so a gzip bomb (a small download that expands to gigabytes) is
//! refused before it takes the memory (issue 21). Helm charts
//! ([`helm::chart`](super::helm::chart)) are held to the same [`Budget`]
//! with Helm's own limits.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path};

use super::SourceTree;
use super::tree_hash::{Mode, TreeHasher};

/// How much an archive may unpack to.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Entries of every kind (files, directories, links), at most.
    pub entries: u64,
    /// All files together, in bytes, at most.
    pub total: u64,
    /// One file, in bytes, at most.
    pub file: u64,
}

/// The limits of an upstream's source archive (a tag's or a commit's
/// tarball): far above any source tree vendored today (kubernetes is
/// about 30,000 files and 300 MiB), far below what exhausts a CI runner.
pub const SOURCE: Limits = Limits {
    entries: 200_000,
    total: 1 << 30,
    file: 1 << 30,
};

/// The most bytes read after the tar's end-of-archive blocks (padding up
/// to gzip's trailer); more is refused rather than inflated.
pub const TRAILING: u64 = 1 << 20;

/// What an archive unpacked so far, held to its [`Limits`].
#[derive(Debug)]
pub struct Budget {
    limits: Limits,
    entries: u64,
    total: u64,
}

impl Budget {
    /// Nothing unpacked yet.
    pub fn new(limits: Limits) -> Budget {
        Budget {
            limits,
            entries: 0,
            total: 0,
        }
    }

    /// Counts one more entry, `name` of `size` bytes by its header (0 for
    /// anything but a file), before its bytes are read; the reason it is
    /// refused, if it is.
    pub fn admit(&mut self, name: &str, size: u64) -> Result<(), String> {
        self.entries += 1;
        if self.entries > self.limits.entries {
            return Err(format!(
                "it holds more than {} entries, the most revendor unpacks",
                self.limits.entries
            ));
        }
        if size > self.limits.file {
            return Err(format!(
                "`{name}` is larger than {}, the most revendor unpacks for one file",
                size_text(self.limits.file)
            ));
        }
        self.total = self.total.saturating_add(size);
        if self.total > self.limits.total {
            return Err(format!(
                "it unpacks to more than {}, the most revendor unpacks",
                size_text(self.limits.total)
            ));
        }
        Ok(())
    }
}

/// A size for messages: whole MiB, or bytes below one.
pub fn size_text(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// Reads what follows the tar's end to gzip's end, so the trailer's CRC and
/// length are checked and an archive cut short is refused rather than taken
/// for a complete one (issue 13); at most [`TRAILING`] bytes of it.
pub fn read_to_gzip_end<R: Read>(mut rest: R) -> Result<(), String> {
    let cut = |e: std::io::Error| format!("the gzip stream is cut short or corrupt: {e}");
    let read = std::io::copy(&mut (&mut rest).take(TRAILING), &mut std::io::sink()).map_err(cut)?;
    if read == TRAILING && rest.read(&mut [0u8; 1]).map_err(cut)? > 0 {
        return Err(format!(
            "it goes on for more than {} past the end of its tar",
            size_text(TRAILING)
        ));
    }
    Ok(())
}

/// Reads a `.tar.gz` into a [`SourceTree`]: its regular files and its tree
/// hash, within [`SOURCE`]'s limits. With `strip_top`, the first path
/// component (GitHub's `repo-version/`) is removed.
pub fn unpack_tar_gz(bytes: &[u8], strip_top: bool) -> Result<SourceTree, String> {
    unpack_within(bytes, strip_top, SOURCE)
}

fn unpack_within(bytes: &[u8], strip_top: bool, limits: Limits) -> Result<SourceTree, String> {
    let gz = flate2::read::GzDecoder::new(bytes);
    let mut ar = tar::Archive::new(gz);
    let entries = ar.entries().map_err(|e| format!("not a tar.gz: {e}"))?;
    let tree = read_entries(entries, strip_top, Budget::new(limits))?;
    // tar stops at its end-of-archive blocks, before gzip's trailer.
    read_to_gzip_end(ar.into_inner())?;
    Ok(tree)
}

/// The regular files, links and tree hash of a tar's entries.
fn read_entries<R: Read>(
    entries: tar::Entries<'_, R>,
    strip_top: bool,
    mut budget: Budget,
) -> Result<SourceTree, String> {
    let mut files = BTreeMap::new();
    let mut links = BTreeMap::new();
    let mut hasher = TreeHasher::new();
    for entry in entries {
        let mut entry = entry.map_err(|e| format!("corrupt entry: {e}"))?;
        let kind = entry.header().entry_type();
        let path = entry
            .path()
            .map_err(|e| format!("bad entry name: {e}"))?
            .into_owned();
        let size = if kind.is_file() { entry.size() } else { 0 };
        budget.admit(&path.to_string_lossy(), size)?;
        let rel = safe_relative(&path, strip_top).ok_or_else(|| {
            format!(
                "entry `{}` would be written outside the tree",
                path.display()
            )
        })?;
        let Some(rel) = rel else { continue };
        if kind.is_symlink() {
            let target = entry
                .link_name_bytes()
                .ok_or_else(|| format!("symbolic link `{rel}` has no target"))?;
            hasher
                .add(&rel, Mode::Symlink, &target)
                .map_err(|e| e.to_string())?;
            let shown = String::from_utf8_lossy(&target);
            links.insert(rel, format!("a symlink to `{shown}`"));
            continue;
        }
        if kind.is_hard_link() {
            let target = entry.link_name_bytes().unwrap_or_default();
            let shown = String::from_utf8_lossy(&target);
            links.insert(rel, format!("a hard link to `{shown}`"));
            continue;
        }
        if !kind.is_file() {
            continue;
        }
        let mode = entry
            .header()
            .mode()
            .map_err(|e| format!("bad mode of `{rel}`: {e}"))?;
        let mut data = Vec::new();
        entry
            .read_to_end(&mut data)
            .map_err(|e| format!("cannot read `{rel}`: {e}"))?;
        hasher
            .add(&rel, Mode::of_permissions(mode), &data)
            .map_err(|e| e.to_string())?;
        files.insert(rel, data);
    }
    Ok(SourceTree {
        files,
        links,
        tree_sha256: hasher.finish(),
    })
}

/// The `/`-joined relative path, `Ok(None)` for the stripped top directory
/// itself, `None` for a path that escapes.
fn safe_relative(path: &Path, strip_top: bool) -> Option<Option<String>> {
    let mut parts = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(p) => parts.push(p.to_str()?.to_string()),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    if strip_top {
        if parts.is_empty() {
            return Some(None);
        }
        parts.remove(0);
    }
    if parts.is_empty() {
        return Some(None);
    }
    Some(Some(parts.join("/")))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// One tar entry: a name written raw (so hostile names can be built), a
    /// type, permission bits, and the contents or, for a link, the target.
    pub(crate) struct Entry<'a>(pub &'a str, pub tar::EntryType, pub u32, pub &'a [u8]);

    fn file<'a>(name: &'a str, data: &'a [u8]) -> Entry<'a> {
        Entry(name, tar::EntryType::Regular, 0o644, data)
    }

    /// A gzipped tar of `entries`, compressed at `level`.
    pub(crate) fn tarball(entries: &[Entry<'_>], level: u32) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for Entry(name, kind, mode, data) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_mode(*mode);
            h.set_entry_type(*kind);
            // set_path refuses `..`; write the raw name to build hostile input.
            let raw = &mut h.as_old_mut().name;
            raw[..name.len()].copy_from_slice(name.as_bytes());
            let body: &[u8] = if kind.is_symlink() || kind.is_hard_link() {
                h.set_link_name(std::str::from_utf8(data).unwrap()).unwrap();
                &[]
            } else {
                data
            };
            h.set_size(body.len() as u64);
            h.set_cksum();
            builder.append(&h, body).unwrap();
        }
        let tar = builder.into_inner().unwrap();
        let compression = flate2::Compression::new(level);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), compression);
        std::io::Write::write_all(&mut gz, &tar).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn strips_the_top_directory() {
        let tree =
            unpack_tar_gz(&tarball(&[file("r-1.0/go.mod", b"module x\n")], 1), true).unwrap();
        assert_eq!(tree.files["go.mod"], b"module x\n");
    }

    /// GitHub's 2023 change: the same files, compressed differently.
    #[test]
    fn the_tree_hash_does_not_depend_on_the_compression() {
        let entries = [
            file("r-1.0/go.mod", b"module x\n"),
            Entry(
                "r-1.0/run.sh",
                tar::EntryType::Regular,
                0o775,
                b"#!/bin/sh\n",
            ),
            Entry("r-1.0/link", tar::EntryType::Symlink, 0o777, b"go.mod"),
        ];
        let (fast, best) = (tarball(&entries, 1), tarball(&entries, 9));
        assert_ne!(fast, best);
        let (a, b) = (
            unpack_tar_gz(&fast, true).unwrap(),
            unpack_tar_gz(&best, true).unwrap(),
        );
        assert_eq!(a.tree_sha256, b.tree_sha256);
        let mut expected = TreeHasher::new();
        expected.add("go.mod", Mode::File, b"module x\n").unwrap();
        expected.add("link", Mode::Symlink, b"go.mod").unwrap();
        expected
            .add("run.sh", Mode::Executable, b"#!/bin/sh\n")
            .unwrap();
        assert_eq!(a.tree_sha256, expected.finish());
        assert!(!a.files.contains_key("link"), "links are hashed, not kept");
    }

    #[test]
    fn refuses_escaping_entries() {
        let err = unpack_tar_gz(&tarball(&[file("r-1.0/../../etc/x", b"x")], 1), true).unwrap_err();
        assert!(err.contains("outside the tree"), "{err}");
        let err = unpack_tar_gz(&tarball(&[file("/etc/x", b"x")], 1), false).unwrap_err();
        assert!(err.contains("outside the tree"), "{err}");
    }

    #[test]
    fn links_are_noted_and_never_followed() {
        let entries = [
            Entry("r-1.0/a", tar::EntryType::Symlink, 0o777, b"/etc/passwd"),
            Entry("r-1.0/b", tar::EntryType::Link, 0o644, b"../../etc/shadow"),
        ];
        let unpacked = unpack_tar_gz(&tarball(&entries, 1), true).unwrap();
        assert!(unpacked.files.is_empty());
        assert_eq!(unpacked.links["a"], "a symlink to `/etc/passwd`");
        assert_eq!(unpacked.links["b"], "a hard link to `../../etc/shadow`");
    }

    /// issue 21: a tag archive that expanded to gigabytes was read whole.
    #[test]
    fn entries_and_sizes_are_bounded_before_the_bytes_are_read() {
        let small = Limits {
            entries: 3,
            total: 100,
            file: 60,
        };
        let unpack = |entries: &[Entry<'_>]| unpack_within(&tarball(entries, 1), true, small);
        let err = unpack(&[file("r/big", &[0; 61])]).unwrap_err();
        assert!(err.contains("`r/big` is larger than 60 bytes"), "{err}");
        let part = [0u8; 40];
        let err =
            unpack(&[file("r/a", &part), file("r/b", &part), file("r/c", &part)]).unwrap_err();
        assert!(err.contains("more than 100 bytes"), "{err}");
        let dir = Entry("r/d", tar::EntryType::Directory, 0o755, b"");
        let err = unpack(&[file("r/a", b""), dir, file("r/b", b""), file("r/c", b"")]).unwrap_err();
        assert!(err.contains("more than 3 entries"), "{err}");
        assert!(unpack(&[file("r/a", &part), file("r/b", &part)]).is_ok());
        assert_eq!(size_text(SOURCE.total), "1024 MiB");
    }

    #[test]
    fn a_stream_going_on_past_the_tar_is_refused() {
        let mut tar = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_gnu();
        header.set_size(1);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, "r/a", &b"x"[..]).unwrap();
        let mut raw = tar.into_inner().unwrap();
        raw.extend(std::iter::repeat_n(0u8, (TRAILING + 4096) as usize));
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &raw).unwrap();
        let err = unpack_tar_gz(&gz.finish().unwrap(), true).unwrap_err();
        assert!(err.contains("past the end of its tar"), "{err}");
    }

    /// issue 13: an archive missing its gzip trailer was taken for whole.
    #[test]
    fn an_archive_cut_short_is_refused() {
        let whole = tarball(&[file("r-1.0/go.mod", b"module x\n")], 1);
        assert!(unpack_tar_gz(&whole, true).is_ok());
        for cut in [whole.len() - 8, whole.len() - 1, whole.len() / 2] {
            let err = unpack_tar_gz(&whole[..cut], true).unwrap_err();
            assert!(!err.is_empty(), "{cut}");
        }
        let mut bad_crc = whole.clone();
        let at = bad_crc.len() - 8;
        bad_crc[at] ^= 0xff;
        let err = unpack_tar_gz(&bad_crc, true).unwrap_err();
        assert!(err.contains("gzip stream"), "{err}");
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(unpack_tar_gz(b"not gzip", true).is_err());
    }
}
