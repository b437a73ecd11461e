//! Persistent sessions: the [`SessionStore`] trait, its event log, an
//! in-memory store, and the writer that keeps a [`Session`] in a store.
//!
//! A stored session is an append-only log of [`SessionEvent`]s numbered from
//! 0: first [`SessionEvent::Started`] (the agent and the catalog the session
//! pinned), then the transcript's messages, load-state snapshots and usage.
//! A forked sub-agent's session names its parent and the sequence number it
//! branched at ([`ForkPoint`]).
//!
//! Every append carries the sequence number the writer expects the next
//! event to get. A store appends only when that is the log's length, all
//! events of one append or none; otherwise it returns a
//! [`StoreErrorKind::Conflict`] and writes nothing, so two writers to one
//! session never interleave and never lose an event silently.
//!
//! The SQLite and PostgreSQL stores live in the native `skills-store` crate;
//! this module has no I/O and builds for wasm32.

use std::fmt;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use skills_core::{Catalog, MaybeSend, MaybeSync};

use crate::message::Message;
use crate::model::Usage;

mod memory;
mod writer;

pub use memory::MemoryStore;
pub use writer::SessionWriter;

#[cfg(doc)]
use crate::Session;

/// The longest session id a store accepts, in bytes: the workspace
/// contract's [`skills_workspace::MAX_SESSION_ID_CHARS`].
pub const MAX_SESSION_ID_LEN: usize = skills_workspace::MAX_SESSION_ID_CHARS;

/// How deep [`read_lineage`] follows parents before it gives up (a cycle or
/// a runaway chain of forks).
pub const MAX_LINEAGE_DEPTH: usize = 64;

/// One entry of a session's log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SessionEvent {
    /// The session started: the first event of every log.
    Started {
        /// The agent's name.
        agent: String,
        /// The catalog the session pinned (its prompt was rendered from it).
        catalog: Catalog,
    },
    /// A message appended to the transcript.
    Message {
        /// The message.
        message: Message,
    },
    /// The load state after the messages before it: the loaded skills, least
    /// recently used first. Written when it changes; the transcript stays the
    /// source of truth (a resume replays it and checks it against this).
    LoadState {
        /// The loaded skills.
        loaded: Vec<String>,
    },
    /// Tokens a run used.
    Usage {
        /// The counts.
        usage: Usage,
    },
}

impl SessionEvent {
    /// A short lowercase name of the event's type (`started`, `message`,
    /// `load_state`, `usage`), as in its serialized `type` field.
    pub fn type_name(&self) -> &'static str {
        match self {
            SessionEvent::Started { .. } => "started",
            SessionEvent::Message { .. } => "message",
            SessionEvent::LoadState { .. } => "load_state",
            SessionEvent::Usage { .. } => "usage",
        }
    }
}

/// An event with its place in the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredEvent {
    /// Its sequence number: 0 for the first event, no gaps.
    pub seq: u64,
    /// The event.
    pub event: SessionEvent,
}

/// Where a forked session branched off its parent.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ForkPoint {
    /// The parent session's id.
    pub session: String,
    /// The parent's events before this sequence number are the fork's
    /// history (`0..seq`).
    pub seq: u64,
}

/// What [`SessionStore::create`] needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSession {
    /// The id: 1 to [`MAX_SESSION_ID_LEN`] ASCII letters, digits, `-`, `_`
    /// and `.`, not `.` or `..` (see [`validate_session_id`]).
    pub id: String,
    /// The agent's name.
    pub agent: String,
    /// The parent, for a forked session.
    pub parent: Option<ForkPoint>,
}

impl NewSession {
    /// A session with no parent.
    pub fn new(id: impl Into<String>, agent: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            agent: agent.into(),
            parent: None,
        }
    }

    /// The info of the session as created (an empty log).
    pub fn info(&self) -> SessionInfo {
        SessionInfo {
            id: self.id.clone(),
            agent: self.agent.clone(),
            parent: self.parent.clone(),
            next_seq: 0,
        }
    }

    /// A session forked from `parent` at `seq`.
    pub fn forked_from(mut self, parent: impl Into<String>, seq: u64) -> Self {
        self.parent = Some(ForkPoint {
            session: parent.into(),
            seq,
        });
        self
    }
}

/// What a store knows about a session without reading its log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionInfo {
    /// The id.
    pub id: String,
    /// The agent's name.
    pub agent: String,
    /// The parent, for a forked session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<ForkPoint>,
    /// The number of events in the log: the sequence number the next append
    /// must expect.
    pub next_seq: u64,
}

