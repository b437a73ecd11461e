//! The session's tool table: the surface's skill tool specs, built once
//! (their schemas and descriptions never change within a session), and the
//! lookup from a tool name to its operation.

use crate::config::Agent;
use crate::surface::{Operation, tool_spec};
use crate::tool::ToolSpec;

/// The skill tools of one session.
#[derive(Debug)]
pub(super) struct ToolTable {
    skill: Vec<ToolSpec>,
}

impl ToolTable {
    /// The skill tools of `agent`'s surface; `catalog` is the rendered
    /// catalog, for an Eino tool that carries it in its description.
    pub(super) fn new(agent: &Agent, catalog: &str) -> Self {
        let surface = agent.surface();
        let skill = surface
            .tools(agent.has_search())
            .into_iter()
            .map(|(name, op)| tool_spec(surface, &name, op, catalog, ""))
            .collect();
        Self { skill }
    }

    /// The skill tools' specs, sorted by name.
    pub(super) fn skill_specs(&self) -> &[ToolSpec] {
        &self.skill
    }

    /// The operation behind `tool`: a skill tool of the surface, or one of
    /// the agent's run tools.
    pub(super) fn operation(agent: &Agent, tool: &str) -> Option<Operation> {
        agent
            .surface()
            .operation(tool, agent.has_search())
            .or_else(|| agent.run_operation(tool))
    }
}
