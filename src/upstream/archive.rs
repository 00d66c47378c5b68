//! Unpacking upstream tarballs into memory, safely.
//!
//! Entries are kept in a map rather than written to disk, and each path is
//! checked first: absolute paths, `..` components and links are refused, so
//! an archive can never name anything outside its own tree.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path};

/// Reads a `.tar.gz` into path → bytes. With `strip_top`, the first path
/// component (GitHub's `repo-version/`) is removed.
pub fn unpack_tar_gz(bytes: &[u8], strip_top: bool) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let gz = flate2::read::GzDecoder::new(bytes);
    let mut ar = tar::Archive::new(gz);
    let mut out = BTreeMap::new();
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
        if kind.is_dir() || kind.is_pax_global_extensions() || kind.is_pax_local_extensions() {
            continue;
        }
        if kind.is_symlink() || kind.is_hard_link() {
            // Links are not needed to patch source and are the classic escape.
            continue;
        }
        if !kind.is_file() {
            continue;
        }
        let Some(rel) = rel else { continue };
        let mut data = Vec::new();
        entry
            .read_to_end(&mut data)
            .map_err(|e| format!("cannot read `{rel}`: {e}"))?;
        out.insert(rel, data);
    }
    Ok(out)
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

    fn tarball(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (name, data) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            h.set_entry_type(tar::EntryType::Regular);
            // set_path refuses `..`; write the raw name to build hostile input.
            let raw = &mut h.as_old_mut().name;
            raw[..name.len()].copy_from_slice(name.as_bytes());
            h.set_cksum();
            builder.append(&h, *data).unwrap();
        }
        let tar = builder.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &tar).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn strips_the_top_directory() {
        let files = unpack_tar_gz(&tarball(&[("r-1.0/go.mod", b"module x\n")]), true).unwrap();
        assert_eq!(files["go.mod"], b"module x\n");
    }

    #[test]
    fn refuses_escaping_entries() {
        let err = unpack_tar_gz(&tarball(&[("r-1.0/../../etc/x", b"x")]), true).unwrap_err();
        assert!(err.contains("outside the tree"), "{err}");
        let err = unpack_tar_gz(&tarball(&[("/etc/x", b"x")]), false).unwrap_err();
        assert!(err.contains("outside the tree"), "{err}");
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(unpack_tar_gz(b"not gzip", true).is_err());
    }
}
