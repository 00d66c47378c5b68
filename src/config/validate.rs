//! `RawConfig` → `Config`: every rule that serde cannot express.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use toml::Spanned;

use super::bounds::{self, Bounds, Resolved};
use super::context::{Ctx, stays_inside};
use super::raw::{RawConfig, RawExpect, RawMarker, RawPatch, RawRewrite, RawVendor};
use super::{
    AppliesTo, Config, ConfigError, Expect, Level, Marker, Patch, Rewrite, RewriteKind, Select,
    SeverityOverride, Upstream, Vendor,
};
use super::{asset, named};

/// vendor.toml's `raw` as a [`Config`]; with `starting` (`--adopt-edits`),
/// a vendor `[[patch]]` whose file does not exist yet is allowed: the hand
/// edits start it.
///
/// The tables are validated in this order, and the first fault is the
/// error: upstreams, `[[vendor]]`, `[[patch]]`, the outputs apart from one
/// another, `[[rewrite]]`, images, `[[pin]]`, `[[marker]]`, `[[contract]]`,
/// `[checks]`.
pub(super) fn validate(
    dir: &Path,
    path: &Path,
    text: &str,
    raw: RawConfig,
    starting: bool,
) -> Result<Config, ConfigError> {
    let cx = Ctx::new(path, text, Bounds::new(dir));
    let mut upstreams = named::upstreams(&cx, &raw)?;
    let (vendor, outputs) = vendor_entries(&cx, dir, &upstreams, &raw.vendor)?;
    asset::apart_from_files(&cx, &vendor)?;
    for up in &mut upstreams {
        up.assets = asset::of_upstream(up, &vendor);
    }
    let (patches, patch_files) = patches(&cx, dir, &upstreams, &raw.patch, starting)?;
    apart(&cx, &outputs, &patch_files)?;
    let rewrites = raw
        .rewrite
        .iter()
        .map(|w| rewrite(&cx, &upstreams, w))
        .collect::<Result<_, _>>()?;
    let images = named::images(&cx, &raw)?;
    let pins = raw
        .pin
        .iter()
        .map(|p| named::pin(&cx, &images, p))
        .collect::<Result<_, _>>()?;
    let markers = markers(&cx, &raw.marker)?;
    let contracts = super::contract::validate(&cx, &raw.contract)?;
    let marker_names: HashSet<String> = markers.iter().map(|m| m.name.clone()).collect();
    let contract_names: HashSet<String> = contracts.iter().map(|c| c.name.clone()).collect();
    let severities = severities(&cx, &raw.checks, &marker_names, &contract_names)?;

    Ok(Config {
        severities,
        root: dir.to_path_buf(),
        upstreams,
        vendor,
        patches,
        rewrites,
        images,
        pins,
        markers,
        contracts,
    })
}

/// A `[[vendor]]` output for [`apart`]: where its `to` resolves, `to` as
/// written, and whether it is a directory.
type Output = (Resolved, Spanned<String>, bool);

/// A `[[patch]]` file for [`apart`]: where it resolves, the patch's name
/// and its line.
type PatchFile = (Resolved, String, usize);

/// Every `[[vendor]]`, and its output.
fn vendor_entries(
    cx: &Ctx<'_>,
    dir: &Path,
    upstreams: &[Upstream],
    raw: &[Spanned<RawVendor>],
) -> Result<(Vec<Vendor>, Vec<Output>), ConfigError> {
    let mut vendor = Vec::new();
    let mut outputs = Vec::new();
    for v in raw {
        let (entry, resolved) = vendor_entry(cx, dir, upstreams, v)?;
        outputs.push((resolved, v.get_ref().to.clone(), entry.is_dir()));
        vendor.push(entry);
    }
    Ok((vendor, outputs))
}

