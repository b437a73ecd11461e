//! The agent loop (F-AGT-3): build the request, call the [`Model`], run the
//! tool calls, repeat until the model answers without tools or the step
//! limit; with sub-agents for forked skills (F-AGT-5) and the allowed-tools
//! policy (F-AGT-7).
//!
//! A run is a [`RunStream`] of [`RunEvent`]s a UI can consume as they come;
//! dropping the stream, or cancelling a [`CancelToken`], stops the run at its
//! next await. Every request the loop sends is built by the [`Session`], so
//! each one extends the previous one byte for byte (the prompt cache rule);
//! the loop only appends.

mod allowed;
mod cancel;
mod handler;
mod hub;
mod stream;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures_util::StreamExt as _;
use serde::Serialize;
use serde_json::Value;
use skills_core::ContextMode;
use skills_workspace::SessionId;
use tracing::Instrument as _;

use crate::message::{Message, Role, ToolCall, UserInput};
use crate::model::{Model, ModelError, ModelEvent, ModelResponse, Retry, StopReason, Usage};
use crate::render;
use crate::request::ModelRequest;
use crate::session::{Dispatch, Event, ForkRequest, Session};
use crate::store::{MAX_SESSION_ID_LEN, SessionWriter, StoreError};
use crate::tool::{ToolError, ToolErrorKind, ToolSpec, clip};

pub use allowed::{GrantLifetime, ToolPattern};
pub use cancel::{CancelToken, Cancelled};
pub use handler::{FnTool, ToolHandler, tool_fn};
pub use hub::{AgentHub, AgentMap, Approver, ModelHub, ModelMap, ToolPolicy};
pub use stream::RunStream;

use handler::Schemas;
use stream::{BoxFuture, Emitter};

/// The most model calls one run makes by default.
pub const DEFAULT_MAX_STEPS: usize = 25;
/// How deep forked sub-agents may nest (a forked skill that forks again).
pub const MAX_FORK_DEPTH: usize = 3;
/// The `model:` value that means the model of the run loading the skill
/// (Claude Code's `inherit`): no hub is asked, nothing switches.
pub const INHERIT_MODEL: &str = "inherit";
/// How many user tool calls of one answer run at once by default.
pub const DEFAULT_TOOL_CONCURRENCY: usize = 8;

/// What a run reports, in order. A run ends with exactly one
/// [`RunEvent::Finished`] or [`RunEvent::Failed`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunEvent {
    /// A request is about to go to the model.
    RequestSent {
        /// 1 for the first model call of the run.
        step: usize,
        /// The model's name.
        model: String,
        /// Messages in the request.
        messages: usize,
        /// Tools offered.
        tools: usize,
        /// Whether it starts with the previous request of this run (same
        /// system blocks and tools, then the same messages): the prompt
        /// cache rule. `None` for the first request.
        #[serde(skip_serializing_if = "Option::is_none")]
        extends_previous: Option<bool>,
    },
    /// A piece of the model's answer.
    TextDelta {
        /// The text.
        text: String,
    },
    /// The model called a tool.
    ToolCall {
        /// The call.
        call: ToolCall,
    },
    /// A tool call's result was appended.
    ToolResult {
        /// The call it answers.
        call_id: String,
        /// The tool.
        tool: String,
        /// Whether it reports an error.
        is_error: bool,
        /// The result text.
        content: String,
    },
    /// The session reported something: a skill loaded or released, docs or
    /// tools selected, a catalog delta, a compaction.
    Skill {
        /// What happened.
        event: Event,
    },
    /// Tokens one model call used.
    Usage {
        /// The step.
        step: usize,
        /// The counts.
        usage: Usage,
        /// Share of the prompt read from the provider's cache.
        cache_hit_ratio: f64,
    },
    /// The model adapter retried a call.
    Retry {
        /// The retry.
        retry: Retry,
    },
    /// A loaded skill's `model:` switched the model for the rest of the run.
    ModelSwitched {
        /// The skill.
        skill: String,
        /// The model before.
        from: String,
        /// The model now.
        to: String,
    },
    /// Something the user should know that did not stop the run (a skill
    /// asked for a model the hub does not have, a tool had no handler).
    Notice {
        /// What happened.
        message: String,
    },
    /// An event of a forked sub-agent.
    SubAgent {
        /// The forked skill.
        skill: String,
        /// The sub-agent's event.
        event: Box<RunEvent>,
    },
    /// The model answered without tool calls: the run is done.
    Finished {
        /// The outcome.
        outcome: RunOutcome,
    },
    /// The run stopped on an error.
    Failed {
        /// The error.
        error: RunError,
    },
}

/// Cache figures of one request of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct RequestStats {
    /// 1 for the first model call.
    pub step: usize,
    /// The tokens it used.
    pub usage: Usage,
    /// Whether it extended the previous request (`None` for the first).
    pub extends_previous: Option<bool>,
}

impl RequestStats {
    /// Share of the request's prompt read from the provider's cache.
    pub fn cache_hit_ratio(&self) -> f64 {
        self.usage.cache_hit_ratio()
    }
}

/// How a finished run went.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct RunOutcome {
    /// The model's final answer.
    pub text: String,
    /// Why the model stopped.
    pub stop: StopReason,
    /// Model calls made (forked sub-agents' not included).
    pub steps: usize,
    /// Tokens of every model call, sub-agents' included.
    pub usage: Usage,
    /// Per request: usage and whether it extended the previous one.
    pub requests: Vec<RequestStats>,
}

