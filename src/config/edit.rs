//! Editing vendor.toml in place: `update` moves each upstream's `version` and
//! drops the `[[patch]]` of a patch upstream already carries
//! (`--drop-upstreamed`), and nothing else of the user's file changes
//! (comments, spacing, key order).

use toml_edit::{DocumentMut, Item, value};

use super::ConfigError;

/// vendor.toml text with `version` of `[upstream]` (or of the
/// `[[upstream]]` named `name`) set to `version`.
pub fn set_upstream_version(
    path: &std::path::Path,
    text: &str,
    name: Option<&str>,
    version: &str,
) -> Result<String, ConfigError> {
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        ConfigError::at(path, None, format!("cannot edit vendor.toml: {e}"))
    })?;
    let table = match doc.get_mut("upstream") {
        Some(Item::ArrayOfTables(all)) => all
            .iter_mut()
            .find(|t| t.get("name").and_then(|n| n.as_str()) == name)
            .map(|t| t as &mut dyn toml_edit::TableLike),
        Some(item) => item.as_table_like_mut(),
        None => None,
    };
    let Some(item) = table.and_then(|t| t.get_mut("version")) else {
        return Err(ConfigError::at(
            path,
            None,
            format!(
                "the upstream{} has no `version` to move",
                name.map(|n| format!(" `{n}`")).unwrap_or_default()
            ),
        ));
    };
    let decor = item.as_value().map(|v| v.decor().clone());
    *item = value(version);
    if let (Some(decor), Some(v)) = (decor, item.as_value_mut()) {
        *v.decor_mut() = decor;
    }
    Ok(doc.to_string())
}

/// vendor.toml text without the `[[patch]]` whose `name` is `name`. The
/// table goes with the comments and blank lines above its header (toml_edit
/// keeps those with the table they precede); every other byte stays.
pub fn remove_patch(path: &std::path::Path, text: &str, name: &str) -> Result<String, ConfigError> {
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        ConfigError::at(path, None, format!("cannot edit vendor.toml: {e}"))
    })?;
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
}
