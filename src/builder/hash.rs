//! The content hash of a build: one sha256 over everything that goes into
//! the image, so an unchanged build can be skipped.
//!
//! Hashed, each as a tagged, length-prefixed record in a fixed order:
//!
//! 1. the Dockerfile's bytes (wherever it lives);
//! 2. every entry under the context, sorted by `/`-separated relative path:
//!    files with their executable bit and bytes, symlinks with their target,
//!    directories by name (an empty directory can be copied into an image);
//! 3. the build arguments, then the platforms, in the given order;
//! 4. the arguments passed through to the builder (`image build -- <args>`),
//!    which may change what is built (`--build-arg`, `--target`); with none,
//!    nothing is recorded, so such a build hashes as it always did.
//!
//! Extra tags and caches are not hashed: they change where the image goes
//! and how fast it is built, not what it holds.
//!
//! `.dockerignore` is not consulted: hashing a file the builder ignores can
//! only cause a build that was not needed, never skip one that was.
//!
//! The hash is recorded as the image label [`LABEL`] and in the lock's
//! `[image] content-hash`.

use std::fs;
use std::path::{Path, PathBuf};

use super::Error;
use crate::image::{Digest, Hasher};

/// The OCI label carrying the content hash on the built image.
pub const LABEL: &str = "org.revendor.content-hash";

/// Identifies the encoding, so a change to it changes every hash.
const VERSION: &[u8] = b"revendor content hash v1\n";

/// Hashes a build: `context` and `dockerfile` are paths on disk.
pub fn content_hash(
    context: &Path,
    dockerfile: &Path,
    build_args: &[(String, String)],
    platforms: &[String],
    builder_args: &[String],
) -> Result<Digest, Error> {
    let mut hasher = Hasher::new();
    hasher.update(VERSION);
    record(&mut hasher, b"dockerfile", &[&read(dockerfile)?]);
    let mut entries = Vec::new();
    walk(context, String::new(), &mut entries)?;
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (rel, path, kind) in entries {
        match kind {
            Entry::Dir => record(&mut hasher, b"dir", &[rel.as_bytes()]),
            Entry::Symlink => {
                let target = fs::read_link(&path).map_err(context_error(&path))?;
                let target = target.to_string_lossy();
                record(
                    &mut hasher,
                    b"symlink",
                    &[rel.as_bytes(), target.as_bytes()],
                );
            }
            Entry::File { executable } => {
                let mode: &[u8] = if executable { b"x" } else { b"-" };
                record(&mut hasher, b"file", &[rel.as_bytes(), mode, &read(&path)?]);
            }
        }
    }
    for (name, value) in build_args {
        record(&mut hasher, b"arg", &[name.as_bytes(), value.as_bytes()]);
    }
    for platform in platforms {
        record(&mut hasher, b"platform", &[platform.as_bytes()]);
    }
    for arg in builder_args {
        record(&mut hasher, b"builder-arg", &[arg.as_bytes()]);
    }
    Ok(hasher.finish())
}

enum Entry {
    Dir,
    Symlink,
    File { executable: bool },
}

/// `tag`, then each field as its length and bytes, so no two different
/// inputs encode alike.
fn record(hasher: &mut Hasher, tag: &[u8], fields: &[&[u8]]) {
    hasher.update(tag);
    hasher.update(&(fields.len() as u64).to_le_bytes());
    for field in fields {
        hasher.update(&(field.len() as u64).to_le_bytes());
        hasher.update(field);
    }
}

fn walk(dir: &Path, rel: String, out: &mut Vec<(String, PathBuf, Entry)>) -> Result<(), Error> {
    for entry in fs::read_dir(dir).map_err(context_error(dir))? {
        let entry = entry.map_err(context_error(dir))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let child = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        let meta = fs::symlink_metadata(&path).map_err(context_error(&path))?;
        if meta.is_dir() {
            walk(&path, child.clone(), out)?;
            out.push((child, path, Entry::Dir));
        } else if meta.file_type().is_symlink() {
            out.push((child, path, Entry::Symlink));
        } else {
            out.push((
                child,
                path,
                Entry::File {
                    executable: is_executable(&meta),
                },
            ));
        }
    }
    Ok(())
}

