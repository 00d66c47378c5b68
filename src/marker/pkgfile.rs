//! `cni_version` of siderolabs/pkgs' Pkgfile: the CNI plugins a Talos
//! release ships.
//!
//! The Pkgfile is YAML whose top-level `vars:` mapping holds, among others,
//! `cni_version: v1.9.1`. The same mapping also has keys such as
//! `flannel_cni_version`; reading the parsed mapping, not the text, keeps them
//! apart.

use super::{Error, LineValue};
use crate::manifest;

fn layout(reason: &str) -> Error {
    Error::PkgfileLayout {
        reason: reason.to_owned(),
    }
}

/// Read `vars.cni_version` from a Pkgfile.
pub fn pkgfile_cni_version(text: &str) -> Result<LineValue, Error> {
    let docs = manifest::parse_documents(text)?;
    let root = docs.first().ok_or_else(|| layout("the file is empty"))?;
    let vars = root.lookup(&["vars"]);
    let vars = match vars.as_slice() {
        [] => return Err(layout("no top-level `vars:`")),
        [one] => one,
        _ => return Err(layout("`vars:` appears more than once")),
    };
    let found = vars.node.lookup(&["cni_version"]);
    let found = match found.as_slice() {
        [] => return Err(layout("`vars:` has no `cni_version`")),
        [one] => one,
        _ => return Err(layout("`cni_version` appears more than once")),
    };
    let value = found
        .node
        .as_str()
        .filter(|v| !v.is_empty())
        .ok_or_else(|| layout("`cni_version` is not a version string"))?;
    Ok(LineValue {
        value: value.to_owned(),
        line: found.line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PKGFILE: &str = "\
# syntax = example/bldr:v0
format: v1alpha2

vars:
  flannel_cni_version: v1.9.1-flannel1
  # renovate: datasource=github-releases depName=containernetworking/plugins
  cni_version: v1.9.1
  cni_sha256: 0000

labels:
  org.example: x
";

    #[test]
    fn reads_the_anchored_key() {
        let got = pkgfile_cni_version(PKGFILE).unwrap();
        assert_eq!((got.value.as_str(), got.line), ("v1.9.1", 7));
    }

    #[test]
    fn a_similar_key_is_not_taken() {
        let text = PKGFILE.replace("  cni_version: v1.9.1\n", "");
        let err = pkgfile_cni_version(&text).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the pkgs Pkgfile layout changed: `vars:` has no `cni_version`"
        );
        let nested = "vars:\n  other:\n    cni_version: v1\n";
        assert!(pkgfile_cni_version(nested).is_err());
        let top = "cni_version: v1\n";
        assert!(pkgfile_cni_version(top).is_err());
    }

    #[test]
    fn non_text_and_duplicates_are_errors() {
        assert!(pkgfile_cni_version("vars:\n  cni_version:\n").is_err());
        assert!(pkgfile_cni_version("vars:\n  cni_version: a\n  cni_version: b\n").is_err());
        assert!(matches!(
            pkgfile_cni_version("vars: [\n"),
            Err(Error::Yaml(_))
        ));
    }
}
