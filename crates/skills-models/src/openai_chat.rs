//! The OpenAI Chat Completions adapter (`POST {base}/chat/completions`), for
//! OpenAI and any compatible server.

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde::Deserialize;

use super::route::{Api, Route};
use super::transport::{self, Endpoint, HttpOptions, Protocol, StreamDecoder};
use super::{PartialCall, invalid, json};
use crate::wire::{self, ChatOptions};
use skills_agent::ModelRequest;
use skills_agent::{Message, ToolCall};
use skills_agent::{
    Model, ModelError, ModelErrorKind, ModelEvent, ModelResponse, ModelStream, StopReason, Usage,
};

/// A model behind an OpenAI Chat Completions endpoint: OpenAI itself or any
/// compatible server (vLLM, Ollama, LiteLLM, …).
///
/// It posts [`wire::openai_chat_with`]'s bytes with `Authorization: Bearer
/// <key>` (no header when the key is empty, for local servers). Streaming
/// asks for `stream_options.include_usage`, so the usage (with
/// `prompt_tokens_details.cached_tokens`) arrives in the last chunk; tool
/// calls are assembled from their deltas by `index`, and their arguments are
/// kept as the raw JSON string the model wrote.
#[derive(Debug)]
pub struct OpenAiChat {
    endpoint: Endpoint,
    model: String,
    options: ChatOptions,
}

impl OpenAiChat {
    /// OpenAI's own endpoint, the default base URL.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.openai.com/v1";

    /// A model at `base_url` (`https://api.openai.com/v1`, or a compatible
    /// server's `…/v1`), calling it `model`. Requests go to
    /// `{base_url}/chat/completions`; a base URL that already ends in
    /// `/chat/completions` is used as it is.
    pub fn new(
        base_url: impl AsRef<str>,
        api_key: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        let model = model.into();
        let key: String = api_key.into();
        let headers = if key.is_empty() {
            Vec::new()
        } else {
            vec![("authorization", format!("Bearer {key}"))]
        };
        Self {
            endpoint: Endpoint::new(
                format!("openai:{model}"),
                Route::new(Api::OpenAiChat, base_url.as_ref()),
                headers,
            ),
            model,
            options: ChatOptions::default(),
        }
    }

    /// A model configured from `OPENAI_API_KEY` (required) and
    /// `OPENAI_BASE_URL` (default [`OpenAiChat::DEFAULT_BASE_URL`]).
    ///
    /// # Errors
    ///
    /// [`ModelErrorKind::Config`] when `OPENAI_API_KEY` is not set.
    pub fn from_env(model: impl Into<String>) -> Result<Self, ModelError> {
        let (url, key, url_from_env) =
            super::from_env("OPENAI_API_KEY", "OPENAI_BASE_URL", Self::DEFAULT_BASE_URL)?;
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

    /// Sends `max_completion_tokens` (OpenAI's output limit).
    #[must_use]
    pub fn with_max_completion_tokens(mut self, max: u32) -> Self {
        self.options = self.options.max_completion_tokens(Some(max));
        self
    }

    /// Sends the legacy `max_tokens` (what many compatible servers read).
    #[must_use]
    pub fn with_max_tokens(mut self, max: u32) -> Self {
        self.options = self.options.max_tokens(Some(max));
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
        wire::openai_chat_with(request, &self.model, &self.options.stream(stream))
    }
}

#[async_trait]
impl Model for OpenAiChat {
    fn name(&self) -> &str {
        &self.endpoint.name
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        transport::complete::<Chat>(&self.endpoint, self.body(request, false)).await
    }

    async fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> Result<ModelStream<'a>, ModelError> {
        Ok(transport::stream::<Chat>(
            &self.endpoint,
            self.body(request, true),
        ))
    }
}

/// The Chat Completions protocol.
pub(crate) struct Chat;

impl Protocol for Chat {
    type Decoder = ChatDecoder;