/// Every `[[patch]]` (names unique, files present unless `starting` may
/// start them), and its file.
fn patches(
    cx: &Ctx<'_>,
    dir: &Path,
    upstreams: &[Upstream],
    raw: &[Spanned<RawPatch>],
    starting: bool,
) -> Result<(Vec<Patch>, Vec<PatchFile>), ConfigError> {
    let mut names = HashSet::new();
    let mut patches = Vec::new();
    let mut patch_files = Vec::new();
    for p in raw {
        let r = p.get_ref();
        let upstream = named::belongs_to(cx, upstreams, &r.upstream, "[[patch]]", cx.line(p))?;
        if !names.insert(r.name.get_ref().clone()) {
            return Err(cx
                .err(
                    &r.name,
                    format!("duplicate patch name `{}`", r.name.get_ref()),
                )
                .hint("give each [[patch]] its own name"));
        }
        let (file, resolved) = cx.path_of("file", &r.file, true)?;
        patch_files.push((resolved, r.name.get_ref().clone(), cx.line(&r.file)));
        let applies_to = applies_to(cx, &r.applies_to)?;
        let startable = starting && applies_to == AppliesTo::Vendor;
        if !startable {
            patch_file_exists(cx, dir, &r.file, &file, applies_to)?;
        }
        patches.push(Patch {
            upstream,
            name: r.name.get_ref().clone(),
            file,
            applies_to,
            strip: r.strip.as_ref().map(|s| *s.get_ref()).unwrap_or(1),
            line: cx.line(p),
        });
    }
    Ok((patches, patch_files))
}

/// A `[[patch]]`'s `applies-to`.
fn applies_to(cx: &Ctx<'_>, raw: &Spanned<String>) -> Result<AppliesTo, ConfigError> {
    match raw.get_ref().as_str() {
        "vendor" => Ok(AppliesTo::Vendor),
        "source" => Ok(AppliesTo::Source),
        other => Err(cx.err(
            raw,
            format!("`applies-to` = \"{other}\" is not `vendor` or `source`"),
        )),
    }
}

/// The `[[patch]]` file `file` (written as `raw`) is a regular file of the
/// package.
fn patch_file_exists(
    cx: &Ctx<'_>,
    dir: &Path,
    raw: &Spanned<String>,
    file: &str,
    applies_to: AppliesTo,
) -> Result<(), ConfigError> {
    if crate::journal::is_file(&dir.join(file)) {
        return Ok(());
    }
    let hint = match applies_to {
        AppliesTo::Vendor => {
            "create the patch or fix `file`; or edit the vendored file and run `revendor render --adopt-edits`, which starts the patch from the edit"
        }
        AppliesTo::Source => "create the patch or fix `file`",
    };
    // A FIFO, socket, device or directory under that name is there, but is no file
    // revendor reads (issue 21).
    let what = if dir.join(file).exists() {
        "is not a regular file"
    } else {
        "does not exist"
    };
    Err(cx
        .err(raw, format!("patch file `{file}` {what}"))
        .hint(hint))
}

/// One `[[rewrite]]`: lines containing a needle have `replace` replaced, or
/// a Dockerfile ARG is set.
fn rewrite(
    cx: &Ctx<'_>,
    upstreams: &[Upstream],
    w: &Spanned<RawRewrite>,
) -> Result<Rewrite, ConfigError> {
    let r = w.get_ref();
    let upstream = named::belongs_to(cx, upstreams, &r.upstream, "[[rewrite]]", cx.line(w))?;
    let kind = match (&r.lines_containing, &r.replace, &r.dockerfile_arg) {
        (Some(_), Some(replace), None) if replace.get_ref().is_empty() => {
            // An empty `replace` matches nowhere and everywhere: the rewrite would change
            // nothing, and check would then call the intended edit a hand edit (issue 21).
            return Err(cx
                .err(
                    replace,
                    "`replace` is empty: it must name the text to replace on the matching lines",
                )
                .hint("write the text to replace, e.g. `replace = \"snapshot\"`"));
        }
        (Some(needle), Some(replace), None) => RewriteKind::Lines {
            needle: needle.get_ref().clone(),
            replace: replace.get_ref().clone(),
        },
        (None, None, Some(arg)) => RewriteKind::DockerfileArg {
            name: arg.get_ref().clone(),
        },
        _ => {
            return Err(cx
                .err(w, "a [[rewrite]] needs either `lines-containing` with `replace`, or `dockerfile-arg`")
                .hint("see the [[rewrite]] examples in docs/reference.md"));
        }
    };
    Ok(Rewrite {
        upstream,
        file: cx.written("file", &r.file)?,
        kind,
        with: r.with.get_ref().clone(),
        line: cx.line(w),
    })
}

