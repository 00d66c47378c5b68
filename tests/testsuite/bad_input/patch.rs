//! Patches: hunk counts that lie, no hunks, `..`, binary sections, line
//! endings both ways, the newline at end of file both ways, files created
//! and deleted, an empty file, context upstream does not have.

use super::{Case, LABELLED, PATCH, REPO, catalog};

/// The manifest's last lines with a patch changing its last one.
const EOF_PATCH: &str = "--- a/templates/app.yml
+++ b/templates/app.yml
@@ -14,3 +14,3 @@
           resources:
             limits:
-              memory: 64Mi
+              memory: 128Mi
";

pub(super) const CASES: &[Case] = &[
    Case {
        name: "patch: a hunk whose counts lie",
        setup: |fx| fx.edit(PATCH, "@@ -2,7 +2,7 @@", "@@ -2,9 +2,7 @@"),
        args: &["render"],
        code: 2,
        words: &["patches/namespace.patch:11", "its header says 9 and 7"],
    },
    Case {
        name: "patch: a header with no hunks",
        setup: |fx| fx.write(PATCH, "--- a/templates/app.yml\n+++ b/templates/app.yml\n"),
        args: &["render"],
        code: 2,
        words: &["patches/namespace.patch"],
    },
    Case {
        name: "patch: `..` in a path",
        setup: |fx| {
            fx.write(
                PATCH,
                LABELLED
                    .namespace_patch()
                    .replace("/templates/app.yml", "/../../etc/passwd"),
            )
        },
        args: &["render"],
        code: 2,
        words: &["patches/namespace.patch:2", "leaves the tree it patches"],
    },
    Case {
        name: "patch: a binary patch",
        setup: |fx| {
            fx.write(
                PATCH,
                "diff --git a/templates/app.yml b/templates/app.yml\nindex 1234567..89abcde 100644\nGIT binary patch\nliteral 3\nKcmZ?wVEF(5\n\nliteral 0\nHcmV?d00001\n\n",
            )
        },
        args: &["render"],
        code: 2,
        words: &["patches/namespace.patch:3", "binary patch"],
    },
    Case {
        name: "patch: `Binary files differ`",
        setup: |fx| {
            fx.write(
                PATCH,
                "diff --git a/templates/app.yml b/templates/app.yml\nBinary files a/templates/app.yml and b/templates/app.yml differ\n",
            )
        },
        args: &["render"],
        code: 2,
        words: &["patches/namespace.patch:2", "binary patch"],
    },
    Case {
        name: "patch: CRLF patch against an LF file",
        setup: |fx| fx.write(PATCH, LABELLED.namespace_patch().replace('\n', "\r\n")),
        args: &["render"],
        code: 1,
        words: &[
            "patches/namespace.patch:3",
            "the patch has CRLF, the file LF",
        ],
    },
    Case {
        name: "patch: LF patch against a CRLF file",
        setup: |fx| fx.pristine(LABELLED.text().replace('\n', "\r\n").as_bytes()),
        args: &["render"],
        code: 1,
        words: &[
            "patches/namespace.patch:3",
            "the patch has LF, the file CRLF",
        ],
    },
    Case {
        name: "patch: `\\ No newline` in the patch, a newline in the file",
        setup: |fx| {
            fx.write(
                PATCH,
                EOF_PATCH.replace(
                    "-              memory: 64Mi\n",
                    "-              memory: 64Mi\n\\ No newline at end of file\n",
                ),
            )
        },
        args: &["render"],
        code: 1,
        words: &[
            "patches/namespace.patch:3",
            "the patch says `\\ No newline at end of file`, the file ends with one",
        ],
    },
    Case {
        name: "patch: a newline in the patch, none at the end of the file",
        setup: |fx| {
            fx.write(PATCH, EOF_PATCH);
            let text = LABELLED.text();
            fx.pristine(text.trim_end().as_bytes());
        },
        args: &["render"],
        code: 1,
        words: &[
            "patches/namespace.patch:3",
            "the patch's line has one, the file ends without it",
        ],
    },
    Case {
        name: "patch: creating a file",
        setup: |fx| {
            fx.write(
                PATCH,
                "--- /dev/null\n+++ b/templates/new.yml\n@@ -0,0 +1 @@\n+kind: New\n",
            )
        },
        args: &["render"],
        code: 2,
        words: &["patches/namespace.patch", "templates/new.yml"],
    },
    Case {
        name: "patch: deleting the vendored file",
        setup: |fx| {
            let lines: String = LABELLED.text().lines().map(|l| format!("-{l}\n")).collect();
            fx.write(
                PATCH,
                format!("--- a/templates/app.yml\n+++ /dev/null\n@@ -1,16 +0,0 @@\n{lines}"),
            )
        },
        args: &["render"],
        code: 2,
        words: &["patches/namespace.patch:2", "deletes `templates/app.yml`"],
    },
    Case {
        name: "patch: an empty patch file",
        setup: |fx| fx.write(PATCH, ""),
        args: &["render"],
        code: 2,
        words: &["patches/namespace.patch:1", "no file patch found"],
    },
    Case {
        name: "patch: context upstream does not have",
        setup: |fx| fx.edit(PATCH, "   name: app\n", "   name: other\n"),
        args: &["render"],
        code: 1,
        words: &[
            "patches/namespace.patch:3",
            "line 4 is \"  name: app\", expected \"  name: other\"",
        ],
    },
    Case {
        name: "patch: an empty upstream file",
        setup: |fx| {
            fx.newer();
            fx.gh.repo(REPO).file_at("v1.1.0", "deploy/app.yml", "");
        },
        args: &["update", "--to", "v1.1.0"],
        code: 1,
        words: &["`deploy/app.yml` is empty at v1.1.0"],
    },
];

#[test]
fn patch_catalog() {
    catalog(CASES);
}
