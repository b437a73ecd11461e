//! The Anthropic Messages adapter (`POST {base}/v1/messages`).

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::Value;

use super::route::{Api, Route};
use super::transport::{self, Endpoint, ErrorDetail, HttpOptions, Protocol, StreamDecoder};
use super::{invalid, json};
use crate::wire::{self, AnthropicOptions};
use skills_agent::{CacheStrategy, ModelRequest};
use skills_agent::{Message, ToolCall};
use skills_agent::{
    Model, ModelError, ModelErrorKind, ModelEvent, ModelResponse, ModelStream, StopReason, Usage,
};

/// The `anthropic-version` header the adapter sends.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A model behind the Anthropic Messages API.
///
/// It posts [`wire::anthropic_messages_with`]'s bytes (with `cache_control`
/// on the engine's cache breakpoints, at most four: its
/// [`Model::cache_strategy`] is [`CacheStrategy::Anthropic`], so sessions
/// place them without being told) with `x-api-key` and
/// `anthropic-version: 2023-06-01`. Streaming reads `message_start`,
/// `content_block_start` / `_delta` (`text_delta`, `input_json_delta`) /
/// `_stop`, `message_delta`, `message_stop`, `ping` and `error`; a tool
/// call's input is assembled from its JSON deltas. Usage is normalized:
/// `input_tokens` counts cached reads and writes too, which are also
/// reported as `cache_read_tokens` and `cache_creation_tokens`.
#[derive(Debug)]
pub struct Anthropic {
    endpoint: Endpoint,
    model: String,
    options: AnthropicOptions,
}

impl Anthropic {
    /// Anthropic's own endpoint, the default base URL.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.anthropic.com";

    /// A model at `base_url` (`https://api.anthropic.com`; requests go to
    /// `{base_url}/v1/messages`), calling it `model`. A base URL that ends
    /// in `/v1` or in `/v1/messages` is taken as meant: requests go to its
    /// `/v1/messages` (see `docs/models.md`).
    pub fn new(
        base_url: impl AsRef<str>,
        api_key: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        let model = model.into();
        Self {
            endpoint: Endpoint::new(
                format!("anthropic:{model}"),
                Route::new(Api::Anthropic, base_url.as_ref()),
                vec![
                    ("x-api-key", api_key.into()),
                    ("anthropic-version", ANTHROPIC_VERSION.to_owned()),
                ],
            ),
            model,
            options: AnthropicOptions::default(),
        }
    }

    /// A model configured from `ANTHROPIC_API_KEY` (required) and
    /// `ANTHROPIC_BASE_URL` (default [`Anthropic::DEFAULT_BASE_URL`]).
    ///
    /// # Errors
    ///
    /// [`ModelErrorKind::Config`] when `ANTHROPIC_API_KEY` is not set.
    pub fn from_env(model: impl Into<String>) -> Result<Self, ModelError> {
        let (url, key, url_from_env) = super::from_env(
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            Self::DEFAULT_BASE_URL,
        )?;
        let mut model = Self::new(url, key, model);
        if url_from_env {
            model.endpoint.route.mark_from_env();
        }
        Ok(model)
    }

    /// Sets timeouts and retries.
    #[must_use]
    pub fn with_http(mut self, options: HttpOptions) -> Self {
        self.endpoint.set_options(options);
        self
    }

    /// Sets `max_tokens` ([`wire::ANTHROPIC_MAX_TOKENS`] by default).
    #[must_use]
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.options = self.options.max_tokens(max_tokens);
        self
    }

    /// The URL requests are posted to.
    pub fn url(&self) -> &str {
        self.endpoint.url()
    }

    /// The timeouts and retries in force.
    pub fn http(&self) -> &HttpOptions {
        &self.endpoint.options
    }

    /// The exact body [`Model::complete`] (`stream == false`) or
    /// [`Model::stream`] (`stream == true`) sends for `request`.
    pub fn body(&self, request: &ModelRequest, stream: bool) -> String {
        wire::anthropic_messages_with(request, &self.model, &self.options.stream(stream))
    }
}

#[async_trait]
impl Model for Anthropic {
    fn name(&self) -> &str {
        &self.endpoint.name
    }

    /// Anthropic caches only at `cache_control` markers: the engine places
    /// its four breakpoints (tools, system, the previous and the latest
    /// turn).
    fn cache_strategy(&self) -> CacheStrategy {
        CacheStrategy::Anthropic
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        transport::complete::<Messages>(&self.endpoint, self.body(request, false)).await
    }

    async fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> Result<ModelStream<'a>, ModelError> {
        Ok(transport::stream::<Messages>(
            &self.endpoint,
            self.body(request, true),
        ))
    }
}

/// The Messages protocol.
pub(crate) struct Messages;

impl Protocol for Messages {
    type Decoder = MessagesDecoder;

