//! Streamable HTTP: the SDK's service behind our own connection handling,
//! which adds what a server reachable by other users and by web pages needs:
//! a bearer token, an `Origin` check, and a limit on everything a peer can
//! make the server hold (connections, sessions, time to send a request,
//! request size).
//!
//! hyper serves the connections (HTTP/1.1, `TCP_NODELAY` set: an MCP answer
//! is one small write, which Nagle's algorithm would hold back until the
//! peer's delayed ACK, about 40 ms); the SDK's `StreamableHttpService`
//! answers each request, over a session manager of ours that caps the
//! sessions ([`sessions`](super::sessions)).

use std::cell::Cell;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future as _;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, Limited, combinators::BoxBody};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::{Method, Request, Response, StatusCode, header};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument as _;

use super::connections::{self, Connections, InFlight};
use super::sessions::{BoundedSessions, REFUSED};
use crate::error::{Error, ErrorKind};
use crate::server::SkillsServer;

/// Largest JSON-RPC message accepted over HTTP (a POST body), by default;
/// larger ones get `413`.
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// Sessions (`initialize` handshakes) open at once, by default. At the cap
/// the least recently used idle session is closed for the new one; when
/// every session is busy, the new one gets `503`.
pub const DEFAULT_MAX_SESSIONS: usize = 256;

/// How long a session may sit without a request before it is closed, by
/// default (its client gets `404` and starts a new one).
pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// HTTP connections open at once, by default. At the cap the connection
/// idle the longest is closed for the new one; when every connection is
/// answering a request, the new one gets `503`.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;

/// How long a peer may take to send a request's headers, by default; the
/// same limit closes a keep-alive connection idle between two requests.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a peer may take to send a request's body, by default; then it
/// gets `408`.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// How long [`HttpServer::shutdown`] waits for the requests in flight, by
/// default, before it ends them.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// The browser origins always allowed on a loopback address: pages served
/// from this machine (any port). `Origin` is checked against DNS
/// rebinding, as the MCP specification asks of local servers; a request
/// without `Origin` (any client that is not a browser) is not affected.
pub const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// The environment variable `skills mcp --http` reads its bearer token from.
pub const TOKEN_ENV: &str = "SKILLS_MCP_TOKEN";

/// How many times the headers of an event stream answering a POST let the
/// runtime run other tasks (those producing the answer) while they wait for
/// its first message, to leave in the same write. A count, not a timer: a
/// timer per request cost more than the write it saves.
const COALESCE_YIELDS: u32 = 8;

/// How long a refused connection is given to read its `503`.
const REFUSAL_GRACE: Duration = Duration::from_secs(1);
/// How long connections get to close once their sessions have ended.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// Settings of the Streamable HTTP server. Every limit has a default (the
/// `DEFAULT_…` constants) and a setter.
#[derive(Clone)]
pub struct HttpOptions {
    addr: SocketAddr,
    token: Option<String>,
    max_request_bytes: usize,
    max_sessions: usize,
    session_idle_timeout: Duration,
    max_connections: usize,
    header_read_timeout: Duration,
    body_read_timeout: Duration,
    shutdown_grace: Duration,
    allowed_origins: Vec<String>,
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("addr", &self.addr)
            .field("token", &self.token.as_ref().map(|_| "…"))
            .field("max_request_bytes", &self.max_request_bytes)
            .field("max_sessions", &self.max_sessions)
            .field("session_idle_timeout", &self.session_idle_timeout)
            .field("max_connections", &self.max_connections)
            .field("header_read_timeout", &self.header_read_timeout)
            .field("body_read_timeout", &self.body_read_timeout)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("allowed_origins", &self.allowed_origins)
            .finish()
    }
}

