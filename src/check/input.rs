//! [`Input`]: what every check reads, read once.
//!
//! Checks ask the same questions of the same files (the Dockerfile is read by
//! five of them, the pristine copies by three), so the package's files, the
//! verified pristine copies, the parsed vendor patches and each vendored
//! file's strict patch walk are computed on first use and kept. `--fix`
//! edits go through [`Input::edit`], so a later check reads the edited text;
//! nothing is written here.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use super::patches::Walk;
use crate::config::lock::Lock;
use crate::config::{Config, ConfigError, Vendor};
use crate::dockerfile::Dockerfile;
use crate::error::{Error, Result};
use crate::image::Digest;
use crate::manifest::{self, Manifest};
use crate::ops::Context;
use crate::paths;
use crate::render::Patches;
use crate::upstream;

/// The state of a vendored file's pristine copy under `upstream/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pristine {
    /// Its bytes match the lock (read from disk, the download cache, or, with
    /// `--online`, downloaded and verified).
    Verified(Vec<u8>),
    /// The lock records no sha256 for it.
    NotLocked,
    /// The copy on disk has another sha256 than the lock's.
    Edited {
        /// The lock's sha256.
        expected: String,
        /// The sha256 on disk.
        actual: String,
    },
    /// Not on disk and not in the download cache (offline).
    Missing,
    /// Downloaded (online) but upstream served other bytes than the lock's.
    Unverifiable(String),
}

/// The package as the checks see it.
pub struct Input<'a> {
    /// Root, environment, network and console.
    pub ctx: &'a Context,
    /// vendor.toml.
    pub config: &'a Config,
    /// upstream/lock.toml.
    pub lock: &'a Lock,
    /// Whether checks may use the network (`--online`).
    pub online: bool,
    /// Whether safe fixes are staged (`--fix`).
    pub fix: bool,
    files: RefCell<BTreeMap<String, Option<Vec<u8>>>>,
    edited: RefCell<Vec<String>>,
    pristine: RefCell<BTreeMap<String, Pristine>>,
    patches: RefCell<Option<Rc<Patches>>>,
    walks: RefCell<BTreeMap<String, Rc<Walk>>>,
    manifests: RefCell<BTreeMap<String, Rc<Result<Manifest, manifest::Error>>>>,
}

impl std::fmt::Debug for Input<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Input")
            .field("root", &self.ctx.root)
            .field("online", &self.online)
            .field("fix", &self.fix)
            .finish_non_exhaustive()
    }
}

