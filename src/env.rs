//! The environment variables of DESIGN.md, read once.
//!
//! Everything else takes an [`Env`] instead of calling `std::env::var`, so a
//! test can hand in its own and the list of variables revendor honours lives
//! in one place (clippy.toml bans `std::env::var` elsewhere).

use std::path::PathBuf;

/// The variables revendor reads, with their defaults applied.
#[derive(Clone)]
pub struct Env {
    /// `GITHUB_API_URL`: releases, commits, pull requests.
    pub api_url: String,
    /// `GITHUB_SERVER_URL`: archives, release assets, git.
    pub server_url: String,
    /// `REVENDOR_RAW_URL`: single files at a ref.
    pub raw_url: String,
    /// `GITHUB_TOKEN` or `GH_TOKEN`; never printed.
    pub token: Option<String>,
    /// `REVENDOR_CACHE_DIR`: content-addressed downloads and HTTP validators.
    pub cache_dir: PathBuf,
    /// `DOCKER_CONFIG`: registry credentials.
    pub docker_config: PathBuf,
    /// `REVENDOR_REGISTRY_MIRRORS`: `host=mirror,…`.
    pub registry_mirrors: Option<String>,
    /// `REVENDOR_HELM_AUTH`: `host=user:password,…` for private chart
    /// repositories; never printed.
    pub helm_auth: Option<String>,
    /// `GITHUB_STEP_SUMMARY`: where `--format github` appends its Markdown.
    pub step_summary: Option<PathBuf>,
    /// `GITHUB_WORKSPACE`: what `--format github` makes annotation paths
    /// relative to (else the git root).
    pub github_workspace: Option<PathBuf>,
    /// `NO_COLOR`: set to anything non-empty to disable colour.
    pub no_color: bool,
    /// `CLICOLOR_FORCE`: set to anything but `0` to colour even into a pipe
    /// (`NO_COLOR` and `--color never` still win).
    pub clicolor_force: bool,
    /// `REVENDOR_HTTP_TIMEOUT`: seconds one HTTP request may take before it
    /// is retried (default 30).
    pub http_timeout: std::time::Duration,
    /// `REVENDOR_LOCK_TIMEOUT`: seconds a run waits for another revendor
    /// holding its package before it gives up (default 300; 0: not at all).
    pub lock_timeout: std::time::Duration,
    /// `GITHUB_REPOSITORY` (`owner/name`, set by GitHub Actions): where
    /// `revendor pr --create` opens the pull request.
    pub repository: Option<String>,
    /// `GITHUB_WORKSPACE`: what annotation and job-matrix paths of
    /// `check --all` are relative to (default: the git root).
    pub workspace: Option<PathBuf>,
    /// `GITHUB_OUTPUT`: where `check --all --format github` writes the job
    /// matrix (`matrix={"package":[…]}`).
    pub github_output: Option<PathBuf>,
    /// `REGISTRY` (cozystack's `make image`): replaces everything before the
    /// image name in `[image] repository`, as `$(REGISTRY)/multus-cni`.
    pub registry: Option<String>,
    /// `IMAGE_TAG` (cozystack's CI tag scheme: `pr-<N>-<sha>`, a release's
    /// tag, `main`): the tag to build, push and pin instead of `[image] tag`.
    pub image_tag: Option<String>,
    /// `PUBLISH_VERSIONED=1`: also push `[image] tag` when `IMAGE_TAG` differs.
    pub publish_versioned: bool,
    /// `PUBLISH_FLOATING=1`: also push `:latest`.
    pub publish_floating: bool,
    /// `BUILDX_EXTRA_ARGS` (cozystack's `make image`): arguments for `docker
    /// buildx build`, split at whitespace as make splits them; they count in
    /// the content hash like the arguments after `--`.
    pub buildx_extra_args: Vec<String>,
    /// `BUILDER` (cozystack's `make image`): the buildx builder instance,
    /// passed as `--builder=NAME` (not revendor's `--builder`, which picks
    /// buildx or buildah).
    pub buildx_instance: Option<String>,
    /// `SBOM=1`: buildx attaches an SBOM attestation (`--sbom=true`).
    pub sbom: bool,
    /// `OCI_EXPORT_DIR` (cozystack's fork builds export archives instead of
    /// pushing): `image build` refuses it, since it pins only what it read
    /// back from a registry.
    pub oci_export_dir: Option<String>,
    /// `GIT_AUTHOR_NAME`, `_EMAIL`, `_DATE`: who `pr --create` commits as
    /// (git config's `user.*` fills in what is unset).
    pub git_author: GitIdentity,
    /// `GIT_COMMITTER_NAME`, `_EMAIL`, `_DATE`: likewise for the committer,
    /// who also signs off with `--signoff`.
    pub git_committer: GitIdentity,
    /// `REVENDOR_HELM`: the Helm binary contracts with `helm` render with
    /// (default: `helm` on [`Env::path`]).
    pub helm: Option<PathBuf>,
    /// `PATH`: where `helm` is looked for when `REVENDOR_HELM` is unset.
    pub path: Option<String>,
    /// `GIT_CONFIG_COUNT`: how many `GIT_CONFIG_KEY_<n>`/`_VALUE_<n>` pairs
    /// the caller hands git; `pr --create` adds its own after them.
    pub git_config_count: usize,
}

