//! vendor.toml: what is vendored, patched, rewritten, built, pinned and checked.
//!
//! 1. [`Config::load`] reads the file and deserializes it into `raw::RawConfig`
//!    (unknown keys rejected with their line).
//! 2. `validate` turns that into [`Config`]: paths are resolved against the
//!    package directory and may not leave it, through `..` or a symlink
//!    (except `expect.file`, which is declared to read a sibling package);
//!    the files revendor writes are not its own (vendor.toml, `upstream/`,
//!    `.revendor-txn/`, `.git`) and each `to` is a file or a directory of
//!    its own (see `bounds`); a directory's `include`/`exclude` globs compile
//!    (`select`); names are unique, the semver range parses, patch files
//!    exist. Upstreams and images, one (`[upstream]`) or several
//!    (`[[upstream]]` with names), and the `upstream =`/`image =` that name
//!    them, are `named`'s.
//!
//! Every error is a [`ConfigError`] naming vendor.toml, the line and the key.
//! The lock lives beside it in [`lock`].

mod asset;
mod bounds;
mod context;
mod contract;
pub mod edit;
mod error;
pub mod lock;
pub mod lock_index;
mod lock_memo;
mod lock_schema;
mod named;
mod one_or_many;
mod raw;
pub mod repo;
mod select;
mod suggest;
mod upstream;
mod validate;
pub mod version;

pub use asset::Asset;
pub use error::{ConfigError, line_of};
pub use select::Select;
pub use upstream::{
    Placeholders, Selection, TagPattern, Upstream, UpstreamSource, is_commit, needs_commit,
};

use std::path::{Path, PathBuf};

/// The validated vendor.toml of one package.
#[derive(Debug, Clone)]
pub struct Config {
    /// The package directory (holds vendor.toml).
    pub root: PathBuf,
    /// Where each upstream lives and which versions `update` may move to,
    /// in file order: one `[upstream]`, or several `[[upstream]]` (never
    /// empty). Ask [`Config::upstream`] for the one an entry names.
    pub upstreams: Vec<Upstream>,
    /// Upstream files copied into the package.
    pub vendor: Vec<Vendor>,
    /// Patches applied to vendored files or to the upstream source.
    pub patches: Vec<Patch>,
    /// Text rewrites applied after the patches.
    pub rewrites: Vec<Rewrite>,
    /// The images built from upstream source: one `[image]`, or several
    /// `[[image]]`, in file order.
    pub images: Vec<Image>,
    /// Files whose image references are pinned by digest.
    pub pins: Vec<Pin>,
    /// Comment markers that vouch for a pinned value.
    pub markers: Vec<Marker>,
    /// Structural assertions on rendered files.
    pub contracts: Vec<Contract>,
    /// `[checks]`: severity overrides by check id (`marker:talos`) or id
    /// family (`marker` for every marker), as cargo-deny lets users raise or
    /// lower a diagnostic.
    pub severities: Vec<SeverityOverride>,
}

/// One line of `[checks]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeverityOverride {
    /// A check id, or the family before `:` (`contract`, `marker`).
    pub id: String,
    /// What findings of that id become.
    pub level: Level,
}

/// The levels a finding can be set to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Fails the check.
    Error,
    /// Reported; the check passes.
    Warning,
    /// Reported as information.
    Info,
    /// Not reported at all.
    Allow,
}

impl SeverityOverride {
    /// Whether this override applies to findings of `id`; an exact id wins
    /// over its family (see [`Config::level_for`]).
    pub fn matches(&self, id: &str) -> bool {
        self.id == id
            || id
                .split_once(':')
                .is_some_and(|(family, _)| family == self.id)
    }
}

