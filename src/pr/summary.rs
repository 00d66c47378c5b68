//! [`Summary`]: every fact the upgrade's pull request states, as data.
//!
//! `ops::pr` gathers it from the base commit and the working tree;
//! [`title`](super::title) and [`body`](super::body) render it, and
//! `pr --format json` prints it as it is, so the Markdown and the JSON can
//! never say different things. Every list is in a fixed order (vendor.toml's,
//! or sorted by path) and nothing holds a time, so the same change gives the
//! same bytes.

use serde::Serialize;

/// What an upgrade of one package changes, and what was verified.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// The package directory relative to the repository root, `/`-separated
    /// (`packages/system/multus`): the Conventional Commits scope.
    pub package: String,
    /// The upstream and the versions moved between (the first one, when
    /// the package has several).
    pub upstream: Upstream,
    /// Every upstream, in vendor.toml order, when the package has several
    /// (`[[upstream]]`); empty for one.
    pub upstreams: Vec<Upstream>,
    /// Each `[[patch]]`, in vendor.toml order.
    pub patches: Vec<Patch>,
    /// The image's Go builder against upstream's go.mod, when there is an
    /// image (the first one's, when the package has several).
    pub builder: Option<Builder>,
    /// Every image's Go builder against its own upstream's go.mod, in
    /// vendor.toml order, when the package has several (`[[image]]`); empty
    /// for one.
    pub builders: Vec<ImageBuilder>,
    /// The pinned image, when the package pins one (the first one, when it
    /// has several).
    pub image: Option<Image>,
    /// Every pinned image, in vendor.toml order, when the package has
    /// several (`[[image]]`); empty for one.
    pub images: Vec<Image>,
    /// Each `[[marker]]`, in vendor.toml order.
    pub markers: Vec<Marker>,
    /// Lines added and removed in each vendored upstream file between the
    /// versions, in vendor.toml order.
    pub diffstat: Vec<FileStat>,
    /// Files of vendored directories upstream added between the versions
    /// (rendered paths), vendored now; of every upstream (each
    /// [`Upstream`] has its own).
    pub added: Vec<String>,
    /// Files of vendored directories upstream removed, deleted here.
    pub removed: Vec<String>,
    /// What changed in each changed file of the package, sorted by path.
    pub adaptations: Vec<Adaptation>,
    /// The checks run on the working tree and what they found.
    pub checks: Checks,
}

/// The upstream and its two versions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Upstream {
    /// Its `name` in vendor.toml (`[[upstream]]`); `None` for an unnamed
    /// `[upstream]`.
    pub label: Option<String>,
    /// `github:owner/name` or `git:URL`.
    pub source: String,
    /// The repository's name (`multus-cni`).
    pub name: String,
    /// Its web page, for GitHub upstreams.
    pub url: Option<String>,
    /// The version the base commit's vendor.toml names; `None` when the
    /// package is new in this change.
    pub from: Option<String>,
    /// The version vendored now.
    pub to: String,
    /// The release page of `to`, for GitHub upstreams.
    pub release_notes: Option<String>,
    /// `{server}/{repo}/compare/{from}...{to}`, for GitHub upstreams whose
    /// version moved.
    pub compare: Option<String>,
    /// The commit `to` points at, as the lock records it.
    pub commit: Option<String>,
    /// Files of its vendored directories added between the versions.
    pub added: Vec<String>,
    /// Files of its vendored directories removed between the versions.
    pub removed: Vec<String>,
    /// For a Helm chart: its app versions and the links of its Chart.yaml.
    pub chart: Option<Chart>,
}

/// What a Helm chart's Chart.yaml says beside its version: `from`/`to` are
/// the chart versions, these the app it ships and where it lives.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Chart {
    /// `appVersion` at the base commit's locked version.
    pub app_from: Option<String>,
    /// `appVersion` at the version vendored now.
    pub app_to: Option<String>,
    /// `home`, as Chart.yaml writes it (the body links it only when it is
    /// an http(s) URL).
    pub home: Option<String>,
    /// `sources`, likewise.
    pub sources: Vec<String>,
}

impl Upstream {
    /// How the text names it: its vendor.toml name, else the repository's.
    pub fn called(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.name)
    }
}

/// One `[[patch]]`: how it landed on the new upstream, and how its hunks
/// differ from the base commit's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Patch {
    /// Its name in vendor.toml.
    pub name: String,
    /// Its file, relative to the package.
    pub file: String,
    /// `vendor` or `source`.
    pub applies_to: String,
    /// One entry per file it patches.
    pub sections: Vec<Section>,
    /// Changes the working tree's patch makes that the base's does not.
    pub adopted: Vec<HunkChange>,
    /// Changes the base's patch made that the working tree's no longer does.
    pub dropped: Vec<HunkChange>,
    /// Whether the patch is new in this change (the base had none).
    pub new: bool,
}

