//! `skills mcp`: serve the skills to any MCP client, over standard input and
//! output or over Streamable HTTP (`--http ADDR`).
//!
//! Everything MCP lives in `skills-mcp`; this module picks the transport,
//! the run runtime, the token and the HTTP limits, ends the server cleanly
//! on SIGTERM or SIGINT (after the requests in flight, for a bounded time),
//! and maps failures to exit codes.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use skills_core::SkillProvider;
use skills_mcp::{HttpOptions, HttpServer, SkillsServer, TOKEN_ENV};
use skills_sandbox::code_pages::CodeMappings;

use crate::agent::RunMode;
use crate::config::Settings;
use crate::failure::Failure;

/// What `skills mcp` was asked to do.
#[derive(Debug)]
pub(crate) struct McpArgs {
    /// Serve Streamable HTTP on this address instead of stdio.
    pub(crate) http: Option<SocketAddr>,
    /// Offer the run tools on this runtime.
    pub(crate) run: Option<RunMode>,
    /// The run tools' artifacts and host inputs.
    pub(crate) runtime: crate::runtime_flags::RuntimeFlags,
    /// How often to look for changed skills.
    pub(crate) poll: Duration,
    /// The HTTP server's origins and limits.
    pub(crate) limits: HttpFlags,
}

/// The HTTP server's origins and limits (`skills mcp --http` only).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct HttpFlags {
    /// Also accept requests from web pages of ORIGIN (`https://app.example.com`,
    /// `http://host:*` for any port, or `null`); repeatable. On a loopback
    /// address, pages of this machine are always accepted; clients that are
    /// not browsers send no Origin and are not affected.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    pub(crate) allow_origin: Vec<String>,
    /// Sessions open at once; at the cap the least recently used idle one
    /// is closed for a new one.
    #[arg(long, value_name = "N", default_value_t = skills_mcp::DEFAULT_MAX_SESSIONS)]
    pub(crate) max_sessions: usize,
    /// Connections open at once; at the cap the one idle the longest is
    /// closed for a new one.
    #[arg(long, value_name = "N", default_value_t = skills_mcp::DEFAULT_MAX_CONNECTIONS)]
    pub(crate) max_connections: usize,
}

/// How long `skills mcp` waits, after the server has ended, for work still
/// running on the runtime (a read from standard input cannot be cancelled).
const RUNTIME_GRACE: Duration = Duration::from_millis(500);

/// Arenas of glibc's allocator in `skills mcp`: one, shared by every thread.
///
/// By default each thread that finds the arenas busy gets its own, and an
/// arena keeps what was freed into it: after batches of 100 requests over
/// stdio, the two workers' arenas held about 1 MiB each
/// (`scripts/mcp-rss.py`, 20 000 requests: 3.6 MiB of anonymous memory,
/// 2.6 with one arena; `--http`: 1.8 and 1.5). Two arenas kept 3.1 MiB.
/// The server's CPU time per request did not change: the workers allocate
/// mostly from their per-thread caches, which need no arena lock.
const MALLOC_ARENAS: usize = 1;

/// The program's and its libraries' code mappings, recorded by
/// [`tune_memory`] for [`trim_memory`] to release.
static CODE_MAPPINGS: OnceLock<CodeMappings> = OnceLock::new();

/// Sets up the server's memory: the C allocator's arenas
/// ([`MALLOC_ARENAS`]), and the record of the code mappings that
/// [`trim_memory`] releases. Call it before anything starts a thread:
/// threads reuse the arenas that exist, and the libraries mapped before
/// then are the ones the dynamic loader never unloads.
pub(crate) fn tune_memory() {
    skills_sandbox::malloc::limit_arenas(MALLOC_ARENAS);
    match CodeMappings::record() {
        Ok(code) => {
            let _ = CODE_MAPPINGS.set(code);
        }
        Err(err) => tracing::debug!(%err, "code mappings not recorded: their pages stay resident"),
    }
}

