//! Structural assertions on a manifest: vendor.toml's `[[contract]]`.
//!
//! A contract selects documents by kind (and name), then asserts one or both
//! of: the value at `field` (or at a JSON key path inside it) exists and,
//! when `equals` is given, equals it; every container and init container has
//! a non-empty value at `every_container`. Each failure is a [`Violation`]
//! naming a line, so `check` can report `contract:<name>` at `file:line`.
//! Every template branch counts: a field set in two branches must hold in both.

use super::{Document, Found, Manifest, display_path};

/// Which documents a contract applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Select {
    /// The document `kind`, e.g. `ConfigMap`.
    pub kind: String,
    /// The `metadata.name`, when one object of the kind is meant.
    pub name: Option<String>,
}

/// One declared assertion on a manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contract {
    /// The contract's name, the `<name>` of `contract:<name>`.
    pub name: String,
    /// The documents it applies to; selecting none is a violation.
    pub select: Select,
    /// Key path of the field to read; empty for the document itself.
    pub field: Vec<String>,
    /// When set, the field holds JSON and this key path of it is read.
    pub json: Option<Vec<String>>,
    /// When set, the value read must equal this text. A JSON string compares
    /// by its content, any other JSON value by its compact serialization.
    pub equals: Option<String>,
    /// When set, every container and init container must have a non-empty
    /// value at this key path (e.g. `resources.limits.memory`).
    pub every_container: Option<Vec<String>>,
}

/// One way a manifest breaks a contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// 1-based line the finding should point at; 1 when no selected document
    /// exists at all.
    pub line: usize,
    /// What is wrong, naming the object, field and values involved.
    pub message: String,
}

impl Contract {
    /// Every violation of this contract in `manifest`; empty when it holds.
    pub fn evaluate(&self, manifest: &Manifest) -> Vec<Violation> {
        let kind = self.select.kind.as_str();
        let docs: Vec<&Document> = manifest.select(kind, self.select.name.as_deref()).collect();
        if docs.is_empty() {
            let message = match &self.select.name {
                Some(name) => format!("no {kind} named `{name}`"),
                None => format!("no {kind} in the file"),
            };
            return vec![Violation { line: 1, message }];
        }
        let mut out = Vec::new();
        for doc in docs {
            self.check_field(doc, &mut out);
            if let Some(path) = &self.every_container {
                check_containers(doc, path, &mut out);
            }
        }
        out
    }

    fn needs_field(&self) -> bool {
        !self.field.is_empty() || self.json.is_some() || self.equals.is_some()
    }

    fn check_field(&self, doc: &Document, out: &mut Vec<Violation>) {
        if !self.needs_field() {
            return;
        }
        let object = describe(doc);
        let path = display_path(&self.field);
        let found = doc.field(&self.field);
        if found.is_empty() {
            out.push(Violation {
                line: doc.line(),
                message: format!("{object} has no field `{path}`"),
            });
            return;
        }
        for f in &found {
            match &self.json {
                Some(key) => self.check_json(doc, f, &path, key, &object, out),
                None => self.check_text(f, &path, &object, out),
            }
        }
    }