/// `[[vendor]]`: one upstream file, or a whole directory, and where its
/// rendered copy goes.
///
/// A directory is vendored file by file: `render::files` turns it into one
/// file `Vendor` per file it holds at a version (the lock's `[[file]]`
/// entries, or upstream's listing), plus one per file a vendor patch creates
/// inside it. Every command past that works on files only.
#[derive(Debug, Clone)]
pub struct Vendor {
    /// The name of the upstream it comes from (`None`: the unnamed
    /// `[upstream]`); resolved, so set even where vendor.toml could leave
    /// `upstream =` out.
    pub upstream: Option<String>,
    /// Path in the upstream repository. For a directory, the prefix of its
    /// files: `charts/kube-ovn/`, or empty for the repository root (`./`).
    pub from: String,
    /// Path of the rendered output in the package; for a directory, ends
    /// with `/`.
    pub to: String,
    /// Line in vendor.toml.
    pub line: usize,
    /// For a directory: which of its files are vendored.
    pub dir: Option<Select>,
    /// A file of a vendored directory that upstream does not have: a vendor
    /// patch creates it (`--- /dev/null`). Its pristine copy is empty and
    /// kept nowhere, and the lock has no `[[file]]` for it.
    pub created: bool,
    /// A GitHub release asset instead of a repository file (`asset =`):
    /// `from` is then its name as vendor.toml writes it.
    pub asset: Option<Asset>,
}

impl Vendor {
    /// Where the pristine copy is kept: `upstream/<from>`, or
    /// `upstream/<name>/<from>` for a named upstream (two upstreams may
    /// both have a `charts/`).
    pub fn pristine(&self) -> String {
        match &self.upstream {
            Some(name) => format!("upstream/{name}/{}", self.from),
            None => format!("upstream/{}", self.from),
        }
    }

    /// Whether this `[[vendor]]` is a directory (`from` and `to` end with `/`).
    pub fn is_dir(&self) -> bool {
        self.dir.is_some()
    }

    /// For a directory: `path`, an upstream path, relative to `from`, when
    /// the directory holds it and selects it.
    pub fn selects_from<'p>(&self, path: &'p str) -> Option<&'p str> {
        let rel = path.strip_prefix(self.from.as_str())?;
        self.selects(rel)
    }

    /// For a directory: `path`, a package path, relative to `to`, when it
    /// is under `to` and the directory selects it.
    pub fn selects_to<'p>(&self, path: &'p str) -> Option<&'p str> {
        let rel = path.strip_prefix(self.to.as_str())?;
        self.selects(rel)
    }

    fn selects<'p>(&self, rel: &'p str) -> Option<&'p str> {
        let select = self.dir.as_ref()?;
        (!rel.is_empty() && !rel.ends_with('/') && select.selects(rel)).then_some(rel)
    }

    /// The file `rel` of this directory, as a file `Vendor` of the same line.
    pub fn file(&self, rel: &str, created: bool) -> Vendor {
        Vendor {
            upstream: self.upstream.clone(),
            from: format!("{}{rel}", self.from),
            to: format!("{}{rel}", self.to),
            line: self.line,
            dir: None,
            created,
            asset: None,
        }
    }

    /// Whether this `[[vendor]]` renders the package path `to`: it is the
    /// file's `to`, or a file the directory selects.
    pub fn renders(&self, to: &str) -> bool {
        match &self.dir {
            None => self.to == to,
            Some(_) => self.selects_to(to).is_some(),
        }
    }
}

/// What a patch is applied to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppliesTo {
    /// The vendored files (their pristine copies), while rendering.
    Vendor,
    /// The upstream source tree, inside the image build.
    Source,
}

/// `[[patch]]`.
#[derive(Debug, Clone)]
pub struct Patch {
    /// The upstream it patches (resolved as [`Vendor::upstream`]).
    pub upstream: Option<String>,
    /// Unique name, used by `patch refresh NAME` and in reports.
    pub name: String,
    /// The patch file, relative to the package.
    pub file: String,
    /// What it patches.
    pub applies_to: AppliesTo,
    /// Leading path components to strip, as `patch -p`.
    pub strip: usize,
    /// Line in vendor.toml.
    pub line: usize,
}

