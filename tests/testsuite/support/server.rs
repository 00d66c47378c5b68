//! The one HTTP/1.1 test server, on `std::net`: the GitHub stand-in (`github.rs`), the fake
//! registry and its token server (`registry_support`) and one-off servers in tests all run on it.
//!
//! 1. [`Server::start`] binds `127.0.0.1:0` and serves a handler. When a handler must know the
//!    server's own URL (pagination links, redirects), bind first with [`listen`] (or
//!    [`listen_lookalike`]) and hand the listener to [`Server::serve`].
//! 2. Connections are accepted on a thread and each one is served on its own thread:
//!    keep-alive, `Content-Length` or chunked request bodies, `Content-Length` responses.
//! 3. The handler is a plain function from [`Request`] to [`Response`]; every request is also
//!    kept in order for [`Server::requests`]. Everything GitHub-like or registry-like (routing,
//!    ETags, faults, auth) lives with the stand-in that needs it.
//! 4. [`Server::serve_tls`] serves the same over TLS (rustls, a certificate from
//!    `support::tls`): every connection is a handshake first, then the same HTTP/1.1.
//!
//! Why not a crate: the harness needs a few things test servers rarely offer together (holding a
//! response past a client's timeout, sending a body slowly, answering `HEAD` and `304` without a
//! body, seeing every header), and it is only a few hundred lines on `std`.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use rustls::{ServerConfig, ServerConnection, StreamOwned};

/// How long an idle keep-alive connection is held before its thread gives up; keeps threads
/// from outliving a test by much when a client never closes.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// Binds a listener on a free loopback port.
pub fn listen() -> TcpListener {
    TcpListener::bind("127.0.0.1:0").expect("bind a loopback port for the test server")
}

/// Two listeners where the second's URL merely starts with the first's (`…:4123` and
/// `…:41234`): a different origin that a string prefix test would take for the same one.
pub fn listen_lookalike() -> (TcpListener, TcpListener) {
    for _ in 0..100 {
        let long = listen();
        let port = long.local_addr().expect("listener address").port();
        if port / 10 >= 1024
            && let Ok(short) = TcpListener::bind(("127.0.0.1", port / 10))
        {
            return (short, long);
        }
    }
    panic!("no free pair of loopback ports where one is a prefix of the other")
}

/// One parsed HTTP request, as the handler sees it.
#[derive(Debug, Clone)]
pub struct Request {
    /// `GET`, `HEAD`, `POST`, ... as sent.
    pub method: String,
    /// The request target: path plus query, still percent-encoded.
    pub target: String,
    /// Headers in arrival order, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: Vec<u8>,
}

impl Request {
    /// The first value of a header (name matched case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The path without the query string.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }

    /// The decoded value of a query parameter, if present.
    pub fn query(&self, key: &str) -> Option<String> {
        self.query_pairs()
            .into_iter()
            .find_map(|(k, v)| (k == key).then_some(v))
    }

    /// Every decoded query parameter, in order.
    pub fn query_pairs(&self) -> Vec<(String, String)> {
        form_pairs(self.target.split_once('?').map_or("", |(_, q)| q))
    }
}

/// Decoded `k=v&…` pairs of a query string or a form body (`+` is a space there).
pub fn form_pairs(text: &str) -> Vec<(String, String)> {
    let decode = |s: &str| percent_decode(&s.replace('+', " "));
    text.split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(k), decode(v))
        })
        .collect()
}

