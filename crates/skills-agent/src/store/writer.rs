//! Keeping a [`Session`] in a [`SessionStore`], and resuming it from one.

use std::sync::Arc;

use skills_workspace::SessionId;
use tracing::Instrument as _;

use super::{
    ForkPoint, NewSession, SessionEvent, SessionStore, StoreError, StoreErrorKind, StoredEvent,
};
use crate::config::Agent;
use crate::message::Message;
use crate::model::Usage;
use crate::session::Session;

/// Appends what a [`Session`] adds to its stored log.
///
/// The writer remembers how many messages it has stored and the sequence
/// number its next append expects; [`SessionWriter::save`] appends the new
/// messages (and the load state when it changed) in one append. When another
/// writer appended to the same session first, the append fails with
/// [`StoreErrorKind::Conflict`] and nothing is written: reopen the session
/// with [`Agent::resume_stored`] to continue from what the store holds.
#[derive(Debug)]
pub struct SessionWriter {
    store: Arc<dyn SessionStore>,
    id: String,
    next_seq: u64,
    saved_messages: usize,
    last_loaded: Vec<String>,
}

impl SessionWriter {
    /// Creates the stored session for `session` (its id, agent and pinned
    /// catalog) and stores the messages it already has. `parent` names the
    /// session a forked sub-agent branched from. A stored session with the
    /// same id and parent whose log is empty (its creator died before the
    /// first append) is taken over.
    ///
    /// # Errors
    /// [`StoreErrorKind::AlreadyExists`] for a session that has events, or
    /// what the store's `create` or `append` returns.
    pub async fn create(
        store: Arc<dyn SessionStore>,
        session: &Session,
        parent: Option<ForkPoint>,
    ) -> Result<Self, StoreError> {
        let span = tracing::debug_span!("skills.store.create", session = %session.id(), store = %store.kind());
        async {
            let mut new = NewSession::new(session.id().as_str(), session.agent().name());
            new.parent = parent;
            match store.create(&new).await {
                Ok(_) => {}
                // A writer that died between `create` and its first append
                // left an empty log: take it over (the append below still
                // conflicts if another writer does the same first).
                Err(err) if err.kind() == StoreErrorKind::AlreadyExists => {
                    let info = store.info(session.id().as_str()).await?;
                    if info.next_seq != 0 || info.parent != new.parent {
                        return Err(err);
                    }
                }
                Err(err) => return Err(err),
            }
            let started = SessionEvent::Started {
                agent: session.agent().name().to_owned(),
                catalog: session.pinned_catalog().clone(),
            };
            let next_seq = store.append(session.id().as_str(), 0, &[started]).await?;
            let mut writer = Self {
                store,
                id: session.id().as_str().to_owned(),
                next_seq,
                saved_messages: 0,
                last_loaded: Vec::new(),
            };
            writer.save(session).await?;
            Ok(writer)
        }
        .instrument(span)
        .await
    }

    /// Appends the messages `session` added since the last save, and its
    /// load state when that changed, in one append. Returns the log's new
    /// length.
    ///
    /// # Errors
    /// [`StoreErrorKind::Conflict`] when another writer appended first,
    /// [`StoreErrorKind::Invalid`] for a session other than the one this
    /// writer stores, or what the store returns.
    pub async fn save(&mut self, session: &Session) -> Result<u64, StoreError> {
        if session.id().as_str() != self.id || session.transcript().len() < self.saved_messages {
            return Err(StoreError::new(
                StoreErrorKind::Invalid,
                format!(
                    "session `{}` is not the one this writer stores (`{}`)",
                    session.id(),
                    self.id
                ),
            ));
        }
        let mut events: Vec<SessionEvent> = session.transcript()[self.saved_messages..]
            .iter()
            .map(|m| SessionEvent::Message { message: m.clone() })
            .collect();
        let loaded = loaded_order(session);
        if loaded != self.last_loaded {
            events.push(SessionEvent::LoadState {
                loaded: loaded.clone(),
            });
        }
        if events.is_empty() {
            return Ok(self.next_seq);
        }
        self.append(&events).await?;
        self.saved_messages = session.transcript().len();
        self.last_loaded = loaded;
        Ok(self.next_seq)
    }

    /// Appends the tokens a run used.
    ///
    /// # Errors
    /// As [`SessionWriter::save`].
    pub async fn record_usage(&mut self, usage: Usage) -> Result<u64, StoreError> {
        self.append(&[SessionEvent::Usage { usage }]).await?;
        Ok(self.next_seq)
    }