impl HttpOptions {
    /// Listen on `addr` (port 0 picks a free port), with every limit at its
    /// default.
    pub fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            token: None,
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_idle_timeout: DEFAULT_SESSION_IDLE_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            allowed_origins: Vec::new(),
        }
    }

    /// Require `Authorization: Bearer TOKEN` on every request. Required for
    /// an address that is not loopback, and whenever the server offers the
    /// run tools. An empty token counts as none.
    #[must_use]
    pub fn token(mut self, token: Option<String>) -> Self {
        self.token = token.filter(|t| !t.is_empty());
        self
    }

    /// Largest request body, in bytes (default
    /// [`DEFAULT_MAX_REQUEST_BYTES`]); larger ones get `413`.
    #[must_use]
    pub fn max_request_bytes(mut self, bytes: usize) -> Self {
        self.max_request_bytes = bytes;
        self
    }

    /// Sessions open at once (at least 1; default
    /// [`DEFAULT_MAX_SESSIONS`]).
    #[must_use]
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n.max(1);
        self
    }

    /// How long a session may go without a request (default
    /// [`DEFAULT_SESSION_IDLE_TIMEOUT`]).
    #[must_use]
    pub fn session_idle_timeout(mut self, idle: Duration) -> Self {
        self.session_idle_timeout = idle;
        self
    }

    /// Connections open at once (at least 1; default
    /// [`DEFAULT_MAX_CONNECTIONS`]).
    #[must_use]
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// How long a request's headers may take to arrive, and a keep-alive
    /// connection may sit idle (default [`DEFAULT_HEADER_READ_TIMEOUT`]).
    #[must_use]
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// How long a request's body may take to arrive (default
    /// [`DEFAULT_BODY_READ_TIMEOUT`]).
    #[must_use]
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// How long [`HttpServer::shutdown`] waits for the requests in flight
    /// (default [`DEFAULT_SHUTDOWN_GRACE`]).
    #[must_use]
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Also allow requests whose `Origin` is `origin`: `SCHEME://HOST`,
    /// `SCHEME://HOST:PORT`, `SCHEME://HOST:*` (any port) or `null`. On a
    /// loopback address the [`LOOPBACK_ORIGINS`] are always allowed; a
    /// request with any other `Origin` gets `403`, one without `Origin`
    /// is not affected.
    #[must_use]
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins.push(origin.into());
        self
    }
}

/// A running Streamable HTTP server (the MCP endpoint is `/mcp`).
#[derive(Debug)]
pub struct HttpServer {
    local_addr: SocketAddr,
    /// Stops the accept loop and lets each connection end after its
    /// current request.
    accepting: CancellationToken,
    /// Ends every session and its event streams.
    sessions_stop: CancellationToken,
    task: JoinHandle<()>,
    tracker: TaskTracker,
    in_flight: Arc<InFlight>,
    sessions: Arc<BoundedSessions>,
    connections: Arc<Connections>,
    grace: Duration,
}

impl HttpServer {
    /// Binds `options.addr` and starts serving `server` on the current tokio
    /// runtime.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`] for an address that is not loopback without a
    /// token, for a server with the run tools without a token (on any
    /// address: any local user could run commands otherwise), and for a
    /// malformed allowed origin; [`ErrorKind::Io`] when the address cannot
    /// be bound.
    pub async fn bind(server: SkillsServer, options: HttpOptions) -> Result<Self, Error> {
        let loopback = options.addr.ip().is_loopback();
        if !loopback && options.token.is_none() {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "refusing to serve on {} without a token: an address that is not loopback \
                     needs a bearer token (set {TOKEN_ENV})",
                    options.addr
                ),
            ));
        }
        if server.runs_commands() && options.token.is_none() {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "refusing to serve the run tools on {} without a token: any local user \
                     could run commands through it; set {TOKEN_ENV} to a secret (clients send \
                     `Authorization: Bearer <token>`)",
                    options.addr
                ),
            ));
        }
        for origin in &options.allowed_origins {
            check_origin(origin)?;
        }
        let listener = TcpListener::bind(options.addr).await.map_err(|err| {
            Error::new(
                ErrorKind::Io,
                format!("cannot listen on {}: {err}", options.addr),
            )
        })?;
        let local_addr = listener
            .local_addr()
            .map_err(|err| Error::new(ErrorKind::Io, err.to_string()))?;

        let mut origins = options.allowed_origins.clone();
        if loopback {
            origins.extend(LOOPBACK_ORIGINS.iter().map(|o| (*o).to_owned()));
        }
        let sessions_stop = CancellationToken::new();
        let mut config = StreamableHttpServerConfig::default()
            .with_cancellation_token(sessions_stop.clone())
            .with_max_request_body_bytes(options.max_request_bytes)
            .with_allowed_origins(origins)
            .enforce_origin_validation();
        if !loopback {
            // Behind a token, any Host may reach us (DNS rebinding cannot
            // forge the token).
            config = config.disable_allowed_hosts();
        }
        let sessions = Arc::new(BoundedSessions::new(
            options.max_sessions,
            options.session_idle_timeout,
        ));
        let service = StreamableHttpService::new(
            move || Ok(server.connection()),
            Arc::clone(&sessions),
            config,
        );
        let connections = Arc::new(Connections::new(options.max_connections));
        let in_flight = Arc::new(InFlight::default());
        let shared = Arc::new(Shared {
            service,
            token: options.token.map(Into::into),
            connections: Arc::clone(&connections),
            in_flight: Arc::clone(&in_flight),
            max_request_bytes: options.max_request_bytes,
            header_read_timeout: options.header_read_timeout,
            body_read_timeout: options.body_read_timeout,
        });
        let accepting = CancellationToken::new();
        let tracker = TaskTracker::new();
        let task = tokio::spawn(accept_loop(
            listener,
            shared,
            accepting.clone(),
            tracker.clone(),
        ));
        tracing::info!(addr = %local_addr, "serving MCP over Streamable HTTP at /mcp");
        Ok(Self {
            local_addr,
            accepting,
            sessions_stop,
            task,
            tracker,
            in_flight,
            sessions,
            connections,
            grace: options.shutdown_grace,
        })
    }

    /// The address bound (with the port picked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Sessions open now.
    pub fn open_sessions(&self) -> usize {
        self.sessions.len()
    }

    /// Connections open now.
    pub fn open_connections(&self) -> usize {
        self.connections.len()
    }

    /// Stops accepting, lets the requests in flight finish (for at most the
    /// [shutdown grace](HttpOptions::shutdown_grace)), then ends every
    /// session and closes the connections.
    pub async fn shutdown(mut self) {
        self.accepting.cancel();
        if tokio::time::timeout(self.grace, self.in_flight.idle())
            .await
            .is_err()
        {
            tracing::warn!(grace = ?self.grace, "requests still in flight at the end of the shutdown grace; ending them");
        }
        self.sessions_stop.cancel();
        self.tracker.close();
        if tokio::time::timeout(CLOSE_GRACE, self.tracker.wait())
            .await
            .is_err()
        {
            tracing::debug!("connections still open after the shutdown");
        }
        let _ = (&mut self.task).await;
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.accepting.cancel();
        self.sessions_stop.cancel();
    }
}

