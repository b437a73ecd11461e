//! What the agent loop asks a session: which calls are user tools, which
//! loads run in a sub-agent, what the loaded skills allow, and how to close
//! calls a cancelled run left without a result.

use skills_core::ContextMode;

use std::collections::BTreeSet;

use skills_core::SkillMetadata;

use crate::message::{MENTION_KEY, Role, ToolCall};
use crate::runner::ToolPattern;
use crate::surface::{LoadSkillArgs, Operation, SkillArgs, SkillLoadArgs, Surface, expected_args};
use crate::tool::parse_args;

use super::Session;

/// A load the model asked for, of a skill that runs in a sub-agent
/// (`context: fork` or `fork_with_context`, F-AGT-5).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ForkRequest {
    /// The skill.
    pub skill: String,
    /// Fresh sub-agent, or one with a copy of the conversation.
    pub mode: ContextMode,
    /// The skill's `agent:` (resolved through an agent hub).
    pub agent: Option<String>,
    /// The skill's `model:` (resolved through a model hub; `inherit` means
    /// the parent's model, as does no `model:`).
    pub model: Option<String>,
}

impl Session {
    /// Whether `tool` is a skill tool of this session's surface (always
    /// allowed by a tool policy).
    pub fn is_skill_tool(&self, tool: &str) -> bool {
        self.agent
            .surface()
            .operation(tool, self.agent.has_search())
            .is_some()
    }

    /// Whether a call to `tool` goes to the caller (a user tool, or a pool
    /// tool a loaded skill exposes): [`Session::handle_tool_call`] answers
    /// [`Dispatch::External`](crate::Dispatch::External) for exactly these.
    pub fn is_user_tool(&self, tool: &str) -> bool {
        if self.is_skill_tool(tool) {
            return false;
        }
        self.agent.config().tools.iter().any(|t| t.name == tool)
            || (!self.is_run_tool(tool) && self.exposed_pool().contains(tool))
    }

    /// Whether `tool` is one of the agent's run tools (run, exec, …).
    pub(super) fn is_run_tool(&self, tool: &str) -> bool {
        self.agent.run_operation(tool).is_some()
    }

    /// When `call` loads a skill that runs in a sub-agent, what to run;
    /// `None` for every other call (including bad arguments and skills the
    /// model may not load: [`Session::handle_tool_call`] answers those).
    pub fn fork_request(&self, call: &ToolCall) -> Option<ForkRequest> {
        let surface = self.agent.surface();
        if surface.operation(&call.name, self.agent.has_search()) != Some(Operation::Load) {
            return None;
        }
        let expected = expected_args(surface, Operation::Load);
        let name = match surface {
            Surface::Default => {
                parse_args::<LoadSkillArgs>(&call.name, &call.arguments, expected)
                    .ok()?
                    .name
            }
            Surface::Trpc => {
                parse_args::<SkillLoadArgs>(&call.name, &call.arguments, expected)
                    .ok()?
                    .skill
            }
            Surface::Eino(_) => {
                parse_args::<SkillArgs>(&call.name, &call.arguments, expected)
                    .ok()?
                    .skill
            }
        };
        let meta = self.meta(&name, true).ok()?;
        let mode = meta.extensions.context?;
        Some(ForkRequest {
            skill: meta.name.as_str().to_owned(),
            mode,
            agent: meta.extensions.agent.clone(),
            model: meta.extensions.model.clone(),
        })
    }

    /// The metadata of `skill` in the latest catalog this session saw.
    pub fn skill_metadata(&self, skill: &str) -> Option<&SkillMetadata> {
        self.disclosure.current.get(skill)
    }

    /// The text of the latest user message (the task a forked skill gets),
    /// skipping the injections of `$name` mentions.
    pub fn last_user_text(&self) -> Option<&str> {
        self.transcript
            .messages()
            .iter()
            .rev()
            .find(|m| m.role == Role::User && !m.has_metadata(MENTION_KEY))
            .map(|m| m.content.as_str())
    }

    /// Appends an error result for every tool call of the latest assistant
    /// message that has no result yet (a run cancelled between a model
    /// answer and its tool results leaves such calls, and providers refuse
    /// a conversation with unanswered calls). Returns how many it closed.
    pub fn close_unanswered_calls(&mut self, reason: &str) -> usize {
        let Some(at) = self
            .transcript
            .messages()
            .iter()
            .rposition(|m| m.role == Role::Assistant)
        else {
            return 0;
        };
        let answered: BTreeSet<&str> = self.transcript.messages()[at + 1..]
            .iter()
            .filter_map(|m| m.tool_call_id.as_deref())
            .collect();
        let open: Vec<(String, String)> = self.transcript.messages()[at]
            .tool_calls
            .iter()
            .filter(|c| !answered.contains(c.id.as_str()))
            .map(|c| (c.id.clone(), c.name.clone()))
            .collect();
        for (id, name) in &open {
            self.push_tool_result(id, name, format!("Error: {reason}"), true);
        }
        open.len()
    }

    /// The `allowed-tools` of the loaded skills, in load order: each skill
    /// that lists tools with its entries parsed as [`ToolPattern`]s
    /// (`Bash(git:*)` stays a pattern over `Bash`'s argument; an entry that
    /// does not parse grants nothing).
    pub fn allowed_tools(&self) -> Vec<(String, Vec<ToolPattern>)> {
        self.loaded_order()
            .into_iter()
            .filter_map(|skill| {
                let meta = self.disclosure.current.get(skill)?;
                (!meta.allowed_tools.is_empty()).then(|| {
                    let patterns = meta
                        .allowed_tools
                        .iter()
                        .filter_map(|entry| ToolPattern::parse(entry))
                        .collect();
                    (skill.to_owned(), patterns)
                })
            })
            .collect()
    }
}
