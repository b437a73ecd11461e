//! `skills-store`: where [`skills_agent`] sessions live between processes.
//!
//! Two implementations of [`skills_agent::SessionStore`]:
//! - [`SqliteStore`]: one SQLite file (the `bundled` library, WAL mode, one
//!   transaction per append), the embedded default for one machine;
//! - [`PostgresStore`]: PostgreSQL, for several agent servers sharing their
//!   sessions.
//!
//! [`open_store`] opens either from a URL (`sqlite://PATH`,
//! `postgres://…`). Both keep each event as the JSON text it was written as,
//! migrate their schema in code when opened, and refuse a database written by
//! a newer version ([`skills_agent::StoreErrorKind::Schema`]). The in-memory
//! store is [`skills_agent::MemoryStore`].
//!
//! Boundaries: native only (tokio, blocking SQLite calls on the blocking
//! pool). `skills-agent` does not depend on this crate, so wasm builds never
//! see a database driver.

mod codec;
mod postgres;
mod sqlite;
mod url;

pub use postgres::{POOL_SIZE, POSTGRES_SCHEMA_VERSION, PostgresStore};
pub use sqlite::{SQLITE_SCHEMA_VERSION, SqliteStore};
pub use url::{StoreUrl, open_store};

#[cfg(doctest)]
#[doc = include_str!("../../../docs/sessions.md")]
struct SessionsGuide;
