//! `contract:<name>`: the structural assertions vendor.toml declares on
//! rendered files (`[[contract]]`), decided by parsing.
//!
//! A contract with `helm` holds on what `helm template` renders instead, for
//! each values set (`helm.rs`); the others read their file, as here.
//!
//! The rendered file is parsed as YAML with Helm template lines tolerated and
//! every conditional branch read ([`manifest::Manifest`]); the contract
//! selects documents by kind and name and asserts a field (or a key of JSON
//! held in one) or a path on every container and init container
//! ([`manifest::Contract`]). A grep cannot tell the effective
//! `multusMasterCNI` from the same text nested in another key, nor notice
//! that one container of several lost its memory limit.

mod helm;

use super::{Check, Finding, Id, Input, Sink};
use crate::config;
use crate::error::Result;
use crate::manifest;

/// `contract:<name>`.
pub const CONTRACT: Id = Id {
    name: "contract:<name>",
    doc: "\
### What
A `[[contract]]` of vendor.toml does not hold on its rendered file: the
selected object is missing, a field (or a key of the JSON it holds) is absent
or has another value, or a container or init container lacks the path every
container must have. Each template branch counts.

A contract with `helm` holds on what `helm template` renders instead, once
per values set (the chart's values.yaml, then each listed file on top); its
findings name the values set. With `render-fails = true` it holds when Helm
refuses each listed values file, and says what Helm rendered when it does not.
Without a helm binary (`helm` on PATH, or `REVENDOR_HELM`) such a contract
is a finding, never a pass.

### Why
These are the properties a patch exists for. A new upstream release can undo
one while every patch still applies: a key moves inside another one, a new
init container arrives without a memory limit and puts the whole pod back in
the Talos OOM handler's victim set.

### Example
```text
contract:memory-limits
  templates/multus-daemonset-thick.yml:200: error: with `tests/values/tight.yaml`: DaemonSet/cozy-multus: init container `install-multus-binary` has no `resources.limits.memory` (fix: make the chart render it with `tests/values/tight.yaml` (its template, or the values); the contract is at vendor.toml:60)
contract:memory-required
  tests/values/null-memory-limit.yaml:1: error: Helm renders the chart with `tests/values/null-memory-limit.yaml` (6 documents: CustomResourceDefinition/network-attachment-definitions.k8s.cni.cncf.io, ClusterRole/multus, ClusterRoleBinding/multus, ServiceAccount/multus, 2 more), and contract `memory-required` says it must refuse these values (fix: make the chart refuse them (`fail` or `required` in the template), or drop `tests/values/null-memory-limit.yaml` from the contract (vendor.toml:66))
```
",
};

pub(super) const CHECK: Check = Check {
    name: "contract",
    ids: &[CONTRACT],
    online_only: false,
    run: check,
};

fn check(input: &Input<'_>, sink: &mut Sink) -> Result<()> {
    let mut rendered = Vec::new();
    for c in &input.config.contracts {
        match (&c.helm, &c.file) {
            (Some(render), _) => rendered.push((c, render)),
            (None, Some(file)) => on_file(input, c, file, sink)?,
            // vendor.toml's validation gives every contract one or the other.
            (None, None) => {}
        }
    }
    helm::check(input, &rendered, sink)
}

/// A contract on a rendered file of the package, read as it is.
fn on_file(input: &Input<'_>, c: &config::Contract, file: &str, sink: &mut Sink) -> Result<()> {
    let id = CONTRACT.member(&c.name);
    let Some(parsed) = input.manifest(file)? else {
        // A missing rendered file is render-drift's to report.
        if input.config.vendor_rendering(file).is_none() {
            sink.push(
                Finding::error(
                    &id,
                    file,
                    1,
                    format!("`{file}` is missing, so contract `{}` cannot hold", c.name),
                )
                .fix("run `revendor render`"),
            );
        }
        return Ok(());
    };
    let manifest = match parsed.as_ref() {
        Ok(m) => m,
        Err(e) => {
            sink.push(
                Finding::error(&id, file, e.line(), format!("cannot read `{file}`: {e}"))
                    .fix("fix the YAML so it parses"),
            );
            return Ok(());
        }
    };
    for v in assertion(c).evaluate(manifest) {
        sink.push(Finding::error(&id, file, v.line, v.message).fix(format!(
            "restore it in the patch that targets `{file}` (`revendor update --adopt-edits` folds an edit into it); the contract is at vendor.toml:{}",
            c.line
        )));
    }
    Ok(())
}

/// vendor.toml's contract as the manifest module evaluates it.
fn assertion(c: &config::Contract) -> manifest::Contract {
    manifest::Contract {
        name: c.name.clone(),
        select: manifest::Select {
            kind: c.kind.clone(),
            name: c.object_name.clone(),
        },
        field: c.field.clone(),
        json: (!c.json.is_empty()).then(|| c.json.clone()),
        equals: c.equals.clone(),
        every_container: (!c.every_container.is_empty()).then(|| c.every_container.clone()),
    }
}
