//! [`Repo`]: a chart from an HTTP chart repository, as a [`Source`].
//!
//! 1. `<repo>/index.yaml` is fetched once per run through the one
//!    [`Client`] (ETag-cached: an unchanged index costs a 304), bounded to
//!    [`MAX_INDEX`], and read for this chart only ([`index::versions`]).
//!    Its versions are the releases; a version with a prerelease part is a
//!    prerelease.
//! 2. A version's archive is `urls[0]`, relative to the repository or
//!    absolute, bounded to [`MAX_ARCHIVE`]; its sha256 must be the index's
//!    `digest` before anything reads it. It is kept in the download cache by
//!    that sha256, so a second read (or another package) downloads nothing.
//! 3. The archive unpacks as `helm pull --untar` does ([`chart::unpack`]):
//!    its files are the version's tree, listed with their blob ids.
//!
//! A chart has no commits and no branches; what pins a version is its
//! archive's sha256, which the lock records with its URL and the chart's
//! `appVersion` ([`Source::artifact`]).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use super::auth::Auth;
use super::chart::{self, Chart};
use super::index::{self, Entry, IndexError};
use crate::config::lock::LockedUpstream;
use crate::error::{Error, Result};
use crate::net::Client;
use crate::upstream::cache::Cache;
use crate::upstream::{Artifact, Listed, Pages, Release, Source, SourceTree};

/// The largest index.yaml read: several times the largest public ones.
pub const MAX_INDEX: u64 = 256 << 20;
/// The largest chart archive downloaded (Helm unpacks at most 100 MiB).
pub const MAX_ARCHIVE: u64 = 100 << 20;

/// One chart of one HTTP chart repository.
pub struct Repo<'a> {
    repo: String,
    chart: String,
    client: &'a Client,
    cache: Cache,
    auth: std::result::Result<Auth, String>,
    entries: RefCell<Option<Rc<Vec<Entry>>>>,
    charts: RefCell<BTreeMap<String, Rc<Fetched>>>,
}

/// A version's archive, verified and unpacked.
struct Fetched {
    url: String,
    sha256: String,
    chart: Chart,
}

impl<'a> Repo<'a> {
    /// Chart `chart` of the repository at `repo` (no trailing `/`), with the
    /// credentials of `REVENDOR_HELM_AUTH` (`auth`), downloads kept in `cache`.
    pub fn new(
        repo: &str,
        chart: &str,
        auth: Option<&str>,
        client: &'a Client,
        cache: Cache,
    ) -> Self {
        Repo {
            repo: repo.trim_end_matches('/').to_owned(),
            chart: chart.to_owned(),
            client,
            cache,
            auth: Auth::parse(auth),
            entries: RefCell::default(),
            charts: RefCell::default(),
        }
    }

    fn index_url(&self) -> String {
        format!("{}/index.yaml", self.repo)
    }

    /// GETs `url` bounded to `limit`, with the credentials of its host.
    fn get(&self, url: &str, limit: u64) -> Result<crate::net::Response> {
        let auth = self.auth.as_ref().map_err(|why| {
            Error::usage(
                format!("REVENDOR_HELM_AUTH cannot be read: {why}"),
                "write it as host=user:password, one entry per host, separated by commas",
            )
        })?;
        let headers: Vec<(&str, &str)> = auth
            .header_for(url)
            .map(|h| ("authorization", h))
            .into_iter()
            .collect();
        Ok(self.client.get_bounded(url, &headers, limit)?)
    }

    /// The chart's versions in the index, read once.
    fn entries(&self) -> Result<Rc<Vec<Entry>>> {
        if let Some(entries) = &*self.entries.borrow() {
            return Ok(entries.clone());
        }
        let url = self.index_url();
        let body = self.get(&url, MAX_INDEX)?.body;
        let entries = index::versions(&body, &self.chart).map_err(|e| match e {
            IndexError::NoChart(chart) => Error::NotFound {
                what: format!("chart `{chart}`"),
                url: url.clone(),
            },
            IndexError::Malformed(detail) => Error::Malformed {
                what: "a chart repository index".into(),
                url: url.clone(),
                detail,
            },
        })?;
        let entries = Rc::new(entries);
        *self.entries.borrow_mut() = Some(entries.clone());
        Ok(entries)
    }

