//! Which siderolabs/pkgs revision a Talos release builds its CNI plugins from.
//!
//! siderolabs/talos's Makefile at a release tag holds
//!
//! ```text
//! PKGS_PREFIX ?= ghcr.io/siderolabs
//! PKGS ?= v1.13.0-43-gd8c80cc
//! PKG_CNI ?= $(PKGS_PREFIX)/cni:$(PKGS)
//! ```
//!
//! `PKGS` is a `git describe` of siderolabs/pkgs (or a bare tag); the Pkgfile
//! to read `cni_version` from is at the commit it names. When the Makefile
//! stops looking like this (no `PKGS`, a `PKG_CNI` built another way, several
//! different `PKGS`), the answer would be a guess, so it is an error instead.

use super::make::{Assignment, assignments};
use super::{Error, LineValue};

/// The siderolabs/pkgs revision to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PkgsRef {
    /// A release tag, e.g. `v1.13.0`.
    Tag(String),
    /// An abbreviated commit from a describe, e.g. `d8c80cc`.
    Commit(String),
}

/// What a Talos Makefile says about its pkgs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TalosPkgs {
    /// `PKGS_PREFIX`, the registry namespace of the pkgs images.
    pub prefix: LineValue,
    /// `PKGS`, as written.
    pub pkgs: LineValue,
    /// The pkgs revision `PKGS` names.
    pub reference: PkgsRef,
}

fn layout(reason: impl Into<String>) -> Error {
    Error::TalosLayout {
        reason: reason.into(),
    }
}

/// The single value of `name`; several different ones, or `+=`, are a
/// layout change.
fn single(all: &[Assignment], name: &str) -> Result<LineValue, Error> {
    let found: Vec<&Assignment> = all.iter().filter(|a| a.name == name).collect();
    let first = found
        .first()
        .ok_or_else(|| layout(format!("`{name}` is not assigned")))?;
    if found.iter().any(|a| a.op == "+=" || a.op == "!=") {
        return Err(layout(format!("`{name}` is appended to or computed")));
    }
    if found.iter().any(|a| a.value != first.value) {
        let lines: Vec<String> = found.iter().map(|a| a.line.to_string()).collect();
        return Err(layout(format!(
            "`{name}` has different values at lines {}",
            lines.join(", ")
        )));
    }
    Ok(LineValue {
        value: first.value.clone(),
        line: first.line,
    })
}

/// Read the pkgs pin from a Talos Makefile (see the module docs).
pub fn talos_pkgs(makefile: &str) -> Result<TalosPkgs, Error> {
    let all = assignments(makefile);
    let pkgs = single(&all, "PKGS")?;
    let cni = single(&all, "PKG_CNI")?;
    let expected = ["$(PKGS_PREFIX)/cni:$(PKGS)", "${PKGS_PREFIX}/cni:${PKGS}"];
    if !expected.contains(&cni.value.as_str()) {
        return Err(layout(format!(
            "PKG_CNI at line {} is `{}`, not `$(PKGS_PREFIX)/cni:$(PKGS)`",
            cni.line, cni.value
        )));
    }
    let prefix = single(&all, "PKGS_PREFIX")?;
    if pkgs.value.contains('$') {
        return Err(layout(format!(
            "PKGS at line {} is computed: `{}`",
            pkgs.line, pkgs.value
        )));
    }
    let reference = pkgs_ref(&pkgs.value)?;
    Ok(TalosPkgs {
        prefix,
        pkgs,
        reference,
    })
}

fn is_ref_text(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '+'))
}

