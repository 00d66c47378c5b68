//! `builder-go`: the image's Go builder stage is `golang:<image.go>` pinned by
//! `@sha256:<64 hex>`, and that Go is at least the `go` directive of
//! upstream's go.mod at the locked version.
//!
//! The stage questions are [`dockerfile::check_builder`]'s; the directive was
//! read from upstream's go.mod when `update` verified the locked version and
//! is in the lock (`upstream.go-directive`). Versions compare as
//! [`go::Version::satisfies`] does: a tag without a patch level is the newest
//! patch of its minor, so `golang:1.26` satisfies `go 1.26.2` and
//! `golang:1.23-bookworm` satisfies `go 1.23.10`, while `golang:1.26.1` does
//! not satisfy `go 1.26.2`.

use super::{Check, Finding, Id, Input, Sink};
use crate::config::lock::LOCK_PATH;
use crate::dockerfile::{self, Base, BuilderProblem};
use crate::error::Result;
use crate::go;

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
    for problem in dockerfile::check_builder(&df, image.go.as_ref()) {
        let fix = match &problem {
            BuilderProblem::NoGolangStage => format!(
                "build the Go binaries in a `FROM golang:{}@sha256:<digest> AS builder` stage",
                image
                    .go
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default()
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
    let Some(needed) = go::Version::parse(directive) else {
        return Ok(());
    };
    for stage in &df.stages {
        let Base::Image(r) = &stage.base else {
            continue;
        };
        if !r.is_docker_official("golang") {
            continue;
        }
        let Some(tag) = r.tag() else {
            continue;
        };
        let Some((have, _)) = go::Version::from_tag(tag) else {
            continue;
        };
        if !have.satisfies(&needed) {
            sink.push(
                Finding::error(
                    id,
                    file,
                    stage.line,
                    format!(
                        "the builder's Go {tag} is older than `go {directive}` in upstream's go.mod at {version}"
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
