//! `builder-go`: the image's Go builder stage is `golang:<image.go>` pinned by
//! `@sha256:<64 hex>`, and that Go is at least the `go` directive of
//! upstream's go.mod at the locked version.
//!
//! The stage questions are [`dockerfile::check_builder`]'s; the directive was
//! read from upstream's go.mod when `update` verified the locked version and
//! is in the lock (`upstream.go-directive`). Versions compare numerically,
//! component by component, a missing patch counting as 0: `golang:1.26`
//! satisfies `go 1.26.0` but not `go 1.26.2`, because nothing but a digest
//! says which 1.26 that image holds.

use super::{Check, Finding, Id, Input, Sink};
use crate::config::lock::LOCK_PATH;
use crate::dockerfile::{self, Base, BuilderProblem};
use crate::error::Result;

/// `builder-go`.
pub const BUILDER_GO: Id = Id {
    name: "builder-go",
    doc: "\
### What
A Go builder stage of the image recipe is not `golang:<go>` (the `[image] go`
of vendor.toml) pinned by `@sha256:<64 hex>`, or its Go is older than the `go`
directive of upstream's go.mod at the locked version.

### Why
`golang:1.26` alone floats: the same Dockerfile builds with another toolchain
next week. A Go older than the module's `go` directive either fails the build
or, with toolchain downloads on, fetches a toolchain during the build that no
digest pins.

### Example
```text
builder-go
  images/multus-cni/Dockerfile:15: error: the builder image `golang:1.26` is not pinned by @sha256:<64 hex> (fix: run `revendor image pin-base` to pin it by its index digest)
```
",
};

pub(super) const CHECK: Check = Check {
    name: "builder_go",
    ids: &[BUILDER_GO],
    online_only: false,
    run: check,
};

fn check(input: &Input<'_>, sink: &mut Sink) -> Result<()> {
    let id = BUILDER_GO.name;
    let Some(image) = &input.config.image else {
        return Ok(());
    };
    let file = image.dockerfile.as_str();
    let Some((_, df)) = input.dockerfile(file)? else {
        sink.push(
            Finding::error(id, file, 1, format!("the image recipe `{file}` is missing"))
                .fix("restore it, or fix `[image] dockerfile` in vendor.toml"),
        );
        return Ok(());
    };
    let go = image.go.as_deref().unwrap_or_default();
    for problem in dockerfile::check_builder(&df, go) {
        let fix = match &problem {
            BuilderProblem::GoVersion { .. } if go.is_empty() => continue,
            BuilderProblem::NoGolangStage => format!(
                "build the Go binaries in a `FROM golang:{go}@sha256:<digest> AS builder` stage"
            ),
            BuilderProblem::GoVersion { expected, .. } => {
                format!("use `golang:{expected}@sha256:<digest>`, or change `[image] go`")
            }
            BuilderProblem::NotPinned { .. } => {
                "run `revendor image pin-base` to pin it by its index digest".to_string()
            }
        };
        sink.push(Finding::error(id, file, problem.line(), problem.to_string()).fix(fix));
    }

    let version = &input.lock.upstream.version;
    let Some(directive) = &input.lock.upstream.go_directive else {
        sink.push(
            Finding::warning(
                id,
                LOCK_PATH,
                1,
                format!("the lock records no go.mod `go` directive for {version}, so the builder's Go cannot be compared with it"),
            )
            .fix("run `revendor update` to record it"),
        );
        return Ok(());
    };
    let Some(needed) = numbers(directive) else {
        return Ok(());
    };
    for stage in &df.stages {
        let Base::Image(r) = &stage.base else {
            continue;
        };
        if !r.is_docker_official("golang") {
            continue;
        }
        let Some(have) = r.tag().and_then(numbers) else {
            continue;
        };
        if older(&have, &needed) {
            sink.push(
                Finding::error(
                    id,
                    file,
                    stage.line,
                    format!(
                        "the builder's Go {} is older than `go {directive}` in upstream's go.mod at {version}",
                        r.tag().unwrap_or_default()
                    ),
                )
                .fix(format!(
                    "build with golang:{directive} or newer (and raise `[image] go` to match)"
                )),
            );
        }
    }
    Ok(())
}

/// The leading `1.26.3` of a Go version or image tag (`1.26.3-bookworm`,
/// `1.25rc1` gives `1.25`), as numbers.
fn numbers(version: &str) -> Option<Vec<u64>> {
    let end = version
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(version.len());
    let parts: Option<Vec<u64>> = version[..end]
        .split('.')
        .filter(|p| !p.is_empty())
        .map(|p| p.parse().ok())
        .collect();
    parts.filter(|p| !p.is_empty())
}

/// Whether `have` is an older version than `needed` (missing parts are 0).
fn older(have: &[u64], needed: &[u64]) -> bool {
    let len = have.len().max(needed.len());
    let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
    for i in 0..len {
        match at(have, i).cmp(&at(needed, i)) {
            std::cmp::Ordering::Less => return true,
            std::cmp::Ordering::Greater => return false,
            std::cmp::Ordering::Equal => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_numerically() {
        let n = |s| numbers(s).unwrap();
        assert!(!older(&n("1.26"), &n("1.25.0")));
        assert!(!older(&n("1.26"), &n("1.26.0")));
        assert!(older(&n("1.26"), &n("1.26.2")));
        assert!(!older(&n("1.26.3-bookworm"), &n("1.26.2")));
        assert!(older(&n("1.9"), &n("1.10")));
        assert_eq!(n("1.25rc1"), [1, 25]);
        assert!(numbers("latest").is_none());
    }
}