/// `[[rewrite]]`: one text substitution on a declared file.
#[derive(Debug, Clone)]
pub struct Rewrite {
    /// The upstream whose version fills the placeholders (resolved as
    /// [`Vendor::upstream`]).
    pub upstream: Option<String>,
    /// The file rewritten, relative to the package.
    pub file: String,
    /// What is replaced.
    pub kind: RewriteKind,
    /// The replacement template, with [`Placeholders`].
    pub with: String,
    /// Line in vendor.toml.
    pub line: usize,
}

/// The two rewrite forms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RewriteKind {
    /// On lines containing `needle`, replace `replace` with the template.
    Lines {
        /// Lines that must contain this to be touched.
        needle: String,
        /// The text replaced on those lines.
        replace: String,
    },
    /// Set the default of `ARG <name>=` in a Dockerfile.
    DockerfileArg {
        /// The ARG name.
        name: String,
    },
}

impl Rewrite {
    /// The replacement with its placeholders filled in.
    pub fn value(&self, values: &Placeholders) -> String {
        values.fill(&self.with)
    }
}

/// `[image]` or one `[[image]]`: an image built from upstream source.
#[derive(Debug, Clone)]
pub struct Image {
    /// `name`, which `[[pin]] image =` uses; `None` for an unnamed `[image]`.
    pub name: Option<String>,
    /// Repository pushed to and pinned, without tag.
    pub repository: String,
    /// Tag pushed.
    pub tag: String,
    /// Build context, relative to the package.
    pub context: String,
    /// Dockerfile, relative to the package (default `<context>/Dockerfile`).
    pub dockerfile: String,
    /// Platforms built, such as `linux/amd64`.
    pub platforms: Vec<String>,
    /// The Go the builder stage must use: a minor (`1.26`) or a minimum (`>=1.26`).
    pub go: Option<crate::go::Requirement>,
    /// `buildx` (default) or `buildah`.
    pub builder: String,
    /// Whether buildx attaches provenance attestations.
    pub provenance: bool,
    /// Line in vendor.toml.
    pub line: usize,
}

/// `[[pin]]`: image references in `file` that name `repository`, or the
/// YAML keys `yaml` names.
#[derive(Debug, Clone)]
pub struct Pin {
    /// The image pinned (resolved as [`Vendor::upstream`]: `None` for an
    /// unnamed `[image]`, or when the package declares no image).
    pub image: Option<String>,
    /// The file whose `image:` fields (or YAML keys) are pinned.
    pub file: String,
    /// The repository pinned there; for a `yaml` pin, the image's.
    pub repository: String,
    /// `yaml =`: the keys written instead of `image:` fields.
    pub yaml: Option<YamlPin>,
    /// Upstream repositories whose references this pin replaces. When empty,
    /// any repository with the same last path component (`…/multus-cni`).
    pub replaces: Vec<String>,
    /// Line in vendor.toml.
    pub line: usize,
}

/// `[[pin]] yaml =`: where in a YAML file the pinned image is written.
/// Keys are dotted paths (`global.images.kubeovn.tag`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum YamlPin {
    /// One key holding `<tag>@sha256:<digest>`.
    Joined(String),
    /// Split keys: the repository, the tag (`<tag>@sha256:<digest>`
    /// without a digest key, the tag alone with one) and the digest.
    Split {
        /// The key holding the repository.
        repository: String,
        /// The key holding the tag.
        tag: String,
        /// The key holding `sha256:<digest>`, if any.
        digest: Option<String>,
    },
}

impl YamlPin {
    /// Every key this pin writes, in the order written.
    pub fn keys(&self) -> Vec<&str> {
        match self {
            YamlPin::Joined(key) => vec![key],
            YamlPin::Split {
                repository,
                tag,
                digest,
            } => std::iter::once(repository.as_str())
                .chain(std::iter::once(tag.as_str()))
                .chain(digest.as_deref())
                .collect(),
        }
    }
}

impl Pin {
    /// Whether an image repository is a site of this pin.
    pub fn matches(&self, repository: &str) -> bool {
        if repository == self.repository {
            return true;
        }
        if !self.replaces.is_empty() {
            return self.replaces.iter().any(|r| r == repository);
        }
        last_component(repository) == last_component(&self.repository)
    }
}

