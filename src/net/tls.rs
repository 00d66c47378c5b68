//! The TLS setup of the one HTTP client: rustls on ring, the platform's CA store loaded at the
//! first certificate a server presents, not when the client is built.
//!
//! reqwest's own rustls setup reads and parses the whole CA store (`/etc/ssl/certs`, or
//! `SSL_CERT_FILE` / `SSL_CERT_DIR`) as the client is built, so a run whose requests are all
//! plain http to loopback (a local registry, the tests) paid for it too, and a run with a
//! token built it twice (one client for requests with credentials, one without). [`config`]
//! hands reqwest a rustls configuration whose verifier, [`FirstUse`], is the same platform
//! verifier reqwest would have built, made once per process when the first certificate is to
//! be verified. A store that cannot be read is then an error of the first https request.

use std::sync::{Arc, LazyLock, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use rustls_platform_verifier::Verifier;

/// The crypto of every connection: ring (lighter to build than aws-lc-rs; README, "Build and
/// binary").
static PROVIDER: LazyLock<Arc<CryptoProvider>> =
    LazyLock::new(|| Arc::new(rustls::crypto::ring::default_provider()));

/// The platform verifier of the process, built at the first certificate to verify.
static VERIFIER: OnceLock<Result<Verifier, rustls::Error>> = OnceLock::new();

/// The rustls configuration of every client: ring, TLS 1.2 and 1.3, [`FirstUse`] roots.
pub(super) fn config() -> Result<ClientConfig, rustls::Error> {
    Ok(ClientConfig::builder_with_provider(Arc::clone(&PROVIDER))
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(FirstUse))
        .with_no_client_auth())
}

/// The platform verifier, built (the CA store loaded) at the first certificate it checks.
#[derive(Debug)]
struct FirstUse;

impl ServerCertVerifier for FirstUse {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match VERIFIER.get_or_init(|| Verifier::new(Arc::clone(&PROVIDER))) {
            Ok(verifier) => verifier.verify_server_cert(
                end_entity,
                intermediates,
                server_name,
                ocsp_response,
                now,
            ),
            Err(e) => Err(e.clone()),
        }
    }

    // The signatures of the handshake need the provider's algorithms, not the roots.
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &PROVIDER.signature_verification_algorithms;
        verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &PROVIDER.signature_verification_algorithms;
        verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        PROVIDER
            .signature_verification_algorithms
            .supported_schemes()
    }
}