/// What kind of failure stopped a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunErrorKind {
    /// The model call failed (after the adapter's retries).
    Model,
    /// The model kept calling tools past the step limit.
    StepLimit,
    /// The run was cancelled.
    Cancelled,
    /// The skill provider failed (while injecting a mentioned skill).
    Provider,
    /// The run's input is not a user message (a [`UserInput`] made from
    /// another role's [`Message`]); nothing was appended.
    Input,
    /// The session store failed or refused an append (a run with
    /// [`Runner::run_stored`]); a [`StoreErrorKind::Conflict`] means the
    /// session was continued elsewhere meanwhile.
    ///
    /// [`StoreErrorKind::Conflict`]: crate::StoreErrorKind::Conflict
    Store,
}

impl RunErrorKind {
    /// A stable kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Model => "model",
            Self::StepLimit => "step-limit",
            Self::Cancelled => "cancelled",
            Self::Provider => "provider",
            Self::Input => "input",
            Self::Store => "store",
        }
    }
}

/// Why a run stopped before the model finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunError {
    kind: RunErrorKind,
    message: String,
    model: Option<ModelError>,
}

impl RunError {
    fn new(kind: RunErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            model: None,
        }
    }

    fn cancelled() -> Self {
        Self::new(RunErrorKind::Cancelled, "the run was cancelled")
    }

    fn from_model(model: &str, error: ModelError) -> Self {
        Self {
            kind: RunErrorKind::Model,
            message: format!("the model `{model}` failed: {error}"),
            model: Some(error),
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> RunErrorKind {
        self.kind
    }

    /// A message for people.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The model's error, when a model call failed (with the HTTP status and
    /// the provider's message).
    pub fn model_error(&self) -> Option<&ModelError> {
        self.model.as_ref()
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RunError {}

impl Serialize for RunError {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut out = s.serialize_struct("RunError", 3)?;
        out.serialize_field("kind", &self.kind)?;
        out.serialize_field("message", &self.message)?;
        out.serialize_field("status", &self.model.as_ref().and_then(ModelError::status))?;
        out.end()
    }
}

/// Runs agents: the loop around a [`Session`] and a [`Model`].
///
/// Cheap to clone; one runner serves many sessions at once.
///
/// ```
/// use std::sync::Arc;
/// use futures_util::StreamExt as _;
/// use skills_agent::{Agent, ModelResponse, RunEvent, Runner, ScriptedModel, ToolCall};
/// use skills_core::{InCodeProvider, define_skill};
///
/// # pollster::block_on(async {
/// let skill = define_skill("greeting", "Greets people warmly. Use when someone says hello.")
///     .body("Say hello back and ask how you can help.")
///     .build()?;
/// let agent = Agent::builder("assistant", Arc::new(InCodeProvider::new([skill])?)).build()?;
/// let model = Arc::new(ScriptedModel::new([
///     ModelResponse::tool_calls("", vec![ToolCall::new("c1", "load_skill", serde_json::json!({"name": "greeting"}))]),
///     ModelResponse::text("Hello! How can I help?"),
/// ]));
/// let runner = Runner::builder(model).build();
/// let mut session = agent.start_session().await?;
/// let mut events = runner.run(&mut session, "hi");
/// let mut answer = String::new();
/// while let Some(event) = events.next().await {
///     match event {
///         RunEvent::TextDelta { text } => answer.push_str(&text),
///         RunEvent::Failed { error } => return Err(error.into()),
///         _ => {}
///     }
/// }
/// assert_eq!(answer, "Hello! How can I help?");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct Runner {
    inner: Arc<RunnerConfig>,
}

#[derive(Debug)]
struct RunnerConfig {
    model: Arc<dyn Model>,
    handlers: BTreeMap<String, Arc<dyn ToolHandler>>,
    max_steps: usize,
    streaming: bool,
    concurrency: usize,
    models: Option<Arc<dyn ModelHub>>,
    agents: Option<Arc<dyn AgentHub>>,
    policy: ToolPolicy,
    grants: GrantLifetime,
    /// Per tool, the argument `Tool(…)` patterns match (`command` when
    /// absent).
    policy_arguments: BTreeMap<String, String>,
    /// Per name in patterns, the other tools it also covers.
    policy_aliases: BTreeMap<String, BTreeSet<String>>,
    schemas: Schemas,
}

/// The argument `Tool(…)` patterns match when the runner names none.
pub const DEFAULT_POLICY_ARGUMENT: &str = "command";

/// Configures a [`Runner`].
#[derive(Debug)]
pub struct RunnerBuilder {
    config: RunnerConfig,
}

impl RunnerBuilder {
    /// Registers the handler of the user tool `name` (declared on the agent
    /// with [`AgentBuilder::tool`](crate::AgentBuilder::tool) or
    /// [`AgentBuilder::pool_tool`](crate::AgentBuilder::pool_tool)).
    #[must_use]
    pub fn handler(mut self, name: impl Into<String>, handler: Arc<dyn ToolHandler>) -> Self {
        self.config.handlers.insert(name.into(), handler);
        self
    }

    /// The most model calls per run ([`DEFAULT_MAX_STEPS`] by default).
    #[must_use]
    pub fn max_steps(mut self, steps: usize) -> Self {
        self.config.max_steps = steps.max(1);
        self
    }

    /// Whether to call [`Model::stream`] (the default) or
    /// [`Model::complete`]. The events are the same; streaming yields text
    /// as it arrives.
    #[must_use]
    pub fn streaming(mut self, on: bool) -> Self {
        self.config.streaming = on;
        self
    }

    /// How many user tool calls of one answer run at once
    /// ([`DEFAULT_TOOL_CONCURRENCY`] by default; results are appended in call
    /// order whatever finishes first).
    #[must_use]
    pub fn tool_concurrency(mut self, n: usize) -> Self {
        self.config.concurrency = n.max(1);
        self
    }

    /// Resolves the `model:` of skills: a forked skill runs on it, and an
    /// inline skill switches the run to it once loaded.
    #[must_use]
    pub fn model_hub(mut self, hub: Arc<dyn ModelHub>) -> Self {
        self.config.models = Some(hub);
        self
    }

    /// Resolves the `agent:` of forked skills.
    #[must_use]
    pub fn agent_hub(mut self, hub: Arc<dyn AgentHub>) -> Self {
        self.config.agents = Some(hub);
        self
    }

    /// What `allowed-tools` of loaded skills does ([`ToolPolicy::Off`] by
    /// default).
    #[must_use]
    pub fn policy(mut self, policy: ToolPolicy) -> Self {
        self.config.policy = policy;
        self
    }

    /// How long a loaded skill's `allowed-tools` grant (or restriction)
    /// lasts: while the skill is loaded ([`GrantLifetime::Load`], the
    /// default) or until the next user message ([`GrantLifetime::Turn`], as
    /// in Claude Code).
    #[must_use]
    pub fn grant_lifetime(mut self, lifetime: GrantLifetime) -> Self {
        self.config.grants = lifetime;
        self
    }

    /// The string argument of `tool` that `allowed-tools` patterns such as
    /// `Bash(git:*)` match ([`DEFAULT_POLICY_ARGUMENT`], `command`, for
    /// tools not named here). A call without that argument matches only
    /// the bare `Tool` and `Tool(*)`.
    #[must_use]
    pub fn policy_argument(mut self, tool: impl Into<String>, argument: impl Into<String>) -> Self {
        self.config
            .policy_arguments
            .insert(tool.into(), argument.into());
        self
    }

    /// Lets `allowed-tools` entries naming `name` also cover the tool
    /// `tool`: with `policy_alias("Bash", "run_skill_command")` a skill's
    /// `Bash(git:*)` pre-approves `run_skill_command` calls whose `command`
    /// starts with `git`. Repeatable; a name keeps covering itself.
    #[must_use]
    pub fn policy_alias(mut self, name: impl Into<String>, tool: impl Into<String>) -> Self {
        self.config
            .policy_aliases
            .entry(name.into())
            .or_default()
            .insert(tool.into());
        self
    }

    /// The runner.
    pub fn build(self) -> Runner {
        Runner {
            inner: Arc::new(self.config),
        }
    }
}

impl Runner {
    /// A runner calling `model`.
    pub fn builder(model: Arc<dyn Model>) -> RunnerBuilder {
        RunnerBuilder {
            config: RunnerConfig {
                model,
                handlers: BTreeMap::new(),
                max_steps: DEFAULT_MAX_STEPS,
                streaming: true,
                concurrency: DEFAULT_TOOL_CONCURRENCY,
                models: None,
                agents: None,
                policy: ToolPolicy::Off,
                grants: GrantLifetime::Load,
                policy_arguments: BTreeMap::new(),
                policy_aliases: BTreeMap::new(),
                schemas: Schemas::default(),
            },
        }
    }

    /// The model runs start with.
    pub fn model(&self) -> &Arc<dyn Model> {
        &self.inner.model
    }

    /// Appends `input` as a user message and runs until the model answers
    /// without tool calls. Poll the stream to drive the run; drop it to stop.
    pub fn run<'a>(
        &'a self,
        session: &'a mut Session,
        input: impl Into<UserInput>,
    ) -> RunStream<'a> {
        self.start(session, Some(input.into().0), CancelToken::new())
    }

    /// [`Runner::run`] that also stops when `cancel` is cancelled.
    pub fn run_with_cancel<'a>(
        &'a self,
        session: &'a mut Session,
        input: impl Into<UserInput>,
        cancel: CancelToken,
    ) -> RunStream<'a> {
        self.start(session, Some(input.into().0), cancel)
    }

    /// Runs without a new user message: continues a session whose last
    /// message waits for the model (a resumed or interrupted run).
    pub fn resume<'a>(&'a self, session: &'a mut Session, cancel: CancelToken) -> RunStream<'a> {
        self.start(session, None, cancel)
    }

    /// [`Runner::run_with_cancel`] that stores the session as it goes: what
    /// each step added (the user's message, the model's answer, the tool
    /// results) is appended through `writer` before the next model call, so
    /// a crash loses at most the step in flight. A forked sub-agent's
    /// session is stored too, as a fork of this one: its id is this
    /// session's id, `.fork`, the parent log's length at the fork and the
    /// skill's name (`support-42.fork7.review`), and it names the parent and
    /// that fork point, so `read_lineage` finds where it branched.
    ///
    /// A store failure stops the run with [`RunErrorKind::Store`].
    pub fn run_stored<'a>(
        &'a self,
        session: &'a mut Session,
        writer: &'a mut SessionWriter,
        input: impl Into<UserInput>,
        cancel: CancelToken,
    ) -> RunStream<'a> {
        self.start_stored(session, Some(writer), Some(input.into().0), cancel)
    }

    /// Runs to the end and returns the outcome (the events are dropped).
    ///
    /// # Errors
    /// The [`RunError`] that stopped the run.
    pub async fn run_to_end(
        &self,
        session: &mut Session,
        input: impl Into<UserInput>,
    ) -> Result<RunOutcome, RunError> {
        let mut stream = self.run(session, input);
        let mut last = None;
        while let Some(event) = stream.next().await {
            match event {
                RunEvent::Finished { outcome } => last = Some(Ok(outcome)),
                RunEvent::Failed { error } => last = Some(Err(error)),
                _ => {}
            }
        }
        last.unwrap_or_else(|| Err(RunError::cancelled()))
    }

    fn start<'a>(
        &'a self,
        session: &'a mut Session,
        input: Option<Message>,
        cancel: CancelToken,
    ) -> RunStream<'a> {
        self.start_stored(session, None, input, cancel)
    }

    fn start_stored<'a>(
        &'a self,
        session: &'a mut Session,
        writer: Option<&'a mut SessionWriter>,
        input: Option<Message>,
        cancel: CancelToken,
    ) -> RunStream<'a> {
        let (emitter, queue) = Emitter::queue();
        let run = Run {
            config: &self.inner,
            model: Arc::clone(&self.inner.model),
            emit: emitter,
            cancel,
            depth: 0,
            usage: Usage::default(),
            requests: Vec::new(),
            loaded_this_turn: BTreeSet::new(),
        };
        RunStream::new(run.drive(session, writer, input), queue)
    }
}