    fn parse(body: &[u8]) -> Result<ModelResponse, ModelError> {
        let message: MessageObject = json("message", body)?;
        if let Some(error) = message.error {
            return Err(event_error(&error));
        }
        let mut text = String::new();
        let mut calls = Vec::new();
        for block in message.content {
            match block {
                Block::Text { text: piece } => text.push_str(&piece),
                Block::ToolUse { id, name, input } => {
                    calls.push(ToolCall::new(id, name, input.unwrap_or_else(empty_object)));
                }
                Block::Other => {}
            }
        }
        let mut response = ModelResponse::new(
            Message::assistant_with_calls(text, calls),
            message.usage.map(Into::into).unwrap_or_default(),
        );
        if let Some(reason) = message.stop_reason.as_deref() {
            response = response.with_stop(stop_reason(reason));
        }
        if let Some(model) = message.model {
            response = response.with_model(model);
        }
        if let Some(id) = message.id {
            response = response.with_id(id);
        }
        Ok(response)
    }
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "stop_sequence" => StopReason::StopSequence,
        "refusal" => StopReason::Refusal,
        other => StopReason::Other(other.to_owned()),
    }
}

/// An `error` (in a body or an event): overload and API errors are the
/// provider's (retried before the first text), the rest the request's.
fn event_error(error: &ErrorDetail) -> ModelError {
    let (kind, status) = match error.kind.as_deref() {
        Some("overloaded_error") => (ModelErrorKind::Server, Some(529)),
        Some("api_error") => (ModelErrorKind::Server, Some(500)),
        Some("rate_limit_error") => (ModelErrorKind::RateLimited, Some(429)),
        Some("authentication_error") => (ModelErrorKind::Auth, Some(401)),
        Some("permission_error") => (ModelErrorKind::Auth, Some(403)),
        Some("timeout_error") => (ModelErrorKind::Timeout, None),
        _ => (ModelErrorKind::Request, None),
    };
    let error = ModelError::new(kind, error.describe());
    match status {
        Some(status) => error.with_status(status),
        None => error,
    }
}

#[derive(Deserialize)]
struct MessageObject {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    content: Vec<Block>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: Option<AnthropicUsage>,
    #[serde(default)]
    error: Option<ErrorDetail>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        #[serde(default)]
        id: String,
        #[serde(default)]
        name: String,
        #[serde(default)]
        input: Option<Value>,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize, Default, Clone, Copy)]
struct AnthropicUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
}

impl AnthropicUsage {
    /// Later counts (a `message_delta`'s) replace earlier ones they name.
    fn update(&mut self, later: AnthropicUsage) {
        self.input_tokens = later.input_tokens.or(self.input_tokens);
        self.output_tokens = later.output_tokens.or(self.output_tokens);
        self.cache_read_input_tokens = later
            .cache_read_input_tokens
            .or(self.cache_read_input_tokens);
        self.cache_creation_input_tokens = later
            .cache_creation_input_tokens
            .or(self.cache_creation_input_tokens);
    }
}

impl From<AnthropicUsage> for Usage {
    fn from(usage: AnthropicUsage) -> Self {
        let read = usage.cache_read_input_tokens.unwrap_or(0);
        let created = usage.cache_creation_input_tokens.unwrap_or(0);
        Usage::new(
            usage
                .input_tokens
                .unwrap_or(0)
                .saturating_add(read)
                .saturating_add(created),
            usage.output_tokens.unwrap_or(0),
            read,
            created,
        )
    }
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: MessageObject,
    },
    ContentBlockStart {
        index: u64,
        content_block: Block,
    },
    ContentBlockDelta {
        index: u64,
        delta: BlockDelta,
    },
    ContentBlockStop {
        index: u64,
    },
    MessageDelta {
        #[serde(default)]
        delta: Option<MessageDelta>,
        #[serde(default)]
        usage: Option<AnthropicUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: ErrorDetail,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockDelta {
    TextDelta {
        #[serde(default)]
        text: String,
    },
    InputJsonDelta {
        #[serde(default)]
        partial_json: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct MessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
}

/// A content block being streamed.
#[derive(Debug)]
enum Open {
    Text,
    Tool {
        id: String,
        name: String,
        json: String,
    },
    Other,
}

/// The state of one streamed message.
#[derive(Debug, Default)]
pub(crate) struct MessagesDecoder {
    id: Option<String>,
    model: Option<String>,
    text: String,
    blocks: BTreeMap<u64, Open>,
    calls: Vec<ToolCall>,
    usage: AnthropicUsage,
    stop: Option<String>,
    started: bool,
    done: bool,
}

impl std::fmt::Debug for AnthropicUsage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Usage::from(*self).fmt(f)
    }
}

