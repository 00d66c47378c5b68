//! `contract:<name>`: the structural assertions vendor.toml declares on
//! rendered files (`[[contract]]`), decided by parsing.
//!
//! The rendered file is parsed as YAML with Helm template lines tolerated and
//! every conditional branch read ([`manifest::Manifest`]); the contract
//! selects documents by kind and name and asserts a field (or a key of JSON
//! held in one) or a path on every container and init container
//! ([`manifest::Contract`]). A grep cannot tell the effective
//! `multusMasterCNI` from the same text nested in another key, nor notice
//! that one container of several lost its memory limit.

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

### Why
These are the properties a patch exists for. A new upstream release can undo
one while every patch still applies: a key moves inside another one, a new
init container arrives without a memory limit and puts the whole pod back in
the Talos OOM handler's victim set.

### Example
```text
contract:memory-limits
  templates/multus-daemonset-thick.yml:225: error: DaemonSet/cozy-multus: init container `install-multus-binary` has no `resources.limits.memory` (fix: restore it in the patch that targets `templates/multus-daemonset-thick.yml` (`revendor update --adopt-edits` folds an edit into it); the contract is at vendor.toml:57)
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
    for c in &input.config.contracts {
        let id = CONTRACT.member(&c.name);
        let Some(parsed) = input.manifest(&c.file)? else {
            // A missing rendered file is render-drift's to report.
            if input.config.vendor_rendering(&c.file).is_some() {
                continue;
            }
            sink.push(
                Finding::error(
                    &id,
                    &c.file,
                    1,
                    format!(
                        "`{}` is missing, so contract `{}` cannot hold",
                        c.file, c.name
                    ),
                )
                .fix("run `revendor render`"),
            );
            continue;
        };
        let manifest = match parsed.as_ref() {
            Ok(m) => m,
            Err(e) => {
                sink.push(
                    Finding::error(
                        &id,
                        &c.file,
                        e.line(),
                        format!("cannot read `{}`: {e}", c.file),
                    )
                    .fix("fix the YAML so it parses"),
                );
                continue;
            }
        };
        for v in assertion(c).evaluate(manifest) {
            sink.push(Finding::error(&id, &c.file, v.line, v.message).fix(format!(
                "restore it in the patch that targets `{}` (`revendor update --adopt-edits` folds an edit into it); the contract is at vendor.toml:{}",
                c.file, c.line
            )));
        }
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
