//! Provider wire shapes for a [`ModelRequest`].
//!
//! These encoders produce the JSON body a provider's HTTP API takes: OpenAI
//! Chat Completions ([`openai_chat`]), the OpenAI Responses API
//! ([`openai_responses`]) and Anthropic Messages ([`anthropic_messages`]).
//! They are pure (no I/O; the HTTP adapters behind the `openai` and
//! `anthropic` features send exactly these bytes) and byte-deterministic:
//! field order is fixed by the structs below, and the order follows the
//! provider's cache order (options, tools, then system, then messages), so a
//! byte prefix of the body is a cache prefix. Options (streaming, output
//! limits) come before everything that grows, so they never break it.
//!
//! A user message's attachments become the provider's own parts (text
//! inline under a header line, images and PDFs as base64 parts, anything
//! else or anything over [`MAX_INLINE_TEXT_BYTES`] / [`MAX_INLINE_BINARY_BYTES`]
//! as a one-line note); a message without attachments keeps its plain-string
//! content, byte for byte.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use skills_agent::{Attachment, Message, Role};
use skills_agent::{CacheBreakpoint, ModelRequest};

#[derive(Serialize)]
struct OpenAiRequest<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<OpenAiTool<'a>>,
    messages: Vec<OpenAiMessage<'a>>,
}

#[derive(Serialize)]
struct OpenAiTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: OpenAiFunction<'a>,
}

#[derive(Serialize)]
struct OpenAiFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

#[derive(Serialize)]
struct OpenAiMessage<'a> {
    role: &'static str,
    content: Content<'a, OpenAiPart<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<OpenAiToolCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
}

#[derive(Serialize)]
struct OpenAiToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: OpenAiCallFunction<'a>,
}

#[derive(Serialize)]
struct OpenAiCallFunction<'a> {
    name: &'a str,
    arguments: Cow<'a, str>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

/// Options of an OpenAI Chat Completions body. They are written after
/// `model` and before `tools` and `messages`, so a session that keeps its
/// options keeps its byte-stable prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ChatOptions {
    /// `max_tokens`: the legacy output limit many compatible servers still
    /// want (OpenAI's own reasoning models refuse it).
    pub max_tokens: Option<u32>,
    /// `max_completion_tokens`: OpenAI's current output limit.
    pub max_completion_tokens: Option<u32>,
    /// `stream: true` with `stream_options: {"include_usage": true}`, so the
    /// last chunk of the stream carries the usage.
    pub stream: bool,
}

impl ChatOptions {
    /// Sets `max_tokens`.
    #[must_use]
    pub fn max_tokens(mut self, max_tokens: Option<u32>) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Sets `max_completion_tokens`.
    #[must_use]
    pub fn max_completion_tokens(mut self, max_completion_tokens: Option<u32>) -> Self {
        self.max_completion_tokens = max_completion_tokens;
        self
    }

    /// Asks for a streamed answer (with usage in the last chunk).
    #[must_use]
    pub fn stream(mut self, stream: bool) -> Self {
        self.stream = stream;
        self
    }
}

/// Encodes `request` as an OpenAI Chat Completions body.
///
/// System blocks become leading `system` messages; harness notices inside
/// the transcript stay `system` messages. OpenAI caches prefixes on its own,
/// so cache breakpoints are not encoded.
pub fn openai_chat(request: &ModelRequest, model: &str) -> String {
    openai_chat_with(request, model, &ChatOptions::default())
}