/// How the base's patch for one file lands on the new upstream.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Section {
    /// The patched file, as upstream names it.
    pub target: String,
    /// `exact`, `offset`, `merged`, `conflict`, `already-upstream`,
    /// `not-recomputed` (see `note`), or `removed` (the patch is no longer
    /// in vendor.toml).
    pub result: String,
    /// The hunks that moved and by how many lines, for `offset`.
    pub moved: Vec<HunkMove>,
    /// Why the result could not be recomputed, or what else to know.
    pub note: Option<String>,
}

/// One hunk that applied at an offset.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct HunkMove {
    /// 1-based hunk number in the base's patch.
    pub hunk: usize,
    /// Lines it moved by.
    pub offset: isize,
}

/// A run of removed and added lines one patch has and the other does not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HunkChange {
    /// The file the change is to, as the patch names it after `strip`.
    pub target: String,
    /// The `@@` header of the hunk holding it, in the patch it is in.
    pub header: String,
    /// Removed lines, without their `-` and line end.
    pub removed: Vec<String>,
    /// Added lines, without their `+` and line end.
    pub added: Vec<String>,
}

/// The Go builder stage against the go.mod `go` directive.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Builder {
    /// The Dockerfile, relative to the package.
    pub dockerfile: String,
    /// The golang image of the builder stage, as written (`golang:1.26@sha256:…`).
    pub image: Option<String>,
    /// The builder image in the base commit, when it differs.
    pub image_before: Option<String>,
    /// The Go version its tag names (`1.26`).
    pub go: Option<String>,
    /// The `go` directive of upstream's go.mod at the new version (the lock's).
    pub go_directive: Option<String>,
    /// The directive at the old version, when the base's lock recorded one.
    pub go_directive_before: Option<String>,
    /// Whether `go` satisfies `go_directive`; `None` when either is unknown.
    pub satisfied: Option<bool>,
}

/// One image's [`Builder`], named, for a package of several images.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ImageBuilder {
    /// The image's `name` in vendor.toml.
    pub name: Option<String>,
    /// Its builder, the keys of [`Summary::builder`] beside `name`.
    #[serde(flatten)]
    pub builder: Builder,
}

/// The pinned image.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Image {
    /// Its `name` in vendor.toml (`[[image]]`); `None` for an unnamed
    /// `[image]`.
    pub name: Option<String>,
    /// `repository:tag@sha256:…` as pinned now.
    pub reference: String,
    /// The reference pinned in the base commit, when it differs.
    pub before: Option<String>,
    /// Each platform's manifest digest, as the lock records them (sorted).
    pub platforms: Vec<PlatformDigest>,
}

/// One platform of a multi-platform image.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PlatformDigest {
    /// `linux/amd64`.
    pub platform: String,
    /// `sha256:…`.
    pub digest: String,
}

/// One `[[marker]]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Marker {
    /// Its name in vendor.toml.
    pub name: String,
    /// The file holding it.
    pub file: String,
    /// The marker's key.
    pub key: String,
    /// Its value in the working tree; `None` when it is missing.
    pub value: Option<String>,
    /// Its value in the base commit, when it differs.
    pub before: Option<String>,
    /// The offline comparison with `expect`: `None` when it agrees, else the
    /// finding's message.
    pub offline: Option<String>,
    /// The online resolver, if the marker has one.
    pub resolver: Option<String>,
    /// Whether and how the resolver re-verified it.
    pub reverified: Reverified,
}

/// Whether a marker's online resolver ran, and what it said.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(tag = "state", content = "detail", rename_all = "kebab-case")]
pub enum Reverified {
    /// The marker has no resolver: only the offline comparison holds.
    #[default]
    NoResolver,
    /// `--offline`: the resolver did not run.
    Offline,
    /// The resolver ran and agrees with the pinned value it vouches for.
    Agrees,
    /// The resolver ran and disagrees: its finding's message.
    Disagrees(String),
    /// The resolver could not run: why.
    Failed(String),
}

/// Lines added and removed in one file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FileStat {
    /// The file, as upstream names it.
    pub file: String,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
    /// `added`, `removed`, `changed`, or `unknown` (see `note`).
    pub status: String,
    /// Why the old copy could not be compared.
    pub note: Option<String>,
}

/// What changed in one file of the package.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Adaptation {
    /// The file, relative to the package.
    pub file: String,
    /// What changed in it, in a few words.
    pub change: String,
}

/// The checks run on the working tree.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Checks {
    /// The command, as a person would run it.
    pub command: String,
    /// Error findings.
    pub errors: usize,
    /// Warning findings.
    pub warnings: usize,
    /// Each error and warning: `id file:line: message`.
    pub findings: Vec<String>,
}
