//! Contracts with `helm`: the assertions held on what `helm template`
//! renders, once per values set, and `render-fails`, which holds when Helm
//! refuses each listed values file.
//!
//! 1. Find the helm binary ([`Helm::locate`]); without one, every such
//!    contract is a finding that says how to get one: a contract nobody can
//!    evaluate must not pass.
//! 2. Render each (chart, values set) once, whatever number of contracts
//!    read it, and read each chart's files once for all its values sets
//!    ([`Renders`]); Helm's cache makes an unchanged package's second check
//!    spawn nothing.
//! 3. Select documents as a file contract does, only among those of the
//!    template `file` names when it is given, and evaluate the same
//!    [`manifest::Contract`]. A violation names its values set, and points at
//!    the template line it came from when the rendered line is found there.
//!
//! A `render-fails` contract also needs the chart to render with its own
//! values.yaml: a chart Helm refuses whatever the values would pass it
//! without saying anything about them.

use std::collections::HashMap;
use std::rc::Rc;

use super::{CONTRACT, assertion};
use crate::check::{Finding, Input, Sink};
use crate::config::{Contract, HelmRender};
use crate::error::Result;
use crate::helm::{Chart, Helm, Outcome, output};
use crate::manifest::Manifest;

/// How many document names a "Helm rendered it" finding lists.
const NAMED_DOCUMENTS: usize = 4;

/// Evaluates every contract with `helm`, each with its `helm` table.
pub(super) fn check(
    input: &Input<'_>,
    contracts: &[(&Contract, &HelmRender)],
    sink: &mut Sink,
) -> Result<()> {
    if contracts.is_empty() {
        return Ok(());
    }
    let helm = match Helm::locate(&input.ctx.env) {
        Ok(helm) => helm,
        Err(missing) => {
            for (c, _) in contracts {
                sink.push(
                    Finding::error(
                        CONTRACT.member(&c.name),
                        "vendor.toml",
                        c.line,
                        format!(
                            "contract `{}` holds on what Helm renders, and there is no helm to run: {missing}",
                            c.name
                        ),
                    )
                    .fix("install Helm 3.x or 4.x (https://helm.sh/docs/intro/install/), or point REVENDOR_HELM at a helm binary"),
                );
            }
            return Ok(());
        }
    };
    let mut renders = Renders {
        input,
        helm,
        charts: HashMap::new(),
        done: HashMap::new(),
    };
    for (c, render) in contracts {
        if render.render_fails {
            refusals(&mut renders, c, render, sink)?;
        } else {
            assertions(&mut renders, c, render, sink)?;
        }
    }
    Ok(())
}

/// The renders of one check, each (chart, values set) run once.
struct Renders<'a, 'i> {
    input: &'a Input<'i>,
    helm: Helm,
    /// Each chart's files, read once.
    charts: HashMap<String, Chart>,
    done: HashMap<(String, Option<String>), Rc<Outcome>>,
}

impl Renders<'_, '_> {
    fn get(&mut self, chart: &str, values: Option<&str>) -> Result<Rc<Outcome>> {
        let key = (chart.to_owned(), values.map(str::to_owned));
        if let Some(done) = self.done.get(&key) {
            return Ok(Rc::clone(done));
        }
        let ctx = self.input.ctx;
        if !self.charts.contains_key(chart) {
            let read = Chart::read(&ctx.root, chart)?;
            self.charts.insert(chart.to_owned(), read);
        }
        let outcome = Rc::new(self.helm.template(
            &ctx.root,
            &self.charts[chart],
            values,
            &ctx.env.cache_dir,
        )?);
        self.done.insert(key, Rc::clone(&outcome));
        Ok(outcome)
    }
}

/// A values set in messages.
fn describe(values: Option<&str>) -> String {
    match values {
        Some(file) => format!("with `{file}`"),
        None => "with the chart's values.yaml".to_owned(),
    }
}

/// The package path of a file of the chart.
fn in_chart(chart: &str, rel: &str) -> String {
    match chart.trim_end_matches('/') {
        "" | "." => rel.to_owned(),
        dir => format!("{dir}/{rel}"),
    }
}

/// The listed values files that exist; a missing one is a finding.
fn present<'r>(
    input: &Input<'_>,
    c: &Contract,
    render: &'r HelmRender,
    sink: &mut Sink,
) -> Result<Vec<Option<&'r str>>> {
    let mut sets = Vec::new();
    for set in render.values_sets() {
        if let Some(file) = set
            && input.read(file)?.is_none()
        {
            sink.push(
                Finding::error(
                    CONTRACT.member(&c.name),
                    "vendor.toml",
                    c.line,
                    format!("`{file}`, a values file of contract `{}`, is missing", c.name),
                )
                .fix(format!(
                    "create `{file}`, or drop it from the contract's `helm.values` (vendor.toml:{})",
                    c.line
                )),
            );
            continue;
        }
        sets.push(set);
    }
    Ok(sets)
}