fn last_component(repository: &str) -> &str {
    repository.rsplit('/').next().unwrap_or(repository)
}

/// `[[marker]]`: a `# key: value` comment that vouches for a pinned value.
#[derive(Debug, Clone)]
pub struct Marker {
    /// Unique name; the finding id is `marker:<name>`.
    pub name: String,
    /// The file holding the marker line.
    pub file: String,
    /// The marker key.
    pub key: String,
    /// Where the value the marker must equal comes from.
    pub expect: Expect,
    /// The Dockerfile ARG the marker vouches for.
    pub pin: Option<String>,
    /// The online resolver (`talos`, `kube-ovn`).
    pub resolver: Option<String>,
    /// Line in vendor.toml.
    pub line: usize,
}

/// The value a marker must equal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// A literal.
    Value(String),
    /// A key of a YAML file, possibly outside the package.
    Yaml {
        /// The YAML file, relative to the package (may leave it).
        file: String,
        /// Dotted key path.
        key: String,
        /// Drop an `@sha256:…` suffix before comparing.
        strip_digest: bool,
    },
}

/// `[[contract]]`: a structural assertion on a rendered manifest.
#[derive(Debug, Clone)]
pub struct Contract {
    /// Unique name; the finding id is `contract:<name>`.
    pub name: String,
    /// The rendered file read; with `helm`, the template whose documents
    /// are selected (any template's when absent). Always set without `helm`.
    pub file: Option<String>,
    /// With `helm`, the contract holds on what `helm template` renders.
    pub helm: Option<HelmRender>,
    /// Document kind to select; empty for a `render-fails` contract, which
    /// selects nothing.
    pub kind: String,
    /// Document `metadata.name` to select, if any.
    pub object_name: Option<String>,
    /// Key path of the field read.
    pub field: Vec<String>,
    /// Key path inside the field's JSON value.
    pub json: Vec<String>,
    /// The value the field must equal.
    pub equals: Option<String>,
    /// Key path every container and init container must have.
    pub every_container: Vec<String>,
    /// Line in vendor.toml.
    pub line: usize,
}

/// `helm = { chart, values }` of a `[[contract]]`: the chart to render and
/// the values sets to render it with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelmRender {
    /// The chart directory, relative to the package (`.` when the package is
    /// the chart).
    pub chart: String,
    /// Values files, relative to the package; each is one values set, on top
    /// of the chart's values.yaml.
    pub values: Vec<String>,
    /// `render-fails = true`: Helm must refuse every listed values set,
    /// instead of the contract's assertion holding on each.
    pub render_fails: bool,
}

impl HelmRender {
    /// The values sets, in order: `None` for the chart's values.yaml alone
    /// (not for `render-fails`, which is about the listed files), then each
    /// file.
    pub fn values_sets(&self) -> Vec<Option<&str>> {
        let defaults = (!self.render_fails).then_some(None);
        defaults
            .into_iter()
            .chain(self.values.iter().map(|v| Some(v.as_str())))
            .collect()
    }
}

impl Config {
    /// Reads and validates `<dir>/vendor.toml`.
    pub fn load(dir: &Path) -> Result<Config, ConfigError> {
        Config::read(dir, false)
    }

    /// [`Config::load`] for `--adopt-edits`: a vendor `[[patch]]` whose file
    /// does not exist yet is allowed, for the hand edits to start it.
    pub fn load_starting(dir: &Path) -> Result<Config, ConfigError> {
        Config::read(dir, true)
    }

    fn read(dir: &Path, starting: bool) -> Result<Config, ConfigError> {
        let path = dir.join("vendor.toml");
        let text = crate::journal::read_to_string(&path).map_err(|e| {
            ConfigError::at(&path, None, format!("cannot read vendor.toml: {e}"))
                .hint("run revendor in a package directory or pass -C DIR")
        })?;
        Config::validated(dir, &path, &text, starting)
    }

    /// Validates vendor.toml text; `path` is used in messages only.
    pub fn parse(dir: &Path, path: &Path, text: &str) -> Result<Config, ConfigError> {
        Config::validated(dir, path, text, false)
    }

