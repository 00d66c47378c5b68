//! Registry credentials from the Docker config: `$DOCKER_CONFIG/config.json` (default
//! `~/.docker/config.json`), the same file `docker login` and CI login actions write.
//!
//! For a registry host the lookup is:
//! 1. `credHelpers[host]` → run `docker-credential-<helper> get`;
//! 2. `auths[host]` with an `identitytoken`, a base64 `auth`, or `username`/`password`;
//! 3. `credsStore` → run `docker-credential-<store> get`;
//! 4. none: the registry is read anonymously.
//!
//! Docker itself lets `credsStore` shadow `auths` entirely; here a filled-in `auths` entry wins
//! over the store, because CI jobs commonly write `auths` on machines whose store is empty.
//! Keys are compared by host, so `https://index.docker.io/v1/` (what `docker login` writes for
//! Docker Hub) matches every Docker Hub alias.
//!
//! Helpers run as an argv vector, never through a shell, and the helper name is restricted to
//! characters that cannot form a path.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;

use super::{Error, Secret};
use crate::image::{DOCKER_HUB, canonical_registry};

/// What Docker stores Docker Hub credentials under and passes to helpers for it.
const DOCKER_HUB_SERVER: &str = "https://index.docker.io/v1/";

/// A credential for one registry. Debug output redacts the secret part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Credential {
    /// A user name and password (or a personal access token used as the password).
    Basic {
        /// The user name.
        username: String,
        /// The password or token.
        password: Secret,
    },
    /// An OAuth2 refresh token (`identitytoken`, or a helper answering with user `<token>`),
    /// exchanged at the token endpoint with the `refresh_token` grant.
    IdentityToken(Secret),
}

/// The parsed Docker config, ready to answer lookups by registry host.
#[derive(Debug, Default)]
pub struct Credentials {
    path: Option<PathBuf>,
    file: ConfigFile,
}

#[derive(Debug, Default, Deserialize)]
struct ConfigFile {
    #[serde(default)]
    auths: BTreeMap<String, AuthEntry>,
    #[serde(default, rename = "credHelpers")]
    cred_helpers: BTreeMap<String, String>,
    #[serde(default, rename = "credsStore")]
    creds_store: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct AuthEntry {
    #[serde(default)]
    auth: Option<Secret>,
    #[serde(default)]
    username: Option<String>,
    #[serde(default)]
    password: Option<Secret>,
    #[serde(default)]
    identitytoken: Option<Secret>,
}

#[derive(Deserialize)]
struct HelperAnswer {
    #[serde(rename = "Username", default)]
    username: String,
    #[serde(rename = "Secret", default)]
    secret: Secret,
}

impl Credentials {
    /// No credentials at all: every registry is read anonymously.
    pub fn none() -> Credentials {
        Credentials::default()
    }

    /// Loads `config.json` from the Docker config directory `dir`; a missing file means no
    /// credentials, a malformed one is an error naming it.
    pub fn load(dir: &Path) -> Result<Credentials, Error> {
        let path = dir.join("config.json");
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Credentials::none()),
            Err(e) => {
                return Err(Error::Credentials {
                    path,
                    reason: e.to_string(),
                });
            }
        };
        // serde_json's message names the line and column, never the value, so secrets stay out.
        let file = serde_json::from_slice(&bytes).map_err(|e| Error::Credentials {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        Ok(Credentials {
            path: Some(path),
            file,
        })
    }

    /// The credential for `registry` (a host, with port if any), running a helper if the config
    /// names one. `Ok(None)` means read anonymously.
    pub fn get(&self, registry: &str) -> Result<Option<Credential>, Error> {
        self.lookup(registry, run_helper)
    }

    fn lookup(
        &self,
        registry: &str,
        helper: impl Fn(&str, &str) -> Result<Option<Credential>, Error>,
    ) -> Result<Option<Credential>, Error> {
        let host = canonical_registry(registry);
        let server = if host == DOCKER_HUB {
            DOCKER_HUB_SERVER
        } else {
            host
        };
        if let Some(name) = find_by_host(&self.file.cred_helpers, host) {
            return helper(name, server);
        }
        if let Some(entry) = find_by_host(&self.file.auths, host)
            && let Some(credential) = self.credential_in(entry)?
        {
            return Ok(Some(credential));
        }
        match &self.file.creds_store {
            Some(store) if !store.is_empty() => helper(store, server),
            _ => Ok(None),
        }
    }

    fn credential_in(&self, entry: &AuthEntry) -> Result<Option<Credential>, Error> {
        let filled = |s: &Option<Secret>| s.as_ref().filter(|s| !s.is_empty()).cloned();
        if let Some(token) = filled(&entry.identitytoken) {
            return Ok(Some(Credential::IdentityToken(token)));
        }
        if let Some(auth) = filled(&entry.auth) {
            let invalid = |reason: &str| Error::Credentials {
                path: self.path.clone().unwrap_or_default(),
                reason: reason.to_owned(),
            };
            let decoded = STANDARD
                .decode(auth.expose().trim())
                .map_err(|_| invalid("an `auth` value is not valid base64"))?;
            let decoded = String::from_utf8(decoded)
                .map_err(|_| invalid("an `auth` value does not decode to UTF-8"))?;
            let (username, password) = decoded
                .split_once(':')
                .ok_or_else(|| invalid("an `auth` value does not decode to `user:password`"))?;
            return Ok(Some(Credential::Basic {
                username: username.to_owned(),
                password: Secret::new(password),
            }));
        }
        match (&entry.username, filled(&entry.password)) {
            (Some(username), Some(password)) if !username.is_empty() => {
                Ok(Some(Credential::Basic {
                    username: username.clone(),
                    password,
                }))
            }
            _ => Ok(None),
        }
    }
}

/// Finds the value whose key names `host`: keys may be bare hosts or URLs such as
/// `https://index.docker.io/v1/`.
fn find_by_host<'a, V>(map: &'a BTreeMap<String, V>, host: &str) -> Option<&'a V> {
    map.iter()
        .find(|(key, _)| {
            let bare = key
                .strip_prefix("https://")
                .or_else(|| key.strip_prefix("http://"))
                .unwrap_or(key);
            let key_host = bare.split('/').next().unwrap_or_default();
            canonical_registry(key_host) == host
        })
        .map(|(_, v)| v)
}