/// The assertion on each values set's render.
fn assertions(
    renders: &mut Renders<'_, '_>,
    c: &Contract,
    render: &HelmRender,
    sink: &mut Sink,
) -> Result<()> {
    let id = CONTRACT.member(&c.name);
    let input = renders.input;
    for values in present(input, c, render, sink)? {
        let set = describe(values);
        let values_file =
            values.map_or_else(|| in_chart(&render.chart, "values.yaml"), str::to_owned);
        let stdout = match renders.get(&render.chart, values)?.as_ref() {
            Outcome::Rendered(stdout) => stdout.clone(),
            Outcome::Refused(said) => {
                sink.push(
                    Finding::error(&id, &values_file, 1, format!("Helm refuses to render the chart {set}: {said}"))
                        .fix(format!(
                            "fix the chart or the values until `helm template {}{}` renders; the contract is at vendor.toml:{}",
                            render.chart,
                            values.map(|v| format!(" --values {v}")).unwrap_or_default(),
                            c.line
                        )),
                );
                continue;
            }
        };
        let selected = Selected::new(&stdout, &render.chart, c.file.as_deref());
        let manifest = match Manifest::parse_rendered(&selected.text) {
            Ok(m) => m,
            Err(e) => {
                let (file, line) = selected.locate(input, e.line())?;
                sink.push(
                    Finding::error(
                        &id,
                        file,
                        line,
                        format!("what Helm renders {set} is not YAML: {e}"),
                    )
                    .fix("fix the template so it renders YAML"),
                );
                continue;
            }
        };
        if manifest
            .select(&c.kind, c.object_name.as_deref())
            .next()
            .is_none()
        {
            let what = match &c.object_name {
                Some(name) => format!("no {} named `{name}`", c.kind),
                None => format!("no {}", c.kind),
            };
            let from = c
                .file
                .as_deref()
                .map(|f| format!(" from `{f}`"))
                .unwrap_or_default();
            sink.push(
                Finding::error(&id, "vendor.toml", c.line, format!("Helm renders {what}{from} {set}"))
                    .fix("check the contract's `select` and `file`, and the chart's conditions on these values"),
            );
            continue;
        }
        for v in assertion(c).evaluate(&manifest) {
            let (file, line) = selected.locate(input, v.line)?;
            sink.push(
                Finding::error(&id, file, line, format!("{set}: {}", v.message)).fix(format!(
                    "make the chart render it {set} (its template, or the values); the contract is at vendor.toml:{}",
                    c.line
                )),
            );
        }
    }
    Ok(())
}

/// `render-fails`: Helm must refuse each listed values file, and render the
/// chart's own values.yaml.
fn refusals(
    renders: &mut Renders<'_, '_>,
    c: &Contract,
    render: &HelmRender,
    sink: &mut Sink,
) -> Result<()> {
    let id = CONTRACT.member(&c.name);
    let input = renders.input;
    if let Outcome::Refused(said) = renders.get(&render.chart, None)?.as_ref() {
        sink.push(
            Finding::error(&id, in_chart(&render.chart, "values.yaml"), 1, format!(
                "Helm refuses the chart's own values.yaml too, so its refusal of the values of contract `{}` proves nothing: {said}",
                c.name
            ))
            .fix(format!("fix the chart until `helm template {}` renders", render.chart)),
        );
        return Ok(());
    }
    for values in present(input, c, render, sink)?.into_iter().flatten() {
        let Outcome::Rendered(stdout) = renders.get(&render.chart, Some(values))?.as_ref().clone()
        else {
            continue;
        };
        let docs: Vec<String> = output::documents(&stdout)
            .iter()
            .filter_map(|d| name_of(&d.text))
            .collect();
        let mut names: Vec<&str> = docs
            .iter()
            .take(NAMED_DOCUMENTS)
            .map(String::as_str)
            .collect();
        let more = docs.len().saturating_sub(NAMED_DOCUMENTS);
        let more = format!("{more} more");
        if docs.len() > NAMED_DOCUMENTS {
            names.push(&more);
        }
        sink.push(
            Finding::error(&id, values, 1, format!(
                "Helm renders the chart with `{values}` ({} documents: {}), and contract `{}` says it must refuse these values",
                docs.len(),
                names.join(", "),
                c.name
            ))
            .fix(format!(
                "make the chart refuse them (`fail` or `required` in the template), or drop `{values}` from the contract (vendor.toml:{})",
                c.line
            )),
        );
    }
    Ok(())
}

/// `Kind/name` of a rendered document, as far as it says; `None` for one
/// that holds only comments.
fn name_of(text: &str) -> Option<String> {
    let manifest = Manifest::parse_rendered(text).ok()?;
    let doc = manifest.documents().first()?;
    Some(format!(
        "{}/{}",
        doc.kind().unwrap_or("?"),
        doc.name().unwrap_or("(unnamed)")
    ))
}

/// The documents a contract reads, joined into one YAML text, with the
/// template each line came from.
struct Selected {
    text: String,
    /// Per line of `text`: the template's path in the package.
    sources: Vec<String>,
}

impl Selected {
    /// The documents of `stdout`; only those of `file` (a package path)
    /// when given.
    fn new(stdout: &str, chart: &str, file: Option<&str>) -> Selected {
        let mut text = String::new();
        let mut sources = Vec::new();
        for doc in output::documents(stdout) {
            let path = in_chart(chart, doc.path_in_chart());
            if file.is_some_and(|f| f != path) {
                continue;
            }
            text.push_str("---\n");
            text.push_str(&doc.text);
            sources.extend(std::iter::repeat_n(path, doc.text.lines().count() + 1));
        }
        Selected { text, sources }
    }

    /// Where a line of the joined text came from: its template and the
    /// line there that reads the same (trimmed), else the template's first.
    fn locate(&self, input: &Input<'_>, line: usize) -> Result<(String, usize)> {
        let Some(source) = self.sources.get(line.saturating_sub(1)) else {
            return Ok(("vendor.toml".to_owned(), 1));
        };
        let rendered = self
            .text
            .lines()
            .nth(line.saturating_sub(1))
            .unwrap_or("")
            .trim();
        let at = match input.text(source)? {
            Some(template) if !rendered.is_empty() => template
                .lines()
                .position(|l| l.trim() == rendered)
                .map_or(1, |i| i + 1),
            _ => 1,
        };
        Ok((source.clone(), at))
    }
}
