//! The vendor patches of a package, parsed, and applied to pristine copies.

use crate::config::{AppliesTo, Config, ConfigError, Vendor};
use crate::error::{Error, Result};
use crate::image::Digest;
use crate::patch::{self, FilePatch, PatchSet};

/// One `[[patch]]` file, parsed.
#[derive(Debug, Clone)]
pub struct LoadedPatch {
    /// Its name in vendor.toml.
    pub name: String,
    /// Its file, relative to the package.
    pub file: String,
    /// `-p` level.
    pub strip: usize,
    /// The file's bytes as read.
    pub bytes: Vec<u8>,
    /// sha256 of `bytes`, for the lock.
    pub sha256: String,
    /// The parsed patch.
    pub set: PatchSet,
}

/// What applying one patch section to one file did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchStep {
    /// Every hunk at its stated line.
    Exact,
    /// Applied with the hunks moved by these many lines (one per hunk).
    Offset(Vec<isize>),
    /// Carried by a 3-way merge.
    Merged,
    /// Upstream already contains the change.
    AlreadyUpstream,
}

impl std::fmt::Display for PatchStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PatchStep::Exact => f.write_str("exact"),
            PatchStep::Offset(o) => {
                let moved: Vec<String> = o
                    .iter()
                    .enumerate()
                    .filter(|(_, o)| **o != 0)
                    .map(|(i, o)| format!("hunk {} {o:+}", i + 1))
                    .collect();
                write!(f, "offset ({})", moved.join(", "))
            }
            PatchStep::Merged => f.write_str("merged (3-way)"),
            PatchStep::AlreadyUpstream => f.write_str("already upstream"),
        }
    }
}

/// A patch that does not apply strictly.
#[derive(Debug, Clone)]
pub struct PatchFailure {
    /// The patch name.
    pub patch: String,
    /// The patch file.
    pub file: String,
    /// The file it targets.
    pub target: String,
    /// What the engine said (hunk number, header, first line that no longer matches).
    pub message: String,
}

impl std::fmt::Display for PatchFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "patch `{}` ({}) does not apply to `{}`: {}",
            self.patch, self.file, self.target, self.message
        )
    }
}

/// A pristine copy with every patch targeting it applied.
#[derive(Debug, Clone)]
pub struct PatchedFile {
    /// The patched bytes.
    pub content: Vec<u8>,
    /// `(patch name, what applying it did)` in order.
    pub steps: Vec<(String, PatchStep)>,
}

/// All vendor patches of a package.
#[derive(Debug, Clone)]
pub struct Patches {
    /// In vendor.toml order.
    pub loaded: Vec<LoadedPatch>,
}

impl Patches {
    /// Reads and parses every `applies-to = "vendor"` patch.
    pub fn load(config: &Config) -> Result<Patches> {
        Self::load_kind(config, AppliesTo::Vendor)
    }

    /// Reads and parses every patch of one kind.
    pub fn load_kind(config: &Config, kind: AppliesTo) -> Result<Patches> {
        let mut loaded = Vec::new();
        for p in config.patches_for(kind) {
            let path = config.path(&p.file);
            let bytes = crate::paths::read(&path)?;
            let set = patch::parse(&bytes).map_err(|e| {
                // The parser's message starts with "line N: "; the line goes
                // into the location instead.
                let text = e.to_string();
                let text = match e.line() {
                    Some(n) => text.trim_start_matches(&format!("line {n}: ")).to_string(),
                    None => text,
                };
                Error::Config(
                    ConfigError::at(&path, e.line(), format!("malformed patch: {text}"))
                        .hint("regenerate the patch with `diff -u` or `git diff`"),
                )
            })?;
            loaded.push(LoadedPatch {
                name: p.name.clone(),
                file: p.file.clone(),
                strip: p.strip,
                sha256: Digest::of(&bytes).hex().to_owned(),
                bytes,
                set,
            });
        }
        Ok(Patches { loaded })
    }

    /// The (patch index, file section index) pairs that target `vendor`,
    /// named by its upstream path or its rendered path.
    pub fn sections_for(&self, vendor: &Vendor) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (pi, p) in self.loaded.iter().enumerate() {
            for (fi, fp) in p.set.files.iter().enumerate() {
                if let Some(target) = fp.target_path(p.strip)
                    && (target == vendor.from || target == vendor.to)
                {
                    out.push((pi, fi));
                }
            }
        }
        out
    }

    /// Sections that target no vendored file: a patch naming a file that is
    /// not vendored is a configuration error.
    pub fn check_targets(&self, config: &Config) -> Result<()> {
        for p in &self.loaded {
            for fp in &p.set.files {
                let target = fp.target_path(p.strip).unwrap_or_default();
                if !config
                    .vendor
                    .iter()
                    .any(|v| v.from == target || v.to == target)
                {
                    return Err(ConfigError::at(
                        config.path(&p.file),
                        None,
                        format!(
                            "patch `{}` targets `{target}` (after strip {}), which no [[vendor]] names",
                            p.name, p.strip
                        ),
                    )
                    .hint("fix `strip` or the paths in the patch, or add the file to [[vendor]]")
                    .into());
                }
            }
        }
        Ok(())
    }

    /// One section.
    pub fn section(&self, (pi, fi): (usize, usize)) -> (&LoadedPatch, &FilePatch) {
        let p = &self.loaded[pi];
        (p, &p.set.files[fi])
    }

    /// Applies every patch targeting `vendor` to `pristine`, strictly.
    pub fn apply_strict(
        &self,
        vendor: &Vendor,
        pristine: &[u8],
    ) -> std::result::Result<PatchedFile, PatchFailure> {
        let mut text = pristine.to_vec();
        let mut steps = Vec::new();
        for id in self.sections_for(vendor) {
            let (p, fp) = self.section(id);
            match patch::apply(fp, &text) {
                Ok(applied) => {
                    let step = if applied.offsets.iter().all(|o| *o == 0) {
                        PatchStep::Exact
                    } else {
                        PatchStep::Offset(applied.offsets.clone())
                    };
                    text = applied.content;
                    steps.push((p.name.clone(), step));
                }
                Err(e) => {
                    return Err(PatchFailure {
                        patch: p.name.clone(),
                        file: p.file.clone(),
                        target: vendor.to.clone(),
                        message: e.to_string(),
                    });
                }
            }
        }
        Ok(PatchedFile {
            content: text,
            steps,
        })
    }
}
