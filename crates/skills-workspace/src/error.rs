//! The error of every workspace operation.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What kind of problem a [`WorkspaceError`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum WorkspaceErrorKind {
    /// No such workspace, staged skill, exec session or file.
    NotFound,
    /// The request is malformed (bad session id, empty command, bad input URI).
    InvalidRequest,
    /// A path leaves the workspace (a `cwd` of `../..`, an output glob with `..`,
    /// a link pointing out).
    PathEscape,
    /// The command policy refused the command or one of its variables.
    PolicyDenied,
    /// The skill has not been staged (loaded) in this session.
    SkillNotLoaded,
    /// The isolation the runtime needs is not available here (bubblewrap
    /// missing, user namespaces off, no container engine).
    Unavailable,
    /// The command could not be started.
    Spawn,
    /// A file or the output is larger than allowed.
    TooLarge,
    /// The runtime does not offer this operation.
    Unsupported,
    /// A limit of the runtime was reached: the workspace's disk cap, the
    /// number of interactive sessions running at once.
    LimitExceeded,
    /// An I/O error.
    Io,
    /// Anything else.
    Other,
}

impl WorkspaceErrorKind {
    /// A stable lowercase name, e.g. `path-escape`.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkspaceErrorKind::NotFound => "not-found",
            WorkspaceErrorKind::InvalidRequest => "invalid-request",
            WorkspaceErrorKind::PathEscape => "path-escape",
            WorkspaceErrorKind::PolicyDenied => "policy-denied",
            WorkspaceErrorKind::SkillNotLoaded => "skill-not-loaded",
            WorkspaceErrorKind::Unavailable => "unavailable",
            WorkspaceErrorKind::Spawn => "spawn",
            WorkspaceErrorKind::TooLarge => "too-large",
            WorkspaceErrorKind::Unsupported => "unsupported",
            WorkspaceErrorKind::LimitExceeded => "limit-exceeded",
            WorkspaceErrorKind::Io => "io",
            WorkspaceErrorKind::Other => "other",
        }
    }
}

impl fmt::Display for WorkspaceErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a [`WorkspaceRuntime`](crate::WorkspaceRuntime) operation failed: a [`kind`](WorkspaceError::kind)
/// to branch on and a message written for the model and for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceError {
    kind: WorkspaceErrorKind,
    message: String,
}

impl WorkspaceError {
    /// An error of `kind` with `message`.
    pub fn new(kind: WorkspaceErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> WorkspaceErrorKind {
        self.kind
    }

    /// The message, without the kind.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for WorkspaceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for WorkspaceError {}

/// The result type of workspace operations.
pub type WorkspaceResult<T> = std::result::Result<T, WorkspaceError>;