/// Every `[[marker]]`: names unique, resolvers known.
fn markers(cx: &Ctx<'_>, raw: &[Spanned<RawMarker>]) -> Result<Vec<Marker>, ConfigError> {
    let mut marker_names = HashSet::new();
    let mut markers = Vec::new();
    for m in raw {
        let r = m.get_ref();
        if !marker_names.insert(r.name.get_ref().clone()) {
            return Err(cx.err(
                &r.name,
                format!("duplicate marker name `{}`", r.name.get_ref()),
            ));
        }
        if let Some(res) = &r.resolver
            && !matches!(res.get_ref().as_str(), "talos" | "kube-ovn")
        {
            return Err(cx
                .err(res, format!("unknown resolver `{}`", res.get_ref()))
                .hint("known resolvers: talos, kube-ovn"));
        }
        markers.push(Marker {
            name: r.name.get_ref().clone(),
            file: cx.written("file", &r.file)?,
            key: r.key.get_ref().clone(),
            expect: expect(cx, &r.expect)?,
            pin: r.pin.as_ref().map(|p| p.get_ref().clone()),
            resolver: r.resolver.as_ref().map(|p| p.get_ref().clone()),
            line: cx.line(m),
        });
    }
    Ok(markers)
}

/// `[checks]`: each key a check id (or a declared marker's or contract's),
/// each value a level.
fn severities(
    cx: &Ctx<'_>,
    checks: &BTreeMap<Spanned<String>, Spanned<String>>,
    marker_names: &HashSet<String>,
    contract_names: &HashSet<String>,
) -> Result<Vec<SeverityOverride>, ConfigError> {
    let mut severities = Vec::new();
    for (id, level) in checks {
        let level = match level.get_ref().as_str() {
            "error" => Level::Error,
            "warning" => Level::Warning,
            "info" => Level::Info,
            "allow" => Level::Allow,
            other => {
                return Err(cx
                    .err(
                        level,
                        format!("`{}` = \"{other}\" is not a level", id.get_ref()),
                    )
                    .hint("use error, warning, info or allow"));
            }
        };
        if !known_check(id.get_ref(), marker_names, contract_names) {
            return Err(cx
                .err(id, format!("[checks] names `{}`, which is not a check id", id.get_ref()))
                .hint("the ids are listed in docs/checks.md; `marker` and `contract` cover every marker or contract"));
        }
        severities.push(SeverityOverride {
            id: id.get_ref().clone(),
            level,
        });
    }
    Ok(severities)
}

/// One `[[vendor]]`: a file, or a directory when `from` and `to` end with
/// `/` (`from = "./"` is the repository root), with its `include` and
/// `exclude` globs; and its `to` as the filesystem will see it.
fn vendor_entry(
    cx: &Ctx<'_>,
    package: &Path,
    upstreams: &[Upstream],
    v: &Spanned<RawVendor>,
) -> Result<(Vendor, Resolved), ConfigError> {
    let r = v.get_ref();
    let upstream = named::belongs_to(cx, upstreams, &r.upstream, "[[vendor]]", cx.line(v))?;
    let from = match (&r.from, &r.asset) {
        (_, Some(name)) => {
            let (entry, resolved) = asset::vendor_entry(cx, package, upstream, upstreams, v, name)?;
            pristine_copy(cx, name, &entry.pristine())?;
            return Ok((entry, resolved));
        }
        (Some(from), None) => from,
        (None, None) => {
            return Err(cx
                .err(v, "a [[vendor]] needs `from` (a path in the upstream repository) or `asset` (a GitHub release asset)")
                .hint("add `from = \"path/in/repo\"`, or `asset = \"name\"` for a file published with the release"));
        }
    };
    if let Some(checksums) = &r.checksums {
        return Err(cx
            .err(checksums, "`checksums` names the asset listing a release asset's sha256, but this [[vendor]] has no `asset`")
            .hint("remove `checksums`; a repository file is verified by the lock's sha256"));
    }
    let from_text = from.get_ref();
    let dir = directory(cx, r, from)?;
    let copy = match &upstream {
        Some(name) => format!("upstream/{name}/{from_text}"),
        None => format!("upstream/{from_text}"),
    };
    pristine_copy(cx, from, &copy)?;
    let (to, resolved) = rendered_to(cx, package, r, from_text, dir.is_some())?;
    let from = from_text.trim_start_matches("./").to_string();
    Ok((
        Vendor {
            upstream,
            from,
            to,
            line: cx.line(v),
            dir,
            created: false,
            asset: None,
        },
        resolved,
    ))
}