/// [`openai_chat`] with options (streaming, output limits). With the default
/// options the body is byte for byte the one [`openai_chat`] writes.
pub fn openai_chat_with(request: &ModelRequest, model: &str, options: &ChatOptions) -> String {
    let tools = request
        .tools
        .iter()
        .map(|tool| OpenAiTool {
            kind: "function",
            function: OpenAiFunction {
                name: &tool.name,
                description: &tool.description,
                parameters: &tool.parameters,
            },
        })
        .collect();
    let mut messages: Vec<OpenAiMessage<'_>> = request
        .system
        .iter()
        .map(|block| OpenAiMessage {
            role: "system",
            content: Content::Text(&block.text),
            tool_calls: Vec::new(),
            tool_call_id: None,
        })
        .collect();
    messages.extend(request.messages.iter().map(|message| {
        OpenAiMessage {
            role: match message.role {
                Role::System => "system",
                Role::User => "user",
                Role::Assistant => "assistant",
                Role::Tool => "tool",
            },
            content: content(message, openai_part),
            tool_calls: message
                .tool_calls
                .iter()
                .map(|call| OpenAiToolCall {
                    id: &call.id,
                    kind: "function",
                    function: OpenAiCallFunction {
                        name: &call.name,
                        arguments: openai_arguments(&call.arguments),
                    },
                })
                .collect(),
            tool_call_id: message.tool_call_id.as_deref(),
        }
    }));
    to_json(&OpenAiRequest {
        model,
        max_tokens: options.max_tokens,
        max_completion_tokens: options.max_completion_tokens,
        stream: options.stream,
        stream_options: options.stream.then_some(StreamOptions {
            include_usage: true,
        }),
        tools,
        messages,
    })
}

/// OpenAI carries arguments as a JSON string; one an adapter kept as that
/// string goes back unchanged.
fn openai_arguments(arguments: &Value) -> Cow<'_, str> {
    match arguments {
        Value::String(raw) => Cow::Borrowed(raw),
        other => Cow::Owned(other.to_string()),
    }
}

#[derive(Serialize)]
struct AnthropicRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<AnthropicTool<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    system: Vec<AnthropicBlock<'a>>,
    messages: Vec<AnthropicMessage<'a>>,
}

#[derive(Serialize)]
struct AnthropicTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

#[derive(Serialize, Clone, Copy)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

const EPHEMERAL: CacheControl = CacheControl { kind: "ephemeral" };

