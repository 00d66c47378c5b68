//! `cni-checksums`: the CNI plugins archive the image downloads is verified
//! against a pinned sha256 for every platform, before it is unpacked; and
//! (online) each pinned sha256 is the one the release publishes.
//!
//! Offline, [`dockerfile::cni_checksums`] reads the recipe as shell: a 64-hex
//! digest for every `[image] platforms` entry, `sha256sum -c` on the archive,
//! its failure stopping the build, and no `tar` before it. The check applies
//! to recipes that pin `CNI_PLUGINS_VERSION` (or that markers vouch for).
//!
//! Online, each platform's digest is compared with the release's `.sha256`
//! sidecar (`<hex>  <file name>`, the file name must be the asset's), a
//! release asset of containernetworking/plugins read through
//! `github`.
//!
//! With `--fix`, a digest that differs from its sidecar is rewritten only as
//! part of a deliberate version change: `CNI_PLUGINS_VERSION` in the working
//! tree differs from the one committed in git (someone moved it on purpose and
//! the old digests belong to the old version). The same version with another
//! digest means the published archive changed; that is never "fixed".

use std::path::Path;

use super::{Check, Finding, Id, Input, Sink, unreachable};
use crate::dockerfile::{self, ArchPin, CniProblem, Dockerfile, rewrite_arg};
use crate::error::Result;
use crate::github;
use crate::image::{Digest, Platform};
use crate::marker::{cni_asset, sidecar_sha256};

/// `cni-checksums`.
pub const CNI_CHECKSUMS: Id = Id {
    name: "cni-checksums",
    doc: "\
### What
The image recipe downloads the CNI plugins archive without a pinned 64-hex
sha256 for every platform it builds, does not check it with `sha256sum -c`
before unpacking it, or lets a failed check pass. With `--online`, a pinned
sha256 differs from the `.sha256` file the containernetworking/plugins
release publishes for that archive.

### Why
The archive's binaries run as root on every node. A checksum that is missing
for one architecture, checked after `tar`, or ignored on failure verifies
nothing; a checksum that no longer matches the release means either a typo
or a published archive that changed.

### Example
```text
cni-checksums
  images/multus-cni/Dockerfile:32: error: the sha256 pinned for linux/arm64 is `${CNI_PLUGINS_SHA256_ARM64}`, not 64 lowercase hex digits (fix: give `CNI_PLUGINS_SHA256_ARM64` a default: the full sha256 for linux/arm64 from the release's `.sha256` file)
```
",
};

pub(super) const CHECK: Check = Check {
    name: "cni_checksums",
    ids: &[CNI_CHECKSUMS],
    online_only: false,
    run: check,
};

/// The ARG holding the CNI plugins release.
const VERSION_ARG: &str = "CNI_PLUGINS_VERSION";
/// The repository publishing the archives and their sidecars.
const REPOSITORY: &str = "containernetworking/plugins";

fn check(input: &Input<'_>, sink: &mut Sink) -> Result<()> {
    for image in &input.config.images {
        check_image(input, image, sink)?;
    }
    Ok(())
}

fn check_image(input: &Input<'_>, image: &crate::config::Image, sink: &mut Sink) -> Result<()> {
    let id = CNI_CHECKSUMS.name;
    let file = image.dockerfile.as_str();
    let Some((_, df)) = input.dockerfile(file)? else {
        return Ok(());
    };
    let vouched = input.config.markers.iter().any(|m| m.pin.is_some());
    if df.args.iter().all(|a| a.name != VERSION_ARG) && !vouched {
        return Ok(());
    }
    let found = dockerfile::cni_checksums(&df, &image.platforms);
    for problem in &found.problems {
        sink.push(
            Finding::error(id, file, problem.line(), problem.to_string()).fix(fix_for(problem)),
        );
    }
    if !input.online {
        return Ok(());
    }
    let Some((version, _)) = super::marker::pinned(&df, VERSION_ARG) else {
        sink.push(
            Finding::error(
                id,
                file,
                1,
                format!("no `ARG {VERSION_ARG}=` names the release"),
            )
            .fix(format!("declare `ARG {VERSION_ARG}=<release>`")),
        );
        return Ok(());
    };
    for pin in found
        .pins
        .iter()
        .filter(|p| Digest::from_hex(&p.sha256).is_ok())
    {
        check_pin(input, file, &version, pin, sink)?;
    }
    Ok(())
}

