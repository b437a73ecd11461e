//! Session ids: the one rule every runtime applies before using an id as a
//! folder or container name.

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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn session_ids() {
        assert!(validate_session_id("s-1_a.b").is_ok());
        for bad in ["", ".", "..", "a/b", "a b", &"x".repeat(129)] {
            assert!(validate_session_id(bad).is_err());
        }
    }
}
