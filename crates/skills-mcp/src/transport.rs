//! Serving a [`SkillsServer`]: over any byte stream (standard input and
//! output by default), or over Streamable HTTP with an optional bearer token.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode, header};
use hyper_util::rt::TokioIo;
use rmcp::service::ServerInitializeError;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde::de::IgnoredAny;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader,
    DuplexStream,
};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use crate::error::{Error, ErrorKind};
use crate::server::SkillsServer;

/// Largest JSON-RPC message accepted over HTTP (a POST body), by default.
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// The environment variable `skills mcp --http` reads its bearer token from.
pub const TOKEN_ENV: &str = "SKILLS_MCP_TOKEN";

/// Serves one client over standard input and output until it disconnects.
///
/// # Errors
///
/// [`ErrorKind::Transport`] when the handshake fails for another reason than
/// the client going away.
pub async fn serve_stdio(server: &SkillsServer) -> Result<(), Error> {
    serve_io(server, tokio::io::stdin(), tokio::io::stdout()).await
}

/// Serves one client over a pair of byte streams (newline-delimited
/// JSON-RPC) until it disconnects.
///
/// A line that is not JSON gets a JSON-RPC parse error (`-32700`, `id`
/// null), as the JSON-RPC specification asks (the SDK alone would drop it
/// silently); other malformed messages get the SDK's errors; blank lines are
/// skipped; a line longer than [`MAX_LINE_BYTES`] gets a parse error and
/// ends the session. A client that closes its end mid-call ends the session
/// cleanly: the result is `Ok(())`.
///
/// # Errors
///
/// [`ErrorKind::Transport`] when the handshake fails for another reason than
/// the client going away (e.g. the first message is not `initialize`).
pub async fn serve_io<R, W>(server: &SkillsServer, read: R, write: W) -> Result<(), Error>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let span = tracing::debug_span!("skills_mcp.session");
    async move {
        // The SDK reads only well-formed lines and writes into a pipe; the
        // forwarder interleaves its answers with parse errors, line by line.
        let (to_sdk, sdk_in) = tokio::io::duplex(PIPE_BYTES);
        let (sdk_out, from_sdk) = tokio::io::duplex(PIPE_BYTES);
        let (errors, error_lines) = mpsc::channel(16);
        let inbound = tokio::spawn(filter_inbound(read, to_sdk, errors));
        let outbound = tokio::spawn(forward_outbound(from_sdk, error_lines, write));
        let result = match rmcp::serve_server(server.connection(), (sdk_in, sdk_out)).await {
            Ok(running) => {
                // Ended by the client closing the stream (or a task
                // failing): either way the session is over.
                let reason = running.waiting().await;
                tracing::debug!(?reason, "session ended");
                Ok(())
            }
            Err(ServerInitializeError::ConnectionClosed(_) | ServerInitializeError::Cancelled) => {
                Ok(())
            }
            Err(err) => Err(Error::new(
                ErrorKind::Transport,
                format!("the MCP handshake failed: {err}"),
            )),
        };
        inbound.abort();
        // The SDK's half of the pipe is gone: the forwarder writes what is
        // left and ends (bounded, for a client that stopped reading).
        let _ = tokio::time::timeout(FLUSH_GRACE, outbound).await;
        result
    }
    .instrument(span)
    .await
}

/// The longest line [`serve_io`] reads (the SDK's own limit).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

const PIPE_BYTES: usize = 64 * 1024;
const FLUSH_GRACE: Duration = Duration::from_secs(5);

/// Passes the client's well-formed lines to the SDK and turns the others
/// into parse errors; ends at the client's end of stream, a read error or
/// an over-long line.
async fn filter_inbound<R: AsyncRead + Unpin>(
    read: R,
    mut to_sdk: DuplexStream,
    errors: mpsc::Sender<String>,
) {
    let mut read = BufReader::new(read);
    loop {
        let line = match next_line(&mut read, MAX_LINE_BYTES).await {
            Ok(Some(line)) => line,
            Ok(None) => return,
            Err(err) => {
                let _ = errors.send(parse_error(&err.to_string())).await;
                return;
            }
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if let Err(err) = serde_json::from_slice::<IgnoredAny>(&line) {
            tracing::debug!(%err, "a line that is not JSON");
            if errors.send(parse_error(&err.to_string())).await.is_err() {
                return;
            }
            continue;
        }
        if to_sdk.write_all(&line).await.is_err() {
            return;
        }
        if !line.ends_with(b"\n") && to_sdk.write_all(b"\n").await.is_err() {
            return;
        }
    }
}

/// One line (with its newline, when it has one), `None` at the end of the
/// stream; an error for a line over `max` bytes.
async fn next_line<R: AsyncBufRead + Unpin>(
    read: &mut R,
    max: usize,
) -> std::io::Result<Option<Vec<u8>>> {
    let mut line = Vec::new();
    loop {
        let buf = read.fill_buf().await?;
        if buf.is_empty() {
            return Ok((!line.is_empty()).then_some(line));
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        if line.len() + take > max {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("a message longer than {max} bytes"),
            ));
        }
        line.extend_from_slice(&buf[..take]);
        read.consume(take);
        if done {
            return Ok(Some(line));
        }
    }
}