#[derive(Serialize)]
struct AnthropicMessage<'a> {
    role: &'static str,
    content: Vec<AnthropicBlock<'a>>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum AnthropicBlock<'a> {
    Text {
        text: Cow<'a, str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Image {
        source: AnthropicSource,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Document {
        source: AnthropicSource,
        title: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Cow<'a, Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: &'a str,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

impl AnthropicBlock<'_> {
    fn mark(&mut self) {
        match self {
            Self::Text { cache_control, .. }
            | Self::Image { cache_control, .. }
            | Self::Document { cache_control, .. }
            | Self::ToolUse { cache_control, .. }
            | Self::ToolResult { cache_control, .. } => *cache_control = Some(EPHEMERAL),
        }
    }
}

/// The `max_tokens` [`anthropic_messages`] writes into Anthropic bodies (use
/// [`anthropic_messages_with_max_tokens`] for another limit).
pub const ANTHROPIC_MAX_TOKENS: u32 = 4096;

/// Options of an Anthropic Messages body. They are written after `model` and
/// before `tools`, `system` and `messages`, so a session that keeps its
/// options keeps its byte-stable prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct AnthropicOptions {
    /// `max_tokens`, the most tokens the model may generate (required by the
    /// API; [`ANTHROPIC_MAX_TOKENS`] by default).
    pub max_tokens: u32,
    /// `stream: true`: the answer comes as server-sent events.
    pub stream: bool,
}

impl Default for AnthropicOptions {
    fn default() -> Self {
        Self {
            max_tokens: ANTHROPIC_MAX_TOKENS,
            stream: false,
        }
    }
}

impl AnthropicOptions {
    /// Sets `max_tokens`.
    #[must_use]
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Asks for a streamed answer.
    #[must_use]
    pub fn stream(mut self, stream: bool) -> Self {
        self.stream = stream;
        self
    }
}

/// [`anthropic_messages`] with `max_tokens` (the most tokens the model may
/// generate) set by the caller: models differ, and long answers need more
/// than [`ANTHROPIC_MAX_TOKENS`].
pub fn anthropic_messages_with_max_tokens(
    request: &ModelRequest,
    model: &str,
    max_tokens: u32,
) -> String {
    anthropic_messages_with(
        request,
        model,
        &AnthropicOptions::default().max_tokens(max_tokens),
    )
}

/// Encodes `request` as an Anthropic Messages body, with `cache_control`
/// markers where the request has breakpoints.
///
/// Tool results travel in user messages, consecutive messages with the same
/// role are merged (the API wants alternating roles), and harness notices
/// (`System` messages inside the transcript) are sent as user text.
pub fn anthropic_messages(request: &ModelRequest, model: &str) -> String {
    anthropic_messages_with(request, model, &AnthropicOptions::default())
}

/// [`anthropic_messages`] with options (`max_tokens`, streaming). With the
/// default options the body is byte for byte the one [`anthropic_messages`]
/// writes.
pub fn anthropic_messages_with(
    request: &ModelRequest,
    model: &str,
    options: &AnthropicOptions,
) -> String {
    encode_anthropic(request, model, options)
}

fn encode_anthropic(request: &ModelRequest, model: &str, options: &AnthropicOptions) -> String {
    let breaks = &request.cache_breakpoints;
    let tool_count = request.tools.len();
    let tools = request
        .tools
        .iter()
        .enumerate()
        .map(|(i, tool)| AnthropicTool {
            name: &tool.name,
            description: &tool.description,
            input_schema: &tool.parameters,
            cache_control: (i + 1 == tool_count && breaks.contains(&CacheBreakpoint::Tools))
                .then_some(EPHEMERAL),
        })
        .collect();
    let system = request
        .system
        .iter()
        .enumerate()
        .map(|(block, b)| AnthropicBlock::Text {
            text: Cow::Borrowed(&b.text),
            cache_control: breaks
                .contains(&CacheBreakpoint::System { block })
                .then_some(EPHEMERAL),
        })
        .collect();
    let mut messages: Vec<AnthropicMessage<'_>> = Vec::new();
    for (index, message) in request.messages.iter().enumerate() {
        let (role, mut blocks) = anthropic_blocks(message);
        if blocks.is_empty() {
            // Nothing to send (an empty reply): the API refuses empty blocks.
            continue;
        }
        if breaks.contains(&CacheBreakpoint::Message { index })
            && let Some(last) = blocks.last_mut()
        {
            last.mark();
        }
        match messages.last_mut() {
            Some(previous) if previous.role == role => previous.content.extend(blocks),
            _ => messages.push(AnthropicMessage {
                role,
                content: blocks,
            }),
        }
    }
    to_json(&AnthropicRequest {
        model,
        max_tokens: options.max_tokens,
        stream: options.stream,
        tools,
        system,
        messages,
    })
}

fn anthropic_blocks(message: &Message) -> (&'static str, Vec<AnthropicBlock<'_>>) {
    let text = (!message.content.is_empty()).then(|| AnthropicBlock::Text {
        text: Cow::Borrowed(&message.content),
        cache_control: None,
    });
    match message.role {
        Role::System => ("user", text.into_iter().collect()),
        Role::User => {
            let mut blocks: Vec<AnthropicBlock<'_>> = text.into_iter().collect();
            blocks.extend(attachment_parts(message).map(anthropic_block));
            ("user", blocks)
        }
        Role::Assistant => {
            let mut blocks: Vec<AnthropicBlock<'_>> = text.into_iter().collect();
            blocks.extend(
                message
                    .tool_calls
                    .iter()
                    .map(|call| AnthropicBlock::ToolUse {
                        id: &call.id,
                        name: &call.name,
                        input: tool_input(&call.arguments),
                        cache_control: None,
                    }),
            );
            ("assistant", blocks)
        }
        Role::Tool => (
            "user",
            vec![AnthropicBlock::ToolResult {
                tool_use_id: message.tool_call_id.as_deref().unwrap_or_default(),
                content: &message.content,
                is_error: message.is_error,
                cache_control: None,
            }],
        ),
    }
}

#[derive(Serialize)]
struct ResponsesRequest<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
    store: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ResponsesTool<'a>>,
    input: Vec<ResponsesItem<'a>>,
}

