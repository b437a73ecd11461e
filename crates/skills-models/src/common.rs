//! What the adapters share: the key and URL from the environment, errors
//! for a malformed answer, and a tool call assembled from stream deltas.

use skills_agent::ToolCall;
use skills_agent::{ModelError, ModelErrorKind};

/// Reads `key_var` (required) and `url_var` (else `default_url`) from the
/// environment: the base URL, the key, and whether the URL came from
/// `url_var`.
pub(crate) fn from_env(
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
pub(crate) fn invalid(message: impl Into<String>) -> ModelError {
    ModelError::new(ModelErrorKind::InvalidResponse, message)
}

/// Parses one JSON document of a provider's answer.
pub(crate) fn json<'de, T: serde::Deserialize<'de>>(
    what: &str,
    data: &'de [u8],
) -> Result<T, ModelError> {
    serde_json::from_slice(data).map_err(|e| invalid(format!("malformed {what}: {e}")))
}

/// A tool call whose pieces arrive across stream events.
#[derive(Debug, Default)]
pub(crate) struct PartialCall {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) arguments: String,
    pub(crate) emitted: bool,
}

impl PartialCall {
    /// The call with OpenAI's arguments kept as their raw JSON string (so the
    /// wire encoder sends them back unchanged).
    pub(crate) fn raw(&self) -> ToolCall {
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
