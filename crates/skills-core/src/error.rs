//! The error type shared by providers and resource access.

use std::fmt;

/// What went wrong, for callers that branch on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// No skill with that name.
    SkillNotFound,
    /// The skill exists but has no such resource.
    ResourceNotFound,
    /// A resource path was refused (traversal, absolute, NUL, backslash, drive
    /// letter, or a symlink leading outside the skill).
    InvalidPath,
    /// The resource is binary, not text.
    Binary,
    /// A file or argument is larger than allowed.
    TooLarge,
    /// A line range is malformed or outside the file.
    InvalidRange,
    /// The skill or its definition is invalid (see the diagnostics).
    InvalidSkill,
    /// An I/O error.
    Io,
    /// The provider does not offer this operation (for example raw bytes).
    Unsupported,
    /// Anything else.
    Other,
}

impl ErrorKind {
    /// A stable lowercase name, e.g. `skill-not-found`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::SkillNotFound => "skill-not-found",
            ErrorKind::ResourceNotFound => "resource-not-found",
            ErrorKind::InvalidPath => "invalid-path",
            ErrorKind::Binary => "binary",
            ErrorKind::TooLarge => "too-large",
            ErrorKind::InvalidRange => "invalid-range",
            ErrorKind::InvalidSkill => "invalid-skill",
            ErrorKind::Io => "io",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Other => "other",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error from a provider or a resource read.
///
/// The message is written for the reader who has to act on it (often a model):
/// it says what was wrong and, where it helps, what is available instead
/// (see [`Error::available`]).
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    available: Vec<String>,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl Error {
    /// A new error of `kind` with a message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            available: Vec::new(),
            source: None,
        }
    }

    /// A "skill not found" error listing the available names (sorted).
    pub fn skill_not_found(name: &str, mut available: Vec<String>) -> Self {
        available.sort();
        available.dedup();
        Self::new(ErrorKind::SkillNotFound, format!("no skill named `{name}`"))
            .with_available(available)
    }

    /// Attaches the list of things that do exist (skill names, resource paths).
    #[must_use]
    pub fn with_available(mut self, available: Vec<String>) -> Self {
        self.available = available;
        self
    }

    /// Attaches an underlying cause.
    #[must_use]
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, without the list of available items.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// What exists instead (skill names or resource paths); may be empty.
    pub fn available(&self) -> &[String] {
        &self.available
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if !self.available.is_empty() {
            write!(f, "; available: {}", self.available.join(", "))?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// A `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_lists_sorted_names() {
        let e = Error::skill_not_found("x", vec!["b".into(), "a".into(), "a".into()]);
        assert_eq!(e.kind(), ErrorKind::SkillNotFound);
        assert_eq!(e.to_string(), "no skill named `x`; available: a, b");
    }
}
