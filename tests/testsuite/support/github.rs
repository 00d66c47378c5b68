//! A stand-in for GitHub on loopback ports: the REST API, raw files, archives and release assets.
//!
//! 1. [`GitHub::start`] opens three servers, one per origin, like the real hosts
//!    (`api.github.com`, `github.com` with its download hosts, `raw.githubusercontent.com`);
//!    [`GitHub::env`] hands their URLs to the tool as `GITHUB_API_URL`, `GITHUB_SERVER_URL`
//!    and `REVENDOR_RAW_URL`.
//! 2. Tests describe repositories through [`Repo`]: commits hold files, tags and branches point
//!    at commits, releases point at tags and carry assets.
//! 3. Every request goes through the same steps: injected faults, then the origin's routes
//!    (with GitHub's `User-Agent`, token and rate-limit rules on the API), then an `ETag` and
//!    `304` on API, raw and release-asset answers (and archives, with
//!    [`GitHub::archive_etags`]), then the request log.
//!
//! `git/trees/{ref}?recursive=1` answers as GitHub does: real git blob and tree ids, `blob`
//! and `tree` entries with their modes (`100755` for executables, `120000` for symlinks,
//! `040000` for directories),
//! and `truncated` past a limit a test sets ([`GitHub::truncate_trees`]).
//!
//! What is deliberately like the real thing, because tools get it wrong: pagination links point
//! at `/repositories/{id}/...` (follow them, do not rebuild them); archive and asset downloads
//! answer `302` to another path (follow redirects); archives begin with a `pax_global_header`
//! entry and strip the `v` of a tag in their top directory; drafts are listed only to requests
//! that carry a token; the API refuses requests without a `User-Agent`.
//!
//! [`GitHub::start_with_lookalike`] adds a fourth server whose URL merely starts with the API's
//! (`…:4123` and `…:41234`) and serves the same API: pagination links ([`GitHub::link_base`])
//! and redirects ([`GitHub::redirect_next`]) can point there, to show that a credential does not
//! follow a string prefix. It also serves release assets (`/_release-assets/…`), so a
//! download redirected there shows that the token stays home.
//!
//! Pull requests: `GET /repos/{o}/{r}` tells a token's holder its `permissions`;
//! `GET|POST /repos/{o}/{r}/pulls` (filtered by `head`; a `POST` into a branch the repository
//! does not have is GitHub's 422), `PATCH …/pulls/{n}`, `GET|POST …/issues/{n}/comments`, and
//! `POST …/issues/{n}/labels`.
//! [`GitHub::pulls`] and [`GitHub::comments`] show what a run left behind.
//!
//! Issues (`issues.rs`): `GET /repos/{o}/{r}/issues` by `state` and `labels`, pull requests
//! among them as GitHub lists them, newest first, paginated with links that keep the filter;
//! `POST …/issues` and `PATCH …/issues/{n}`. Issues and pull requests share their numbers.
//! [`GitHub::issues`] shows what a run left behind.
//!
//! A repository may also be served to git clients ([`Repo::serve_git`]): the server origin then
//! runs `git http-backend` on a local [`GitRepo`], as github.com answers `git clone`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustls::ServerConfig;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

mod gate;
mod issues;

pub use gate::Gate;
pub use issues::Issue;

use super::git::{self, GitRepo};
use super::server::{self, Pace, Request, Response, Server, percent_decode};
use super::tls::TestCa;

/// 2026-01-01T00:00:00Z: the date of commits and first releases nobody gave a date.
const DEFAULT_EPOCH: u64 = 1_767_225_600;
const DAY: u64 = 86_400;
const DOCS: &str = "https://docs.github.com/rest";

/// Which of the three hosts a request reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `GITHUB_API_URL`: the REST API.
    Api,
    /// `GITHUB_SERVER_URL`: archives, release downloads, and the hosts they redirect to.
    Server,
    /// `REVENDOR_RAW_URL`: single files at a ref.
    Raw,
    /// Another host whose URL starts with the API's, serving the same API.
    Lookalike,
}

/// One request as the log keeps it; the `Authorization` value is never kept.
#[derive(Debug, Clone)]
pub struct LoggedRequest {
    /// The host it reached.
    pub origin: Origin,
    /// `GET`, `HEAD`, ...
    pub method: String,
    /// Path and query as sent, e.g. `/repos/o/r/releases?per_page=100`.
    pub target: String,
    /// The origin's URL followed by `target`.
    pub url: String,
    /// Whether an `Authorization` header was sent.
    pub authorization_sent: bool,
    /// The `If-None-Match` header, if the request was conditional.
    pub if_none_match: Option<String>,
    /// The `Accept` header.
    pub accept: Option<String>,
    /// The `User-Agent` header.
    pub user_agent: Option<String>,
    /// The status the server answered.
    pub status: u16,
    /// When the request arrived.
    pub at: std::time::Instant,
}

impl LoggedRequest {
    /// Whether the request carried `If-None-Match`.
    pub fn conditional(&self) -> bool {
        self.if_none_match.is_some()
    }

    /// Whether `prefix` starts the target (`/repos/...`) or the full URL (`http://...`).
    pub fn matches(&self, prefix: &str) -> bool {
        self.target.starts_with(prefix) || self.url.starts_with(prefix)
    }
}

/// A snapshot of the request log, oldest first.
#[derive(Debug, Clone)]
pub struct Requests(Vec<LoggedRequest>);

impl Requests {
    /// The requests whose target or URL starts with `prefix`.
    pub fn matching(&self, prefix: &str) -> Vec<&LoggedRequest> {
        self.0.iter().filter(|r| r.matches(prefix)).collect()
    }

    /// How many requests start with `prefix` (see [`LoggedRequest::matches`]).
    pub fn count(&self, prefix: &str) -> usize {
        self.matching(prefix).len()
    }

    /// The statuses answered to requests starting with `prefix`, in order.
    pub fn statuses(&self, prefix: &str) -> Vec<u16> {
        self.matching(prefix).iter().map(|r| r.status).collect()
    }

    /// The time between consecutive requests starting with `prefix`: the waits of a client
    /// that retries.
    pub fn gaps(&self, prefix: &str) -> Vec<Duration> {
        let at: Vec<_> = self.matching(prefix).iter().map(|r| r.at).collect();
        at.windows(2).map(|w| w[1] - w[0]).collect()
    }

    /// The targets of all requests, in order; handy in assertion messages.
    pub fn targets(&self) -> Vec<&str> {
        self.0.iter().map(|r| r.target.as_str()).collect()
    }
}

impl std::ops::Deref for Requests {
    type Target = [LoggedRequest];

    fn deref(&self) -> &[LoggedRequest] {
        &self.0
    }
}

/// The fake GitHub. Dropping it stops its servers.
pub struct GitHub {
    shared: Arc<Shared>,
    _servers: Vec<Server>,
}

struct Shared {
    urls: Urls,
    state: Mutex<State>,
    log: Mutex<Vec<LoggedRequest>>,
}

struct Urls {
    api: String,
    server: String,
    raw: String,
    lookalike: Option<String>,
}

impl Urls {
    fn of(&self, origin: Origin) -> &str {
        match origin {
            Origin::Api => &self.api,
            Origin::Server => &self.server,
            Origin::Raw => &self.raw,
            Origin::Lookalike => self.lookalike.as_deref().unwrap_or_default(),
        }
    }
}

#[derive(Default)]
struct State {
    repos: BTreeMap<String, RepoState>,
    next_repo_id: u64,
    next_release_id: u64,
    rate_limited_until: Option<SystemTime>,
    api_requests: u64,
    tokens: Vec<String>,
    faults: Vec<Fault>,
    /// Where pagination links point instead of the API, if set.
    link_base: Option<String>,
    /// Whether archives carry an `ETag` (and answer `304`), as codeload does.
    archive_etags: bool,
    /// Most entries a `git/trees` answer lists before it says `truncated`
    /// (GitHub: 100,000 entries or 7 MB).
    tree_limit: Option<usize>,
}

struct Fault {
    prefix: String,
    /// Only requests with this method, when set.
    method: Option<String>,
    kind: FaultKind,
    remaining: usize,
}

#[derive(Clone)]
enum FaultKind {
    Status(u16),
    Hang(Duration),
    /// The normal answer, its body sent slowly.
    Paced(Pace),
    /// A 302 to this base URL followed by the request's target.
    Redirect(String),
    /// The normal answer, once the test releases the gate.
    Hold(Arc<Gate>),
    /// This status with the request headers echoed in the body, as JSON `message` or as text.
    Echo {
        status: u16,
        json: bool,
    },
    /// The normal answer, its body spread over this time in twenty pieces.
    Spread(Duration),
    /// This answer instead of the route's.
    Canned(Response),
    /// The normal answer, the connection closed halfway through its body.
    Cut,
}

struct RepoState {
    id: u64,
    owner: String,
    name: String,
    commits: BTreeMap<String, Commit>,
    tags: BTreeMap<String, Tag>,
    branches: BTreeMap<String, String>,
    releases: Vec<Release>,
    /// A real repository served over smart HTTP at `{server}/{owner}/{repo}.git`.
    git_dir: Option<PathBuf>,
    pulls: Vec<Pull>,
    /// Issues, numbered with the pull requests.
    issues: Vec<Issue>,
    /// Comments on pull requests: (number, body), in the order posted.
    comments: Vec<(u64, String)>,
    /// Whether a token may push here (`permissions.push` of the repository).
    push: bool,
}