/// A malformed allowed origin is a configuration error, not an origin that
/// silently never matches.
fn check_origin(origin: &str) -> Result<(), Error> {
    if origin == "null" {
        return Ok(());
    }
    let base = origin.strip_suffix(":*").unwrap_or(origin);
    let well_formed = base.parse::<hyper::Uri>().is_ok_and(|uri| {
        uri.scheme().is_some()
            && uri.authority().is_some()
            && uri.query().is_none()
            && matches!(uri.path(), "" | "/")
            && !base.ends_with('/')
    });
    if well_formed {
        Ok(())
    } else {
        Err(Error::new(
            ErrorKind::Config,
            format!(
                "invalid allowed origin `{origin}`: use SCHEME://HOST[:PORT] (e.g. \
                 https://app.example.com), SCHEME://HOST:* for any port, or null"
            ),
        ))
    }
}

type Service = StreamableHttpService<SkillsServer, BoundedSessions>;

/// What every connection of one server shares.
struct Shared {
    service: Service,
    token: Option<Arc<str>>,
    connections: Arc<Connections>,
    in_flight: Arc<InFlight>,
    max_request_bytes: usize,
    header_read_timeout: Duration,
    body_read_timeout: Duration,
}

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    accepting: CancellationToken,
    tracker: TaskTracker,
) {
    loop {
        let (stream, peer) = tokio::select! {
            () = accepting.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of file descriptors, most likely: close the
                    // connection idle the longest, so that peers holding
                    // connections open cannot keep others out, and retry.
                    let evicted = shared.connections.evict_idlest();
                    tracing::warn!(error = %err, evicted, "accept failed");
                    tokio::time::sleep(Duration::from_millis(if evicted { 5 } else { 50 })).await;
                    continue;
                }
            },
        };
        if let Err(err) = stream.set_nodelay(true) {
            tracing::debug!(error = %err, "cannot set TCP_NODELAY");
        }
        let Some(slot) = shared.connections.admit() else {
            tracing::warn!(%peer, "refusing a connection: every connection is busy");
            tokio::spawn(refuse(stream));
            continue;
        };
        tracker.spawn(
            serve_connection(stream, Arc::clone(&shared), slot, accepting.clone())
                .instrument(tracing::debug_span!("skills_mcp.http_connection", %peer)),
        );
    }
}

