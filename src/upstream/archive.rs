//! Unpacking upstream tarballs into memory, safely.
//!
//! Entries are kept in a map rather than written to disk, and each path is
//! checked first: absolute paths and `..` components are refused, so an
//! archive can never name anything outside its own tree. Links are not
//! followed or kept as files (they are the classic escape, and patching
//! source does not need them), but a symbolic link's target is part of the
//! tree's hash ([`tree_hash`](super::tree_hash)).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path};

use super::SourceTree;
use super::tree_hash::{Mode, TreeHasher};

/// Reads a `.tar.gz` into a [`SourceTree`]: its regular files and its tree
/// hash. With `strip_top`, the first path component (GitHub's
/// `repo-version/`) is removed.
pub fn unpack_tar_gz(bytes: &[u8], strip_top: bool) -> Result<SourceTree, String> {
    let gz = flate2::read::GzDecoder::new(bytes);
    let mut ar = tar::Archive::new(gz);
    let mut files = BTreeMap::new();
    let mut hasher = TreeHasher::new();
    let entries = ar.entries().map_err(|e| format!("not a tar.gz: {e}"))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| format!("corrupt entry: {e}"))?;
        let kind = entry.header().entry_type();
        let path = entry
            .path()
            .map_err(|e| format!("bad entry name: {e}"))?
            .into_owned();
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
mod tests {
    use super::*;

    /// One tar entry: a name written raw (so hostile names can be built), a
    /// type, permission bits, and the contents or, for a link, the target.
    struct Entry<'a>(&'a str, tar::EntryType, u32, &'a [u8]);

    fn file<'a>(name: &'a str, data: &'a [u8]) -> Entry<'a> {
        Entry(name, tar::EntryType::Regular, 0o644, data)
    }

    fn tarball(entries: &[Entry<'_>], level: u32) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for Entry(name, kind, mode, data) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_mode(*mode);
            h.set_entry_type(*kind);
            // set_path refuses `..`; write the raw name to build hostile input.
            let raw = &mut h.as_old_mut().name;
            raw[..name.len()].copy_from_slice(name.as_bytes());
            let body: &[u8] = if kind.is_symlink() {
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
    fn garbage_is_an_error() {
        assert!(unpack_tar_gz(b"not gzip", true).is_err());
    }
}
