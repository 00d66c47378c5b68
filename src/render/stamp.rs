//! [`Stamp`]: what a render fills in besides the patches, for a package of
//! any number of upstreams and images: each upstream's placeholders
//! (`{version}`, `{semver}`, `{commit}`, `{app-version}`) and each image's pinned reference.
//!
//! `render` and `check` stamp with the lock ([`Stamp::locked`]); `update`
//! renders twice, at the locked versions and at the targets
//! ([`Stamp::moved`]), with the same pins.

use crate::config::lock::Lock;
use crate::config::{Config, ConfigError, Image, Placeholders, RewriteKind, needs_commit};
use crate::error::Result;

/// Each upstream's placeholders and each image's pin, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stamp {
    versions: Vec<(Option<String>, Placeholders)>,
    pins: Vec<(Option<String>, String)>,
}

impl Stamp {
    /// The stamp the lock records: every upstream of vendor.toml at its
    /// locked version and commit, every locked image pin. An upstream the
    /// lock lacks, or a `{commit}` rewrite of an upstream whose commit it
    /// lacks, is an error naming vendor.toml (`update` vendors it).
    pub fn locked(config: &Config, lock: &Lock) -> Result<Stamp> {
        for up in &config.upstreams {
            let Some(locked) = lock.upstream(up.name.as_deref()) else {
                return Err(ConfigError::at(
                    config.root.join("vendor.toml"),
                    Some(up.source_line),
                    format!("the lock has no upstream `{}` yet", up.label()),
                )
                .hint("run `revendor update` to vendor it")
                .into());
            };
            let values = up.placeholders(&locked.version, locked.commit.as_deref());
            Stamp::require_commit(config, up.name.as_deref(), &values)?;
        }
        Ok(Stamp::of_lock(config, lock))
    }

    /// What the lock records, leaving out the upstreams it lacks: for
    /// `check`, which reports those (`lock-integrity`) and checks the rest.
    pub fn of_lock(config: &Config, lock: &Lock) -> Stamp {
        let versions = config
            .upstreams
            .iter()
            .filter_map(|up| {
                let locked = lock.upstream(up.name.as_deref())?;
                let values = Placeholders {
                    app_version: locked.app_version.clone(),
                    ..up.placeholders(&locked.version, locked.commit.as_deref())
                };
                Some((up.name.clone(), values))
            })
            .collect();
        let pins = lock
            .images
            .iter()
            .map(|i| (i.name.clone(), i.reference.clone()))
            .collect();
        Stamp { versions, pins }
    }

    /// A stamp of the given upstream values and pins.
    pub fn new(
        versions: Vec<(Option<String>, Placeholders)>,
        pins: Vec<(Option<String>, String)>,
    ) -> Stamp {
        Stamp { versions, pins }
    }

    /// This stamp with upstream `name` at `values`.
    pub fn moved(&self, name: Option<&str>, values: Placeholders) -> Stamp {
        let mut out = self.clone();
        match out.versions.iter_mut().find(|(n, _)| n.as_deref() == name) {
            Some(entry) => entry.1 = values,
            None => out.versions.push((name.map(str::to_owned), values)),
        }
        out
    }

    /// The placeholders of upstream `name` (empty when it has none).
    pub fn values(&self, name: Option<&str>) -> &Placeholders {
        static NONE: Placeholders = Placeholders {
            version: String::new(),
            semver: String::new(),
            commit: None,
            app_version: None,
        };
        self.versions
            .iter()
            .find(|(n, _)| n.as_deref() == name)
            .map_or(&NONE, |(_, v)| v)
    }

    /// The version (`{version}`) of upstream `name`.
    pub fn version(&self, name: Option<&str>) -> &str {
        &self.values(name).version
    }

    /// The `VERSION` build argument `image` is built with at this stamp:
    /// what the `dockerfile-arg = "VERSION"` rewrite of its Dockerfile gives
    /// (`{semver}` for a recipe that wants no `v`), else the version of the
    /// image's upstream. `image build` builds with it, and `check` hashes
    /// the build's inputs with it (`image-stale`), so the two agree.
    pub fn version_arg(&self, config: &Config, image: &Image) -> String {
        let upstream = config.image_upstream(image);
        config
            .rewrites
            .iter()
            .find(|r| {
                r.file == image.dockerfile
                    && matches!(&r.kind, RewriteKind::DockerfileArg { name } if name == "VERSION")
            })
            .map_or_else(
                || self.version(upstream).to_owned(),
                |r| r.value(self.values(r.upstream.as_deref())),
            )
    }

    /// The pinned reference of image `name`, if one is pinned.
    pub fn pin(&self, name: Option<&str>) -> Option<&str> {
        self.pins
            .iter()
            .find(|(n, _)| n.as_deref() == name)
            .map(|(_, r)| r.as_str())
    }

    /// Every pin, by image name.
    pub fn pins(&self) -> &[(Option<String>, String)] {
        &self.pins
    }

    /// A `{commit}` rewrite of upstream `name` needs `values.commit`.
    pub fn require_commit(
        config: &Config,
        name: Option<&str>,
        values: &Placeholders,
    ) -> Result<()> {
        let Some(rewrite) = config
            .rewrites
            .iter()
            .find(|r| r.upstream.as_deref() == name && needs_commit(&r.with))
        else {
            return Ok(());
        };
        if values.commit.is_some() {
            return Ok(());
        }
        Err(ConfigError::at(
            config.root.join("vendor.toml"),
            Some(rewrite.line),
            format!(
                "the [[rewrite]] uses {{commit}}, but the commit of {} is not known",
                values.version
            ),
        )
        .hint("run `revendor update`, which records the commit in the lock")
        .into())
    }
}
