//! [`SqliteStore`]: sessions in one SQLite file, the embedded default.
//!
//! The file is opened in WAL mode (readers never wait for the writer) with
//! `synchronous = NORMAL` (a committed append survives the process being
//! killed; a power loss may drop the last appends, never corrupt the log) and
//! a busy timeout, so several processes may share the file. Each append is
//! one `BEGIN IMMEDIATE` transaction: it reads the log's length, compares it
//! with the expected sequence number and writes the events and the new
//! length, or nothing. rusqlite is blocking, so every call runs on tokio's
//! blocking pool (`spawn_blocking`) and never stalls the runtime's workers.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension as _, TransactionBehavior, params};
use skills_agent::{
    NewSession, SessionEvent, SessionInfo, SessionStore, StoreError, StoreErrorKind, StoredEvent,
    check_new_session, check_sequence,
};
use tracing::Instrument as _;

use crate::codec::{decode, encode_all, newer_schema, seq_from, seq_to, session_info_from};

/// The schema version this code writes. Version `n` is reached by applying
/// `MIGRATIONS[..n]` in order.
pub const SQLITE_SCHEMA_VERSION: u32 = 1;

/// The migrations, one per schema version (index 0 takes an empty file to
/// version 1). Never edit one that has shipped: append a new one.
const MIGRATIONS: &[&str] = &["
CREATE TABLE sessions (
    id TEXT PRIMARY KEY NOT NULL,
    agent TEXT NOT NULL,
    parent_id TEXT,
    fork_seq INTEGER,
    next_seq INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE events (
    session_id TEXT NOT NULL REFERENCES sessions (id),
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
"];

/// How long a call waits for another process's write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Sessions in a SQLite file. Cheap to clone (one shared connection).
#[derive(Debug, Clone)]
pub struct SqliteStore {
    conn: Arc<Mutex<Connection>>,
    path: PathBuf,
}

impl SqliteStore {
    /// Opens (or creates) the database at `path` and migrates it to
    /// [`SQLITE_SCHEMA_VERSION`].
    ///
    /// # Errors
    /// [`StoreErrorKind::Schema`] when the file was written by a newer
    /// version of this code, [`StoreErrorKind::Backend`] when it cannot be
    /// opened or is not a SQLite database.
    pub async fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        let span = tracing::debug_span!("skills.store.sqlite.open", path = %path.display());
        let opened = path.clone();
        let conn = blocking(move || open_blocking(&opened))
            .instrument(span)
            .await?;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
            path,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the open file.
    ///
    /// # Errors
    /// A backend error.
    pub async fn schema_version(&self) -> Result<u32, StoreError> {
        self.with(|conn| user_version(conn)).await
    }

    /// Runs `f` with the connection on the blocking pool.
    async fn with<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let conn = Arc::clone(&self.conn);
        blocking(move || {
            // A panic inside `f` rolls its transaction back (rusqlite drops
            // it), so a poisoned lock still guards a consistent connection.
            let mut conn = conn.lock().unwrap_or_else(|p| p.into_inner());
            f(&mut conn)
        })
        .await
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| {
        StoreError::new(
            StoreErrorKind::Backend,
            format!("the SQLite task failed: {e}"),
        )
    })?
}

fn backend(e: rusqlite::Error) -> StoreError {
    StoreError::new(StoreErrorKind::Backend, format!("SQLite: {e}"))
}

fn user_version(conn: &Connection) -> Result<u32, StoreError> {
    conn.query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(backend)
}

fn open_blocking(path: &Path) -> Result<Connection, StoreError> {
    let mut conn = Connection::open(path).map_err(backend)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(backend)?;
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
        .map_err(backend)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::new(
            StoreErrorKind::Backend,
            format!(
                "SQLite: `{}` cannot use WAL mode (got `{mode}`)",
                path.display()
            ),
        ));
    }
    conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
        .map_err(backend)?;
    migrate(&mut conn, path)?;
    Ok(conn)
}

/// Applies the missing migrations, each in its own transaction.
fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let known = MIGRATIONS.len();
    loop {
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(backend)?;
        let version = user_version(&tx)? as usize;
        if version > known {
            return Err(newer_schema(
                &format!("`{}`", path.display()),
                version,
                known,
            ));
        }
        let Some(migration) = MIGRATIONS.get(version) else {
            return Ok(());
        };
        tracing::info!(path = %path.display(), from = version, to = version + 1, "migrating the session schema");
        tx.execute_batch(migration).map_err(backend)?;
        tx.execute_batch(&format!("PRAGMA user_version = {}", version + 1))
            .map_err(backend)?;
        tx.commit().map_err(backend)?;
    }
}

fn session_info(conn: &Connection, id: &str) -> Result<Option<SessionInfo>, StoreError> {
    conn.query_row(
        "SELECT id, agent, parent_id, fork_seq, next_seq FROM sessions WHERE id = ?1",
        [id],
        info_row,
    )
    .optional()
    .map_err(backend)?
    .transpose()
}

type InfoResult = Result<SessionInfo, StoreError>;