#[derive(Serialize)]
struct ResponsesTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
    strict: bool,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ResponsesItem<'a> {
    Message {
        role: &'static str,
        content: Content<'a, ResponsesPart<'a>>,
    },
    FunctionCall {
        call_id: &'a str,
        name: &'a str,
        arguments: Cow<'a, str>,
    },
    FunctionCallOutput {
        call_id: &'a str,
        output: &'a str,
    },
}

/// Options of an OpenAI Responses body. They are written after `model` and
/// before `tools` and `input`, so a session that keeps its options keeps its
/// byte-stable prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ResponsesOptions {
    /// `max_output_tokens`, the most tokens the model may generate.
    pub max_output_tokens: Option<u32>,
    /// `stream: true`: the answer comes as server-sent events.
    pub stream: bool,
}

impl ResponsesOptions {
    /// Sets `max_output_tokens`.
    #[must_use]
    pub fn max_output_tokens(mut self, max_output_tokens: Option<u32>) -> Self {
        self.max_output_tokens = max_output_tokens;
        self
    }

    /// Asks for a streamed answer.
    #[must_use]
    pub fn stream(mut self, stream: bool) -> Self {
        self.stream = stream;
        self
    }
}

/// Encodes `request` as an OpenAI Responses API body (`POST /responses`).
///
/// The whole conversation travels in `input` (the engine owns the history,
/// so `store` is `false` and no `previous_response_id` is used): system
/// blocks become leading `system` messages, harness notices stay `system`
/// messages, an assistant's tool calls become `function_call` items after
/// its text and tool results `function_call_output` items. Tools are
/// `function` tools with `strict: false` (the engine's schemas are not
/// written for strict mode). OpenAI caches prefixes on its own, so cache
/// breakpoints are not encoded.
pub fn openai_responses(request: &ModelRequest, model: &str, options: &ResponsesOptions) -> String {
    let tools = request
        .tools
        .iter()
        .map(|tool| ResponsesTool {
            kind: "function",
            name: &tool.name,
            description: &tool.description,
            parameters: &tool.parameters,
            strict: false,
        })
        .collect();
    let mut input: Vec<ResponsesItem<'_>> = request
        .system
        .iter()
        .map(|block| ResponsesItem::Message {
            role: "system",
            content: Content::Text(&block.text),
        })
        .collect();
    for message in &request.messages {
        match message.role {
            Role::Tool => input.push(ResponsesItem::FunctionCallOutput {
                call_id: message.tool_call_id.as_deref().unwrap_or_default(),
                output: &message.content,
            }),
            Role::Assistant => {
                if !message.content.is_empty() || message.tool_calls.is_empty() {
                    input.push(ResponsesItem::Message {
                        role: "assistant",
                        content: Content::Text(&message.content),
                    });
                }
                input.extend(
                    message
                        .tool_calls
                        .iter()
                        .map(|call| ResponsesItem::FunctionCall {
                            call_id: &call.id,
                            name: &call.name,
                            arguments: openai_arguments(&call.arguments),
                        }),
                );
            }
            Role::System | Role::User => input.push(ResponsesItem::Message {
                role: if message.role == Role::System {
                    "system"
                } else {
                    "user"
                },
                content: content(message, responses_part),
            }),
        }
    }
    to_json(&ResponsesRequest {
        model,
        max_output_tokens: options.max_output_tokens,
        store: false,
        stream: options.stream,
        tools,
        input,
    })
}

/// A message's content on the OpenAI wires: the plain string, or (a user
/// message with attachments) a list of typed parts. A message without
/// attachments keeps the plain string, so its bytes never change.
#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a, P> {
    Text(&'a str),
    Parts(Vec<P>),
}