/// A pull request as the stand-in keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pull {
    /// Its number.
    pub number: u64,
    /// The branch it merges (`head`, without the owner).
    pub head: String,
    /// The branch it merges into.
    pub base: String,
    /// Its title.
    pub title: String,
    /// Its Markdown body.
    pub body: String,
    /// Its labels, in the order they were first added.
    pub labels: Vec<String>,
}

#[derive(Clone)]
struct Commit {
    files: BTreeMap<String, File>,
    date: u64,
    message: String,
}

#[derive(Clone)]
struct File {
    /// The contents; for a symlink, the path it points at.
    bytes: Vec<u8>,
    mode: Mode,
}

/// A file's git mode.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Regular,
    Executable,
    Symlink,
}

impl Mode {
    /// As a git tree names it.
    fn git(self) -> &'static str {
        match self {
            Mode::Regular => "100644",
            Mode::Executable => "100755",
            Mode::Symlink => "120000",
        }
    }
}

struct Tag {
    commit: String,
    /// The tag object's sha and message, for annotated tags.
    annotation: Option<(String, String)>,
}

/// A release as a test describes it; see [`Repo::release`].
#[derive(Debug, Clone)]
pub struct Release {
    tag: String,
    id: u64,
    name: Option<String>,
    draft: bool,
    prerelease: bool,
    created_at: u64,
    published_at: Option<Option<u64>>,
    target_commitish: String,
    body: Option<String>,
    assets: Vec<Asset>,
}

#[derive(Debug, Clone)]
struct Asset {
    id: u64,
    name: String,
    content_type: String,
    bytes: Vec<u8>,
}

impl Release {
    /// The release title; `None` serializes as `null`, as on releases created without one.
    /// Defaults to the tag name.
    pub fn name(mut self, name: Option<&str>) -> Release {
        self.name = name.map(str::to_string);
        self
    }

    /// A draft is listed only to requests that carry a token, like on GitHub (drafts are
    /// visible to collaborators only), and never counts as latest.
    pub fn draft(mut self, draft: bool) -> Release {
        self.draft = draft;
        self
    }

    /// A prerelease is listed but never counts as latest.
    pub fn prerelease(mut self, prerelease: bool) -> Release {
        self.prerelease = prerelease;
        self
    }

    /// `created_at` as `YYYY-MM-DDTHH:MM:SSZ`; releases are listed newest first by it.
    /// Defaults to a day after the newest release of the repository, so releases registered
    /// later are newer.
    pub fn created_at(mut self, at: &str) -> Release {
        self.created_at = parse_time(at).unwrap_or_else(|| panic!("bad timestamp `{at}`"));
        self
    }

    /// `published_at`; `None` serializes as `null`. Defaults to `created_at`, or `null` for a
    /// draft.
    pub fn published_at(mut self, at: Option<&str>) -> Release {
        self.published_at =
            Some(at.map(|at| parse_time(at).unwrap_or_else(|| panic!("bad timestamp `{at}`"))));
        self
    }

    /// The numeric release id (defaults to a fresh one).
    pub fn id(mut self, id: u64) -> Release {
        self.id = id;
        self
    }

    /// `target_commitish` (defaults to `main`).
    pub fn target_commitish(mut self, target: &str) -> Release {
        self.target_commitish = target.to_string();
        self
    }

    /// The release notes; `None` serializes as `null` (the default).
    pub fn body(mut self, body: Option<&str>) -> Release {
        self.body = body.map(str::to_string);
        self
    }

    /// Attaches an asset, downloadable at `{server}/{owner}/{repo}/releases/download/{tag}/{name}`.
    pub fn asset(mut self, name: &str, bytes: impl Into<Vec<u8>>) -> Release {
        let content_type = if name.ends_with(".tgz") || name.ends_with(".tar.gz") {
            "application/gzip"
        } else {
            "application/octet-stream"
        };
        let id = self.id * 100 + self.assets.len() as u64 + 1;
        self.assets.retain(|a| a.name != name);
        self.assets.push(Asset {
            id,
            name: name.to_string(),
            content_type: content_type.to_string(),
            bytes: bytes.into(),
        });
        self
    }

    /// Attaches an asset and its `{name}.sha256` sidecar holding `<hex>  <name>\n`, the way
    /// containernetworking/plugins publishes checksums.
    pub fn asset_with_sha256(self, name: &str, bytes: impl Into<Vec<u8>>) -> Release {
        let bytes = bytes.into();
        let sidecar = sha256_sidecar(&sha256_hex(&bytes), name);
        self.asset(name, bytes)
            .asset(&format!("{name}.sha256"), sidecar)
    }
}

/// The text of a `.sha256` sidecar: `<hex>  <name>\n`.
pub fn sha256_sidecar(hex: &str, name: &str) -> String {
    format!("{hex}  {name}\n")
}

/// The lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A 40-hex commit id derived from `seed`, stable across runs.
pub fn derived_sha(seed: &str) -> String {
    sha256_hex(seed.as_bytes())[..40].to_string()
}

impl GitHub {
    /// Starts the three servers on free loopback ports.
    pub fn start() -> GitHub {
        GitHub::start_on(server::listen(), None, None)
    }

    /// Starts the three servers over TLS, with a certificate `ca` signed: `https://` URLs.
    pub fn start_tls(ca: &TestCa) -> GitHub {
        GitHub::start_on(server::listen(), None, Some(ca.server_config()))
    }

    /// Starts the three servers and a [`Origin::Lookalike`] whose URL starts with the API's.
    pub fn start_with_lookalike() -> GitHub {
        let (api, lookalike) = server::listen_lookalike();
        GitHub::start_on(api, Some(lookalike), None)
    }

    fn start_on(
        api: TcpListener,
        lookalike: Option<TcpListener>,
        tls: Option<Arc<ServerConfig>>,
    ) -> GitHub {
        let scheme = if tls.is_some() { "https" } else { "http" };
        let url = |listener: &TcpListener| {
            let addr = listener.local_addr().expect("listener address");
            format!("{scheme}://{addr}")
        };
        let mut listeners = vec![
            (Origin::Api, api),
            (Origin::Server, server::listen()),
            (Origin::Raw, server::listen()),
        ];
        listeners.extend(lookalike.map(|l| (Origin::Lookalike, l)));
        let url_of = |origin: Origin| {
            listeners
                .iter()
                .find(|(o, _)| *o == origin)
                .map(|(_, listener)| url(listener))
        };
        let shared = Arc::new(Shared {
            urls: Urls {
                api: url_of(Origin::Api).expect("an API listener"),
                server: url_of(Origin::Server).expect("a server listener"),
                raw: url_of(Origin::Raw).expect("a raw listener"),
                lookalike: url_of(Origin::Lookalike),
            },
            state: Mutex::new(State {
                next_repo_id: 100_000_001,
                next_release_id: 200_000_001,
                ..State::default()
            }),
            log: Mutex::new(Vec::new()),
        });
        let servers = listeners
            .into_iter()
            .map(|(origin, listener)| {
                let shared = Arc::clone(&shared);
                let handler = move |request: &Request| handle(&shared, origin, request);
                match &tls {
                    Some(config) => Server::serve_tls(listener, Arc::clone(config), handler),
                    None => Server::serve(listener, handler),
                }
            })
            .collect();
        GitHub {
            shared,
            _servers: servers,
        }
    }

    /// The value for `GITHUB_API_URL`.
    pub fn api_url(&self) -> String {
        self.shared.urls.api.clone()
    }

    /// The value for `GITHUB_SERVER_URL`.
    pub fn server_url(&self) -> String {
        self.shared.urls.server.clone()
    }

    /// The value for `REVENDOR_RAW_URL`.
    pub fn raw_url(&self) -> String {
        self.shared.urls.raw.clone()
    }

    /// The URL of the [`Origin::Lookalike`] server; only after [`GitHub::start_with_lookalike`].
    pub fn lookalike_url(&self) -> String {
        self.shared
            .urls
            .lookalike
            .clone()
            .expect("the stand-in was started with start_with_lookalike")
    }

    /// Pagination links point at `base` (an origin URL) instead of the API from now on.
    pub fn link_base(&self, base: &str) {
        self.state().link_base = Some(base.to_string());
    }

    /// The bytes `{server}/{repo}/archive/refs/tags/{tag}.tar.gz` serves (after its redirect):
    /// for a test that serves them cut short or changed.
    pub fn archive(&self, full_name: &str, tag: &str) -> Vec<u8> {
        let state = self.state();
        let repo = &state.repos[full_name];
        let sha = repo
            .resolve(tag)
            .unwrap_or_else(|| panic!("`{tag}` is not a ref of {full_name}"));
        let top = format!(
            "{}-{}",
            repo.name,
            archive_label(repo, &format!("refs/tags/{tag}"))
        );
        tarball(&top, sha, &repo.commits[sha])
    }

    /// Archives carry an `ETag` and answer a matching `If-None-Match` with `304` from now on,
    /// as codeload.github.com does; off by default, so request counts of other tests stay.
    pub fn archive_etags(&self, on: bool) {
        self.state().archive_etags = on;
    }

    /// `git/trees` answers list at most `entries` entries from now on and say
    /// `"truncated": true` when there were more, as GitHub does past its
    /// limit.
    pub fn truncate_trees(&self, entries: usize) {
        self.state().tree_limit = Some(entries);
    }

