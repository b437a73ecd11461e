//! HTTP model adapters (F-AGT-4): OpenAI Chat Completions and Responses
//! (feature `openai`) and Anthropic Messages (feature `anthropic`).
//!
//! Each adapter posts exactly the bytes a [`crate::wire`] encoder wrote for
//! the request (never a re-serialization, so the engine's byte-stable prefix
//! reaches the provider's cache intact), reads the answer whole or as
//! server-sent events, and turns it into a [`crate::ModelResponse`] or
//! [`crate::ModelEvent`]s: text deltas, tool calls assembled from their
//! deltas, usage with cached tokens, the stop reason. Failures become
//! [`crate::ModelError`]s with the provider's status and message; 429s, 5xx
//! and dropped connections are retried as [`HttpOptions`] says.
//!
//! These modules do network I/O (reqwest with rustls, on tokio); the rest of
//! the crate does none, and these features are never enabled for wasm32.

mod limits;
mod route;
mod transport;

#[cfg(feature = "anthropic")]
mod anthropic;
#[cfg(feature = "openai")]
mod openai_chat;
#[cfg(feature = "openai")]
mod openai_responses;

#[doc(hidden)]
pub mod fuzzing;

#[cfg(feature = "anthropic")]
pub use anthropic::{ANTHROPIC_VERSION, Anthropic};
#[cfg(feature = "openai")]
pub use openai_chat::OpenAiChat;
#[cfg(feature = "openai")]
pub use openai_responses::OpenAiResponses;
pub use transport::{DEFAULT_MAX_ANSWER_BYTES, DEFAULT_MAX_EVENT_BYTES, HttpOptions};

use crate::message::ToolCall;
use crate::model::{ModelError, ModelErrorKind};

/// Reads `key_var` (required) and `url_var` (else `default_url`) from the
/// environment: the base URL, the key, and whether the URL came from
/// `url_var`.
fn from_env(
    key_var: &str,
    url_var: &str,
    default_url: &str,
) -> Result<(String, String, bool), ModelError> {
    let key = std::env::var(key_var)
        .ok()
        .filter(|k| !k.trim().is_empty())
        .ok_or_else(|| {
            ModelError::new(
                ModelErrorKind::Config,
                format!(
                    "{key_var} is not set: set it to your API key (and {url_var} for another \
                     endpoint than {default_url})"
                ),
            )
        })?;
    let url = std::env::var(url_var).ok().filter(|u| !u.trim().is_empty());
    let from_env = url.is_some();
    Ok((url.unwrap_or_else(|| default_url.to_owned()), key, from_env))
}

/// An [`ModelErrorKind::InvalidResponse`] error.
fn invalid(message: impl Into<String>) -> ModelError {
    ModelError::new(ModelErrorKind::InvalidResponse, message)
}

/// Parses one JSON document of a provider's answer.
fn json<'de, T: serde::Deserialize<'de>>(what: &str, data: &'de [u8]) -> Result<T, ModelError> {
    serde_json::from_slice(data).map_err(|e| invalid(format!("malformed {what}: {e}")))
}

/// A tool call whose pieces arrive across stream events.
#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
    emitted: bool,
}

impl PartialCall {
    /// The call with OpenAI's arguments kept as their raw JSON string (so the
    /// wire encoder sends them back unchanged).
    fn raw(&self) -> ToolCall {
        ToolCall::new(
            self.id.clone(),
            self.name.clone(),
            serde_json::Value::String(self.arguments.clone()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_key_says_what_to_set() {
        let error = from_env(
            "SKILLS_AGENT_TEST_SURELY_UNSET_KEY",
            "SKILLS_AGENT_TEST_SURELY_UNSET_URL",
            "https://example.invalid",
        )
        .expect_err("no key");
        assert_eq!(error.kind(), ModelErrorKind::Config);
        assert!(
            error
                .message()
                .contains("SKILLS_AGENT_TEST_SURELY_UNSET_KEY is not set"),
            "{error}"
        );
    }
}
