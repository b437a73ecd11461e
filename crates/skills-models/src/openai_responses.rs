//! The OpenAI Responses API adapter (`POST {base}/responses`).

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde::Deserialize;

use super::route::{Api, Route};
use super::transport::{self, Endpoint, ErrorDetail, HttpOptions, Protocol, StreamDecoder};
use super::{PartialCall, invalid, json};
use crate::wire::{self, ResponsesOptions};
use skills_agent::ModelRequest;
use skills_agent::{Message, ToolCall};
use skills_agent::{
    Model, ModelError, ModelErrorKind, ModelEvent, ModelResponse, ModelStream, StopReason, Usage,
};

/// A model behind the OpenAI Responses API.
///
/// It posts [`wire::openai_responses`]'s bytes (the whole conversation as
/// `input` items, `store: false`) with `Authorization: Bearer <key>`.
/// Streaming reads the typed events (`response.output_text.delta`,
/// `response.output_item.added`, `response.function_call_arguments.delta`,
/// `response.output_item.done`, `response.completed`, `error`, …); usage
/// comes from the final response, with `input_tokens_details.cached_tokens`.
#[derive(Debug)]
pub struct OpenAiResponses {
    endpoint: Endpoint,
    model: String,
    options: ResponsesOptions,
}

impl OpenAiResponses {
    /// OpenAI's own endpoint, the default base URL.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.openai.com/v1";

    /// A model at `base_url` (`https://api.openai.com/v1` or a compatible
    /// server's `…/v1`), calling it `model`. Requests go to
    /// `{base_url}/responses`; a base URL that already ends in `/responses`
    /// is used as it is.
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
                format!("openai-responses:{model}"),
                Route::new(Api::OpenAiResponses, base_url.as_ref()),
                headers,
            ),
            model,
            options: ResponsesOptions::default(),
        }
    }

    /// A model configured from `OPENAI_API_KEY` (required) and
    /// `OPENAI_BASE_URL` (default [`OpenAiResponses::DEFAULT_BASE_URL`]).
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

    /// Sends `max_output_tokens`.
    #[must_use]
    pub fn with_max_output_tokens(mut self, max: u32) -> Self {
        self.options = self.options.max_output_tokens(Some(max));
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
        wire::openai_responses(request, &self.model, &self.options.stream(stream))
    }
}

#[async_trait]
impl Model for OpenAiResponses {
    fn name(&self) -> &str {
        &self.endpoint.name
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        transport::complete::<Responses>(&self.endpoint, self.body(request, false)).await
    }

    async fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> Result<ModelStream<'a>, ModelError> {
        Ok(transport::stream::<Responses>(
            &self.endpoint,
            self.body(request, true),
        ))
    }
}

/// The Responses API protocol.
pub(crate) struct Responses;

impl Protocol for Responses {
    type Decoder = ResponsesDecoder;

    fn parse(body: &[u8]) -> Result<ModelResponse, ModelError> {
        let response: ResponseObject = json("response", body)?;
        response.into_model_response()
    }
}

#[derive(Deserialize)]
struct ResponseObject {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    incomplete_details: Option<IncompleteDetails>,
    #[serde(default)]
    output: Vec<OutputItem>,
    #[serde(default)]
    usage: Option<ResponsesUsage>,
    #[serde(default)]
    error: Option<ErrorDetail>,
}