/// Why a fork did not answer: a tool error the model gets, or a failure that
/// stops the run.
enum ForkFailure {
    Tool(ToolError),
    Run(RunError),
}

impl From<ToolError> for ForkFailure {
    fn from(err: ToolError) -> Self {
        Self::Tool(err)
    }
}

impl From<RunError> for ForkFailure {
    fn from(err: RunError) -> Self {
        Self::Run(err)
    }
}

fn store_failed(err: StoreError) -> RunError {
    RunError::new(
        RunErrorKind::Store,
        format!("the session store failed: {err}"),
    )
}

/// Appends what `session` added since the last save, when the run stores.
async fn save(session: &Session, writer: &mut Option<&mut SessionWriter>) -> Result<(), RunError> {
    match writer {
        Some(writer) => writer.save(session).await.map(|_| ()).map_err(store_failed),
        None => Ok(()),
    }
}

/// The stored id of a sub-agent forked from `parent` when its log had `seq`
/// events: `{parent}.fork{seq}.{skill}`, the parent's part shortened when the
/// whole would pass [`MAX_SESSION_ID_LEN`] (ids are ASCII).
fn fork_session_id(parent: &SessionId, seq: u64, skill: &str) -> SessionId {
    let parent = parent.as_str();
    let suffix = format!(".fork{seq}.{skill}");
    let room = MAX_SESSION_ID_LEN.saturating_sub(suffix.len());
    let parent = parent.get(..room.min(parent.len())).unwrap_or(parent);
    let mut id = format!("{parent}{suffix}");
    id.truncate(MAX_SESSION_ID_LEN);
    // A skill name is letters, digits and hyphens, so the id is valid; should
    // it not be, the sub-agent gets a fresh one rather than a broken one.
    SessionId::new(id).unwrap_or_else(|_| SessionId::generate("fork"))
}

