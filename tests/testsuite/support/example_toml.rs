//! Reading an example's vendor.toml the way the example tests need it: its
//! tables by key and their string values, whatever shape the file uses.

/// The tables of `key`, whether one (`[upstream]`) or an array (`[[upstream]]`).
pub fn tables(doc: &toml::Table, key: &str) -> Vec<toml::Table> {
    match doc.get(key) {
        Some(toml::Value::Array(items)) => items
            .iter()
            .map(|i| i.as_table().unwrap().clone())
            .collect(),
        Some(toml::Value::Table(t)) => vec![t.clone()],
        _ => Vec::new(),
    }
}

/// The string value of `key` in `table`, if it has one.
pub fn value(table: &toml::Table, key: &str) -> Option<String> {
    table.get(key).and_then(|v| v.as_str()).map(str::to_owned)
}
