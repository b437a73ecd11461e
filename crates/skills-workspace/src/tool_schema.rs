//! JSON Schemas of the tool arguments a model sends, derived with schemars
//! from [`RunRequest`], [`ExecRequest`], [`WriteStdinRequest`],
//! [`PollRequest`] and [`KillRequest`]
//! (so a field added to a request is in its schema), for a `skill_run` /
//! `skill_exec` tool built on an `Arc<dyn WorkspaceRuntime>`.
//!
//! The derived schema is tidied for the model, which pays for every byte on
//! every request: nested types are inlined (no `$defs`), optional fields are
//! plain types (a missing `required` entry already says "optional"), and
//! `format`, `default`, `title` and `$schema` are left out. The field
//! descriptions are the `#[schemars(description)]` texts on the request
//! types, written for the model; their rustdoc is for developers.

use schemars::JsonSchema;
use serde_json::{Map, Value};

use crate::requests::{ExecRequest, KillRequest, PollRequest, RunRequest, WriteStdinRequest};

/// The arguments of `skill_run` ([`RunRequest`]).
pub fn run_request() -> Value {
    schema_for::<RunRequest>()
}

/// The arguments of `skill_exec` ([`ExecRequest`]).
pub fn exec_request() -> Value {
    schema_for::<ExecRequest>()
}

/// The arguments of `skill_write_stdin` ([`WriteStdinRequest`]).
pub fn write_stdin_request() -> Value {
    schema_for::<WriteStdinRequest>()
}

/// The arguments of `skill_poll_session` ([`PollRequest`]).
pub fn poll_request() -> Value {
    schema_for::<PollRequest>()
}

/// The arguments of `skill_kill_session` ([`KillRequest`]).
pub fn kill_request() -> Value {
    schema_for::<KillRequest>()
}

/// The tidied schema of `T` (see the module docs).
fn schema_for<T: JsonSchema>() -> Value {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    let mut value = settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    if let Value::Object(map) = &mut value {
        map.remove("$schema");
        map.remove("title");
        map.remove("description");
        tidy(map);
    }
    value
}

/// Removes what the model does not need from one schema object and its
/// subschemas.
fn tidy(map: &mut Map<String, Value>) {
    map.remove("format");
    map.remove("default");
    // `["integer", "null"]` (an `Option`) becomes `"integer"`.
    if let Some(Value::Array(types)) = map.get("type") {
        let kept: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
        if let [only] = kept.as_slice() {
            let only = (*only).clone();
            map.insert("type".to_owned(), only);
        }
    }
    // An optional enum comes as `anyOf: [{the enum}, {"type": "null"}]`.
    if let Some(Value::Array(any_of)) = map.get("anyOf") {
        let kept: Vec<&Value> = any_of
            .iter()
            .filter(|s| s.get("type") != Some(&Value::from("null")))
            .collect();
        if let [Value::Object(only)] = kept.as_slice() {
            let only = only.clone();
            map.remove("anyOf");
            map.extend(only);
        }
    }
    for key in ["properties", "items", "additionalProperties"] {
        match map.get_mut(key) {
            Some(Value::Object(inner)) if key == "properties" => {
                for property in inner.values_mut() {
                    if let Value::Object(p) = property {
                        tidy(p);
                    }
                }
            }
            Some(Value::Object(inner)) => tidy(inner),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::{ExecRequest, InputSpec, OutputSpec, RunRequest, WriteStdinRequest};

    fn keys(v: &serde_json::Value) -> Vec<String> {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    }

    #[test]
    fn schemas_match_the_serde_names() {
        let run = RunRequest::new("s", "c")
            .cwd("x")
            .env("A", "b")
            .stdin("i")
            .editor_text("e")
            .timeout_secs(1)
            .output_file("out/*")
            .outputs(
                OutputSpec::new(["out/*"])
                    .save(true)
                    .name_template("t")
                    .max_files(1)
                    .max_file_bytes(1)
                    .max_total_bytes(1),
            )
            .input(InputSpec::new("workspace://a").to("b").pin(true))
            .save_as_artifacts(true)
            .omit_inline_content(true)
            .artifact_prefix("p");
        let json = serde_json::to_value(&run).unwrap();
        let schema = run_request();
        assert_eq!(keys(&json), keys(&schema["properties"]));
        assert_eq!(
            keys(&json["outputs"]),
            keys(&schema["properties"]["outputs"]["properties"])
        );
        assert_eq!(
            keys(&json["inputs"][0]),
            keys(&schema["properties"]["inputs"]["items"]["properties"])
        );
        let mut exec = ExecRequest::new("s", "c")
            .cwd("x")
            .env("A", "b")
            .timeout_secs(1)
            .yield_ms(1);
        // The run fields, the same in both.
        exec.io = run.io.clone();
        let mut exec_json = serde_json::to_value(&exec).unwrap();
        exec_json["inputs"] = serde_json::json!([]);
        assert_eq!(keys(&exec_json), keys(&exec_request()["properties"]));
        let w = serde_json::to_value(WriteStdinRequest::new("x", "y").yield_ms(1)).unwrap();
        assert_eq!(keys(&w), keys(&write_stdin_request()["properties"]));
    }
}
