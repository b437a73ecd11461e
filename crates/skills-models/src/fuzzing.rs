//! Entry points for the fuzz targets and tests: the adapters' parsers
//! without HTTP. Not a stable API.

use super::transport::{self, Protocol};
use skills_agent::{ModelError, ModelEvent, ModelResponse};

/// Which provider's answers to parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Wire {
    /// OpenAI Chat Completions.
    #[cfg(feature = "openai")]
    OpenAiChat,
    /// The OpenAI Responses API.
    #[cfg(feature = "openai")]
    OpenAiResponses,
    /// Anthropic Messages.
    #[cfg(feature = "anthropic")]
    Anthropic,
}

/// Parses a whole (non-streamed) answer body.
pub fn parse_response(wire: Wire, body: &[u8]) -> Result<ModelResponse, ModelError> {
    match wire {
        #[cfg(feature = "openai")]
        Wire::OpenAiChat => super::openai_chat::Chat::parse(body),
        #[cfg(feature = "openai")]
        Wire::OpenAiResponses => super::openai_responses::Responses::parse(body),
        #[cfg(feature = "anthropic")]
        Wire::Anthropic => super::anthropic::Messages::parse(body),
    }
}

/// Decodes a streamed answer arriving as `chunks` of server-sent-event
/// bytes: what the stream would yield, up to and including its first error.
pub fn decode_stream(wire: Wire, chunks: Vec<Vec<u8>>) -> Vec<Result<ModelEvent, ModelError>> {
    match wire {
        #[cfg(feature = "openai")]
        Wire::OpenAiChat => transport::decode_chunks::<super::openai_chat::Chat>(chunks),
        #[cfg(feature = "openai")]
        Wire::OpenAiResponses => {
            transport::decode_chunks::<super::openai_responses::Responses>(chunks)
        }
        #[cfg(feature = "anthropic")]
        Wire::Anthropic => transport::decode_chunks::<super::anthropic::Messages>(chunks),
    }
}

/// Parses the wait a `retry-after` header value asks for, as of the Unix
/// time `now_secs` (an HTTP date or seconds).
pub fn retry_after(value: &str, now_secs: u64) -> Option<std::time::Duration> {
    let mut headers = reqwest::header::HeaderMap::new();
    let value = reqwest::header::HeaderValue::from_str(value).ok()?;
    headers.insert("retry-after", value);
    transport::retry_after(
        &headers,
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(now_secs),
    )
}
