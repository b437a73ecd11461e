//! Session ids: the one rule every runtime applies before using an id as a
//! folder or container name.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use crate::error::{WorkspaceError, WorkspaceErrorKind, WorkspaceResult};

/// Longest accepted session id.
pub const MAX_SESSION_ID_CHARS: usize = 128;

/// Checks a session id: 1 to [`MAX_SESSION_ID_CHARS`] ASCII letters, digits,
/// `-`, `_` or `.`, not `.` or `..`. Runtimes use it as a folder or container
/// name, so nothing else is accepted.
pub fn validate_session_id(id: &str) -> WorkspaceResult<()> {
    let ok = !id.is_empty()
        && id.len() <= MAX_SESSION_ID_CHARS
        && id != "."
        && id != ".."
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(WorkspaceError::new(
            WorkspaceErrorKind::InvalidRequest,
            format!(
                "invalid session id {id:?}: use 1 to {MAX_SESSION_ID_CHARS} ASCII letters, digits, '-', '_' or '.'"
            ),
        ))
    }
}

/// A checked session id (see [`validate_session_id`]): what every
/// [`WorkspaceRuntime`](crate::WorkspaceRuntime) method takes, so a runtime
/// never sees an id it could not use as a folder or container name.
///
/// ```
/// use skills_workspace::SessionId;
/// let id: SessionId = "chat-42".parse()?;
/// assert_eq!(id.as_str(), "chat-42");
/// assert!(SessionId::new("../etc").is_err());
/// # Ok::<(), skills_workspace::WorkspaceError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SessionId(String);

impl SessionId {
    /// `id`, checked.
    ///
    /// # Errors
    /// [`WorkspaceErrorKind::InvalidRequest`] when `id` breaks the rule of
    /// [`validate_session_id`].
    pub fn new(id: impl Into<String>) -> WorkspaceResult<Self> {
        let id = id.into();
        validate_session_id(&id)?;
        Ok(Self(id))
    }

    /// A new id, unique in this process: `prefix` made safe (letters,
    /// digits, `-`, `_` and `.` kept, anything else as `_`, at most 64
    /// characters), a dash and a number. An agent names its sessions so.
    pub fn generate(prefix: &str) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name: String = prefix
            .chars()
            .take(64)
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        // At most 64 + 1 + 20 characters of the allowed ones, never `.` or
        // `..` (it ends in a digit): valid by construction.
        Self(format!("{name}-{n}"))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for SessionId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for SessionId {
    type Err = WorkspaceError;

    fn from_str(id: &str) -> WorkspaceResult<Self> {
        Self::new(id)
    }
}

impl TryFrom<String> for SessionId {
    type Error = WorkspaceError;

    fn try_from(id: String) -> WorkspaceResult<Self> {
        Self::new(id)
    }
}

impl TryFrom<&str> for SessionId {
    type Error = WorkspaceError;

    fn try_from(id: &str) -> WorkspaceResult<Self> {
        Self::new(id)
    }
}

impl From<SessionId> for String {
    fn from(id: SessionId) -> Self {
        id.0
    }
}

impl PartialEq<str> for SessionId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for SessionId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn session_ids() {
        assert!(validate_session_id("s-1_a.b").is_ok());
        for bad in ["", ".", "..", "a/b", "a b", &"x".repeat(129)] {
            assert!(validate_session_id(bad).is_err());
            assert!(SessionId::new(bad).is_err());
            assert!(serde_json::from_value::<SessionId>(bad.into()).is_err());
        }
        let id = SessionId::new("s-1_a.b").unwrap();
        assert_eq!(serde_json::to_value(&id).unwrap(), "s-1_a.b");
        assert_eq!(id, "s-1_a.b");
        for prefix in ["", ".", "..", "a b/ü", &"x".repeat(500)] {
            let id = SessionId::generate(prefix);
            assert!(validate_session_id(id.as_str()).is_ok(), "{id}");
        }
        assert_ne!(SessionId::generate("a"), SessionId::generate("a"));
    }
}
