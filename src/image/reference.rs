//! `Reference`: an image name as users write it (`golang:1.26`, `ghcr.io/org/app:v1@sha256:…`).
//!
//! Parsing follows the distribution reference grammar:
//! 1. split off `@digest`, then a `:tag` after the last `/`;
//! 2. the first path component is a registry host when it holds a `.` or a `:`, is
//!    `localhost`, or is a bracketed IPv6 address; otherwise the registry is Docker Hub;
//! 3. on Docker Hub a one-component repository gets the `library/` prefix.
//!
//! Docker Hub has three spellings (`docker.io`, `index.docker.io`, `registry-1.docker.io`); all of
//! them normalize to the API host `registry-1.docker.io`, while `Display` keeps the user's form so
//! messages and rewritten files show what the user wrote.
//!
//! This is the crate's one image reference: vendor.toml, the lock and the registry client read
//! it strictly ([`Reference::parse`]); a Dockerfile's `FROM` reads it with
//! [`Reference::parse_lenient`], because `golang:1.26@sha256:abc` is still a golang stage, one
//! that is not pinned, and `revendor image pin-base` must be able to repair it.

use std::fmt;
use std::str::FromStr;

use super::{Digest, Error};

/// The host that serves Docker Hub's registry API; what every Docker Hub alias normalizes to.
pub const DOCKER_HUB: &str = "registry-1.docker.io";

const DOCKER_HUB_ALIASES: [&str; 3] = ["docker.io", "index.docker.io", DOCKER_HUB];
const MAX_NAME_LEN: usize = 255;
const MAX_TAG_LEN: usize = 128;

/// Maps any Docker Hub alias to [`DOCKER_HUB`] and returns other hosts unchanged, so callers that
/// key maps by registry host (mirrors, credentials) agree with [`Reference::registry`].
pub fn canonical_registry(host: &str) -> &str {
    if DOCKER_HUB_ALIASES.contains(&host) {
        DOCKER_HUB
    } else {
        host
    }
}

/// A parsed image reference: the user's spelling for printing and rewriting, the normalized
/// parts for talking to a registry. Equality compares the normalized parts, so `golang:1.26`
/// equals `docker.io/library/golang:1.26`.
#[derive(Clone, Debug)]
pub struct Reference {
    /// The name as the user typed it, before any tag or digest.
    name: String,
    registry: String,
    repository: String,
    tag: Option<String>,
    digest: Option<Digest>,
    /// What followed `@` when it is not a digest; only [`Reference::parse_lenient`] keeps one.
    malformed_digest: Option<String>,
}

impl Reference {
    /// Parses `[host[:port]/]path[:tag][@sha256:…]`. Never touches the network.
    pub fn parse(input: &str) -> Result<Reference, Error> {
        if let Some((_, digest)) = input.split_once('@') {
            Digest::parse(digest)?;
        }
        Reference::parse_lenient(input)
    }

    /// Parses like [`Reference::parse`], except that text after `@` that is not a sha256 digest
    /// is kept as written rather than rejected: [`Reference::digest`] is `None`, `Display` still
    /// shows it. For a recipe's `FROM`, where a short digest means "not pinned", not "not an
    /// image"; never hand such a reference to a registry, it would resolve the tag.
    pub fn parse_lenient(input: &str) -> Result<Reference, Error> {
        let invalid = |reason: &str| Error::Reference {
            input: input.to_owned(),
            reason: reason.to_owned(),
        };
        let (rest, digest, malformed_digest) = match input.split_once('@') {
            Some((rest, text)) => match Digest::parse(text) {
                Ok(digest) => (rest, Some(digest), None),
                Err(_) => (rest, None, Some(text.to_owned())),
            },
            None => (input, None, None),
        };
        let last_slash = rest.rfind('/').map_or(0, |i| i + 1);
        let (name, tag) = match rest[last_slash..].rfind(':') {
            Some(i) => (&rest[..last_slash + i], Some(&rest[last_slash + i + 1..])),
            None => (rest, None),
        };
        if let Some(tag) = tag {
            validate_tag(tag).map_err(invalid)?;
        }
        if name.is_empty() {
            return Err(invalid("the name is empty"));
        }
        if name.len() > MAX_NAME_LEN {
            return Err(invalid("the name is longer than 255 characters"));
        }
        let (registry, path) = match name.split_once('/') {
            Some((first, path)) if looks_like_host(first) => {
                validate_host(first).map_err(invalid)?;
                (canonical_registry(first), path)
            }
            _ => (DOCKER_HUB, name),
        };
        for component in path.split('/') {
            validate_path_component(component).map_err(invalid)?;
        }
        let repository = if registry == DOCKER_HUB && !path.contains('/') {
            format!("library/{path}")
        } else {
            path.to_owned()
        };
        Ok(Reference {
            name: name.to_owned(),
            registry: registry.to_owned(),
            repository,
            tag: tag.map(str::to_owned),
            digest,
            malformed_digest,
        })
    }