/// A git identity as the `GIT_AUTHOR_*` / `GIT_COMMITTER_*` variables give
/// it; each part may be unset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitIdentity {
    /// `*_NAME`.
    pub name: Option<String>,
    /// `*_EMAIL`.
    pub email: Option<String>,
    /// `*_DATE`, as written (`@1767225600 +0000`).
    pub date: Option<String>,
}

impl std::fmt::Debug for Env {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Env")
            .field("api_url", &self.api_url)
            .field("server_url", &self.server_url)
            .field("raw_url", &self.raw_url)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("cache_dir", &self.cache_dir)
            .finish_non_exhaustive()
    }
}

impl Env {
    /// Reads the process environment.
    #[allow(clippy::disallowed_methods)] // the one place that reads it
    pub fn from_process() -> Env {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let home = dirs::home_dir().unwrap_or_else(|| PathBuf::from("."));
        Env {
            api_url: trim(var("GITHUB_API_URL").unwrap_or_else(|| "https://api.github.com".into())),
            server_url: trim(
                var("GITHUB_SERVER_URL").unwrap_or_else(|| "https://github.com".into()),
            ),
            raw_url: trim(
                var("REVENDOR_RAW_URL")
                    .unwrap_or_else(|| "https://raw.githubusercontent.com".into()),
            ),
            token: var("GITHUB_TOKEN").or_else(|| var("GH_TOKEN")),
            cache_dir: var("REVENDOR_CACHE_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    dirs::cache_dir()
                        .unwrap_or_else(|| home.join(".cache"))
                        .join("revendor")
                }),
            docker_config: var("DOCKER_CONFIG")
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".docker")),
            registry_mirrors: var("REVENDOR_REGISTRY_MIRRORS"),
            helm_auth: var("REVENDOR_HELM_AUTH"),
            step_summary: var("GITHUB_STEP_SUMMARY").map(PathBuf::from),
            github_workspace: var("GITHUB_WORKSPACE").map(PathBuf::from),
            no_color: var("NO_COLOR").is_some(),
            clicolor_force: var("CLICOLOR_FORCE").is_some_and(|v| v != "0"),
            repository: var("GITHUB_REPOSITORY"),
            workspace: var("GITHUB_WORKSPACE").map(PathBuf::from),
            github_output: var("GITHUB_OUTPUT").map(PathBuf::from),
            registry: var("REGISTRY").map(|r| r.trim_end_matches('/').to_owned()),
            image_tag: var("IMAGE_TAG"),
            publish_versioned: var("PUBLISH_VERSIONED").as_deref() == Some("1"),
            publish_floating: var("PUBLISH_FLOATING").as_deref() == Some("1"),
            buildx_extra_args: var("BUILDX_EXTRA_ARGS")
                .map(|v| v.split_whitespace().map(str::to_owned).collect())
                .unwrap_or_default(),
            buildx_instance: var("BUILDER"),
            sbom: var("SBOM").as_deref() == Some("1"),
            oci_export_dir: var("OCI_EXPORT_DIR"),
            git_author: GitIdentity {
                name: var("GIT_AUTHOR_NAME"),
                email: var("GIT_AUTHOR_EMAIL"),
                date: var("GIT_AUTHOR_DATE"),
            },
            git_committer: GitIdentity {
                name: var("GIT_COMMITTER_NAME"),
                email: var("GIT_COMMITTER_EMAIL"),
                date: var("GIT_COMMITTER_DATE"),
            },
            helm: var("REVENDOR_HELM").map(PathBuf::from),
            path: var("PATH"),
            git_config_count: var("GIT_CONFIG_COUNT")
                .and_then(|n| n.parse().ok())
                .unwrap_or(0),
            http_timeout: std::time::Duration::from_secs_f64(
                var("REVENDOR_HTTP_TIMEOUT")
                    .and_then(|v| v.parse::<f64>().ok())
                    .filter(|s| s.is_finite() && *s > 0.0)
                    .unwrap_or(30.0),
            ),
            lock_timeout: std::time::Duration::from_secs_f64(
                var("REVENDOR_LOCK_TIMEOUT")
                    .and_then(|v| v.parse::<f64>().ok())
                    .filter(|s| s.is_finite() && *s >= 0.0)
                    .unwrap_or(300.0),
            ),
        }
    }
}

fn trim(url: String) -> String {
    url.trim_end_matches('/').to_string()
}
