//! Registry authentication: parse the `WWW-Authenticate` challenge of a 401 and turn it, plus
//! the Docker config credential if any, into an `Authorization` header value.
//!
//! 1. A request goes out with the cached header for its (host, repository), or none.
//! 2. On 401 the challenge says `Basic realm=…` or `Bearer realm=…,service=…`.
//! 3. Basic: send the credential on every request. Bearer: GET the realm with `service` and
//!    `scope=repository:NAME:pull` (Basic-authenticated when there is a password, anonymous
//!    otherwise), or POST the `refresh_token` grant when the credential is an identity token.
//! 4. The request is sent once more with the new header; a second 401 is final.
//!
//! The scope is built here rather than copied from the challenge: a `/v2/` ping challenge has
//! none, and the repository is known anyway. revendor only reads, so it asks for `pull` alone.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use reqwest::Url;
use serde::Deserialize;

use super::{Credential, Error, Secret};

/// `client_id` sent with the OAuth2 refresh-token grant, as the spec asks clients to identify.
const CLIENT_ID: &str = "revendor";

/// What a 401 asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Challenge {
    /// HTTP Basic: send the user name and password on every request.
    Basic,
    /// The token flow: fetch a token from `realm` for `service`.
    Bearer {
        realm: String,
        service: Option<String>,
    },
}

/// A ready `Authorization` header value ("Basic …" or "Bearer …"), redacted in Debug output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Authorization(Secret);

impl Authorization {
    pub(crate) fn basic(username: &str, password: &Secret) -> Authorization {
        let pair = format!("{username}:{}", password.expose());
        Authorization(Secret::new(format!("Basic {}", STANDARD.encode(pair))))
    }

    pub(crate) fn bearer(token: &Secret) -> Authorization {
        Authorization(Secret::new(format!("Bearer {}", token.expose())))
    }

    pub(crate) fn header_value(&self) -> &str {
        self.0.expose()
    }

    /// The value without its scheme word: what a server echoing it back must not show.
    pub(crate) fn credential(&self) -> &str {
        let value = self.0.expose();
        value
            .split_once(' ')
            .map_or(value, |(_, credential)| credential)
    }
}

/// Parses a `WWW-Authenticate` value; `Err` carries the scheme we do not support (or a reason).
pub(crate) fn parse_challenge(header: &str) -> Result<Challenge, String> {
    let header = header.trim();
    let (scheme, rest) = header.split_once(' ').unwrap_or((header, ""));
    if scheme.eq_ignore_ascii_case("basic") {
        return Ok(Challenge::Basic);
    }
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(format!("unsupported authentication scheme `{scheme}`"));
    }
    let params = parse_params(rest);
    let get = |key: &str| {
        params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.clone())
    };
    let realm = get("realm")
        .filter(|r| !r.is_empty())
        .ok_or_else(|| "the Bearer challenge has no realm".to_owned())?;
    Ok(Challenge::Bearer {
        realm,
        service: get("service"),
    })
}

/// Splits `k1="v, 1",k2=v2` into pairs, honouring quotes and backslash escapes (scopes such as
/// `repository:a:pull,push` contain commas).
fn parse_params(input: &str) -> Vec<(String, String)> {
    let mut params = Vec::new();
    let mut chars = input.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ',' || c.is_whitespace()) {
            chars.next();
        }
        let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
        if key.trim().is_empty() {
            return params;
        }
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => value.extend(chars.next()),
                    '"' => break,
                    c => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| *c != ',') {
                value.push(c);
            }
        }
        params.push((key.trim().to_owned(), value.trim().to_owned()));
    }
}

/// The realm URL with `service` and `scope` in its query, for the GET token request.
pub(crate) fn token_url(
    realm: &str,
    service: Option<&str>,
    scope: Option<&str>,
) -> Result<Url, Error> {
    let mut url = Url::parse(realm).map_err(|_| Error::Url {
        url: realm.to_owned(),
        reason: "the token realm is not a valid URL",
    })?;
    {
        let mut query = url.query_pairs_mut();
        if let Some(service) = service {
            query.append_pair("service", service);
        }
        if let Some(scope) = scope {
            query.append_pair("scope", scope);
        }
    }
    Ok(url)
}

/// The form body of the OAuth2 refresh-token grant for an identity token.
pub(crate) fn refresh_form(token: &Secret, service: Option<&str>, scope: Option<&str>) -> Secret {
    // Url's query serializer is the one form encoder at hand; only its query is kept.
    let mut url = Url::parse("http://form.invalid/").expect("a constant URL parses");
    {
        let mut form = url.query_pairs_mut();
        form.append_pair("grant_type", "refresh_token");
        form.append_pair("refresh_token", token.expose());
        form.append_pair("client_id", CLIENT_ID);
        if let Some(service) = service {
            form.append_pair("service", service);
        }
        if let Some(scope) = scope {
            form.append_pair("scope", scope);
        }
    }
    Secret::new(url.query().unwrap_or_default())
}