/// The pkgs ref a `PKGS` value names: the commit of `<tag>-<n>-g<hash>`, or
/// the value itself when it is a bare tag (`v` and a digit first).
pub fn pkgs_ref(describe: &str) -> Result<PkgsRef, Error> {
    let invalid = || Error::Describe {
        value: describe.to_owned(),
    };
    if !is_ref_text(describe) {
        return Err(invalid());
    }
    let mut parts = describe.rsplitn(3, '-');
    if let (Some(hash), Some(count), Some(tag)) = (parts.next(), parts.next(), parts.next()) {
        let hex = hash.strip_prefix('g').filter(|h| {
            (7..=40).contains(&h.len())
                && h.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        });
        if let Some(hex) = hex
            && !count.is_empty()
            && count.bytes().all(|b| b.is_ascii_digit())
            && !tag.is_empty()
        {
            return Ok(PkgsRef::Commit(hex.to_owned()));
        }
    }
    let tag_like = describe
        .strip_prefix('v')
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
    if tag_like && !describe.ends_with("-dirty") {
        Ok(PkgsRef::Tag(describe.to_owned()))
    } else {
        Err(invalid())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAKEFILE: &str = "\
REGISTRY ?= ghcr.io
USERNAME ?= siderolabs
PKGS_PREFIX ?= ghcr.io/siderolabs
TOOLS ?= v1.13.0-1-gabcdef0
PKGS ?= v1.13.0-43-gd8c80cc
EXTRAS ?= v1.13.0
PKG_FHS ?= $(PKGS_PREFIX)/fhs:$(PKGS)
PKG_CNI ?= $(PKGS_PREFIX)/cni:$(PKGS)

all:
\t@echo PKGS ?= nope
";

    #[test]
    fn reads_the_pkgs_describe_and_its_commit() {
        let got = talos_pkgs(MAKEFILE).unwrap();
        assert_eq!(got.prefix.value, "ghcr.io/siderolabs");
        assert_eq!(
            (got.pkgs.value.as_str(), got.pkgs.line),
            ("v1.13.0-43-gd8c80cc", 5)
        );
        assert_eq!(got.reference, PkgsRef::Commit("d8c80cc".to_owned()));
    }

    #[test]
    fn a_bare_tag_stays_the_tag() {
        let text = MAKEFILE.replace("v1.13.0-43-gd8c80cc", "v1.13.0");
        assert_eq!(
            talos_pkgs(&text).unwrap().reference,
            PkgsRef::Tag("v1.13.0".to_owned())
        );
        assert_eq!(
            pkgs_ref("v1.14.0-rc.1").unwrap(),
            PkgsRef::Tag("v1.14.0-rc.1".to_owned())
        );
        assert_eq!(
            pkgs_ref("v1.14.0-alpha.0-12-gabc1234ef").unwrap(),
            PkgsRef::Commit("abc1234ef".to_owned())
        );
    }

    #[test]
    fn changed_layouts_are_distinct_errors() {
        let cases = [
            MAKEFILE.replace("PKGS ?= v1.13.0-43-gd8c80cc\n", ""),
            MAKEFILE.replace(
                "$(PKGS_PREFIX)/cni:$(PKGS)",
                "$(PKGS_PREFIX)/cni:$(CNI_PKGS)",
            ),
            MAKEFILE.replace("PKG_CNI ?= $(PKGS_PREFIX)/cni:$(PKGS)\n", ""),
            format!("{MAKEFILE}PKGS ?= v1.14.0\n"),
            MAKEFILE.replace("PKGS ?= v1.13.0-43-gd8c80cc", "PKGS ?= $(shell cat pkgs)"),
            MAKEFILE.replace("PKGS_PREFIX ?= ghcr.io/siderolabs\n", ""),
        ];
        for text in cases {
            let err = talos_pkgs(&text).unwrap_err();
            assert!(matches!(err, Error::TalosLayout { .. }), "{err:?}\n{text}");
            assert!(
                err.to_string()
                    .starts_with("the Talos Makefile layout changed: ")
            );
        }
    }

    #[test]
    fn nonsense_describes_are_rejected() {
        for bad in [
            "",
            "main",
            "v1.13.0-43-gd8c80cc-dirty",
            "v1.13.0 x",
            "1.13.0-x-gabcdefg",
        ] {
            assert!(
                matches!(pkgs_ref(bad), Err(Error::Describe { .. })),
                "{bad}"
            );
        }
    }
}
