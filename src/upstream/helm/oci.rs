//! [`Oci`]: a chart in an OCI registry (`helm = "oci://host/path"`, the
//! chart at `host/path/<chart>`), as a [`Source`], read as `helm pull
//! oci://… --untar` reads it.
//!
//! 1. The versions are the repository's tags, every page of the list
//!    (`Link: …; rel="next"`), with `_` read as `+`: OCI tags cannot hold a
//!    `+`, so Helm writes a version's build metadata after a `_`. A tag that
//!    is not a semver version is not a chart version.
//! 2. A version's manifest is read by its tag, or by the digest vendor.toml
//!    pins (`version = "0.1.1@sha256:…"`), verified by the registry client
//!    against that digest and the one the registry announces. It must be a
//!    chart's ([`chart_layer`]): Helm's config media type and one chart
//!    layer. A tag whose manifest is an image is refused, never unpacked.
//! 3. The chart layer is downloaded (at most [`MAX_ARCHIVE`]), checked
//!    against the manifest's digest for it before anything reads it, and
//!    unpacked as Helm does ([`chart::unpack`]).
//! 4. The lock records the manifest digest (`archive-sha256`): it pins the
//!    version, and the manifest and the chart layer are kept in the
//!    download cache by their sha256, so [`Source::kept_tree`] reads the
//!    locked chart with no registry.
//! 5. A tag can be pushed again with other content: [`Source::moved`] says
//!    when the version now names another manifest than the lock's, and
//!    `check --online` reports it ([`Newer::Moved`]).
//!
//! Credentials, token challenges and mirrors are the registry client's, as
//! for images (`DOCKER_CONFIG`, `REVENDOR_REGISTRY_MIRRORS`); a registry
//! answering 401 without a challenge is its error, which says so.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use super::chart::{self, Chart};
use super::repo::MAX_ARCHIVE;
use crate::config::Upstream;
use crate::config::lock::LockedUpstream;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::image::{Descriptor, Digest, Manifest, MediaType, Reference};
use crate::registry;
use crate::upstream::cache::Cache;
use crate::upstream::{Artifact, Listed, Newer, Pages, Release, Source, SourceTree, newer_release};

/// The media type of a chart's config blob (its Chart.yaml as JSON).
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.cncf.helm.config.v1+json";
/// The media type of the layer that holds the chart's `.tgz`.
pub const CHART_MEDIA_TYPE: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";

/// One chart of one OCI registry.
pub struct Oci<'a> {
    /// `oci://host/path`, as vendor.toml names it.
    repo: String,
    chart: String,
    /// `host/path/<chart>`: the image name the registry knows it by.
    name: String,
    /// The version vendor.toml pins to a manifest digest, and that digest.
    pin: Option<(String, String)>,
    env: &'a Env,
    offline: bool,
    cache: Cache,
    client: RefCell<Option<Rc<registry::Client>>>,
    tags: RefCell<Option<Rc<Vec<String>>>>,
    charts: RefCell<BTreeMap<String, Rc<Fetched>>>,
}

/// A version's manifest and chart, verified and unpacked.
struct Fetched {
    /// `oci://host/path/<chart>:<tag>` (or `@<digest>`): where it was read.
    url: String,
    manifest: Digest,
    chart: Chart,
}

impl<'a> Oci<'a> {
    /// Chart `chart` of the registry path `repo` (`oci://host/path`, no
    /// trailing `/`), `up`'s `version` read by its pinned digest when it has
    /// one; `offline` forbids the registry.
    pub fn new(
        repo: &str,
        chart: &str,
        up: Option<&Upstream>,
        env: &'a Env,
        offline: bool,
    ) -> Self {
        let repo = repo.trim_end_matches('/').to_owned();
        let name = format!("{}/{chart}", repo.trim_start_matches("oci://"));
        let pin = up.and_then(|u| Some((u.version.clone()?, u.pin.clone()?)));
        Oci {
            repo,
            chart: chart.to_owned(),
            name,
            pin,
            env,
            offline,
            cache: Cache::new(&env.cache_dir),
            client: RefCell::default(),
            tags: RefCell::default(),
            charts: RefCell::default(),
        }
    }

