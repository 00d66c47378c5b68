//! Where a key of a JSON document sits, so a finding can name its line.
//!
//! serde_json decides what the value is; it keeps no positions. This walks
//! the same text structurally (strings, nesting) to find the byte offset of
//! the key serde_json used. A key repeated in one object resolves to its last
//! occurrence, as serde_json's map does.

/// Byte offset of the opening quote of the last key in `path`, following
/// objects from the top level; `None` when the path does not exist.
pub fn locate<S: AsRef<str>>(text: &str, path: &[S]) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut pos = skip_ws(bytes, 0);
    let mut located = None;
    for key in path {
        let (key_at, value_at) = member(text, pos, key.as_ref())?;
        located = Some(key_at);
        pos = value_at;
    }
    located
}

/// The (key offset, value offset) of the last member named `key` in the
/// object starting at `open`.
fn member(text: &str, open: usize, key: &str) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    if bytes.get(open) != Some(&b'{') {
        return None;
    }
    let mut pos = skip_ws(bytes, open + 1);
    let mut found = None;
    if bytes.get(pos) == Some(&b'}') {
        return None;
    }
    loop {
        let key_at = pos;
        let key_end = string_end(bytes, pos)?;
        let name: String = serde_json::from_str(&text[key_at..key_end]).ok()?;
        pos = skip_ws(bytes, key_end);
        if bytes.get(pos) != Some(&b':') {
            return None;
        }
        let value_at = skip_ws(bytes, pos + 1);
        let value_end = value_end(bytes, value_at)?;
        if name == key {
            found = Some((key_at, value_at));
        }
        pos = skip_ws(bytes, value_end);
        match bytes.get(pos) {
            Some(b',') => pos = skip_ws(bytes, pos + 1),
            Some(b'}') => return found,
            _ => return None,
        }
    }
}

fn skip_ws(bytes: &[u8], mut pos: usize) -> usize {
    while bytes.get(pos).is_some_and(|b| b" \t\r\n".contains(b)) {
        pos += 1;
    }
    pos
}

/// The byte past the closing quote of the string opening at `pos`.
fn string_end(bytes: &[u8], pos: usize) -> Option<usize> {
    if bytes.get(pos) != Some(&b'"') {
        return None;
    }
    let mut i = pos + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The byte past the value starting at `pos`.
fn value_end(bytes: &[u8], pos: usize) -> Option<usize> {
    match bytes.get(pos)? {
        b'"' => string_end(bytes, pos),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = pos;
            while i < bytes.len() {
                match bytes[i] {
                    b'"' => {
                        i = string_end(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let mut i = pos;
            while i < bytes.len() && !b",}] \t\r\n".contains(&bytes[i]) {
                i += 1;
            }
            (i > pos).then_some(i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_top_level_key_not_a_nested_one() {
        let text = "{\n \"inner\": {\"k\": \"a\"},\n \"k\": \"b\"\n}";
        let at = locate(text, &["k"]).unwrap();
        assert_eq!(&text[at..at + 3], "\"k\"");
        assert_eq!(text[..at].matches('\n').count(), 2);
    }

    #[test]
    fn follows_nested_paths() {
        let text = r#"{"a": [1, {"x": 2}], "b": {"c": {"d": "}"}}}"#;
        let at = locate(text, &["b", "c", "d"]).unwrap();
        assert!(text[at..].starts_with("\"d\""));
    }

    #[test]
    fn last_duplicate_wins_like_serde_json() {
        let text = "{\"k\": 1,\n\"k\": 2}";
        let at = locate(text, &["k"]).unwrap();
        assert_eq!(text[..at].matches('\n').count(), 1);
        let parsed: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(parsed["k"], 2);
    }

    #[test]
    fn escaped_keys_compare_by_value() {
        let text = r#"{"a\u0062": true}"#;
        assert_eq!(locate(text, &["ab"]), Some(1));
    }

    #[test]
    fn missing_paths_are_none() {
        assert_eq!(locate("{\"a\": {}}", &["a", "b"]), None);
        assert_eq!(locate("[1]", &["a"]), None);
        assert_eq!(locate("{\"a\": 1}", &["a", "b"]), None);
    }
}
