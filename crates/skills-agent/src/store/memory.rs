//! The in-memory [`SessionStore`]: for tests, examples and short-lived
//! processes (nothing survives the process).

use std::collections::BTreeMap;
use std::sync::Mutex;

use async_trait::async_trait;

use super::{
    NewSession, SessionEvent, SessionInfo, SessionStore, StoreError, StoredEvent, check_new_session,
};

/// Sessions in a map behind a mutex. Cloning a [`MemoryStore`] is not
/// offered: share it behind an `Arc`.
#[derive(Debug, Default)]
pub struct MemoryStore {
    sessions: Mutex<BTreeMap<String, Entry>>,
}

#[derive(Debug)]
struct Entry {
    info: SessionInfo,
    events: Vec<SessionEvent>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Entry>> {
        // A panic elsewhere cannot leave an entry half-written: every change
        // below is one push or insert.
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
impl SessionStore for MemoryStore {
    fn kind(&self) -> &str {
        "memory"
    }

    async fn create(&self, session: &NewSession) -> Result<SessionInfo, StoreError> {
        let mut sessions = self.lock();
        let parent_len = session
            .parent
            .as_ref()
            .map(|p| sessions.get(&p.session).map(|e| e.info.next_seq));
        check_new_session(session, parent_len)?;
        if sessions.contains_key(&session.id) {
            return Err(StoreError::already_exists(&session.id));
        }
        let info = session.info();
        sessions.insert(
            session.id.clone(),
            Entry {
                info: info.clone(),
                events: Vec::new(),
            },
        );
        Ok(info)
    }

    async fn append(
        &self,
        id: &str,
        expected_seq: u64,
        events: &[SessionEvent],
    ) -> Result<u64, StoreError> {
        let mut sessions = self.lock();
        let entry = sessions
            .get_mut(id)
            .ok_or_else(|| StoreError::not_found(id))?;
        if entry.info.next_seq != expected_seq {
            return Err(StoreError::conflict(id, expected_seq, entry.info.next_seq));
        }
        entry.events.extend_from_slice(events);
        entry.info.next_seq = entry.events.len() as u64;
        Ok(entry.info.next_seq)
    }

    async fn read(&self, id: &str, from_seq: u64) -> Result<Vec<StoredEvent>, StoreError> {
        let sessions = self.lock();
        let entry = sessions.get(id).ok_or_else(|| StoreError::not_found(id))?;
        Ok((0u64..)
            .zip(&entry.events)
            .skip_while(|(seq, _)| *seq < from_seq)
            .map(|(seq, event)| StoredEvent {
                seq,
                event: event.clone(),
            })
            .collect())
    }

    async fn info(&self, id: &str) -> Result<SessionInfo, StoreError> {
        let sessions = self.lock();
        sessions
            .get(id)
            .map(|e| e.info.clone())
            .ok_or_else(|| StoreError::not_found(id))
    }

    async fn list(&self) -> Result<Vec<SessionInfo>, StoreError> {
        Ok(self.lock().values().map(|e| e.info.clone()).collect())
    }
}
