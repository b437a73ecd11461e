//! The error of the eval runners and file readers.

use std::fmt;

/// What kind of problem an [`EvalError`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EvalErrorKind {
    /// A query set, an `evals.json` or a baseline is malformed: not JSON,
    /// a field of the wrong type, an empty query, a bad pattern.
    Input,
    /// A query or eval names a skill the catalog does not have (or one the
    /// policy keeps away from the model).
    UnknownSkill,
    /// A setting is out of range (zero runs, a threshold above 1).
    Config,
    /// The skill provider failed while the runner read the catalog or a file.
    Provider,
    /// Writing the result files failed.
    Io,
}

impl EvalErrorKind {
    /// A stable kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Input => "input",
            Self::UnknownSkill => "unknown-skill",
            Self::Config => "config",
            Self::Provider => "provider",
            Self::Io => "io",
        }
    }
}

/// Why an eval could not run (a single query's failure is a result, not an
/// error: see [`QueryResult::errors`](crate::QueryResult::errors)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalError {
    kind: EvalErrorKind,
    message: String,
}

impl EvalError {
    /// An error of `kind` saying `message`.
    pub fn new(kind: EvalErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// What kind of problem this is.
    pub fn kind(&self) -> EvalErrorKind {
        self.kind
    }

    /// The message, without the kind.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EvalError {}