    /// The registry and path as written, without tag or digest (`golang`, `docker.io/golang`):
    /// what a rewritten `FROM` or a lock key repeats.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The registry host (with port, if any) to talk to; Docker Hub aliases are normalized.
    pub fn registry(&self) -> &str {
        &self.registry
    }

    /// The repository path inside the registry, with `library/` added for Docker Hub officials.
    pub fn repository(&self) -> &str {
        &self.repository
    }

    /// The tag, if one was written; absent does not mean `latest` here, see [`Self::identifier`].
    pub fn tag(&self) -> Option<&str> {
        self.tag.as_deref()
    }

    /// The pinned digest, if one was written.
    pub fn digest(&self) -> Option<&Digest> {
        self.digest.as_ref()
    }

    /// What goes after `/manifests/`: the digest when pinned (it wins over the tag, as in
    /// docker), else the tag, else `latest`.
    pub fn identifier(&self) -> String {
        match (&self.digest, &self.tag) {
            (Some(digest), _) => digest.to_string(),
            (None, Some(tag)) => tag.clone(),
            (None, None) => "latest".to_owned(),
        }
    }

    /// The same name and tag pinned to `digest` (replacing any digest already there).
    pub fn with_digest(&self, digest: Digest) -> Reference {
        Reference {
            digest: Some(digest),
            malformed_digest: None,
            ..self.clone()
        }
    }

    /// Whether this names Docker Hub's official image `repo` however it is spelled (`golang`,
    /// `library/golang`, `docker.io/library/golang`, …), and not a namesake elsewhere.
    pub fn is_docker_official(&self, repo: &str) -> bool {
        self.registry == DOCKER_HUB
            && self
                .repository
                .strip_prefix("library/")
                .is_some_and(|r| r == repo)
    }
}

impl PartialEq for Reference {
    fn eq(&self, other: &Reference) -> bool {
        self.registry == other.registry
            && self.repository == other.repository
            && self.tag == other.tag
            && self.digest == other.digest
            && self.malformed_digest == other.malformed_digest
    }
}

impl Eq for Reference {}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        if let Some(text) = &self.malformed_digest {
            write!(f, "@{text}")?;
        }
        Ok(())
    }
}

impl FromStr for Reference {
    type Err = Error;

    fn from_str(s: &str) -> Result<Reference, Error> {
        Reference::parse(s)
    }
}

fn looks_like_host(component: &str) -> bool {
    component.contains(['.', ':']) || component == "localhost" || component.starts_with('[')
}

fn validate_host(host: &str) -> Result<(), &'static str> {
    let (name, port) = if let Some(rest) = host.strip_prefix('[') {
        let (ip, after) = rest
            .split_once(']')
            .ok_or("the IPv6 registry host lacks its closing `]`")?;
        if ip.is_empty()
            || !ip
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
        {
            return Err("the IPv6 registry host is malformed");
        }
        match after {
            "" => return Ok(()),
            _ => (
                "",
                after.strip_prefix(':').ok_or("junk after the IPv6 host")?,
            ),
        }
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) => (name, port),
            None => (host, "0"),
        }
    };
    if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
        return Err("the registry port is not a number");
    }
    if name.is_empty() && !host.starts_with('[') {
        return Err("the registry host is empty");
    }
    let label_ok = |label: &str| {
        !label.is_empty()
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    if !name.is_empty() && !name.split('.').all(label_ok) {
        return Err("the registry host is not a valid domain name");
    }
    Ok(())
}

