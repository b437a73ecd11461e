//! JSON Schemas of the tool arguments a model sends, matching the serde field
//! names of [`RunRequest`](crate::RunRequest), [`ExecRequest`](crate::ExecRequest)
//! and [`WriteStdinRequest`](crate::WriteStdinRequest), for a
//! `skill_run` / `skill_exec` tool built on an `Arc<dyn WorkspaceRuntime>`.

use serde_json::{Value, json};

fn input_spec() -> Value {
    json!({
        "type": "object",
        "properties": {
            "from": {"type": "string", "description": "artifact://name[@version], host:///abs/path, workspace://rel/path or skill://name/rel/path"},
            "to": {"type": "string", "description": "Destination relative to the workspace (default work/inputs/<name>)"},
            "mode": {"type": "string", "enum": ["copy", "link"]},
            "pin": {"type": "boolean", "description": "Keep the resolved artifact version for the session"}
        },
        "required": ["from"]
    })
}

fn env() -> Value {
    json!({"type": "object", "additionalProperties": {"type": "string"}, "description": "Extra environment variables"})
}

/// The arguments of `skill_run` ([`RunRequest`](crate::RunRequest)).
pub fn run_request() -> Value {
    json!({
        "type": "object",
        "properties": {
            "skill": {"type": "string", "description": "The skill to run in"},
            "command": {"type": "string", "description": "Shell command, run with bash -c in the skill's folder"},
            "cwd": {"type": "string", "description": "Working folder: relative to the skill, or starting with $WORKSPACE_DIR, $SKILLS_DIR, $WORK_DIR, $OUTPUT_DIR or $RUN_DIR"},
            "env": env(),
            "stdin": {"type": "string", "description": "Text for standard input (closed when absent)"},
            "editor_text": {"type": "string", "description": "Text an $EDITOR opened by the command writes"},
            "timeout": {"type": "integer", "minimum": 0, "description": "Seconds"},
            "output_files": {"type": "array", "items": {"type": "string"}, "description": "Globs of files to collect, relative to the workspace (out/*.txt, $OUTPUT_DIR/**)"},
            "outputs": {
                "type": "object",
                "properties": {
                    "globs": {"type": "array", "items": {"type": "string"}},
                    "inline": {"type": "boolean"},
                    "save": {"type": "boolean"},
                    "name_template": {"type": "string"},
                    "max_files": {"type": "integer", "minimum": 0},
                    "max_file_bytes": {"type": "integer", "minimum": 0},
                    "max_total_bytes": {"type": "integer", "minimum": 0}
                }
            },
            "inputs": {"type": "array", "items": input_spec()},
            "save_as_artifacts": {"type": "boolean", "description": "Persist collected files via the artifact service"},
            "omit_inline_content": {"type": "boolean", "description": "Leave file contents out (refs and sizes only)"},
            "artifact_prefix": {"type": "string", "description": "Prefix of saved artifact names"}
        },
        "required": ["skill", "command"]
    })
}

/// The arguments of `skill_exec` ([`ExecRequest`](crate::ExecRequest)).
pub fn exec_request() -> Value {
    json!({
        "type": "object",
        "properties": {
            "skill": {"type": "string"},
            "command": {"type": "string", "description": "Shell command, run with bash -c"},
            "cwd": {"type": "string"},
            "env": env(),
            "tty": {"type": "boolean", "description": "Run on a terminal (default true)"},
            "timeout": {"type": "integer", "minimum": 0, "description": "Seconds before the session is killed"},
            "yield_ms": {"type": "integer", "minimum": 0, "description": "How long to wait for first output"},
            "inputs": {"type": "array", "items": input_spec()}
        },
        "required": ["skill", "command"]
    })
}

/// The arguments of `skill_write_stdin`
/// ([`WriteStdinRequest`](crate::WriteStdinRequest)).
pub fn write_stdin_request() -> Value {
    json!({
        "type": "object",
        "properties": {
            "session_id": {"type": "string"},
            "chars": {"type": "string", "description": "Text to type"},
            "submit": {"type": "boolean", "description": "Press Enter after the text"},
            "yield_ms": {"type": "integer", "minimum": 0}
        },
        "required": ["session_id"]
    })
}

/// The arguments of `skill_poll_session`.
pub fn poll_request() -> Value {
    json!({
        "type": "object",
        "properties": {
            "session_id": {"type": "string"},
            "yield_ms": {"type": "integer", "minimum": 0}
        },
        "required": ["session_id"]
    })
}

/// The arguments of `skill_kill_session`.
pub fn kill_request() -> Value {
    json!({
        "type": "object",
        "properties": {"session_id": {"type": "string"}},
        "required": ["session_id"]
    })
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
        let exec = ExecRequest::new("s", "c")
            .cwd("x")
            .env("A", "b")
            .timeout_secs(1)
            .yield_ms(1);
        let mut exec_json = serde_json::to_value(&exec).unwrap();
        exec_json["inputs"] = serde_json::json!([]);
        assert_eq!(keys(&exec_json), keys(&exec_request()["properties"]));
        let w = serde_json::to_value(WriteStdinRequest::new("x", "y").yield_ms(1)).unwrap();
        assert_eq!(keys(&w), keys(&write_stdin_request()["properties"]));
    }
}
