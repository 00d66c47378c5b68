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
//!
//! What to do about each of these is said once, here ([`advice`]): `check`,
//! `image build`'s preflight and `image pin-base` give the same next command
//! for the same problem, and that command is always `revendor image
//! pin-base` (with `--go` when the builder must move), which moves the
//! builder, `[image] go` and the digest together. With several images the
//! command names the image (`revendor image pin-base <name> --go X.Y`), so
//! it moves only that image's builder.

use super::{Check, Finding, Id, Input, Sink};
use crate::config::lock::LOCK_PATH;
use crate::config::{Config, Image};
use crate::dockerfile::{self, Base, BuilderProblem, Dockerfile};
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
    for image in &input.config.images {
        check_image(input, image, sink)?;
    }
    Ok(())
}

fn check_image(input: &Input<'_>, image: &Image, sink: &mut Sink) -> Result<()> {
    let id = BUILDER_GO.name;
    // An upstream the lock lacks is lock-integrity's to report.
    let Some(locked) = input.lock.upstream(input.config.image_upstream(image)) else {
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
    let version = &locked.version;
    let directive = locked.go_directive.as_deref();
    let name = command_name(input.config, image);
    for finding in findings(&df, file, image.go.as_ref(), directive, version, name) {
        sink.push(finding);
    }
    if directive.is_none() {
        sink.push(
            Finding::warning(
                id,
                LOCK_PATH,
                1,
                format!("the lock records no go.mod `go` directive for {version}, so the builder's Go cannot be compared with it"),
            )
            .fix("run `revendor update` to record it"),
        );
    }
    Ok(())
}

/// Every `builder-go` error of the recipe `df` (at `file`): its golang
/// stages against `[image] go` (`go`; the Go release is not compared without
/// one), then their Go against upstream's go.mod `directive` at `version`.
/// `image build` stops at the first of these, with the same message and
/// advice; `image` is [`command_name`]'s.
pub fn findings(
    df: &Dockerfile,
    file: &str,
    go: Option<&go::Requirement>,
    directive: Option<&str>,
    version: &str,
    image: Option<&str>,
) -> Vec<Finding> {
    let id = BUILDER_GO.name;
    let mut out = Vec::new();
    for problem in dockerfile::check_builder(df, go) {
        let fix = advice(&problem, go, image);
        out.push(Finding::error(id, file, problem.line(), problem.to_string()).fix(fix));
    }
    let Some((directive, needed)) = directive.and_then(|d| Some((d, go::Version::parse(d)?)))
    else {
        return out;
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
            out.push(
                Finding::error(
                    id,
                    file,
                    stage.line,
                    format!(
                        "the builder's Go {tag} is older than `go {directive}` in upstream's go.mod at {version}"
                    ),
                )
                .fix(advice_older(go, &needed, image)),
            );
        }
    }
    out
}

/// The image name the next command gives `image pin-base`: the image's
/// `name` when the package has several, else none (`pin-base` alone).
pub fn command_name<'c>(config: &'c Config, image: &'c Image) -> Option<&'c str> {
    if config.images.len() > 1 {
        image.name.as_deref()
    } else {
        None
    }
}

/// `revendor image pin-base`, with the image's name when there is one.
fn pin_base(image: Option<&str>) -> String {
    match image {
        Some(name) => format!("revendor image pin-base {name}"),
        None => "revendor image pin-base".to_owned(),
    }
}

/// What to do about a builder stage that falls short of `[image] go`
/// (`go`): the one advice for `builder-go`, given by `check`, `image build`
/// and `image pin-base` alike; `image` is [`command_name`]'s.
pub fn advice(
    problem: &BuilderProblem,
    go: Option<&go::Requirement>,
    image: Option<&str>,
) -> String {
    let wanted = go.map(|g| g.minor.to_string()).unwrap_or_default();
    let command = pin_base(image);
    match problem {
        BuilderProblem::NoGolangStage => format!(
            "build the Go binaries in a `FROM golang:{wanted} AS builder` stage and run `{command}` to pin it, or drop `go` from [image] in vendor.toml"
        ),
        BuilderProblem::GoVersion { .. } => move_to(&wanted, false, image),
        BuilderProblem::NotPinned { .. } => {
            format!("run `{command}` to pin it by its index digest")
        }
    }
}

/// What to do about a builder whose Go is older than upstream's go.mod
/// directive (`needed`): move to `[image] go` when that is new enough,
/// else to the directive's minor, `[image] go` with it.
fn advice_older(go: Option<&go::Requirement>, needed: &go::Version, image: Option<&str>) -> String {
    match go {
        Some(go) if go.minor.satisfies(needed) => move_to(&go.minor.to_string(), false, image),
        _ => move_to(&needed.minor_release().to_string(), true, image),
    }
}

/// `run revendor image pin-base [<image>] --go <go>`, saying what it moves.
fn move_to(go: &str, with_config: bool, image: Option<&str>) -> String {
    let what = match (with_config, image) {
        (false, _) => "the builder".to_owned(),
        (true, None) => "the builder and `[image] go`".to_owned(),
        (true, Some(name)) => format!("the builder and image `{name}`'s `go`"),
    };
    let command = pin_base(image);
    format!("run `{command} --go {go}`: it moves {what} to Go {go} and pins it by digest")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 9: every `builder-go` problem names one next command, and it
    /// is the one `image build` names too.
    #[test]
    fn the_advice_is_always_pin_base() {
        let other = BuilderProblem::GoVersion {
            line: 1,
            found: Some("1.24".into()),
            expected: "1.26".into(),
        };
        let v = |s| go::Version::parse(s).unwrap();
        let r = |s| go::Requirement::parse(s).unwrap();
        let moved = "run `revendor image pin-base --go 1.26`: it moves the builder to Go 1.26 and pins it by digest";
        assert_eq!(advice(&other, Some(&r("1.26")), None), moved);
        assert_eq!(advice_older(Some(&r("1.26")), &v("1.25.0"), None), moved);
        assert_eq!(
            advice_older(Some(&r("1.24")), &v("1.25.0"), None),
            "run `revendor image pin-base --go 1.25`: it moves the builder and `[image] go` to Go 1.25 and pins it by digest"
        );
        assert_eq!(
            advice_older(None, &v("1.25"), None),
            advice_older(Some(&r("1.24")), &v("1.25.0"), None)
        );
    }

    /// With several images the next command names the one to move.
    #[test]
    fn the_advice_names_the_image_when_there_are_several() {
        let v = |s| go::Version::parse(s).unwrap();
        let r = |s| go::Requirement::parse(s).unwrap();
        assert_eq!(
            advice_older(Some(&r("1.24")), &v("1.25.0"), Some("tool")),
            "run `revendor image pin-base tool --go 1.25`: it moves the builder and image `tool`'s `go` to Go 1.25 and pins it by digest"
        );
        let unpinned = BuilderProblem::NotPinned {
            line: 1,
            image: "golang:1.26".into(),
        };
        assert_eq!(
            advice(&unpinned, Some(&r("1.26")), Some("tool")),
            "run `revendor image pin-base tool` to pin it by its index digest"
        );
    }
}