    fn parse(body: &[u8]) -> Result<ModelResponse, ModelError> {
        let completion: Completion = json("chat completion", body)?;
        if let Some(error) = completion.error {
            return Err(stream_error(&error));
        }
        let choice = completion
            .choices
            .into_iter()
            .next()
            .ok_or_else(|| invalid("the chat completion has no choices"))?;
        let message = choice.message.unwrap_or_default();
        let mut text = message.content.unwrap_or_default();
        let refused = message.refusal.as_deref().is_some_and(|r| !r.is_empty());
        if let Some(refusal) = message.refusal {
            text.push_str(&refusal);
        }
        let calls: Vec<ToolCall> = message
            .tool_calls
            .into_iter()
            .map(|call| {
                let function = call.function.unwrap_or_default();
                ToolCall::new(
                    call.id.unwrap_or_default(),
                    function.name.unwrap_or_default(),
                    serde_json::Value::String(function.arguments.unwrap_or_default()),
                )
            })
            .collect();
        let has_calls = !calls.is_empty();
        let mut response = ModelResponse::new(
            Message::assistant_with_calls(text, calls),
            completion.usage.map(Into::into).unwrap_or_default(),
        )
        .with_stop(stop_reason(
            choice.finish_reason.as_deref(),
            has_calls,
            refused,
        ));
        if let Some(model) = completion.model {
            response = response.with_model(model);
        }
        if let Some(id) = completion.id {
            response = response.with_id(id);
        }
        Ok(response)
    }
}

/// Maps `finish_reason` (a `stop` that comes with tool calls, as some
/// compatible servers send, is a tool use).
fn stop_reason(reason: Option<&str>, has_calls: bool, refused: bool) -> StopReason {
    match reason {
        _ if refused => StopReason::Refusal,
        Some("tool_calls" | "function_call") => StopReason::ToolUse,
        Some("stop") | None if has_calls => StopReason::ToolUse,
        Some("stop") | None => StopReason::EndTurn,
        Some("length") => StopReason::MaxTokens,
        Some("content_filter") => StopReason::Refusal,
        Some(other) => StopReason::Other(other.to_owned()),
    }
}

fn stream_error(error: &super::transport::ErrorDetail) -> ModelError {
    let kind = match error
        .kind
        .as_deref()
        .or_else(|| error.code.as_ref().and_then(serde_json::Value::as_str))
    {
        Some("rate_limit_exceeded" | "rate_limit_error") => ModelErrorKind::RateLimited,
        Some("server_error" | "api_error" | "overloaded_error") => ModelErrorKind::Server,
        _ => ModelErrorKind::Request,
    };
    ModelError::new(kind, error.describe())
}

#[derive(Deserialize)]
struct Completion {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<ChatUsage>,
    #[serde(default)]
    error: Option<super::transport::ErrorDetail>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    message: Option<ChoiceMessage>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct ChoiceMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default, deserialize_with = "null_as_empty")]
    tool_calls: Vec<CallPart>,
}

#[derive(Deserialize)]
struct CallPart {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionPart>,
}

#[derive(Deserialize, Default)]
struct FunctionPart {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct ChatUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

impl From<ChatUsage> for Usage {
    fn from(usage: ChatUsage) -> Self {
        let cached = usage
            .prompt_tokens_details
            .and_then(|d| d.cached_tokens)
            .unwrap_or(0);
        Usage::new(usage.prompt_tokens, usage.completion_tokens, cached, 0)
    }
}

fn null_as_empty<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default())
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default, deserialize_with = "null_as_empty")]
    choices: Vec<ChunkChoice>,
    #[serde(default)]
    usage: Option<ChatUsage>,
    #[serde(default)]
    error: Option<super::transport::ErrorDetail>,
}

#[derive(Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    index: u64,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default, deserialize_with = "null_as_empty")]
    tool_calls: Vec<CallPart>,
}

/// The state of one streamed chat completion.
#[derive(Debug, Default)]
pub(crate) struct ChatDecoder {
    id: Option<String>,
    model: Option<String>,
    text: String,
    refused: bool,
    calls: BTreeMap<u64, PartialCall>,
    /// The calls yielded so far, in the order they were (the answer's
    /// order).
    emitted: Vec<ToolCall>,
    finish: Option<String>,
    usage: Usage,
    done: bool,
}

impl ChatDecoder {
    /// Yields the assembled tool calls not yielded yet, in index order.
    fn flush_calls(&mut self, out: &mut Vec<ModelEvent>) {
        for call in self.calls.values_mut().filter(|c| !c.emitted) {
            call.emitted = true;
            self.emitted.push(call.raw());
            out.push(ModelEvent::ToolCall(call.raw()));
        }
    }

