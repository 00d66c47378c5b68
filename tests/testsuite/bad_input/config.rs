//! vendor.toml: malformed TOML, unknown keys, wrong types, bad ranges,
//! paths leaving the package, and what vendor.toml names that is not there.

use super::{Case, catalog};

pub(super) const CASES: &[Case] = &[
    Case {
        name: "malformed TOML: an unterminated string",
        setup: |fx| fx.edit("vendor.toml", "version = \"v1.0.0\"", "version = \"v1.0.0"),
        args: &["render"],
        code: 2,
        words: &["vendor.toml:3"],
    },
    Case {
        name: "an unknown key",
        setup: |fx| {
            fx.edit(
                "vendor.toml",
                "go = \"1.26\"\n",
                "go = \"1.26\"\ncolour = \"red\"\n",
            )
        },
        args: &["check"],
        code: 2,
        words: &["vendor.toml:32", "unknown key `colour`"],
    },
    Case {
        name: "a wrong type: strip as a string",
        setup: |fx| fx.edit("vendor.toml", "strip = 1", "strip = \"one\""),
        args: &["render"],
        code: 2,
        words: &[
            "vendor.toml:19",
            "invalid type: string \"one\", expected a non-negative integer",
        ],
    },
    Case {
        name: "a wrong type: platforms as a string",
        setup: |fx| {
            fx.edit(
                "vendor.toml",
                "platforms = [\"linux/amd64\", \"linux/arm64\"]",
                "platforms = \"linux/amd64\"",
            )
        },
        args: &["check"],
        code: 2,
        words: &["vendor.toml:30", "expected an array"],
    },
    Case {
        name: "a missing key: [[vendor]] without `to`",
        setup: |fx| fx.edit("vendor.toml", "to = \"templates/app.yml\"\n", ""),
        args: &["render"],
        code: 2,
        words: &["vendor.toml:6", "missing key `to`"],
    },
    Case {
        name: "a bad range: track that does not parse",
        setup: |fx| fx.edit("vendor.toml", "<2.0.0\"", "<<2.0.0\""),
        args: &["update"],
        code: 2,
        words: &["vendor.toml:4", "not a semver range"],
    },
    Case {
        name: "a range no release is inside",
        setup: |fx| fx.edit("vendor.toml", ">=1.0.0, <2.0.0", ">=9.0.0"),
        args: &["update"],
        code: 2,
        words: &[
            "no release of github:example/app is inside track `>=9.0.0`",
            "vendor.toml",
        ],
    },
    Case {
        name: "an empty version",
        setup: |fx| fx.edit("vendor.toml", "version = \"v1.0.0\"", "version = \"\""),
        args: &["check"],
        code: 2,
        words: &["vendor.toml:3", "`version` is empty"],
    },
    Case {
        name: "a path leaving the package: `to` with `..`",
        setup: |fx| {
            fx.edit(
                "vendor.toml",
                "to = \"templates/app.yml\"",
                "to = \"../app.yml\"",
            )
        },
        args: &["render"],
        code: 2,
        words: &["vendor.toml:8", "leaves the package"],
    },
    Case {
        name: "a path leaving the package: an absolute `to`",
        setup: |fx| {
            fx.edit(
                "vendor.toml",
                "to = \"templates/app.yml\"",
                "to = \"/tmp/app.yml\"",
            )
        },
        args: &["render"],
        code: 2,
        words: &["vendor.toml:8", "leaves the package"],
    },
    Case {
        name: "a path leaving the package: `to` through a symlink",
        setup: |fx| {
            std::os::unix::fs::symlink(std::env::temp_dir(), fx.pkg.join("out")).unwrap();
            fx.edit(
                "vendor.toml",
                "to = \"templates/app.yml\"",
                "to = \"out/app.yml\"",
            )
        },
        args: &["render"],
        code: 2,
        words: &["vendor.toml:8", "leaves the package"],
    },
    Case {
        name: "a path leaving the package: a patch file through a symlink",
        setup: |fx| {
            std::os::unix::fs::symlink(std::env::temp_dir(), fx.pkg.join("elsewhere")).unwrap();
            fx.edit(
                "vendor.toml",
                "file = \"patches/namespace.patch\"",
                "file = \"elsewhere/namespace.patch\"",
            )
        },
        args: &["check"],
        code: 2,
        words: &["vendor.toml:12", "leaves the package"],
    },
    Case {
        name: "`to` naming a directory",
        setup: |fx| {
            std::fs::create_dir_all(fx.pkg.join("charts/app")).unwrap();
            fx.write("charts/app/keep", "");
            fx.edit(
                "vendor.toml",
                "to = \"templates/app.yml\"",
                "to = \"charts/app\"",
            )
        },
        args: &["render"],
        code: 2,
        words: &["vendor.toml:8", "`to` = \"charts/app\" is a directory"],
    },
    Case {
        name: "a [[vendor]] `from` upstream lacks",
        setup: |fx| {
            fx.append_toml(
                "[[vendor]]\nfrom = \"deploy/missing.yml\"\nto = \"templates/missing.yml\"\n",
            )
        },
        args: &["update"],
        code: 2,
        words: &[
            "vendor.toml:50",
            "`from` = \"deploy/missing.yml\" is not in the upstream at v1.0.0",
        ],
    },
    Case {
        name: "a [[rewrite]] of a file that is neither vendored nor in the package",
        setup: |fx| {
            fx.append_toml(
                "[[rewrite]]\nfile = \"templates/other.yml\"\nlines-containing = \"image:\"\nreplace = \"a\"\nwith = \"b\"\n",
            )
        },
        args: &["render"],
        code: 2,
        words: &[
            "vendor.toml:50",
            "`templates/other.yml`: no [[vendor]] renders it",
        ],
    },
    Case {
        name: "a [[rewrite]] whose `replace` is empty (issue 21)",
        setup: |fx| {
            fx.append_toml(
                "[[rewrite]]\nfile = \"templates/app.yml\"\nlines-containing = \"image:\"\nreplace = \"\"\nwith = \"b\"\n",
            )
        },
        args: &["render"],
        code: 2,
        words: &["vendor.toml:53", "`replace` is empty"],
    },
    Case {
        name: "render-fails without helm (issue 19)",
        setup: |fx| {
            fx.append_toml(
                "[[contract]]\nname = \"refused\"\nfile = \"templates/app.yml\"\nrender-fails = true\n",
            )
        },
        args: &["check"],
        code: 2,
        words: &[
            "vendor.toml:53",
            "contract `refused` has `render-fails` but no `helm`",
        ],
    },
    Case {
        name: "render-fails with no values file (issue 19)",
        setup: |fx| {
            fx.append_toml(
                "[[contract]]\nname = \"refused\"\nhelm = { chart = \".\" }\nrender-fails = true\n",
            )
        },
        args: &["check"],
        code: 2,
        words: &[
            "vendor.toml:52",
            "contract `refused` has `render-fails` but no values file",
        ],
    },
    Case {
        name: "render-fails with an assertion (issue 19)",
        setup: |fx| {
            fx.append_toml(
                "[[contract]]\nname = \"refused\"\nhelm = { chart = \".\", values = [\"v.yaml\"] }\nrender-fails = true\nselect = { kind = \"DaemonSet\" }\n",
            )
        },
        args: &["check"],
        code: 2,
        words: &["vendor.toml:50", "has `render-fails` and `select`"],
    },
    Case {
        name: "a contract with neither file nor helm (issue 19)",
        setup: |fx| {
            fx.append_toml(
                "[[contract]]\nname = \"nowhere\"\nselect = { kind = \"DaemonSet\" }\nevery-container = [\"image\"]\n",
            )
        },
        args: &["check"],
        code: 2,
        words: &[
            "vendor.toml:50",
            "contract `nowhere` has neither `file` nor `helm`",
        ],
    },
    Case {
        name: "a helm values file leaving the package (issue 19)",
        setup: |fx| {
            fx.append_toml(
                "[[contract]]\nname = \"out\"\nhelm = { chart = \".\", values = [\"../v.yaml\"] }\nselect = { kind = \"DaemonSet\" }\nevery-container = [\"image\"]\n",
            )
        },
        args: &["check"],
        code: 2,
        words: &[
            "vendor.toml:52",
            "`values` = \"../v.yaml\" leaves the package directory",
        ],
    },
    Case {
        name: "a strip level too high",
        setup: |fx| {
            fx.edit(
                "vendor.toml",
                "applies-to = \"vendor\"",
                "applies-to = \"vendor\"\nstrip = 9",
            )
        },
        args: &["render"],
        code: 2,
        words: &["vendor.toml:10", "strip = 9", "patches/namespace.patch:2"],
    },
    Case {
        name: "a strip level too high on a source patch",
        setup: |fx| fx.edit("vendor.toml", "strip = 1", "strip = 9"),
        args: &["update"],
        code: 2,
        words: &["vendor.toml:15", "strip = 9", "image/patches/greet.diff:2"],
    },
    Case {
        name: "a bad --tag",
        setup: |_| {},
        args: &["image", "pin", "--tag", "v1 bad"],
        code: 2,
        words: &["--tag `v1 bad` is not an image tag"],
    },
    Case {
        name: "an unknown resolver",
        setup: |fx| {
            fx.edit(
                "vendor.toml",
                "pin = \"CNI_PLUGINS_VERSION\"",
                "pin = \"CNI_PLUGINS_VERSION\"\nresolver = \"nope\"",
            )
        },
        args: &["check"],
        code: 2,
        words: &["vendor.toml:43", "unknown resolver `nope`"],
    },
    Case {
        name: "a path leaving the upstream: `from` with `..`",
        setup: |fx| {
            fx.edit(
                "vendor.toml",
                "from = \"deploy/app.yml\"",
                "from = \"../deploy/app.yml\"",
            )
        },
        args: &["render"],
        code: 2,
        words: &[
            "vendor.toml:7",
            "is not a path inside the upstream repository",
        ],
    },
    Case {
        name: "two [[patch]] of one name",
        setup: |fx| fx.edit("vendor.toml", "name = \"greet\"", "name = \"namespace\""),
        args: &["check"],
        code: 2,
        words: &["vendor.toml:16", "duplicate patch name `namespace`"],
    },
    Case {
        name: "an `applies-to` that is neither vendor nor source",
        setup: |fx| {
            fx.edit(
                "vendor.toml",
                "applies-to = \"source\"",
                "applies-to = \"image\"",
            )
        },
        args: &["render"],
        code: 2,
        words: &["vendor.toml:18", "is not `vendor` or `source`"],
    },
];

#[test]
fn vendor_toml_catalog() {
    catalog(CASES);
}
