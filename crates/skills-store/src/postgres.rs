//! [`PostgresStore`]: sessions in PostgreSQL, shared by several agent
//! servers.
//!
//! # Why `tokio-postgres` and `deadpool-postgres`
//!
//! The store needs a handful of fixed statements, one transaction per append
//! and a row lock. `tokio-postgres` is the async driver itself: small, no
//! macros, no build-time database, no runtime or TLS feature matrix; `sqlx`
//! would bring its query macros (with their offline metadata or a live
//! database at build time), its own pool and a larger dependency tree for
//! features this store does not use. `deadpool-postgres` is a thin pool over
//! `tokio-postgres` (one small crate, statement cache per connection).
//!
//! # Layout
//!
//! Tables `skills_sessions`, `skills_events` and `skills_schema` in one
//! PostgreSQL schema (`public` unless [`PostgresStore::connect_in_schema`]
//! names another, which it creates). Event bodies are `TEXT` (not `jsonb`),
//! so they are read back byte for byte. An append is one transaction that
//! locks the session row (`SELECT … FOR UPDATE`), compares its length with
//! the expected sequence number, inserts the events and stores the new
//! length; a second writer waits for the lock and then gets the conflict.
//! Migrations run under a transaction-scoped advisory lock, so servers
//! starting together migrate once.
//!
//! Connections are made without TLS: run the server on a trusted network or
//! through a local proxy.

use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use skills_agent::{
    NewSession, SessionEvent, SessionInfo, SessionStore, StoreError, StoreErrorKind, StoredEvent,
    check_new_session, check_sequence,
};
use tokio_postgres::{NoTls, Row};
use tracing::Instrument as _;

use crate::codec::{decode, encode_all, newer_schema, seq_from, seq_to, session_info_from};

/// The schema version this code writes.
pub const POSTGRES_SCHEMA_VERSION: i32 = 1;

/// Most connections a store keeps open.
pub const POOL_SIZE: usize = 16;

/// The advisory lock key migrations take ("skills" in ASCII).
const MIGRATION_LOCK: i64 = 0x736b_696c_6c73;

