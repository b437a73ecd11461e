//! Tool dispatch: which tool a call is for, the operation table of the skill
//! tools, and the checks every operation shares.

use std::sync::Arc;

use serde_json::json;
use skills_core::{Skill, SkillMetadata};
use tracing::Instrument as _;
use tracing::field::Empty;

use crate::config::{CatalogMode, Materialization};
use crate::library::{Library, operation_span, record, visible};
use crate::message::{Message, Role, STAGED_KEY, ToolCall};
use crate::render;
use crate::run_tools::RunContext;
use crate::surface::{
    NoArgs, Operation, ReadSkillFileArgs, SearchArgs, SelectDocsArgs, SelectToolsArgs, Surface,
    TrpcSkillArgs, expected_args,
};
use crate::tool::{ToolError, ToolErrorKind, clip, parse_args};

use super::{Dispatch, Session, ToolTable};

impl Session {
    /// Handles one tool call from the model. Skill tools and run tools
    /// run here and their result is appended; a user tool is left to the
    /// caller ([`Dispatch::External`]); a pool tool that no loaded skill
    /// exposes, or an unknown tool, gets an error result that says what is
    /// available. Never panics on any argument value.
    pub async fn handle_tool_call(&mut self, call: &ToolCall) -> Dispatch {
        // Only the app's declared loads take prefetched skills, should an
        // interrupted preload have left any.
        self.disclosure.prefetched.clear();
        let span = tracing::debug_span!(
            "skills.tool_call",
            agent = %self.agent.name(),
            tool = %clip(&call.name),
            call_id = %clip(&call.id),
            dispatch = Empty,
            is_error = Empty,
            bytes = Empty,
        );
        let dispatch = self.dispatch(call).instrument(span.clone()).await;
        match &dispatch {
            Dispatch::Handled(message) => {
                span.record("dispatch", "handled");
                span.record("is_error", message.is_error);
                span.record("bytes", message.content.len());
            }
            Dispatch::External => {
                span.record("dispatch", "external");
            }
        }
        dispatch
    }

    pub(super) async fn dispatch(&mut self, call: &ToolCall) -> Dispatch {
        let surface = self.agent.surface().clone();
        if let Some(op) = ToolTable::operation(&self.agent, &call.name) {
            let outcome = self.run_operation(&surface, op, call).await;
            let message = match outcome {
                Ok(message) => message,
                Err(err) => {
                    tracing::debug!(
                        tool = %clip(&call.name),
                        kind = err.kind().as_str(),
                        "skill tool call refused"
                    );
                    Message::tool_error(&call.id, &call.name, format!("Error: {err}"))
                }
            };
            self.push(message.clone());
            return Dispatch::Handled(message);
        }
        if self.is_user_tool(&call.name) {
            return Dispatch::External;
        }
        let config = self.agent.config();
        let text = if config.tool_pool.iter().any(|t| t.name == call.name) {
            let declaring: Vec<&str> = visible(&self.disclosure.current, &self.disclosure.policy)
                .filter(|m| m.declared_tools.contains(&call.name))
                .map(|m| m.name.as_str())
                .collect();
            if declaring.is_empty() && matches!(self.agent.surface(), Surface::Trpc) {
                format!(
                    "Error: the tool `{}` is not active. No skill declares it; select it for a \
                     loaded skill with `skill_select_tools` if the task needs it.",
                    call.name
                )
            } else if declaring.is_empty() {
                format!(
                    "Error: the tool `{}` is not active. No skill declares it; ask the user \
                     whether to enable it.",
                    call.name
                )
            } else {
                format!(
                    "Error: the tool `{}` is not active. Load a skill that declares it first: {}.",
                    call.name,
                    declaring.join(", ")
                )
            }
        } else {
            let names: Vec<String> = self.tools().into_iter().map(|t| t.name).collect();
            format!(
                "Error: there is no tool named `{}`. Available tools: {}.",
                clip(&call.name),
                names.join(", ")
            )
        };
        let message = Message::tool_error(&call.id, &call.name, text);
        self.push(message.clone());
        Dispatch::Handled(message)
    }

    pub(super) async fn run_operation(
        &mut self,
        surface: &Surface,
        op: Operation,
        call: &ToolCall,
    ) -> Result<Message, ToolError> {
        let span = operation_span(op);
        let result = self
            .operation(surface, op, call)
            .instrument(span.clone())
            .await;
        if let Ok(message) = &result {
            span.record("bytes", message.content.len());
        }
        result
    }

