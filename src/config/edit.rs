//! Editing vendor.toml in place, the one place that does: `update` moves
//! each upstream's `version` and drops the `[[patch]]` of a patch upstream
//! already carries (`--drop-upstreamed`), `image pin-base --go` moves an
//! image's `go`, and nothing else of the user's file changes (comments,
//! spacing, key order).

use toml_edit::{DocumentMut, Item, TableLike, Value};

use super::ConfigError;

/// vendor.toml text with `version` of `[upstream]` (or of the
/// `[[upstream]]` named `name`) set to `version`.
pub fn set_upstream_version(
    path: &std::path::Path,
    text: &str,
    name: Option<&str>,
    version: &str,
) -> Result<String, ConfigError> {
    let mut doc = parse(path, text)?;
    let item = named_table(&mut doc, "upstream", name)
        .and_then(|t| t.get_mut("version"))
        .and_then(Item::as_value_mut);
    let Some(item) = item else {
        return Err(ConfigError::at(
            path,
            None,
            format!(
                "the upstream{} has no `version` to move",
                name.map(|n| format!(" `{n}`")).unwrap_or_default()
            ),
        ));
    };
    replace_keeping_decor(item, version);
    Ok(doc.to_string())
}

/// vendor.toml text with `go` of `[image]` (or of the `[[image]]` named
/// `name`) set to the string `go`, added when the table has none: `image
/// pin-base --go` moves an image's Go with its builder stages.
pub fn set_image_go(
    path: &std::path::Path,
    text: &str,
    name: Option<&str>,
    go: &str,
) -> Result<String, ConfigError> {
    let mut doc = parse(path, text)?;
    let Some(table) = named_table(&mut doc, "image", name) else {
        return Err(ConfigError::at(
            path,
            None,
            format!(
                "vendor.toml has no [image]{} table",
                name.map(|n| format!(" named `{n}`")).unwrap_or_default()
            ),
        ));
    };
    match table.get_mut("go").and_then(Item::as_value_mut) {
        Some(value) => replace_keeping_decor(value, go),
        None => {
            table.insert("go", toml_edit::value(go));
        }
    }
    Ok(doc.to_string())
}

/// vendor.toml as a document that keeps every byte it does not change.
fn parse(path: &std::path::Path, text: &str) -> Result<DocumentMut, ConfigError> {
    text.parse().map_err(|e: toml_edit::TomlError| {
        ConfigError::at(path, None, format!("cannot edit vendor.toml: {e}"))
    })
}

/// The `[key]` table, or the `[[key]]` whose `name` is `name` (`None`
/// matching the one without a name).
fn named_table<'d>(
    doc: &'d mut DocumentMut,
    key: &str,
    name: Option<&str>,
) -> Option<&'d mut dyn TableLike> {
    match doc.get_mut(key)? {
        Item::ArrayOfTables(all) => all
            .iter_mut()
            .find(|t| t.get("name").and_then(|n| n.as_str()) == name)
            .map(|t| t as &mut dyn TableLike),
        item => item.as_table_like_mut(),
    }
}

/// Sets `value` to the string `to`, keeping the spacing and comment around it.
fn replace_keeping_decor(value: &mut Value, to: &str) {
    let decor = value.decor().clone();
    *value = Value::from(to);
    *value.decor_mut() = decor;
}