/// How often `skills mcp` gives memory it is not using back to the kernel
/// ([`trim_memory`]).
///
/// Code: every page of the executable or a library that ran once
/// (start-up, discovery, the first request of each kind, a rare error)
/// stays mapped, and counts in the resident set, until it is released; what
/// runs again comes back from the page cache in a minor fault per 64 KiB.
/// Start-up runs about 1.9 MiB of the server's code, of which serving needs
/// about 1.2 MiB (`scripts/mcp-rss.py` over HTTP: a peak of 6.0 MiB
/// resident during start-up, 4.5 to 4.8 MiB while serving 100 000 requests).
///
/// The allocator: what a burst of requests freed stays with it, in pages
/// that live blocks keep it from shrinking past: after batches of 100
/// requests over stdio, 0.4 to 0.5 MiB of the 2.6 MiB of anonymous memory.
///
/// Both take well under a millisecond (reading `/proc/self/smaps`, a few
/// `madvise` calls, `malloc_trim` on a heap of this size): every 2 s, as
/// often as the server looks for changed skills, they cost nothing
/// measurable, and the server is back to its working set 2 s after start-up
/// or a burst.
const TRIM_INTERVAL: Duration = Duration::from_secs(2);

/// Gives memory back to the kernel now (what the start-up freed and the
/// code only it ran) and then every [`TRIM_INTERVAL`]: the allocator's free
/// pages (`skills_sandbox::malloc::trim`) and the resident pages of the
/// code ([`CodeMappings::release`]), off the runtime's workers. Never ends;
/// does nothing where neither is supported.
async fn trim_memory() {
    if !skills_sandbox::malloc::SUPPORTED && !skills_sandbox::code_pages::SUPPORTED {
        return;
    }
    let mut every = tokio::time::interval(TRIM_INTERVAL);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        let trimmed = tokio::task::spawn_blocking(|| {
            let _span = tracing::debug_span!("trim_memory").entered();
            skills_sandbox::malloc::trim();
            let code = CODE_MAPPINGS.get()?;
            match code.release() {
                Ok(released) => Some(released),
                Err(err) => {
                    tracing::debug!(%err, "code pages not released");
                    None
                }
            }
        })
        .await;
        if let Ok(Some(released)) = trimmed {
            tracing::trace!(
                mappings = released.mappings,
                bytes = released.bytes,
                skipped = released.skipped,
                "code pages released"
            );
        }
    }
}

/// Threads of tokio's blocking pool when the run tools are off.
///
/// Every blocking task of the server is then short (a file read, a write to
/// standard output, a pass over the skill folders) but one, the reader of
/// standard input, so a few threads keep up. With tokio's default of 512, 100
/// requests at once started up to about a hundred threads, and every thread
/// keeps its stack and its own malloc arena after its work is done
/// (`scripts/mcp-rss.py`, stdio: 5.5 MiB of anonymous memory instead of 3.6
/// with a cap of 8).
///
/// Four: the reader of standard input, the writer of standard output (one
/// write at a time) and two for the file work, as many as the workers that
/// wait for it. With one malloc arena ([`MALLOC_ARENAS`]) a thread still
/// costs the pages of its stack it touched and its own cache of freed
/// blocks: 0.1 MiB less anonymous memory than with 8 threads after
/// batches of 100 requests over stdio, for the same time and CPU time.
/// Idle threads end after 10 s (tokio's keep-alive), so a quiet server
/// keeps the reader of standard input and the thread [`trim_memory`] uses
/// every 2 s.
const BLOCKING_THREADS: usize = 4;

