//! The one way a `--format json` document is made: `"schema"` first, then
//! the command's own keys (docs/json.md).
//!
//! A reader branches on `schema` before anything else: keys are only ever
//! added within a schema, and a change that renames or removes one raises
//! it. The value is [`SCHEMA`] in every document, whichever command printed
//! it, so a script checks one number.

use serde::Serialize;

/// The version of every JSON document revendor prints.
pub const SCHEMA: u32 = 1;

/// A document: `schema`, then `body`'s keys in their order. `body` must
/// serialize as an object (a struct or a map); a list is wrapped in one by
/// its caller, under a key that names what it lists.
#[derive(Serialize)]
struct Versioned<'a, T: ?Sized> {
    schema: u32,
    #[serde(flatten)]
    body: &'a T,
}

/// `body` as a pretty-printed document led by `"schema": 1`, with a final
/// newline.
pub fn document<T: Serialize + ?Sized>(body: &T) -> String {
    let doc = Versioned {
        schema: SCHEMA,
        body,
    };
    // Serializing plain data to a String cannot fail but for a body that is
    // not an object, which is a bug caught by the tests of each document.
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_comes_first_and_the_keys_keep_their_order() {
        #[derive(Serialize)]
        struct Body {
            zeta: u8,
            alpha: &'static str,
        }
        let text = document(&Body {
            zeta: 1,
            alpha: "a",
        });
        assert_eq!(
            text,
            "{\n  \"schema\": 1,\n  \"zeta\": 1,\n  \"alpha\": \"a\"\n}\n"
        );
    }
}