/// One architecture's pinned sha256 against the sidecar `version`
/// publishes; with `--fix`, rewritten when `CNI_PLUGINS_VERSION` was moved
/// on purpose.
fn check_pin(
    input: &Input<'_>,
    file: &str,
    version: &str,
    pin: &ArchPin,
    sink: &mut Sink,
) -> Result<()> {
    let id = CNI_CHECKSUMS.name;
    let arch = Platform::parse(&pin.platform)
        .map(|p| p.architecture)
        .unwrap_or_else(|_| pin.platform.clone());
    let asset = cni_asset(&arch, version);
    let Some(published) = published_sha256(input, file, version, pin, &asset, sink)? else {
        return Ok(());
    };
    if published == pin.sha256 {
        return Ok(());
    }
    let mismatch = format!(
        "the sha256 pinned for {} is {}, but {version}'s `{asset}.sha256` says {published}",
        pin.platform, pin.sha256
    );
    if !input.fix {
        sink.push(
            Finding::error(id, file, pin.line, mismatch).fix(format!(
                "if you moved `{VERSION_ARG}` on purpose, run `revendor check --online --fix` to take the digests from the sidecars; \
                 if not, find out why {version}'s archive changed before trusting it"
            )),
        );
        return Ok(());
    }
    if !moved_on_purpose(input, file, version, pin, &mismatch, sink) {
        return Ok(());
    }
    rewrite_sha256(input, file, version, pin, &published, &mismatch, sink)
}

/// The sha256 of `asset` that release `version` publishes in its sidecar;
/// `None` after the finding when the sidecar is unreachable, missing or
/// unreadable.
fn published_sha256(
    input: &Input<'_>,
    file: &str,
    version: &str,
    pin: &ArchPin,
    asset: &str,
    sink: &mut Sink,
) -> Result<Option<String>> {
    let id = CNI_CHECKSUMS.name;
    let url = github::release_asset_url(
        &input.ctx.env,
        REPOSITORY,
        version,
        &format!("{asset}.sha256"),
    );
    let what = format!(
        "{id} could not read the sha256 {version} publishes for {}",
        pin.platform
    );
    let fetched = github::fetch_text(&input.ctx.client, &url);
    let Some(fetched) = unreachable::answered(fetched, sink, &what, file, pin.line)? else {
        return Ok(None);
    };
    let Some(sidecar) = fetched else {
        sink.push(
            Finding::error(
                id,
                file,
                pin.line,
                format!("`{url}` does not exist: is {version} a release of {REPOSITORY}?"),
            )
            .fix(format!("set `{VERSION_ARG}` to a published release")),
        );
        return Ok(None);
    };
    match sidecar_sha256(&sidecar, asset) {
        Ok(v) => Ok(Some(v.value)),
        Err(e) => {
            sink.push(
                Finding::error(id, file, pin.line, format!("cannot read `{url}`: {e}"))
                    .fix("compare the archive's sha256 by hand"),
            );
            Ok(None)
        }
    }
}

/// Whether `CNI_PLUGINS_VERSION` differs from the committed one, so that
/// the `mismatch` comes from a deliberate version change; `false` after the
/// finding when it does not (or git cannot tell): the archive changed.
fn moved_on_purpose(
    input: &Input<'_>,
    file: &str,
    version: &str,
    pin: &ArchPin,
    mismatch: &str,
    sink: &mut Sink,
) -> bool {
    let committed = committed_version(input, file);
    if committed.as_deref().is_some_and(|c| c != version) {
        return true;
    }
    let why = match committed {
        Some(_) => format!(
            "`{VERSION_ARG}` is still the committed {version}, so this is no deliberate version change: the published archive changed"
        ),
        None => format!(
            "`{file}` has no committed version in git to tell a deliberate `{VERSION_ARG}` change from a changed archive"
        ),
    };
    sink.push(
        Finding::error(
            CNI_CHECKSUMS.name,
            file,
            pin.line,
            format!("{mismatch}; not rewriting it: {why}"),
        )
        .fix("find out why the archive changed; edit the digest by hand only once you trust it"),
    );
    false
}