    /// The registry client, built on first use; refused offline.
    fn client(&self) -> Result<Rc<registry::Client>> {
        if self.offline {
            return Err(crate::net::HttpError::Offline {
                url: self.repo.clone(),
            }
            .into());
        }
        if let Some(client) = &*self.client.borrow() {
            return Ok(client.clone());
        }
        let client = Rc::new(registry::Client::configured(
            &self.env.docker_config,
            self.env.registry_mirrors.as_deref(),
            self.env.http_timeout,
        )?);
        *self.client.borrow_mut() = Some(client.clone());
        Ok(client)
    }

    /// The reference `version` is read by: its pinned digest, or its tag.
    fn reference(&self, version: &str) -> Result<Reference> {
        let text = match &self.pin {
            Some((pinned, digest)) if pinned == version => format!("{}@{digest}", self.name),
            _ => format!("{}:{}", self.name, tag_of(version)),
        };
        Reference::parse(&text).map_err(|e| {
            Error::usage(
                format!("`oci://{text}` is not a chart reference: {e}"),
                "write helm = \"oci://registry/path\" and the chart's name in `chart`",
            )
        })
    }

    /// The repository's tags, read once.
    fn tags(&self) -> Result<Rc<Vec<String>>> {
        if let Some(tags) = &*self.tags.borrow() {
            return Ok(tags.clone());
        }
        let reference = self.reference("latest")?;
        let tags = match self.client()?.tags(&reference) {
            Err(registry::Error::ManifestUnknown { url, .. }) => {
                return Err(Error::NotFound {
                    what: format!("chart `{}`", self.chart),
                    url,
                });
            }
            found => Rc::new(found?),
        };
        *self.tags.borrow_mut() = Some(tags.clone());
        Ok(tags)
    }

    /// The manifest and chart of `version`, verified and unpacked, read once.
    fn fetched(&self, version: &str) -> Result<Rc<Fetched>> {
        if let Some(f) = self.charts.borrow().get(version) {
            return Ok(f.clone());
        }
        let reference = self.reference(version)?;
        let url = format!("oci://{reference}");
        let client = self.client()?;
        let manifest = match client.get_manifest(&reference) {
            Err(registry::Error::ManifestUnknown { .. }) => {
                return Err(Error::NotFound {
                    what: format!("version {version} of chart `{}`", self.chart),
                    url,
                });
            }
            found => found?,
        };
        let not_a_chart = |detail: String| Error::Malformed {
            what: format!("chart `{}` {version}", self.chart),
            url: url.clone(),
            detail,
        };
        let layer = chart_layer(&manifest.manifest).map_err(not_a_chart)?;
        if layer.size > MAX_ARCHIVE {
            return Err(Error::TooLarge {
                what: format!("the chart layer of `{url}` ({} bytes)", layer.size),
                limit: format!("at most {} MiB", MAX_ARCHIVE >> 20),
                remote: true,
            });
        }
        let bytes = match self.cache.get(layer.digest.hex()) {
            Some(bytes) => bytes,
            None => {
                let bytes = client.get_blob_within(&reference, &layer.digest, MAX_ARCHIVE)?;
                self.cache.put(&bytes);
                bytes
            }
        };
        self.cache.put(&manifest.body);
        let chart = chart::unpack(&bytes, &self.chart, version).map_err(|detail| {
            not_a_chart(format!(
                "its chart layer is not an archive Helm unpacks: {detail}"
            ))
        })?;
        let fetched = Rc::new(Fetched {
            url,
            manifest: manifest.digest,
            chart,
        });
        self.charts
            .borrow_mut()
            .insert(version.to_owned(), fetched.clone());
        Ok(fetched)
    }

    /// The manifest digest the locked version's tag names now, when it is
    /// not the lock's (`None` also when the lock records none).
    fn moved_tag(&self, locked: &LockedUpstream) -> Result<Option<String>> {
        let Some(sha) = &locked.archive_sha256 else {
            return Ok(None);
        };
        let reference = Reference::parse(&format!("{}:{}", self.name, tag_of(&locked.version)))
            .map_err(|e| {
                Error::usage(
                    format!("`{}` is not a chart tag: {e}", locked.version),
                    "pin another version",
                )
            })?;
        let now = self.client()?.head_manifest(&reference)?;
        Ok((now.hex() != sha).then(|| now.to_string()))
    }
}