/// What a repository `[[vendor]]` selects: `None` for a file, the
/// directory's globs when `from` ends with `/`. `from` must be a path
/// inside the repository, and `to` of the same kind.
fn directory(
    cx: &Ctx<'_>,
    r: &RawVendor,
    from: &Spanned<String>,
) -> Result<Option<Select>, ConfigError> {
    let (from_text, to_text) = (from.get_ref(), r.to.get_ref());
    if !stays_inside(Path::new(from_text)) || from_text.is_empty() || from_text == "." {
        return Err(cx
            .err(
                from,
                format!("`from` = \"{from_text}\" is not a path inside the upstream repository"),
            )
            .hint("name a file (`deploy/a.yml`), a directory ending with `/` (`charts/x/`), or the repository root as `./`"));
    }
    let is_dir = from_text.ends_with('/');
    match (is_dir, to_text.ends_with('/')) {
        (true, false) => {
            return Err(cx
                .err(
                    &r.to,
                    format!(
                        "`from` = \"{from_text}\" is a directory (it ends with `/`), so `to` = \"{to_text}\" must be one too"
                    ),
                )
                .hint(format!("write `to = \"{to_text}/\"`")));
        }
        (false, true) => {
            return Err(cx
                .err(
                    &r.to,
                    format!(
                        "`to` = \"{to_text}\" is a directory (it ends with `/`), but `from` = \"{from_text}\" is a file"
                    ),
                )
                .hint("end `from` with `/` to vendor the directory, or name the file `to` writes"));
        }
        _ => {}
    }
    if is_dir {
        return Ok(Some(select(cx, r)?));
    }
    if let Some(globs) = r.include.as_ref().or(r.exclude.as_ref()) {
        let key = if r.include.is_some() {
            "include"
        } else {
            "exclude"
        };
        return Err(cx
            .err(
                globs,
                format!(
                    "`{key}` selects files of a directory, but `from` = \"{from_text}\" is a file"
                ),
            )
            .hint("end `from` and `to` with `/` to vendor a directory"));
    }
    Ok(None)
}

/// A repository `[[vendor]]`'s `to`, as written and resolved: a directory
/// of the package (not the package itself) for a directory, a file's name
/// (not an existing directory) for a file.
fn rendered_to(
    cx: &Ctx<'_>,
    package: &Path,
    r: &RawVendor,
    from_text: &str,
    is_dir: bool,
) -> Result<(String, Resolved), ConfigError> {
    let to_text = r.to.get_ref();
    let (to, resolved) = cx.path_of("to", &r.to, true)?;
    if is_dir && resolved.is_empty() {
        return Err(cx
            .err(&r.to, format!("`to` = \"{to_text}\" is the package directory itself, which holds vendor.toml and upstream/"))
            .hint("render the directory into a directory of the package, e.g. `to = \"charts/name/\"`"));
    }
    // issue 13: a file's `to` naming a directory was a failure to write (exit 3).
    if !is_dir && package.join(&to).is_dir() {
        return Err(cx
            .err(
                &r.to,
                format!(
                    "`to` = \"{to}\" is a directory, but `from` = \"{from_text}\" is one file: its rendered copy needs a file name"
                ),
            )
            .hint(format!(
                "name the file inside it, e.g. `to = \"{}/{}\"`",
                to.trim_end_matches('/'),
                from_text.rsplit('/').next().unwrap_or_default()
            )));
    }
    Ok((to, resolved))
}