    fn check_json(
        &self,
        doc: &Document,
        found: &Found<'_>,
        path: &str,
        key: &[String],
        object: &str,
        out: &mut Vec<Violation>,
    ) {
        let field = match doc.json_at(found, path, key) {
            Ok(field) => field,
            Err(err) => {
                out.push(Violation {
                    line: err.line(),
                    message: format!("{object}: {err}"),
                });
                return;
            }
        };
        let Some(expected) = &self.equals else { return };
        let actual = match &field.value {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if &actual != expected {
            out.push(Violation {
                line: field.line,
                message: format!(
                    "{object}: `{}` in field `{path}` is `{actual}`, expected `{expected}`",
                    display_path(key)
                ),
            });
        }
    }

    fn check_text(&self, found: &Found<'_>, path: &str, object: &str, out: &mut Vec<Violation>) {
        let Some(expected) = &self.equals else { return };
        match found.node.as_str() {
            Some(actual) if actual == expected => {}
            Some(actual) => out.push(Violation {
                line: found.line,
                message: format!("{object}: field `{path}` is `{actual}`, expected `{expected}`"),
            }),
            None => out.push(Violation {
                line: found.line,
                message: format!("{object}: field `{path}` is not a string"),
            }),
        }
    }
}

fn check_containers(doc: &Document, path: &[String], out: &mut Vec<Violation>) {
    let object = describe(doc);
    let containers = doc.containers();
    if containers.is_empty() {
        out.push(Violation {
            line: doc.line(),
            message: format!(
                "{object} has no containers to check `{}` on",
                display_path(path)
            ),
        });
    }
    for c in containers.iter().filter(|c| c.lacks(path)) {
        out.push(Violation {
            line: c.line,
            message: format!(
                "{object}: {} `{}` has no `{}`",
                match c.kind {
                    super::ContainerKind::Container => "container",
                    super::ContainerKind::Init => "init container",
                },
                c.label(),
                display_path(path)
            ),
        });
    }
}

/// `Kind/name` for messages.
fn describe(doc: &Document) -> String {
    format!(
        "{}/{}",
        doc.kind().unwrap_or("?"),
        doc.name().unwrap_or("(unnamed)")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "\
kind: ConfigMap
metadata:
  name: cfg
data:
  conf.json: |
    {
        \"wrap\": {\"master\": \"05-cilium.conflist\"},
        \"master\": \"10-other.conflist\"
    }
  mode: strict
---
kind: DaemonSet
metadata:
  name: ds
spec:
  template:
    spec:
      containers:
        - name: main
          resources:
            limits:
              memory: 1Gi
      initContainers:
        - name: init
          resources:
            limits:
              cpu: 10m
";

    fn contract(kind: &str, name: Option<&str>) -> Contract {
        Contract {
            name: "c".to_owned(),
            select: Select {
                kind: kind.to_owned(),
                name: name.map(str::to_owned),
            },
            field: Vec::new(),
            json: None,
            equals: None,
            every_container: None,
        }
    }

    fn strings(path: &[&str]) -> Vec<String> {
        path.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn json_equals_reads_the_top_level_key_at_its_line() {
        let m = Manifest::parse(FILE).unwrap();
        let mut c = contract("ConfigMap", Some("cfg"));
        c.field = strings(&["data", "conf.json"]);
        c.json = Some(strings(&["master"]));
        c.equals = Some("05-cilium.conflist".to_owned());
        let v = c.evaluate(&m);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].line, 8);
        assert_eq!(
            v[0].message,
            "ConfigMap/cfg: `master` in field `data.\"conf.json\"` is `10-other.conflist`, expected `05-cilium.conflist`"
        );
        c.json = Some(strings(&["wrap", "master"]));
        assert_eq!(c.evaluate(&m), []);
    }

    #[test]
    fn missing_json_key_and_field_are_violations() {
        let m = Manifest::parse(FILE).unwrap();
        let mut c = contract("ConfigMap", None);
        c.field = strings(&["data", "conf.json"]);
        c.json = Some(strings(&["absent"]));
        let v = c.evaluate(&m);
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].line, 5);
        c.field = strings(&["data", "nope"]);
        let v = c.evaluate(&m);
        assert_eq!(v[0].line, 1);
        assert!(v[0].message.contains("has no field `data.nope`"), "{v:?}");
    }

    #[test]
    fn plain_field_equals() {
        let m = Manifest::parse(FILE).unwrap();
        let mut c = contract("ConfigMap", Some("cfg"));
        c.field = strings(&["data", "mode"]);
        c.equals = Some("strict".to_owned());
        assert_eq!(c.evaluate(&m), []);
        c.equals = Some("lax".to_owned());
        assert_eq!(c.evaluate(&m)[0].line, 10);
    }

    #[test]
    fn every_container_names_the_container_and_its_line() {
        let m = Manifest::parse(FILE).unwrap();
        let mut c = contract("DaemonSet", None);
        c.every_container = Some(strings(&["resources", "limits", "memory"]));
        assert_eq!(
            c.evaluate(&m),
            [Violation {
                line: 24,
                message: "DaemonSet/ds: init container `init` has no `resources.limits.memory`"
                    .to_owned()
            }]
        );
    }

    #[test]
    fn selecting_nothing_is_a_violation() {
        let m = Manifest::parse(FILE).unwrap();
        let v = contract("ConfigMap", Some("gone")).evaluate(&m);
        assert_eq!(v[0].message, "no ConfigMap named `gone`");
        let mut c = contract("ConfigMap", None);
        c.every_container = Some(strings(&["image"]));
        let v = c.evaluate(&m);
        assert_eq!(v.len(), 1);
        assert_eq!(
            (v[0].line, v[0].message.as_str()),
            (1, "ConfigMap/cfg has no containers to check `image` on")
        );
    }
}