/// One run of the loop (a forked sub-agent gets its own).
struct Run<'c> {
    config: &'c RunnerConfig,
    model: Arc<dyn Model>,
    emit: Emitter,
    cancel: CancelToken,
    depth: usize,
    usage: Usage,
    requests: Vec<RequestStats>,
    /// The skills loaded during this run (the grants of
    /// [`GrantLifetime::Turn`]).
    loaded_this_turn: BTreeSet<String>,
}

/// Whether `next` starts with `previous`: same system blocks and tools, and
/// `previous`'s messages at its start.
fn extends(previous: &ModelRequest, next: &ModelRequest) -> bool {
    previous.system == next.system
        && previous.tools == next.tools
        && next.messages.len() >= previous.messages.len()
        && next.messages[..previous.messages.len()] == previous.messages[..]
}

impl<'c> Run<'c> {
    /// The loop. Boxed: a forked skill runs a nested loop.
    fn drive<'s>(
        mut self,
        session: &'s mut Session,
        writer: Option<&'s mut SessionWriter>,
        input: Option<Message>,
    ) -> BoxFuture<'s, Result<RunOutcome, RunError>>
    where
        'c: 's,
    {
        Box::pin(async move {
            let span = tracing::debug_span!(
                "skills.run",
                agent = %session.agent().name(),
                model = %self.model.name(),
                depth = self.depth,
            );
            let mut writer = writer;
            let result = self
                .drive_inner(session, &mut writer, input)
                .instrument(span)
                .await;
            // Whatever the outcome, store what the run added (a failed run's
            // closed calls included); a store failure after a successful
            // run is the run's failure.
            match (result, save(session, &mut writer).await) {
                (Err(err), _) => Err(err),
                (Ok(_), Err(err)) => Err(err),
                (Ok(outcome), Ok(())) => Ok(outcome),
            }
        })
    }

    async fn drive_inner(
        &mut self,
        session: &mut Session,
        writer: &mut Option<&mut SessionWriter>,
        input: Option<Message>,
    ) -> Result<RunOutcome, RunError> {
        // A run cut off between an answer and its tool results left calls
        // without a result; providers refuse such a conversation.
        if session.close_unanswered_calls("the run stopped before this call ran") > 0 {
            self.notice("closed tool calls an earlier run left unanswered");
        }
        if input.is_none() {
            // A resumed run continues the turn of the last user message:
            // the skills loaded since then still hold their turn grant.
            self.loaded_this_turn = loaded_since_last_user_message(session);
        }
        if let Some(message) = input {
            if message.role != Role::User
                || !message.tool_calls.is_empty()
                || message.tool_call_id.is_some()
            {
                return Err(RunError::new(
                    RunErrorKind::Input,
                    "a run starts with a user message (without tool calls)",
                ));
            }
            let pushed = self.cancellable(session.push_user_message(message)).await?;
            pushed.map_err(|err| RunError::new(RunErrorKind::Provider, err.to_string()))?;
            self.flush(session);
        }
        let mut previous: Option<ModelRequest> = None;
        for step in 1..=self.config.max_steps {
            if self.cancel.is_cancelled() {
                return Err(RunError::cancelled());
            }
            // What the last step added is stored before the next model call.
            self.cancellable(save(session, writer)).await??;
            session.retire_once_loads();
            // Breakpoints where the current model's provider caches (a
            // skill's `model:` may have switched it).
            let request = session.build_request_for(self.model.as_ref());
            let extends_previous = previous.as_ref().map(|p| extends(p, &request));
            self.emit.send(RunEvent::RequestSent {
                step,
                model: self.model.name().to_owned(),
                messages: request.messages.len(),
                tools: request.tools.len(),
                extends_previous,
            });
            let response = self.cancellable(self.call_model(&request)).await??;
            previous = Some(request);
            self.usage.add(&response.usage);
            self.requests.push(RequestStats {
                step,
                usage: response.usage,
                extends_previous,
            });
            self.emit.send(RunEvent::Usage {
                step,
                usage: response.usage,
                cache_hit_ratio: response.usage.cache_hit_ratio(),
            });
            let calls = response.message.tool_calls.clone();
            let text = response.message.content.clone();
            session.push_assistant(response.message);
            self.flush(session);
            if calls.is_empty() {
                return Ok(RunOutcome {
                    text,
                    stop: response.stop,
                    steps: step,
                    usage: self.usage,
                    requests: std::mem::take(&mut self.requests),
                });
            }
            if let Err(err) = self.dispatch_all(session, writer, &calls).await {
                session.close_unanswered_calls("the run was cancelled before this call ran");
                self.flush(session);
                return Err(err);
            }
        }
        Err(RunError::new(
            RunErrorKind::StepLimit,
            format!(
                "the model made {} calls without finishing (the step limit); raise it with \
                 `max_steps` or give it a smaller task",
                self.config.max_steps
            ),
        ))
    }

    /// Runs `work` unless the run is cancelled first.
    async fn cancellable<T>(&self, work: impl Future<Output = T>) -> Result<T, RunError> {
        let work = std::pin::pin!(work);
        let cancelled = std::pin::pin!(self.cancel.cancelled());
        match futures_util::future::select(work, cancelled).await {
            futures_util::future::Either::Left((value, _)) => Ok(value),
            futures_util::future::Either::Right(_) => Err(RunError::cancelled()),
        }
    }

    /// One model call, its events forwarded.
    async fn call_model(&self, request: &ModelRequest) -> Result<ModelResponse, RunError> {
        let name = self.model.name().to_owned();
        let failed = |err| RunError::from_model(&name, err);
        if !self.config.streaming {
            let response = self.model.complete(request).await.map_err(failed)?;
            for event in crate::model::completed_events(response.clone()) {
                self.forward(event);
            }
            return Ok(response);
        }
        let mut stream = self.model.stream(request).await.map_err(failed)?;
        let mut completed = None;
        while let Some(event) = stream.next().await {
            match event.map_err(failed)? {
                ModelEvent::Completed(response) => completed = Some(response),
                other => self.forward(other),
            }
        }
        completed.ok_or_else(|| {
            failed(ModelError::new(
                crate::model::ModelErrorKind::InvalidResponse,
                "the stream ended before the answer was complete",
            ))
        })
    }

    fn forward(&self, event: ModelEvent) {
        match event {
            ModelEvent::TextDelta(text) => self.emit.send(RunEvent::TextDelta { text }),
            ModelEvent::ToolCall(call) => self.emit.send(RunEvent::ToolCall { call }),
            ModelEvent::Retry(retry) => self.emit.send(RunEvent::Retry { retry }),
            ModelEvent::Completed(_) => {}
        }
    }

    fn notice(&self, message: impl Into<String>) {
        self.emit.send(RunEvent::Notice {
            message: message.into(),
        });
    }

    /// Forwards the session's events; a loaded skill with `model:` switches
    /// the model when a hub has it.
    fn flush(&mut self, session: &mut Session) {
        for event in session.take_events() {
            if let Event::SkillLoaded { skill, .. } = &event {
                self.loaded_this_turn.insert(skill.clone());
                self.switch_model(session, skill);
            }
            self.emit.send(RunEvent::Skill { event });
        }
    }

    fn switch_model(&mut self, session: &Session, skill: &str) {
        let Some(hub) = &self.config.models else {
            return;
        };
        let Some(wanted) = session
            .skill_metadata(skill)
            .filter(|m| m.extensions.context.is_none())
            .and_then(|m| m.extensions.model.clone())
            .filter(|wanted| wanted != INHERIT_MODEL)
        else {
            return;
        };
        match hub.model(&wanted) {
            Some(model) => {
                let from = self.model.name().to_owned();
                self.model = model;
                self.emit.send(RunEvent::ModelSwitched {
                    skill: skill.to_owned(),
                    from,
                    to: self.model.name().to_owned(),
                });
            }
            None => self.notice(format!(
                "the skill `{skill}` asks for the model `{wanted}`, which the model hub does not \
                 have; staying on `{}`",
                self.model.name()
            )),
        }
    }

    /// Runs the calls of one answer and appends their results in call order.
    async fn dispatch_all(
        &mut self,
        session: &mut Session,
        writer: &mut Option<&mut SessionWriter>,
        calls: &[ToolCall],
    ) -> Result<(), RunError> {
        let mut batch: Vec<&ToolCall> = Vec::new();
        for call in calls {
            if self.cancel.is_cancelled() {
                return Err(RunError::cancelled());
            }
            let skill_tool = session.is_skill_tool(&call.name);
            // Reading a session's output and ending it are never refused:
            // a session the policy let start must be watchable and
            // stoppable (typing into it is policed like starting one).
            let watching = matches!(
                session.agent().run_operation(&call.name),
                Some(crate::surface::Operation::Poll | crate::surface::Operation::Kill)
            );
            if !skill_tool && !watching {
                let verdict = self.cancellable(self.policy_check(session, call)).await?;
                if let Err(refusal) = verdict {
                    self.run_batch(session, &mut batch).await?;
                    self.append(session, call, Err(refusal));
                    continue;
                }
            }
            if session.is_user_tool(&call.name) {
                batch.push(call);
                continue;
            }
            self.run_batch(session, &mut batch).await?;
            if let Some(fork) = session.fork_request(call) {
                let result = self.cancellable(self.fork(session, writer, fork)).await??;
                let result = result.map(|(answer, usage)| {
                    // The sub-agent's tokens count toward the run.
                    self.usage.add(&usage);
                    answer
                });
                self.append(session, call, result);
                continue;
            }
            match self.cancellable(session.handle_tool_call(call)).await? {
                Dispatch::Handled(message) => {
                    // Loading a skill that is already loaded is this turn's
                    // use of it too: its turn grant is back in force.
                    if !message.is_error
                        && call.name == session.agent().surface().load_tool()
                        && let Some(Value::String(skill)) =
                            message.metadata.get(crate::message::TOUCH_KEY)
                    {
                        self.loaded_this_turn.insert(skill.clone());
                    }
                    self.emit.send(RunEvent::ToolResult {
                        call_id: call.id.clone(),
                        tool: call.name.clone(),
                        is_error: message.is_error,
                        content: message.content,
                    });
                }
                // `is_user_tool` said no, so this does not happen; answer it
                // as a user tool all the same.
                _ => batch.push(call),
            }
            self.flush(session);
        }
        self.run_batch(session, &mut batch).await
    }

    /// Appends a tool result the loop produced.
    fn append(
        &mut self,
        session: &mut Session,
        call: &ToolCall,
        result: Result<String, ToolError>,
    ) {
        let (content, is_error) = match result {
            Ok(text) => (text, false),
            Err(err) => (format!("Error: {err}"), true),
        };
        session.push_tool_result(&call.id, &call.name, content.clone(), is_error);
        self.emit.send(RunEvent::ToolResult {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            is_error,
            content,
        });
        self.flush(session);
    }

    /// Runs the pending user tool calls concurrently (their schemas checked
    /// first) and appends the results in call order.
    async fn run_batch(
        &mut self,
        session: &mut Session,
        batch: &mut Vec<&ToolCall>,
    ) -> Result<(), RunError> {
        if batch.is_empty() {
            return Ok(());
        }
        let calls = std::mem::take(batch);
        let tools = session.tools();
        let mut missing = Vec::new();
        let jobs = calls.iter().map(|call| {
            let prepared = self.prepare(&tools, call);
            if let Err(err) = &prepared
                && err.kind() == ToolErrorKind::UnknownTool
            {
                missing.push(call.name.clone());
            }
            async move {
                match prepared {
                    Ok((handler, arguments)) => {
                        let span = tracing::debug_span!(
                            "skills.user_tool",
                            tool = %clip(&call.name),
                            call_id = %clip(&call.id)
                        );
                        handler.call(arguments).instrument(span).await
                    }
                    Err(err) => Err(err),
                }
            }
        });
        let jobs: Vec<_> = jobs.collect();
        for tool in missing {
            self.notice(format!(
                "the model called `{tool}`, for which no handler is registered (register one \
                 with `RunnerBuilder::handler`)"
            ));
        }
        let results: Vec<Result<String, ToolError>> = self
            .cancellable(
                futures_util::stream::iter(jobs)
                    .buffered(self.config.concurrency)
                    .collect(),
            )
            .await?;
        for (call, result) in calls.into_iter().zip(results) {
            self.append(session, call, result);
        }
        Ok(())
    }

    /// The handler of a user tool call and its checked arguments.
    fn prepare(
        &self,
        tools: &[ToolSpec],
        call: &ToolCall,
    ) -> Result<(Arc<dyn ToolHandler>, Value), ToolError> {
        let handler = self.config.handlers.get(&call.name).ok_or_else(|| {
            ToolError::new(
                ToolErrorKind::UnknownTool,
                format!(
                    "the tool `{}` cannot run right now (the application has no handler for \
                     it); do without it or tell the user",
                    clip(&call.name)
                ),
            )
        })?;
        let arguments = match tools.iter().find(|t| t.name == call.name) {
            Some(spec) => self.config.schemas.check(spec, &call.arguments)?,
            None => call.arguments.clone(),
        };
        Ok((Arc::clone(handler), arguments))
    }

    /// The patterns of the loaded skills whose grant is in force (all of
    /// them, or those loaded this turn), and whether any such skill lists
    /// tools at all.
    fn grants(&self, session: &Session) -> (Vec<ToolPattern>, bool) {
        let mut patterns = Vec::new();
        let mut any = false;
        for (skill, listed) in session.allowed_tools() {
            if self.config.grants == GrantLifetime::Turn && !self.loaded_this_turn.contains(&skill)
            {
                continue;
            }
            any = true;
            patterns.extend(listed);
        }
        (patterns, any)
    }

    /// Whether `pattern` covers `call`: its tool (or one the runner aliases
    /// to it), and the call's matched argument.
    fn covers(&self, pattern: &ToolPattern, call: &ToolCall) -> bool {
        let tool = pattern.tool();
        let named = tool == call.name
            || self
                .config
                .policy_aliases
                .get(tool)
                .is_some_and(|tools| tools.contains(&call.name));
        if !named {
            return false;
        }
        if pattern.allows_any() {
            return true;
        }
        // A pattern vouches for the command, not for what else the call
        // changes around it: environment variables (`BASH_ENV`, exported
        // `BASH_FUNC_*`, `GIT_*`) or staged inputs can make `npm run test`
        // run anything. Such a call needs a bare `Tool` or `Tool(*)`.
        if has_entries(&call.arguments, "env") || has_entries(&call.arguments, "inputs") {
            return false;
        }
        let argument = self
            .config
            .policy_arguments
            .get(&call.name)
            .map_or(DEFAULT_POLICY_ARGUMENT, String::as_str);
        pattern.matches_argument(allowed::string_argument(&call.arguments, argument).as_deref())
    }

    /// Whether the policy lets `call` run.
    async fn policy_check(&self, session: &Session, call: &ToolCall) -> Result<(), ToolError> {
        match &self.config.policy {
            ToolPolicy::Off => Ok(()),
            ToolPolicy::Restrict => {
                let (allowed, any) = self.grants(session);
                if !any || allowed.iter().any(|p| self.covers(p, call)) {
                    return Ok(());
                }
                let mut list: Vec<String> = allowed.iter().map(ToString::to_string).collect();
                list.sort();
                list.dedup();
                Err(ToolError::new(
                    ToolErrorKind::Denied,
                    format!(
                        "this call to `{}` is not allowed while the loaded skills restrict tools; \
                         allowed: {}",
                        clip(&call.name),
                        list.join(", ")
                    ),
                ))
            }
            ToolPolicy::PreApprove(approver) => {
                let (allowed, _) = self.grants(session);
                if allowed.iter().any(|p| self.covers(p, call)) {
                    return Ok(());
                }
                let loaded: Vec<String> = session.loaded().into_iter().collect();
                if approver.approve(call, &loaded).await {
                    Ok(())
                } else {
                    Err(ToolError::new(
                        ToolErrorKind::Denied,
                        format!(
                            "the user did not approve running `{}`; ask them or do without it",
                            clip(&call.name)
                        ),
                    ))
                }
            }
        }
    }

    /// Runs a forked skill in a sub-agent and returns its answer.
    ///
    /// The outer error stops the run (a store failure); the inner one is the
    /// tool result the model gets.
    async fn fork(
        &self,
        session: &Session,
        writer: &mut Option<&mut SessionWriter>,
        fork: ForkRequest,
    ) -> Result<Result<(String, Usage), ToolError>, RunError> {
        match self.fork_inner(session, writer, fork).await {
            Ok(answer) => Ok(Ok(answer)),
            Err(ForkFailure::Tool(err)) => Ok(Err(err)),
            Err(ForkFailure::Run(err)) => Err(err),
        }
    }

    async fn fork_inner(
        &self,
        session: &Session,
        writer: &mut Option<&mut SessionWriter>,
        fork: ForkRequest,
    ) -> Result<(String, Usage), ForkFailure> {
        let failed = |message: String| ToolError::new(ToolErrorKind::Failed, message);
        if self.depth + 1 >= MAX_FORK_DEPTH {
            return Err(failed(format!(
                "the skill `{}` runs in a sub-agent, and sub-agents nest at most {MAX_FORK_DEPTH} \
                 deep; do the task here instead",
                fork.skill
            ))
            .into());
        }
        let agent = match &fork.agent {
            None => session.agent().clone(),
            Some(name) => {
                let hub = self.config.agents.as_ref().ok_or_else(|| {
                    failed(format!(
                        "the skill `{}` runs in the sub-agent `{name}`, but no agent hub is \
                         configured; tell the user",
                        fork.skill
                    ))
                })?;
                hub.agent(name).ok_or_else(|| {
                    failed(format!(
                        "the skill `{}` runs in the sub-agent `{name}`, which the agent hub does \
                         not have; tell the user",
                        fork.skill
                    ))
                })?
            }
        };
        let model = match &fork.model {
            // No `model:`, or Claude Code's `inherit`: the parent's model.
            None => Arc::clone(&self.model),
            Some(name) if name == INHERIT_MODEL => Arc::clone(&self.model),
            Some(name) => {
                let hub = self.config.models.as_ref().ok_or_else(|| {
                    failed(format!(
                        "the skill `{}` runs on the model `{name}`, but no model hub is \
                         configured; tell the user",
                        fork.skill
                    ))
                })?;
                hub.model(name).ok_or_else(|| {
                    failed(format!(
                        "the skill `{}` runs on the model `{name}`, which the model hub does not \
                         have; tell the user",
                        fork.skill
                    ))
                })?
            }
        };
        let skill = session
            .agent()
            .provider()
            .get(&fork.skill)
            .await
            .map_err(|err| failed(format!("the skill could not be read: {}", err.message())))?;
        let task = session.last_user_text().unwrap_or_default().to_owned();
        let start = |err: skills_core::Error| {
            failed(format!("the sub-agent could not start: {}", err.message()))
        };
        let mut sub = match fork.mode {
            ContextMode::Fork => {
                let mut sub = agent.start_session().await.map_err(start)?;
                // The parent made the declared loads already.
                sub.without_preloads();
                sub
            }
            ContextMode::ForkWithContext => {
                // The conversation up to the answer that asked for the fork
                // (its calls have no results in the copy).
                let transcript = session.transcript();
                let end = transcript
                    .iter()
                    .rposition(|m| m.role == Role::Assistant)
                    .unwrap_or(transcript.len());
                // The sub-agent's workspace is its own: the parent's
                // attachments are staged there anew.
                let history: Vec<Message> = transcript[..end]
                    .iter()
                    .cloned()
                    .map(|mut message| {
                        message.metadata.remove(crate::message::STAGED_KEY);
                        message
                    })
                    .collect();
                let pinned = if agent.name() == session.agent().name() {
                    session.pinned_catalog().clone()
                } else {
                    agent
                        .start_session()
                        .await
                        .map_err(start)?
                        .pinned_catalog()
                        .clone()
                };
                let mut sub = agent.resume_session(pinned, history).await.map_err(start)?;
                sub.without_preloads();
                sub
            }
        };
        let body = crate::library::loaded_body(agent.surface(), &skill);
        let input = render::fork_input(&skill, &body, &task);
        let parent = self.emit.clone();
        let skill_name = fork.skill.clone();
        let child = Run {
            config: self.config,
            model,
            emit: Emitter::new(move |event| {
                parent.send(RunEvent::SubAgent {
                    skill: skill_name.clone(),
                    event: Box::new(event),
                })
            }),
            cancel: self.cancel.clone(),
            depth: self.depth + 1,
            usage: Usage::default(),
            requests: Vec::new(),
            loaded_this_turn: BTreeSet::new(),
        };
        // Stored runs store the sub-agent as a fork of this session, taken
        // after storing the answer that asked for it.
        let mut sub_writer = match writer {
            Some(parent_writer) => {
                parent_writer.save(session).await.map_err(store_failed)?;
                let point = parent_writer.fork_point();
                sub.set_id(fork_session_id(session.id(), point.seq, &fork.skill));
                let store = Arc::clone(parent_writer.store());
                Some(
                    SessionWriter::create(store, &sub, Some(point))
                        .await
                        .map_err(store_failed)?,
                )
            }
            None => None,
        };
        let outcome = match child
            .drive(&mut sub, sub_writer.as_mut(), Some(Message::user(input)))
            .await
        {
            Ok(outcome) => outcome,
            Err(err) if err.kind() == RunErrorKind::Store => return Err(ForkFailure::Run(err)),
            Err(err) => return Err(failed(format!("the sub-agent failed: {err}")).into()),
        };
        Ok((
            render::fork_result(&fork.skill, agent.name(), &outcome.text),
            outcome.usage,
        ))
    }
}