    /// The three variables that point the tool here, for `Command::envs`.
    pub fn env(&self) -> [(&'static str, String); 3] {
        [
            ("GITHUB_API_URL", self.api_url()),
            ("GITHUB_SERVER_URL", self.server_url()),
            ("REVENDOR_RAW_URL", self.raw_url()),
        ]
    }

    /// The repository `owner/name`, created empty on first use (unknown ones answer 404).
    pub fn repo(&self, full_name: &str) -> Repo<'_> {
        let (owner, name) = full_name
            .split_once('/')
            .unwrap_or_else(|| panic!("repository `{full_name}` is not owner/name"));
        let mut state = self.state();
        if !state.repos.contains_key(full_name) {
            let id = state.next_repo_id;
            state.next_repo_id += 1;
            state.repos.insert(
                full_name.to_string(),
                RepoState {
                    id,
                    owner: owner.to_string(),
                    name: name.to_string(),
                    commits: BTreeMap::new(),
                    tags: BTreeMap::new(),
                    branches: BTreeMap::new(),
                    releases: Vec::new(),
                    pulls: Vec::new(),
                    issues: Vec::new(),
                    comments: Vec::new(),
                    push: true,
                    git_dir: None,
                },
            );
        }
        Repo {
            gh: self,
            full_name: full_name.to_string(),
        }
    }

    /// Switches API rate limiting on (for an hour) or off. While on, every API request answers
    /// 403 with `x-ratelimit-remaining: 0` and GitHub's message.
    pub fn rate_limit(&self, on: bool) {
        let hour = Duration::from_secs(3600);
        self.state().rate_limited_until = on.then(|| SystemTime::now() + hour);
    }

    /// Rate-limits the API until `duration` from now; later requests succeed again.
    pub fn rate_limit_for(&self, duration: Duration) {
        self.state().rate_limited_until = Some(SystemTime::now() + duration);
    }

    /// The `x-ratelimit-reset` epoch rate-limited answers carry, if rate limiting is set.
    pub fn rate_limit_reset(&self) -> Option<u64> {
        self.state().rate_limited_until.map(epoch_ceil)
    }

    /// The next `n` requests whose target (or full URL) starts with `prefix` answer `status`
    /// (500, 502, 503, ...); later ones are served normally. The prefix is matched on every
    /// origin: `/owner/repo/` reaches both raw files and archives, a full URL only one.
    pub fn fail_next(&self, prefix: &str, status: u16, n: usize) {
        self.add_fault(prefix, FaultKind::Status(status), n);
    }

    /// Like [`GitHub::fail_next`], for requests with `method` only (a `POST` that opens a pull
    /// request, not the `GET` that looks for one on the same path).
    pub fn fail_next_method(&self, method: &str, prefix: &str, status: u16, n: usize) {
        self.state().faults.push(Fault {
            prefix: prefix.to_string(),
            method: Some(method.to_string()),
            kind: FaultKind::Status(status),
            remaining: n,
        });
    }

    /// The next `n` requests starting with `prefix` are answered normally but only after
    /// `delay`, to drive a client past its timeout. The log records them with the status they
    /// are answered with once the delay is over, whether or not the client still listens.
    pub fn hang_next(&self, prefix: &str, delay: Duration, n: usize) {
        self.add_fault(prefix, FaultKind::Hang(delay), n);
    }

    /// The next request starting with `prefix` is held until the test releases the gate it
    /// gets back ([`Gate::arrived`] says when it is held), then answered normally.
    pub fn hold_next(&self, prefix: &str) -> Arc<Gate> {
        let gate = Arc::new(Gate::default());
        self.add_fault(prefix, FaultKind::Hold(Arc::clone(&gate)), 1);
        gate
    }

    /// The next `n` requests starting with `prefix` are answered normally, but the body is
    /// written one byte per `pause`: a server that trickles, to drive a client past a deadline
    /// that must cover the body too.
    pub fn trickle_next(&self, prefix: &str, pause: Duration, n: usize) {
        self.add_fault(prefix, FaultKind::Paced(Pace::per_byte(pause)), n);
    }

    /// The next `n` requests starting with `prefix` answer `302` to `base` followed by the
    /// request's own target.
    pub fn redirect_next(&self, prefix: &str, base: &str, n: usize) {
        self.add_fault(prefix, FaultKind::Redirect(base.to_string()), n);
    }

    /// The next `n` requests starting with `prefix` answer `status` with every request header
    /// (sorted by name, `Authorization` included) echoed in the body: in a JSON `message` when
    /// `json`, else as plain text, as a misbehaving proxy or debug endpoint would.
    pub fn echo_next(&self, prefix: &str, status: u16, json: bool, n: usize) {
        self.add_fault(prefix, FaultKind::Echo { status, json }, n);
    }

    /// The next `n` requests starting with `prefix` are answered normally, but their bodies
    /// arrive slowly: in twenty pieces spread over `over` (so a progress bar has time to
    /// show). The headers, `Content-Length` included, come at once.
    pub fn throttle_next(&self, prefix: &str, over: Duration, n: usize) {
        self.add_fault(prefix, FaultKind::Spread(over), n);
    }

    /// The next `n` requests starting with `prefix` get `response` instead of the route's
    /// answer: what no real GitHub sends on purpose but a broken proxy, a bug or an attacker
    /// might (malformed JSON, a truncated or hostile archive, a `Link` back to the same page).
    /// ETags are added to it as to the route's answers.
    pub fn respond_next(&self, prefix: &str, response: Response, n: usize) {
        self.add_fault(prefix, FaultKind::Canned(response), n);
    }

    /// The next `n` requests starting with `prefix` are answered normally, but the connection
    /// is closed after half the body (its `Content-Length` announcing all of it).
    pub fn cut_next(&self, prefix: &str, n: usize) {
        self.add_fault(prefix, FaultKind::Cut, n);
    }

    fn add_fault(&self, prefix: &str, kind: FaultKind, remaining: usize) {
        self.state().faults.push(Fault {
            prefix: prefix.to_string(),
            method: None,
            kind,
            remaining,
        });
    }

    /// Registers a valid token. Once any is registered, API requests whose `Authorization`
    /// carries another one answer 401 `Bad credentials`; requests without one stay anonymous.
    pub fn accept_token(&self, token: &str) {
        self.state().tokens.push(token.to_string());
    }

    /// The pull requests opened on `repo` (`owner/name`).
    pub fn pulls(&self, repo: &str) -> Vec<Pull> {
        self.state()
            .repos
            .get(repo)
            .map(|r| r.pulls.clone())
            .unwrap_or_default()
    }

