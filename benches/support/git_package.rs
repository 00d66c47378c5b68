//! A one-file package whose `git =` upstream is a local repository with two tags, adopted
//! once at `v1.0.0` with one patch, for benchmarks that time a whole `revendor update` to
//! `v1.1.0` (or a `render`) against a peer on the same files.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::measure::Measured;
use crate::support::GitRepo;

/// The upstream repository and the adopted package, with the download cache they share.
pub struct GitPackage {
    /// Kept so the repository outlives the package that fetches from it.
    _upstream: GitRepo,
    /// The package as adoption left it: the patched file, the patch, vendor.toml and the lock.
    pub adopted: PathBuf,
    cache: PathBuf,
}

impl GitPackage {
    /// Tags `base` as `v1.0.0` and `theirs` as `v1.1.0` at `path` upstream, and adopts `ours`
    /// (`base` through `patch`, which names `a/<path>`) at `v1.0.0` in `dir/adopted`.
    pub fn new(
        dir: &Path,
        path: &str,
        base: &[u8],
        theirs: &[u8],
        ours: &[u8],
        patch: &[u8],
    ) -> Self {
        let upstream = GitRepo::new();
        upstream.commit("base", [(path, base)]);
        upstream.tag("v1.0.0");
        upstream.commit("new", [(path, theirs)]);
        upstream.tag("v1.1.0");
        let adopted = dir.join("adopted");
        let target = adopted.join(path);
        fs::create_dir_all(target.parent().expect("a file in a folder")).expect("package");
        fs::create_dir_all(adopted.join("patches")).expect("package");
        fs::write(&target, ours).expect("package");
        fs::write(adopted.join("patches/the.patch"), patch).expect("package");
        fs::write(
            adopted.join("vendor.toml"),
            format!(
                "[upstream]\ngit = \"{}\"\nversion = \"v1.0.0\"\n\n\
                 [[vendor]]\nfrom = \"{path}\"\nto = \"{path}\"\n\n\
                 [[patch]]\nname = \"the\"\nfile = \"patches/the.patch\"\n\
                 applies-to = \"vendor\"\nstrip = 1\n",
                upstream.url()
            ),
        )
        .expect("package");
        let package = GitPackage {
            _upstream: upstream,
            adopted,
            cache: dir.join("cache"),
        };
        Measured::of(
            &package.command(&package.adopted, &["update", "--to", "v1.0.0"]),
            Stdio::null(),
        );
        package
    }

    /// `revendor -C <pkg> --quiet <args>` with this package's download cache.
    pub fn command(&self, pkg: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_revendor"));
        cmd.arg("-C")
            .arg(pkg)
            .arg("--quiet")
            .args(args)
            .env("REVENDOR_CACHE_DIR", &self.cache);
        cmd
    }

    /// One `update --to v1.1.0` of a fresh copy of the adopted package at `pkg`, measured;
    /// the copy is left for the caller to read.
    pub fn update_copy(&self, pkg: &Path) -> Measured {
        let _ = fs::remove_dir_all(pkg);
        let copied = Command::new("cp")
            .arg("-a")
            .arg(&self.adopted)
            .arg(pkg)
            .status();
        assert!(copied.expect("cp").success(), "copy the adopted package");
        Measured::of(
            &self.command(pkg, &["update", "--to", "v1.1.0"]),
            Stdio::null(),
        )
    }
}

/// `git merge-file -p ours base theirs` in `dir`, measured, its output in `dir/out`.
pub fn git_merge_file(dir: &Path) -> Measured {
    let out = fs::File::create(dir.join("out")).expect("out");
    Measured::of(
        Command::new("git")
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .args(["merge-file", "-p", "ours", "base", "theirs"]),
        out,
    )
}