/// The `include` and `exclude` globs of a directory `[[vendor]]`.
fn select(cx: &Ctx<'_>, r: &RawVendor) -> Result<Select, ConfigError> {
    let globs = |list: &Option<Spanned<Vec<Spanned<String>>>>| -> Option<Vec<String>> {
        list.as_ref()
            .map(|l| l.get_ref().iter().map(|g| g.get_ref().clone()).collect())
    };
    if let Some(include) = &r.include
        && include.get_ref().is_empty()
    {
        return Err(cx.err(include, "`include` = [] selects nothing").hint(
            "list the globs to vendor, or leave `include` out to vendor the whole directory",
        ));
    }
    let exclude = globs(&r.exclude).unwrap_or_default();
    Select::new(globs(&r.include).as_deref(), &exclude).map_err(|(in_include, bad)| {
        let (key, list) = if in_include {
            ("include", &r.include)
        } else {
            ("exclude", &r.exclude)
        };
        let glob = &list
            .as_ref()
            .expect("the bad glob came from this list")
            .get_ref()[bad.index];
        cx.err(
            glob,
            format!(
                "`{key}` glob \"{}\" is not a glob: {}",
                glob.get_ref(),
                bad.reason
            ),
        )
        .hint("globs are relative to `from`: `*` and `?` within a path component, `**` across them")
    })
}

/// The pristine copy of `from`, `copy` (`upstream/<from>`, or
/// `upstream/<name>/<from>` for a named upstream), may not leave the package
/// through a symlink nor be the lock.
fn pristine_copy(cx: &Ctx<'_>, from: &Spanned<String>, copy: &str) -> Result<(), ConfigError> {
    let resolved = cx.bounds.resolve(copy).map_err(|e| {
        cx.err(
            from,
            format!(
                "the pristine copy of `from` = \"{}\" ({copy}) would leave the package: {}",
                from.get_ref(),
                e.describe()
            ),
        )
        .hint("upstream/ must be a directory inside the package")
    })?;
    if bounds::is_lock(&resolved) {
        return Err(cx
            .err(
                from,
                format!(
                    "the pristine copy of `from` = \"{}\" would be kept at {copy}, which is the lock",
                    from.get_ref()
                ),
            )
            .hint("vendor the file by another path, or vendor its directory"));
    }
    Ok(())
}

/// Every `to` names its own file or directory: not another `[[vendor]]`'s
/// output, not a patch file, neither equal to nor under one another (a file
/// inside a vendored directory, or two directories one inside the other,
/// would be rendered twice).
fn apart(
    cx: &Ctx<'_>,
    outputs: &[(Resolved, Spanned<String>, bool)],
    patch_files: &[(Resolved, String, usize)],
) -> Result<(), ConfigError> {
    for (i, (to, value, is_dir)) in outputs.iter().enumerate() {
        let v = value.get_ref();
        if let Some((theirs, other, other_dir)) = outputs[..i]
            .iter()
            .find(|(o, _, _)| bounds::overlaps(to, o))
        {
            let inside = match (*is_dir, *other_dir) {
                (_, true) if theirs.len() < to.len() => Some((v, other)),
                (true, _) if to.len() < theirs.len() => Some((other.get_ref(), value)),
                _ => None,
            };
            if let Some((inner, dir)) = inside {
                return Err(cx
                    .err(
                        value,
                        format!(
                            "`to` = \"{inner}\" is inside the vendored directory `to` = \"{}\" (the [[vendor]] at line {}): its files would be rendered twice",
                            dir.get_ref(),
                            cx.line(dir)
                        ),
                    )
                    .hint("give each [[vendor]] its own `to`, or leave the file out of the directory with `exclude`"));
            }
            let shared = if theirs.len() < to.len() { theirs } else { to };
            return Err(cx
                .err(
                    value,
                    format!(
                        "`to` = \"{v}\" collides with `to` = \"{}\" of the [[vendor]] at line {}: both would write `{}`",
                        other.get_ref(),
                        cx.line(other),
                        bounds::show(shared)
                    ),
                )
                .hint("give each [[vendor]] its own `to`"));
        }
        if let Some((_, name, line)) = patch_files.iter().find(|(p, _, _)| bounds::overlaps(to, p))
        {
            return Err(cx
                .err(
                    value,
                    format!(
                        "`to` = \"{v}\" collides with the file of [[patch]] `{name}` (line {line}): rendering would overwrite the patch"
                    ),
                )
                .hint("keep patches and rendered outputs apart"));
        }
    }
    Ok(())
}

