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

use crate::config::lock::Lock;
use crate::config::{Config, ConfigError, Vendor};
use crate::dockerfile::Dockerfile;
use crate::error::{Error, Result};
use crate::manifest::{self, Manifest};
use crate::paths;
use crate::render::{self, Landed, Package, Stamp};
use crate::upstream;
use crate::upstream::Pristine;
use crate::workspace::Context;

/// The vendor patches and the vendored files they were checked against.
type Loaded<'a> = (Rc<Package<'a>>, Rc<Vec<Vendor>>);

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
    /// The locked versions and pins ([`Stamp::of_lock`]).
    pub stamp: Stamp,
    files: RefCell<BTreeMap<String, Option<Rc<Vec<u8>>>>>,
    edited: RefCell<Vec<String>>,
    pristine: RefCell<BTreeMap<String, Rc<Pristine>>>,
    package: RefCell<Option<Loaded<'a>>>,
    walks: RefCell<BTreeMap<String, Rc<Landed>>>,
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
            stamp: Stamp::of_lock(config, lock),
            files: RefCell::default(),
            edited: RefCell::default(),
            pristine: RefCell::default(),
            package: RefCell::default(),
            walks: RefCell::default(),
            manifests: RefCell::default(),
        }
    }

    /// The bytes of a package file (as edited by `--fix` so far); `None`
    /// when it does not exist. Shared with the checks that read it before,
    /// not copied (a rendered file was held twice at the closing check's
    /// peak: issue 23).
    pub fn read(&self, rel: &str) -> Result<Option<Rc<Vec<u8>>>> {
        if let Some(bytes) = self.files.borrow().get(rel) {
            return Ok(bytes.clone());
        }
        let bytes = paths::read_opt(&self.ctx.root.join(rel))?.map(Rc::new);
        self.files
            .borrow_mut()
            .insert(rel.to_owned(), bytes.clone());
        Ok(bytes)
    }

    /// Every regular file under the package directory `dir` (a path ending
    /// with `/`), recursively, as package paths, sorted ([`paths::list`]).
    pub fn list(&self, dir: &str) -> Result<Vec<String>> {
        paths::list(&self.ctx.root, dir)
    }

    /// The text of a package file; not UTF-8 is a configuration error.
    pub fn text(&self, rel: &str) -> Result<Option<String>> {
        match self.read(rel)? {
            None => Ok(None),
            Some(bytes) => String::from_utf8(bytes.to_vec()).map(Some).map_err(|_| {
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
        self.files
            .borrow_mut()
            .insert(rel.to_owned(), Some(Rc::new(bytes)));
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
            .filter_map(|rel| Some((rel.clone(), files.get(rel)?.as_deref()?.clone())))
            .collect()
    }

    /// The pristine copy of a vendored file, verified against the lock
    /// ([`Pristine::read`]); with `--online`, a copy neither on disk nor in
    /// the download cache is downloaded at the locked version, as `render`
    /// and `update` would. Shared, not copied, with each check that asks
    /// (a 5 MB copy was three copies a check: issue 23).
    pub fn pristine(&self, vendor: &Vendor) -> Result<Rc<Pristine>> {
        if let Some(p) = self.pristine.borrow().get(&vendor.pristine()) {
            return Ok(Rc::clone(p));
        }
        let up = self.config.upstream(vendor.upstream.as_deref());
        let source = self
            .online
            .then(|| upstream::open(up, &self.ctx.env, &self.ctx.client));
        let state = Rc::new(Pristine::read(
            &self.ctx.root,
            self.lock,
            vendor,
            &self.ctx.cache,
            source.as_deref(),
        )?);
        self.pristine
            .borrow_mut()
            .insert(vendor.pristine(), Rc::clone(&state));
        Ok(state)
    }

    /// The package's render pipeline at the lock: every `applies-to =
    /// "vendor"` patch, parsed once, with the locked versions and pins; a
    /// malformed patch or one naming no vendored file is a configuration
    /// error.
    pub fn package(&self) -> Result<Rc<Package<'a>>> {
        Ok(self.loaded()?.0)
    }

    /// The vendored files at the locked version ([`render::files`]): each
    /// file `[[vendor]]`, and each directory's files as the lock lists them
    /// with those its patches create.
    pub fn files(&self) -> Result<Rc<Vec<Vendor>>> {
        Ok(self.loaded()?.1)
    }

    fn loaded(&self) -> Result<Loaded<'a>> {
        if let Some((p, f)) = self.package.borrow().as_ref() {
            return Ok((Rc::clone(p), Rc::clone(f)));
        }
        let (patches, files) = render::load_locked(self.config, self.lock)?;
        let package = Package::new(self.config, Some(self.lock), self.stamp.clone(), patches);
        let (package, files) = (Rc::new(package), Rc::new(files));
        *self.package.borrow_mut() = Some((Rc::clone(&package), Rc::clone(&files)));
        Ok((package, files))
    }

    /// The walk of a vendored file's patch stack over its verified pristine
    /// copy ([`Package::walk`]); `None` when the
    /// copy is not usable (lock-integrity says why).
    pub(super) fn walk(&self, vendor: &Vendor) -> Result<Option<Rc<Landed>>> {
        if let Some(w) = self.walks.borrow().get(&vendor.to) {
            return Ok(Some(Rc::clone(w)));
        }
        let pristine = self.pristine(vendor)?;
        let Pristine::Verified(pristine) = &*pristine else {
            return Ok(None);
        };
        let walk = Rc::new(self.package()?.walk(vendor, pristine));
        self.walks
            .borrow_mut()
            .insert(vendor.to.clone(), Rc::clone(&walk));
        Ok(Some(walk))
    }
}
