//! Events as stored: one JSON text per event, written and read the same way
//! by every backend (TEXT columns keep the bytes as written).

use skills_agent::{ForkPoint, SessionEvent, SessionInfo, StoreError, StoreErrorKind, StoredEvent};

/// An event's JSON text.
pub(crate) fn encode(event: &SessionEvent) -> Result<String, StoreError> {
    serde_json::to_string(event).map_err(|e| {
        StoreError::new(
            StoreErrorKind::Invalid,
            format!("the event cannot be serialized: {e}"),
        )
    })
}

/// Every event's JSON text, with its type name.
pub(crate) fn encode_all(
    events: &[SessionEvent],
) -> Result<Vec<(&'static str, String)>, StoreError> {
    events
        .iter()
        .map(|e| Ok((e.type_name(), encode(e)?)))
        .collect()
}

/// An event read back.
pub(crate) fn decode(id: &str, seq: u64, body: &str) -> Result<StoredEvent, StoreError> {
    let event = serde_json::from_str(body).map_err(|e| {
        StoreError::new(
            StoreErrorKind::Corrupt,
            format!("session `{id}`, event {seq}: {e}"),
        )
    })?;
    Ok(StoredEvent { seq, event })
}

/// A sequence number from a database integer (never negative: the stores
/// write only what they counted).
pub(crate) fn seq_from(id: &str, value: i64) -> Result<u64, StoreError> {
    u64::try_from(value).map_err(|_| {
        StoreError::new(
            StoreErrorKind::Corrupt,
            format!("session `{id}`: negative sequence number {value}"),
        )
    })
}

/// A sequence number as a database integer.
pub(crate) fn seq_to(value: u64) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| {
        StoreError::new(
            StoreErrorKind::Invalid,
            format!("sequence number {value} is too large"),
        )
    })
}

/// A session's info from its row (`parent_id`, `fork_seq` and `next_seq` as
/// stored).
pub(crate) fn session_info_from(
    id: String,
    agent: String,
    parent: Option<String>,
    fork_seq: Option<i64>,
    next_seq: i64,
) -> Result<SessionInfo, StoreError> {
    let parent = match (parent, fork_seq) {
        (Some(session), Some(seq)) => Some(ForkPoint {
            seq: seq_from(&id, seq)?,
            session,
        }),
        _ => None,
    };
    Ok(SessionInfo {
        next_seq: seq_from(&id, next_seq)?,
        id,
        agent,
        parent,
    })
}

/// The error for a database (`what`) whose schema `version` is newer than
/// the `known` one.
pub(crate) fn newer_schema(what: &str, version: usize, known: usize) -> StoreError {
    StoreError::new(
        StoreErrorKind::Schema,
        format!(
            "{what} has session schema version {version}, newer than this program knows \
             ({known}); use a newer `skills` or another database"
        ),
    )
}
