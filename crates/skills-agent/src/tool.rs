//! Tool specifications and the errors a tool call can produce.
//!
//! Argument schemas come from `schemars`: every skill tool has an argument
//! struct deriving `JsonSchema`, so the schema the model sees and the parser
//! that checks its call can never disagree.

use std::borrow::Cow;
use std::fmt;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The longest tool argument string echoed back in an error message.
const ECHO_LIMIT: usize = 80;

/// A tool as the model sees it: name, description and a JSON Schema for the
/// arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool's name (`[A-Za-z0-9_-]{1,64}`).
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
}

impl ToolSpec {
    /// A tool spec with an explicit schema.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }

    /// A tool spec whose schema is derived from the argument type `A`.
    pub fn for_args<A: JsonSchema>(
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        Self::new(name, description, schema_for::<A>())
    }
}

/// The JSON Schema of `A`, without the `$schema` and `title` noise that
/// providers ignore (and that would cost tokens on every request), and
/// without the top-level description: that is the argument struct's rustdoc,
/// written for developers (it names other presets' tools), while the model
/// reads the tool's own description.
pub(crate) fn schema_for<A: JsonSchema>() -> Value {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<A>();
    let mut value = schema.to_value();
    if let Value::Object(map) = &mut value {
        map.remove("$schema");
        map.remove("title");
        map.remove("description");
        // `"default": null` on optional arguments says nothing a missing
        // `required` entry does not, and costs tokens on every request.
        if let Some(Value::Object(properties)) = map.get_mut("properties") {
            for property in properties.values_mut() {
                if let Value::Object(p) = property
                    && p.get("default") == Some(&Value::Null)
                {
                    p.remove("default");
                }
            }
        }
    }
    value
}

/// Whether `name` is a valid tool name for the common providers
/// (`^[A-Za-z0-9_-]{1,64}$`).
pub(crate) fn is_valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// What went wrong in a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolErrorKind {
    /// The arguments did not match the tool's schema.
    InvalidArguments,
    /// No skill has that name (or the model may not invoke it).
    UnknownSkill,
    /// The skill has no doc with that name.
    UnknownDoc,
    /// No tool has that name, or the tool is not exposed right now.
    UnknownTool,
    /// The operation needs the skill to be loaded first.
    NotLoaded,
    /// Reading a resource failed (missing, binary, too large, bad path).
    Resource,
    /// The skill provider failed.
    Provider,
    /// A tool ran and failed (a user tool's handler, a forked sub-agent).
    Failed,
    /// A tool policy or the user refused the call.
    Denied,
}

impl ToolErrorKind {
    /// A stable kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidArguments => "invalid-arguments",
            Self::UnknownSkill => "unknown-skill",
            Self::UnknownDoc => "unknown-doc",
            Self::UnknownTool => "unknown-tool",
            Self::NotLoaded => "not-loaded",
            Self::Resource => "resource",
            Self::Provider => "provider",
            Self::Failed => "failed",
            Self::Denied => "denied",
        }
    }
}

impl fmt::Display for ToolErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tool call that failed. Its message is written for the model: it says
/// what was wrong and what is available, so the model can correct itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    kind: ToolErrorKind,
    message: String,
}

impl ToolError {
    /// A tool error.
    pub fn new(kind: ToolErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> ToolErrorKind {
        self.kind
    }

    /// The message for the model.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

/// A tool call's arguments as a JSON value, the way every tool reads them.
///
/// A `null` or absent arguments value counts as `{}`; a JSON string holding
/// an object (some models double-encode) is decoded first, and the error is
/// why it is not valid JSON (each caller words the tool result). Anything
/// else is returned as it is, for the caller's shape check.
pub(crate) fn decoded_arguments(arguments: &Value) -> Result<Cow<'_, Value>, serde_json::Error> {
    match arguments {
        Value::Null => Ok(Cow::Owned(Value::Object(serde_json::Map::new()))),
        Value::String(text) if text.trim_start().starts_with('{') => {
            serde_json::from_str(text).map(Cow::Owned)
        }
        other => Ok(Cow::Borrowed(other)),
    }
}

/// Parses a tool call's arguments into `A` (decoded as
/// [`decoded_arguments`] does), turning every mismatch into an
/// [`ToolErrorKind::InvalidArguments`] error that repeats the expected shape.
pub(crate) fn parse_args<A: DeserializeOwned>(
    tool: &str,
    arguments: &Value,
    expected: &str,
) -> Result<A, ToolError> {
    let invalid = |why: String| {
        ToolError::new(
            ToolErrorKind::InvalidArguments,
            format!("invalid arguments for `{tool}`: {why}. Expected {expected}."),
        )
    };
    let value = decoded_arguments(arguments)
        .map_err(|err| invalid(format!("not valid JSON ({})", clip(&err.to_string()))))?;
    A::deserialize(&*value).map_err(|err| invalid(clip(&err.to_string())))
}

/// `text` cut to a short, single-line excerpt for error messages, so a huge
/// or multi-line argument never floods the transcript.
pub(crate) fn clip(text: &str) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let count = one_line.chars().count();
    if count <= ECHO_LIMIT {
        one_line
    } else {
        let head: String = one_line.chars().take(ECHO_LIMIT).collect();
        format!("{head}… ({count} characters)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Args {
        /// The name.
        name: String,
    }

    #[test]
    fn schema_has_no_noise() {
        let schema = schema_for::<Args>();
        assert!(schema.get("$schema").is_none());
        assert_eq!(schema["properties"]["name"]["type"], "string");
        assert_eq!(schema["required"][0], "name");
    }

    #[test]
    fn parse_args_reports_shape() {
        let err = parse_args::<Args>("t", &serde_json::json!({"name": 3}), "{\"name\": string}")
            .expect_err("wrong type");
        assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
        assert!(err.message().contains("Expected {\"name\": string}"));
        let ok: Args =
            parse_args("t", &Value::String("{\"name\":\"a\"}".into()), "").expect("double-encoded");
        assert_eq!(ok.name, "a");
    }

    #[test]
    fn clip_bounds_huge_input() {
        let huge = "x".repeat(100_000);
        assert!(clip(&huge).len() < 200);
        assert_eq!(clip("a\nb"), "a b");
    }

    #[test]
    fn tool_names() {
        assert!(is_valid_tool_name("load_skill"));
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name("a b"));
        assert!(!is_valid_tool_name(&"a".repeat(65)));
    }
}