#[cfg(unix)]
fn is_executable(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_meta: &fs::Metadata) -> bool {
    false
}

fn read(path: &Path) -> Result<Vec<u8>, Error> {
    fs::read(path).map_err(context_error(path))
}

fn context_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Context {
        path: path.to_owned(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("ctx/patches")).unwrap();
        fs::write(dir.path().join("ctx/Dockerfile"), "FROM scratch\n").unwrap();
        fs::write(dir.path().join("ctx/patches/a.diff"), "a").unwrap();
        dir
    }

    fn hash(dir: &Path, args: &[(&str, &str)], platforms: &[&str]) -> Digest {
        hash_passing(dir, args, platforms, &[])
    }

    fn hash_passing(
        dir: &Path,
        args: &[(&str, &str)],
        platforms: &[&str],
        builder_args: &[&str],
    ) -> Digest {
        let builder_args: Vec<String> = builder_args.iter().map(|a| a.to_string()).collect();
        let args: Vec<(String, String)> = args
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let platforms: Vec<String> = platforms.iter().map(|p| p.to_string()).collect();
        content_hash(
            &dir.join("ctx"),
            &dir.join("ctx/Dockerfile"),
            &args,
            &platforms,
            &builder_args,
        )
        .unwrap()
    }

    #[test]
    fn every_input_changes_the_hash_and_nothing_else_does() {
        let dir = tree();
        let base = hash(dir.path(), &[("VERSION", "v1")], &["linux/amd64"]);
        assert_eq!(
            base,
            hash(dir.path(), &[("VERSION", "v1")], &["linux/amd64"])
        );
        assert_ne!(
            base,
            hash(dir.path(), &[("VERSION", "v2")], &["linux/amd64"])
        );
        assert_ne!(
            base,
            hash(dir.path(), &[("VERSION", "v1")], &["linux/arm64"])
        );
        fs::write(dir.path().join("ctx/patches/a.diff"), "b").unwrap();
        let patched = hash(dir.path(), &[("VERSION", "v1")], &["linux/amd64"]);
        assert_ne!(base, patched);
        fs::rename(
            dir.path().join("ctx/patches/a.diff"),
            dir.path().join("ctx/patches/b.diff"),
        )
        .unwrap();
        let renamed = hash(dir.path(), &[("VERSION", "v1")], &["linux/amd64"]);
        assert_ne!(patched, renamed);
        fs::create_dir(dir.path().join("ctx/empty")).unwrap();
        assert_ne!(
            renamed,
            hash(dir.path(), &[("VERSION", "v1")], &["linux/amd64"])
        );
    }

    #[cfg(unix)]
    #[test]
    fn the_executable_bit_counts() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tree();
        let before = hash(dir.path(), &[], &[]);
        let file = dir.path().join("ctx/patches/a.diff");
        fs::set_permissions(&file, fs::Permissions::from_mode(0o755)).unwrap();
        assert_ne!(before, hash(dir.path(), &[], &[]));
    }

    #[test]
    fn pass_through_arguments_count_only_when_there_are_some() {
        let dir = tree();
        let base = hash(dir.path(), &[("VERSION", "v1")], &["linux/amd64"]);
        let passing =
            |args: &[&str]| hash_passing(dir.path(), &[("VERSION", "v1")], &["linux/amd64"], args);
        assert_eq!(base, passing(&[]));
        assert_ne!(base, passing(&["--target", "debug"]));
        assert_ne!(
            passing(&["--target", "debug"]),
            passing(&["--target debug"])
        );
    }

    #[test]
    fn field_boundaries_are_unambiguous() {
        let dir = tree();
        assert_ne!(
            hash(dir.path(), &[("A", "B=C")], &[]),
            hash(dir.path(), &[("A=B", "C")], &[])
        );
    }

    #[test]
    fn a_missing_context_names_the_path() {
        let dir = tree();
        let err = content_hash(
            &dir.path().join("nope"),
            &dir.path().join("ctx/Dockerfile"),
            &[],
            &[],
            &[],
        )
        .unwrap_err();
        assert!(err.to_string().contains("nope"), "{err}");
    }
}