/// The blocking pool's size: [`BLOCKING_THREADS`], or tokio's default of 512
/// with the run tools, which hold a thread for as long as a command runs.
fn blocking_threads(run_tools: bool) -> usize {
    if run_tools { 512 } else { BLOCKING_THREADS }
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

/// Runs `skills mcp` until the client goes away (stdio) or until SIGTERM or
/// SIGINT; returns the exit code.
pub(crate) fn run(
    args: McpArgs,
    provider: Arc<dyn SkillProvider>,
    settings: Settings,
) -> Result<u8, Failure> {
    // Refused before anything starts.
    let token = std::env::var(TOKEN_ENV).ok().filter(|t| !t.is_empty());
    if let Some(addr) = args.http
        && token.is_none()
    {
        if !addr.ip().is_loopback() {
            return Err(Failure::usage(format!(
                "refusing to serve on {addr}, which is not a loopback address, without a \
                 token: set {TOKEN_ENV} to a secret; clients then send `Authorization: Bearer \
                 <token>`"
            )));
        }
        if args.run.is_some() {
            return Err(Failure::usage(format!(
                "refusing to serve the run tools (--run) over HTTP without a token: any local \
                 user could run commands through {addr}; set {TOKEN_ENV} to a secret; clients \
                 then send `Authorization: Bearer <token>`"
            )));
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(blocking_threads(args.run.is_some()))
        .enable_all()
        .build()
        .map_err(|err| Failure::usage(format!("cannot start the async runtime: {err}")))?;
    let result = runtime.block_on(serve(args, (provider, settings), token));
    // Standard input is read on a blocking thread that no one can wake:
    // do not wait for it.
    runtime.shutdown_timeout(RUNTIME_GRACE);
    result
}

async fn serve(
    args: McpArgs,
    (provider, settings): (Arc<dyn SkillProvider>, Settings),
    token: Option<String>,
) -> Result<u8, Failure> {
    let root = skills_exec::private_root("skills-mcp");
    let workspaces = match args.run {
        Some(mode) => Some(mode.runtime(&root, &args.runtime).await?),
        None => None,
    };
    let mut builder = SkillsServer::builder(provider)
        .server_info("skills", env!("CARGO_PKG_VERSION"))
        .poll_interval(args.poll)
        .catalog_budget(skills_core::Budget::new(
            settings.budget,
            settings.description_cap,
        ))
        .visibility(settings.policy)
        .requirements_probe(Arc::new(skills_fs::SystemProbe::new()));
    if let Some(workspaces) = &workspaces {
        builder = builder.runtime(Arc::clone(workspaces));
    }
    let server = builder
        .build()
        .await
        .map_err(|err| Failure::usage(err.to_string()))?;
    let trimming = tokio::spawn(trim_memory());
    let result = match args.http {
        None => skills_mcp::serve_stdio_until(&server, shutdown_signal())
            .await
            .map(|()| 0)
            .map_err(|err| Failure {
                code: 1,
                message: err.to_string(),
                broken_pipe: false,
            }),
        Some(addr) => {
            let mut options = HttpOptions::new(addr)
                .token(token)
                .max_sessions(args.limits.max_sessions)
                .max_connections(args.limits.max_connections);
            for origin in args.limits.allow_origin {
                options = options.allow_origin(origin);
            }
            let http = HttpServer::bind(server, options)
                .await
                .map_err(|err| Failure::usage(err.to_string()))?;
            // The bound address, for scripts that asked for port 0.
            eprintln!("skills mcp: listening on http://{}/mcp", http.local_addr());
            shutdown_signal().await;
            tracing::info!("shutting down: finishing the requests in flight");
            http.shutdown().await;
            Ok(0)
        }
    };
    trimming.abort();
    if workspaces.is_some() {
        let _ = std::fs::remove_dir_all(&root);
    }
    result
}

/// Completes on SIGTERM (what `kill`, systemd and container runtimes send)
/// or SIGINT (Ctrl-C).
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = terminate.recv() => tracing::debug!("SIGTERM"),
                    () = interrupted() => tracing::debug!("SIGINT"),
                }
                return;
            }
            Err(err) => tracing::warn!(error = %err, "cannot watch for SIGTERM; SIGINT only"),
        }
    }
    interrupted().await;
}

/// Completes on SIGINT; never, when it cannot be watched.
async fn interrupted() {
    if let Err(err) = tokio::signal::ctrl_c().await {
        tracing::warn!(error = %err, "cannot watch for SIGINT");
        std::future::pending::<()>().await;
    }
}