/// Decodes `%XX` escapes, as in a path segment (`+` stays a plus there).
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let pair = bytes
                    .get(i + 1..i + 3)
                    .filter(|p| p.iter().all(u8::is_ascii_hexdigit))
                    .and_then(|p| std::str::from_utf8(p).ok());
                match pair.and_then(|p| u8::from_str_radix(p, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                        continue;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What the handler answers.
#[derive(Debug, Clone)]
pub struct Response {
    /// The status code; the reason phrase is derived from it.
    pub status: u16,
    /// Headers to send; `Content-Length` and `Connection` are added by the server.
    pub headers: Vec<(String, String)>,
    /// The body; never sent for `HEAD`, `204` or `304`.
    pub body: Vec<u8>,
    /// How long to hold the answer before writing it (for timeouts in tests).
    pub delay: Duration,
    /// When set, the body is sent slowly ([`Pace`]); it stops at the body's end, when the
    /// client leaves, or when the server is dropped.
    pub pace: Option<Pace>,
    /// When set, only this many bytes of the body are sent (`Content-Length` still announces
    /// all of it), then the connection is closed: a connection dropped mid-body.
    pub cut_at: Option<usize>,
}

/// A body sent slowly: in pieces of `piece` bytes with `pause` before each. One shape serves
/// both uses: a server that trickles (one byte per pause, to drive a client past a deadline
/// that covers the body) and a slow download (a body spread over a time, for progress bars).
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    /// Bytes per piece (at least one).
    pub piece: usize,
    /// The pause before each piece.
    pub pause: Duration,
}

impl Pace {
    /// One byte per `pause`.
    pub fn per_byte(pause: Duration) -> Pace {
        Pace { piece: 1, pause }
    }

    /// A body of `len` bytes in twenty pieces spread over about `over`.
    pub fn spread(len: usize, over: Duration) -> Pace {
        Pace {
            piece: len.div_ceil(20).max(1),
            pause: over / 20,
        }
    }
}

impl Response {
    /// An empty response with the given status.
    pub fn new(status: u16) -> Response {
        Response {
            status,
            headers: Vec::new(),
            body: Vec::new(),
            delay: Duration::ZERO,
            pace: None,
            cut_at: None,
        }
    }

    /// A body with its content type.
    pub fn bytes(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Response {
        Response::new(status)
            .header("content-type", content_type)
            .body(body)
    }

    /// A JSON body, serialized the way GitHub does (compact).
    pub fn json(status: u16, value: &serde_json::Value) -> Response {
        Response::bytes(
            status,
            "application/json; charset=utf-8",
            value.to_string().into_bytes(),
        )
    }

    /// Adds a header (several with the same name are all sent).
    pub fn header(mut self, name: &str, value: impl Into<String>) -> Response {
        self.headers.push((name.to_ascii_lowercase(), value.into()));
        self
    }

    /// Replaces the body.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Response {
        self.body = body.into();
        self
    }

    /// Sends the body slowly (see [`Pace`]).
    pub fn paced(mut self, pace: Pace) -> Response {
        self.pace = Some(pace);
        self
    }

    /// The first value of a header this response carries.
    pub fn header_value(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
}

type Handler = dyn Fn(&Request) -> Response + Send + Sync;

/// A running server; dropping it stops accepting and closes every open connection.
pub struct Server {
    addr: SocketAddr,
    scheme: &'static str,
    stop: Arc<AtomicBool>,
    connections: Arc<Mutex<HashMap<u64, TcpStream>>>,
    requests: Arc<Mutex<Vec<Request>>>,
    accept: Option<JoinHandle<()>>,
}

impl Server {
    /// Serves `handler` on a free loopback port until the server is dropped.
    pub fn start(handler: impl Fn(&Request) -> Response + Send + Sync + 'static) -> Server {
        Server::serve(listen(), handler)
    }

    /// Serves `listener` with `handler` until the server is dropped.
    pub fn serve(
        listener: TcpListener,
        handler: impl Fn(&Request) -> Response + Send + Sync + 'static,
    ) -> Server {
        Server::serve_on(listener, None, handler)
    }

    /// Serves `listener` over TLS with `config` (see `support::tls`) until dropped.
    pub fn serve_tls(
        listener: TcpListener,
        config: Arc<ServerConfig>,
        handler: impl Fn(&Request) -> Response + Send + Sync + 'static,
    ) -> Server {
        Server::serve_on(listener, Some(config), handler)
    }

    fn serve_on(
        listener: TcpListener,
        tls: Option<Arc<ServerConfig>>,
        handler: impl Fn(&Request) -> Response + Send + Sync + 'static,
    ) -> Server {
        let scheme = if tls.is_some() { "https" } else { "http" };
        let addr = listener
            .local_addr()
            .expect("local address of the listener");
        let stop = Arc::new(AtomicBool::new(false));
        let connections = Arc::new(Mutex::new(HashMap::new()));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = {
            let requests = Arc::clone(&requests);
            Arc::new(move |request: &Request| {
                lock(&requests).push(request.clone());
                handler(request)
            })
        };
        let accept = {
            let stop = Arc::clone(&stop);
            let connections = Arc::clone(&connections);
            thread::spawn(move || accept_loop(listener, tls, handler, stop, connections))
        };
        Server {
            addr,
            scheme,
            stop,
            connections,
            requests,
            accept: Some(accept),
        }
    }

    /// `http://127.0.0.1:<port>` (`https://` over TLS), without a trailing slash.
    pub fn url(&self) -> String {
        format!("{}://{}", self.scheme, self.addr)
    }

    /// `127.0.0.1:<port>`: the host of an image reference served here.
    pub fn host(&self) -> String {
        self.addr.to_string()
    }

    /// Every request so far, oldest first.
    pub fn requests(&self) -> Vec<Request> {
        lock(&self.requests).clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop, which is blocked in `accept`.
        let _ = TcpStream::connect(self.addr);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
        for (_, stream) in lock(&self.connections).drain() {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panicking handler thread must not take the whole server (and test) down with it.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn accept_loop(
    listener: TcpListener,
    tls: Option<Arc<ServerConfig>>,
    handler: Arc<Handler>,
    stop: Arc<AtomicBool>,
    connections: Arc<Mutex<HashMap<u64, TcpStream>>>,
) {
    let next_id = AtomicU64::new(0);
    for stream in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = stream else { continue };
        let id = next_id.fetch_add(1, Ordering::SeqCst);
        if let Ok(clone) = stream.try_clone() {
            lock(&connections).insert(id, clone);
        }
        let handler = Arc::clone(&handler);
        let stop = Arc::clone(&stop);
        let connections = Arc::clone(&connections);
        let tls = tls.clone();
        thread::spawn(move || {
            let _ = stream.set_read_timeout(Some(IDLE_TIMEOUT));
            let _ = stream.set_nodelay(true);
            match tls.map(ServerConnection::new) {
                None => serve_connection(stream, &*handler, &stop),
                Some(Ok(tls)) => serve_connection(StreamOwned::new(tls, stream), &*handler, &stop),
                Some(Err(_)) => {}
            }
            lock(&connections).remove(&id);
        });
    }
}

/// Serves one connection, plain or TLS; the handshake (if any) happens at the first read, and a
/// client that refuses the certificate just ends the connection there.
fn serve_connection(stream: impl Read + Write, handler: &Handler, stop: &AtomicBool) {
    let mut reader = BufReader::new(stream);
    loop {
        let request = match read_request(&mut reader) {
            Ok(Some(request)) => request,
            Ok(None) => return,
            Err(e) => {
                // Answer garbage with 400; an idle or broken connection just closes.
                if e.kind() == std::io::ErrorKind::InvalidData {
                    let writer = reader.get_mut();
                    let _ = write_response(writer, &Response::new(400), false, false, stop);
                }
                return;
            }
        };
        let keep_alive = !request
            .header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"));
        let response = handler(&request);
        if !sleep_unless_stopped(response.delay, stop) {
            return;
        }
        let head_only = request.method == "HEAD";
        let writer = reader.get_mut();
        if write_response(writer, &response, head_only, keep_alive, stop).is_err() || !keep_alive {
            return;
        }
        if response.cut_at.is_some() && !head_only {
            // Returning closes the connection: the stream is dropped here and its clone in
            // `connections` right after.
            return;
        }
    }
}

/// Sleeps in short steps so a dropped server does not wait out a long delay; false if stopped.
fn sleep_unless_stopped(delay: Duration, stop: &AtomicBool) -> bool {
    let until = Instant::now() + delay;
    while Instant::now() < until {
        if stop.load(Ordering::SeqCst) {
            return false;
        }
        thread::sleep(
            until
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(20)),
        );
    }
    !stop.load(Ordering::SeqCst)
}

/// Reads one request; `Ok(None)` when the client closed the connection between requests.
/// Answers `Expect: 100-continue` on the same stream before reading the body, as git's HTTP
/// client waits for it before a large push or fetch negotiation.
fn read_request(reader: &mut BufReader<impl Read + Write>) -> std::io::Result<Option<Request>> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target), Some(_version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(invalid("malformed request line"));
    };
    let (method, target) = (method.to_string(), target.to_string());
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Err(invalid("connection closed inside the headers"));
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            break;
        }
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| invalid("header without a colon"))?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let mut request = Request {
        method,
        target,
        headers,
        body: Vec::new(),
    };
    if request
        .header("expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    {
        let writer = reader.get_mut();
        writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        writer.flush()?;
    }
    if request
        .header("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    {
        request.body = read_chunked(reader)?;
    } else if let Some(length) = request.header("content-length") {
        let length: usize = length.parse().map_err(|_| invalid("bad content-length"))?;
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        request.body = body;
    }
    Ok(Some(request))
}