fn run_helper(helper: &str, server: &str) -> Result<Option<Credential>, Error> {
    let valid = !helper.is_empty()
        && helper
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && !helper.starts_with('.');
    if !valid {
        return Err(helper_error(
            helper,
            server,
            "the helper name is not a plain program name",
        ));
    }
    let program = format!("docker-credential-{helper}");
    run_helper_program(OsStr::new(&program), helper, server)
}

/// Runs `program get` with `server` on stdin, following the docker-credential-helpers protocol:
/// JSON `{"Username","Secret"}` on success, "credentials not found" on stdout when it has none.
fn run_helper_program(
    program: &OsStr,
    helper: &str,
    server: &str,
) -> Result<Option<Credential>, Error> {
    let mut child = Command::new(program)
        .arg("get")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| helper_error(helper, server, &format!("failed to start it: {e}")))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A helper that exits without reading stdin closes the pipe; its exit status tells more.
        match stdin.write_all(server.as_bytes()) {
            Err(e) if e.kind() != ErrorKind::BrokenPipe => {
                return Err(helper_error(
                    helper,
                    server,
                    &format!("failed to write: {e}"),
                ));
            }
            _ => {}
        }
    }
    let output = child
        .wait_with_output()
        .map_err(|e| helper_error(helper, server, &format!("failed to wait for it: {e}")))?;
    if !output.status.success() {
        let stdout = String::from_utf8_lossy(&output.stdout);
        if stdout.contains("credentials not found") {
            return Ok(None);
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let said = stderr
            .lines()
            .chain(stdout.lines())
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim()
            .chars()
            .take(200)
            .collect::<String>();
        return Err(helper_error(
            helper,
            server,
            &format!("it exited with {}: {said}", output.status),
        ));
    }
    // The JSON holds the secret, so a parse error reports only where it failed.
    let answer: HelperAnswer = serde_json::from_slice(&output.stdout).map_err(|e| {
        helper_error(
            helper,
            server,
            &format!(
                "its answer is not the helper JSON (line {}, column {})",
                e.line(),
                e.column()
            ),
        )
    })?;
    if answer.secret.is_empty() {
        return Ok(None);
    }
    if answer.username == "<token>" {
        return Ok(Some(Credential::IdentityToken(answer.secret)));
    }
    Ok(Some(Credential::Basic {
        username: answer.username,
        password: answer.secret,
    }))
}