/// Answers `503` without reading the request, then closes (after the peer
/// had a moment to read it: closing with its request unread would reset
/// the connection before it sees the answer).
async fn refuse(mut stream: TcpStream) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    const BODY: &str = "503 Service Unavailable: every connection is busy; retry later\n";
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n\
         retry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{BODY}",
        BODY.len()
    );
    let _ = tokio::time::timeout(REFUSAL_GRACE, async {
        stream.write_all(answer.as_bytes()).await?;
        stream.shutdown().await?;
        let mut sink = [0u8; 4096];
        while stream.read(&mut sink).await? > 0 {}
        Ok::<_, std::io::Error>(())
    })
    .await;
}

async fn serve_connection(
    stream: TcpStream,
    shared: Arc<Shared>,
    slot: connections::Slot,
    accepting: CancellationToken,
) {
    let evict = slot.connection.evict.clone();
    let slot = Arc::new(slot);
    let handler = hyper::service::service_fn({
        let shared = Arc::clone(&shared);
        move |request: Request<Incoming>| {
            let shared = Arc::clone(&shared);
            let busy = slot.busy();
            async move { Ok::<_, Infallible>(handle(request, &shared, busy).await) }
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(shared.header_read_timeout);
    let connection = builder.serve_connection(TokioIo::new(stream), handler);
    tokio::pin!(connection);
    tokio::select! {
        result = connection.as_mut() => {
            if let Err(err) = result {
                tracing::debug!(error = %err, "HTTP connection ended with an error");
            }
        }
        () = evict.cancelled() => {
            tracing::debug!("closed to make room for a new connection");
        }
        () = accepting.cancelled() => {
            connection.as_mut().graceful_shutdown();
            tokio::select! {
                _ = connection.as_mut() => {}
                () = evict.cancelled() => {}
            }
        }
    }
}

/// One request: the token, the body (whole, bounded in size and time),
/// then the SDK's answer, whose body keeps the connection busy (and the
/// request counted in flight) until it is written.
async fn handle(
    request: Request<Incoming>,
    shared: &Shared,
    busy: connections::Busy,
) -> Response<Answer> {
    // Event streams (`GET`) last as long as their session: a shutdown
    // waits for the other requests only.
    let in_flight = (request.method() != Method::GET).then(|| shared.in_flight.enter());
    let post = request.method() == Method::POST;
    let (parts, body) = answer(request, shared).await.into_parts();
    let mut answer = Answer {
        held: VecDeque::new(),
        ended: false,
        body,
        _busy: busy,
        _in_flight: in_flight,
    };
    let event_stream = parts
        .headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if post && event_stream {
        answer.hold_first_frames().await;
    }
    Response::from_parts(parts, answer)
}

type BoxedBody = BoxBody<Bytes, Infallible>;

async fn answer(request: Request<Incoming>, shared: &Shared) -> Response<BoxedBody> {
    if !authorized(&request, shared.token.as_deref()) {
        return unauthorized();
    }
    let (parts, body) = request.into_parts();
    let mut collect = std::pin::pin!(Limited::new(body, shared.max_request_bytes).collect());
    // A small body usually came with the headers: only a body still on its
    // way needs a timer.
    let first = std::future::poll_fn(|cx| Poll::Ready(collect.as_mut().poll(cx))).await;
    let read = match first {
        Poll::Ready(read) => Ok(read),
        Poll::Pending => tokio::time::timeout(shared.body_read_timeout, collect).await,
    };
    let body = match read {
        Ok(Ok(body)) => body.to_bytes(),
        Ok(Err(err)) if err.is::<http_body_util::LengthLimitError>() => {
            return plain(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "413 Payload Too Large: a request body may hold at most {} bytes\n",
                    shared.max_request_bytes
                ),
            );
        }
        Ok(Err(err)) => {
            return plain(
                StatusCode::BAD_REQUEST,
                format!("400 Bad Request: cannot read the request body: {err}\n"),
            );
        }
        Err(_) => {
            return plain(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "408 Request Timeout: the request body did not arrive within {:?}\n",
                    shared.body_read_timeout
                ),
            );
        }
    };
    let request = Request::from_parts(parts, Full::new(body));
    let (response, refused) = REFUSED
        .scope(Cell::new(false), async {
            let response = shared.service.handle(request).await;
            (response, REFUSED.with(Cell::get))
        })
        .await;
    if refused {
        let mut response = plain(
            StatusCode::SERVICE_UNAVAILABLE,
            "503 Service Unavailable: too many MCP sessions, and every one is busy; retry \
             later\n"
                .to_owned(),
        );
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
        return response;
    }
    response
}

/// A response body that holds the connection's busy mark and the request's
/// place in flight until hyper drops it (written, or the peer went away).
struct Answer {
    /// Frames taken from `body` before the headers went out.
    held: VecDeque<Frame<Bytes>>,
    /// `body` ended while its frames were held.
    ended: bool,
    body: BoxedBody,
    _busy: connections::Busy,
    _in_flight: Option<connections::Request>,
}

impl Answer {
    /// Holds the first frames of an event stream answering a POST (the
    /// SDK's priming event, then the message) for [`COALESCE_YIELDS`] turns,
    /// so that the headers, both frames and usually the end of the stream
    /// leave in one write: one packet and one wake-up of the client instead
    /// of two. An answer that takes longer goes out as it comes.
    async fn hold_first_frames(&mut self) {
        let mut yields = 0;
        while self.held.len() < 2 {
            let mut next = std::pin::pin!(self.body.frame());
            let frame = loop {
                match std::future::poll_fn(|cx| Poll::Ready(next.as_mut().poll(cx))).await {
                    Poll::Ready(frame) => break frame,
                    Poll::Pending if yields < COALESCE_YIELDS => {
                        yields += 1;
                        tokio::task::yield_now().await;
                    }
                    Poll::Pending => return,
                }
            };
            match frame {
                Some(Ok(frame)) => self.held.push_back(frame),
                Some(Err(never)) => match never {},
                None => {
                    self.ended = true;
                    return;
                }
            }
        }
    }
}

impl Body for Answer {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        if let Some(frame) = this.held.pop_front() {
            return Poll::Ready(Some(Ok(frame)));
        }
        if this.ended {
            return Poll::Ready(None);
        }
        Pin::new(&mut this.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.held.is_empty() && (self.ended || self.body.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        if !self.held.is_empty() {
            SizeHint::default()
        } else if self.ended {
            SizeHint::with_exact(0)
        } else {
            self.body.size_hint()
        }
    }
}

/// Whether `request` carries the bearer token (always, without a token).
fn authorized<B>(request: &Request<B>, token: Option<&str>) -> bool {
    let Some(token) = token else {
        return true;
    };
    let Some(value) = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let Some((scheme, given)) = value.split_once(' ') else {
        return false;
    };
    scheme.eq_ignore_ascii_case("bearer")
        && constant_time_eq(given.trim().as_bytes(), token.as_bytes())
}

/// Compares without an early exit on the first differing byte.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn plain(status: StatusCode, text: String) -> Response<BoxedBody> {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn unauthorized() -> Response<BoxedBody> {
    let mut response = plain(
        StatusCode::UNAUTHORIZED,
        "401 Unauthorized: send Authorization: Bearer <token>\n".to_owned(),
    );
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(auth: Option<&str>) -> Request<()> {
        let mut builder = Request::builder().uri("/mcp");
        if let Some(auth) = auth {
            builder = builder.header(header::AUTHORIZATION, auth);
        }
        builder.body(()).expect("a valid request")
    }

    #[test]
    fn the_bearer_token_is_checked() {
        assert!(authorized(&request(None), None));
        assert!(!authorized(&request(None), Some("s3cret")));
        assert!(!authorized(&request(Some("Bearer wrong")), Some("s3cret")));
        assert!(!authorized(&request(Some("Basic s3cret")), Some("s3cret")));
        assert!(authorized(&request(Some("Bearer s3cret")), Some("s3cret")));
        assert!(authorized(&request(Some("bearer s3cret")), Some("s3cret")));
    }

    #[test]
    fn allowed_origins_are_checked_when_configured() {
        for good in [
            "https://app.example.com",
            "https://app.example.com:8443",
            "http://localhost:*",
            "http://[::1]:*",
            "null",
            "chrome-extension://abcdef",
        ] {
            assert!(check_origin(good).is_ok(), "{good}");
        }
        for bad in [
            "app.example.com",
            "https://app.example.com/",
            "https://app.example.com/path",
            "https://app.example.com?q",
            "*",
            "",
        ] {
            let err = check_origin(bad).expect_err(bad);
            assert_eq!(err.kind(), ErrorKind::Config);
            assert!(err.message().contains("SCHEME://HOST"), "{err}");
        }
    }
}