    /// Where a sub-agent forked now branches off this session: its id and
    /// the log's current length (pass it to [`SessionWriter::create`] for
    /// the sub-agent's session).
    pub fn fork_point(&self) -> ForkPoint {
        ForkPoint {
            session: self.id.clone(),
            seq: self.next_seq,
        }
    }

    /// The stored session's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The sequence number the next append expects.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn SessionStore> {
        &self.store
    }

    async fn append(&mut self, events: &[SessionEvent]) -> Result<(), StoreError> {
        let span = tracing::debug_span!(
            "skills.store.append",
            session = %self.id,
            store = %self.store.kind(),
            seq = self.next_seq,
            events = events.len()
        );
        self.next_seq = self
            .store
            .append(&self.id, self.next_seq, events)
            .instrument(span)
            .await?;
        Ok(())
    }
}

/// The loaded skills, least recently used first.
fn loaded_order(session: &Session) -> Vec<String> {
    session.state().in_use_order().map(str::to_owned).collect()
}

/// What a stored log holds for a resume.
struct Replayed {
    catalog: skills_core::Catalog,
    transcript: Vec<Message>,
    loaded: Option<Vec<String>>,
}

fn replay(id: &str, events: Vec<StoredEvent>) -> Result<Replayed, StoreError> {
    let mut events = events.into_iter();
    let catalog = match events.next() {
        Some(StoredEvent {
            event: SessionEvent::Started { catalog, .. },
            ..
        }) => catalog,
        Some(other) => {
            return Err(StoreError::new(
                StoreErrorKind::Corrupt,
                format!(
                    "session `{id}` starts with a `{}` event, not `started`",
                    other.event.type_name()
                ),
            ));
        }
        None => {
            return Err(StoreError::new(
                StoreErrorKind::Corrupt,
                format!("session `{id}` has no events"),
            ));
        }
    };
    let mut transcript = Vec::new();
    let mut loaded = None;
    for stored in events {
        match stored.event {
            SessionEvent::Message { message } => transcript.push(message),
            SessionEvent::LoadState { loaded: l } => loaded = Some(l),
            SessionEvent::Usage { .. } => {}
            SessionEvent::Started { .. } => {
                return Err(StoreError::new(
                    StoreErrorKind::Corrupt,
                    format!(
                        "session `{id}` has a second `started` event at {}",
                        stored.seq
                    ),
                ));
            }
        }
    }
    Ok(Replayed {
        catalog,
        transcript,
        loaded,
    })
}

impl Agent {
    /// Resumes the stored session `id`: the catalog it pinned and its
    /// transcript come from the store, so the rebuilt requests are the bytes
    /// the session sent before (a library change since is announced by the
    /// next [`Session::refresh_catalog`] as a delta). Returns the session,
    /// under its stored id, and a writer that continues its log.
    ///
    /// # Errors
    /// What the store returns, [`StoreErrorKind::Corrupt`] for a log that
    /// does not start with [`SessionEvent::Started`], or
    /// [`StoreErrorKind::Provider`] when the provider's `list` fails.
    pub async fn resume_stored(
        &self,
        store: Arc<dyn SessionStore>,
        id: &str,
    ) -> Result<(Session, SessionWriter), StoreError> {
        let span =
            tracing::debug_span!("skills.store.resume", session = %id, store = %store.kind());
        async {
            let events = store.read(id, 0).await?;
            let next_seq = events.last().map_or(0, |e| e.seq + 1);
            let replayed = replay(id, events)?;
            let saved_messages = replayed.transcript.len();
            let mut session = self
                .resume_session(replayed.catalog, replayed.transcript)
                .await
                .map_err(|e| StoreError::new(StoreErrorKind::Provider, e.to_string()))?;
            super::validate_session_id(id)?;
            let checked = SessionId::new(id)
                .map_err(|e| StoreError::new(StoreErrorKind::Invalid, e.message()))?;
            session.set_id(checked);
            let last_loaded = loaded_order(&session);
            if let Some(stored) = &replayed.loaded
                && *stored != last_loaded
            {
                tracing::warn!(
                    session = %id,
                    ?stored,
                    replayed = ?last_loaded,
                    "the stored load state differs from the one replayed from the transcript; the transcript wins"
                );
            }
            let writer = SessionWriter {
                store,
                id: id.to_owned(),
                next_seq,
                saved_messages,
                last_loaded: replayed.loaded.unwrap_or_default(),
            };
            Ok((session, writer))
        }
        .instrument(span)
        .await
    }
}
