//! upstream/lock.toml edited by hand: a digest, the version, cut short,
//! garbage, an entry twice, a schema from a newer revendor.

use super::support;
use super::{Case, LOCK, PATCH, PRISTINE, catalog};

pub(super) const CASES: &[Case] = &[
    Case {
        name: "lock: a pristine copy's digest edited",
        setup: |fx| {
            let old = fx.pkg.read(PRISTINE);
            fx.vouch(&old, b"something else");
        },
        args: &["check"],
        code: 1,
        words: &["upstream/deploy/app.yml:1", "the pristine copy was edited"],
    },
    Case {
        name: "lock: a patch digest edited",
        setup: |fx| {
            let old = fx.pkg.read(PATCH);
            fx.vouch(&old, b"another patch");
        },
        args: &["check"],
        code: 1,
        words: &[PATCH, "verified with"],
    },
    Case {
        name: "lock: the version edited",
        setup: |fx| fx.edit(LOCK, "version = \"v1.0.0\"", "version = \"v1.0.1\""),
        args: &["check"],
        code: 1,
        words: &["vendor.toml:3", "the lock vendored v1.0.1"],
    },
    Case {
        name: "lock: truncated",
        setup: |fx| {
            let lock = fx.pkg.read_string(LOCK);
            let cut = lock.find("sha256 = \"").unwrap() + 14;
            fx.write(LOCK, &lock[..cut]);
        },
        args: &["check"],
        code: 2,
        words: &[LOCK, "malformed lock"],
    },
    Case {
        name: "lock: garbage",
        setup: |fx| fx.write(LOCK, [0xff, 0xfe, 0x00, b'\n', b'[', b'[']),
        args: &["render"],
        code: 2,
        words: &[LOCK],
    },
    Case {
        name: "lock: a duplicate [[file]]",
        setup: |fx| {
            let lock = fx.pkg.read_string(LOCK);
            let start = lock.find("[[file]]").unwrap();
            let end = start + lock[start..].find("\n\n").unwrap() + 2;
            let dup = format!("{}{}{}", &lock[..end], &lock[start..end], &lock[end..]);
            fx.write(LOCK, dup);
        },
        args: &["check"],
        code: 1,
        words: &["upstream/lock.toml:", "[[file]] `deploy/app.yml` twice"],
    },
    Case {
        name: "lock: an unknown key",
        setup: |fx| fx.edit(LOCK, "[upstream]\n", "[upstream]\nhand = \"edit\"\n"),
        args: &["check"],
        code: 2,
        words: &[LOCK, "unknown"],
    },
    Case {
        name: "lock: a sha256 that is not hex",
        setup: |fx| {
            let old = support::github::sha256_hex(&fx.pkg.read(PRISTINE));
            fx.edit(LOCK, &old, "not-a-digest");
        },
        args: &["render"],
        code: 2,
        words: &["upstream/lock.toml:13", "\"not-a-digest\" is not a sha256"],
    },
    Case {
        name: "lock: a newer schema (issue 22)",
        setup: |fx| fx.edit(LOCK, "schema = 1\n", "schema = 2\n"),
        args: &["check"],
        code: 2,
        words: &["upstream/lock.toml:2", "schema 2", "upgrade revendor"],
    },
    Case {
        name: "lock: a newer schema with a key this revendor does not know (issue 22)",
        setup: |fx| {
            fx.edit(LOCK, "schema = 1\n", "schema = 3\n");
            fx.edit(LOCK, "[upstream]\n", "[upstream]\nmirror = \"x\"\n");
        },
        args: &["render"],
        code: 2,
        words: &["upstream/lock.toml:2", "schema 3", "upgrade revendor"],
    },
];

#[test]
fn lock_catalog() {
    catalog(CASES);
}
