//! An MCP server for Agent Skills, on the official Rust SDK (`rmcp`).
//!
//! [`SkillsServer`] serves the skills of any [`SkillProvider`] (the
//! filesystem provider with its staleness cache, URL roots and race-free
//! reads; an in-code provider; a layered view) to MCP clients:
//!
//! * the MCP Skills extension (`io.modelcontextprotocol/skills`, SEP-2640),
//!   declared with directory reads: `skills/list`, `skills/get`, every file
//!   as a `skill://SKILL-PATH/FILE-PATH` resource with its size and
//!   `sha256:` digest, the skill's path being its path below its root as in
//!   rmcp's folder catalog (`skill://acme/billing/SKILL.md`, nested skills
//!   included), binary files as base64 blobs, `resources/directory/read`;
//!   a skill that cannot be listed is left out with a warning;
//! * the fallback tools `load_skill` and `read_skill_file` for clients
//!   without the extension, and with a [`WorkspaceRuntime`] the run tools,
//!   all with MCP tool annotations;
//! * the catalog, sorted and byte-stable, as the server's instructions;
//! * `notifications/resources/list_changed` when the catalog changes.
//!
//! [`serve_stdio`] / [`serve_io`] serve one client over a byte stream;
//! [`HttpServer`] serves Streamable HTTP (loopback by default; other
//! addresses, and the run tools on any address, only with a bearer token;
//! every connection, session and request bounded: see [`HttpOptions`]).
//!
//! A key design decision: the MCP SDK moves fast, so it stays inside this
//! crate. Nothing in the other crates sees an `rmcp` type, and the CLI only
//! calls [`SkillsServer::builder`], [`serve_stdio`] and [`HttpServer::bind`].
//!
//! This crate depends on `skills-core` (the provider trait), `skills-workspace`
//! (the runtime trait) and
//! `skills-agent` (the fallback tools' logic), and runs on tokio. It must not
//! depend on `skills-fs` (the CLI builds the provider and hands it in as an
//! `Arc<dyn SkillProvider>`), on `skills-exec` (the run tools' runtime comes
//! in as an `Arc<dyn WorkspaceRuntime>`) nor on `skills-cli`.
//!
//! The guide with client configurations is `docs/mcp.md`.
//!
//! [`SkillProvider`]: skills_core::SkillProvider
//! [`WorkspaceRuntime`]: skills_workspace::WorkspaceRuntime

mod error;
mod index;
mod manifest;
mod resource_cache;
mod server;
mod transport;
mod uri;

pub use error::{Error, ErrorKind};
pub use manifest::{SKILL_BYTE_LIMIT, SKILL_FILE_LIMIT};
pub use server::{DEFAULT_PAGE_SIZE, DEFAULT_POLL_INTERVAL, SkillsServer, SkillsServerBuilder};
pub use transport::{
    DEFAULT_BODY_READ_TIMEOUT, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT,
    DEFAULT_SHUTDOWN_GRACE, HttpOptions, HttpServer, LOOPBACK_ORIGINS, MAX_JSON_DEPTH,
    MAX_LINE_BYTES, TOKEN_ENV, serve_io, serve_io_until, serve_stdio, serve_stdio_until,
};
pub use uri::{SCHEME, SKILL_MD, SkillUri, skill_path, skill_uri};

/// The examples in `docs/mcp.md`, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/mcp.md")]
pub struct McpGuide;
