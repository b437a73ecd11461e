//! An MCP server for Agent Skills, on the official Rust SDK (`rmcp`).
//!
//! [`SkillsServer`] serves the skills of any [`SkillProvider`] (the
//! filesystem provider with its staleness cache, URL roots and race-free
//! reads; an in-code provider; a layered view) to MCP clients:
//!
//! * the MCP Skills extension (`io.modelcontextprotocol/skills`, SEP-2640),
//!   declared with directory reads: `skills/list`, `skills/get`, every file
//!   as a `skill://NAME/PATH` resource with its size and `sha256:` digest,
//!   binary files as base64 blobs, `resources/directory/read`;
//! * the fallback tools `load_skill` and `read_skill_file` for clients
//!   without the extension, and with a [`WorkspaceRuntime`] the run tools;
//! * the catalog, sorted and byte-stable, as the server's instructions;
//! * `notifications/resources/list_changed` when the catalog changes.
//!
//! [`serve_stdio`] / [`serve_io`] serve one client over a byte stream;
//! [`HttpServer`] serves Streamable HTTP (loopback by default; other
//! addresses only with a bearer token).
//!
//! A key design decision: the MCP SDK moves fast, so it stays inside this
//! crate. Nothing in the other crates sees an `rmcp` type, and the CLI only
//! calls [`SkillsServer::builder`], [`serve_stdio`] and [`HttpServer::bind`].
//!
//! This crate depends on `skills-core` (the provider trait), `skills-agent`
//! (the fallback tools' logic) and `skills-exec` is NOT needed here: the
//! runtime is handed in as an `Arc<dyn WorkspaceRuntime>`. It must not
//! depend on `skills-fs` (the CLI builds the provider) nor on `skills-cli`.
//!
//! [`SkillProvider`]: skills_core::SkillProvider
//! [`WorkspaceRuntime`]: skills_core::WorkspaceRuntime

mod error;
mod manifest;
mod server;
mod transport;
mod uri;

pub use error::{Error, ErrorKind};
pub use manifest::{SKILL_BYTE_LIMIT, SKILL_FILE_LIMIT};
pub use server::{DEFAULT_PAGE_SIZE, DEFAULT_POLL_INTERVAL, SkillsServer, SkillsServerBuilder};
pub use transport::{
    DEFAULT_MAX_REQUEST_BYTES, HttpOptions, HttpServer, TOKEN_ENV, serve_io, serve_stdio,
};
pub use uri::{SCHEME, SKILL_MD, SkillUri, skill_uri};