fn info_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<InfoResult> {
    let id: String = row.get(0)?;
    let agent: String = row.get(1)?;
    let parent: Option<String> = row.get(2)?;
    let fork_seq: Option<i64> = row.get(3)?;
    let next_seq: i64 = row.get(4)?;
    Ok(session_info_from(id, agent, parent, fork_seq, next_seq))
}

#[async_trait]
impl SessionStore for SqliteStore {
    fn kind(&self) -> &str {
        "sqlite"
    }

    async fn create(&self, session: &NewSession) -> Result<SessionInfo, StoreError> {
        let session = session.clone();
        let span = tracing::debug_span!("skills.store.sqlite.create", session = %session.id);
        self.with(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            let parent_len = match &session.parent {
                Some(p) => Some(session_info(&tx, &p.session)?.map(|i| i.next_seq)),
                None => None,
            };
            check_new_session(&session, parent_len)?;
            if session_info(&tx, &session.id)?.is_some() {
                return Err(StoreError::already_exists(&session.id));
            }
            let fork_seq = session.parent.as_ref().map(|p| seq_to(p.seq)).transpose()?;
            tx.execute(
                "INSERT INTO sessions (id, agent, parent_id, fork_seq) VALUES (?1, ?2, ?3, ?4)",
                params![
                    session.id,
                    session.agent,
                    session.parent.as_ref().map(|p| &p.session),
                    fork_seq
                ],
            )
            .map_err(backend)?;
            tx.commit().map_err(backend)?;
            Ok(session.info())
        })
        .instrument(span)
        .await
    }

    async fn append(
        &self,
        id: &str,
        expected_seq: u64,
        events: &[SessionEvent],
    ) -> Result<u64, StoreError> {
        let rows = encode_all(events)?;
        let id = id.to_owned();
        let span = tracing::debug_span!(
            "skills.store.sqlite.append",
            session = %id,
            seq = expected_seq,
            events = rows.len()
        );
        self.with(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            let info = session_info(&tx, &id)?.ok_or_else(|| StoreError::not_found(&id))?;
            if info.next_seq != expected_seq {
                return Err(StoreError::conflict(&id, expected_seq, info.next_seq));
            }
            let mut next = expected_seq;
            {
                let mut insert = tx
                    .prepare_cached(
                        "INSERT INTO events (session_id, seq, kind, body) VALUES (?1, ?2, ?3, ?4)",
                    )
                    .map_err(backend)?;
                for (kind, body) in &rows {
                    insert
                        .execute(params![id, seq_to(next)?, kind, body])
                        .map_err(backend)?;
                    next += 1;
                }
            }
            tx.execute(
                "UPDATE sessions SET next_seq = ?2 WHERE id = ?1",
                params![id, seq_to(next)?],
            )
            .map_err(backend)?;
            tx.commit().map_err(backend)?;
            Ok(next)
        })
        .instrument(span)
        .await
    }

    async fn read(&self, id: &str, from_seq: u64) -> Result<Vec<StoredEvent>, StoreError> {
        let id = id.to_owned();
        let span = tracing::debug_span!("skills.store.sqlite.read", session = %id, from = from_seq);
        self.with(move |conn| {
            // One read transaction: the session row and its events are one
            // snapshot even while another process appends.
            let tx = conn.transaction().map_err(backend)?;
            if session_info(&tx, &id)?.is_none() {
                return Err(StoreError::not_found(&id));
            }
            let mut events = Vec::new();
            {
                let mut select = tx
                    .prepare_cached(
                        "SELECT seq, body FROM events WHERE session_id = ?1 AND seq >= ?2 ORDER BY seq",
                    )
                    .map_err(backend)?;
                let mut rows = select
                    .query(params![id, seq_to(from_seq)?])
                    .map_err(backend)?;
                while let Some(row) = rows.next().map_err(backend)? {
                    let seq: i64 = row.get(0).map_err(backend)?;
                    let body: String = row.get(1).map_err(backend)?;
                    events.push(decode(&id, seq_from(&id, seq)?, &body)?);
                }
            }
            tx.finish().map_err(backend)?;
            check_sequence(&id, from_seq, &events)?;
            Ok(events)
        })
        .instrument(span)
        .await
    }

    async fn info(&self, id: &str) -> Result<SessionInfo, StoreError> {
        let id = id.to_owned();
        self.with(move |conn| session_info(conn, &id)?.ok_or_else(|| StoreError::not_found(&id)))
            .instrument(tracing::debug_span!("skills.store.sqlite.info"))
            .await
    }

    async fn list(&self) -> Result<Vec<SessionInfo>, StoreError> {
        self.with(|conn| {
            let mut select = conn
                .prepare_cached(
                    "SELECT id, agent, parent_id, fork_seq, next_seq FROM sessions ORDER BY id",
                )
                .map_err(backend)?;
            let rows = select.query_map([], info_row).map_err(backend)?;
            let mut out = Vec::new();
            for row in rows {
                out.push(row.map_err(backend)??);
            }
            Ok(out)
        })
        .instrument(tracing::debug_span!("skills.store.sqlite.list"))
        .await
    }
}
