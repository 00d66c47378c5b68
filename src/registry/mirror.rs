//! `Mirrors`: read a registry's manifests through a pull-through mirror instead.
//!
//! `REVENDOR_REGISTRY_MIRRORS="docker.io=127.0.0.1:5001,ghcr.io=mirror.internal"` sends every
//! read for `docker.io` to `127.0.0.1:5001`, with the same repository path (pull-through caches
//! keep `library/golang` as `library/golang`). There is no fallback to the origin when a mirror
//! fails: in an air gap a silent fallback would hide a broken mirror until it mattered.
//! Credentials are looked up for the mirror host, since that is who asks for them.

use std::collections::BTreeMap;

use super::Error;
use crate::image::canonical_registry;

/// A map from registry host to the mirror host that serves its reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mirrors {
    by_registry: BTreeMap<String, String>,
}

impl Mirrors {
    /// No mirrors: every registry is read directly.
    pub fn none() -> Mirrors {
        Mirrors::default()
    }

    /// Parses `host=mirror[,host=mirror…]`. Hosts may carry a port; Docker Hub aliases are
    /// normalized, so `docker.io=…` covers `golang:1.26`. A scheme is not accepted: http versus
    /// https follows the loopback rule of the client.
    pub fn parse(spec: &str) -> Result<Mirrors, Error> {
        let invalid = |reason: String| Error::Mirror {
            spec: spec.to_owned(),
            reason,
        };
        let mut by_registry = BTreeMap::new();
        for entry in spec.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (host, mirror) = entry
                .split_once('=')
                .ok_or_else(|| invalid(format!("`{entry}` is not `host=mirror`")))?;
            let (host, mirror) = (host.trim(), mirror.trim());
            for part in [host, mirror] {
                let bad = part.is_empty()
                    || part.contains("://")
                    || part.contains(['/', ' ', '@', '?', '#']);
                if bad {
                    return Err(invalid(format!(
                        "`{part}` is not a bare host[:port] (no scheme, path or credentials)"
                    )));
                }
            }
            let previous =
                by_registry.insert(canonical_registry(host).to_owned(), mirror.to_owned());
            if previous.is_some() {
                return Err(invalid(format!("`{host}` is listed twice")));
            }
        }
        Ok(Mirrors { by_registry })
    }

    /// The host to contact for reads of `registry`: its mirror, or itself.
    pub fn resolve<'a>(&'a self, registry: &'a str) -> &'a str {
        self.by_registry
            .get(canonical_registry(registry))
            .map_or(registry, String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_resolves() {
        let mirrors =
            Mirrors::parse(" docker.io=127.0.0.1:5001 , ghcr.io=mirror.internal,").unwrap();
        assert_eq!(mirrors.resolve("registry-1.docker.io"), "127.0.0.1:5001");
        assert_eq!(mirrors.resolve("index.docker.io"), "127.0.0.1:5001");
        assert_eq!(mirrors.resolve("ghcr.io"), "mirror.internal");
        assert_eq!(mirrors.resolve("quay.io"), "quay.io");
        assert_eq!(Mirrors::parse("").unwrap(), Mirrors::none());
    }

    #[test]
    fn rejects_malformed_lists() {
        for bad in [
            "docker.io",
            "docker.io=",
            "=mirror",
            "docker.io=http://127.0.0.1:5001",
            "docker.io=user:pw@mirror",
            "docker.io=mirror/path",
            "docker.io=a,index.docker.io=b",
        ] {
            let err = Mirrors::parse(bad).unwrap_err();
            assert!(
                err.to_string().starts_with("invalid registry mirror list"),
                "{bad}: {err}"
            );
        }
    }
}
