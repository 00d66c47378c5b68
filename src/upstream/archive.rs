//! Unpacking upstream tarballs into memory, safely.
//!
//! Entries are kept in a map rather than written to disk, and each path is
//! checked first: absolute paths and `..` components are refused, and links
//! are never followed (only noted, so a patch aimed at one is told why it
//! finds no file), so an archive can never name anything outside its own
//! tree. The gzip stream is read to its end: its trailer's CRC and length
//! are checked, so an archive cut short is refused.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path};

/// What an archive holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unpacked {
    /// Regular files: path → bytes.
    pub files: BTreeMap<String, Vec<u8>>,
    /// Symbolic and hard links, never followed: path → what it is ("a
    /// symlink to `…`").
    pub links: BTreeMap<String, String>,
}

/// Reads a `.tar.gz`. With `strip_top`, the first path component (GitHub's
/// `repo-version/`) is removed.
pub fn unpack_tar_gz(bytes: &[u8], strip_top: bool) -> Result<Unpacked, String> {
    let gz = flate2::read::GzDecoder::new(bytes);
    let mut ar = tar::Archive::new(gz);
    let mut out = Unpacked::default();
    let entries = ar.entries().map_err(|e| format!("not a tar.gz: {e}"))?;
    read_entries(entries, strip_top, &mut out)?;
    // tar stops at its end-of-archive blocks, before gzip's trailer: read on
    // to the end so the trailer's CRC and length are checked, and an archive
    // cut short is refused rather than taken for a complete one (issue 13).
    std::io::copy(&mut ar.into_inner(), &mut std::io::sink())
        .map_err(|e| format!("the gzip stream is cut short or corrupt: {e}"))?;
    Ok(out)
}

fn read_entries<R: Read>(
    entries: tar::Entries<'_, R>,
    strip_top: bool,
    out: &mut Unpacked,
) -> Result<(), String> {
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
            // Links are not needed to patch source and are the classic
            // escape: noted, never followed.
            let target = entry
                .link_name()
                .ok()
                .flatten()
                .map(|t| t.display().to_string())
                .unwrap_or_default();
            let what = if kind.is_symlink() {
                "a symlink"
            } else {
                "a hard link"
            };
            if let Some(rel) = rel {
                out.links.insert(rel, format!("{what} to `{target}`"));
            }
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
        out.files.insert(rel, data);
    }
    Ok(())
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
        let unpacked = unpack_tar_gz(&tarball(&[("r-1.0/go.mod", b"module x\n")]), true).unwrap();
        assert_eq!(unpacked.files["go.mod"], b"module x\n");
    }

    #[test]
    fn refuses_escaping_entries() {
        let err = unpack_tar_gz(&tarball(&[("r-1.0/../../etc/x", b"x")]), true).unwrap_err();
        assert!(err.contains("outside the tree"), "{err}");
        let err = unpack_tar_gz(&tarball(&[("/etc/x", b"x")]), false).unwrap_err();
        assert!(err.contains("outside the tree"), "{err}");
    }

    #[test]
    fn links_are_noted_and_never_followed() {
        let mut builder = tar::Builder::new(Vec::new());
        for (name, kind, link) in [
            ("r-1.0/a", tar::EntryType::Symlink, "/etc/passwd"),
            ("r-1.0/b", tar::EntryType::Link, "../../etc/shadow"),
        ] {
            let mut h = tar::Header::new_gnu();
            h.set_size(0);
            h.set_entry_type(kind);
            let old = h.as_old_mut();
            old.name[..name.len()].copy_from_slice(name.as_bytes());
            old.linkname[..link.len()].copy_from_slice(link.as_bytes());
            h.set_cksum();
            builder.append(&h, std::io::empty()).unwrap();
        }
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &builder.into_inner().unwrap()).unwrap();
        let unpacked = unpack_tar_gz(&gz.finish().unwrap(), true).unwrap();
        assert!(unpacked.files.is_empty());
        assert_eq!(unpacked.links["a"], "a symlink to `/etc/passwd`");
        assert_eq!(unpacked.links["b"], "a hard link to `../../etc/shadow`");
    }

    /// issue 13: an archive missing its gzip trailer was taken for whole.
    #[test]
    fn an_archive_cut_short_is_refused() {
        let whole = tarball(&[("r-1.0/go.mod", b"module x\n")]);
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
