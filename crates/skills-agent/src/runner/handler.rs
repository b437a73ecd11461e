//! User tools: the [`ToolHandler`] trait, a closure adapter, and the JSON
//! Schema check that runs before every handler.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::Value;
use skills_core::{MaybeSend, MaybeSync};

use crate::tool::{ToolError, ToolErrorKind, ToolSpec, clip, decoded_arguments};

/// Runs one user tool (a tool the agent declares with
/// [`AgentBuilder::tool`](crate::AgentBuilder::tool) or
/// [`AgentBuilder::pool_tool`](crate::AgentBuilder::pool_tool)).
///
/// The [`Runner`](crate::Runner) checks the arguments against the tool's
/// JSON Schema before calling it, so `arguments` always match the schema.
/// The `Ok` text is the tool result; an `Err` becomes an error result whose
/// message the model reads, so say what went wrong and what would work.
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
pub trait ToolHandler: MaybeSend + MaybeSync + fmt::Debug {
    /// Runs the tool.
    async fn call(&self, arguments: Value) -> Result<String, ToolError>;
}

/// A [`ToolHandler`] from an async closure; see [`tool_fn`].
pub struct FnTool<F> {
    f: F,
}

impl<F> fmt::Debug for FnTool<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FnTool")
    }
}

/// A [`ToolHandler`] from an async closure taking the arguments:
///
/// ```
/// use skills_agent::{ToolError, ToolErrorKind, tool_fn};
///
/// let weather = tool_fn(|args: serde_json::Value| async move {
///     let city = args["city"].as_str().unwrap_or_default();
///     if city.is_empty() {
///         return Err(ToolError::new(ToolErrorKind::Failed, "name a city"));
///     }
///     Ok(format!("Sunny in {city}."))
/// });
/// # let _ = weather;
/// ```
pub fn tool_fn<F, Fut>(f: F) -> Arc<FnTool<F>>
where
    F: Fn(Value) -> Fut + MaybeSend + MaybeSync,
    Fut: Future<Output = Result<String, ToolError>> + MaybeSend,
{
    Arc::new(FnTool { f })
}

#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
impl<F, Fut> ToolHandler for FnTool<F>
where
    F: Fn(Value) -> Fut + MaybeSend + MaybeSync,
    Fut: Future<Output = Result<String, ToolError>> + MaybeSend,
{
    async fn call(&self, arguments: Value) -> Result<String, ToolError> {
        (self.f)(arguments).await
    }
}

/// Most schema errors one result lists.
const MAX_SCHEMA_ERRORS: usize = 5;

/// Compiled argument schemas, by tool name, rebuilt when a tool's schema
/// changes.
#[derive(Default)]
pub(crate) struct Schemas {
    compiled: Mutex<HashMap<String, (Value, Compiled)>>,
}

/// A compiled schema, or why the schema does not compile.
type Compiled = Arc<Result<jsonschema::Validator, String>>;

impl fmt::Debug for Schemas {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Schemas")
    }
}

impl Schemas {
    fn validator(&self, spec: &ToolSpec) -> Compiled {
        let mut compiled = self.compiled.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((schema, validator)) = compiled.get(&spec.name)
            && *schema == spec.parameters
        {
            return Arc::clone(validator);
        }
        let validator = Arc::new(
            jsonschema::options()
                .build(&spec.parameters)
                .map_err(|err| err.to_string()),
        );
        compiled.insert(
            spec.name.clone(),
            (spec.parameters.clone(), Arc::clone(&validator)),
        );
        validator
    }

    /// Decodes `arguments` (`null` counts as `{}`, a JSON string holding an
    /// object is decoded) and checks it against `spec`'s schema.
    pub(crate) fn check(&self, spec: &ToolSpec, arguments: &Value) -> Result<Value, ToolError> {
        let value = decoded_arguments(arguments)
            .map_err(|err| {
                ToolError::new(
                    ToolErrorKind::InvalidArguments,
                    format!(
                        "the arguments of `{}` are not valid JSON ({}); send a JSON object",
                        spec.name,
                        clip(&err.to_string())
                    ),
                )
            })?
            .into_owned();
        let validator = self.validator(spec);
        let validator = match &*validator {
            Ok(v) => v,
            Err(err) => {
                return Err(ToolError::new(
                    ToolErrorKind::Failed,
                    format!(
                        "the tool `{}` has an invalid argument schema and cannot run ({err}); \
                         tell the user",
                        spec.name
                    ),
                ));
            }
        };
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .take(MAX_SCHEMA_ERRORS + 1)
            .map(|err| {
                let at = err.instance_path().to_string();
                let at = if at.is_empty() { "/".to_owned() } else { at };
                format!("at `{at}`: {}", clip(&err.to_string()))
            })
            .collect();
        if errors.is_empty() {
            return Ok(value);
        }
        let more = if errors.len() > MAX_SCHEMA_ERRORS {
            " (and more)"
        } else {
            ""
        };
        let shown = &errors[..errors.len().min(MAX_SCHEMA_ERRORS)];
        Err(ToolError::new(
            ToolErrorKind::InvalidArguments,
            format!(
                "the arguments of `{}` do not match its schema: {}{more}. Expected: {}",
                spec.name,
                shown.join("; "),
                clip(&spec.parameters.to_string())
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec() -> ToolSpec {
        ToolSpec::new(
            "get_weather",
            "Weather for a city.",
            json!({
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
                "required": ["city"],
                "additionalProperties": false
            }),
        )
    }

    #[test]
    fn schema_check_accepts_decodes_and_explains() {
        let schemas = Schemas::default();
        assert_eq!(
            schemas
                .check(&spec(), &json!({"city": "Oslo"}))
                .expect("ok"),
            json!({"city": "Oslo"})
        );
        assert_eq!(
            schemas
                .check(&spec(), &json!("{\"city\": \"Oslo\", \"days\": 2}"))
                .expect("decoded"),
            json!({"city": "Oslo", "days": 2})
        );
        let err = schemas
            .check(&spec(), &json!({"city": 5, "days": 0, "x": 1}))
            .expect_err("bad");
        assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
        let text = err.message();
        assert!(text.contains("at `/city`"), "{text}");
        assert!(text.contains("at `/days`"), "{text}");
        assert!(text.contains("Expected: {"), "{text}");
        let err = schemas
            .check(&spec(), &Value::Null)
            .expect_err("missing city");
        assert!(
            err.message().contains("\"city\" is a required property"),
            "{err}"
        );
        let err = schemas
            .check(&spec(), &json!("{not json"))
            .expect_err("bad json");
        assert!(err.message().contains("not valid JSON"), "{err}");
    }

    #[test]
    fn a_broken_schema_is_a_tool_error_not_a_panic() {
        let schemas = Schemas::default();
        let broken = ToolSpec::new("t", "d", json!({"type": 12}));
        let err = schemas.check(&broken, &json!({})).expect_err("broken");
        assert_eq!(err.kind(), ToolErrorKind::Failed);
    }
}