fn read_chunked(reader: &mut impl BufRead) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size_line = String::new();
        reader.read_line(&mut size_line)?;
        let size = size_line.trim().split(';').next().unwrap_or("");
        let size = usize::from_str_radix(size, 16).map_err(|_| invalid("bad chunk size"))?;
        if size == 0 {
            // Trailers, then the empty line.
            loop {
                let mut trailer = String::new();
                if reader.read_line(&mut trailer)? == 0 || trailer.trim().is_empty() {
                    return Ok(body);
                }
            }
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        let mut crlf = [0; 2];
        reader.read_exact(&mut crlf)?;
    }
}

fn invalid(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string())
}

fn write_response(
    writer: &mut impl Write,
    response: &Response,
    head_only: bool,
    keep_alive: bool,
    stop: &AtomicBool,
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        response.status,
        reason(response.status)
    );
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    let bodiless = response.status == 204 || response.status == 304;
    if !bodiless {
        head.push_str(&format!("content-length: {}\r\n", response.body.len()));
    }
    head.push_str(if keep_alive {
        "connection: keep-alive\r\n\r\n"
    } else {
        "connection: close\r\n\r\n"
    });
    writer.write_all(head.as_bytes())?;
    if bodiless || head_only {
        return writer.flush();
    }
    let body = &response.body[..response
        .cut_at
        .unwrap_or(usize::MAX)
        .min(response.body.len())];
    let Some(pace) = response.pace else {
        writer.write_all(body)?;
        return writer.flush();
    };
    writer.flush()?;
    for piece in body.chunks(pace.piece.max(1)) {
        if !sleep_unless_stopped(pace.pause, stop) {
            return Err(std::io::ErrorKind::Interrupted.into());
        }
        writer.write_all(piece)?;
        writer.flush()?;
    }
    Ok(())
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Unknown",
    }
}
