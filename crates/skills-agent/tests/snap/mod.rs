//! Shared fixtures: four small in-code skills, a provider whose skill set can
//! be swapped, and helpers that run one tool call and format what came back.

use std::sync::Arc;

use serde_json::{Value, json};
use skills_agent::{Agent, AgentBuilder, Dispatch, Message, Session, ToolCall, ToolSpec};
use skills_core::{Extensions, InCodeProvider, InCodeSkill, define_skill};

/// Asserts that the insta binary snapshot `<name>` (`tests/snapshots/<name>.snap`
/// and `<name>.snap.txt`) holds exactly the value, byte for byte (trailing
/// newlines included); review changes with `cargo insta review`.
macro_rules! snap {
    ($name:expr, $value:expr) => {{
        let value: String = $value;
        $crate::snap::assert_snapshot($name, &value);
    }};
}

mod default_surface;
mod eino_surface;
mod requests;
mod tool_specs;
mod trpc_surface;

/// Where the snapshot files live.
fn snapshot_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots")
}

/// Compares `value` with the binary snapshot `<name>` (its bytes are in
/// `tests/snapshots/<name>.snap.txt`), byte for byte.
pub(crate) fn assert_snapshot(name: impl AsRef<str>, value: &str) {
    assert_snapshot_in(&snapshot_dir(), name.as_ref(), value.as_bytes());
}

/// [`assert_snapshot`] against the snapshots in `dir`.
fn assert_snapshot_in(dir: &std::path::Path, name: &str, value: &[u8]) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(dir);
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_binary_snapshot!(&format!("{name}.txt"), value.to_vec()));
}

/// Whether insta accepts `value` as the stored snapshot `<name>`, checked on
/// a scratch copy of its two files (so a `.snap.new`, or a rewrite under
/// `INSTA_UPDATE=always`, never lands in `tests/snapshots`): the assertion
/// passed and the stored bytes were left as they were.
fn insta_accepts(name: &str, value: &[u8]) -> bool {
    let scratch = tempfile::tempdir().expect("scratch dir");
    for file in [format!("{name}.snap"), format!("{name}.snap.txt")] {
        std::fs::copy(snapshot_dir().join(&file), scratch.path().join(&file))
            .unwrap_or_else(|e| panic!("cannot copy snapshot {file}: {e}"));
    }
    let passed = std::panic::catch_unwind(|| assert_snapshot_in(scratch.path(), name, value));
    let stored =
        std::fs::read(snapshot_dir().join(format!("{name}.snap.txt"))).expect("snapshot exists");
    let after =
        std::fs::read(scratch.path().join(format!("{name}.snap.txt"))).expect("scratch copy");
    passed.is_ok() && after == stored
}

pub(crate) const INSTRUCTIONS: &str = "You are a careful assistant for a small office.";

/// A skill with docs (`references/guide.md`, `references/faq.txt`) and a script.
pub(crate) fn pdf_tools() -> InCodeSkill {
    define_skill(
        "pdf-tools",
        "Extracts text and tables from PDF files. Use when the user asks to read, search or convert a PDF.",
    )
    .body(
        "# PDF tools\n\n\
         1. Find the PDF the user means; ask when there are several.\n\
         2. Extract the text page by page and keep the page numbers.\n\
         3. Before extracting tables, read `references/guide.md`.\n\n\
         Run `scripts/run.sh <file>` only when the user asks for a conversion.\n",
    )
    .resource(
        "references/guide.md",
        "# Table extraction\n\
         Keep the header row of every table.\n\
         Merge cells that continue on the next page.\n\
         Leave empty cells empty.\n\
         Never guess a missing number.\n",
    )
    .resource(
        "references/faq.txt",
        "Q: Can scanned PDFs be read?\nA: Only after OCR.\n",
    )
    .resource("scripts/run.sh", "#!/bin/sh\npdftotext -layout \"$1\" -\n")
    .build()
    .expect("pdf-tools is valid")
}

/// A skill whose `Tools:` section declares two pool tools and one the agents
/// here do not have.
pub(crate) fn weather(description: &str) -> InCodeSkill {
    define_skill("weather", description)
        .body(
            "Look the city up first, then fetch its forecast. Give temperatures in °C.\n\n\
             Tools:\n\
             - geocode\n\
             - get_forecast\n\
             - radar_map   # only some agents have it\n",
        )
        .build()
        .expect("weather is valid")
}

pub(crate) const WEATHER_DESCRIPTION: &str = "Answers questions about the weather forecast for a city. Use when the user asks about weather, rain or temperature.";

/// A skill only the user may invoke.
pub(crate) fn deploy_prod() -> InCodeSkill {
    let mut extensions = Extensions::default();
    extensions.disable_model_invocation = true;
    define_skill(
        "deploy-prod",
        "Deploys the current build to production. Only when the user explicitly asks.",
    )
    .body("Run the release checklist, then deploy with `make release`.")
    .extensions(extensions)
    .build()
    .expect("deploy-prod is valid")
}

/// A plain skill, used for `$commit-message` mentions.
pub(crate) fn commit_message() -> InCodeSkill {
    define_skill(
        "commit-message",
        "Writes a Conventional Commits message for staged changes. Use when the user asks for a commit message.",
    )
    .body(
        "Write a subject of at most 72 characters in the imperative mood, a blank line, \
         then a short body that explains why.",
    )
    .build()
    .expect("commit-message is valid")
}

