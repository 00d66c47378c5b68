//! Test harness for the registry client: the real CNCF registry (`/usr/bin/docker-registry`)
//! on a free loopback port, without auth, with htpasswd Basic auth, or with token auth backed by
//! [`token::TokenServer`]; content to push into it; and a fake registry for faults the real one
//! will not produce on demand. Both servers run on the one test server, `support::server`, so
//! a test crate that uses this module declares `mod support;` too.

pub mod content;
pub mod fake;
pub mod token;

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use revendor::image::Digest;
use revendor::registry::{Client, Credentials};

use content::{Image, Item, MultiArch};
use token::TokenServer;

pub const BINARY: &str = "/usr/bin/docker-registry";
pub const HT_USER: &str = "alice";
pub const HT_PASSWORD: &str = "basic-PASSWORD-do-not-print";

/// Whether the real registry can run here; prints the skip note when it cannot.
pub fn have_registry(test: &str) -> bool {
    let found = Path::new(BINARY).exists();
    // In CI a missing registry is a broken install step, not a reason to skip.
    assert!(
        found || std::env::var_os("CI").is_none(),
        "CI is set but {BINARY} is missing (see scripts/install-test-deps)"
    );
    if !found {
        eprintln!(
            "note: skipping {test}: {BINARY} is not installed (Debian package docker-registry)"
        );
    }
    found
}

/// A client with short backoffs so retry tests stay fast.
pub fn client(credentials: Credentials) -> Client {
    Client::builder()
        .retries(2)
        .backoff(Duration::from_millis(20), Duration::from_millis(100))
        .timeout(Duration::from_secs(10))
        .credentials(credentials)
        .build()
}

/// Writes `config.json` with `body` into a new Docker config dir and loads it.
pub fn docker_config(dir: &Path, body: &serde_json::Value) -> Credentials {
    let config = dir.join("docker-config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.json"), body.to_string()).unwrap();
    Credentials::load(&config).unwrap()
}

/// How the registry authenticates.
pub enum Auth {
    Anonymous,
    Htpasswd,
    Token,
}

/// A running registry; killed and waited for on drop.
pub struct Registry {
    /// `127.0.0.1:PORT`.
    pub host: String,
    pub dir: tempfile::TempDir,
    child: Child,
    token: Option<TokenServer>,
    http: reqwest::blocking::Client,
    auth: Auth,
}

impl Registry {
    pub fn start(auth: Auth) -> Registry {
        Registry::start_with(auth, false)
    }

    /// [`Registry::start`] with the access log on, in [`Registry::log`]: one line per request
    /// (`"HEAD /v2/… HTTP/1.1" 200`), for counting what a run asked (`benches/check.rs`).
    pub fn start_logged(auth: Auth) -> Registry {
        Registry::start_with(auth, true)
    }

