//! The message model (F-AGT-1).
//!
//! A [`Message`] is the richer sibling of [`skills_core::Message`]: the same
//! role, text and sorted metadata (so the same injection tags and
//! [`skills_core::collect_loaded_skill_names`] work on it), plus what a tool
//! loop needs: the tool calls an assistant made and, on a tool result, the id
//! and name of the call it answers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use skills_core::{SkillInjection, TaggedMessage};

use crate::attachment::Attachment;

pub use skills_core::Role;

/// Metadata key naming the doc selection a tool result recorded
/// (`{"skill": name, "docs": "*" | [paths]}`).
pub(crate) const DOCS_KEY: &str = "skills.docs";
/// Metadata key naming the tool selection a tool result recorded
/// (`{"skill": name, "tools": [names]}`).
pub(crate) const TOOLS_KEY: &str = "skills.tools";
/// Metadata key naming the skill a message used (moves it up in the
/// most-recently-used order that the loaded-skill cap follows).
pub(crate) const TOUCH_KEY: &str = "skills.touch";
/// Metadata key marking a catalog delta announcement (F-DIS-3).
pub(crate) const CATALOG_DELTA_KEY: &str = "skills.catalog_delta";
/// Metadata key marking a compaction boundary (F-DIS-13). The request view
/// starts at the last message that carries it.
pub(crate) const COMPACTION_KEY: &str = "skills.compaction";
/// Metadata key on a run tool's result: how many of the conversation's
/// attachments (counted in transcript order) are staged in the workspace.
pub(crate) const STAGED_KEY: &str = "skills.staged_attachments";
/// Metadata key marking a skill injected because the user mentioned it
/// (`$name`, F-DIS-14).
pub(crate) const MENTION_KEY: &str = "skills.mention";
/// Metadata marking the assistant message that carries the app's declared
/// loads: it is not an answer of the model.
pub(crate) const PRELOAD_KEY: &str = "skills.preload";

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call; the result answers it.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, as the model sent them (not yet checked).
    pub arguments: Value,
}

impl ToolCall {
    /// A tool call.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
        }
    }
}

/// One message of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it. A `System` message inside a transcript is a notice from
    /// the harness (a catalog delta, a compaction summary); wire encoders that
    /// allow no system role mid-conversation send it as user text.
    pub role: Role,
    /// Its text.
    pub content: String,
    /// Tool calls (assistant messages only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The call this message answers (tool results only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The tool that produced this result (tool results only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// Whether this tool result reports an error.
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_error: bool,
    /// Metadata, sorted by key. Never sent to the model.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, Value>,
    /// Files attached to the message (user messages only; F-EXE-5): the
    /// model sees them, and the run tools stage them into `work/inputs/`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
}

fn is_false(value: &bool) -> bool {
    !*value
}

impl Message {
    fn plain(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
            is_error: false,
            metadata: BTreeMap::new(),
            attachments: Vec::new(),
        }
    }

    /// A system message (inside a transcript: a harness notice).
    pub fn system(content: impl Into<String>) -> Self {
        Self::plain(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::plain(Role::User, content)
    }

    /// A user message with files attached.
    pub fn user_with_attachments(
        content: impl Into<String>,
        attachments: impl IntoIterator<Item = Attachment>,
    ) -> Self {
        let mut message = Self::plain(Role::User, content);
        message.attachments = attachments.into_iter().collect();
        message
    }

    /// An assistant message without tool calls.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::plain(Role::Assistant, content)
    }

    /// An assistant message that calls tools.
    pub fn assistant_with_calls(content: impl Into<String>, calls: Vec<ToolCall>) -> Self {
        let mut message = Self::plain(Role::Assistant, content);
        message.tool_calls = calls;
        message
    }

    /// A successful tool result.
    pub fn tool_result(
        call_id: impl Into<String>,
        tool: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        let mut message = Self::plain(Role::Tool, content);
        message.tool_call_id = Some(call_id.into());
        message.tool_name = Some(tool.into());
        message
    }

    /// A tool result that reports an error.
    pub fn tool_error(
        call_id: impl Into<String>,
        tool: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        let mut message = Self::tool_result(call_id, tool, content);
        message.is_error = true;
        message
    }

    /// Sets a metadata value.
    #[must_use]
    pub fn with_metadata(mut self, key: impl Into<String>, value: Value) -> Self {
        self.metadata.insert(key.into(), value);
        self
    }

    /// Adds an injection tag (after any the message already carries).
    #[must_use]
    pub fn tagged(mut self, injection: &SkillInjection) -> Self {
        skills_core::add_injection(&mut self.metadata, injection);
        self
    }

    /// Adds an injection tag in place.
    pub fn tag(&mut self, injection: &SkillInjection) {
        skills_core::add_injection(&mut self.metadata, injection);
    }

    /// Whether this message carries the metadata key.
    pub fn has_metadata(&self, key: &str) -> bool {
        self.metadata.contains_key(key)
    }
}

impl TaggedMessage for Message {
    fn metadata_value(&self, key: &str) -> Option<&Value> {
        self.metadata.get(key)
    }
}

impl From<skills_core::Message> for Message {
    fn from(message: skills_core::Message) -> Self {
        let mut out = Self::plain(message.role, message.content);
        out.metadata = message.metadata;
        out
    }
}

impl From<Message> for skills_core::Message {
    fn from(message: Message) -> Self {
        let mut out = skills_core::Message::new(message.role, message.content);
        out.metadata = message.metadata;
        out
    }
}

/// What a run starts with: a user message, from its text (`&str`,
/// `String`) or a whole [`Message`] (attachments included; see
/// [`Message::user_with_attachments`]). [`Runner::run`](crate::Runner::run)
/// and its siblings take `impl Into<UserInput>`.
#[derive(Debug, Clone, PartialEq)]
pub struct UserInput(pub(crate) Message);

impl From<Message> for UserInput {
    fn from(message: Message) -> Self {
        Self(message)
    }
}

impl From<String> for UserInput {
    fn from(text: String) -> Self {
        Self(Message::user(text))
    }
}

impl From<&str> for UserInput {
    fn from(text: &str) -> Self {
        Self(Message::user(text))
    }
}

impl From<&String> for UserInput {
    fn from(text: &String) -> Self {
        Self(Message::user(text.as_str()))
    }
}