impl StreamDecoder for MessagesDecoder {
    fn event(
        &mut self,
        _event: Option<&str>,
        data: &str,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), ModelError> {
        if self.done {
            return Ok(());
        }
        match json::<Event>("message stream event", data.as_bytes())? {
            Event::MessageStart { message } => {
                self.started = true;
                self.id = message.id;
                self.model = message.model;
                if let Some(usage) = message.usage {
                    self.usage.update(usage);
                }
            }
            Event::ContentBlockStart {
                index,
                content_block,
            } => {
                let open = match content_block {
                    Block::Text { text } => {
                        if !text.is_empty() {
                            self.text.push_str(&text);
                            out.push(ModelEvent::TextDelta(text));
                        }
                        Open::Text
                    }
                    Block::ToolUse { id, name, input } => Open::Tool {
                        id,
                        name,
                        // A non-empty start input (not what the API sends
                        // today) is the whole input.
                        json: match input {
                            Some(Value::Object(map)) if !map.is_empty() => {
                                Value::Object(map).to_string()
                            }
                            _ => String::new(),
                        },
                    },
                    Block::Other => Open::Other,
                };
                if self.blocks.insert(index, open).is_some() {
                    return Err(invalid(format!("content block {index} started twice")));
                }
            }
            Event::ContentBlockDelta { index, delta } => {
                let block = self.blocks.get_mut(&index).ok_or_else(|| {
                    invalid(format!(
                        "a delta for content block {index}, which never started"
                    ))
                })?;
                match (block, delta) {
                    (Open::Text, BlockDelta::TextDelta { text }) => {
                        if !text.is_empty() {
                            self.text.push_str(&text);
                            out.push(ModelEvent::TextDelta(text));
                        }
                    }
                    (Open::Tool { json, .. }, BlockDelta::InputJsonDelta { partial_json }) => {
                        json.push_str(&partial_json);
                    }
                    (Open::Other, _) | (_, BlockDelta::Other) => {}
                    (_, _) => {
                        return Err(invalid(format!(
                            "a delta of the wrong type for content block {index}"
                        )));
                    }
                }
            }
            Event::ContentBlockStop { index } => match self.blocks.remove(&index) {
                Some(Open::Tool { id, name, json }) => {
                    let input = if json.trim().is_empty() {
                        empty_object()
                    } else {
                        serde_json::from_str(&json).map_err(|e| {
                            invalid(format!("the input of tool call `{name}` is not JSON: {e}"))
                        })?
                    };
                    let call = ToolCall::new(id, name, input);
                    self.calls.push(call.clone());
                    out.push(ModelEvent::ToolCall(call));
                    // The index stays taken.
                    self.blocks.insert(index, Open::Other);
                }
                Some(_) => {
                    self.blocks.insert(index, Open::Other);
                }
                None => {
                    return Err(invalid(format!(
                        "content block {index} stopped but never started"
                    )));
                }
            },
            Event::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.and_then(|d| d.stop_reason) {
                    self.stop = Some(reason);
                }
                if let Some(usage) = usage {
                    self.usage.update(usage);
                }
            }
            Event::MessageStop => {
                if !self.started {
                    return Err(invalid("message_stop before message_start"));
                }
                let calls = std::mem::take(&mut self.calls);
                let mut response = ModelResponse::new(
                    Message::assistant_with_calls(std::mem::take(&mut self.text), calls),
                    self.usage.into(),
                );
                if let Some(reason) = self.stop.as_deref() {
                    response = response.with_stop(stop_reason(reason));
                }
                if let Some(model) = self.model.take() {
                    response = response.with_model(model);
                }
                if let Some(id) = self.id.take() {
                    response = response.with_id(id);
                }
                self.done = true;
                out.push(ModelEvent::Completed(response));
            }
            Event::Error { error } => return Err(event_error(&error)),
            Event::Ping | Event::Other => {}
        }
        Ok(())
    }

    fn end(&mut self, _out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        if self.done {
            return Ok(());
        }
        Err(ModelError::new(
            ModelErrorKind::Connection,
            "the stream ended before message_stop",
        ))
    }

    fn done(&self) -> bool {
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_whole_message_with_cache_usage() {
        let body = br#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"I'll load it."},{"type":"tool_use","id":"toolu_1","name":"load_skill","input":{"name":"pdf"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":100,"cache_read_input_tokens":2000,"output_tokens":40}}"#;
        let response = Messages::parse(body).expect("parses");
        assert_eq!(response.stop, StopReason::ToolUse);
        assert_eq!(response.usage, Usage::new(2112, 40, 2000, 100));
        assert_eq!(
            response.message.tool_calls,
            vec![ToolCall::new(
                "toolu_1",
                "load_skill",
                serde_json::json!({"name": "pdf"})
            )]
        );
        assert_eq!(response.message.content, "I'll load it.");
    }

    #[test]
    fn error_types_map_to_kinds() {
        let overloaded = ErrorDetail {
            message: Some("Overloaded".into()),
            kind: Some("overloaded_error".into()),
            code: None,
        };
        let error = event_error(&overloaded);
        assert_eq!(error.kind(), ModelErrorKind::Server);
        assert_eq!(error.status(), Some(529));
        assert_eq!(error.message(), "overloaded_error: Overloaded");
    }
}
