//! `CNI_PLUGINS_VERSION` of kube-ovn's base image: the CNI plugins a kube-ovn
//! release ships.
//!
//! kube-ovn pins them in `dist/images/Dockerfile.base` as
//! `ARG CNI_PLUGINS_VERSION=v1.9.1`. The Dockerfile is parsed, so the ARG is
//! found in any stage and a commented-out line does not count; several
//! declarations must agree.

use super::{Error, LineValue};
use crate::dockerfile::Dockerfile;

/// Read `ARG CNI_PLUGINS_VERSION=` from kube-ovn's Dockerfile.base.
pub fn kube_ovn_cni_version(dockerfile_base: &str) -> Result<LineValue, Error> {
    let df = Dockerfile::parse(dockerfile_base)?;
    let args: Vec<_> = df.arg_values("CNI_PLUGINS_VERSION").collect();
    let layout = |reason: String| Error::KubeOvnLayout { reason };
    let first = args
        .first()
        .ok_or_else(|| layout("no `ARG CNI_PLUGINS_VERSION=`".to_owned()))?;
    if args.iter().any(|a| a.value != first.value) {
        let lines: Vec<String> = args.iter().map(|a| a.line.to_string()).collect();
        return Err(layout(format!(
            "`CNI_PLUGINS_VERSION` has different values at lines {}",
            lines.join(", ")
        )));
    }
    let value = first.value.clone().unwrap_or_default();
    if value.is_empty() || value.contains('$') {
        return Err(layout(format!(
            "`CNI_PLUGINS_VERSION` at line {} is not a version: `{value}`",
            first.line
        )));
    }
    Ok(LineValue {
        value,
        line: first.line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "\
ARG BASE_TAG=v1
FROM ubuntu:24.04 AS base
# ARG CNI_PLUGINS_VERSION=v0.0.1
# renovate: datasource=github-releases depName=cni-plugin
ARG CNI_PLUGINS_VERSION=v1.9.1
RUN echo CNI_PLUGINS_VERSION=v2
";

    #[test]
    fn reads_the_arg_not_a_comment() {
        let got = kube_ovn_cni_version(BASE).unwrap();
        assert_eq!((got.value.as_str(), got.line), ("v1.9.1", 5));
    }

    #[test]
    fn missing_conflicting_or_computed_values_are_layout_errors() {
        for text in [
            BASE.replace("ARG CNI_PLUGINS_VERSION=v1.9.1\n", ""),
            format!("{BASE}FROM base\nARG CNI_PLUGINS_VERSION=v1.9.0\n"),
            BASE.replace("=v1.9.1", "=${X}"),
        ] {
            let err = kube_ovn_cni_version(&text).unwrap_err();
            assert!(matches!(err, Error::KubeOvnLayout { .. }), "{err:?}");
        }
        assert!(matches!(
            kube_ovn_cni_version("FROM\n"),
            Err(Error::Dockerfile(_))
        ));
    }
}