    fn validated(
        dir: &Path,
        path: &Path,
        text: &str,
        starting: bool,
    ) -> Result<Config, ConfigError> {
        let raw: raw::RawConfig = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| line_of(text, s.start));
            let hint = suggest::unknown_key(e.message())
                .unwrap_or_else(|| "fix vendor.toml; docs/reference.md lists every key".into());
            ConfigError::at(path, line, toml_message(e.message())).hint(hint)
        })?;
        validate::validate(dir, path, text, raw, starting)
    }

    /// The upstream `name` names (`upstream =` of an entry, resolved by
    /// validation), or the first one: validation makes every entry name
    /// its upstream when there are several, so `None` means the only one.
    pub fn upstream(&self, name: Option<&str>) -> &Upstream {
        self.upstreams
            .iter()
            .find(|u| u.name.as_deref() == name)
            .unwrap_or(&self.upstreams[0])
    }

    /// Whether a rewrite of upstream `name` uses `{commit}`, so that its
    /// commit must be known to render.
    pub fn needs_commit(&self, name: Option<&str>) -> bool {
        self.rewrites
            .iter()
            .any(|r| r.upstream.as_deref() == name && needs_commit(&r.with))
    }

    /// The image `name` names (`[[pin]] image =`), or the only one.
    pub fn image(&self, name: Option<&str>) -> Option<&Image> {
        self.images
            .iter()
            .find(|i| i.name.as_deref() == name)
            .or_else(|| self.images.first().filter(|_| name.is_none()))
    }

    /// The upstream `image` is built from: the one whose version a
    /// `dockerfile-arg` rewrite of its Dockerfile carries, else the one of a
    /// source patch inside its context, else the first upstream.
    pub fn image_upstream(&self, image: &Image) -> Option<&str> {
        let context = format!("{}/", image.context.trim_end_matches('/'));
        self.rewrites
            .iter()
            .find(|r| {
                r.file == image.dockerfile && matches!(r.kind, RewriteKind::DockerfileArg { .. })
            })
            .map(|r| &r.upstream)
            .or_else(|| {
                self.patches_for(AppliesTo::Source)
                    .find(|p| p.file.starts_with(&context))
                    .map(|p| &p.upstream)
            })
            .unwrap_or(&self.upstreams[0].name)
            .as_deref()
    }

    /// Patches of one kind, in file order.
    pub fn patches_for(&self, applies_to: AppliesTo) -> impl Iterator<Item = &Patch> {
        self.patches
            .iter()
            .filter(move |p| p.applies_to == applies_to)
    }

    /// An absolute path for a package-relative one.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// The level `[checks]` sets for findings of `id`, if any: an exact id
    /// before its family.
    pub fn level_for(&self, id: &str) -> Option<Level> {
        self.severities
            .iter()
            .find(|o| o.id == id)
            .or_else(|| self.severities.iter().find(|o| o.matches(id)))
            .map(|o| o.level)
    }

    /// The `[[vendor]]` rendering `to` (the file, or the directory that
    /// selects it), if any.
    pub fn vendor_rendering(&self, to: &str) -> Option<&Vendor> {
        self.vendor.iter().find(|v| v.renders(to))
    }
}

/// Turns serde's wording into ours: "unknown field" becomes "unknown key",
/// and Rust's type names the TOML ones ("expected usize" meant a number).
fn toml_message(message: &str) -> String {
    let mut message = message.trim().replace("unknown field", "unknown key");
    message = message.replace("missing field", "missing key");
    for (rust, toml) in [
        ("expected usize", "expected a non-negative integer"),
        ("expected u64", "expected a non-negative integer"),
        ("expected u32", "expected a non-negative integer"),
        ("expected a sequence", "expected an array"),
        ("expected a map", "expected a table"),
        ("invalid type: sequence", "invalid type: array"),
        ("invalid type: map", "invalid type: table"),
    ] {
        message = message.replace(rust, toml);
    }
    message
}
