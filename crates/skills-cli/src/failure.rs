//! How a command fails: a message and an exit code.

use std::io;

use skills_core::ErrorKind;

/// A failure that ends the command with a message and an exit code.
pub(crate) struct Failure {
    pub(crate) code: u8,
    pub(crate) message: String,
    pub(crate) broken_pipe: bool,
}

impl Failure {
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Self {
            code: 2,
            message: message.into(),
            broken_pipe: false,
        }
    }
}

impl From<io::Error> for Failure {
    fn from(err: io::Error) -> Self {
        Self {
            code: 2,
            message: format!("cannot write output: {err}"),
            broken_pipe: err.kind() == io::ErrorKind::BrokenPipe,
        }
    }
}

impl From<skills_core::Error> for Failure {
    fn from(err: skills_core::Error) -> Self {
        let code = match err.kind() {
            ErrorKind::Io | ErrorKind::InvalidRange | ErrorKind::Other => 2,
            _ => 1,
        };
        Self {
            code,
            message: err.to_string(),
            broken_pipe: false,
        }
    }
}

/// A failed JSON write: a closed pipe ends quietly like any other write.
pub(crate) fn json_failure(err: serde_json::Error) -> Failure {
    match err.io_error_kind() {
        Some(kind) => Failure::from(io::Error::from(kind)),
        None => Failure::usage(format!("cannot write JSON: {err}")),
    }
}