/// The check ids of DESIGN.md, with `marker:<name>` and `contract:<name>`
/// for the markers and contracts this file declares (and their families).
const CHECK_IDS: &[&str] = &[
    "lock-integrity",
    "render-drift",
    "patch-offset",
    "patch-upstreamed",
    "version-sync",
    "builder-go",
    "image-pin",
    "cni-checksums",
    "upstream-newer",
    "image-exists",
    "unreachable",
    "marker",
    "contract",
];

fn known_check(id: &str, markers: &HashSet<String>, contracts: &HashSet<String>) -> bool {
    match id.split_once(':') {
        Some(("marker", name)) => markers.contains(name),
        Some(("contract", name)) => contracts.contains(name),
        Some(_) => false,
        None => CHECK_IDS.contains(&id),
    }
}

fn expect(cx: &Ctx<'_>, raw: &Spanned<RawExpect>) -> Result<Expect, ConfigError> {
    let r = raw.get_ref();
    match (&r.value, &r.file, &r.yaml) {
        (Some(v), None, None) => Ok(Expect::Value(v.get_ref().clone())),
        (None, Some(file), Some(key)) => {
            if Path::new(file.get_ref()).is_absolute() {
                return Err(cx.err(file, "`expect.file` must be relative to the package"));
            }
            Ok(Expect::Yaml {
                file: file.get_ref().clone(),
                key: key.get_ref().clone(),
                strip_digest: r.strip_digest,
            })
        }
        _ => Err(cx
            .err(raw, "`expect` needs either `value`, or `file` with `yaml`")
            .hint("e.g. expect = { file = \"../kubeovn/values.yaml\", yaml = \"global.images.kubeovn.tag\" }")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = "[upstream]\ngithub = \"o/r\"\nversion = \"v1.0.0\"\n";

    fn parse(text: &str) -> Result<Config, ConfigError> {
        let dir = std::env::temp_dir();
        Config::parse(&dir, Path::new("vendor.toml"), text)
    }

    #[test]
    fn minimal_config_parses() {
        let c = parse(MINIMAL).unwrap();
        assert_eq!(
            c.upstream(None).source,
            crate::config::UpstreamSource::GitHub { repo: "o/r".into() }
        );
    }

    #[test]
    fn unknown_key_names_line_and_key() {
        let e = parse(&format!(
            "{MINIMAL}\n[[vendor]]\nfrom = \"a\"\nto = \"b\"\ncolour = 1\n"
        ))
        .unwrap_err();
        assert_eq!(e.line, Some(8), "{e}");
        assert!(e.message.contains("unknown key `colour`"), "{e}");
    }

    #[test]
    fn bad_track_is_reported_at_its_line() {
        let e =
            parse("[upstream]\ngithub = \"o/r\"\nversion = \"v1\"\ntrack = \">=x\"\n").unwrap_err();
        assert_eq!(e.line, Some(4));
        assert!(e.message.contains("not a semver range"), "{e}");
    }

    #[test]
    fn path_leaving_package_is_rejected() {
        let e = parse(&format!(
            "{MINIMAL}[[vendor]]\nfrom = \"a\"\nto = \"../x\"\n"
        ))
        .unwrap_err();
        assert_eq!(e.line, Some(6));
        assert!(e.message.contains("leaves the package"), "{e}");
    }

    #[test]
    fn missing_patch_file_is_rejected() {
        let e = parse(&format!(
            "{MINIMAL}[[patch]]\nname = \"p\"\nfile = \"no/such.patch\"\napplies-to = \"vendor\"\n"
        ))
        .unwrap_err();
        assert_eq!(e.line, Some(6));
        assert!(e.message.contains("does not exist"), "{e}");
    }

    #[test]
    fn severity_overrides_name_known_ids() {
        let c = parse(&format!(
            "{MINIMAL}[checks]\npatch-offset = \"error\"\nmarker = \"allow\"\n"
        ))
        .unwrap();
        assert_eq!(c.level_for("patch-offset"), Some(Level::Error));
        assert_eq!(c.level_for("marker:talos"), Some(Level::Allow));
        assert_eq!(c.level_for("render-drift"), None);
        let e = parse(&format!("{MINIMAL}[checks]\nrender-drfit = \"allow\"\n")).unwrap_err();
        assert_eq!(e.line, Some(5), "{e}");
        assert!(e.message.contains("not a check id"), "{e}");
        let e = parse(&format!("{MINIMAL}[checks]\nrender-drift = \"loud\"\n")).unwrap_err();
        assert!(e.message.contains("is not a level"), "{e}");
    }

    /// issue 10: outputs may not collide with each other nor with revendor's own files.
    #[test]
    fn colliding_outputs_are_refused_at_their_line() {
        let vendor = |to: &str| format!("[[vendor]]\nfrom = \"a.yml\"\nto = \"{to}\"\n");
        let e = parse(&format!(
            "{MINIMAL}{}{}",
            vendor("t/a.yml"),
            vendor("t/./a.yml")
        ))
        .unwrap_err();
        assert_eq!(e.line, Some(9), "{e}");
        assert!(
            e.message
                .contains("collides with `to` = \"t/a.yml\" of the [[vendor]] at line 6"),
            "{e}"
        );
        for (to, what) in [
            (".git/config", "git's own directory"),
            ("upstream/lock.toml", "the lock"),
            ("upstream/a.yml", "the pristine copies"),
            (".revendor-txn/plan", "staging directory"),
            ("vendor.toml", "vendor.toml"),
        ] {
            let e = parse(&format!("{MINIMAL}{}", vendor(to))).unwrap_err();
            assert_eq!(e.line, Some(6), "{to}: {e}");
            assert!(e.message.contains(what), "{to}: {e}");
        }
        let e = parse(&format!(
            "{MINIMAL}[[vendor]]\nfrom = \"./lock.toml\"\nto = \"t.yml\"\n"
        ))
        .unwrap_err();
        assert_eq!(e.line, Some(5), "{e}");
        assert!(e.message.contains("which is the lock"), "{e}");
    }

    #[test]
    fn an_output_may_not_be_a_patch_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("p")).unwrap();
        std::fs::write(dir.path().join("p/x.patch"), "").unwrap();
        let text = format!(
            "{MINIMAL}[[vendor]]\nfrom = \"a\"\nto = \"p/x.patch\"\n\
             [[patch]]\nname = \"x\"\nfile = \"p/x.patch\"\napplies-to = \"vendor\"\n"
        );
        let e = Config::parse(dir.path(), Path::new("vendor.toml"), &text).unwrap_err();
        assert_eq!(e.line, Some(6), "{e}");
        assert!(e.message.contains("[[patch]] `x` (line 9)"), "{e}");
    }

    /// issue 13: a `to` that names a directory was a failure to write (exit 3).
    #[test]
    fn a_to_naming_a_directory_is_refused_at_its_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("charts/app")).unwrap();
        let text = format!("{MINIMAL}[[vendor]]\nfrom = \"d/a.yml\"\nto = \"charts/app\"\n");
        let e = Config::parse(dir.path(), Path::new("vendor.toml"), &text).unwrap_err();
        assert_eq!(e.line, Some(6), "{e}");
        assert!(
            e.message.contains("`to` = \"charts/app\" is a directory"),
            "{e}"
        );
        assert!(e.hint.unwrap().contains("charts/app/a.yml"));
    }

    /// issue 12: a directory is `from`/`to` ending with `/`, with globs.
    #[test]
    fn a_directory_vendor_is_validated_at_its_lines() {
        let dir = |from: &str, to: &str, extra: &str| {
            format!("{MINIMAL}[[vendor]]\nfrom = \"{from}\"\nto = \"{to}\"\n{extra}")
        };
        let c = parse(&dir(
            "./charts/x/",
            "charts/x/",
            "exclude = [\"tests/**\"]\n",
        ))
        .unwrap();
        let v = &c.vendor[0];
        assert!(v.is_dir());
        assert_eq!((v.from.as_str(), v.to.as_str()), ("charts/x/", "charts/x/"));
        assert_eq!(v.selects_from("charts/x/values.yaml"), Some("values.yaml"));
        assert_eq!(v.selects_from("charts/x/tests/a.yaml"), None);
        assert!(c.vendor_rendering("charts/x/templates/a.yaml").is_some());
        assert!(c.vendor_rendering("charts/x/tests/a.yaml").is_none());
        assert_eq!(parse(&dir("./", "src/", "")).unwrap().vendor[0].from, "");

        for (text, line, says) in [
            (
                dir("charts/", "charts", ""),
                6,
                "so `to` = \"charts\" must be one too",
            ),
            (
                dir("a.yml", "t/", ""),
                6,
                "but `from` = \"a.yml\" is a file",
            ),
            (
                dir("a.yml", "t.yml", "include = [\"*\"]\n"),
                7,
                "`include` selects files of a directory",
            ),
            (
                dir("c/", "c/", "exclude = [\"ok\", \"[\"]\n"),
                7,
                "`exclude` glob \"[\" is not a glob",
            ),
            (dir("c/", "c/", "include = []\n"), 7, "selects nothing"),
            (dir("c/", "./", ""), 6, "the package directory itself"),
            (dir("c/", "upstream/", ""), 6, "the pristine copies"),
            (
                dir(".", "t/", ""),
                5,
                "not a path inside the upstream repository",
            ),
        ] {
            let e = parse(&text).unwrap_err();
            assert_eq!(e.line, Some(line), "{text}: {e}");
            assert!(e.message.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn a_file_or_a_directory_inside_a_vendored_directory_is_refused() {
        let vendor =
            |from: &str, to: &str| format!("[[vendor]]\nfrom = \"{from}\"\nto = \"{to}\"\n");
        for (first, second, line) in [
            (
                vendor("charts/", "charts/"),
                vendor("a.yml", "charts/x/a.yml"),
                9,
            ),
            (
                vendor("a.yml", "charts/x/a.yml"),
                vendor("charts/", "charts/"),
                9,
            ),
            (vendor("charts/", "c/"), vendor("other/", "c/sub/"), 9),
        ] {
            let e = parse(&format!("{MINIMAL}{first}{second}")).unwrap_err();
            assert_eq!(e.line, Some(line), "{e}");
            assert!(
                e.message.contains("is inside the vendored directory"),
                "{e}"
            );
        }
        let e = parse(&format!(
            "{MINIMAL}{}{}",
            vendor("a/", "c/"),
            vendor("b/", "c/")
        ))
        .unwrap_err();
        assert!(e.message.contains("collides with `to` = \"c/\""), "{e}");
    }

    #[test]
    fn stays_inside_handles_dotdot() {
        assert!(stays_inside(Path::new("a/../b")));
        assert!(!stays_inside(Path::new("a/../../b")));
        assert!(!stays_inside(Path::new("/etc/passwd")));
    }

    #[test]
    fn image_go_is_a_minor() {
        let image = "[image]\nrepository = \"r\"\ntag = \"t\"\ncontext = \"c\"\nplatforms = [\"linux/amd64\"]\n";
        let c = parse(&format!("{MINIMAL}{image}go = \"1.26\"\n")).unwrap();
        assert_eq!(c.images[0].go.as_ref().unwrap().to_string(), "1.26");
        for bad in ["1.26.1", "go1.26", "1.26rc1"] {
            let e = parse(&format!("{MINIMAL}{image}go = \"{bad}\"\n")).unwrap_err();
            assert!(e.message.contains("is not a Go minor"), "{bad}: {e}");
        }
    }
}
