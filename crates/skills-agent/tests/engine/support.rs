//! Shared fixtures: in-code skills, a provider whose skill set can change
//! mid-session, and helpers that drive tool calls the way a tool loop does.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use skills_agent::{
    Agent, AgentBuilder, Dispatch, Message, ModelRequest, Role, Session, ToolCall, ToolSpec,
};
use skills_core::{
    Extensions, InCodeProvider, InCodeSkill, SkillProvider, SwappableProvider, define_skill,
};

/// Marker text inside the `pdf-forms` body (to find it in requests).
pub(crate) const PDF_MARK: &str = "PDF-FORMS-BODY";
/// Marker text inside the `csv-report` body.
pub(crate) const CSV_MARK: &str = "CSV-REPORT-BODY";
/// Marker text inside the `weather` body.
pub(crate) const WEATHER_MARK: &str = "WEATHER-BODY";
/// Marker text inside the `git-commit` body.
pub(crate) const GIT_MARK: &str = "GIT-COMMIT-BODY";
/// Marker text inside the `deploy-prod` body.
pub(crate) const DEPLOY_MARK: &str = "DEPLOY-PROD-BODY";
/// Marker text inside the `internal-notes` body.
pub(crate) const INTERNAL_MARK: &str = "INTERNAL-NOTES-BODY";

/// A PDF skill with two reference docs and a script.
pub(crate) fn pdf_forms() -> InCodeSkill {
    define_skill(
        "pdf-forms",
        "Fills PDF forms and extracts their fields. Use when the user shares a PDF form.",
    )
    .body(format!(
        "# PDF forms\n\n{PDF_MARK}: list the fields first, then fill them in order."
    ))
    .resource(
        "references/fields.md",
        "Field names are case sensitive.\nCheckboxes take Yes or Off.\nDates use ISO 8601.\n",
    )
    .resource(
        "references/signing.md",
        "Never sign on the user's behalf.\n",
    )
    .resource("scripts/fill.py", "print('fill')\n")
    .build()
    .expect("pdf-forms is a valid skill")
}

/// A CSV skill with one reference doc.
pub(crate) fn csv_report() -> InCodeSkill {
    define_skill(
        "csv-report",
        "Builds summary reports from CSV files. Use when asked to summarise a spreadsheet.",
    )
    .body(format!(
        "{CSV_MARK}: read the header row, group by the key column, total each group."
    ))
    .resource("references/columns.md", "The first column is the key.\n")
    .build()
    .expect("csv-report is a valid skill")
}

/// A skill that declares two pool tools in its `Tools:` section.
pub(crate) fn weather() -> InCodeSkill {
    define_skill(
        "weather",
        "Answers questions about current weather and forecasts. Use for weather questions.",
    )
    .body(format!(
        "{WEATHER_MARK}: look the city up, then report.\n\nTools:\n- get_weather\n- get_forecast\n"
    ))
    .build()
    .expect("weather is a valid skill")
}

/// A plain skill without resources.
pub(crate) fn git_commit() -> InCodeSkill {
    define_skill(
        "git-commit",
        "Writes conventional commit messages. Use when the user asks for a commit message.",
    )
    .body(format!(
        "{GIT_MARK}: summarise the diff in the imperative mood."
    ))
    .build()
    .expect("git-commit is a valid skill")
}

/// A skill only the user may invoke (`disable-model-invocation`).
pub(crate) fn deploy_prod() -> InCodeSkill {
    let mut extensions = Extensions::default();
    extensions.disable_model_invocation = true;
    define_skill(
        "deploy-prod",
        "Deploys the main branch to production. Only when the user explicitly asks.",
    )
    .body(format!("{DEPLOY_MARK}: run the checklist, then deploy."))
    .resource("references/checklist.md", "1. Tests pass.\n")
    .extensions(extensions)
    .build()
    .expect("deploy-prod is a valid skill")
}

/// A skill the user may not invoke by mention (`user-invocable: false`).
pub(crate) fn internal_notes() -> InCodeSkill {
    let mut extensions = Extensions::default();
    extensions.user_invocable = Some(false);
    define_skill(
        "internal-notes",
        "Keeps internal notes about the project. Use when asked to note something down.",
    )
    .body(format!("{INTERNAL_MARK}: append a dated line."))
    .extensions(extensions)
    .build()
    .expect("internal-notes is a valid skill")
}

/// A skill with a body of about `chars` characters (for budgets).
pub(crate) fn sized(name: &str, chars: usize) -> InCodeSkill {
    let line = format!("{name} step: do the next thing carefully.\n");
    let body = line.repeat(chars / line.len() + 1);
    define_skill(
        name,
        format!("Sized test skill {name}. Use for budget tests."),
    )
    .body(body)
    .build()
    .expect("sized skill is valid")
}

/// The four ordinary skills.
pub(crate) fn library() -> Vec<InCodeSkill> {
    vec![pdf_forms(), csv_report(), weather(), git_commit()]
}

/// The ordinary skills plus the two with invocation controls.
pub(crate) fn full_library() -> Vec<InCodeSkill> {
    let mut skills = library();
    skills.push(deploy_prod());
    skills.push(internal_notes());
    skills
}