/// Rewrites the ARG default holding `pin`'s sha256 to `published`; an
/// error finding when the digest is no ARG default.
fn rewrite_sha256(
    input: &Input<'_>,
    file: &str,
    version: &str,
    pin: &ArchPin,
    published: &str,
    mismatch: &str,
    sink: &mut Sink,
) -> Result<()> {
    let id = CNI_CHECKSUMS.name;
    let Some(text) = input.text(file)? else {
        return Ok(());
    };
    let parsed = Dockerfile::parse(&text).ok();
    let arg = parsed.as_ref().and_then(|df| {
        df.args
            .iter()
            .find(|a| a.line == pin.line && a.value.as_deref() == Some(pin.sha256.as_str()))
            .map(|a| a.name.clone())
    });
    let rewritten = arg
        .as_deref()
        .and_then(|name| rewrite_arg(&text, name, published).ok().map(|t| (name, t)));
    match rewritten {
        Some((name, new)) => {
            input.edit(file, new.into_bytes());
            sink.push(Finding::info(
                id,
                file,
                pin.line,
                format!(
                    "rewrote `{name}` for {} from {version}'s sidecar: {} → {published}",
                    pin.platform, pin.sha256
                ),
            ));
        }
        None => sink.push(
            Finding::error(
                id,
                file,
                pin.line,
                format!("{mismatch}; the digest is not an `ARG` default, so it is not rewritten"),
            )
            .fix(format!("set it to {published} by hand")),
        ),
    }
    Ok(())
}

/// `CNI_PLUGINS_VERSION` of the Dockerfile as committed at git `HEAD`, when
/// the package is in a git work tree and the file is committed.
fn committed_version(input: &Input<'_>, file: &str) -> Option<String> {
    let repo = git2::Repository::discover(&input.ctx.root).ok()?;
    let workdir = repo.workdir()?.canonicalize().ok()?;
    let path = input.ctx.root.join(file).canonicalize().ok()?;
    let relative = path.strip_prefix(&workdir).ok()?;
    let tree = repo.head().ok()?.peel_to_tree().ok()?;
    let entry = tree.get_path(Path::new(relative)).ok()?;
    let blob = entry.to_object(&repo).ok()?.peel_to_blob().ok()?;
    let text = std::str::from_utf8(blob.content()).ok()?;
    let df = Dockerfile::parse(text).ok()?;
    super::marker::pinned(&df, VERSION_ARG).map(|(v, _)| v)
}

fn fix_for(problem: &CniProblem) -> String {
    match problem {
        CniProblem::NoDownload => {
            "download `cni-plugins-linux-<arch>-<version>.tgz` in a RUN and verify it there"
                .to_owned()
        }
        CniProblem::Unparsed { .. } => "write the RUN so it reads as POSIX shell".to_owned(),
        CniProblem::Streamed { .. } => {
            "write the archive to a file, verify it, then unpack the file".to_owned()
        }
        CniProblem::MissingArch { platform, .. } => {
            let arch = platform.rsplit('/').next().unwrap_or(platform);
            format!(
                "declare `ARG CNI_PLUGINS_SHA256_{}=<64 hex>` from the release's `cni-plugins-linux-{arch}-<version>.tgz.sha256`",
                arch.to_ascii_uppercase()
            )
        }
        CniProblem::NotHex {
            platform, value, ..
        } if value.starts_with('$') => format!(
            "give `{}` a default: the full sha256 for {platform} from the release's `.sha256` file",
            value.trim_matches(['$', '{', '}'])
        ),
        CniProblem::NotHex { platform, .. } => format!(
            "pin the full sha256 for {platform} (64 lowercase hex digits, from the release's `.sha256` file)"
        ),
        CniProblem::NoVerify { archive, .. } => {
            format!("verify it: `echo \"${{sha}}  {archive}\" | sha256sum -c -` before `tar`")
        }
        CniProblem::Unguarded { .. } => {
            "make a failed `sha256sum -c` stop the build (`set -e`, or `&&` up to the extraction)"
                .to_owned()
        }
        CniProblem::VerifyAfterExtract { .. } => {
            "move the `sha256sum -c` before the `tar` that unpacks the archive".to_owned()
        }
    }
}
