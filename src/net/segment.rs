//! Names from upstream placed in a URL's path, one segment at a time.
//!
//! A file may be named `a#b.yaml`, `a b.yaml` or `50%.txt`: put raw into a
//! URL, `#` starts a fragment (so `…/a` is fetched), a space is refused and
//! `%` starts an escape. Each `/`-separated segment is percent-encoded on
//! its own, so the path keeps its shape and every name is asked for as
//! itself (issue 21).

/// `segment` percent-encoded for one path segment: every byte but RFC
/// 3986's unreserved characters (`A-Z a-z 0-9 - . _ ~`) becomes `%XX`.
pub fn encode_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A `/`-separated path with each segment encoded ([`encode_segment`]).
pub fn encode_path(path: &str) -> String {
    path.split('/')
        .map(encode_segment)
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_segment_is_encoded_and_the_slashes_kept() {
        assert_eq!(
            encode_path("deploy/app-1.0_x~.yml"),
            "deploy/app-1.0_x~.yml"
        );
        assert_eq!(encode_path("a#b.yaml"), "a%23b.yaml");
        assert_eq!(
            encode_path("dir with space/50%?.é"),
            "dir%20with%20space/50%25%3F.%C3%A9"
        );
    }
}