/// What went wrong in a store, for callers that branch on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StoreErrorKind {
    /// No session (or parent session) with that id.
    NotFound,
    /// A session with that id exists already.
    AlreadyExists,
    /// The append expected another sequence number than the log's length:
    /// another writer appended first. Nothing was written.
    Conflict,
    /// A malformed argument: a session id, a fork point, a store URL.
    Invalid,
    /// The stored data cannot be read back (bad JSON, a gap in the log, a log
    /// that does not start with [`SessionEvent::Started`]).
    Corrupt,
    /// The database was written by a newer version of this code (its schema
    /// version is higher than the code knows).
    Schema,
    /// The database or the connection failed.
    Backend,
    /// The skill provider failed while a session was resumed.
    Provider,
}

impl StoreErrorKind {
    /// A stable lowercase name, e.g. `conflict`.
    pub fn as_str(self) -> &'static str {
        match self {
            StoreErrorKind::NotFound => "not-found",
            StoreErrorKind::AlreadyExists => "already-exists",
            StoreErrorKind::Conflict => "conflict",
            StoreErrorKind::Invalid => "invalid",
            StoreErrorKind::Corrupt => "corrupt",
            StoreErrorKind::Schema => "schema",
            StoreErrorKind::Backend => "backend",
            StoreErrorKind::Provider => "provider",
        }
    }
}

