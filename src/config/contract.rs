//! `[[contract]]` tables → [`Contract`]s: which keys go together.
//!
//! A contract reads a rendered file (`file`), or what Helm renders from a
//! chart (`helm = { chart, values }`, `file` then narrowing it to one
//! template). It selects documents (`select`) and asserts one of `field`
//! (with `equals`, and `json` inside it) and `every-container`; or, with
//! `render-fails = true`, it asserts instead that Helm refuses every listed
//! values file, and selects nothing.

use std::collections::HashSet;

use toml::Spanned;

use super::context::Ctx;
use super::raw::RawContract;
use super::{ConfigError, Contract, HelmRender};

/// Every contract of vendor.toml, validated, in file order.
pub(super) fn validate(
    cx: &Ctx<'_>,
    raw: &[Spanned<RawContract>],
) -> Result<Vec<Contract>, ConfigError> {
    let mut names = HashSet::new();
    let mut contracts = Vec::new();
    for c in raw {
        let r = c.get_ref();
        let name = r.name.get_ref();
        if !names.insert(name.clone()) {
            return Err(cx.err(&r.name, format!("duplicate contract name `{name}`")));
        }
        let helm = helm(cx, c)?;
        let file = match &r.file {
            Some(file) => Some(cx.inside("file", file)?),
            None if helm.is_none() => {
                return Err(cx
                    .err(c, format!("contract `{name}` has neither `file` nor `helm`"))
                    .hint("name the rendered file it reads (`file`), or the chart Helm renders (`helm = { chart = \".\" }`)"));
            }
            None => None,
        };
        let contract = if helm.as_ref().is_some_and(|h| h.render_fails) {
            refusal(cx, c, file, helm)?
        } else {
            assertion(cx, c, file, helm)?
        };
        contracts.push(contract);
    }
    Ok(contracts)
}

/// `helm = { chart, values }` and `render-fails`, checked together.
fn helm(cx: &Ctx<'_>, c: &Spanned<RawContract>) -> Result<Option<HelmRender>, ConfigError> {
    let r = c.get_ref();
    let name = r.name.get_ref();
    let render_fails = r.render_fails.as_ref().is_some_and(|f| *f.get_ref());
    let Some(helm) = &r.helm else {
        if let Some(flag) = r.render_fails.as_ref().filter(|_| render_fails) {
            return Err(cx
                .err(flag, format!("contract `{name}` has `render-fails` but no `helm`"))
                .hint("`render-fails` asserts that Helm refuses values files: add `helm = { chart = \".\", values = [\"…\"] }`"));
        }
        return Ok(None);
    };
    let h = helm.get_ref();
    let values = h
        .values
        .iter()
        .map(|v| cx.inside("values", v))
        .collect::<Result<Vec<_>, _>>()?;
    if render_fails && values.is_empty() {
        return Err(cx
            .err(helm, format!("contract `{name}` has `render-fails` but no values file"))
            .hint("list the values Helm must refuse: `helm = { chart = \".\", values = [\"tests/values/….yaml\"] }`"));
    }
    Ok(Some(HelmRender {
        chart: cx.inside("chart", &h.chart)?,
        values,
        render_fails,
    }))
}

/// A `render-fails` contract: nothing to select or assert.
fn refusal(
    cx: &Ctx<'_>,
    c: &Spanned<RawContract>,
    file: Option<String>,
    helm: Option<HelmRender>,
) -> Result<Contract, ConfigError> {
    let r = c.get_ref();
    let extra = [
        ("file", file.is_some()),
        ("select", r.select.is_some()),
        ("field", r.field.is_some()),
        ("json", r.json.is_some()),
        ("equals", r.equals.is_some()),
        ("every-container", r.every_container.is_some()),
    ];
    if let Some((key, _)) = extra.iter().find(|(_, set)| *set) {
        return Err(cx
            .err(
                c,
                format!(
                    "contract `{}` has `render-fails` and `{key}`: a render Helm refuses has no documents",
                    r.name.get_ref()
                ),
            )
            .hint("drop it, or put the assertion in a contract of its own"));
    }
    Ok(Contract {
        name: r.name.get_ref().clone(),
        file: None,
        helm,
        kind: String::new(),
        object_name: None,
        field: Vec::new(),
        json: Vec::new(),
        equals: None,
        every_container: Vec::new(),
        line: cx.line(c),
    })
}

/// A contract that selects documents and asserts a field or a path on
/// every container.
fn assertion(
    cx: &Ctx<'_>,
    c: &Spanned<RawContract>,
    file: Option<String>,
    helm: Option<HelmRender>,
) -> Result<Contract, ConfigError> {
    let r = c.get_ref();
    let name = r.name.get_ref();
    let Some(select) = &r.select else {
        return Err(cx
            .err(c, format!("contract `{name}` has no `select`"))
            .hint("say which documents it reads: `select = { kind = \"DaemonSet\" }`"));
    };
    let field = r.field.clone().unwrap_or_default();
    let every = r.every_container.clone().unwrap_or_default();
    if field.is_empty() == every.is_empty() {
        return Err(cx.err(
            c,
            format!("contract `{name}` needs exactly one of `field` and `every-container`"),
        ));
    }
    if !field.is_empty() && r.equals.is_none() {
        return Err(cx.err(c, format!("contract `{name}` has `field` but no `equals`")));
    }
    Ok(Contract {
        name: name.clone(),
        file,
        helm,
        kind: select.get_ref().kind.clone(),
        object_name: select.get_ref().name.clone(),
        field,
        json: r.json.clone().unwrap_or_default(),
        equals: r.equals.clone(),
        every_container: every,
        line: cx.line(c),
    })
}
