//! A large CustomResourceDefinition as controller-gen writes one: a deep `openAPIV3Schema` of
//! nested objects, arrays and leaves, each with a description, so most lines (`type: string`,
//! `properties:`, `description: |-`) repeat thousands of times and a hunk's context is rarely
//! unique. Three versions of it: the upstream release a patch was made against, the same file
//! with the downstream edits a chart package makes to CRDs (defaults, a preserved-unknown-fields
//! marker), and the next upstream release (new optional fields, reworded descriptions).
//!
//! Deterministic: the same `lines` gives the same bytes.

/// The three versions of one generated CRD.
pub struct Crd {
    /// The upstream release the downstream edits were made against.
    pub base: Vec<u8>,
    /// `base` with the downstream edits.
    pub ours: Vec<u8>,
    /// The next upstream release.
    pub theirs: Vec<u8>,
}

/// Which version of the file a [`Writer`] writes.
#[derive(Clone, Copy, PartialEq)]
enum Version {
    Base,
    Ours,
    Theirs,
}

/// Field names as Kubernetes APIs spell them; nested objects reuse them, as real schemas do.
const NAMES: [&str; 24] = [
    "affinity",
    "annotations",
    "args",
    "command",
    "config",
    "containers",
    "env",
    "image",
    "key",
    "labels",
    "limits",
    "name",
    "nodeSelector",
    "operator",
    "path",
    "port",
    "requests",
    "resources",
    "secretRef",
    "selector",
    "storage",
    "tolerations",
    "value",
    "volumes",
];

/// Sentences descriptions are made of.
const WORDS: [&str; 8] = [
    "Specifies the desired state of the component managed by this resource.",
    "If not set, the operator chooses a default suitable for most clusters.",
    "This field is immutable once the object has been created.",
    "Must be a valid DNS-1123 label: lowercase alphanumerics and '-'.",
    "Deprecated: use the field of the same name in the parent object.",
    "More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/",
    "The value is merged with the defaults by strategic merge patch.",
    "When empty, every node in the cluster is eligible.",
];

/// One version of the file being written, with the counters that decide what each version
/// adds or changes (the same counters in every version, so the versions line up).
struct Writer {
    version: Version,
    out: String,
    leaves: usize,
    objects: usize,
    seed: u64,
}

impl Crd {
    /// A CRD of at least `lines` lines in each version.
    pub fn new(lines: usize) -> Crd {
        let write = |version| Writer::file(version, lines).into_bytes();
        Crd {
            base: write(Version::Base),
            ours: write(Version::Ours),
            theirs: write(Version::Theirs),
        }
    }
}

impl Writer {
    /// The whole file: header, then top-level spec fields until `lines` is reached, then status.
    fn file(version: Version, lines: usize) -> String {
        let mut w = Writer {
            version,
            out: String::new(),
            leaves: 0,
            objects: 0,
            seed: 0x2545_f491_4f6c_dd1d,
        };
        w.out.push_str(HEADER);
        w.line(10, "spec:");
        w.description(12, 2);
        w.line(12, "properties:");
        let mut field = 0;
        while w.out.lines().count() < lines {
            let name = format!("{}{field}", NAMES[field % NAMES.len()]);
            w.object(14, &name, 4);
            field += 1;
        }
        w.line(12, "type: object");
        w.object(10, "status", 2);
        w.out.push_str(FOOTER);
        w.out
    }

    fn line(&mut self, indent: usize, text: &str) {
        self.out.extend(std::iter::repeat_n(' ', indent));
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn next(&mut self) -> usize {
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        (self.seed >> 33) as usize
    }

    /// A `description: |-` block of `sentences` sentences.
    fn description(&mut self, indent: usize, sentences: usize) {
        self.line(indent, "description: |-");
        for s in 0..sentences {
            let text = WORDS[(self.next() + s) % WORDS.len()];
            self.line(indent + 2, text);
        }
    }

    /// An object property: description, nested properties down to `depth`, `type: object`.
    fn object(&mut self, indent: usize, name: &str, depth: usize) {
        self.objects += 1;
        let object = self.objects;
        self.line(indent, &format!("{name}:"));
        self.description(indent + 2, 2);
        let array = object.is_multiple_of(5);
        let inner = if array { indent + 4 } else { indent + 2 };
        if array {
            self.line(indent + 2, "items:");
        }
        self.line(inner, "properties:");
        let children = 3 + self.next() % 4;
        let first = self.next();
        for c in 0..children {
            // 5 is prime to the 24 names: no key twice in one object.
            let child = NAMES[(first + 5 * c) % NAMES.len()];
            if depth > 0 && c % 2 == 0 {
                self.object(inner + 2, child, depth - 1);
            } else {
                self.leaf(inner + 2, child);
            }
        }
        if self.version == Version::Theirs && object.is_multiple_of(25) {
            self.line(inner + 2, "revisionHistoryLimit:");
            self.line(inner + 4, "description: Added upstream in this release.");
            self.line(inner + 4, "format: int32");
            self.line(inner + 4, "type: integer");
        }
        self.line(inner, "type: object");
        if self.version == Version::Ours && object.is_multiple_of(60) {
            self.line(inner, "x-kubernetes-preserve-unknown-fields: true");
        }
        if array {
            self.line(indent + 2, "type: array");
        }
    }

    /// A scalar property: description, type, sometimes a format or an enum.
    fn leaf(&mut self, indent: usize, name: &str) {
        self.leaves += 1;
        let leaf = self.leaves;
        self.line(indent, &format!("{name}:"));
        let text = WORDS[self.next() % WORDS.len()];
        if self.version == Version::Theirs && leaf % 30 == 7 {
            let text = format!("description: Reworded upstream (field {leaf}).");
            self.line(indent + 2, &text);
        } else if text.contains(": ") {
            self.line(indent + 2, &format!("description: \"{text}\""));
        } else {
            self.line(indent + 2, &format!("description: {text}"));
        }
        if self.version == Version::Ours && leaf.is_multiple_of(40) {
            self.line(indent + 2, "default: cozystack");
        }
        match self.next() % 4 {
            0 => {
                self.line(indent + 2, "format: int32");
                self.line(indent + 2, "type: integer");
            }
            1 => {
                self.line(indent + 2, "enum:");
                self.line(indent + 2, "- Always");
                self.line(indent + 2, "- IfNotPresent");
                self.line(indent + 2, "type: string");
            }
            2 => self.line(indent + 2, "type: boolean"),
            _ => self.line(indent + 2, "type: string"),
        }
    }
}

const HEADER: &str = "---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  annotations:
    controller-gen.kubebuilder.io/version: v0.16.1
  name: widgets.example.io
spec:
  group: example.io
  names:
    kind: Widget
    listKind: WidgetList
    plural: widgets
    singular: widget
  scope: Namespaced
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        description: Widget is the Schema for the widgets API.
        properties:
          apiVersion:
            description: APIVersion defines the versioned schema of this representation.
            type: string
          kind:
            description: Kind is a string value representing the REST resource.
            type: string
          metadata:
            type: object
";

const FOOTER: &str = "        type: object
    served: true
    storage: true
    subresources:
      status: {}
";
