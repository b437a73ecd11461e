//! The crate's error type.

use std::fmt;

/// What went wrong, broadly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The provider could not list its skills.
    Provider,
    /// A setting was refused (a non-loopback address without a token, a bad
    /// tool setup).
    Config,
    /// A socket could not be bound or served.
    Io,
    /// The MCP session failed (the client broke the protocol during the
    /// handshake, or the transport failed).
    Transport,
}

impl ErrorKind {
    /// A stable, short name for the kind.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Provider => "provider",
            Self::Config => "config",
            Self::Io => "io",
            Self::Transport => "transport",
        }
    }
}

/// An error of this crate: a kind and a message for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// The kind of error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