    fn start_with(auth: Auth, access_log: bool) -> Registry {
        let dir = tempfile::tempdir().unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let host = format!("127.0.0.1:{port}");
        let root = dir.path().join("data");
        let mut config = format!(
            "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: {}\n\
             storage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\n\
             http:\n  addr: {host}\n  secret: revendor-test\n",
            !access_log,
            root.display()
        );
        let token = match auth {
            Auth::Anonymous => None,
            Auth::Htpasswd => {
                let htpasswd = dir.path().join("htpasswd");
                let out = Command::new("htpasswd")
                    .args(["-Bbn", HT_USER, HT_PASSWORD])
                    .output()
                    .expect("htpasswd (apache2-utils) runs");
                assert!(out.status.success(), "htpasswd failed");
                std::fs::write(&htpasswd, out.stdout).unwrap();
                config.push_str(&format!(
                    "auth:\n  htpasswd:\n    realm: revendor-test\n    path: {}\n",
                    htpasswd.display()
                ));
                None
            }
            Auth::Token => {
                let server = TokenServer::start(dir.path());
                config.push_str(&format!(
                    "auth:\n  token:\n    realm: {}\n    service: {}\n    issuer: {}\n    rootcertbundle: {}\n",
                    server.realm(),
                    token::SERVICE,
                    token::ISSUER,
                    server.cert.display()
                ));
                Some(server)
            }
        };
        let config_path = dir.path().join("config.yml");
        std::fs::write(&config_path, config).unwrap();
        let log = std::fs::File::create(dir.path().join("registry.log")).unwrap();
        let child = Command::new(BINARY)
            .arg("serve")
            .arg(&config_path)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("docker-registry starts");
        let mut registry = Registry {
            host,
            dir,
            child,
            token,
            http: crate::support::tls::client_builder()
                .build()
                .expect("build the HTTP client"),
            auth,
        };
        registry.wait_ready();
        registry
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("docker-registry exited with {status}:\n{}", self.log());
            }
            if TcpStream::connect(&self.host).is_ok() {
                return;
            }
            thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "docker-registry did not listen on {}:\n{}",
            self.host,
            self.log()
        );
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("registry.log")).unwrap_or_default()
    }

    fn authorization(&self, repository: &str) -> Option<String> {
        match (&self.auth, &self.token) {
            (Auth::Htpasswd, _) => Some(format!(
                "Basic {}",
                STANDARD.encode(format!("{HT_USER}:{HT_PASSWORD}"))
            )),
            (Auth::Token, Some(token)) => Some(format!(
                "Bearer {}",
                token.mint(repository, &["pull", "push"])
            )),
            _ => None,
        }
    }

    fn request(
        &self,
        method: reqwest::Method,
        url: &str,
        repository: &str,
    ) -> reqwest::blocking::RequestBuilder {
        let builder = self.http.request(method, url);
        match self.authorization(repository) {
            Some(value) => builder.header("Authorization", value),
            None => builder,
        }
    }

    /// Uploads a blob monolithically: POST to start, PUT with the digest to finish.
    pub fn push_blob(&self, repository: &str, blob: &Item) {
        let start = format!("http://{}/v2/{repository}/blobs/uploads/", self.host);
        let response = self
            .request(reqwest::Method::POST, &start, repository)
            .send()
            .unwrap();
        assert_eq!(
            response.status(),
            202,
            "start upload: {}",
            response.text().unwrap_or_default()
        );
        let location = response.headers()["Location"].to_str().unwrap().to_owned();
        let location = if location.starts_with('/') {
            format!("http://{}{location}", self.host)
        } else {
            location
        };
        let separator = if location.contains('?') { '&' } else { '?' };
        let url = format!("{location}{separator}digest={}", blob.digest);
        let response = self
            .request(reqwest::Method::PUT, &url, repository)
            .header("Content-Type", "application/octet-stream")
            .body(blob.bytes.clone())
            .send()
            .unwrap();
        assert_eq!(
            response.status(),
            201,
            "finish upload: {}",
            response.text().unwrap_or_default()
        );
    }

    /// PUTs a manifest under `reference` (a tag or its digest).
    pub fn push_manifest(&self, repository: &str, reference: &str, manifest: &Item) -> Digest {
        let url = format!("http://{}/v2/{repository}/manifests/{reference}", self.host);
        let response = self
            .request(reqwest::Method::PUT, &url, repository)
            .header("Content-Type", &manifest.media_type)
            .body(manifest.bytes.clone())
            .send()
            .unwrap();
        assert_eq!(
            response.status(),
            201,
            "push manifest: {}",
            response.text().unwrap_or_default()
        );
        manifest.digest.clone()
    }

    /// Pushes a single-platform image's blobs and manifest under `tag`.
    pub fn push_image(&self, repository: &str, tag: &str, image: &Image) -> Digest {
        for blob in &image.blobs {
            self.push_blob(repository, blob);
        }
        self.push_manifest(repository, tag, &image.manifest)
    }

    /// Pushes every child by digest, then the index under `tag`.
    pub fn push_multi_arch(&self, repository: &str, tag: &str, image: &MultiArch) -> Digest {
        for child in image.manifests() {
            self.push_image(repository, &child.manifest.digest.to_string(), child);
        }
        self.push_manifest(repository, tag, &image.index)
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
