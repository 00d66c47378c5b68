//! A test certificate authority, made fresh in each test, for servers that speak TLS.
//!
//! [`TestCa::new`] makes a CA and a server certificate it signs for `127.0.0.1` and
//! `localhost`, and writes the CA's certificate to a PEM file; [`TestCa::with_leaf`] makes one
//! whose server certificate is wrong in one way a real server's can be ([`Leaf`]). A run trusts the CA the way a
//! user on Linux adds one: `SSL_CERT_FILE` naming that file ([`TestCa::trust`]); a run given
//! another CA's file is a client that does not trust this server. The server side is rustls
//! on the `ring` provider, named here so the test never leans on a process-wide default.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use rustls::ServerConfig;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// The server certificate a [`TestCa`] signs.
#[derive(Clone, Copy)]
pub enum Leaf {
    /// For `127.0.0.1` and `localhost`, valid now.
    Loopback,
    /// For loopback, but valid only during 2020: expired.
    Expired,
    /// Valid now, but for `other.example` only: another name than the URL's.
    OtherName,
}

/// A CA, the server configuration it vouches for, and its certificate as a file.
pub struct TestCa {
    config: Arc<ServerConfig>,
    ca_file: PathBuf,
    _dir: tempfile::TempDir,
}

impl TestCa {
    /// A new CA named `name`, its server certificate for loopback, and its PEM file.
    pub fn new(name: &str) -> TestCa {
        TestCa::with_leaf(name, Leaf::Loopback)
    }

    /// A new CA named `name`, its server certificate as `leaf` says, and its PEM file.
    pub fn with_leaf(name: &str, leaf: Leaf) -> TestCa {
        let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name.push(DnType::CommonName, name);
        ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca_key = KeyPair::generate().expect("CA key");
        let issuer = CertifiedIssuer::self_signed(ca, ca_key).expect("self-signed CA");

        let names = match leaf {
            Leaf::Loopback | Leaf::Expired => vec!["127.0.0.1".to_string(), "localhost".into()],
            Leaf::OtherName => vec!["other.example".to_string()],
        };
        let expired = matches!(leaf, Leaf::Expired);
        let mut leaf = CertificateParams::new(names).expect("server certificate parameters");
        if expired {
            leaf.not_before = rcgen::date_time_ymd(2020, 1, 1);
            leaf.not_after = rcgen::date_time_ymd(2021, 1, 1);
        }
        leaf.distinguished_name
            .push(DnType::CommonName, "localhost");
        leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let leaf_key = KeyPair::generate().expect("server key");
        let leaf_cert = leaf
            .signed_by(&leaf_key, &issuer)
            .expect("server certificate");

        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
        let chain = vec![leaf_cert.der().clone(), CertificateDer::clone(issuer.der())];
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("TLS versions of the ring provider")
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .expect("server certificate and key");

        let dir = tempfile::tempdir().expect("dir for the CA file");
        let ca_file = dir.path().join("ca.pem");
        std::fs::write(&ca_file, issuer.pem()).expect("write the CA file");
        TestCa {
            config: Arc::new(config),
            ca_file,
            _dir: dir,
        }
    }

    /// The rustls configuration a TLS server presents this CA's certificate with.
    pub fn server_config(&self) -> Arc<ServerConfig> {
        Arc::clone(&self.config)
    }

    /// The CA's certificate, PEM.
    pub fn ca_file(&self) -> &Path {
        &self.ca_file
    }

    /// The environment that makes a run trust this CA and nothing else: `SSL_CERT_FILE`.
    pub fn trust(&self) -> (&'static str, String) {
        ("SSL_CERT_FILE", self.ca_file.display().to_string())
    }
}

/// A reqwest client builder for a test that sends requests itself: reqwest is built without a
/// crypto provider, so this installs ring first, as revendor does before its own client.
pub fn client_builder() -> reqwest::blocking::ClientBuilder {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::blocking::Client::builder()
}
