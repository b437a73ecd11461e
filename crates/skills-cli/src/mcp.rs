//! `skills mcp`: serve the skills to any MCP client, over standard input and
//! output or over Streamable HTTP (`--http ADDR`).
//!
//! Everything MCP lives in `skills-mcp`; this module picks the transport,
//! the run runtime and the token, and maps failures to exit codes.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use skills_core::SkillProvider;
use skills_mcp::{HttpOptions, HttpServer, SkillsServer, TOKEN_ENV};

use crate::Failure;
use crate::agent::RunMode;

/// What `skills mcp` was asked to do.
#[derive(Debug)]
pub(crate) struct McpArgs {
    /// Serve Streamable HTTP on this address instead of stdio.
    pub(crate) http: Option<SocketAddr>,
    /// Offer the run tools on this runtime.
    pub(crate) run: Option<RunMode>,
    /// How often to look for changed skills.
    pub(crate) poll: Duration,
}

/// Parses `--http`: `HOST:PORT`, or a bare `PORT` on 127.0.0.1.
pub(crate) fn parse_addr(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse().map_err(|_| {
        format!("invalid address `{text}`: use HOST:PORT (e.g. 127.0.0.1:8700) or a port")
    })
}

/// Runs `skills mcp` until the client goes away (stdio) or until
/// interrupted (HTTP); returns the exit code.
pub(crate) fn run(args: McpArgs, provider: Arc<dyn SkillProvider>) -> Result<u8, Failure> {
    // Refused before anything starts.
    let token = std::env::var(TOKEN_ENV).ok().filter(|t| !t.is_empty());
    if let Some(addr) = args.http
        && !addr.ip().is_loopback()
        && token.is_none()
    {
        return Err(Failure::usage(format!(
            "refusing to serve on {addr}, which is not a loopback address, without a token: \
             set {TOKEN_ENV} to a secret; clients then send `Authorization: Bearer <token>`"
        )));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|err| Failure::usage(format!("cannot start the async runtime: {err}")))?;
    runtime.block_on(serve(args, provider, token))
}

async fn serve(
    args: McpArgs,
    provider: Arc<dyn SkillProvider>,
    token: Option<String>,
) -> Result<u8, Failure> {
    let root = skills_exec::private_root("skills-mcp");
    let workspaces = args.run.map(|mode| mode.runtime(&root)).transpose()?;
    let mut builder = SkillsServer::builder(provider)
        .server_info("skills", env!("CARGO_PKG_VERSION"))
        .poll_interval(args.poll);
    if let Some(workspaces) = &workspaces {
        builder = builder.runtime(Arc::clone(workspaces));
    }
    let server = builder
        .build()
        .await
        .map_err(|err| Failure::usage(err.to_string()))?;
    let result = match args.http {
        None => skills_mcp::serve_stdio(&server)
            .await
            .map(|()| 0)
            .map_err(|err| Failure {
                code: 1,
                message: err.to_string(),
                broken_pipe: false,
            }),
        Some(addr) => {
            let http = HttpServer::bind(server, HttpOptions::new(addr).token(token))
                .await
                .map_err(|err| Failure::usage(err.to_string()))?;
            // The bound address, for scripts that asked for port 0.
            eprintln!("skills mcp: listening on http://{}/mcp", http.local_addr());
            let _ = tokio::signal::ctrl_c().await;
            http.shutdown().await;
            Ok(0)
        }
    };
    if workspaces.is_some() {
        let _ = std::fs::remove_dir_all(&root);
    }
    result
}