/// The migrations, one per version; `{s}` is the quoted schema name.
const MIGRATIONS: &[&str] = &["
CREATE TABLE {s}.skills_sessions (
    id TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    parent_id TEXT,
    fork_seq BIGINT,
    next_seq BIGINT NOT NULL DEFAULT 0,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE {s}.skills_events (
    session_id TEXT NOT NULL REFERENCES {s}.skills_sessions (id),
    seq BIGINT NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
"];

/// Sessions in PostgreSQL. Cheap to clone (a shared pool).
#[derive(Clone)]
pub struct PostgresStore {
    pool: Pool,
    schema: String,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The pool's config holds the password: never print it.
        f.debug_struct("PostgresStore")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connects to `url` (`postgres://user[:password]@host[:port]/database`
    /// or the key-value form), uses the `public` schema and migrates it.
    ///
    /// # Errors
    /// [`StoreErrorKind::Invalid`] for a bad URL, [`StoreErrorKind::Schema`]
    /// when the database was written by a newer version of this code,
    /// [`StoreErrorKind::Backend`] when the server cannot be reached.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_in_schema(url, "public").await
    }

    /// [`PostgresStore::connect`] with the tables in `schema` (created when
    /// missing): lowercase ASCII letters, digits and `_`, starting with a
    /// letter, at most 63 bytes.
    ///
    /// # Errors
    /// As [`PostgresStore::connect`]; [`StoreErrorKind::Invalid`] for a bad
    /// schema name.
    pub async fn connect_in_schema(url: &str, schema: &str) -> Result<Self, StoreError> {
        check_schema_name(schema)?;
        let config: tokio_postgres::Config = url.parse().map_err(|e| {
            StoreError::new(
                StoreErrorKind::Invalid,
                format!("invalid PostgreSQL URL: {e}"),
            )
        })?;
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .build()
            .map_err(|e| {
                StoreError::new(StoreErrorKind::Backend, format!("PostgreSQL pool: {e}"))
            })?;
        let store = Self {
            pool,
            schema: format!("\"{schema}\""),
        };
        store
            .migrate()
            .instrument(tracing::debug_span!(
                "skills.store.postgres.migrate",
                schema
            ))
            .await?;
        Ok(store)
    }

    /// The schema version of the database.
    ///
    /// # Errors
    /// A backend error.
    pub async fn schema_version(&self) -> Result<i32, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_one(
                &format!(
                    "SELECT COALESCE(MAX(version), 0) FROM {}.skills_schema",
                    self.schema
                ),
                &[],
            )
            .await
            .map_err(backend)?;
        row.try_get(0).map_err(backend)
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        self.pool.get().await.map_err(|e| {
            StoreError::new(
                StoreErrorKind::Backend,
                format!("PostgreSQL: no connection: {}", with_causes(&e)),
            )
        })
    }

    fn sql(&self, text: &str) -> String {
        text.replace("{s}", &self.schema)
    }

    async fn migrate(&self) -> Result<(), StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(backend)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .await
            .map_err(backend)?;
        tx.batch_execute(&self.sql(
            "CREATE SCHEMA IF NOT EXISTS {s};
             CREATE TABLE IF NOT EXISTS {s}.skills_schema (version INTEGER NOT NULL);",
        ))
        .await
        .map_err(backend)?;
        let row = tx
            .query_one(
                &self.sql("SELECT COALESCE(MAX(version), 0) FROM {s}.skills_schema"),
                &[],
            )
            .await
            .map_err(backend)?;
        let version: i32 = row.try_get(0).map_err(backend)?;
        let known = MIGRATIONS.len();
        let from = usize::try_from(version).unwrap_or(usize::MAX);
        if from > known {
            return Err(newer_schema(
                &format!("schema {}", self.schema),
                from,
                known,
            ));
        }
        for (index, migration) in MIGRATIONS.iter().enumerate().skip(from) {
            tracing::info!(schema = %self.schema, to = index + 1, "migrating the session schema");
            tx.batch_execute(&self.sql(migration))
                .await
                .map_err(backend)?;
            let to = i32::try_from(index + 1).unwrap_or(i32::MAX);
            tx.execute(
                &self.sql("INSERT INTO {s}.skills_schema (version) VALUES ($1)"),
                &[&to],
            )
            .await
            .map_err(backend)?;
        }
        tx.commit().await.map_err(backend)
    }
}

fn backend(e: impl std::error::Error) -> StoreError {
    StoreError::new(
        StoreErrorKind::Backend,
        format!("PostgreSQL: {}", with_causes(&e)),
    )
}

/// `e` and its causes, joined by `: ` (a driver's "error connecting to
/// server" says why only in its source), without repeating a cause that the
/// message above it already quotes.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let part = cause.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = cause.source();
    }
    text
}

fn check_schema_name(schema: &str) -> Result<(), StoreError> {
    let ok = schema.len() <= 63
        && schema.starts_with(|c: char| c.is_ascii_lowercase())
        && schema
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(StoreError::new(
            StoreErrorKind::Invalid,
            format!(
                "invalid schema name {schema:?}: use lowercase ASCII letters, digits and `_`, \
                 starting with a letter"
            ),
        ))
    }
}

fn info_from(row: &Row) -> Result<SessionInfo, StoreError> {
    let id: String = row.try_get(0).map_err(backend)?;
    let agent: String = row.try_get(1).map_err(backend)?;
    let parent: Option<String> = row.try_get(2).map_err(backend)?;
    let fork_seq: Option<i64> = row.try_get(3).map_err(backend)?;
    let next_seq: i64 = row.try_get(4).map_err(backend)?;
    session_info_from(id, agent, parent, fork_seq, next_seq)
}

const INFO_COLUMNS: &str = "id, agent, parent_id, fork_seq, next_seq";

#[async_trait]
impl SessionStore for PostgresStore {
    fn kind(&self) -> &str {
        "postgres"
    }

