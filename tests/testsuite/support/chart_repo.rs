//! Helm chart repositories for the tests: charts packaged and indexed by Helm v4's own engine
//! (tests/tools/revendor-test-helm.py over helm-python-sdk), served from a directory by the test
//! HTTP server with ETags, as a static chart repository (GitHub Pages, S3) serves them; and
//! charts pushed into an OCI registry by Helm's own client.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::server::{Response, Server};

/// The Python with helm-python-sdk (scripts/install-test-deps installs it).
fn python() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/venv/bin/python")
}

/// Runs the Helm test tool; panics with Helm's message when it fails.
pub fn helm(args: &[&str]) -> String {
    let tool = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/revendor-test-helm.py");
    let out = Command::new(python())
        .arg(tool)
        .args(args)
        .output()
        .expect("run the Helm test tool (make test-deps installs helm-python-sdk)");
    assert!(
        out.status.success(),
        "helm {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Packages `files` as chart `name` with Helm into `dest`; returns the archive's path.
pub fn package_files(name: &str, files: &BTreeMap<String, Vec<u8>>, dest: &Path) -> PathBuf {
    let scratch = tempfile::tempdir().unwrap();
    let chart = scratch.path().join(name);
    write_chart(&chart, files);
    PathBuf::from(helm(&[
        "package",
        chart.to_str().unwrap(),
        dest.to_str().unwrap(),
    ]))
}

/// Helm's own `push` of `files` (chart `name`) to `oci://<host>/<path>`, plain http to this
/// machine: the chart lands at `<path>/<name>:<version with + as _>`.
pub fn push_files(name: &str, files: &BTreeMap<String, Vec<u8>>, remote: &str) {
    let scratch = tempfile::tempdir().unwrap();
    let archive = package_files(name, files, scratch.path());
    helm(&["push", archive.to_str().unwrap(), remote]);
}

/// Helm's own `pull --untar` of `reference` (`oci://host/path/chart`) at `version`: the
/// chart's files, path → bytes.
pub fn helm_pull_oci(reference: &str, version: &str) -> BTreeMap<String, Vec<u8>> {
    let out = tempfile::tempdir().unwrap();
    helm(&[
        "pull",
        reference,
        "--version",
        version,
        "--untar-dir",
        out.path().to_str().unwrap(),
    ]);
    let name = reference.rsplit('/').next().unwrap();
    super::package::read_tree(&out.path().join(name))
}

/// Writes `files` (path → contents) as a chart directory under `dir`.
pub fn write_chart(dir: &Path, files: &BTreeMap<String, Vec<u8>>) {
    for (path, bytes) in files {
        let at = dir.join(path);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(at, bytes).unwrap();
    }
}

/// A chart repository: a directory of archives and its index.yaml, served over HTTP.
pub struct ChartRepo {
    dir: tempfile::TempDir,
    server: Server,
}

impl ChartRepo {
    /// An empty repository, served at `<url>` (its index at `<url>/index.yaml`).
    pub fn start() -> ChartRepo {
        let dir = tempfile::tempdir().expect("repository dir");
        let root = dir.path().to_path_buf();
        let server = Server::start(move |req| serve(&root, req));
        ChartRepo { dir, server }
    }

    /// The repository's URL, no trailing slash.
    pub fn url(&self) -> String {
        format!("{}/charts", self.server.url())
    }

    /// The server, for its request log.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The directory the repository serves.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Packages the chart directory `chart` with Helm into the repository and re-indexes it
    /// (Helm's `repo index`: relative URLs, digests); returns the archive's file name.
    pub fn publish(&self, chart: &Path) -> String {
        let archive = helm(&[
            "package",
            chart.to_str().unwrap(),
            self.dir().to_str().unwrap(),
        ]);
        helm(&["repo-index", self.dir().to_str().unwrap()]);
        Path::new(&archive)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    /// Publishes `files` as a chart (written to a scratch directory named after the chart).
    pub fn publish_files(&self, name: &str, files: &BTreeMap<String, Vec<u8>>) -> String {
        let scratch = tempfile::tempdir().unwrap();
        let chart = scratch.path().join(name);
        write_chart(&chart, files);
        self.publish(&chart)
    }

    /// Helm's own `pull --untar` of `chart` at `version` from this repository: the chart's
    /// files, path → bytes.
    pub fn helm_pull(&self, chart: &str, version: &str) -> BTreeMap<String, Vec<u8>> {
        let out = tempfile::tempdir().unwrap();
        helm(&[
            "pull",
            chart,
            "--repo",
            &self.url(),
            "--version",
            version,
            "--untar-dir",
            out.path().to_str().unwrap(),
        ]);
        super::package::read_tree(&out.path().join(chart))
    }
}

/// `/charts/<file>` from `root`, with an ETag of its bytes and 304 for a matching
/// If-None-Match.
fn serve(root: &Path, req: &super::server::Request) -> Response {
    let Some(name) = req.path().strip_prefix("/charts/") else {
        return Response::new(404);
    };
    if name.contains("..") || name.contains('/') {
        return Response::new(404);
    }
    let Ok(bytes) = std::fs::read(root.join(name)) else {
        return Response::new(404);
    };
    let etag = format!("\"{}\"", super::github::sha256_hex(&bytes));
    if req.header("if-none-match") == Some(etag.as_str()) {
        return Response::new(304).header("etag", etag);
    }
    Response::bytes(200, "application/octet-stream", bytes).header("etag", etag)
}
