//! Image references as written in `FROM`: `[registry/]path[:tag][@digest]`.

use std::fmt;

use crate::image::Digest;

/// A parsed image reference. Nothing is normalized: `golang` stays `golang`;
/// [`ImageRef::is_docker_official`] answers the Docker Hub question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    /// Registry and repository path, e.g. `golang` or `ghcr.io/org/app`.
    pub name: String,
    /// The tag, if any.
    pub tag: Option<String>,
    /// The digest after `@`, e.g. `sha256:…`, if any.
    pub digest: Option<String>,
}

impl ImageRef {
    /// Split a reference; `None` when the name part is empty or holds
    /// whitespace.
    pub fn parse(text: &str) -> Option<Self> {
        let (rest, digest) = match text.split_once('@') {
            Some((rest, digest)) => (rest, Some(digest.to_owned())),
            None => (text, None),
        };
        let last_slash = rest.rfind('/').map_or(0, |i| i + 1);
        let (name, tag) = match rest[last_slash..].rfind(':') {
            Some(i) => (
                &rest[..last_slash + i],
                Some(rest[last_slash + i + 1..].to_owned()),
            ),
            None => (rest, None),
        };
        if name.is_empty() || name.contains(char::is_whitespace) {
            return None;
        }
        Some(Self {
            name: name.to_owned(),
            tag,
            digest,
        })
    }

    /// Whether this names Docker Hub's official image `repo` (`golang`,
    /// `library/golang`, `docker.io/library/golang`, …).
    pub fn is_docker_official(&self, repo: &str) -> bool {
        let name = self.name.as_str();
        let path = ["docker.io/", "index.docker.io/", "registry-1.docker.io/"]
            .iter()
            .find_map(|host| name.strip_prefix(host))
            .unwrap_or(name);
        path == repo || path.strip_prefix("library/") == Some(repo)
    }

    /// Whether the digest is `sha256:` followed by 64 lowercase hex digits.
    pub fn has_sha256_digest(&self) -> bool {
        self.digest
            .as_deref()
            .is_some_and(|d| Digest::parse(d).is_ok())
    }
}

impl fmt::Display for ImageRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_name_tag_and_digest() {
        let d = "a".repeat(64);
        let r = ImageRef::parse(&format!("localhost:5000/golang:1.26@sha256:{d}")).unwrap();
        assert_eq!(r.name, "localhost:5000/golang");
        assert_eq!(r.tag.as_deref(), Some("1.26"));
        assert!(r.has_sha256_digest());
        assert_eq!(
            r.to_string(),
            format!("localhost:5000/golang:1.26@sha256:{d}")
        );
        let r = ImageRef::parse("registry:5000/app").unwrap();
        assert_eq!((r.name.as_str(), r.tag), ("registry:5000/app", None));
    }

    #[test]
    fn docker_official_names() {
        for name in [
            "golang:1",
            "library/golang",
            "docker.io/library/golang",
            "docker.io/golang",
        ] {
            assert!(
                ImageRef::parse(name).unwrap().is_docker_official("golang"),
                "{name}"
            );
        }
        for name in ["ghcr.io/golang", "mygolang", "docker.io/x/golang"] {
            assert!(
                !ImageRef::parse(name).unwrap().is_docker_official("golang"),
                "{name}"
            );
        }
    }

    #[test]
    fn sha256_digests_are_strict() {
        assert!(!ImageRef::parse("x@sha256:abc").unwrap().has_sha256_digest());
        assert!(ImageRef::parse("").is_none());
    }
}