#[derive(Deserialize)]
struct IncompleteDetails {
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum OutputItem {
    Message {
        #[serde(default)]
        content: Vec<ContentPart>,
    },
    FunctionCall {
        #[serde(default)]
        call_id: String,
        #[serde(default)]
        name: String,
        #[serde(default)]
        arguments: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ContentPart {
    OutputText {
        #[serde(default)]
        text: String,
    },
    Refusal {
        #[serde(default)]
        refusal: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct ResponsesUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    input_tokens_details: Option<InputDetails>,
}

#[derive(Deserialize)]
struct InputDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

impl From<ResponsesUsage> for Usage {
    fn from(usage: ResponsesUsage) -> Self {
        let cached = usage
            .input_tokens_details
            .and_then(|d| d.cached_tokens)
            .unwrap_or(0);
        Usage::new(usage.input_tokens, usage.output_tokens, cached, 0)
    }
}

/// The text, refusal flag and calls of a response's output.
struct Output {
    text: String,
    refused: bool,
    calls: Vec<ToolCall>,
}

impl ResponseObject {
    fn output(&self) -> Output {
        let mut output = Output {
            text: String::new(),
            refused: false,
            calls: Vec::new(),
        };
        for item in &self.output {
            match item {
                OutputItem::Message { content } => {
                    for part in content {
                        match part {
                            ContentPart::OutputText { text } => output.text.push_str(text),
                            ContentPart::Refusal { refusal } => {
                                output.refused = true;
                                output.text.push_str(refusal);
                            }
                            ContentPart::Other => {}
                        }
                    }
                }
                OutputItem::FunctionCall {
                    call_id,
                    name,
                    arguments,
                } => output.calls.push(ToolCall::new(
                    call_id.clone(),
                    name.clone(),
                    serde_json::Value::String(arguments.clone()),
                )),
                OutputItem::Other => {}
            }
        }
        output
    }

    fn failure(&self) -> Option<ModelError> {
        if let Some(error) = &self.error {
            return Some(response_error(error));
        }
        (self.status.as_deref() == Some("failed"))
            .then(|| ModelError::new(ModelErrorKind::Server, "the response failed"))
    }

    fn stop(&self, has_calls: bool, refused: bool) -> StopReason {
        let incomplete = self
            .incomplete_details
            .as_ref()
            .and_then(|d| d.reason.as_deref());
        match (self.status.as_deref(), incomplete) {
            _ if refused => StopReason::Refusal,
            (Some("incomplete"), Some("max_output_tokens")) => StopReason::MaxTokens,
            (Some("incomplete"), Some("content_filter")) => StopReason::Refusal,
            (Some("incomplete"), Some(other)) => StopReason::Other(other.to_owned()),
            _ if has_calls => StopReason::ToolUse,
            (Some("completed") | None, _) => StopReason::EndTurn,
            (Some(other), _) => StopReason::Other(other.to_owned()),
        }
    }

    fn finish(self, output: Output) -> ModelResponse {
        let stop = self.stop(!output.calls.is_empty(), output.refused);
        let mut response = ModelResponse::new(
            Message::assistant_with_calls(output.text, output.calls),
            self.usage.map(Into::into).unwrap_or_default(),
        )
        .with_stop(stop);
        if let Some(model) = self.model {
            response = response.with_model(model);
        }
        if let Some(id) = self.id {
            response = response.with_id(id);
        }
        response
    }

    fn into_model_response(self) -> Result<ModelResponse, ModelError> {
        if let Some(error) = self.failure() {
            return Err(error);
        }
        let output = self.output();
        Ok(self.finish(output))
    }
}

fn response_error(error: &ErrorDetail) -> ModelError {
    let code = error
        .code
        .as_ref()
        .and_then(serde_json::Value::as_str)
        .or(error.kind.as_deref());
    let kind = match code {
        Some("rate_limit_exceeded") => ModelErrorKind::RateLimited,
        Some("server_error" | "vector_store_timeout") => ModelErrorKind::Server,
        _ => ModelErrorKind::Request,
    };
    ModelError::new(kind, error.describe())
}

/// One streamed event, by its `type`.
#[derive(Deserialize)]
#[serde(tag = "type")]
enum StreamEvent {
    #[serde(rename = "response.created", alias = "response.in_progress")]
    Started { response: ResponseObject },
    #[serde(
        rename = "response.output_text.delta",
        alias = "response.refusal.delta"
    )]
    TextDelta {
        #[serde(default)]
        delta: String,
    },
    #[serde(rename = "response.output_item.added")]
    ItemAdded { output_index: u64, item: OutputItem },
    #[serde(rename = "response.function_call_arguments.delta")]
    ArgumentsDelta {
        output_index: u64,
        #[serde(default)]
        delta: String,
    },
    #[serde(rename = "response.function_call_arguments.done")]
    ArgumentsDone {
        output_index: u64,
        #[serde(default)]
        arguments: Option<String>,
    },
    #[serde(rename = "response.output_item.done")]
    ItemDone { output_index: u64, item: OutputItem },
    #[serde(
        rename = "response.completed",
        alias = "response.incomplete",
        alias = "response.failed"
    )]
    Finished { response: ResponseObject },
    #[serde(rename = "error")]
    Error {
        #[serde(default)]
        code: Option<String>,
        #[serde(default)]
        message: Option<String>,
    },
    #[serde(other)]
    Other,
}

/// The state of one streamed response.
#[derive(Debug, Default)]
pub(crate) struct ResponsesDecoder {
    text: String,
    calls: BTreeMap<u64, PartialCall>,
    /// The calls yielded so far, in the order they were (the answer's
    /// order).
    emitted: Vec<ToolCall>,
    done: bool,
}

impl ResponsesDecoder {
    fn call(&mut self, index: u64) -> Result<&mut PartialCall, ModelError> {
        match self.calls.get_mut(&index) {
            Some(call) if call.emitted => Err(invalid(format!(
                "output item {index} changed after it was done"
            ))),
            Some(call) => Ok(call),
            None => Err(invalid(format!(
                "arguments for output item {index}, which is not a function call"
            ))),
        }
    }
}