    fn complete(&mut self, out: &mut Vec<ModelEvent>) {
        self.flush_calls(out);
        let calls = std::mem::take(&mut self.emitted);
        let has_calls = !calls.is_empty();
        let mut response = ModelResponse::new(
            Message::assistant_with_calls(std::mem::take(&mut self.text), calls),
            self.usage,
        )
        .with_stop(stop_reason(self.finish.as_deref(), has_calls, self.refused));
        if let Some(model) = self.model.take() {
            response = response.with_model(model);
        }
        if let Some(id) = self.id.take() {
            response = response.with_id(id);
        }
        self.done = true;
        out.push(ModelEvent::Completed(response));
    }
}

impl StreamDecoder for ChatDecoder {
    fn event(
        &mut self,
        _event: Option<&str>,
        data: &str,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), ModelError> {
        if self.done {
            return Ok(());
        }
        if data.trim() == "[DONE]" {
            self.complete(out);
            return Ok(());
        }
        let chunk: Chunk = json("chat completion chunk", data.as_bytes())?;
        if let Some(error) = chunk.error {
            return Err(stream_error(&error));
        }
        if self.id.is_none() {
            self.id = chunk.id;
        }
        if self.model.is_none() {
            self.model = chunk.model;
        }
        if let Some(usage) = chunk.usage {
            self.usage = usage.into();
        }
        // One answer is asked for: other choices (n > 1) are ignored.
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            if let Some(delta) = choice.delta {
                for piece in [
                    delta.content,
                    delta.refusal.inspect(|r| {
                        self.refused |= !r.is_empty();
                    }),
                ]
                .into_iter()
                .flatten()
                .filter(|t| !t.is_empty())
                {
                    self.text.push_str(&piece);
                    out.push(ModelEvent::TextDelta(piece));
                }
                for part in delta.tool_calls {
                    let index = part
                        .index
                        .ok_or_else(|| invalid("a streamed tool call delta has no index"))?;
                    let call = self.calls.entry(index).or_default();
                    if call.emitted {
                        return Err(invalid(format!(
                            "tool call {index} changed after the answer finished"
                        )));
                    }
                    if let Some(id) = part.id.filter(|id| !id.is_empty()) {
                        call.id = id;
                    }
                    if let Some(function) = part.function {
                        if let Some(name) = function.name.filter(|n| !n.is_empty()) {
                            call.name = name;
                        }
                        if let Some(arguments) = function.arguments {
                            call.arguments.push_str(&arguments);
                        }
                    }
                }
            }
            if let Some(reason) = choice.finish_reason {
                self.finish = Some(reason);
                self.flush_calls(out);
            }
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        if self.done {
            return Ok(());
        }
        // Some compatible servers close the stream without `[DONE]`: an
        // answer that finished is whole.
        if self.finish.is_some() {
            self.complete(out);
            return Ok(());
        }
        Err(ModelError::new(
            ModelErrorKind::Connection,
            "the stream ended before the answer finished (no finish_reason, no [DONE])",
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
    fn finish_reasons_map() {
        assert_eq!(stop_reason(Some("stop"), false, false), StopReason::EndTurn);
        assert_eq!(stop_reason(Some("stop"), true, false), StopReason::ToolUse);
        assert_eq!(
            stop_reason(Some("length"), false, false),
            StopReason::MaxTokens
        );
        assert_eq!(
            stop_reason(Some("content_filter"), false, false),
            StopReason::Refusal
        );
        assert_eq!(stop_reason(Some("stop"), false, true), StopReason::Refusal);
        assert_eq!(
            stop_reason(Some("weird"), false, false),
            StopReason::Other("weird".into())
        );
    }

    #[test]
    fn parses_a_whole_completion_with_cached_tokens() {
        let body = br#"{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4.1","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"load_skill","arguments":"{\"name\":\"pdf\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,"prompt_tokens_details":{"cached_tokens":1920}}}"#;
        let response = Chat::parse(body).expect("parses");
        assert_eq!(response.stop, StopReason::ToolUse);
        assert_eq!(response.usage, Usage::new(2006, 300, 1920, 0));
        assert_eq!(
            response.message.tool_calls,
            vec![ToolCall::new(
                "call_1",
                "load_skill",
                serde_json::Value::String(r#"{"name":"pdf"}"#.into())
            )]
        );
        assert_eq!(response.id.as_deref(), Some("chatcmpl-1"));
        let error = Chat::parse(br#"{"choices":[]}"#).expect_err("no choice");
        assert_eq!(error.kind(), ModelErrorKind::InvalidResponse);
    }
}