impl fmt::Display for StoreErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error from a [`SessionStore`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError {
    kind: StoreErrorKind,
    message: String,
    /// For a conflict: (expected, actual) sequence numbers.
    conflict: Option<(u64, u64)>,
}

impl StoreError {
    /// An error of `kind`.
    pub fn new(kind: StoreErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            conflict: None,
        }
    }

    /// The conflict of an append to `session` that expected `expected` while
    /// the log holds `actual` events.
    pub fn conflict(session: &str, expected: u64, actual: u64) -> Self {
        Self {
            kind: StoreErrorKind::Conflict,
            message: format!(
                "session `{session}`: the append expected sequence number {expected}, \
                 but the log holds {actual} events (another writer appended first); \
                 nothing was written"
            ),
            conflict: Some((expected, actual)),
        }
    }

    /// "No session `id`".
    pub fn not_found(id: &str) -> Self {
        Self::new(StoreErrorKind::NotFound, format!("no session `{id}`"))
    }

    /// "Session `id` exists already".
    pub fn already_exists(id: &str) -> Self {
        Self::new(
            StoreErrorKind::AlreadyExists,
            format!("session `{id}` exists already"),
        )
    }

    /// What went wrong.
    pub fn kind(&self) -> StoreErrorKind {
        self.kind
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// For a conflict, the sequence number the writer expected.
    pub fn expected_seq(&self) -> Option<u64> {
        self.conflict.map(|(expected, _)| expected)
    }

    /// For a conflict, the log's length when the append was refused (the
    /// sequence number to expect after reading the events the writer missed).
    pub fn actual_seq(&self) -> Option<u64> {
        self.conflict.map(|(_, actual)| actual)
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for StoreError {}

/// A place that keeps sessions as append-only event logs.
///
/// The contract every implementation keeps (the `skills-store` crate's
/// conformance suite checks it against each store):
/// - [`append`](SessionStore::append) writes all of its events or none,
///   numbered from `expected_seq` on, and only when `expected_seq` is the
///   log's length; otherwise it fails with [`StoreErrorKind::Conflict`]. Of
///   two writers appending with the same expected number, exactly one wins.
/// - [`read`](SessionStore::read) returns events in sequence order, without
///   gaps; what a completed append wrote is read back byte for byte (as
///   JSON), whatever its size.
/// - A writer that dies mid-append leaves the log as it was before that
///   append or after it, never in between.
///
/// On wasm32 the futures need not be `Send` (implement it there with
/// `#[async_trait(?Send)]`).
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
pub trait SessionStore: MaybeSend + MaybeSync + fmt::Debug {
    /// A short name for logs and listings (`memory`, `sqlite`, `postgres`).
    fn kind(&self) -> &str;

    /// Creates an empty session.
    ///
    /// # Errors
    /// [`StoreErrorKind::AlreadyExists`], [`StoreErrorKind::Invalid`] for a
    /// bad id or a fork point past the parent's end,
    /// [`StoreErrorKind::NotFound`] for a missing parent, or a backend error.
    async fn create(&self, session: &NewSession) -> Result<SessionInfo, StoreError>;

    /// Appends `events` (numbered `expected_seq..`) and returns the new
    /// length of the log.
    ///
    /// # Errors
    /// [`StoreErrorKind::Conflict`] when the log's length is not
    /// `expected_seq`, [`StoreErrorKind::NotFound`], or a backend error.
    async fn append(
        &self,
        id: &str,
        expected_seq: u64,
        events: &[SessionEvent],
    ) -> Result<u64, StoreError>;

    /// The events from `from_seq` on, in order.
    ///
    /// # Errors
    /// [`StoreErrorKind::NotFound`], [`StoreErrorKind::Corrupt`], or a
    /// backend error.
    async fn read(&self, id: &str, from_seq: u64) -> Result<Vec<StoredEvent>, StoreError>;

    /// What the store knows about one session.
    ///
    /// # Errors
    /// [`StoreErrorKind::NotFound`] or a backend error.
    async fn info(&self, id: &str) -> Result<SessionInfo, StoreError>;

    /// Every session, sorted by id.
    ///
    /// # Errors
    /// A backend error.
    async fn list(&self) -> Result<Vec<SessionInfo>, StoreError>;
}

/// Checks a session id with the one rule of the workspace contract
/// ([`skills_workspace::validate_session_id`]): 1 to [`MAX_SESSION_ID_LEN`]
/// ASCII letters, digits, `-`, `_` and `.`, not `.` or `..` (what
/// [`Session::id`] produces and execution runtimes accept).
///
/// # Errors
/// [`StoreErrorKind::Invalid`] saying what is wrong.
pub fn validate_session_id(id: &str) -> Result<(), StoreError> {
    skills_workspace::validate_session_id(id).map_err(|_| {
        let shown: String = id.chars().take(40).collect();
        StoreError::new(
            StoreErrorKind::Invalid,
            format!(
                "invalid session id {shown:?}: use 1 to {MAX_SESSION_ID_LEN} ASCII letters, \
                 digits, `-`, `_` and `.`, not `.` or `..`"
            ),
        )
    })
}

/// Checks what `create` gets, against the parent's info when there is one
/// (`parent_len`: the parent's log length, `None` when it does not exist).
///
/// # Errors
/// As [`SessionStore::create`] describes.
pub fn check_new_session(
    session: &NewSession,
    parent_len: Option<Option<u64>>,
) -> Result<(), StoreError> {
    validate_session_id(&session.id)?;
    if let (Some(parent), Some(len)) = (&session.parent, parent_len) {
        let Some(len) = len else {
            return Err(StoreError::new(
                StoreErrorKind::NotFound,
                format!("no parent session `{}`", parent.session),
            ));
        };
        if parent.seq > len {
            return Err(StoreError::new(
                StoreErrorKind::Invalid,
                format!(
                    "fork point {} is past the end of parent session `{}` ({len} events)",
                    parent.seq, parent.session
                ),
            ));
        }
    }
    Ok(())
}

/// Checks that `events` start at `from` and have no gaps (what stores read
/// back from their backend).
///
/// # Errors
/// [`StoreErrorKind::Corrupt`] naming the first gap.
pub fn check_sequence(id: &str, from: u64, events: &[StoredEvent]) -> Result<(), StoreError> {
    for (expected, event) in (from..).zip(events) {
        if event.seq != expected {
            return Err(StoreError::new(
                StoreErrorKind::Corrupt,
                format!(
                    "session `{id}`: expected event {expected}, found {}",
                    event.seq
                ),
            ));
        }
    }
    Ok(())
}

/// A session's history with its ancestors': the parent's events before the
/// fork point (recursively), then the session's own.
///
/// # Errors
/// What the store returns, or [`StoreErrorKind::Corrupt`] for a chain of
/// parents deeper than [`MAX_LINEAGE_DEPTH`].
pub async fn read_lineage(
    store: &dyn SessionStore,
    id: &str,
) -> Result<Vec<SessionEvent>, StoreError> {
    let mut chain = Vec::new();
    let mut info = store.info(id).await?;
    let mut until = None;
    loop {
        if chain.len() >= MAX_LINEAGE_DEPTH {
            return Err(StoreError::new(
                StoreErrorKind::Corrupt,
                format!("session `{id}`: more than {MAX_LINEAGE_DEPTH} ancestors"),
            ));
        }
        let parent = info.parent.clone();
        chain.push((info.id.clone(), until));
        match parent {
            Some(fork) => {
                until = Some(fork.seq);
                info = store.info(&fork.session).await?;
            }
            None => break,
        }
    }
    let mut events = Vec::new();
    for (session, until) in chain.into_iter().rev() {
        let own = store.read(&session, 0).await?;
        let take = until.map_or(own.len(), |u| usize::try_from(u).unwrap_or(usize::MAX));
        events.extend(own.into_iter().take(take).map(|e| e.event));
    }
    Ok(events)
}
