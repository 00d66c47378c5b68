//! Containers and their images, found by structure rather than by text.
//!
//! A container is an item of `containers` or `initContainers` in a pod spec;
//! the pod spec's place depends on the workload kind. Anything else that says
//! `image:` (a line inside a `sh -c` script, a comment, an annotation) is not
//! a container's image and is never reported.

use std::ops::Range;

use super::{Document, Found, Node};

/// Where a kind keeps its pod spec.
fn pod_spec_path(kind: &str) -> Option<&'static [&'static str]> {
    match kind {
        "Pod" => Some(&["spec"]),
        "Deployment"
        | "DaemonSet"
        | "StatefulSet"
        | "ReplicaSet"
        | "ReplicationController"
        | "Job" => Some(&["spec", "template", "spec"]),
        "CronJob" => Some(&["spec", "jobTemplate", "spec", "template", "spec"]),
        _ => None,
    }
}

/// Which list of the pod spec a container comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContainerKind {
    /// `containers`
    Container,
    /// `initContainers`
    Init,
}

impl ContainerKind {
    /// The pod spec key holding this kind of container.
    pub fn key(self) -> &'static str {
        match self {
            ContainerKind::Container => "containers",
            ContainerKind::Init => "initContainers",
        }
    }
}

/// One container of a workload's pod template.
#[derive(Debug, Clone, Copy)]
pub struct Container<'a> {
    /// `containers` or `initContainers`.
    pub kind: ContainerKind,
    /// The container's `name`, if it has a string one.
    pub name: Option<&'a str>,
    /// The line where the container's mapping starts (its `- name:` line,
    /// usually).
    pub line: usize,
    /// The container's mapping.
    pub node: &'a Node,
}

impl Container<'_> {
    /// The container's name for messages: its `name`, or `at line <n>`.
    pub fn label(&self) -> String {
        self.name
            .map_or_else(|| format!("at line {}", self.line), str::to_owned)
    }

    /// True when some branch lacks `path`: a key along it is absent, or any
    /// of its duplicates (one per template branch) leads to nothing, or the
    /// value is null or an empty mapping/sequence.
    pub fn lacks<S: AsRef<str>>(&self, path: &[S]) -> bool {
        lacks(self.node, path)
    }
}

fn lacks<S: AsRef<str>>(node: &Node, path: &[S]) -> bool {
    let Some((key, rest)) = path.split_first() else {
        return node.is_null()
            || (node.as_str().is_none() && node.entries().is_empty() && node.items().is_empty());
    };
    let mut values = node
        .entries()
        .iter()
        .filter(|(k, _)| k.as_str() == Some(key.as_ref()))
        .map(|(_, v)| v)
        .peekable();
    values.peek().is_none() || values.any(|v| lacks(v, rest))
}

/// An `image:` field of a container, ready to be compared or rewritten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageField {
    /// 0-based index of the document in the file.
    pub document: usize,
    /// The container's name, if it has one.
    pub container: Option<String>,
    /// `containers` or `initContainers`.
    pub kind: ContainerKind,
    /// 1-based line of the `image:` key.
    pub line: usize,
    /// The image reference as written (template actions included).
    pub value: String,
    /// Byte range of the value within its line, quotes excluded; `None` when
    /// the value is not written verbatim on one line (escapes, a block scalar),
    /// so it cannot be rewritten in place.
    pub span: Option<Range<usize>>,
}