    /// The archive of `version`, verified and unpacked, read once.
    fn fetched(&self, version: &str) -> Result<Rc<Fetched>> {
        if let Some(f) = self.charts.borrow().get(version) {
            return Ok(f.clone());
        }
        let entries = self.entries()?;
        let Some(entry) = entries.iter().find(|e| e.version == version) else {
            return Err(Error::NotFound {
                what: format!("version {version} of chart `{}`", self.chart),
                url: self.index_url(),
            });
        };
        let url = self.archive_url(entry)?;
        let digest = entry_digest(entry).map_err(|detail| Error::Malformed {
            what: "a chart repository index".into(),
            url: self.index_url(),
            detail,
        })?;
        let bytes = match self.cache.get(&digest) {
            Some(bytes) => bytes,
            None => {
                let bytes = self.get(&url, MAX_ARCHIVE)?.body;
                let actual = crate::image::Digest::of(&bytes).hex().to_owned();
                if actual != digest {
                    return Err(Error::Checksum {
                        what: format!("{url} (the index's digest of {} {version})", self.chart),
                        digest: "sha256",
                        expected: digest,
                        actual,
                    });
                }
                self.cache.put(&bytes);
                bytes
            }
        };
        let chart =
            chart::unpack(&bytes, &self.chart, version).map_err(|detail| Error::Malformed {
                what: format!(
                    "chart `{}` {version} as an archive Helm unpacks",
                    self.chart
                ),
                url: url.clone(),
                detail,
            })?;
        let fetched = Rc::new(Fetched {
            url,
            sha256: digest,
            chart,
        });
        self.charts
            .borrow_mut()
            .insert(version.to_owned(), fetched.clone());
        Ok(fetched)
    }

    /// `urls[0]` of `entry`, absolute, or relative to the repository.
    fn archive_url(&self, entry: &Entry) -> Result<String> {
        let malformed = |detail: String| Error::Malformed {
            what: "a chart repository index".into(),
            url: self.index_url(),
            detail,
        };
        let Some(first) = entry.urls.first() else {
            return Err(malformed(format!(
                "version {} at line {} lists no `urls`",
                entry.version, entry.line
            )));
        };
        let base = reqwest::Url::parse(&format!("{}/", self.repo))
            .map_err(|e| malformed(format!("the repository URL does not parse: {e}")))?;
        base.join(first).map(String::from).map_err(|e| {
            malformed(format!(
                "`{first}` (version {} at line {}) is not a URL: {e}",
                entry.version, entry.line
            ))
        })
    }
}

/// The sha256 the index lists for an entry, as 64 lowercase hex digits
/// (Helm writes it bare; `sha256:` is accepted too).
fn entry_digest(entry: &Entry) -> std::result::Result<String, String> {
    let Some(digest) = &entry.digest else {
        return Err(format!(
            "version {} at line {} lists no `digest`: its archive cannot be verified",
            entry.version, entry.line
        ));
    };
    let hex = digest
        .strip_prefix("sha256:")
        .unwrap_or(digest)
        .to_ascii_lowercase();
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!(
            "the `digest` of version {} at line {} is not a sha256",
            entry.version, entry.line
        ));
    }
    Ok(hex)
}

impl Source for Repo<'_> {
    fn describe(&self) -> String {
        format!("helm:{}#{}", self.repo, self.chart)
    }

    /// The chart's name, and the repository's page when it is on the web.
    fn pages(&self, _from: Option<&str>, _to: &str, _release: bool) -> Pages {
        Pages {
            name: self.chart.clone(),
            url: self.repo.starts_with("https://").then(|| self.repo.clone()),
            ..Pages::default()
        }
    }

    fn releases(&self) -> Result<Vec<Release>> {
        Ok(self
            .entries()?
            .iter()
            .map(|e| Release {
                tag: e.version.clone(),
                prerelease: semver::Version::parse(e.version.trim_start_matches('v'))
                    .is_ok_and(|v| !v.pre.is_empty()),
            })
            .collect())
    }

    fn file(&self, rev: &str, path: &str) -> Result<Vec<u8>> {
        let fetched = self.fetched(rev)?;
        fetched.chart.file(&self.chart, rev, path, &fetched.url)
    }

    fn commit(&self, _rev: &str) -> Result<Option<String>> {
        Ok(None)
    }

    fn tree(&self, rev: &str) -> Result<SourceTree> {
        Ok(self.fetched(rev)?.chart.tree.clone())
    }

    fn branch(&self, name: &str) -> Result<String> {
        Err(Error::usage(
            format!(
                "chart `{}` has no branch `{name}`: a chart repository has versions only",
                self.chart
            ),
            "name a chart version with `version` or `--to`",
        ))
    }

    fn list(&self, rev: &str, dir: &str, cache: &Cache) -> Result<Vec<Listed>> {
        let fetched = self.fetched(rev)?;
        fetched
            .chart
            .list((&self.chart, rev, &fetched.url), dir, cache)
    }

    fn artifact(&self, rev: &str) -> Result<Option<Artifact>> {
        let fetched = self.fetched(rev)?;
        Ok(Some(fetched.chart.artifact(&fetched.url, &fetched.sha256)))
    }

    fn kept_tree(&self, locked: &LockedUpstream, cache: &Cache) -> Result<Option<SourceTree>> {
        let Some(sha) = &locked.archive_sha256 else {
            return Ok(None);
        };
        let Some(bytes) = cache.get(sha) else {
            return Ok(None);
        };
        let chart = chart::unpack(&bytes, &self.chart, &locked.version).map_err(|detail| {
            Error::Malformed {
                what: "a chart archive".into(),
                url: format!("the download cache entry {sha}"),
                detail,
            }
        })?;
        Ok(Some(chart.tree))
    }
}