/// The library's [`SwappableProvider`] over an in-code skill set.
pub(crate) fn swap_provider(skills: Vec<InCodeSkill>) -> Arc<SwappableProvider> {
    Arc::new(SwappableProvider::new(in_code(skills)))
}

fn in_code(skills: Vec<InCodeSkill>) -> Arc<dyn SkillProvider> {
    Arc::new(InCodeProvider::new(skills).expect("distinct skill names"))
}

/// Replaces the whole skill set of a swappable provider.
pub(crate) trait SetSkills {
    /// Publishes `skills` in place of the current set.
    fn set_skills(&self, skills: Vec<InCodeSkill>);
}

impl SetSkills for SwappableProvider {
    fn set_skills(&self, skills: Vec<InCodeSkill>) {
        self.replace(in_code(skills));
    }
}

/// A builder over the ordinary library (the provider is returned too, so a
/// test can change the skill set).
pub(crate) fn builder_with(skills: Vec<InCodeSkill>) -> (AgentBuilder, Arc<SwappableProvider>) {
    let provider = swap_provider(skills);
    let builder = Agent::builder("assistant", provider.clone() as Arc<dyn SkillProvider>)
        .instructions("You are a careful assistant.");
    (builder, provider)
}

/// A builder over the ordinary library.
pub(crate) fn builder() -> AgentBuilder {
    builder_with(library()).0
}

/// Builds the agent and starts a session.
pub(crate) fn start(builder: AgentBuilder) -> Session {
    let agent = builder.build().expect("agent builds");
    start_agent(&agent)
}

/// Starts a session of `agent`.
pub(crate) fn start_agent(agent: &Agent) -> Session {
    pollster::block_on(agent.start_session()).expect("session starts")
}

/// Appends a user message.
pub(crate) fn user(session: &mut Session, text: &str) {
    pollster::block_on(session.push_user(text)).expect("user message is accepted");
}

/// Appends a plain assistant reply.
pub(crate) fn reply(session: &mut Session, text: &str) {
    session.push_assistant(Message::assistant(text));
}

static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

/// A fresh tool call.
pub(crate) fn tool_call(tool: &str, arguments: Value) -> ToolCall {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    ToolCall::new(format!("call_{id}"), tool, arguments)
}

/// What a tool loop does: appends the assistant message that makes the call,
/// then dispatches it.
pub(crate) fn dispatch_in_turn(session: &mut Session, tool: &str, arguments: Value) -> Dispatch {
    let call = tool_call(tool, arguments);
    session.push_assistant(Message::assistant_with_calls("", vec![call.clone()]));
    pollster::block_on(session.handle_tool_call(&call))
}

/// A call the session answers itself (in a tool-loop turn); its result.
pub(crate) fn call(session: &mut Session, tool: &str, arguments: Value) -> Message {
    match dispatch_in_turn(session, tool, arguments) {
        Dispatch::Handled(message) => message,
        other => panic!("`{tool}` should be handled by the session, got {other:?}"),
    }
}

/// A call that must succeed; its result text.
pub(crate) fn call_ok(session: &mut Session, tool: &str, arguments: Value) -> String {
    let message = call(session, tool, arguments);
    assert!(!message.is_error, "`{tool}` failed: {}", message.content);
    assert_eq!(message.role, Role::Tool);
    message.content
}

/// A call that must fail; its error text.
pub(crate) fn call_err(session: &mut Session, tool: &str, arguments: Value) -> String {
    let message = call(session, tool, arguments);
    assert!(
        message.is_error,
        "`{tool}` should fail, got: {}",
        message.content
    );
    assert_eq!(message.role, Role::Tool);
    message.content
}

/// The request serialized, for "does this text reach the model" checks.
pub(crate) fn request_json(request: &ModelRequest) -> String {
    serde_json::to_string(request).expect("requests serialize")
}

/// One message serialized (the unit of the prefix comparison).
pub(crate) fn message_json(message: &Message) -> String {
    serde_json::to_string(message).expect("messages serialize")
}

/// The names of a request's tools.
pub(crate) fn tool_names(request: &ModelRequest) -> Vec<String> {
    request.tools.iter().map(|t| t.name.clone()).collect()
}

/// A user or pool tool with a trivial schema.
pub(crate) fn plain_tool(name: &str) -> ToolSpec {
    ToolSpec::new(
        name,
        format!("The {name} tool."),
        serde_json::json!({"type": "object", "properties": {}}),
    )
}

/// Asserts `later` extends `earlier`: the same system blocks and tools, and
/// `earlier`'s messages as a prefix of `later`'s.
pub(crate) fn assert_extends(earlier: &ModelRequest, later: &ModelRequest) {
    assert_eq!(earlier.system, later.system, "the system blocks changed");
    assert_eq!(
        serde_json::to_string(&earlier.tools).expect("tools serialize"),
        serde_json::to_string(&later.tools).expect("tools serialize"),
        "the tools changed"
    );
    assert!(
        earlier.messages.len() <= later.messages.len(),
        "the request lost messages ({} -> {})",
        earlier.messages.len(),
        later.messages.len()
    );
    for (i, (a, b)) in earlier.messages.iter().zip(&later.messages).enumerate() {
        assert_eq!(
            message_json(a),
            message_json(b),
            "message {i} changed between requests"
        );
    }
}
