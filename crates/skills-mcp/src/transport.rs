//! Serving a [`SkillsServer`](crate::SkillsServer): over any byte stream
//! (standard input and output by default), or over Streamable HTTP with a
//! bearer token, an `Origin` check and a cap on everything a peer can make
//! the server hold.

mod connections;
mod http;
mod sessions;
mod stdio;

pub use http::{
    DEFAULT_BODY_READ_TIMEOUT, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT,
    DEFAULT_SHUTDOWN_GRACE, HttpOptions, HttpServer, LOOPBACK_ORIGINS, TOKEN_ENV,
};
pub use stdio::{
    MAX_JSON_DEPTH, MAX_LINE_BYTES, serve_io, serve_io_until, serve_stdio, serve_stdio_until,
};