/// The tag a chart version is pushed under: `+` is `_`, as Helm writes it.
pub fn tag_of(version: &str) -> String {
    version.replace('+', "_")
}

/// The chart version a tag names (`_` read as `+`), when it is a version.
pub fn version_of(tag: &str) -> Option<String> {
    let version = tag.replace('_', "+");
    semver::Version::parse(version.strip_prefix('v').unwrap_or(&version))
        .is_ok()
        .then_some(version)
}

/// The chart layer of `manifest` when it is a Helm chart's (Helm's config
/// media type, exactly one chart layer); else why it is not a chart.
pub fn chart_layer(manifest: &Manifest) -> std::result::Result<&Descriptor, String> {
    let image = match manifest {
        Manifest::Index(index) => {
            return Err(format!(
                "it is a {}, a multi-platform image, not a Helm chart",
                index.media_type
            ));
        }
        Manifest::Image(image) => image,
    };
    if image.config.media_type != CONFIG_MEDIA_TYPE {
        return Err(format!(
            "its config is `{}`, so it is a container image or another artifact, not a Helm \
             chart (a chart's config is `{CONFIG_MEDIA_TYPE}`)",
            image.config.media_type
        ));
    }
    let mut layers = image
        .layers
        .iter()
        .filter(|l| l.media_type == CHART_MEDIA_TYPE);
    match (layers.next(), layers.next()) {
        (Some(layer), None) => Ok(layer),
        (None, _) => Err(format!("it has no `{CHART_MEDIA_TYPE}` layer")),
        (Some(_), Some(_)) => Err(format!(
            "it has several `{CHART_MEDIA_TYPE}` layers; a chart has one"
        )),
    }
}

