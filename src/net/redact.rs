//! Keeping credentials out of what is shown: URLs lose their userinfo, text loses tokens.
//!
//! A server may echo the request back in an error body (headers included), so any text that
//! came from the network goes through [`scrub`] before it reaches an error message: the secrets
//! the caller knows are replaced, and so is whatever follows a `Bearer` or `Basic` scheme word.

/// What a removed credential is replaced with.
const REDACTED: &str = "<redacted>";

/// The authorization schemes whose following word is a credential.
const SCHEMES: [&str; 2] = ["bearer", "basic"];

/// Removes `user:password@` from a URL before it is shown.
pub fn redact(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://") {
        let (authority, path) = match rest.find('/') {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        if let Some((_, host)) = authority.rsplit_once('@') {
            return format!("{scheme}://{REDACTED}@{host}{path}");
        }
    }
    url.to_string()
}

/// `text` with every non-empty `secret` and every `Bearer …` / `Basic …` credential replaced by
/// `<redacted>` (scheme words matched in any case).
pub fn scrub(text: &str, secrets: &[&str]) -> String {
    // Schemes first: a known secret replaced first would cut the credential word short.
    let mut out = scrub_schemes(text);
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        out = out.replace(secret, REDACTED);
    }
    out
}

/// Replaces the credential after each scheme word.
fn scrub_schemes(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while at < text.len() {
        let found = SCHEMES
            .iter()
            .filter_map(|scheme| {
                find_word(&lower, scheme, at).map(|start| (start, start + scheme.len()))
            })
            .min();
        let Some((_, end)) = found else { break };
        let gap = text[end..].len() - text[end..].trim_start().len();
        let credential = text[end + gap..]
            .bytes()
            .take_while(|b| is_credential_byte(*b))
            .count();
        out.push_str(&text[at..end + gap]);
        if gap > 0 && credential > 0 {
            out.push_str(REDACTED);
        }
        at = end + gap + if gap > 0 { credential } else { 0 };
    }
    out.push_str(&text[at.min(text.len())..]);
    out
}

/// The next position from `from` where `word` starts and is not inside a longer word.
fn find_word(haystack: &str, word: &str, from: usize) -> Option<usize> {
    let mut search = from;
    while let Some(i) = haystack[search..].find(word).map(|i| i + search) {
        let before = haystack[..i].bytes().next_back();
        if !before.is_some_and(|b| b.is_ascii_alphanumeric()) {
            return Some(i);
        }
        search = i + word.len();
    }
    None
}

/// Bytes of a token, a base64 pair or a JWT.
fn is_credential_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/' | b'=')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_hides_userinfo() {
        assert_eq!(redact("https://u:secret@h/x"), "https://<redacted>@h/x");
        assert_eq!(redact("https://h/x"), "https://h/x");
    }

    #[test]
    fn scrub_removes_known_secrets_and_scheme_credentials() {
        let echoed = "Authorization: Bearer secret-token-123, authorization: basic dTpwdw==; \
                      x-other: secret-token-123 and BEARER\teyJ.a_b-c.d";
        let shown = scrub(echoed, &["secret-token-123", ""]);
        assert_eq!(
            shown,
            "Authorization: Bearer <redacted>, authorization: basic <redacted>; \
             x-other: <redacted> and BEARER\t<redacted>"
        );
    }

    #[test]
    fn scrub_leaves_ordinary_words_alone() {
        for text in [
            "Bad credentials",
            "basically fine",
            "the bearer",
            "Bearer",
            "unbasic words",
        ] {
            assert_eq!(scrub(text, &[]), text);
        }
    }
}
