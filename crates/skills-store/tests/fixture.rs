//! Stores for the tests, each isolated: a fresh in-memory store, a SQLite
//! file in a fresh temporary folder, or a fresh PostgreSQL schema.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use skills_agent::{MemoryStore, SessionStore};
use skills_store::{PostgresStore, SqliteStore};
use tempfile::TempDir;

/// Where a fixture's store lives, so it can be reopened (by this process or
/// a child).
#[derive(Debug, Clone)]
pub(crate) enum Location {
    Memory,
    Sqlite(PathBuf),
    Postgres { url: String, schema: String },
}

pub(crate) struct Fixture {
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) location: Location,
    _dir: Option<TempDir>,
}

impl Fixture {
    /// Opens the same store again (a new connection; for memory, the same
    /// store).
    pub(crate) async fn reopen(&self) -> Arc<dyn SessionStore> {
        match &self.location {
            Location::Memory => Arc::clone(&self.store),
            Location::Sqlite(path) => Arc::new(SqliteStore::open(path).await.unwrap()),
            Location::Postgres { url, schema } => {
                Arc::new(PostgresStore::connect_in_schema(url, schema).await.unwrap())
            }
        }
    }
}

pub(crate) fn memory() -> Fixture {
    Fixture {
        store: Arc::new(MemoryStore::new()),
        location: Location::Memory,
        _dir: None,
    }
}

pub(crate) async fn sqlite() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    Fixture {
        store: Arc::new(SqliteStore::open(&path).await.unwrap()),
        location: Location::Sqlite(path),
        _dir: Some(dir),
    }
}

/// The test server's URL, or a failure saying how to get one.
pub(crate) fn postgres_url() -> String {
    match std::env::var("SKILLS_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => url,
        _ => panic!(
            "set SKILLS_TEST_POSTGRES_URL; `bash .ci/test` starts a server with `bash .ci/postgres start`"
        ),
    }
}

/// A schema name no other test (in this run or an earlier one) uses.
pub(crate) fn unique_schema() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "t_{}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed),
        nanos
    )
}

pub(crate) async fn postgres() -> Fixture {
    let url = postgres_url();
    let schema = unique_schema();
    Fixture {
        store: Arc::new(
            PostgresStore::connect_in_schema(&url, &schema)
                .await
                .unwrap(),
        ),
        location: Location::Postgres { url, schema },
        _dir: None,
    }
}