impl Source for Oci<'_> {
    fn describe(&self) -> String {
        format!("helm:{}#{}", self.repo, self.chart)
    }

    /// The chart's name; a registry path has no web page of its own (the
    /// pull request links the chart's `home` and `sources`).
    fn pages(&self, _from: Option<&str>, _to: &str, _release: bool) -> Pages {
        Pages {
            name: self.chart.clone(),
            ..Pages::default()
        }
    }

    fn releases(&self) -> Result<Vec<Release>> {
        Ok(self
            .tags()?
            .iter()
            .filter_map(|tag| version_of(tag))
            .map(|version| Release {
                prerelease: semver::Version::parse(version.trim_start_matches('v'))
                    .is_ok_and(|v| !v.pre.is_empty()),
                tag: version,
            })
            .collect())
    }

    fn branch(&self, name: &str) -> Result<String> {
        Err(Error::usage(
            format!(
                "chart `{}` has no branch `{name}`: a registry has tags only",
                self.chart
            ),
            "name a chart version with `version` or `--to`",
        ))
    }

    fn commit(&self, _rev: &str) -> Result<Option<String>> {
        Ok(None)
    }

    /// A higher version, as for every kind; else, for a version not pinned
    /// by digest, its tag pushed again with another manifest.
    fn newer(&self, up: &Upstream, locked: &LockedUpstream) -> Result<Newer> {
        let newer = newer_release(self, up, &locked.version)?;
        let pinned = self.pin.as_ref().is_some_and(|(v, _)| *v == locked.version);
        if newer != Newer::Nothing || pinned {
            return Ok(newer);
        }
        Ok(match self.moved_tag(locked)? {
            Some(digest) => Newer::Moved {
                tag: locked.version.clone(),
                digest,
            },
            None => Newer::Nothing,
        })
    }

    /// The manifest digest the locked version names now (its pin, else its
    /// tag), when it is not the one the lock records.
    fn moved(&self, locked: &LockedUpstream) -> Result<Option<String>> {
        match &self.pin {
            Some((version, digest)) if *version == locked.version => Ok(locked
                .archive_sha256
                .as_ref()
                .filter(|sha| !digest.ends_with(sha.as_str()))
                .map(|_| digest.clone())),
            _ => self.moved_tag(locked),
        }
    }

    fn file(&self, rev: &str, path: &str) -> Result<Vec<u8>> {
        let fetched = self.fetched(rev)?;
        fetched.chart.file(&self.chart, rev, path, &fetched.url)
    }

    fn list(&self, rev: &str, dir: &str, cache: &Cache) -> Result<Vec<Listed>> {
        let fetched = self.fetched(rev)?;
        fetched
            .chart
            .list((&self.chart, rev, &fetched.url), dir, cache)
    }

    fn tree(&self, rev: &str) -> Result<SourceTree> {
        Ok(self.fetched(rev)?.chart.tree.clone())
    }

    fn artifact(&self, rev: &str) -> Result<Option<Artifact>> {
        let fetched = self.fetched(rev)?;
        Ok(Some(
            fetched.chart.artifact(&fetched.url, fetched.manifest.hex()),
        ))
    }

    /// The locked chart from the download cache: the manifest by the lock's
    /// digest, then its chart layer by the manifest's digest for it.
    fn kept_tree(&self, locked: &LockedUpstream, cache: &Cache) -> Result<Option<SourceTree>> {
        let Some(sha) = &locked.archive_sha256 else {
            return Ok(None);
        };
        let Some(body) = cache.get(sha) else {
            return Ok(None);
        };
        let malformed = |detail: String| Error::Malformed {
            what: format!("chart `{}` {}", self.chart, locked.version),
            url: format!("the download cache entry {sha}"),
            detail,
        };
        let manifest = Manifest::parse(&body, Some(MediaType::OciManifest.as_str()))
            .map_err(|e| malformed(e.to_string()))?;
        let layer = chart_layer(&manifest).map_err(malformed)?;
        let Some(bytes) = cache.get(layer.digest.hex()) else {
            return Ok(None);
        };
        let chart = chart::unpack(&bytes, &self.chart, &locked.version).map_err(malformed)?;
        Ok(Some(chart.tree))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn manifest(config: &str, layers: &[&str]) -> Manifest {
        let digest = format!("sha256:{}", "a".repeat(64));
        let descriptor = |t: &str| json!({"mediaType": t, "digest": digest, "size": 1});
        let body = json!({
            "schemaVersion": 2,
            "config": descriptor(config),
            "layers": layers.iter().map(|l| descriptor(l)).collect::<Vec<_>>(),
        });
        Manifest::parse(
            body.to_string().as_bytes(),
            Some(MediaType::OciManifest.as_str()),
        )
        .unwrap()
    }

    #[test]
    fn a_plus_is_an_underscore_in_a_tag() {
        assert_eq!(tag_of("1.0.0+build.1"), "1.0.0_build.1");
        assert_eq!(
            version_of("1.0.0_build.1").as_deref(),
            Some("1.0.0+build.1")
        );
        assert_eq!(version_of("v0.3.0").as_deref(), Some("v0.3.0"));
        assert_eq!(version_of("latest"), None);
        assert_eq!(version_of("sha256-abc.sig"), None);
    }

    #[test]
    fn only_a_helm_chart_manifest_has_a_chart_layer() {
        let prov = "application/vnd.cncf.helm.chart.provenance.v1.prov";
        let chart = manifest(CONFIG_MEDIA_TYPE, &[CHART_MEDIA_TYPE, prov]);
        assert_eq!(chart_layer(&chart).unwrap().media_type, CHART_MEDIA_TYPE);
        let image = manifest(
            "application/vnd.oci.image.config.v1+json",
            &["application/vnd.oci.image.layer.v1.tar+gzip"],
        );
        let err = chart_layer(&image).unwrap_err();
        assert!(err.contains("container image"), "{err}");
        let err = chart_layer(&manifest(CONFIG_MEDIA_TYPE, &[prov])).unwrap_err();
        assert!(err.contains("no `"), "{err}");
        let two = manifest(CONFIG_MEDIA_TYPE, &[CHART_MEDIA_TYPE, CHART_MEDIA_TYPE]);
        assert!(chart_layer(&two).unwrap_err().contains("several"));
        let index = Manifest::parse(
            br#"{"schemaVersion":2,"manifests":[]}"#,
            Some(MediaType::OciIndex.as_str()),
        )
        .unwrap();
        assert!(chart_layer(&index).unwrap_err().contains("multi-platform"));
    }
}
