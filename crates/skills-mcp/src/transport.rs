//! Serving a [`SkillsServer`]: over any byte stream (standard input and
//! output by default), or over Streamable HTTP with an optional bearer token.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode, header};
use hyper_util::rt::TokioIo;
use rmcp::service::ServerInitializeError;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
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
/// Malformed messages get a JSON-RPC error or are dropped; a line longer
/// than 16 MiB ends the session. A client that closes its end mid-call ends
/// the session cleanly: the result is `Ok(())`.
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
        let running = match rmcp::serve_server(server.connection(), (read, write)).await {
            Ok(running) => running,
            Err(ServerInitializeError::ConnectionClosed(_) | ServerInitializeError::Cancelled) => {
                return Ok(());
            }
            Err(err) => {
                return Err(Error::new(
                    ErrorKind::Transport,
                    format!("the MCP handshake failed: {err}"),
                ));
            }
        };
        // Ended by the client closing the stream (or a task failing):
        // either way the session is over.
        let reason = running.waiting().await;
        tracing::debug!(?reason, "session ended");
        Ok(())
    }
    .instrument(span)
    .await
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
