//! Adopting a package whose patches were only ever applied with GNU patch's
//! fuzz, or whose hunk headers' counts lie (issue 9, item 5).
//!
//! Without a lock nothing says what the patches were made against, and a
//! Makefile that ran `patch` (fuzz 2 by default) may have left patches that
//! apply strictly nowhere. Refusing them leaves no way in: `patch refresh`
//! needs a lock. So, on adoption only:
//!
//! 1. [`load`] reads the patches strictly, and when that fails, with each
//!    hunk's counts taken from its body (`git apply --recount`).
//! 2. [`settle`] walks a vendored file's stack strictly; when a section does
//!    not apply, or one of its headers was recounted, it walks it again as
//!    `patch -F2` would ([`Package::fuzz`](crate::render::Package::fuzz)).
//! 3. The fuzzy result, rewritten and pinned, must be the committed rendered
//!    file byte for byte: that file is what the patches meant. Then every
//!    section is refreshed to exact hunks, and each hunk that needed fuzz or a
//!    recount is reported. Otherwise the adoption stops, naming the patch and
//!    the hunks, as it did before.

use super::summary::FuzzyReport;
use crate::config::{AppliesTo, Config, ConfigError, Vendor};
use crate::error::{Error, Result};
use crate::render::{FuzzyStep, Package, Patches, RecountedHunk};

/// The vendor patches; when `adopting`, a patch whose headers lie is read
/// as `git apply --recount` reads it, and each such header is returned.
/// With `--adopt-edits` (`starting`), a patch whose file does not exist yet
/// is loaded empty, for the hand edits to start ([`Patches::load_starting`]).
pub(super) fn load(
    config: &Config,
    adopting: bool,
    starting: bool,
) -> Result<(Patches, Vec<RecountedHunk>)> {
    let missing = || {
        config
            .patches_for(AppliesTo::Vendor)
            .any(|p| !config.path(&p.file).exists())
    };
    if starting && missing() {
        return Ok((Patches::load_starting(config)?, Vec::new()));
    }
    match Patches::load(config) {
        Ok(patches) => Ok((patches, Vec::new())),
        Err(strict @ Error::Config(_)) if adopting => {
            Patches::load_recounted(config).map_err(|_| strict)
        }
        Err(e) => Err(e),
    }
}

/// Makes the stack of `vendor` apply strictly to `base`, the pristine copy
/// at the package's version, when it only applies with fuzz or recounted
/// headers and that result, finished (rewrites and pins), is `current`, the
/// committed file. Returns what needed fuzz or a recount; nothing when the
/// stack applies strictly as it is.
pub(super) fn settle(
    package: &mut Package<'_>,
    recounted: &[RecountedHunk],
    vendor: &Vendor,
    base: &[u8],
    current: Option<&[u8]>,
) -> Result<Vec<FuzzyReport>> {
    let sections = package.sections(vendor);
    let recounted: Vec<&RecountedHunk> = recounted
        .iter()
        .filter(|r| sections.contains(&r.id))
        .collect();
    let strict = package.apply(vendor, base).output;
    if strict.is_ok() && recounted.is_empty() {
        return Ok(Vec::new());
    }
    let patches = package.patches();
    let (steps, current) = match (package.fuzz(vendor, base), current, strict) {
        (Ok(steps), Some(current), _) => (steps, current),
        // Without the committed file nothing shows what the patches meant.
        (_, _, Err(e)) => return Err(e.into()),
        (Err(e), _, Ok(_)) => return Err((*e).into()),
        // A recount only counts when the committed file confirms it: the
        // header is malformed, as without adoption.
        (Ok(_), None, Ok(_)) => return Err(malformed(patches, &recounted, vendor)),
    };
    let reports = reports(patches, vendor, &steps, &recounted);
    let patched = steps.last().map_or(base, |s| s.output.as_slice());
    let expected = package.finish(&vendor.to, patched)?;
    if *expected != *current {
        let version = package.version(vendor);
        return Err(Error::HandEdits(format!(
            "{}, but then `{}` differs from the committed file at line {}; nothing was adopted: \
             fix the patch to apply to {version} exactly, or commit the file it gives",
            list(&reports),
            vendor.to,
            first_difference(&expected, current)
        )));
    }
    for step in &steps {
        package
            .patches_mut()
            .refresh_section(step.id, &step.input, &step.output);
    }
    Ok(reports)
}

/// Each hunk that needed fuzz or a recount, and each section that lands
/// only where GNU patch puts it.
fn reports(
    patches: &Patches,
    vendor: &Vendor,
    steps: &[FuzzyStep],
    recounted: &[&RecountedHunk],
) -> Vec<FuzzyReport> {
    let mut out = Vec::new();
    for step in steps {
        let (p, _) = patches.section(step.id);
        let report = |hunk: usize, why: String| FuzzyReport {
            patch: p.name.clone(),
            file: p.file.clone(),
            line: patches.hunk_line(step.id, hunk),
            target: vendor.to.clone(),
            hunk: hunk + 1,
            why,
        };
        let before = out.len();
        for (hunk, landing) in step.landings.iter().enumerate() {
            let mut why = Vec::new();
            if let Some(r) = recounted
                .iter()
                .find(|r| r.id == step.id && r.found.hunk == hunk)
            {
                why.push(format!(
                    "has a header that lies (`{}` for a body of {} old and {} new lines), recounted",
                    r.found.header, r.found.old, r.found.new
                ));
            }
            if landing.fuzz > 0 {
                why.push(format!(
                    "needed fuzz {} (offset {:+})",
                    landing.fuzz, landing.offset
                ));
            }
            if !why.is_empty() {
                out.push(report(hunk, why.join(" and ")));
            }
        }
        if out.len() == before && !step.strict {
            out.push(report(
                0,
                "lands only where GNU patch puts overlapping hunks".to_owned(),
            ));
        }
    }
    out
}

/// The first recounted header as the parse error it is without adoption.
fn malformed(patches: &Patches, recounted: &[&RecountedHunk], vendor: &Vendor) -> Error {
    let Some(r) = recounted.first() else {
        return Error::PatchConflict(format!("the patches of `{}` do not apply", vendor.to));
    };
    let (p, _) = patches.section(r.id);
    ConfigError::at(
        &p.file,
        Some(r.found.line),
        format!(
            "malformed patch: hunk `{}` has a body of {} old and {} new lines; with no committed `{}` to check a recount against, the header must be right",
            r.found.header, r.found.old, r.found.new, vendor.to
        ),
    )
    .hint("fix the counts in the header, or regenerate the patch with `diff -u` or `git diff`")
    .into()
}

fn list(reports: &[FuzzyReport]) -> String {
    reports
        .iter()
        .map(|r| {
            format!(
                "patch `{}` hunk {} for `{}` ({}:{}) {}",
                r.patch, r.hunk, r.target, r.file, r.line, r.why
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The 1-based line where two texts first differ.
fn first_difference(a: &[u8], b: &[u8]) -> usize {
    let (a, b) = (
        a.split_inclusive(|&c| c == b'\n'),
        b.split_inclusive(|&c| c == b'\n'),
    );
    let same = a.zip(b).take_while(|(x, y)| x == y).count();
    same + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_different_line_is_named() {
        assert_eq!(first_difference(b"a\nb\nc\n", b"a\nB\nc\n"), 2);
        assert_eq!(first_difference(b"a\n", b"a\nb\n"), 2);
    }
}