/// A JSON-RPC parse error for a message without a usable id.
fn parse_error(why: &str) -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32700, "message": format!("parse error: {why}")},
    })
    .to_string()
}

/// Writes the SDK's lines and the parse errors to the client, whole lines
/// only, until the SDK's side ends.
async fn forward_outbound<W: AsyncWrite + Unpin>(
    from_sdk: DuplexStream,
    mut errors: mpsc::Receiver<String>,
    mut write: W,
) -> std::io::Result<()> {
    let mut from_sdk = BufReader::new(from_sdk);
    // `read_until` keeps what it read in `line` when the other branch wins.
    let mut line = Vec::new();
    let mut errors_open = true;
    loop {
        tokio::select! {
            read = from_sdk.read_until(b'\n', &mut line) => {
                if read? == 0 {
                    break;
                }
                write.write_all(&line).await?;
                write.flush().await?;
                line.clear();
            }
            error = errors.recv(), if errors_open => match error {
                Some(text) => {
                    write.write_all(text.as_bytes()).await?;
                    write.write_all(b"\n").await?;
                    write.flush().await?;
                }
                None => errors_open = false,
            },
        }
    }
    if !line.is_empty() {
        write.write_all(&line).await?;
    }
    // Errors sent before the client's stream ended (so before the SDK saw
    // its end) are in the channel by now.
    while let Ok(text) = errors.try_recv() {
        write.write_all(text.as_bytes()).await?;
        write.write_all(b"\n").await?;
    }
    write.flush().await
}

/// Settings of the Streamable HTTP server.
#[derive(Clone)]
pub struct HttpOptions {
    addr: SocketAddr,
    token: Option<String>,
    max_request_bytes: usize,
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("addr", &self.addr)
            .field("token", &self.token.as_ref().map(|_| "…"))
            .field("max_request_bytes", &self.max_request_bytes)
            .finish()
    }
}

impl HttpOptions {
    /// Listen on `addr` (port 0 picks a free port).
    pub fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            token: None,
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
        }
    }

    /// Require `Authorization: Bearer TOKEN` on every request (required for
    /// an address that is not loopback). An empty token counts as none.
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
}

/// A running Streamable HTTP server (the MCP endpoint is `/mcp`).
#[derive(Debug)]
pub struct HttpServer {
    local_addr: SocketAddr,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl HttpServer {
    /// Binds `options.addr` and starts serving `server` on the current tokio
    /// runtime.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`] for an address that is not loopback without a
    /// token; [`ErrorKind::Io`] when the address cannot be bound.
    pub async fn bind(server: SkillsServer, options: HttpOptions) -> Result<Self, Error> {
        if !options.addr.ip().is_loopback() && options.token.is_none() {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "refusing to serve on {} without a token: an address that is not loopback \
                     needs a bearer token (set {TOKEN_ENV})",
                    options.addr
                ),
            ));
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
        let stop = CancellationToken::new();
        let mut config = StreamableHttpServerConfig::default()
            .with_cancellation_token(stop.child_token())
            .with_max_request_body_bytes(options.max_request_bytes);
        if !options.addr.ip().is_loopback() {
            // Behind a token, any Host may reach us (DNS rebinding cannot
            // forge the token).
            config = config.disable_allowed_hosts();
        }
        let service = StreamableHttpService::new(
            move || Ok(server.connection()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let token: Option<Arc<str>> = options.token.map(Into::into);
        let task = tokio::spawn(accept_loop(listener, service, token, stop.clone()));
        tracing::info!(addr = %local_addr, "serving MCP over Streamable HTTP at /mcp");
        Ok(Self {
            local_addr,
            stop,
            task,
        })
    }

    /// The address bound (with the port picked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops accepting, ends every session and waits for the accept loop.
    pub async fn shutdown(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

type Service = StreamableHttpService<SkillsServer, LocalSessionManager>;

async fn accept_loop(
    listener: TcpListener,
    service: Service,
    token: Option<Arc<str>>,
    stop: CancellationToken,
) {
    loop {
        let (stream, peer) = tokio::select! {
            () = stop.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    tracing::warn!(error = %err, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let service = service.clone();
        let token = token.clone();
        let stop = stop.clone();
        tokio::spawn(
            async move {
                let handler = hyper::service::service_fn(move |request: Request<Incoming>| {
                    let service = service.clone();
                    let token = token.clone();
                    async move {
                        if !authorized(&request, token.as_deref()) {
                            return Ok::<_, Infallible>(unauthorized());
                        }
                        Ok(service.handle(request).await)
                    }
                });
                let connection = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), handler);
                tokio::pin!(connection);
                tokio::select! {
                    result = connection.as_mut() => {
                        if let Err(err) = result {
                            tracing::debug!(error = %err, "HTTP connection ended with an error");
                        }
                    }
                    () = stop.cancelled() => {
                        connection.as_mut().graceful_shutdown();
                        let _ = connection.await;
                    }
                }
            }
            .instrument(tracing::debug_span!("skills_mcp.http_connection", %peer)),
        );
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

fn unauthorized() -> Response<BoxBody<Bytes, Infallible>> {
    let mut response = Response::new(
        Full::new(Bytes::from_static(
            b"401 Unauthorized: send Authorization: Bearer <token>\n",
        ))
        .boxed(),
    );
    *response.status_mut() = StatusCode::UNAUTHORIZED;
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
}
