//! The [`Model`] trait (F-AGT-3): what the agent loop calls, and what model
//! adapters implement.
//!
//! A model takes a provider-neutral [`ModelRequest`] and answers with one
//! assistant [`Message`] (text and tool calls), why it stopped, and the
//! tokens it used. [`Model::complete`] returns the whole answer;
//! [`Model::stream`] yields [`ModelEvent`]s as they arrive and ends with the
//! same answer, assembled. The HTTP adapters (crate `skills-models`) speak
//! the providers' wire formats from the bytes its `wire` encoders write, so
//! what leaves the process is exactly what the engine built. With the
//! `testing` feature, `ScriptedModel` answers from a script, for tests and
//! demos.
//!
//! Nothing here does I/O, so the trait builds for `wasm32` (where neither the
//! model nor its futures need be `Send`).

use std::fmt;
use std::pin::Pin;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::Stream;
use serde::{Deserialize, Serialize};
use skills_core::{MaybeSend, MaybeSync};

use crate::message::{Message, ToolCall};
use crate::request::{CacheStrategy, ModelRequest};

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// The model finished its turn.
    EndTurn,
    /// The model wants its tool calls run.
    ToolUse,
    /// The output hit the token limit.
    MaxTokens,
    /// A stop sequence matched.
    StopSequence,
    /// The provider refused to answer (a safety filter).
    Refusal,
    /// A reason this crate does not know, as the provider named it.
    Other(String),
}

/// Tokens one model call used, normalized across providers.
///
/// `input_tokens` counts every prompt token, cached or not (OpenAI's
/// `prompt_tokens`; Anthropic's `input_tokens + cache_read_input_tokens +
/// cache_creation_input_tokens`), so [`Usage::cache_hit_ratio`] means the
/// same for every provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Usage {
    /// All prompt tokens, cached ones included.
    pub input_tokens: u64,
    /// Generated tokens.
    pub output_tokens: u64,
    /// Prompt tokens served from the provider's cache.
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache (Anthropic).
    pub cache_creation_tokens: u64,
}

impl Usage {
    /// Usage with these counts.
    pub fn new(
        input_tokens: u64,
        output_tokens: u64,
        cache_read_tokens: u64,
        cache_creation_tokens: u64,
    ) -> Self {
        Self {
            input_tokens,
            output_tokens,
            cache_read_tokens,
            cache_creation_tokens,
        }
    }

    /// The share of prompt tokens read from the cache (0 when there were
    /// none).
    pub fn cache_hit_ratio(&self) -> f64 {
        if self.input_tokens == 0 {
            0.0
        } else {
            // Token counts stay far below 2^52: the conversion is exact.
            self.cache_read_tokens as f64 / self.input_tokens as f64
        }
    }

    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_creation_tokens += other.cache_creation_tokens;
    }
}

/// One retry an adapter made before the call succeeded or gave up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Retry {
    /// 1 for the first retry.
    pub attempt: u32,
    /// How long the adapter waited before it (from `retry-after` when the
    /// provider sent one).
    #[serde(with = "millis")]
    pub wait: Duration,
    /// What failed: `HTTP 429: …`, `connection dropped`, ….
    pub reason: String,
}

impl Retry {
    /// A retry record.
    pub fn new(attempt: u32, wait: Duration, reason: impl Into<String>) -> Self {
        Self {
            attempt,
            wait,
            reason: reason.into(),
        }
    }
}

mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

/// A model's whole answer to one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelResponse {
    /// The assistant message: its text and the tool calls, in order.
    pub message: Message,
    /// Why the model stopped.
    pub stop: StopReason,
    /// Tokens used.
    pub usage: Usage,
    /// The model that answered, as the provider named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The provider's id for the response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Retries the adapter made for this call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retries: Vec<Retry>,
}

impl ModelResponse {
    /// An answer. The stop reason is [`StopReason::ToolUse`] when `message`
    /// has tool calls and [`StopReason::EndTurn`] otherwise; change it with
    /// [`ModelResponse::with_stop`].
    pub fn new(message: Message, usage: Usage) -> Self {
        let stop = if message.tool_calls.is_empty() {
            StopReason::EndTurn
        } else {
            StopReason::ToolUse
        };
        Self {
            message,
            stop,
            usage,
            model: None,
            id: None,
            retries: Vec::new(),
        }
    }

