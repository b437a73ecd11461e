//! Provider wire shapes for a [`ModelRequest`].
//!
//! These encoders produce the JSON body a provider's HTTP API takes. They are
//! pure (no HTTP here; adapters that send them come later behind a feature)
//! and byte-deterministic: field order is fixed by the structs below, and the
//! order follows the provider's cache order (tools, then system, then
//! messages), so a byte prefix of the body is a cache prefix.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use crate::message::{Message, Role};
use crate::request::{CacheBreakpoint, ModelRequest};

#[derive(Serialize)]
struct OpenAiRequest<'a> {
    model: &'a str,
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
    content: &'a str,
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
    arguments: String,
}

/// Encodes `request` as an OpenAI Chat Completions body.
///
/// System blocks become leading `system` messages; harness notices inside
/// the transcript stay `system` messages. OpenAI caches prefixes on its own,
/// so cache breakpoints are not encoded.
pub fn openai_chat(request: &ModelRequest, model: &str) -> String {
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
            content: &block.text,
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
            content: &message.content,
            tool_calls: message
                .tool_calls
                .iter()
                .map(|call| OpenAiToolCall {
                    id: &call.id,
                    kind: "function",
                    function: OpenAiCallFunction {
                        name: &call.name,
                        // OpenAI carries arguments as a JSON string; one the
                        // adapter kept as that string goes back unchanged.
                        arguments: match &call.arguments {
                            Value::String(raw) => raw.clone(),
                            other => other.to_string(),
                        },
                    },
                })
                .collect(),
            tool_call_id: message.tool_call_id.as_deref(),
        }
    }));
    to_json(&OpenAiRequest {
        model,
        tools,
        messages,
    })
}

#[derive(Serialize)]
struct AnthropicRequest<'a> {
    model: &'a str,
    max_tokens: u32,
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
        text: &'a str,
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
            | Self::ToolUse { cache_control, .. }
            | Self::ToolResult { cache_control, .. } => *cache_control = Some(EPHEMERAL),
        }
    }
}

/// The `max_tokens` [`anthropic_messages`] writes into Anthropic bodies (use
/// [`anthropic_messages_with_max_tokens`] for another limit).
pub const ANTHROPIC_MAX_TOKENS: u32 = 4096;

/// [`anthropic_messages`] with `max_tokens` (the most tokens the model may
/// generate) set by the caller: models differ, and long answers need more
/// than [`ANTHROPIC_MAX_TOKENS`].
pub fn anthropic_messages_with_max_tokens(
    request: &ModelRequest,
    model: &str,
    max_tokens: u32,
) -> String {
    encode_anthropic(request, model, max_tokens)
}

/// Encodes `request` as an Anthropic Messages body, with `cache_control`
/// markers where the request has breakpoints.
///
/// Tool results travel in user messages, consecutive messages with the same
/// role are merged (the API wants alternating roles), and harness notices
/// (`System` messages inside the transcript) are sent as user text.
pub fn anthropic_messages(request: &ModelRequest, model: &str) -> String {
    encode_anthropic(request, model, ANTHROPIC_MAX_TOKENS)
}

fn encode_anthropic(request: &ModelRequest, model: &str, max_tokens: u32) -> String {
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
            text: &b.text,
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
        max_tokens,
        tools,
        system,
        messages,
    })
}

fn anthropic_blocks(message: &Message) -> (&'static str, Vec<AnthropicBlock<'_>>) {
    let text = (!message.content.is_empty()).then(|| AnthropicBlock::Text {
        text: &message.content,
        cache_control: None,
    });
    match message.role {
        Role::System | Role::User => ("user", text.into_iter().collect()),
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
    use crate::message::ToolCall;

    fn request(messages: Vec<Message>) -> ModelRequest {
        ModelRequest {
            system: Vec::new(),
            tools: Vec::new(),
            messages,
            cache_breakpoints: Vec::new(),
        }
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