impl Document {
    /// Every container and init container of this document's pod template,
    /// in source order per list (containers first); empty for kinds without a
    /// pod template. Every template branch counts.
    pub fn containers(&self) -> Vec<Container<'_>> {
        let Some(path) = self.kind().and_then(pod_spec_path) else {
            return Vec::new();
        };
        let specs: Vec<Found<'_>> = self.root.lookup(path);
        let mut out = Vec::new();
        for kind in [ContainerKind::Container, ContainerKind::Init] {
            for spec in &specs {
                for list in spec.node.lookup(&[kind.key()]) {
                    out.extend(list.node.items().iter().map(|item| Container {
                        kind,
                        name: item.get("name").and_then(Node::as_str),
                        line: item.line,
                        node: item,
                    }));
                }
            }
        }
        out
    }

    /// Containers that lack `path` (see [`Container::lacks`]).
    pub fn containers_lacking<S: AsRef<str>>(&self, path: &[S]) -> Vec<Container<'_>> {
        self.containers()
            .into_iter()
            .filter(|c| c.lacks(path))
            .collect()
    }

    /// Every string `image:` of this document's containers.
    pub fn images(&self) -> Vec<ImageField> {
        self.containers()
            .iter()
            .flat_map(|c| {
                c.node.lookup(&["image"]).into_iter().filter_map(|f| {
                    Some(ImageField {
                        document: self.index,
                        container: c.name.map(str::to_owned),
                        kind: c.kind,
                        line: f.line,
                        value: f.node.as_str()?.to_owned(),
                        span: self.scalar_span(f.node),
                    })
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::Manifest;
    use super::*;

    const DS: &str = "\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: ds
spec:
  template:
    spec:
      containers:
        - name: main
          image: \"registry.example/main:v1\"
          resources:
            limits:
              memory: 1Gi
      initContainers:
        - name: first
          image: registry.example/init:v1@sha256:abc
          command:
            - sh
            - -c
            - |
              image: not-a-container-image
              echo image: neither
          resources:
            limits: {}
{{- if .Values.extra }}
        - name: extra
          image: {{ .Values.extraImage }}
          resources:
            limits:
              memory:
{{- end }}
---
kind: ConfigMap
metadata:
  name: cm
data:
  image: not-a-container
";

    #[test]
    fn enumerates_containers_of_every_branch() {
        let m = Manifest::parse(DS).unwrap();
        let doc = &m.documents()[0];
        let got: Vec<_> = doc
            .containers()
            .iter()
            .map(|c| (c.kind, c.label(), c.line))
            .collect();
        assert_eq!(
            got,
            [
                (ContainerKind::Container, "main".to_owned(), 9),
                (ContainerKind::Init, "first".to_owned(), 15),
                (ContainerKind::Init, "extra".to_owned(), 26),
            ]
        );
        assert!(m.documents()[1].containers().is_empty());
    }

    #[test]
    fn reports_containers_lacking_a_path() {
        let m = Manifest::parse(DS).unwrap();
        let lacking: Vec<_> = m.documents()[0]
            .containers_lacking(&["resources", "limits", "memory"])
            .iter()
            .map(Container::label)
            .collect();
        assert_eq!(lacking, ["first", "extra"]);
    }

    #[test]
    fn a_path_missing_in_one_branch_is_lacking() {
        let text = "kind: Pod\nspec:\n  containers:\n    - name: c\n      resources:\n        limits: {memory: 1Gi}\n{{- if .x }}\n      resources:\n        limits: {cpu: 1}\n{{- end }}\n";
        let m = Manifest::parse(text).unwrap();
        let doc = &m.documents()[0];
        assert_eq!(
            doc.containers_lacking(&["resources", "limits", "memory"])
                .len(),
            1
        );
        assert!(doc.containers_lacking(&["resources", "limits"]).is_empty());
    }

    #[test]
    fn images_are_container_fields_only_with_exact_spans() {
        let m = Manifest::parse(DS).unwrap();
        let images = m.images();
        let got: Vec<_> = images
            .iter()
            .map(|i| (i.line, i.value.as_str(), i.container.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                (10, "registry.example/main:v1", Some("main")),
                (16, "registry.example/init:v1@sha256:abc", Some("first")),
                (27, "{{ .Values.extraImage }}", Some("extra")),
            ]
        );
        for image in &images {
            let line = DS.lines().nth(image.line - 1).unwrap();
            let span = image.span.clone().unwrap();
            assert_eq!(&line[span], image.value);
        }
    }

    #[test]
    fn cronjob_and_pod_templates_are_found() {
        let text = "kind: CronJob\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers:\n            - name: c\n              image: x\n---\nkind: Pod\nspec:\n  containers:\n    - image: y\n";
        let m = Manifest::parse(text).unwrap();
        let got: Vec<_> = m.images().iter().map(|i| (i.document, i.line)).collect();
        assert_eq!(got, [(0, 9), (1, 14)]);
        assert_eq!(m.documents()[1].containers()[0].label(), "at line 14");
    }
}