    /// A text answer that ends the turn.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(Message::assistant(text), Usage::default())
    }

    /// An answer that calls tools (with optional text before the calls).
    pub fn tool_calls(text: impl Into<String>, calls: Vec<ToolCall>) -> Self {
        Self::new(Message::assistant_with_calls(text, calls), Usage::default())
    }

    /// Sets the stop reason.
    #[must_use]
    pub fn with_stop(mut self, stop: StopReason) -> Self {
        self.stop = stop;
        self
    }

    /// Sets the usage.
    #[must_use]
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }

    /// Sets the model name the provider reported.
    #[must_use]
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Sets the provider's response id.
    #[must_use]
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Records the retries made for this call.
    #[must_use]
    pub fn with_retries(mut self, retries: Vec<Retry>) -> Self {
        self.retries = retries;
        self
    }
}

/// What a streaming call yields, in order: text deltas, completed tool calls
/// and retries as they happen, then exactly one [`ModelEvent::Completed`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ModelEvent {
    /// A piece of the answer's text.
    TextDelta(String),
    /// A tool call, complete (adapters assemble the provider's deltas).
    ToolCall(ToolCall),
    /// The adapter is retrying the call (nothing was yielded from the failed
    /// attempt, or the attempt failed before its first event).
    Retry(Retry),
    /// The whole answer; the last event of the stream.
    Completed(ModelResponse),
}

/// The stream [`Model::stream`] returns.
#[cfg(not(target_arch = "wasm32"))]
pub type ModelStream<'a> = Pin<Box<dyn Stream<Item = Result<ModelEvent, ModelError>> + Send + 'a>>;

/// The stream [`Model::stream`] returns.
#[cfg(target_arch = "wasm32")]
pub type ModelStream<'a> = Pin<Box<dyn Stream<Item = Result<ModelEvent, ModelError>> + 'a>>;

/// What kind of failure a [`ModelError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ModelErrorKind {
    /// The adapter is not configured (no key, no base URL, bad model name).
    Config,
    /// The provider refused the key (HTTP 401 or 403).
    Auth,
    /// Too many requests (HTTP 429), after the retries.
    RateLimited,
    /// The provider failed (HTTP 5xx), after the retries.
    Server,
    /// The provider rejected the request (another HTTP 4xx).
    Request,
    /// The connection failed or dropped, after the retries.
    Connection,
    /// The call took longer than its timeout.
    Timeout,
    /// The provider's answer could not be understood.
    InvalidResponse,
    /// The answer was larger than the adapter's cap (`HttpOptions::max_answer_bytes`
    /// of the HTTP adapters): a server that streams without end. Not retried.
    AnswerTooLarge,
    /// One server-sent event (or one line of it) was larger than the
    /// adapter's cap (`HttpOptions::max_event_bytes`). Not retried.
    EventTooLarge,
    /// The script of a `ScriptedModel` ran out, or it was told to fail
    /// (only with the `testing` feature, which provides `ScriptedModel`).
    #[cfg(feature = "testing")]
    Script,
}

impl ModelErrorKind {
    /// A stable kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Config => "config",
            Self::Auth => "auth",
            Self::RateLimited => "rate-limited",
            Self::Server => "server",
            Self::Request => "request",
            Self::Connection => "connection",
            Self::Timeout => "timeout",
            Self::InvalidResponse => "invalid-response",
            Self::AnswerTooLarge => "answer-too-large",
            Self::EventTooLarge => "event-too-large",
            #[cfg(feature = "testing")]
            Self::Script => "script",
        }
    }
}

impl fmt::Display for ModelErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A model call that failed: what kind, the HTTP status if there was one,
/// and the provider's own message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError {
    kind: ModelErrorKind,
    status: Option<u16>,
    message: String,
    retries: u32,
}