    pub(super) async fn operation(
        &mut self,
        surface: &Surface,
        op: Operation,
        call: &ToolCall,
    ) -> Result<Message, ToolError> {
        let expected = expected_args(surface, op);
        let tool = call.name.as_str();
        match op {
            Operation::Load => {
                let (skill, docs, all) = self.library().load_args(tool, &call.arguments)?;
                self.op_load(call, &skill, docs, all).await
            }
            Operation::Read => {
                let a: ReadSkillFileArgs = parse_args(tool, &call.arguments, expected)?;
                self.op_read(call, &a).await
            }
            Operation::List => {
                let _: NoArgs = parse_args(tool, &call.arguments, expected)?;
                Ok(Message::tool_result(&call.id, tool, self.library().list()))
            }
            Operation::ListDocs => {
                let a: TrpcSkillArgs = parse_args(tool, &call.arguments, expected)?;
                let text = self
                    .library()
                    .list_docs_for(&a.skill, self.is_loaded(&a.skill))
                    .await?;
                Ok(Message::tool_result(&call.id, tool, text))
            }
            Operation::SelectDocs => {
                let a: SelectDocsArgs = parse_args(tool, &call.arguments, expected)?;
                self.op_select_docs(call, a).await
            }
            Operation::ListTools => {
                // As trpc-agent: the tools the skill declares, in the order
                // it declares them (whether or not this agent has them).
                let a: TrpcSkillArgs = parse_args(tool, &call.arguments, expected)?;
                let meta = self.meta(&a.skill, false)?;
                record("skill", meta.name.as_str());
                let mut seen = std::collections::BTreeSet::new();
                let tools = meta
                    .declared_tools
                    .iter()
                    .filter(|t| seen.insert(t.as_str()));
                Ok(Message::tool_result(
                    &call.id,
                    tool,
                    render::json_names(tools),
                ))
            }
            Operation::SelectTools => {
                let a: SelectToolsArgs = parse_args(tool, &call.arguments, expected)?;
                self.op_select_tools(call, a)
            }
            Operation::Search => {
                let a: SearchArgs = parse_args(tool, &call.arguments, expected)?;
                self.op_search(call, a).await
            }
            Operation::Run
            | Operation::Exec
            | Operation::WriteStdin
            | Operation::Poll
            | Operation::Kill => self.op_run(op, call).await,
        }
    }

    /// The stateless operations over the session's current catalog.
    pub(super) fn library(&self) -> Library<'_> {
        let agent = &self.agent;
        let library = Library::new(agent.provider(), &self.disclosure.current, agent.surface())
            .on_demand(matches!(agent.config().catalog, CatalogMode::OnDemand))
            .visibility(&self.disclosure.policy);
        if agent.has_search() {
            library.search(agent.search_cache(), self.disclosure.listed_at)
        } else {
            library
        }
    }

    /// The metadata of a skill the model may use (see [`Library::meta`]).
    pub(super) fn meta(&self, name: &str, for_load: bool) -> Result<SkillMetadata, ToolError> {
        self.library().meta(name, for_load, self.is_loaded(name))
    }

    /// The metadata and name of a skill that must be loaded already (doc and
    /// tool selection).
    pub(super) fn loaded_meta(&self, skill: &str) -> Result<(SkillMetadata, String), ToolError> {
        let meta = self.meta(skill, false)?;
        let name = meta.name.as_str().to_owned();
        if !self.is_loaded(&name) {
            return Err(not_loaded(&name, self.agent.surface().load_tool()));
        }
        Ok((meta, name))
    }

    /// Whether bodies live in the system block (legacy materialization).
    pub(super) fn legacy(&self) -> bool {
        self.agent.config().materialization == Materialization::SystemMessage
    }

    /// The skill `name`, shared with the provider's cache.
    pub(super) async fn fetch(
        &mut self,
        name: &str,
        for_load: bool,
    ) -> Result<Arc<Skill>, ToolError> {
        // A declared load: checked and fetched before the transcript changed.
        if let Some(skill) = self.disclosure.prefetched.remove(name) {
            return Ok(skill);
        }
        self.library()
            .fetch(name, for_load, self.is_loaded(name))
            .await
    }
}

pub(super) fn not_loaded(name: &str, load_tool: &str) -> ToolError {
    ToolError::new(
        ToolErrorKind::NotLoaded,
        format!("the skill `{name}` is not loaded; call `{load_tool}` with it first."),
    )
}

impl Session {
    /// A run tool's call: the runtime runs it in this session's workspace.
    async fn op_run(&mut self, op: Operation, call: &ToolCall) -> Result<Message, ToolError> {
        let Some(run) = self.agent.inner.run.clone() else {
            return Err(ToolError::new(
                ToolErrorKind::UnknownTool,
                format!("`{}` needs a runtime", clip(&call.name)),
            ));
        };
        let loaded = self.loaded();
        let (pending, staged_before) = self.pending_attachments();
        let context = RunContext {
            session_id: &self.id,
            loaded: &loaded,
            provider: self.agent.provider(),
            surface: self.agent.surface(),
            attachments: &pending,
        };
        let answer = run.call(&context, op, &call.name, &call.arguments).await;
        let message = match answer.result {
            Ok(text) => Message::tool_result(&call.id, &call.name, text),
            Err(err) if answer.staged == 0 => return Err(err),
            Err(err) => Message::tool_error(&call.id, &call.name, format!("Error: {err}")),
        };
        Ok(if answer.staged == 0 {
            message
        } else {
            message.with_metadata(STAGED_KEY, json!(staged_before + answer.staged))
        })
    }

    /// The attachments of the conversation's user messages that no run has
    /// staged yet, and how many were (the highest count a run tool result
    /// recorded: attachments are staged in transcript order, once each).
    fn pending_attachments(&self) -> (Vec<skills_workspace::Attachment>, usize) {
        let messages = self.transcript.messages();
        let staged = messages
            .iter()
            .filter_map(|m| m.metadata.get(STAGED_KEY)?.as_u64())
            .max()
            .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
        let pending = messages
            .iter()
            .filter(|m| m.role == Role::User)
            .flat_map(|m| &m.attachments)
            .skip(staged)
            .map(|a| skills_workspace::Attachment::new(a.name(), a.bytes()))
            .collect();
        (pending, staged)
    }
}