/// A skill that only appears after the catalog changes.
pub(crate) fn csv_tools() -> InCodeSkill {
    define_skill(
        "csv-tools",
        "Cleans and summarizes CSV files. Use when the user shares a CSV.",
    )
    .body("Detect the delimiter, then report the columns and row count.")
    .build()
    .expect("csv-tools is valid")
}

/// The four fixture skills.
pub(crate) fn provider() -> Arc<InCodeProvider> {
    Arc::new(
        InCodeProvider::new([
            pdf_tools(),
            weather(WEATHER_DESCRIPTION),
            deploy_prod(),
            commit_message(),
        ])
        .expect("distinct names"),
    )
}

/// The skill set after a change: `csv-tools` added, `weather` re-described,
/// `commit-message` removed.
pub(crate) fn changed_provider() -> Arc<InCodeProvider> {
    Arc::new(
        InCodeProvider::new([
            pdf_tools(),
            weather("Forecasts and current weather for any city. Use for weather questions."),
            deploy_prod(),
            csv_tools(),
        ])
        .expect("distinct names"),
    )
}

pub(crate) use skills_core::SwappableProvider;

/// The pool tools of the fixtures (`send_alert` is declared by no skill).
pub(crate) fn pool_tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec::new(
            "geocode",
            "Finds a city's coordinates.",
            json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        ),
        ToolSpec::new(
            "get_forecast",
            "Gets the forecast for coordinates.",
            json!({"type": "object", "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}}, "required": ["lat", "lon"]}),
        ),
        ToolSpec::new(
            "send_alert",
            "Sends a weather alert to the user's phone.",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        ),
    ]
}

/// A user tool that is always exposed.
pub(crate) fn user_tool() -> ToolSpec {
    ToolSpec::new(
        "get_time",
        "Returns the current time.",
        json!({"type": "object", "properties": {}}),
    )
}

/// A builder over the fixture provider with the fixture instructions.
pub(crate) fn builder() -> AgentBuilder {
    Agent::builder("assistant", provider()).instructions(INSTRUCTIONS)
}

/// Builds the agent and starts a session.
pub(crate) async fn start(builder: AgentBuilder) -> Session {
    let agent = builder.build().expect("valid agent");
    agent.start_session().await.expect("session starts")
}

/// Makes the model call `tool` with `args` (an assistant message with the
/// call, then the session's answer) and returns the result message.
pub(crate) async fn call_tool(session: &mut Session, tool: &str, args: Value) -> Message {
    let call = ToolCall::new(format!("call_{}", session.transcript().len()), tool, args);
    session.push_assistant(Message::assistant_with_calls("", vec![call.clone()]));
    match session.handle_tool_call(&call).await {
        Dispatch::Handled(message) => message,
        other => panic!("`{tool}` was not handled by the session: {other:?}"),
    }
}

/// Like [`call_tool`], formatted for a snapshot: the call, `is_error`, then
/// the result text exactly as the model sees it.
pub(crate) async fn run(session: &mut Session, tool: &str, args: Value) -> String {
    let message = call_tool(session, tool, args.clone()).await;
    format!(
        "call: {tool} {args}\nis_error: {}\n---\n{}",
        message.is_error, message.content
    )
}

/// Pretty JSON of anything serializable.
pub(crate) fn pretty<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).expect("serializable")
}

/// Re-indents a compact JSON text without reordering its keys (the wire order
/// is the cache order, so it is worth seeing as sent). Checked against a
/// re-parse, so the output is the same JSON value.
pub(crate) fn reindent(json: &str) -> String {
    let mut out = String::with_capacity(json.len() * 2);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut chars = json.chars().peekable();
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.push_str(&"  ".repeat(depth));
    };
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                if matches!(chars.peek(), Some('}' | ']')) {
                    if let Some(close) = chars.next() {
                        out.push(close);
                    }
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            other => out.push(other),
        }
    }
    let before: Value = serde_json::from_str(json).expect("valid JSON in");
    let after: Value = serde_json::from_str(&out).expect("valid JSON out");
    assert_eq!(before, after, "reindent changed the JSON value");
    out
}

/// The comparison is exact: a tool result with one more trailing newline, or
/// a trailing space, does not match its snapshot.
#[test]
fn snapshots_compare_every_byte() {
    let stored =
        std::fs::read(snapshot_dir().join("default_read_ok.snap.txt")).expect("snapshot exists");
    let actual = pollster::block_on(async {
        let mut session = start(builder()).await;
        run(
            &mut session,
            "read_skill_file",
            serde_json::json!({"skill": "pdf-tools", "path": "references/guide.md"}),
        )
        .await
    });
    assert_eq!(actual.as_bytes(), stored.as_slice());
    assert!(insta_accepts("default_read_ok", actual.as_bytes()));
    assert!(!insta_accepts(
        "default_read_ok",
        format!("{actual}\n").as_bytes()
    ));
    assert!(!insta_accepts(
        "default_read_ok",
        format!("{actual} ").as_bytes()
    ));
}