impl StreamDecoder for ResponsesDecoder {
    fn event(
        &mut self,
        _event: Option<&str>,
        data: &str,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), ModelError> {
        if self.done {
            return Ok(());
        }
        match json::<StreamEvent>("response stream event", data.as_bytes())? {
            StreamEvent::Started { response } => {
                if let Some(error) = response.failure() {
                    return Err(error);
                }
            }
            StreamEvent::TextDelta { delta } => {
                if !delta.is_empty() {
                    self.text.push_str(&delta);
                    out.push(ModelEvent::TextDelta(delta));
                }
            }
            StreamEvent::ItemAdded { output_index, item } => {
                if let OutputItem::FunctionCall {
                    call_id,
                    name,
                    arguments,
                } = item
                {
                    self.calls.insert(
                        output_index,
                        PartialCall {
                            id: call_id,
                            name,
                            arguments,
                            emitted: false,
                        },
                    );
                }
            }
            StreamEvent::ArgumentsDelta {
                output_index,
                delta,
            } => self.call(output_index)?.arguments.push_str(&delta),
            StreamEvent::ArgumentsDone {
                output_index,
                arguments,
            } => {
                if let Some(arguments) = arguments {
                    self.call(output_index)?.arguments = arguments;
                }
            }
            StreamEvent::ItemDone { output_index, item } => {
                if let OutputItem::FunctionCall {
                    call_id,
                    name,
                    arguments,
                } = item
                {
                    let call = self.calls.entry(output_index).or_default();
                    if call.emitted {
                        return Err(invalid(format!(
                            "output item {output_index} was done twice"
                        )));
                    }
                    // The finished item is authoritative.
                    call.id = call_id;
                    call.name = name;
                    call.arguments = arguments;
                    call.emitted = true;
                    self.emitted.push(call.raw());
                    out.push(ModelEvent::ToolCall(call.raw()));
                }
            }
            StreamEvent::Finished { response } => {
                if let Some(error) = response.failure() {
                    return Err(error);
                }
                let mut output = response.output();
                // What was streamed is what the events said; the final
                // response fills in only what the stream left out.
                if self.calls.is_empty() {
                    out.extend(output.calls.iter().cloned().map(ModelEvent::ToolCall));
                } else {
                    for call in self.calls.values_mut().filter(|c| !c.emitted) {
                        call.emitted = true;
                        self.emitted.push(call.raw());
                        out.push(ModelEvent::ToolCall(call.raw()));
                    }
                    output.calls = std::mem::take(&mut self.emitted);
                }
                if self.text.is_empty() {
                    if !output.text.is_empty() {
                        out.push(ModelEvent::TextDelta(output.text.clone()));
                    }
                } else {
                    output.text = std::mem::take(&mut self.text);
                }
                self.done = true;
                out.push(ModelEvent::Completed(response.finish(output)));
            }
            StreamEvent::Error { code, message } => {
                return Err(response_error(&ErrorDetail {
                    message,
                    kind: None,
                    code: code.map(serde_json::Value::String),
                }));
            }
            StreamEvent::Other => {}
        }
        Ok(())
    }

    fn end(&mut self, _out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        if self.done {
            return Ok(());
        }
        Err(ModelError::new(
            ModelErrorKind::Connection,
            "the stream ended before response.completed",
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
    fn parses_a_whole_response() {
        let body = br#"{"id":"resp_1","object":"response","status":"completed","model":"gpt-4.1","output":[{"type":"reasoning","id":"rs_1","summary":[]},{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Let me look.","annotations":[]}]},{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read_skill_file","arguments":"{\"path\":\"a.md\"}","status":"completed"}],"usage":{"input_tokens":1500,"input_tokens_details":{"cached_tokens":1024},"output_tokens":20,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":1520}}"#;
        let response = Responses::parse(body).expect("parses");
        assert_eq!(response.message.content, "Let me look.");
        assert_eq!(response.stop, StopReason::ToolUse);
        assert_eq!(response.usage, Usage::new(1500, 20, 1024, 0));
        assert_eq!(response.message.tool_calls[0].id, "call_1");
        let incomplete = br#"{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}"#;
        assert_eq!(
            Responses::parse(incomplete).expect("parses").stop,
            StopReason::MaxTokens
        );
        let failed =
            br#"{"status":"failed","error":{"code":"server_error","message":"boom"},"output":[]}"#;
        let error = Responses::parse(failed).expect_err("failed");
        assert_eq!(error.kind(), ModelErrorKind::Server);
        assert_eq!(error.message(), "server_error: boom");
    }
}