/// `[a-z0-9]+` runs joined by one of `.`, `_`, `__` or any number of `-`.
fn validate_path_component(component: &str) -> Result<(), &'static str> {
    const REASON: &str = "repository path components are lowercase letters and digits joined by `.`, `_`, `__` or `-`";
    let bytes = component.as_bytes();
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    if bytes.is_empty() || !alnum(bytes[0]) || !alnum(bytes[bytes.len() - 1]) {
        return Err(REASON);
    }
    let mut i = 0;
    while i < bytes.len() {
        if alnum(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && !alnum(bytes[i]) {
            i += 1;
        }
        let separator = &component[start..i];
        let ok = matches!(separator, "." | "_" | "__") || separator.bytes().all(|b| b == b'-');
        if !ok {
            return Err(REASON);
        }
    }
    Ok(())
}

/// `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`.
fn validate_tag(tag: &str) -> Result<(), &'static str> {
    const REASON: &str =
        "a tag is 1 to 128 letters, digits, `_`, `.` or `-` and may not start with `.` or `-`";
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = tag.as_bytes();
    let ok = !bytes.is_empty()
        && bytes.len() <= MAX_TAG_LEN
        && word(bytes[0])
        && bytes.iter().all(|&b| word(b) || b == b'.' || b == b'-');
    if ok { Ok(()) } else { Err(REASON) }
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: &str = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    fn parts(input: &str) -> (String, String, Option<String>, Option<String>) {
        let r = Reference::parse(input).unwrap();
        (
            r.registry().to_owned(),
            r.repository().to_owned(),
            r.tag().map(str::to_owned),
            r.digest().map(ToString::to_string),
        )
    }

    #[test]
    fn docker_hub_short_names_get_defaults() {
        let (registry, repository, tag, digest) = parts("golang:1.26");
        assert_eq!(registry, "registry-1.docker.io");
        assert_eq!(repository, "library/golang");
        assert_eq!(tag.as_deref(), Some("1.26"));
        assert_eq!(digest, None);
        assert_eq!(parts("bitnami/redis").1, "bitnami/redis");
    }

    #[test]
    fn docker_hub_aliases_normalize_and_compare_equal() {
        let short = Reference::parse("golang:1.26").unwrap();
        for alias in [
            "docker.io/golang:1.26",
            "docker.io/library/golang:1.26",
            "index.docker.io/library/golang:1.26",
            "registry-1.docker.io/golang:1.26",
        ] {
            assert_eq!(Reference::parse(alias).unwrap(), short, "{alias}");
        }
        assert_ne!(short, Reference::parse("golang:1.25").unwrap());
    }

    #[test]
    fn display_keeps_the_users_form() {
        for input in [
            "golang:1.26",
            "docker.io/golang",
            &format!("ghcr.io/cozystack/cozystack/multus-cni:v1.6.0@{D}"),
            "localhost:5000/a/b",
        ] {
            assert_eq!(Reference::parse(input).unwrap().to_string(), input);
        }
    }

    #[test]
    fn full_references_split_into_parts() {
        let (registry, repository, tag, digest) = parts(&format!(
            "ghcr.io/cozystack/cozystack/multus-cni:v1.6.0@{D}"
        ));
        assert_eq!(registry, "ghcr.io");
        assert_eq!(repository, "cozystack/cozystack/multus-cni");
        assert_eq!(tag.as_deref(), Some("v1.6.0"));
        assert_eq!(digest.as_deref(), Some(D));
    }

    #[test]
    fn hosts_with_ports_and_loopback_names() {
        assert_eq!(parts("127.0.0.1:5000/app:v1").0, "127.0.0.1:5000");
        assert_eq!(parts("localhost/app").0, "localhost");
        assert_eq!(parts("[::1]:5000/app").0, "[::1]:5000");
        assert_eq!(parts("localhost:5000/app").2, None);
    }

    #[test]
    fn identifier_prefers_digest_then_tag_then_latest() {
        assert_eq!(Reference::parse("golang").unwrap().identifier(), "latest");
        assert_eq!(
            Reference::parse("golang:1.26").unwrap().identifier(),
            "1.26"
        );
        let pinned = Reference::parse(&format!("golang:1.26@{D}")).unwrap();
        assert_eq!(pinned.identifier(), D);
    }

    #[test]
    fn with_digest_keeps_name_and_tag() {
        let r = Reference::parse("golang:1.26").unwrap();
        let pinned = r.with_digest(Digest::parse(D).unwrap());
        assert_eq!(pinned.to_string(), format!("golang:1.26@{D}"));
    }

    #[test]
    fn rejects_malformed_references() {
        for bad in [
            "",
            "Golang:1.26",
            "golang:",
            "golang:-x",
            "golang:1.26@sha256:abc",
            "ghcr.io/",
            "ghcr.io//app",
            "ghcr.io/app-",
            "ghcr.io/a..b",
            "host:port/app",
            "[::1/app",
            "-bad.io/app",
            "a b",
        ] {
            assert!(Reference::parse(bad).is_err(), "{bad:?} should be rejected");
        }
        let long_tag = format!("app:{}", "t".repeat(129));
        assert!(Reference::parse(&long_tag).is_err());
    }

    #[test]
    fn lenient_parsing_keeps_a_malformed_digest_out_of_the_normalized_view() {
        let short = "localhost:5000/golang:1.26@sha256:abc";
        assert!(Reference::parse(short).is_err());
        let r = Reference::parse_lenient(short).unwrap();
        assert_eq!(r.to_string(), short);
        assert_eq!(
            (r.name(), r.tag(), r.digest()),
            ("localhost:5000/golang", Some("1.26"), None)
        );
        assert_eq!(r.identifier(), "1.26");
        assert_ne!(r, Reference::parse("localhost:5000/golang:1.26").unwrap());
        let pinned = r.with_digest(Digest::parse(D).unwrap());
        assert_eq!(
            pinned.to_string(),
            format!("localhost:5000/golang:1.26@{D}")
        );
        assert_eq!(
            Reference::parse_lenient(&pinned.to_string()).unwrap(),
            pinned
        );
        assert!(Reference::parse_lenient("Golang:1.26@sha256:abc").is_err());
    }

    #[test]
    fn docker_official_names_in_every_spelling() {
        for name in [
            "golang:1",
            "library/golang",
            "docker.io/library/golang",
            "docker.io/golang",
            "index.docker.io/golang@sha256:abc",
        ] {
            let r = Reference::parse_lenient(name).unwrap();
            assert!(r.is_docker_official("golang"), "{name}");
        }
        for name in [
            "ghcr.io/golang",
            "mygolang",
            "docker.io/x/golang",
            "localhost/golang",
        ] {
            let r = Reference::parse(name).unwrap();
            assert!(!r.is_docker_official("golang"), "{name}");
        }
    }

    #[test]
    fn accepts_the_separator_forms_of_the_grammar() {
        for good in ["a__b", "a_b", "a.b", "a---b", "a-b/c.d_e"] {
            assert!(Reference::parse(good).is_ok(), "{good}");
        }
    }

    proptest::proptest! {
        #[test]
        fn parse_keeps_what_it_was_given(
            host in proptest::option::of(proptest::sample::select(
                vec!["ghcr.io", "localhost:5000", "127.0.0.1:5001", "docker.io", "[::1]:5000"],
            )),
            path in proptest::collection::vec("[a-z0-9]{1,5}([._-][a-z0-9]{1,5})?", 1..4),
            tag in proptest::option::of("[A-Za-z0-9_][A-Za-z0-9_.-]{0,10}"),
            content in proptest::option::of(proptest::collection::vec(proptest::num::u8::ANY, 0..8)),
        ) {
            // Without a host, a first component holding a `.` is read as one, as in docker.
            proptest::prop_assume!(host.is_some() || path.len() == 1 || !path[0].contains('.'));
            let mut input = host.map(|h| format!("{h}/")).unwrap_or_default() + &path.join("/");
            if let Some(tag) = &tag {
                input = format!("{input}:{tag}");
            }
            let digest = content.map(|c| Digest::of(&c));
            if let Some(digest) = &digest {
                input = format!("{input}@{digest}");
            }
            let parsed = Reference::parse(&input).unwrap();
            proptest::prop_assert_eq!(parsed.to_string(), input.as_str());
            proptest::prop_assert_eq!(parsed.tag(), tag.as_deref());
            proptest::prop_assert_eq!(parsed.digest(), digest.as_ref());
            proptest::prop_assert!(parsed.repository().ends_with(&path.join("/")));
            proptest::prop_assert_eq!(Reference::parse(&parsed.to_string()).unwrap(), parsed);
        }
    }
}
