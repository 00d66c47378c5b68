//! A token server for the registry's `auth: token:` mode: it answers the Bearer flow with RS256
//! JWTs signed by `openssl dgst -sha256 -sign` under a self-signed certificate the registry
//! trusts (`rootcertbundle`), sent in the JWT's `x5c` header.
//!
//! Policy: `USER`/`PASSWORD` (Basic) or `IDENTITY_TOKEN` (refresh-token grant) get every action
//! asked for; anonymous callers get `pull` on repositories outside `private/`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::json;

use crate::support::server::{Request, Response, Server, form_pairs};

pub const SERVICE: &str = "revendor-test-registry";
pub const ISSUER: &str = "revendor-test-issuer";
pub const USER: &str = "tokenuser";
pub const PASSWORD: &str = "token-PASSWORD-do-not-print";
pub const IDENTITY_TOKEN: &str = "refresh-IDENTITY-do-not-print";

static JTI: AtomicU64 = AtomicU64::new(0);

#[derive(Clone)]
struct Signer {
    key: PathBuf,
    cert_der_base64: String,
}

/// A running token server; the registry's `rootcertbundle` is [`TokenServer::cert`].
pub struct TokenServer {
    server: Server,
    signer: Signer,
    pub cert: PathBuf,
}

impl TokenServer {
    /// Generates a key and certificate in `dir` and starts serving `/token`.
    pub fn start(dir: &Path) -> TokenServer {
        let key = dir.join("token.key");
        let cert = dir.join("token.crt");
        let status = Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            ])
            .args(["-subj", "/CN=revendor-test-token"])
            .arg("-keyout")
            .arg(&key)
            .arg("-out")
            .arg(&cert)
            .stderr(Stdio::null())
            .status()
            .expect("openssl runs");
        assert!(status.success(), "openssl failed to make a certificate");
        let pem = std::fs::read_to_string(&cert).unwrap();
        let cert_der_base64: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
        let signer = Signer {
            key,
            cert_der_base64,
        };
        let server = {
            let signer = signer.clone();
            Server::start(move |request| handle(&signer, request))
        };
        TokenServer {
            server,
            signer,
            cert,
        }
    }

    pub fn realm(&self) -> String {
        format!("http://{}/token", self.server.host())
    }

    /// A token for `actions` on `repository`, minted without a request (for test pushes).
    pub fn mint(&self, repository: &str, actions: &[&str]) -> String {
        self.signer
            .sign(USER, &[(repository.to_owned(), actions.join(","))])
    }
}

fn handle(signer: &Signer, request: &Request) -> Response {
    if request.path() != "/token" {
        return Response::new(404);
    }
    let form = if request.method == "POST" {
        form_pairs(std::str::from_utf8(&request.body).unwrap_or_default())
    } else {
        request.query_pairs()
    };
    let account = match (request.header("authorization"), request.method.as_str()) {
        (Some(header), _) => {
            let decoded = header
                .strip_prefix("Basic ")
                .and_then(|b| STANDARD.decode(b).ok())
                .unwrap_or_default();
            if decoded != format!("{USER}:{PASSWORD}").as_bytes() {
                return Response::new(401).body(r#"{"details":"incorrect username or password"}"#);
            }
            Some(USER)
        }
        (None, "POST") => {
            let grant = form
                .iter()
                .any(|(k, v)| k == "grant_type" && v == "refresh_token");
            let token = form
                .iter()
                .any(|(k, v)| k == "refresh_token" && v == IDENTITY_TOKEN);
            if !(grant && token) {
                return Response::new(401).body(r#"{"details":"invalid refresh token"}"#);
            }
            Some(USER)
        }
        (None, _) => None,
    };
    let mut access = Vec::new();
    for (key, scope) in &form {
        if key != "scope" {
            continue;
        }
        let mut parts = scope.splitn(3, ':');
        let (kind, name, actions) = (parts.next(), parts.next(), parts.next());
        let (Some("repository"), Some(name), Some(actions)) = (kind, name, actions) else {
            continue;
        };
        let granted = if account.is_some() {
            actions.to_owned()
        } else if !name.starts_with("private/") && actions.split(',').any(|a| a == "pull") {
            "pull".to_owned()
        } else {
            continue;
        };
        access.push((name.to_owned(), granted));
    }
    let token = signer.sign(account.unwrap_or(""), &access);
    Response::new(200)
        .header("Content-Type", "application/json")
        .body(json!({"token": token, "access_token": token, "expires_in": 300}).to_string())
}

impl Signer {
    fn sign(&self, subject: &str, access: &[(String, String)]) -> String {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let header = json!({"alg": "RS256", "typ": "JWT", "x5c": [self.cert_der_base64]});
        let access: Vec<_> = access
            .iter()
            .map(|(name, actions)| {
                json!({"type": "repository", "name": name, "actions": actions.split(',').collect::<Vec<_>>()})
            })
            .collect();
        let claims = json!({
            "iss": ISSUER, "sub": subject, "aud": SERVICE,
            "exp": now + 300, "nbf": now - 10, "iat": now,
            "jti": format!("{now}-{}", JTI.fetch_add(1, Ordering::SeqCst)),
            "access": access,
        });
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let mut child = Command::new("openssl")
            .args(["dgst", "-sha256", "-sign"])
            .arg(&self.key)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("openssl runs");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "openssl failed to sign");
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(output.stdout))
    }
}
