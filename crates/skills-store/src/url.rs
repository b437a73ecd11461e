//! Opening a store from a URL.

use std::path::PathBuf;
use std::sync::Arc;

use skills_agent::{SessionStore, StoreError, StoreErrorKind};

use crate::{PostgresStore, SqliteStore};

/// A parsed store URL.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreUrl {
    /// `sqlite://PATH`: a SQLite file (`sqlite:///abs/path` or
    /// `sqlite://relative/path`).
    Sqlite(PathBuf),
    /// `postgres://…` or `postgresql://…`: a PostgreSQL server.
    Postgres(String),
}

impl StoreUrl {
    /// Parses `url`.
    ///
    /// # Errors
    /// [`StoreErrorKind::Invalid`] for any other scheme or an empty path.
    pub fn parse(url: &str) -> Result<Self, StoreError> {
        if let Some(path) = url.strip_prefix("sqlite://") {
            if path.is_empty() {
                return Err(StoreError::new(
                    StoreErrorKind::Invalid,
                    "`sqlite://` needs a file path, e.g. `sqlite://sessions.db`",
                ));
            }
            return Ok(StoreUrl::Sqlite(PathBuf::from(path)));
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(StoreUrl::Postgres(url.to_owned()));
        }
        let scheme: String = url.chars().take_while(|c| *c != ':').take(20).collect();
        Err(StoreError::new(
            StoreErrorKind::Invalid,
            format!(
                "unsupported session store URL scheme `{scheme}`: use `sqlite://PATH` or \
                 `postgres://USER@HOST[:PORT]/DATABASE`"
            ),
        ))
    }
}

/// Opens the store `url` names (see [`StoreUrl`]).
///
/// # Errors
/// [`StoreErrorKind::Invalid`] for a bad URL, or what
/// [`SqliteStore::open`] / [`PostgresStore::connect`] return.
pub async fn open_store(url: &str) -> Result<Arc<dyn SessionStore>, StoreError> {
    Ok(match StoreUrl::parse(url)? {
        StoreUrl::Sqlite(path) => Arc::new(SqliteStore::open(path).await?),
        StoreUrl::Postgres(url) => Arc::new(PostgresStore::connect(&url).await?),
    })
}