    /// The bodies of the comments on pull request `number` of `repo`, in the order posted.
    pub fn comments(&self, repo: &str, number: u64) -> Vec<String> {
        self.state()
            .repos
            .get(repo)
            .map(|r| {
                r.comments
                    .iter()
                    .filter(|(n, _)| *n == number)
                    .map(|(_, body)| body.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A snapshot of every request so far.
    pub fn requests(&self) -> Requests {
        Requests(lock(&self.shared.log).clone())
    }

    /// Forgets the requests logged so far (e.g. after a setup step).
    pub fn clear_requests(&self) {
        lock(&self.shared.log).clear();
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.shared.state)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A handle on one repository of a [`GitHub`]; every method returns the handle for chaining.
pub struct Repo<'a> {
    gh: &'a GitHub,
    full_name: String,
}

impl Repo<'_> {
    fn with<T>(&self, f: impl FnOnce(&mut RepoState, &mut u64) -> T) -> T {
        let mut state = self.gh.state();
        let state = &mut *state;
        let repo = state
            .repos
            .get_mut(&self.full_name)
            .expect("repositories are created by GitHub::repo");
        f(repo, &mut state.next_release_id)
    }

    /// `owner/name`.
    pub fn full_name(&self) -> &str {
        &self.full_name
    }

    /// A lightweight tag at commit `sha` (the commit is created empty if unknown). Call it
    /// before registering files through the tag: moving a tag away from files registered
    /// through it panics rather than silently hiding them.
    pub fn tag(&self, tag: &str, sha: &str) -> &Self {
        self.with(|repo, _| {
            repo.ensure_retarget_keeps_files(tag, sha);
            repo.ensure_commit(sha);
            repo.tags.insert(
                tag.to_string(),
                Tag {
                    commit: sha.to_string(),
                    annotation: None,
                },
            );
        });
        self
    }

    /// An annotated tag at commit `sha`: `git/ref/tags/{tag}` then names a tag object, which
    /// `git/tags/{sha}` peels to the commit.
    pub fn annotated_tag(&self, tag: &str, sha: &str, message: &str) -> &Self {
        self.with(|repo, _| {
            repo.ensure_retarget_keeps_files(tag, sha);
            repo.ensure_commit(sha);
            let object = derived_sha(&format!("{}@tag-object:{tag}", repo.full_name()));
            repo.tags.insert(
                tag.to_string(),
                Tag {
                    commit: sha.to_string(),
                    annotation: Some((object, message.to_string())),
                },
            );
        });
        self
    }

    /// A branch at commit `sha`.
    pub fn branch(&self, branch: &str, sha: &str) -> &Self {
        self.with(|repo, _| {
            repo.ensure_commit(sha);
            repo.branches.insert(branch.to_string(), sha.to_string());
        });
        self
    }

    /// Makes a token's `permissions.push` on this repository false, as for a token that may
    /// only read it.
    pub fn read_only(&self) -> &Self {
        self.with(|repo, _| repo.push = false);
        self
    }

    /// Puts a file at `rev`: a tag, a branch or a 40-hex commit. An unknown name becomes a
    /// lightweight tag on a commit derived from the repository and tag names.
    pub fn file_at(&self, rev: &str, path: &str, bytes: impl Into<Vec<u8>>) -> &Self {
        self.put(rev, path, bytes.into(), Mode::Regular)
    }

    /// Like [`Repo::file_at`], with the executable bit set in archives (scripts a build runs).
    pub fn executable_at(&self, rev: &str, path: &str, bytes: impl Into<Vec<u8>>) -> &Self {
        self.put(rev, path, bytes.into(), Mode::Executable)
    }

    /// A symlink at `path` pointing at `target`: mode `120000` in trees, a symlink entry in
    /// archives, its target as the raw file's text (as GitHub serves it).
    pub fn symlink_at(&self, rev: &str, path: &str, target: &str) -> &Self {
        self.put(rev, path, target.as_bytes().to_vec(), Mode::Symlink)
    }

    /// Puts every file under the local directory `dir` at `rev`, keeping relative paths.
    pub fn dir_at(&self, rev: &str, dir: &Path) -> &Self {
        for (path, bytes) in super::package::read_tree(dir) {
            self.file_at(rev, &path, bytes);
        }
        self
    }

    fn put(&self, rev: &str, path: &str, bytes: Vec<u8>, mode: Mode) -> &Self {
        self.with(|repo, _| {
            let sha = repo.commit_for(rev);
            let commit = repo
                .commits
                .get_mut(&sha)
                .expect("commit_for creates the commit");
            commit.files.insert(
                path.trim_start_matches('/').to_string(),
                File { bytes, mode },
            );
        });
        self
    }

    /// Serves `repo` over git's smart HTTP protocol at `{server}/{owner}/{name}.git` (and
    /// without `.git`), for clones and `ls-remote`. Only the path is kept: `repo` must outlive
    /// the clones. Its refs are independent of the tags and files registered here.
    pub fn serve_git(&self, repo: &GitRepo) -> &Self {
        let git_dir = repo.git_dir();
        self.with(|state, _| state.git_dir = Some(git_dir));
        self
    }

    /// Sets the date and message of the commit `rev` resolves to (archive mtimes, `commits`).
    pub fn commit_info(&self, rev: &str, date: &str, message: &str) -> &Self {
        let date = parse_time(date).unwrap_or_else(|| panic!("bad timestamp `{date}`"));
        self.with(|repo, _| {
            let sha = repo.commit_for(rev);
            let commit = repo
                .commits
                .get_mut(&sha)
                .expect("commit_for creates the commit");
            commit.date = date;
            commit.message = message.to_string();
        });
        self
    }

    /// Creates or changes the release of `tag` (the tag is created if unknown); `f` receives
    /// the current description, or the defaults.
    pub fn release(&self, tag: &str, f: impl FnOnce(Release) -> Release) -> &Self {
        self.with(|repo, next_id| {
            repo.commit_for(tag);
            let current = match repo.releases.iter().position(|r| r.tag == tag) {
                Some(i) => repo.releases.remove(i),
                None => {
                    let id = *next_id;
                    *next_id += 1;
                    let created_at = repo
                        .releases
                        .iter()
                        .map(|r| r.created_at + DAY)
                        .max()
                        .unwrap_or(DEFAULT_EPOCH);
                    Release {
                        tag: tag.to_string(),
                        id,
                        name: Some(tag.to_string()),
                        draft: false,
                        prerelease: false,
                        created_at,
                        published_at: None,
                        target_commitish: "main".to_string(),
                        body: None,
                        assets: Vec::new(),
                    }
                }
            };
            repo.releases.push(f(current));
        });
        self
    }

    /// The commit `rev` resolves to (tag, branch, full or abbreviated sha).
    pub fn sha(&self, rev: &str) -> String {
        self.with(|repo, _| repo.resolve(rev).map(str::to_string))
            .unwrap_or_else(|| panic!("`{rev}` is not a ref of {}", self.full_name))
    }
}

impl RepoState {
    fn full_name(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }

    /// The number the next issue or pull request gets: they share one sequence.
    fn next_number(&self) -> u64 {
        (self.pulls.len() + self.issues.len()) as u64 + 1
    }

    fn ensure_commit(&mut self, sha: &str) {
        self.commits
            .entry(sha.to_string())
            .or_insert_with(|| Commit {
                files: BTreeMap::new(),
                date: DEFAULT_EPOCH,
                message: format!("commit {sha}"),
            });
    }

    fn ensure_retarget_keeps_files(&self, tag: &str, sha: &str) {
        let old = self.tags.get(tag).map(|t| t.commit.as_str());
        if let Some(old) = old.filter(|old| *old != sha) {
            assert!(
                self.commits[old].files.is_empty(),
                "tag `{tag}` of {} already holds files on commit {old}; tag it before adding files",
                self.full_name()
            );
        }
    }

    /// The commit `rev` names, creating a tag on a derived commit if `rev` is unknown.
    fn commit_for(&mut self, rev: &str) -> String {
        if let Some(sha) = self.resolve(rev) {
            return sha.to_string();
        }
        let sha = if is_full_sha(rev) {
            rev.to_string()
        } else {
            let sha = derived_sha(&format!("{}@{rev}", self.full_name()));
            self.tags.insert(
                rev.to_string(),
                Tag {
                    commit: sha.clone(),
                    annotation: None,
                },
            );
            sha
        };
        self.ensure_commit(&sha);
        sha
    }

    /// Resolves like GitHub does: `refs/tags/..`, `refs/heads/..`, a branch, a tag, a full
    /// sha, or a unique abbreviation of at least 7 hex digits.
    fn resolve(&self, rev: &str) -> Option<&str> {
        if let Some(tag) = rev.strip_prefix("refs/tags/") {
            return self.tags.get(tag).map(|t| t.commit.as_str());
        }
        if let Some(branch) = rev.strip_prefix("refs/heads/") {
            return self.branches.get(branch).map(String::as_str);
        }
        if let Some(sha) = self.branches.get(rev) {
            return Some(sha);
        }
        if let Some(tag) = self.tags.get(rev) {
            return Some(&tag.commit);
        }
        if let Some((sha, _)) = self.commits.get_key_value(rev) {
            return Some(sha);
        }
        if rev.len() >= 7 && rev.bytes().all(|b| b.is_ascii_hexdigit()) {
            let mut matches = self.commits.keys().filter(|sha| sha.starts_with(rev));
            if let (Some(sha), None) = (matches.next(), matches.next()) {
                return Some(sha);
            }
        }
        None
    }

    /// Releases newest first, drafts only for authorized requests.
    fn visible_releases(&self, authorized: bool) -> Vec<&Release> {
        let mut releases: Vec<&Release> = self
            .releases
            .iter()
            .filter(|r| authorized || !r.draft)
            .collect();
        releases.sort_by_key(|r| std::cmp::Reverse((r.created_at, r.id)));
        releases
    }
}

fn is_full_sha(rev: &str) -> bool {
    rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Whole seconds since the epoch, rounded up: a reset time never comes before the real one.
fn epoch_ceil(time: SystemTime) -> u64 {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    since.as_secs() + u64::from(since.subsec_nanos() > 0)
}

// ---------------------------------------------------------------------------------------------
// Request handling

fn handle(shared: &Shared, origin: Origin, request: &Request) -> Response {
    let fault = take_fault(shared, origin, &request.method, &request.target);
    if let Some(FaultKind::Hold(gate)) = &fault {
        gate.hold();
    }
    let mut response = match fault {
        Some(FaultKind::Status(status)) => fault_response(origin, status),
        Some(FaultKind::Redirect(base)) => redirect(format!("{base}{}", request.target)),
        Some(FaultKind::Echo { status, json }) => echo(request, status, json),
        Some(FaultKind::Canned(response)) => response,
        _ => {
            let mut response = match origin {
                // A release asset's storage host may be another origin: the lookalike serves
                // the assets a redirect sends there.
                Origin::Lookalike if request.target.starts_with("/_release-assets/") => {
                    web(shared, request)
                }
                Origin::Api | Origin::Lookalike => api(shared, request),
                Origin::Server => web(shared, request),
                Origin::Raw => raw(shared, request),
            };
            match fault {
                Some(FaultKind::Hang(delay)) => response.delay = delay,
                Some(FaultKind::Paced(pace)) => response.pace = Some(pace),
                Some(FaultKind::Spread(over)) => {
                    response.pace = Some(Pace::spread(response.body.len(), over));
                }
                Some(FaultKind::Cut) => response.cut_at = Some(response.body.len() / 2),
                _ => {}
            }
            response
        }
    };
    // Release assets come from a download host that sends ETags, as the
    // real one does; archives carry one only when asked (`archive_etags`).
    let archive_etags = lock(&shared.state).archive_etags;
    let validated = origin != Origin::Server
        || request.target.starts_with("/_release-assets/")
        || (archive_etags && request.target.starts_with("/_codeload/"));
    if validated && response.status == 200 {
        response = with_etag(request, response);
    }
    lock(&shared.log).push(LoggedRequest {
        origin,
        method: request.method.clone(),
        target: request.target.clone(),
        url: format!("{}{}", shared.urls.of(origin), request.target),
        authorization_sent: request.header("authorization").is_some(),
        if_none_match: request.header("if-none-match").map(str::to_string),
        accept: request.header("accept").map(str::to_string),
        user_agent: request.header("user-agent").map(str::to_string),
        status: response.status,
        at: std::time::Instant::now(),
    });
    response
}

fn take_fault(shared: &Shared, origin: Origin, method: &str, target: &str) -> Option<FaultKind> {
    let url = format!("{}{target}", shared.urls.of(origin));
    let mut state = lock(&shared.state);
    let fault = state.faults.iter_mut().find(|f| {
        f.remaining > 0
            && f.method.as_deref().is_none_or(|m| m == method)
            && (target.starts_with(&f.prefix) || url.starts_with(&f.prefix))
    })?;
    fault.remaining -= 1;
    Some(fault.kind.clone())
}

fn fault_response(origin: Origin, status: u16) -> Response {
    match origin {
        Origin::Api | Origin::Lookalike => {
            Response::json(status, &json!({"message": "Server Error"}))
        }
        _ => Response::bytes(status, "text/plain; charset=utf-8", "Server Error\n"),
    }
}

/// `status` with the request's headers, sorted by name, as the body (see [`GitHub::echo_next`]).
fn echo(request: &Request, status: u16, json: bool) -> Response {
    let mut headers = request.headers.clone();
    headers.sort();
    let lines: Vec<String> = headers.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    if json {
        Response::json(status, &json!({"message": lines.join("; ")}))
    } else {
        Response::bytes(status, "text/plain; charset=utf-8", lines.join("\r\n"))
    }
}

/// Adds a strong `ETag` (the body's SHA-256) and turns a matching `If-None-Match` into 304.
fn with_etag(request: &Request, response: Response) -> Response {
    let etag = format!("\"{}\"", sha256_hex(&response.body));
    let mut response = response.header("etag", etag.clone());
    let matches = request.header("if-none-match").is_some_and(|header| {
        header
            .split(',')
            .map(str::trim)
            .any(|candidate| candidate == "*" || candidate.trim_start_matches("W/") == etag)
    });
    if matches {
        response.status = 304;
        response.body.clear();
    }
    response
}

/// Splits the path into percent-decoded segments, without the leading empty one.
fn segments(request: &Request) -> Vec<String> {
    request
        .path()
        .split('/')
        .skip(1)
        .map(percent_decode)
        .collect()
}

fn not_found_json() -> Response {
    Response::json(
        404,
        &json!({"message": "Not Found", "documentation_url": DOCS, "status": "404"}),
    )
}

fn not_found_text(body: &str) -> Response {
    Response::bytes(404, "text/plain; charset=utf-8", body.to_string())
}

fn redirect(location: String) -> Response {
    Response::new(302).header("location", location)
}

// ---------------------------------------------------------------------------------------------
// The REST API

fn api(shared: &Shared, request: &Request) -> Response {
    if request.header("user-agent").is_none() {
        return Response::bytes(
            403,
            "text/plain; charset=utf-8",
            "Request forbidden by administrative rules. Please make sure your request has a \
             User-Agent header (https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required). \
             Check https://developer.github.com for other possible causes.\n",
        );
    }
    let mut state = lock(&shared.state);
    let authorization = request.header("authorization");
    let authorized = authorization.is_some();
    if let Some(authorization) = authorization {
        let token = authorization
            .split_once(' ')
            .map_or(authorization, |(_, token)| token)
            .trim();
        if !state.tokens.is_empty() && !state.tokens.iter().any(|t| t == token) {
            return Response::json(
                401,
                &json!({"message": "Bad credentials", "documentation_url": DOCS, "status": "401"}),
            );
        }
    }
    let limit: u64 = if authorized { 5000 } else { 60 };
    let now = SystemTime::now();
    if let Some(reset) = state.rate_limited_until.filter(|&until| until > now) {
        let reset = epoch_ceil(reset);
        let who = if authorized { "user ID 1" } else { "127.0.0.1" };
        let mut message = format!("API rate limit exceeded for {who}.");
        if !authorized {
            message.push_str(
                " (But here's the good news: Authenticated requests get a higher rate limit. \
                 Check out the documentation for more details.)",
            );
        }
        return Response::json(
            403,
            &json!({
                "message": message,
                "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
            }),
        )
        .header("x-ratelimit-limit", limit.to_string())
        .header("x-ratelimit-remaining", "0")
        .header("x-ratelimit-reset", reset.to_string())
        .header("x-ratelimit-used", limit.to_string())
        .header("x-ratelimit-resource", "core");
    }
    state.api_requests += 1;
    let used = state.api_requests;
    let response = match request.method.as_str() {
        "GET" | "HEAD" => api_route(&shared.urls, &state, request, authorized),
        "POST" | "PATCH" if authorized => api_write(&shared.urls, &mut state, request),
        "POST" | "PATCH" => Response::json(
            401,
            &json!({"message": "Requires authentication", "documentation_url": DOCS}),
        ),
        _ => not_found_json(),
    };
    response
        .header("x-ratelimit-limit", limit.to_string())
        .header(
            "x-ratelimit-remaining",
            limit.saturating_sub(used).to_string(),
        )
        .header("x-ratelimit-reset", (epoch_ceil(now) + 3600).to_string())
        .header("x-ratelimit-used", used.min(limit).to_string())
        .header("x-ratelimit-resource", "core")
        .header("x-github-media-type", "github.v3; format=json")
        .header("cache-control", "private, max-age=60, s-maxage=60")
}

/// `POST /repos/{o}/{r}/pulls` (422 for an unknown base branch or a head that has one),
/// `PATCH /repos/{o}/{r}/pulls/{n}`, `POST /repos/{o}/{r}/issues/{n}/comments` and
/// `POST /repos/{o}/{r}/issues/{n}/labels`.
fn api_write(urls: &Urls, state: &mut State, request: &Request) -> Response {
    let segments = segments(request);
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
        return Response::json(400, &json!({"message": "Problems parsing JSON"}));
    };
    let field = |k: &str| body.get(k).and_then(Value::as_str).map(str::to_string);
    match segments.as_slice() {
        ["repos", owner, name, "pulls"] if request.method == "POST" => {
            let Some(repo) = state.repos.get_mut(&format!("{owner}/{name}")) else {
                return not_found_json();
            };
            let (Some(title), Some(head), Some(base)) =
                (field("title"), field("head"), field("base"))
            else {
                return Response::json(422, &json!({"message": "Validation Failed"}));
            };
            let head = head.rsplit(':').next().unwrap_or(&head).to_string();
            if !repo.branches.contains_key(&base) {
                return Response::json(
                    422,
                    &json!({
                        "message": "Validation Failed",
                        "errors": [{"resource": "PullRequest", "field": "base", "code": "invalid"}],
                        "documentation_url": DOCS,
                        "status": "422",
                    }),
                );
            }
            if repo.pulls.iter().any(|p| p.head == head) {
                return Response::json(
                    422,
                    &json!({"message": "Validation Failed", "errors": [{"message": format!("A pull request already exists for {owner}:{head}.")}]}),
                );
            }
            let number = repo.next_number();
            let pull = Pull {
                number,
                head,
                base,
                title,
                body: field("body").unwrap_or_default(),
                labels: Vec::new(),
            };
            let answer = pull_json(urls, repo, &pull);
            repo.pulls.push(pull);
            Response::json(201, &answer)
        }
        ["repos", owner, name, "issues", number, "comments"] if request.method == "POST" => {
            let Some(repo) = state.repos.get_mut(&format!("{owner}/{name}")) else {
                return not_found_json();
            };
            let Some(number) = number
                .parse::<u64>()
                .ok()
                .filter(|n| repo.pulls.iter().any(|p| p.number == *n))
            else {
                return not_found_json();
            };
            let Some(text) = field("body") else {
                return Response::json(422, &json!({"message": "Validation Failed"}));
            };
            repo.comments.push((number, text.clone()));
            let id = repo.comments.len();
            let full = repo.full_name();
            Response::json(
                201,
                &json!({
                    "id": id,
                    "body": text,
                    "html_url": format!("{}/{full}/pull/{number}#issuecomment-{id}", urls.server),
                }),
            )
        }
        ["repos", owner, name, "issues", number, "labels"] if request.method == "POST" => {
            let Some(repo) = state.repos.get_mut(&format!("{owner}/{name}")) else {
                return not_found_json();
            };
            let Some(pull) = repo
                .pulls
                .iter_mut()
                .find(|p| number.parse() == Ok(p.number))
            else {
                return not_found_json();
            };
            let Some(labels) = body.get("labels").and_then(Value::as_array) else {
                return Response::json(422, &json!({"message": "Validation Failed"}));
            };
            for label in labels.iter().filter_map(Value::as_str) {
                if !pull.labels.iter().any(|l| l == label) {
                    pull.labels.push(label.to_owned());
                }
            }
            let answer: Vec<Value> = pull.labels.iter().map(|l| json!({"name": l})).collect();
            Response::json(200, &json!(answer))
        }
        ["repos", owner, name, "issues"] if request.method == "POST" => {
            match state.repos.get_mut(&format!("{owner}/{name}")) {
                Some(repo) => issues::create(urls, repo, &body),
                None => not_found_json(),
            }
        }
        ["repos", owner, name, "issues", number] if request.method == "PATCH" => {
            match state.repos.get_mut(&format!("{owner}/{name}")) {
                Some(repo) => issues::edit(urls, repo, number, &body),
                None => not_found_json(),
            }
        }
        ["repos", owner, name, "pulls", number] if request.method == "PATCH" => {
            let Some(repo) = state.repos.get_mut(&format!("{owner}/{name}")) else {
                return not_found_json();
            };
            let Some(index) = repo
                .pulls
                .iter()
                .position(|p| number.parse() == Ok(p.number))
            else {
                return not_found_json();
            };
            if let Some(title) = field("title") {
                repo.pulls[index].title = title;
            }
            if let Some(text) = field("body") {
                repo.pulls[index].body = text;
            }
            let pull = repo.pulls[index].clone();
            Response::json(200, &pull_json(urls, repo, &pull))
        }
        _ => not_found_json(),
    }
}

fn pull_json(urls: &Urls, repo: &RepoState, pull: &Pull) -> Value {
    let full = repo.full_name();
    json!({
        "number": pull.number,
        "state": "open",
        "title": pull.title,
        "body": pull.body,
        "html_url": format!("{}/{full}/pull/{}", urls.server, pull.number),
        "url": format!("{}/repos/{full}/pulls/{}", urls.api, pull.number),
        "head": {"ref": pull.head, "label": format!("{}:{}", repo.owner, pull.head)},
        "base": {"ref": pull.base},
    })
}

fn api_route(urls: &Urls, state: &State, request: &Request, authorized: bool) -> Response {
    let segments = segments(request);
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    let (repo, rest) = match segments.as_slice() {
        ["repos", owner, name, rest @ ..] => (state.repos.get(&format!("{owner}/{name}")), rest),
        ["repositories", id, rest @ ..] => (
            state
                .repos
                .values()
                .find(|repo| id.parse::<u64>() == Ok(repo.id)),
            rest,
        ),
        _ => return not_found_json(),
    };
    let Some(repo) = repo else {
        return not_found_json();
    };
    let found = |value: Option<Value>| {
        value.map_or_else(not_found_json, |value| Response::json(200, &value))
    };
    let releases = || repo.visible_releases(authorized).into_iter();
    let link_base = state.link_base.as_deref().unwrap_or(&urls.api);
    match rest {
        [] => Response::json(200, &repo_json(urls, repo, authorized)),
        ["issues", number, "comments"] => {
            let comments = repo
                .comments
                .iter()
                .enumerate()
                .filter(|(_, (n, _))| number.parse() == Ok(*n))
                .map(|(i, (_, body))| json!({"id": i + 1, "body": body}))
                .collect();
            paginate(
                link_base,
                request,
                &format!("/repositories/{}/issues/{number}/comments", repo.id),
                comments,
            )
        }
        ["releases"] => {
            let releases = releases().map(|r| release_json(urls, repo, r)).collect();
            let link_path = format!("/repositories/{}/releases", repo.id);
            paginate(link_base, request, &link_path, releases)
        }
        ["issues"] => issues::list(urls, repo, request, link_base),
        ["pulls"] => {
            let head = request.query("head");
            let pulls = repo
                .pulls
                .iter()
                .filter(|p| {
                    head.as_deref()
                        .is_none_or(|h| h.rsplit(':').next() == Some(p.head.as_str()))
                })
                .map(|p| pull_json(urls, repo, p))
                .collect();
            paginate(
                link_base,
                request,
                &format!("/repositories/{}/pulls", repo.id),
                pulls,
            )
        }
        // Drafts never count as latest, even for a collaborator.
        ["releases", "latest"] => found(
            repo.visible_releases(false)
                .into_iter()
                .find(|r| !r.prerelease)
                .map(|r| release_json(urls, repo, r)),
        ),
        ["releases", "tags", tag @ ..] => {
            let tag = tag.join("/");
            found(
                releases()
                    .find(|r| r.tag == tag)
                    .map(|r| release_json(urls, repo, r)),
            )
        }
        ["releases", id] => found(
            releases()
                .find(|r| id.parse() == Ok(r.id))
                .map(|r| release_json(urls, repo, r)),
        ),
        ["tags"] => {
            let link_path = format!("/repositories/{}/tags", repo.id);
            paginate(link_base, request, &link_path, tags_json(urls, repo))
        }
        ["git", "ref", kind @ ("tags" | "heads"), name @ ..] => {
            found(git_ref_json(urls, repo, kind, &name.join("/")))
        }
        ["git", "tags", object] => found(tag_object_json(urls, repo, object)),
        ["git", "trees", rev @ ..] => {
            let recursive = request.query("recursive").is_some_and(|v| !v.is_empty());
            found(tree_json(
                urls,
                repo,
                &rev.join("/"),
                recursive,
                state.tree_limit,
            ))
        }
        ["commits", rev @ ..] => commit_response(urls, repo, &rev.join("/"), request),
        ["tarball", rev @ ..] => {
            let rev = rev.join("/");
            if repo.resolve(&rev).is_none() {
                return not_found_json();
            }
            let full = repo.full_name();
            redirect(format!(
                "{}/_codeload/{full}/legacy.tar.gz/{rev}",
                urls.server
            ))
        }
        _ => not_found_json(),
    }
}

/// `/tags`: newest-looking names first (digit runs compare as numbers).
fn tags_json(urls: &Urls, repo: &RepoState) -> Vec<Value> {
    let (api, full) = (&urls.api, repo.full_name());
    let mut names: Vec<&String> = repo.tags.keys().collect();
    names.sort_by_key(|name| std::cmp::Reverse(natural_key(name)));
    names
        .into_iter()
        .map(|name| {
            let sha = &repo.tags[name].commit;
            json!({
                "name": name,
                "zipball_url": format!("{api}/repos/{full}/zipball/refs/tags/{name}"),
                "tarball_url": format!("{api}/repos/{full}/tarball/refs/tags/{name}"),
                "commit": {"sha": sha, "url": format!("{api}/repos/{full}/commits/{sha}")},
                "node_id": format!("REF_{}", &derived_sha(name)[..12]),
            })
        })
        .collect()
}

/// `git/ref/{tags,heads}/{name}`: an annotated tag names its tag object, not the commit.
fn git_ref_json(urls: &Urls, repo: &RepoState, kind: &str, name: &str) -> Option<Value> {
    let (api, full) = (&urls.api, repo.full_name());
    let (object_type, sha, collection) = if kind == "tags" {
        let tag = repo.tags.get(name)?;
        match &tag.annotation {
            Some((object, _)) => ("tag", object, "tags"),
            None => ("commit", &tag.commit, "commits"),
        }
    } else {
        ("commit", repo.branches.get(name)?, "commits")
    };
    Some(json!({
        "ref": format!("refs/{kind}/{name}"),
        "node_id": format!("REF_{}", &derived_sha(name)[..12]),
        "url": format!("{api}/repos/{full}/git/refs/{kind}/{name}"),
        "object": {
            "sha": sha,
            "type": object_type,
            "url": format!("{api}/repos/{full}/git/{collection}/{sha}"),
        },
    }))
}

/// A directory of a commit, as git stores it: files with their mode and blob id, and
/// subdirectories.
#[derive(Default, Clone)]
struct TreeNode {
    /// name → (mode, blob id, size).
    files: BTreeMap<String, (&'static str, String, usize)>,
    dirs: BTreeMap<String, TreeNode>,
}

impl TreeNode {
    fn of(commit: &Commit) -> TreeNode {
        let mut root = TreeNode::default();
        for (path, file) in &commit.files {
            let mut parts: Vec<&str> = path.split('/').collect();
            let name = parts.pop().expect("a path has a name");
            let node = parts.into_iter().fold(&mut root, |node, dir| {
                node.dirs.entry(dir.to_string()).or_default()
            });
            let entry = (file.mode.git(), blob_sha(&file.bytes), file.bytes.len());
            node.files.insert(name.to_string(), entry);
        }
        root
    }

    /// Entries in git's order: by name, a directory compared as `name/`.
    fn entries(&self) -> Vec<(&str, Option<&TreeNode>)> {
        let mut out: Vec<(&str, Option<&TreeNode>)> = self
            .files
            .keys()
            .map(|n| (n.as_str(), None))
            .chain(self.dirs.iter().map(|(n, d)| (n.as_str(), Some(d))))
            .collect();
        out.sort_by_key(|(name, dir)| format!("{name}{}", if dir.is_some() { "/" } else { "" }));
        out
    }

    /// The tree object's id, as `git write-tree` computes it.
    fn sha(&self) -> String {
        let mut object = Vec::new();
        for (name, dir) in self.entries() {
            let (mode, sha) = match dir {
                Some(d) => ("40000", d.sha()),
                None => {
                    let (mode, sha, _) = &self.files[name];
                    (*mode, sha.clone())
                }
            };
            object.extend_from_slice(format!("{mode} {name}\0").as_bytes());
            object.extend_from_slice(&hex::decode(sha).expect("a hex id"));
        }
        git2::Oid::hash_object(git2::ObjectType::Tree, &object)
            .expect("hash a tree")
            .to_string()
    }

    /// The subtree whose id is `sha`, this one included.
    fn find(&self, sha: &str) -> Option<&TreeNode> {
        if self.sha() == sha {
            return Some(self);
        }
        self.dirs.values().find_map(|d| d.find(sha))
    }

    fn list(&self, urls: &Urls, full: &str, prefix: &str, recursive: bool, out: &mut Vec<Value>) {
        for (name, dir) in self.entries() {
            let path = format!("{prefix}{name}");
            match dir {
                Some(d) => {
                    let sha = d.sha();
                    out.push(json!({
                        "path": path, "mode": "040000", "type": "tree", "sha": sha,
                        "url": format!("{}/repos/{full}/git/trees/{sha}", urls.api),
                    }));
                    if recursive {
                        d.list(urls, full, &format!("{path}/"), true, out);
                    }
                }
                None => {
                    let (mode, sha, size) = &self.files[name];
                    out.push(json!({
                        "path": path, "mode": mode, "type": "blob", "sha": sha,
                        "size": size,
                        "url": format!("{}/repos/{full}/git/blobs/{sha}", urls.api),
                    }));
                }
            }
        }
    }
}

/// The git blob id of `bytes`.
pub fn blob_sha(bytes: &[u8]) -> String {
    git2::Oid::hash_object(git2::ObjectType::Blob, bytes)
        .expect("hash a blob")
        .to_string()
}

/// `git/trees/{rev}`: the tree of a ref or commit, or a tree by its id; `recursive` lists
/// every level (paths from the tree's root), else only the first. Past `limit` entries the
/// list is cut and `truncated` is true.
fn tree_json(
    urls: &Urls,
    repo: &RepoState,
    rev: &str,
    recursive: bool,
    limit: Option<usize>,
) -> Option<Value> {
    let full = repo.full_name();
    let node = match repo.resolve(rev) {
        Some(sha) => TreeNode::of(&repo.commits[sha]),
        None => {
            let trees: Vec<TreeNode> = repo.commits.values().map(TreeNode::of).collect();
            trees.iter().find_map(|t| t.find(rev))?.clone()
        }
    };
    let mut entries = Vec::new();
    node.list(urls, &full, "", recursive, &mut entries);
    let truncated = limit.is_some_and(|l| entries.len() > l);
    if let Some(l) = limit {
        entries.truncate(l);
    }
    let sha = node.sha();
    Some(json!({
        "sha": sha,
        "url": format!("{}/repos/{full}/git/trees/{sha}", urls.api),
        "tree": entries,
        "truncated": truncated,
    }))
}

/// `git/tags/{sha}`: an annotated tag object, peeling to its commit.
fn tag_object_json(urls: &Urls, repo: &RepoState, object: &str) -> Option<Value> {
    let (api, full) = (&urls.api, repo.full_name());
    let (name, tag, message) = repo
        .tags
        .iter()
        .find_map(|(name, tag)| match &tag.annotation {
            Some((sha, message)) if sha == object => Some((name, tag, message)),
            _ => None,
        })?;
    let date = repo
        .commits
        .get(&tag.commit)
        .map_or(DEFAULT_EPOCH, |c| c.date);
    Some(json!({
        "node_id": format!("TAG_{}", &object[..12]),
        "sha": object,
        "url": format!("{api}/repos/{full}/git/tags/{object}"),
        "tag": name,
        "message": message,
        "tagger": {"name": "Test Tagger", "email": "tagger@example.com", "date": format_time(date)},
        "object": {
            "sha": tag.commit,
            "type": "commit",
            "url": format!("{api}/repos/{full}/git/commits/{}", tag.commit),
        },
        "verification": {"verified": false, "reason": "unsigned", "signature": null, "payload": null},
    }))
}

/// `commits/{ref}`: 422 for an unknown ref, as GitHub answers; the bare sha as text when
/// asked for `application/vnd.github.sha`.
fn commit_response(urls: &Urls, repo: &RepoState, rev: &str, request: &Request) -> Response {
    let Some(sha) = repo.resolve(rev) else {
        return Response::json(
            422,
            &json!({
                "message": format!("No commit found for SHA: {rev}"),
                "documentation_url": DOCS,
                "status": "422",
            }),
        );
    };
    let wants_sha = request.header("accept").is_some_and(|accept| {
        accept.contains("application/vnd.github.sha")
            || accept.contains("application/vnd.github.v3.sha")
    });
    if wants_sha {
        return Response::bytes(200, "application/vnd.github.sha; charset=utf-8", sha);
    }
    let (api, full) = (&urls.api, repo.full_name());
    let commit = &repo.commits[sha];
    let person = json!({
        "name": "Test Author",
        "email": "author@example.com",
        "date": format_time(commit.date),
    });
    Response::json(
        200,
        &json!({
            "sha": sha,
            "node_id": format!("C_{}", &sha[..12]),
            "url": format!("{api}/repos/{full}/commits/{sha}"),
            "html_url": format!("{}/{full}/commit/{sha}", urls.server),
            "commit": {
                "author": person,
                "committer": person,
                "message": commit.message,
                "tree": {"sha": derived_sha(&format!("tree:{sha}"))},
            },
            "parents": [],
        }),
    )
}

/// A repository; `permissions` (what the token may do, as GitHub answers a token's holder)
/// only for a request that carries one.
fn repo_json(urls: &Urls, repo: &RepoState, authorized: bool) -> Value {
    let full = repo.full_name();
    let mut value = json!({
        "id": repo.id,
        "name": repo.name,
        "full_name": full,
        "owner": {"login": repo.owner},
        "private": false,
        "html_url": format!("{}/{full}", urls.server),
        "url": format!("{}/repos/{full}", urls.api),
        "default_branch": repo.branches.keys().next().map_or("main", String::as_str),
    });
    if authorized {
        value["permissions"] = json!({
            "admin": false,
            "maintain": false,
            "push": repo.push,
            "triage": true,
            "pull": true,
        });
    }
    value
}

fn release_json(urls: &Urls, repo: &RepoState, release: &Release) -> Value {
    let full = repo.full_name();
    let (api, server) = (&urls.api, &urls.server);
    let tag = &release.tag;
    let published_at = release
        .published_at
        .unwrap_or((!release.draft).then_some(release.created_at))
        .map(format_time);
    let created_at = format_time(release.created_at);
    let assets: Vec<Value> = release
        .assets
        .iter()
        .map(|asset| {
            json!({
                "url": format!("{api}/repos/{full}/releases/assets/{}", asset.id),
                "id": asset.id,
                "node_id": format!("RA_{}", asset.id),
                "name": asset.name,
                "label": "",
                "content_type": asset.content_type,
                "state": "uploaded",
                "size": asset.bytes.len(),
                "download_count": 0,
                "created_at": created_at,
                "updated_at": created_at,
                "browser_download_url":
                    format!("{server}/{full}/releases/download/{tag}/{}", asset.name),
            })
        })
        .collect();
    json!({
        "url": format!("{api}/repos/{full}/releases/{}", release.id),
        "assets_url": format!("{api}/repos/{full}/releases/{}/assets", release.id),
        "html_url": format!("{server}/{full}/releases/tag/{tag}"),
        "id": release.id,
        "node_id": format!("RE_{}", release.id),
        "tag_name": tag,
        "target_commitish": release.target_commitish,
        "name": release.name,
        "draft": release.draft,
        "prerelease": release.prerelease,
        "created_at": created_at,
        "published_at": published_at,
        "assets": assets,
        "tarball_url": format!("{api}/repos/{full}/tarball/{tag}"),
        "zipball_url": format!("{api}/repos/{full}/zipball/{tag}"),
        "body": release.body,
    })
}

/// One page of `items` with GitHub's `Link` header; links point at `link_path` on `base`.
fn paginate(base: &str, request: &Request, link_path: &str, items: Vec<Value>) -> Response {
    paginate_keeping(base, request, link_path, &[], items)
}

/// [`paginate`], the links carrying the request's query parameters named in `keep` (a
/// filter such as `state` and `labels`), encoded, as GitHub's do.
fn paginate_keeping(
    base: &str,
    request: &Request,
    link_path: &str,
    keep: &[&str],
    items: Vec<Value>,
) -> Response {
    let kept: String = request
        .query_pairs()
        .into_iter()
        .filter(|(k, _)| keep.contains(&k.as_str()))
        .map(|(k, v)| format!("{k}={}&", encode_query(&v)))
        .collect();
    let explicit_per_page = request
        .query("per_page")
        .and_then(|v| v.parse::<usize>().ok());
    let per_page = explicit_per_page.map_or(30, |n| n.clamp(1, 100));
    let page = request
        .query("page")
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&p| p >= 1)
        .unwrap_or(1);
    let last = items.len().div_ceil(per_page).max(1);
    let body: Vec<Value> = items
        .into_iter()
        .skip((page - 1).saturating_mul(per_page))
        .take(per_page)
        .collect();
    let link = |page: usize, rel: &str| {
        let per_page = explicit_per_page.map_or(String::new(), |_| format!("per_page={per_page}&"));
        format!("<{base}{link_path}?{kept}{per_page}page={page}>; rel=\"{rel}\"")
    };
    let mut links = Vec::new();
    if page > 1 {
        links.push(link(page - 1, "prev"));
    }
    if page < last {
        links.push(link(page + 1, "next"));
        links.push(link(last, "last"));
    }
    if page > 1 {
        links.push(link(1, "first"));
    }
    let response = Response::json(200, &Value::Array(body));
    if links.is_empty() {
        response
    } else {
        response.header("link", links.join(", "))
    }
}

/// `text` percent-encoded for a query value: everything but unreserved characters.
fn encode_query(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Orders `v4.10.0` after `v4.9.0`: digit runs compare as numbers.
fn natural_key(s: &str) -> Vec<(u64, String)> {
    let mut key = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 {
            key.push((rest[..digits].parse().unwrap_or(u64::MAX), String::new()));
            rest = &rest[digits..];
        } else {
            let text = rest.len() - rest.trim_start_matches(|c: char| !c.is_ascii_digit()).len();
            key.push((0, rest[..text].to_string()));
            rest = &rest[text..];
        }
    }
    key
}

// ---------------------------------------------------------------------------------------------
// Raw files

fn raw(shared: &Shared, request: &Request) -> Response {
    let not_found = || not_found_text("404: Not Found");
    if !matches!(request.method.as_str(), "GET" | "HEAD") {
        return not_found();
    }
    let segments = segments(request);
    let [owner, name, rest @ ..] = segments.as_slice() else {
        return not_found();
    };
    let state = lock(&shared.state);
    let Some(repo) = state.repos.get(&format!("{owner}/{name}")) else {
        return not_found();
    };
    // The ref may itself contain slashes (`refs/tags/v1`, `feature/x`): try every split.
    let first = if rest.len() > 2 && rest[0] == "refs" {
        3
    } else {
        1
    };
    (first..rest.len())
        .find_map(|split| {
            let sha = repo.resolve(&rest[..split].join("/"))?;
            repo.commits[sha].files.get(&rest[split..].join("/"))
        })
        .map_or_else(not_found, |file| {
            Response::bytes(200, "text/plain; charset=utf-8", file.bytes.clone())
                .header("cache-control", "max-age=300")
                .header("x-content-type-options", "nosniff")
        })
}

// ---------------------------------------------------------------------------------------------
// github.com: archives and release downloads, and the download hosts they redirect to

fn web(shared: &Shared, request: &Request) -> Response {
    let not_found = || not_found_text("Not Found");
    let segments = segments(request);
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    let state = lock(&shared.state);
    if let [owner, name, rest @ ..] = segments.as_slice() {
        let service = ["info", "git-upload-pack", "git-receive-pack", "HEAD"];
        let name = name.strip_suffix(".git").unwrap_or(name);
        let git_dir = state
            .repos
            .get(&format!("{owner}/{name}"))
            .and_then(|repo| repo.git_dir.clone())
            .filter(|_| rest.first().is_some_and(|s| service.contains(s)));
        if let Some(git_dir) = git_dir {
            // Run the backend without holding the lock: a fetch can take a while.
            drop(state);
            return git::http_backend(&git_dir, &format!("/{}", rest.join("/")), request);
        }
    }
    if !matches!(request.method.as_str(), "GET" | "HEAD") {
        return not_found();
    }
    let server = &shared.urls.server;
    let repo_of = |owner: &str, name: &str| state.repos.get(&format!("{owner}/{name}"));
    match segments.as_slice() {
        [owner, name, "archive", rest @ ..] => {
            let rev = rest.join("/");
            let Some(rev) = rev.strip_suffix(".tar.gz") else {
                return not_found();
            };
            match repo_of(owner, name) {
                Some(repo) if repo.resolve(rev).is_some() => {
                    redirect(format!("{server}/_codeload/{owner}/{name}/tar.gz/{rev}"))
                }
                _ => not_found(),
            }
        }
        [
            "_codeload",
            owner,
            name,
            style @ ("tar.gz" | "legacy.tar.gz"),
            rest @ ..,
        ] => {
            let rev = rest.join("/");
            let Some(repo) = repo_of(owner, name) else {
                return not_found();
            };
            let Some(sha) = repo.resolve(&rev) else {
                return not_found();
            };
            let top = if *style == "tar.gz" {
                format!("{name}-{}", archive_label(repo, &rev))
            } else {
                format!("{owner}-{name}-{}", &sha[..7])
            };
            let filename = format!("{top}.tar.gz");
            Response::bytes(
                200,
                "application/x-gzip",
                tarball(&top, sha, &repo.commits[sha]),
            )
            .header(
                "content-disposition",
                format!("attachment; filename={filename}"),
            )
        }
        [owner, name, "releases", "download", tag @ .., asset] => {
            let tag = tag.join("/");
            let found = repo_of(owner, name)
                .and_then(|repo| repo.releases.iter().find(|r| r.tag == tag))
                .is_some_and(|release| release.assets.iter().any(|a| a.name == *asset));
            if found {
                redirect(format!(
                    "{server}/_release-assets/{owner}/{name}/{tag}/{asset}"
                ))
            } else {
                not_found()
            }
        }
        ["_release-assets", owner, name, tag @ .., asset] => {
            let tag = tag.join("/");
            repo_of(owner, name)
                .and_then(|repo| repo.releases.iter().find(|r| r.tag == tag))
                .and_then(|release| release.assets.iter().find(|a| a.name == *asset))
                .map_or_else(not_found, |asset| {
                    Response::bytes(200, "application/octet-stream", asset.bytes.clone()).header(
                        "content-disposition",
                        format!("attachment; filename={}", asset.name),
                    )
                })
        }
        _ => not_found(),
    }
}

/// The part after `{repo}-` in an archive's top directory: a tag loses a `v` that precedes a
/// digit (`v4.3.0` gives `4.3.0`), a branch has `/` turned into `-`, a sha stays.
fn archive_label(repo: &RepoState, rev: &str) -> String {
    let tag = rev
        .strip_prefix("refs/tags/")
        .or_else(|| repo.tags.contains_key(rev).then_some(rev));
    if let Some(tag) = tag {
        let digit_follows_v = tag
            .strip_prefix('v')
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
        return if digit_follows_v { &tag[1..] } else { tag }.to_string();
    }
    rev.strip_prefix("refs/heads/")
        .unwrap_or(rev)
        .replace('/', "-")
}

/// A gzip tarball shaped like `git archive`'s: a `pax_global_header` naming the commit, then
/// directories and files under `top/`, in git's order, dated with the commit.
fn tarball(top: &str, sha: &str, commit: &Commit) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    let header = |kind: tar::EntryType, mode: u32, size: u64| {
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(kind);
        header.set_mode(mode);
        header.set_size(size);
        header.set_mtime(commit.date);
        header.set_uid(0);
        header.set_gid(0);
        let _ = header.set_username("root");
        let _ = header.set_groupname("root");
        header
    };
    let pax = pax_comment(sha);
    let mut pax_header = header(tar::EntryType::XGlobalHeader, 0o666, pax.len() as u64);
    tar.append_data(&mut pax_header, "pax_global_header", pax.as_bytes())
        .expect("write to a Vec");
    let mut dirs = BTreeSet::new();
    let mut add_dir = |tar: &mut tar::Builder<_>, dir: String| {
        if dirs.insert(dir.clone()) {
            let mut h = header(tar::EntryType::Directory, 0o775, 0);
            tar.append_data(&mut h, format!("{dir}/"), std::io::empty())
                .expect("write to a Vec");
        }
    };
    add_dir(&mut tar, top.to_string());
    for (path, file) in &commit.files {
        let mut parent = top.to_string();
        let parts: Vec<&str> = path.split('/').collect();
        for part in &parts[..parts.len() - 1] {
            parent = format!("{parent}/{part}");
            add_dir(&mut tar, parent.clone());
        }
        let name = format!("{top}/{path}");
        if file.mode == Mode::Symlink {
            let mut h = header(tar::EntryType::Symlink, 0o777, 0);
            let target = String::from_utf8_lossy(&file.bytes).into_owned();
            tar.append_link(&mut h, &name, &target)
                .expect("write to a Vec");
            continue;
        }
        let mode = if file.mode == Mode::Executable {
            0o775
        } else {
            0o664
        };
        let mut h = header(tar::EntryType::Regular, mode, file.bytes.len() as u64);
        tar.append_data(&mut h, name, file.bytes.as_slice())
            .expect("write to a Vec");
    }
    let mut gz = tar.into_inner().expect("finish the tar stream");
    gz.flush().expect("flush gzip");
    gz.finish().expect("finish gzip")
}

/// A pax record `"<len> comment=<sha>\n"`, whose length counts its own digits.
fn pax_comment(sha: &str) -> String {
    let record = format!(" comment={sha}\n");
    let mut len = record.len() + 1;
    while len.to_string().len() + record.len() != len {
        len = len.to_string().len() + record.len();
    }
    format!("{len}{record}")
}

// ---------------------------------------------------------------------------------------------
// Time, without a date crate

/// `YYYY-MM-DDTHH:MM:SSZ` to seconds since the epoch.
fn parse_time(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.len() != 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[19] != b'Z' {
        return None;
    }
    let num = |range: std::ops::Range<usize>| s.get(range)?.parse::<u64>().ok();
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let valid = y >= 1970 && (1..=12).contains(&m) && (1..=31).contains(&d);
    if !valid || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    // Days from 1970-01-01 to y-m-d (Howard Hinnant's days_from_civil, years >= 1970).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = (era * 146_097 + doe).checked_sub(719_468)?;
    Some(days * DAY + hh * 3600 + mm * 60 + ss)
}

/// Seconds since the epoch to `YYYY-MM-DDTHH:MM:SSZ`.
fn format_time(epoch: u64) -> String {
    let (days, secs) = (epoch / DAY, epoch % DAY);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}