impl<'a> Input<'a> {
    /// The input of one check run.
    pub fn new(
        ctx: &'a Context,
        config: &'a Config,
        lock: &'a Lock,
        online: bool,
        fix: bool,
    ) -> Input<'a> {
        Input {
            ctx,
            config,
            lock,
            online,
            fix,
            files: RefCell::default(),
            edited: RefCell::default(),
            pristine: RefCell::default(),
            patches: RefCell::default(),
            walks: RefCell::default(),
            manifests: RefCell::default(),
        }
    }

    /// The bytes of a package file (as edited by `--fix` so far); `None`
    /// when it does not exist.
    pub fn read(&self, rel: &str) -> Result<Option<Vec<u8>>> {
        if let Some(bytes) = self.files.borrow().get(rel) {
            return Ok(bytes.clone());
        }
        let bytes = paths::read_opt(&self.ctx.root.join(rel))?;
        self.files
            .borrow_mut()
            .insert(rel.to_owned(), bytes.clone());
        Ok(bytes)
    }

    /// The text of a package file; not UTF-8 is a configuration error.
    pub fn text(&self, rel: &str) -> Result<Option<String>> {
        match self.read(rel)? {
            None => Ok(None),
            Some(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| {
                ConfigError::at(self.ctx.root.join(rel), None, "not UTF-8 text")
                    .hint("revendor reads this file as text")
                    .into()
            }),
        }
    }

    /// A package file parsed as a Dockerfile, with its text; `None` when it
    /// does not exist. A syntax error is a configuration error at its line.
    pub fn dockerfile(&self, rel: &str) -> Result<Option<(String, Dockerfile)>> {
        let Some(text) = self.text(rel)? else {
            return Ok(None);
        };
        let df = Dockerfile::parse(&text).map_err(|e| {
            Error::Config(
                ConfigError::at(self.ctx.root.join(rel), e.line(), e.to_string())
                    .hint("fix the Dockerfile so it parses"),
            )
        })?;
        Ok(Some((text, df)))
    }

    /// A rendered file parsed as a (Helm-templated) manifest; `None` when it
    /// does not exist, the parse error when it is not YAML.
    pub fn manifest(&self, rel: &str) -> Result<Option<Rc<Result<Manifest, manifest::Error>>>> {
        if let Some(m) = self.manifests.borrow().get(rel) {
            return Ok(Some(Rc::clone(m)));
        }
        let Some(text) = self.text(rel)? else {
            return Ok(None);
        };
        let parsed = Rc::new(Manifest::parse(&text));
        self.manifests
            .borrow_mut()
            .insert(rel.to_owned(), Rc::clone(&parsed));
        Ok(Some(parsed))
    }

    /// Replaces a file's contents for the checks after this one and for the
    /// commit at the end of the run.
    pub fn edit(&self, rel: &str, bytes: Vec<u8>) {
        self.files.borrow_mut().insert(rel.to_owned(), Some(bytes));
        self.manifests.borrow_mut().remove(rel);
        let mut edited = self.edited.borrow_mut();
        if !edited.iter().any(|e| e == rel) {
            edited.push(rel.to_owned());
        }
    }

    /// Every file edited by `--fix`, with its new contents.
    pub fn edits(&self) -> Vec<(String, Vec<u8>)> {
        let files = self.files.borrow();
        self.edited
            .borrow()
            .iter()
            .filter_map(|rel| Some((rel.clone(), files.get(rel)?.clone()?)))
            .collect()
    }

    /// The pristine copy of a vendored file, verified against the lock.
    ///
    /// A copy missing from disk is taken from the download cache by its
    /// sha256, or with `--online` downloaded at the locked version and
    /// verified, as `render` and `update` would.
    pub fn pristine(&self, vendor: &Vendor) -> Result<Pristine> {
        if let Some(p) = self.pristine.borrow().get(&vendor.from) {
            return Ok(p.clone());
        }
        let state = self.read_pristine(vendor)?;
        self.pristine
            .borrow_mut()
            .insert(vendor.from.clone(), state.clone());
        Ok(state)
    }

    fn read_pristine(&self, vendor: &Vendor) -> Result<Pristine> {
        let Some(sha) = self.lock.file_sha256(&vendor.from) else {
            return Ok(Pristine::NotLocked);
        };
        if let Some(bytes) = self.read(&vendor.pristine())? {
            let actual = Digest::of(&bytes).hex().to_owned();
            return Ok(if actual == sha {
                Pristine::Verified(bytes)
            } else {
                Pristine::Edited {
                    expected: sha.to_owned(),
                    actual,
                }
            });
        }
        if let Some(bytes) = self.ctx.cache.get(sha) {
            return Ok(Pristine::Verified(bytes));
        }
        if !self.online {
            return Ok(Pristine::Missing);
        }
        let source = upstream::open(self.config, &self.ctx.env, &self.ctx.client);
        match upstream::fetch_file(
            &*source,
            &self.ctx.cache,
            &self.lock.upstream.version,
            &vendor.from,
            Some(sha),
        ) {
            Ok(bytes) => Ok(Pristine::Verified(bytes)),
            Err(e @ Error::Checksum { .. }) => Ok(Pristine::Unverifiable(e.to_string())),
            Err(e) => Err(e),
        }
    }

    /// Every `applies-to = "vendor"` patch, parsed once; a malformed patch or
    /// one naming no vendored file is a configuration error.
    pub fn vendor_patches(&self) -> Result<Rc<Patches>> {
        if let Some(p) = self.patches.borrow().as_ref() {
            return Ok(Rc::clone(p));
        }
        let patches = Patches::load(self.config)?;
        patches.check_targets(self.config)?;
        let patches = Rc::new(patches);
        *self.patches.borrow_mut() = Some(Rc::clone(&patches));
        Ok(patches)
    }

    /// The strict walk of every patch over a vendored file's verified
    /// pristine copy; `None` when the copy is not usable (lock-integrity
    /// says why).
    pub(super) fn walk(&self, vendor: &Vendor) -> Result<Option<Rc<Walk>>> {
        if let Some(w) = self.walks.borrow().get(&vendor.from) {
            return Ok(Some(Rc::clone(w)));
        }
        let Pristine::Verified(pristine) = self.pristine(vendor)? else {
            return Ok(None);
        };
        let patches = self.vendor_patches()?;
        let walk = Rc::new(Walk::run(&patches, vendor, &pristine));
        self.walks
            .borrow_mut()
            .insert(vendor.from.clone(), Rc::clone(&walk));
        Ok(Some(walk))
    }
}