/// The token from a token endpoint's JSON answer (`token`, or OAuth2's `access_token`).
pub(crate) fn read_token(body: &[u8], realm: &str) -> Result<Secret, Error> {
    #[derive(Deserialize)]
    struct Answer {
        #[serde(default)]
        token: Secret,
        #[serde(default)]
        access_token: Secret,
    }
    let no_token = || Error::Token {
        realm: realm.to_owned(),
        status: None,
        reason: "its answer holds no token".to_owned(),
    };
    let answer: Answer = serde_json::from_slice(body).map_err(|_| no_token())?;
    [answer.token, answer.access_token]
        .into_iter()
        .find(|t| !t.is_empty())
        .ok_or_else(no_token)
}

/// The header for a Basic challenge, or why we cannot answer it.
pub(crate) fn basic_for(
    credential: Option<&Credential>,
    host: &str,
) -> Result<Authorization, String> {
    match credential {
        Some(Credential::Basic { username, password }) => {
            Ok(Authorization::basic(username, password))
        }
        Some(Credential::IdentityToken(_)) => Err(format!(
            "the registry asks for a password, but the docker config holds only an identity token for `{host}`"
        )),
        None => Err(format!(
            "the registry asks for credentials and the docker config has none for `{host}`"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_docker_hub_challenge() {
        let header = r#"Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/golang:pull""#;
        assert_eq!(
            parse_challenge(header).unwrap(),
            Challenge::Bearer {
                realm: "https://auth.docker.io/token".into(),
                service: Some("registry.docker.io".into()),
            }
        );
    }

    #[test]
    fn parses_quoted_commas_escapes_and_bare_values() {
        let params = parse_params(
            r#"realm="a\"b", scope="repository:x:pull,push",service=bare ,error=insufficient_scope"#,
        );
        assert_eq!(
            params,
            [
                ("realm".to_owned(), "a\"b".to_owned()),
                ("scope".to_owned(), "repository:x:pull,push".to_owned()),
                ("service".to_owned(), "bare".to_owned()),
                ("error".to_owned(), "insufficient_scope".to_owned()),
            ]
        );
    }

    #[test]
    fn basic_and_unsupported_schemes() {
        assert_eq!(
            parse_challenge(r#"Basic realm="Registry""#).unwrap(),
            Challenge::Basic
        );
        assert_eq!(parse_challenge("basic").unwrap(), Challenge::Basic);
        assert!(
            parse_challenge("Negotiate abc")
                .unwrap_err()
                .contains("Negotiate")
        );
        assert!(
            parse_challenge("Bearer service=x")
                .unwrap_err()
                .contains("no realm")
        );
    }

    #[test]
    fn token_url_encodes_service_and_scope() {
        let url = token_url(
            "https://auth.example/token?x=1",
            Some("reg"),
            Some("repository:a/b:pull"),
        )
        .unwrap();
        assert_eq!(
            url.as_str(),
            "https://auth.example/token?x=1&service=reg&scope=repository%3Aa%2Fb%3Apull"
        );
        assert!(token_url("not a url", None, None).is_err());
    }

    #[test]
    fn refresh_form_carries_the_grant() {
        let form = refresh_form(&Secret::new("r t&"), Some("svc"), Some("repository:a:pull"));
        assert_eq!(
            form.expose(),
            "grant_type=refresh_token&refresh_token=r+t%26&client_id=revendor&service=svc&scope=repository%3Aa%3Apull"
        );
    }

    #[test]
    fn reads_either_token_field_and_never_echoes_the_body() {
        assert_eq!(
            read_token(br#"{"token":"t1"}"#, "r").unwrap().expose(),
            "t1"
        );
        assert_eq!(
            read_token(br#"{"access_token":"t2","token":""}"#, "r")
                .unwrap()
                .expose(),
            "t2"
        );
        let err = read_token(br#"{"tokn":"LEAK"}"#, "r").unwrap_err();
        assert!(!format!("{err} {err:?}").contains("LEAK"));
    }

    #[test]
    fn authorization_headers_are_redacted_in_debug() {
        let basic = Authorization::basic("u", &Secret::new("pw"));
        assert_eq!(basic.header_value(), "Basic dTpwdw==");
        let bearer = Authorization::bearer(&Secret::new("tok"));
        assert_eq!(bearer.header_value(), "Bearer tok");
        assert_eq!(
            (basic.credential(), bearer.credential()),
            ("dTpwdw==", "tok")
        );
        assert!(!format!("{basic:?}{bearer:?}").contains("dTpwdw"));
        assert!(!format!("{bearer:?}").contains("tok"));
    }

    #[test]
    fn basic_needs_a_password_credential() {
        assert!(
            basic_for(None, "h")
                .unwrap_err()
                .contains("has none for `h`")
        );
        let token = Credential::IdentityToken(Secret::new("x"));
        assert!(
            basic_for(Some(&token), "h")
                .unwrap_err()
                .contains("identity token")
        );
    }
}