impl ModelError {
    /// An error without an HTTP status.
    pub fn new(kind: ModelErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            status: None,
            message: message.into(),
            retries: 0,
        }
    }

    /// Sets the HTTP status the provider answered with.
    #[must_use]
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    /// Records how many retries were made before giving up.
    #[must_use]
    pub fn with_retries(mut self, retries: u32) -> Self {
        self.retries = retries;
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> ModelErrorKind {
        self.kind
    }

    /// The HTTP status, if the provider answered.
    pub fn status(&self) -> Option<u16> {
        self.status
    }

    /// The provider's message (or ours, when there was no answer).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Retries made before giving up.
    pub fn retries(&self) -> u32 {
        self.retries
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status {
            Some(status) => write!(f, "{} (HTTP {status}): {}", self.kind, self.message)?,
            None => write!(f, "{}: {}", self.kind, self.message)?,
        }
        if self.retries > 0 {
            write!(f, " (after {} retries)", self.retries)?;
        }
        Ok(())
    }
}

impl std::error::Error for ModelError {}

/// A language model the agent loop can call.
///
/// Implement [`Model::complete`]; [`Model::stream`] defaults to one
/// [`ModelEvent::Completed`] with that answer (preceded by its text and tool
/// calls, so a UI sees the same events either way). Adapters that stream
/// over the wire override it.
///
/// Implementations must send `request` as it is: the engine guarantees each
/// request extends the previous one byte for byte, and a model that
/// re-serializes or reorders it loses the provider's prompt cache.
///
/// A model also says how its provider caches prompts
/// ([`Model::cache_strategy`]); the [`Runner`](crate::Runner) and
/// [`Session::build_request_for`](crate::Session::build_request_for) place
/// the request's cache breakpoints by it, so no caller has to know.
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
pub trait Model: MaybeSend + MaybeSync + fmt::Debug {
    /// A name for logs and events (`openai:gpt-4.1`, `scripted`).
    fn name(&self) -> &str;

    /// How this model's provider caches prompts, so the engine places the
    /// cache breakpoints it needs (F-AGT-2).
    ///
    /// The default, [`CacheStrategy::AutomaticPrefix`], places none: right
    /// for providers that cache the longest matching prefix by themselves
    /// (OpenAI and compatible servers). A provider that caches only at
    /// explicit markers answers [`CacheStrategy::Anthropic`], as the
    /// `Anthropic` adapter does. An agent built with
    /// [`AgentBuilder::cache`](crate::AgentBuilder::cache) overrides it.
    fn cache_strategy(&self) -> CacheStrategy {
        CacheStrategy::AutomaticPrefix
    }

    /// Sends `request` and waits for the whole answer.
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError>;

    /// Sends `request` and yields the answer as it arrives.
    async fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> Result<ModelStream<'a>, ModelError> {
        let response = self.complete(request).await?;
        Ok(Box::pin(futures_util::stream::iter(
            completed_events(response).into_iter().map(Ok),
        )))
    }
}

/// The events a streaming call would have yielded for `response`: its text
/// as one delta (when there is text), each tool call, its retries first, and
/// the completion.
pub fn completed_events(response: ModelResponse) -> Vec<ModelEvent> {
    let mut events: Vec<ModelEvent> = response
        .retries
        .iter()
        .cloned()
        .map(ModelEvent::Retry)
        .collect();
    if !response.message.content.is_empty() {
        events.push(ModelEvent::TextDelta(response.message.content.clone()));
    }
    events.extend(
        response
            .message
            .tool_calls
            .iter()
            .cloned()
            .map(ModelEvent::ToolCall),
    );
    events.push(ModelEvent::Completed(response));
    events
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn usage_ratio_and_sum() {
        let mut usage = Usage::new(1000, 50, 900, 0);
        assert!((usage.cache_hit_ratio() - 0.9).abs() < 1e-9);
        usage.add(&Usage::new(1000, 10, 0, 1000));
        assert_eq!(usage, Usage::new(2000, 60, 900, 1000));
        assert_eq!(Usage::default().cache_hit_ratio(), 0.0);
        let retry =
            serde_json::to_value(Retry::new(2, Duration::from_millis(1500), "x")).expect("json");
        assert_eq!(retry, json!({"attempt": 2, "wait": 1500, "reason": "x"}));
    }
}
