//! The `.sha256` sidecar published next to a release asset.
//!
//! containernetworking/plugins publishes `cni-plugins-linux-<arch>-<v>.tgz`
//! with `….tgz.sha256` beside it, in `sha256sum` format: `<64 hex>  <name>`
//! (`*<name>` in binary mode). The name must be the asset's own, or the
//! digest may belong to another file.

use super::{Error, LineValue};
use crate::image::Digest;

/// The CNI plugins release asset for `arch` (`amd64`) at `version` (`v1.9.1`).
pub fn cni_asset(arch: &str, version: &str) -> String {
    format!("cni-plugins-linux-{arch}-{version}.tgz")
}

/// The digest the sidecar `text` gives for `asset`, lowercased, with its
/// line.
pub fn sidecar_sha256(text: &str, asset: &str) -> Result<LineValue, Error> {
    let mut names = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let malformed = |reason: &str| Error::Sidecar {
            line: number,
            reason: reason.to_owned(),
        };
        let (hash, rest) = line
            .split_once([' ', '\t'])
            .ok_or_else(|| malformed("no file name after the digest"))?;
        let hash = hash.to_ascii_lowercase();
        if Digest::from_hex(&hash).is_err() {
            return Err(malformed("the digest is not 64 hex digits"));
        }
        let name = rest.trim_start_matches([' ', '\t']);
        let name = name.strip_prefix('*').unwrap_or(name).trim_end();
        let name = name.strip_prefix("./").unwrap_or(name);
        if name.is_empty() {
            return Err(malformed("no file name after the digest"));
        }
        if name == asset {
            return Ok(LineValue {
                value: hash,
                line: number,
            });
        }
        names.push(name.to_owned());
    }
    Err(Error::SidecarAsset {
        expected: asset.to_owned(),
        found: names,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HASH: &str = "b98f74a0f8522f0a83867178729c1aa70f2158f90c45a2ca8fa791db1c76b303";

    #[test]
    fn reads_the_digest_for_the_named_asset() {
        let asset = cni_asset("amd64", "v1.9.1");
        assert_eq!(asset, "cni-plugins-linux-amd64-v1.9.1.tgz");
        for text in [
            format!("{HASH}  {asset}\n"),
            format!("{}  ./{asset}", HASH.to_uppercase()),
            format!("\n{HASH} *{asset}\n"),
        ] {
            let got = sidecar_sha256(&text, &asset).unwrap();
            assert_eq!(got.value, HASH, "{text}");
        }
        let two = format!("{HASH}  other.tgz\n{HASH}  {asset}\n");
        assert_eq!(sidecar_sha256(&two, &asset).unwrap().line, 2);
    }

    #[test]
    fn another_asset_name_is_an_error() {
        let text = format!("{HASH}  cni-plugins-linux-arm64-v1.9.1.tgz\n");
        let err = sidecar_sha256(&text, &cni_asset("amd64", "v1.9.1")).unwrap_err();
        assert_eq!(
            err,
            Error::SidecarAsset {
                expected: "cni-plugins-linux-amd64-v1.9.1.tgz".to_owned(),
                found: vec!["cni-plugins-linux-arm64-v1.9.1.tgz".to_owned()]
            }
        );
    }

    #[test]
    fn malformed_lines_are_errors_with_their_line() {
        for (text, line) in [
            (format!("{HASH}\n"), 1),
            ("abc  x.tgz\n".to_owned(), 1),
            (format!("\n{HASH}   \n"), 2),
            (String::new(), 0),
        ] {
            let err = sidecar_sha256(&text, "x.tgz").unwrap_err();
            match err {
                Error::Sidecar { line: l, .. } => assert_eq!(l, line, "{text:?}"),
                Error::SidecarAsset { found, .. } => assert!(line == 0 && found.is_empty()),
                other => panic!("{other:?}"),
            }
        }
    }
}