    async fn create(&self, session: &NewSession) -> Result<SessionInfo, StoreError> {
        let span = tracing::debug_span!("skills.store.postgres.create", session = %session.id);
        async {
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(backend)?;
            let parent_len = match &session.parent {
                Some(p) => Some(
                    tx.query_opt(
                        &self.sql(
                            "SELECT next_seq FROM {s}.skills_sessions WHERE id = $1 FOR SHARE",
                        ),
                        &[&p.session],
                    )
                    .await
                    .map_err(backend)?
                    .map(|row| {
                        row.try_get::<_, i64>(0)
                            .map_err(backend)
                            .and_then(|n| seq_from(&p.session, n))
                    })
                    .transpose()?,
                ),
                None => None,
            };
            check_new_session(session, parent_len)?;
            let fork_seq = session.parent.as_ref().map(|p| seq_to(p.seq)).transpose()?;
            let parent_id = session.parent.as_ref().map(|p| p.session.as_str());
            let inserted = tx
                .execute(
                    &self.sql(
                        "INSERT INTO {s}.skills_sessions (id, agent, parent_id, fork_seq)
                         VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING",
                    ),
                    &[&session.id, &session.agent, &parent_id, &fork_seq],
                )
                .await
                .map_err(backend)?;
            if inserted == 0 {
                return Err(StoreError::already_exists(&session.id));
            }
            tx.commit().await.map_err(backend)?;
            Ok(session.info())
        }
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
        let span = tracing::debug_span!(
            "skills.store.postgres.append",
            session = %id,
            seq = expected_seq,
            events = rows.len()
        );
        async {
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(backend)?;
            let row = tx
                .query_opt(
                    &self.sql("SELECT next_seq FROM {s}.skills_sessions WHERE id = $1 FOR UPDATE"),
                    &[&id],
                )
                .await
                .map_err(backend)?
                .ok_or_else(|| StoreError::not_found(id))?;
            let actual = seq_from(id, row.try_get(0).map_err(backend)?)?;
            if actual != expected_seq {
                return Err(StoreError::conflict(id, expected_seq, actual));
            }
            let insert = tx
                .prepare_cached(&self.sql(
                    "INSERT INTO {s}.skills_events (session_id, seq, kind, body) VALUES ($1, $2, $3, $4)",
                ))
                .await
                .map_err(backend)?;
            let mut next = expected_seq;
            for (kind, body) in &rows {
                tx.execute(&insert, &[&id, &seq_to(next)?, kind, body])
                    .await
                    .map_err(backend)?;
                next += 1;
            }
            tx.execute(
                &self.sql("UPDATE {s}.skills_sessions SET next_seq = $2 WHERE id = $1"),
                &[&id, &seq_to(next)?],
            )
            .await
            .map_err(backend)?;
            tx.commit().await.map_err(backend)?;
            Ok(next)
        }
        .instrument(span)
        .await
    }

    async fn read(&self, id: &str, from_seq: u64) -> Result<Vec<StoredEvent>, StoreError> {
        let span =
            tracing::debug_span!("skills.store.postgres.read", session = %id, from = from_seq);
        async {
            let mut client = self.client().await?;
            // REPEATABLE READ: the session row and its events are one snapshot.
            let tx = client
                .build_transaction()
                .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .await
                .map_err(backend)?;
            let exists = tx
                .query_opt(
                    &self.sql("SELECT 1 FROM {s}.skills_sessions WHERE id = $1"),
                    &[&id],
                )
                .await
                .map_err(backend)?;
            if exists.is_none() {
                return Err(StoreError::not_found(id));
            }
            let rows = tx
                .query(
                    &self.sql(
                        "SELECT seq, body FROM {s}.skills_events WHERE session_id = $1 AND seq >= $2 ORDER BY seq",
                    ),
                    &[&id, &seq_to(from_seq)?],
                )
                .await
                .map_err(backend)?;
            tx.commit().await.map_err(backend)?;
            let mut events = Vec::with_capacity(rows.len());
            for row in rows {
                let seq: i64 = row.try_get(0).map_err(backend)?;
                let body: &str = row.try_get(1).map_err(backend)?;
                events.push(decode(id, seq_from(id, seq)?, body)?);
            }
            check_sequence(id, from_seq, &events)?;
            Ok(events)
        }
        .instrument(span)
        .await
    }

    async fn info(&self, id: &str) -> Result<SessionInfo, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &self.sql(&format!(
                    "SELECT {INFO_COLUMNS} FROM {{s}}.skills_sessions WHERE id = $1"
                )),
                &[&id],
            )
            .instrument(tracing::debug_span!("skills.store.postgres.info", session = %id))
            .await
            .map_err(backend)?
            .ok_or_else(|| StoreError::not_found(id))?;
        info_from(&row)
    }

    async fn list(&self) -> Result<Vec<SessionInfo>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                &self.sql(&format!(
                    "SELECT {INFO_COLUMNS} FROM {{s}}.skills_sessions ORDER BY id COLLATE \"C\""
                )),
                &[],
            )
            .instrument(tracing::debug_span!("skills.store.postgres.list"))
            .await
            .map_err(backend)?;
        rows.iter().map(info_from).collect()
    }
}