/// The most bytes of a text attachment sent inline; a larger one is a note.
pub const MAX_INLINE_TEXT_BYTES: usize = 256 * 1024;
/// The most bytes of an image or PDF attachment sent inline (Anthropic's
/// image limit); a larger one is a note.
pub const MAX_INLINE_BINARY_BYTES: usize = 5 * 1024 * 1024;

/// How one attachment travels to a model.
enum AttachmentPart<'a> {
    /// Text: the attachment's header line, then its text.
    Text(String),
    /// A PNG, JPEG, GIF or WebP image.
    Image(&'a Attachment),
    /// A PDF.
    Pdf(&'a Attachment),
    /// Anything the model cannot take inline: one line saying what it is and
    /// that skill commands find it in `work/inputs/`.
    Note(String),
}

/// The parts of a user message's attachments, in order.
fn attachment_parts(message: &Message) -> impl Iterator<Item = AttachmentPart<'_>> {
    let attachments: &[Attachment] = if message.role == Role::User {
        &message.attachments
    } else {
        &[]
    };
    attachments.iter().map(|a| {
        let size = a.bytes().len();
        match a.as_text() {
            Some(text) if size <= MAX_INLINE_TEXT_BYTES => {
                AttachmentPart::Text(format!("{}\n{text}", a.header()))
            }
            _ if a.is_image() && size <= MAX_INLINE_BINARY_BYTES => AttachmentPart::Image(a),
            _ if a.is_pdf() && size <= MAX_INLINE_BINARY_BYTES => AttachmentPart::Pdf(a),
            _ => AttachmentPart::Note(a.note()),
        }
    })
}