/// Whether the call's argument `key` is a non-empty object or array (also
/// when the arguments came as JSON text).
fn has_entries(arguments: &Value, key: &str) -> bool {
    let non_empty = |v: &Value| match v {
        Value::Object(map) => !map.is_empty(),
        Value::Array(items) => !items.is_empty(),
        Value::Null => false,
        _ => true,
    };
    match arguments {
        Value::Object(map) => map.get(key).is_some_and(non_empty),
        Value::String(raw) => serde_json::from_str::<Value>(raw)
            .ok()
            .and_then(|v| v.get(key).map(non_empty))
            .unwrap_or(false),
        _ => false,
    }
}

/// The skills loaded since the last message the user wrote (a `$name`
/// mention's injection counts as a load, not as a user message): by a tag
/// on the message, or by a call of the load tool that found the skill
/// loaded already.
fn loaded_since_last_user_message(session: &Session) -> BTreeSet<String> {
    use skills_core::{InjectionAction, TaggedMessage as _};
    let messages = session.transcript();
    let start = messages
        .iter()
        .rposition(|m| m.role == Role::User && !m.has_metadata(crate::message::MENTION_KEY))
        .unwrap_or(0);
    let load_tool = session.agent().surface().load_tool();
    let mut loaded = BTreeSet::new();
    for message in &messages[start..] {
        for injection in message.skill_injections() {
            if injection.action == InjectionAction::Loaded {
                loaded.extend(injection.skills);
            }
        }
        if message.role == Role::Tool
            && !message.is_error
            && message.tool_name.as_deref() == Some(load_tool)
            && let Some(Value::String(skill)) = message.metadata.get(crate::message::TOUCH_KEY)
        {
            loaded.insert(skill.clone());
        }
    }
    loaded
}