/// vendor.toml text without the `[[patch]]` whose `name` is `name`. The
/// table goes with the comments and blank lines above its header (toml_edit
/// keeps those with the table they precede); every other byte stays.
pub fn remove_patch(path: &std::path::Path, text: &str, name: &str) -> Result<String, ConfigError> {
    let mut doc = parse(path, text)?;
    let missing = || ConfigError::at(path, None, format!("no [[patch]] named `{name}` to remove"));
    let tables = doc
        .get_mut("patch")
        .and_then(|p| p.as_array_of_tables_mut())
        .ok_or_else(missing)?;
    let at = tables
        .iter()
        .position(|t| t.get("name").and_then(|n| n.as_str()) == Some(name))
        .ok_or_else(missing)?;
    tables.remove(at);
    if tables.is_empty() {
        doc.remove("patch");
    }
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const WITH_PATCHES: &str = "\
# the package
[upstream]
github = \"o/r\"   # repo
version = \"v1\"

[[vendor]]
from = \"a.yml\"
to = \"t/a.yml\"

# ours, until upstream takes it
[[patch]]
name = \"keep\"
file = \"patches/keep.patch\"   # the manifest

# merged upstream in v2
[[patch]]
name = \"gone\"
file = \"images/x/patches/gone.diff\"
applies-to = \"source\"
strip = 1

[[rewrite]]
file = \"t/a.yml\"
lines-containing = \"x\"
replace = \"a\"
with = \"{version}\"
";

    #[test]
    fn removing_a_patch_keeps_every_other_byte() {
        let path = std::path::Path::new("vendor.toml");
        let out = remove_patch(path, WITH_PATCHES, "gone").unwrap();
        let block = "\n# merged upstream in v2\n[[patch]]\nname = \"gone\"\nfile = \"images/x/patches/gone.diff\"\napplies-to = \"source\"\nstrip = 1\n";
        assert_eq!(out, WITH_PATCHES.replacen(block, "", 1));
        let none = remove_patch(path, &out, "keep").unwrap();
        assert!(
            !none.contains("[[patch]]") && none.contains("[[rewrite]]"),
            "{none}"
        );
        let e = remove_patch(path, WITH_PATCHES, "other").unwrap_err();
        assert!(e.to_string().contains("no [[patch]] named `other`"), "{e}");
    }

    #[test]
    fn only_the_version_changes() {
        let text = "# top\n[upstream]\ngithub = \"o/r\"   # repo\nversion = \"v4.2.4\"    # what is vendored now\ntrack = \">=4\"\n";
        let out = set_upstream_version(std::path::Path::new("vendor.toml"), text, None, "v4.3.0")
            .unwrap();
        assert_eq!(out, text.replace("v4.2.4", "v4.3.0"));
    }

    #[test]
    fn a_named_upstream_moves_alone() {
        let text = "[[upstream]]\nname = \"a\"\nversion = \"v1\"  # a\n\n[[upstream]]\nname = \"b\"\nversion = \"v1\"  # b\n";
        let path = std::path::Path::new("vendor.toml");
        let out = set_upstream_version(path, text, Some("b"), "v2").unwrap();
        assert_eq!(out, text.replace("\"v1\"  # b", "\"v2\"  # b"));
        assert!(set_upstream_version(path, text, Some("c"), "v2").is_err());
    }

    #[test]
    fn set_go_changes_only_the_value() {
        let text =
            "[image]\nrepository = \"r\"\ngo = \"1.26\"   # the builder\n\n[[pin]]\nfile = \"f\"\n";
        let out = set_image_go(std::path::Path::new("vendor.toml"), text, None, "1.27").unwrap();
        assert_eq!(out, text.replace("\"1.26\"", "\"1.27\""));
    }

    #[test]
    fn set_go_moves_only_the_named_image() {
        let text = "[[image]]\nname = \"a\"\ngo = \"1.26\"\n\n[[image]]\nname = \"b\"\ngo = \"1.26\" # b\n";
        let (path, go) = (std::path::Path::new("vendor.toml"), "1.27");
        let out = set_image_go(path, text, Some("b"), go).unwrap();
        assert_eq!(out, text.replace("\"1.26\" # b", "\"1.27\" # b"));
        let added = set_image_go(path, "[[image]]\nname = \"a\"\n", Some("a"), go).unwrap();
        assert_eq!(added, "[[image]]\nname = \"a\"\ngo = \"1.27\"\n");
        assert!(set_image_go(path, text, Some("c"), go).is_err());
    }
}
