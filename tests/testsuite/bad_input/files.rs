//! Dockerfiles (markers, ARGs, continuations) and YAML that does not parse.

use super::{Case, DOCKERFILE, LABELLED, PATCH, catalog};

pub(super) const CASES: &[Case] = &[
    Case {
        name: "Dockerfile: two markers of one key",
        setup: |fx| {
            fx.edit(
                DOCKERFILE,
                "RUN go build",
                "# cni-checked-against: v1.2.3\nRUN go build",
            )
        },
        args: &["check"],
        code: 1,
        words: &["image/Dockerfile:18", "appears 2 times"],
    },
    Case {
        name: "Dockerfile: an empty marker",
        setup: |fx| {
            fx.edit(
                DOCKERFILE,
                "# cni-checked-against: v1.2.3",
                "# cni-checked-against:",
            )
        },
        args: &["check"],
        code: 1,
        words: &["image/Dockerfile:3", "no value"],
    },
    Case {
        name: "Dockerfile: no ARG VERSION",
        setup: |fx| fx.edit(DOCKERFILE, "ARG VERSION=v1.0.0\n", ""),
        args: &["update"],
        code: 2,
        words: &[
            "vendor.toml:21",
            "image/Dockerfile",
            "no `ARG VERSION=` line",
        ],
    },
    Case {
        // BuildKit ends the instruction at the end of the file; so does the reader.
        name: "Dockerfile: a continuation left open at the end of the file",
        setup: |fx| fx.edit(DOCKERFILE, "RUN go build ./...\n", "RUN go build \\\n"),
        args: &["check"],
        code: 0,
        words: &[],
    },
    Case {
        name: "Dockerfile: an empty ARG the marker vouches for",
        setup: |fx| {
            fx.edit(
                DOCKERFILE,
                "ARG CNI_PLUGINS_VERSION=v1.6.2",
                "ARG CNI_PLUGINS_VERSION=",
            )
        },
        args: &["check"],
        code: 1,
        words: &["image/Dockerfile:4", "`ARG CNI_PLUGINS_VERSION=` is empty"],
    },
    Case {
        name: "YAML: a rendered file that is not YAML",
        setup: |fx| {
            let old = fx.pkg.read(PATCH);
            let new = LABELLED
                .namespace_patch()
                .replace("+  namespace: cozy-app", "+  namespace: [cozy-app");
            fx.write(PATCH, &new);
            fx.vouch(&old, new.as_bytes());
        },
        args: &["render"],
        code: 2,
        words: &["templates/app.yml:6", "invalid YAML"],
    },
    Case {
        name: "YAML: a marker's expect file that is not YAML",
        setup: |fx| {
            fx.write("values.yaml", "cni: [v1.2.3\n");
            fx.edit(
                "vendor.toml",
                "expect = { value = \"v1.2.3\" }",
                "expect = { file = \"values.yaml\", yaml = \"cni\" }",
            )
        },
        args: &["check"],
        code: 1,
        words: &["values.yaml:2", "invalid YAML"],
    },
];

#[test]
fn file_catalog() {
    catalog(CASES);
}