fn helper_error(helper: &str, server: &str, reason: &str) -> Error {
    Error::CredentialHelper {
        helper: helper.to_owned(),
        server: server.to_owned(),
        reason: reason.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn load(json: &str) -> (tempfile::TempDir, Credentials) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.json"), json).unwrap();
        let creds = Credentials::load(dir.path()).unwrap();
        (dir, creds)
    }

    fn basic(user: &str, password: &str) -> Option<Credential> {
        Some(Credential::Basic {
            username: user.into(),
            password: Secret::new(password),
        })
    }

    fn no_helper(helper: &str, _: &str) -> Result<Option<Credential>, Error> {
        panic!("helper {helper} should not run")
    }

    #[test]
    fn missing_config_means_anonymous() {
        let dir = tempfile::tempdir().unwrap();
        let creds = Credentials::load(dir.path()).unwrap();
        assert_eq!(creds.get("ghcr.io").unwrap(), None);
    }

    #[test]
    fn auths_base64_and_plain_fields() {
        let auth = STANDARD.encode("alice:s3cr:et");
        let (_dir, creds) = load(&format!(
            r#"{{"auths":{{
                "ghcr.io":{{"auth":"{auth}"}},
                "https://index.docker.io/v1/":{{"username":"bob","password":"pw"}},
                "http://127.0.0.1:5000/v2/":{{"identitytoken":"refresh-me"}},
                "quay.io":{{}}
            }}}}"#
        ));
        assert_eq!(
            creds.lookup("ghcr.io", no_helper).unwrap(),
            basic("alice", "s3cr:et")
        );
        for hub in ["docker.io", "registry-1.docker.io", "index.docker.io"] {
            assert_eq!(creds.lookup(hub, no_helper).unwrap(), basic("bob", "pw"));
        }
        assert_eq!(
            creds.lookup("127.0.0.1:5000", no_helper).unwrap(),
            Some(Credential::IdentityToken(Secret::new("refresh-me")))
        );
        assert_eq!(creds.lookup("quay.io", no_helper).unwrap(), None);
        assert_eq!(creds.lookup("127.0.0.1:5001", no_helper).unwrap(), None);
    }

    #[test]
    fn helpers_and_store_are_consulted_in_order() {
        let (_dir, creds) = load(
            r#"{"auths":{"ghcr.io":{"auth":"Ym9iOnB3"},"quay.io":{}},
                "credHelpers":{"ghcr.io":"gh","gcr.io":"gcloud"},
                "credsStore":"desktop"}"#,
        );
        let calls = RefCell::new(Vec::new());
        let helper = |name: &str, server: &str| {
            calls.borrow_mut().push(format!("{name} {server}"));
            Ok(basic("h", "x"))
        };
        creds.lookup("ghcr.io", helper).unwrap();
        creds.lookup("quay.io", helper).unwrap();
        creds.lookup("docker.io", helper).unwrap();
        assert_eq!(
            *calls.borrow(),
            [
                "gh ghcr.io",
                "desktop quay.io",
                "desktop https://index.docker.io/v1/"
            ]
        );
    }

    #[test]
    fn malformed_auth_reports_without_the_value() {
        let (_dir, creds) = load(r#"{"auths":{"ghcr.io":{"auth":"bm9jb2xvbg=="}}}"#);
        let err = creds.get("ghcr.io").unwrap_err();
        let text = format!("{err} {err:?}");
        assert!(text.contains("user:password"), "{text}");
        assert!(
            !text.contains("nocolon") && !text.contains("bm9jb2xvbg"),
            "{text}"
        );
    }

    #[test]
    fn malformed_config_names_the_file() {
        let (dir, _) = load("{}");
        std::fs::write(dir.path().join("config.json"), "{not json").unwrap();
        let err = Credentials::load(dir.path()).unwrap_err();
        assert!(err.to_string().contains("config.json"), "{err}");
    }

    #[test]
    fn debug_output_redacts_every_secret() {
        let (_dir, creds) = load(
            r#"{"auths":{"a.io":{"auth":"dTpTRUNSRVQtQQ==","password":"SECRET-B","identitytoken":"SECRET-C"}}}"#,
        );
        let text = format!("{creds:?} {:?}", creds.get("a.io").unwrap());
        assert!(!text.contains("SECRET"), "{text}");
        assert!(!text.contains("dTpTRUNSRVQtQQ"), "{text}");
    }

    /// A helper script at a fresh path: rewriting one path that was just executed invites
    /// "text file busy" when another test thread forks at the wrong moment.
    fn script(dir: &Path, body: &str) -> PathBuf {
        static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let path = dir.join(format!("docker-credential-test{n}"));
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn helper_protocol_answers() {
        let dir = tempfile::tempdir().unwrap();
        let run = |body: &str| {
            let program = script(dir.path(), body);
            run_helper_program(program.as_os_str(), "test", "ghcr.io")
        };
        // The server arrives on stdin and comes back as the user name.
        let got = run(
            r#"read -r s; printf '{"ServerURL":"%s","Username":"%s","Secret":"pw"}' "$s" "$s""#,
        );
        assert_eq!(got.unwrap(), basic("ghcr.io", "pw"));
        let got = run(r#"printf '{"Username":"<token>","Secret":"rt"}'"#);
        assert_eq!(
            got.unwrap(),
            Some(Credential::IdentityToken(Secret::new("rt")))
        );
        let got = run("echo 'credentials not found in native keychain'; exit 1");
        assert_eq!(got.unwrap(), None);
        let err = run("echo 'keychain locked' >&2; exit 3").unwrap_err();
        assert!(err.to_string().contains("keychain locked"), "{err}");
        let err = run(r#"printf '{"Secret":"LEAKED'"#).unwrap_err();
        assert!(!format!("{err} {err:?}").contains("LEAKED"), "{err:?}");
    }

    #[test]
    fn helper_names_cannot_be_paths() {
        for bad in ["../evil", "a/b", "", ".hidden", "x y"] {
            let err = run_helper(bad, "ghcr.io").unwrap_err();
            assert!(err.to_string().contains("plain program name"), "{err}");
        }
        let err = run_helper("revendor-test-no-such-helper", "ghcr.io").unwrap_err();
        assert!(err.to_string().contains("failed to start"), "{err}");
    }
}