/// The content of `message` on an OpenAI wire: its text alone, or its text
/// and attachments as parts.
fn content<'a, P>(message: &'a Message, part: fn(AttachmentPart<'a>) -> P) -> Content<'a, P> {
    if message.role != Role::User || message.attachments.is_empty() {
        return Content::Text(&message.content);
    }
    let text =
        (!message.content.is_empty()).then(|| part(AttachmentPart::Text(message.content.clone())));
    Content::Parts(
        text.into_iter()
            .chain(attachment_parts(message).map(part))
            .collect(),
    )
}

fn data_url(attachment: &Attachment) -> String {
    format!(
        "data:{};base64,{}",
        attachment.mime_type(),
        attachment.base64()
    )
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum OpenAiPart<'a> {
    Text { text: String },
    ImageUrl { image_url: OpenAiImage },
    File { file: OpenAiFile<'a> },
}

#[derive(Serialize)]
struct OpenAiImage {
    url: String,
}

#[derive(Serialize)]
struct OpenAiFile<'a> {
    filename: &'a str,
    file_data: String,
}

fn openai_part(part: AttachmentPart<'_>) -> OpenAiPart<'_> {
    match part {
        AttachmentPart::Text(text) | AttachmentPart::Note(text) => OpenAiPart::Text { text },
        AttachmentPart::Image(a) => OpenAiPart::ImageUrl {
            image_url: OpenAiImage { url: data_url(a) },
        },
        AttachmentPart::Pdf(a) => OpenAiPart::File {
            file: OpenAiFile {
                filename: a.name(),
                file_data: data_url(a),
            },
        },
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[allow(clippy::enum_variant_names)] // the wire's own names: input_text, …
enum ResponsesPart<'a> {
    InputText {
        text: String,
    },
    InputImage {
        image_url: String,
    },
    InputFile {
        filename: &'a str,
        file_data: String,
    },
}

fn responses_part(part: AttachmentPart<'_>) -> ResponsesPart<'_> {
    match part {
        AttachmentPart::Text(text) | AttachmentPart::Note(text) => {
            ResponsesPart::InputText { text }
        }
        AttachmentPart::Image(a) => ResponsesPart::InputImage {
            image_url: data_url(a),
        },
        AttachmentPart::Pdf(a) => ResponsesPart::InputFile {
            filename: a.name(),
            file_data: data_url(a),
        },
    }
}

#[derive(Serialize)]
struct AnthropicSource {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: String,
    data: String,
}

fn anthropic_block(part: AttachmentPart<'_>) -> AnthropicBlock<'_> {
    let source = |a: &Attachment| AnthropicSource {
        kind: "base64",
        media_type: a.mime_type().to_owned(),
        data: a.base64(),
    };
    match part {
        AttachmentPart::Text(text) | AttachmentPart::Note(text) => AnthropicBlock::Text {
            text: Cow::Owned(text),
            cache_control: None,
        },
        AttachmentPart::Image(a) => AnthropicBlock::Image {
            source: source(a),
            cache_control: None,
        },
        AttachmentPart::Pdf(a) => AnthropicBlock::Document {
            source: source(a),
            title: a.name(),
            cache_control: None,
        },
    }
}

/// Anthropic wants `tool_use.input` to be an object: arguments kept as a JSON
/// string are decoded, and anything else that is not an object becomes `{}`.
fn tool_input(arguments: &Value) -> Cow<'_, Value> {
    match arguments {
        Value::Object(_) => Cow::Borrowed(arguments),
        Value::String(raw) => match serde_json::from_str::<Value>(raw) {
            Ok(decoded @ Value::Object(_)) => Cow::Owned(decoded),
            _ => Cow::Owned(Value::Object(serde_json::Map::new())),
        },
        _ => Cow::Owned(Value::Object(serde_json::Map::new())),
    }
}

fn to_json<T: Serialize>(value: &T) -> String {
    // Serializing these borrowed structs cannot fail: every map key is a
    // string and no `Serialize` impl here returns an error.
    serde_json::to_string(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use skills_agent::ToolCall;

    fn request(messages: Vec<Message>) -> ModelRequest {
        ModelRequest {
            system: Vec::new(),
            tools: Vec::new(),
            messages,
            cache_breakpoints: Vec::new(),
        }
    }

    fn with_attachments() -> ModelRequest {
        request(vec![
            Message::user("plain"),
            Message::user_with_attachments(
                "see these",
                [
                    Attachment::text("notes.md", "# Notes").with_mime_type("text/markdown"),
                    Attachment::new("dot.png", "image/png", vec![0x89, b'P', b'N', b'G']),
                    Attachment::new("a.pdf", "application/pdf", b"%PDF-1.7".to_vec()),
                    Attachment::new("blob.bin", "application/octet-stream", vec![0u8, 1, 2]),
                    Attachment::new(
                        "huge.txt",
                        "text/plain",
                        "x".repeat(MAX_INLINE_TEXT_BYTES + 1),
                    ),
                ],
            ),
        ])
    }

    const NOTE_BIN: &str = r#"[attached file \"blob.bin\" (application/octet-stream, 3 bytes); skill commands find it in work/inputs/]"#;

    #[test]
    fn openai_chat_sends_attachments_as_parts() {
        let body = openai_chat(&with_attachments(), "m");
        // A message without attachments keeps its plain string.
        assert!(
            body.contains(r#"{"role":"user","content":"plain"}"#),
            "{body}"
        );
        for part in [
            r#"{"type":"text","text":"see these"}"#,
            r#"{"type":"text","text":"[attached file \"notes.md\" (text/markdown, 7 bytes)]\n# Notes"}"#,
            r#"{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw=="}}"#,
            r#"{"type":"file","file":{"filename":"a.pdf","file_data":"data:application/pdf;base64,JVBERi0xLjc="}}"#,
            NOTE_BIN,
            r#"[attached file \"huge.txt\" (text/plain, 262145 bytes); skill commands find it in work/inputs/]"#,
        ] {
            assert!(body.contains(part), "{part}\n{body}");
        }
    }

    #[test]
    fn openai_responses_sends_attachments_as_input_parts() {
        let body = openai_responses(&with_attachments(), "m", &ResponsesOptions::default());
        assert!(
            body.contains(r#"{"type":"message","role":"user","content":"plain"}"#),
            "{body}"
        );
        for part in [
            r#"{"type":"input_text","text":"see these"}"#,
            r#"{"type":"input_image","image_url":"data:image/png;base64,iVBORw=="}"#,
            r#"{"type":"input_file","filename":"a.pdf","file_data":"data:application/pdf;base64,JVBERi0xLjc="}"#,
            NOTE_BIN,
        ] {
            assert!(body.contains(part), "{part}\n{body}");
        }
    }

    #[test]
    fn anthropic_sends_attachments_as_blocks() {
        let body = anthropic_messages(&with_attachments(), "m");
        for part in [
            r#"{"type":"text","text":"plain"},{"type":"text","text":"see these"}"#,
            r#"{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw=="}}"#,
            r#"{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0xLjc="},"title":"a.pdf"}"#,
            NOTE_BIN,
        ] {
            assert!(body.contains(part), "{part}\n{body}");
        }
        // Attachments only: no empty text block.
        let only = anthropic_messages(
            &request(vec![Message::user_with_attachments(
                "",
                [Attachment::text("a", "b")],
            )]),
            "m",
        );
        assert!(!only.contains(r#""text":"""#), "{only}");
    }

    #[test]
    fn anthropic_max_tokens_is_configurable() {
        let req = request(vec![Message::user("hi")]);
        let default: serde_json::Value =
            serde_json::from_str(&anthropic_messages(&req, "m")).expect("json");
        assert_eq!(default["max_tokens"], ANTHROPIC_MAX_TOKENS);
        let custom: serde_json::Value =
            serde_json::from_str(&anthropic_messages_with_max_tokens(&req, "m", 32_000))
                .expect("json");
        assert_eq!(custom["max_tokens"], 32_000);
        assert_eq!(custom["messages"], default["messages"]);
    }

    #[test]
    fn anthropic_never_sends_empty_text_blocks() {
        let body = anthropic_messages(
            &request(vec![
                Message::user("hi"),
                Message::assistant(""),
                Message::assistant_with_calls(
                    "",
                    vec![ToolCall::new("c1", "t", serde_json::json!({}))],
                ),
            ]),
            "m",
        );
        assert!(!body.contains(r#""text":"""#), "{body}");
        assert!(body.contains(r#""type":"tool_use""#));
    }

    #[test]
    fn anthropic_tool_input_is_always_an_object() {
        let calls = vec![
            ToolCall::new("a", "t", Value::Null),
            ToolCall::new("b", "t", Value::String(r#"{"x":1}"#.into())),
            ToolCall::new("c", "t", serde_json::json!([1, 2])),
        ];
        let body = anthropic_messages(
            &request(vec![
                Message::user("hi"),
                Message::assistant_with_calls("", calls),
            ]),
            "m",
        );
        let value: Value = serde_json::from_str(&body).expect("json");
        let blocks = value["messages"][1]["content"]
            .as_array()
            .expect("assistant blocks");
        let inputs: Vec<&Value> = blocks.iter().map(|b| &b["input"]).collect();
        assert_eq!(
            inputs,
            [
                &serde_json::json!({}),
                &serde_json::json!({"x": 1}),
                &serde_json::json!({})
            ]
        );
    }

    fn conversation() -> ModelRequest {
        let mut req = request(vec![
            Message::system("notice"),
            Message::user("hi"),
            Message::assistant_with_calls(
                "looking",
                vec![
                    ToolCall::new("c1", "t", Value::String(r#"{"a":1}"#.into())),
                    ToolCall::new("c2", "t", serde_json::json!({"b": 2})),
                ],
            ),
            Message::tool_result("c1", "t", "one"),
            Message::tool_error("c2", "t", "two"),
            Message::assistant("done"),
        ]);
        req.system.push(skills_agent::SystemBlock {
            text: "be brief".into(),
            stable: true,
        });
        req.tools.push(skills_agent::ToolSpec::new(
            "t",
            "a tool",
            serde_json::json!({"type": "object"}),
        ));
        req
    }

    #[test]
    fn default_options_write_the_plain_bodies() {
        let req = conversation();
        assert_eq!(
            openai_chat(&req, "m"),
            openai_chat_with(&req, "m", &ChatOptions::default())
        );
        assert_eq!(
            anthropic_messages(&req, "m"),
            anthropic_messages_with(&req, "m", &AnthropicOptions::default())
        );
    }

    #[test]
    fn options_come_before_everything_that_grows() {
        let req = conversation();
        let chat = openai_chat_with(
            &req,
            "m",
            &ChatOptions::default()
                .stream(true)
                .max_tokens(Some(10))
                .max_completion_tokens(Some(20)),
        );
        assert!(
            chat.starts_with(
                r#"{"model":"m","max_tokens":10,"max_completion_tokens":20,"stream":true,"stream_options":{"include_usage":true},"tools":["#
            ),
            "{chat}"
        );
        let anthropic = anthropic_messages_with(
            &req,
            "m",
            &AnthropicOptions::default().max_tokens(99).stream(true),
        );
        assert!(
            anthropic.starts_with(r#"{"model":"m","max_tokens":99,"stream":true,"tools":["#),
            "{anthropic}"
        );
        let responses = openai_responses(
            &req,
            "m",
            &ResponsesOptions::default()
                .stream(true)
                .max_output_tokens(Some(5)),
        );
        assert!(
            responses.starts_with(
                r#"{"model":"m","max_output_tokens":5,"store":false,"stream":true,"tools":["#
            ),
            "{responses}"
        );
    }

    #[test]
    fn responses_items_follow_the_transcript() {
        let body = openai_responses(&conversation(), "m", &ResponsesOptions::default());
        assert_eq!(
            body,
            concat!(
                r#"{"model":"m","store":false,"#,
                r#""tools":[{"type":"function","name":"t","description":"a tool","parameters":{"type":"object"},"strict":false}],"#,
                r#""input":[{"type":"message","role":"system","content":"be brief"},"#,
                r#"{"type":"message","role":"system","content":"notice"},"#,
                r#"{"type":"message","role":"user","content":"hi"},"#,
                r#"{"type":"message","role":"assistant","content":"looking"},"#,
                r#"{"type":"function_call","call_id":"c1","name":"t","arguments":"{\"a\":1}"},"#,
                r#"{"type":"function_call","call_id":"c2","name":"t","arguments":"{\"b\":2}"},"#,
                r#"{"type":"function_call_output","call_id":"c1","output":"one"},"#,
                r#"{"type":"function_call_output","call_id":"c2","output":"two"},"#,
                r#"{"type":"message","role":"assistant","content":"done"}]}"#
            )
        );
    }

    #[test]
    fn responses_body_extends_the_previous_one() {
        let mut req = conversation();
        let options = ResponsesOptions::default().stream(true);
        let first = openai_responses(&req, "m", &options);
        req.messages.push(Message::user("more"));
        let second = openai_responses(&req, "m", &options);
        let head = first.strip_suffix("]}").expect("ends with the input array");
        assert!(second.starts_with(head), "{first}\n{second}");
    }

    #[test]
    fn openai_keeps_raw_argument_strings() {
        let raw = r#"{"name":"a"}"#;
        let body = openai_chat(
            &request(vec![Message::assistant_with_calls(
                "",
                vec![
                    ToolCall::new("a", "t", Value::String(raw.into())),
                    ToolCall::new("b", "t", serde_json::json!({"name": "a"})),
                ],
            )]),
            "m",
        );
        let value: Value = serde_json::from_str(&body).expect("json");
        let calls = value["messages"][0]["tool_calls"]
            .as_array()
            .expect("calls");
        assert_eq!(calls[0]["function"]["arguments"], raw);
        assert_eq!(calls[1]["function"]["arguments"], raw);
    }
}
