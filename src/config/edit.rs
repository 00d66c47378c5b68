//! Editing vendor.toml in place: `update` moves `[upstream] version`, and
//! nothing else of the user's file changes (comments, spacing, key order).

use toml_edit::{DocumentMut, value};

use super::ConfigError;

/// vendor.toml text with `[upstream] version` set to `version`.
pub fn set_upstream_version(
    path: &std::path::Path,
    text: &str,
    version: &str,
) -> Result<String, ConfigError> {
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        ConfigError::at(path, None, format!("cannot edit vendor.toml: {e}"))
    })?;
    let Some(item) = doc.get_mut("upstream").and_then(|u| u.get_mut("version")) else {
        return Err(ConfigError::at(
            path,
            None,
            "[upstream] has no `version` to move",
        ));
    };
    let decor = item.as_value().map(|v| v.decor().clone());
    *item = value(version);
    if let (Some(decor), Some(v)) = (decor, item.as_value_mut()) {
        *v.decor_mut() = decor;
    }
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_version_changes() {
        let text = "# top\n[upstream]\ngithub = \"o/r\"   # repo\nversion = \"v4.2.4\"    # what is vendored now\ntrack = \">=4\"\n";
        let out =
            set_upstream_version(std::path::Path::new("vendor.toml"), text, "v4.3.0").unwrap();
        assert_eq!(out, text.replace("v4.2.4", "v4.3.0"));
    }
}
