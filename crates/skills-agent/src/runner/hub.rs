//! Hubs that resolve the `agent:` and `model:` names skills ask for
//! (F-AGT-5), and the allowed-tools policy (F-AGT-7).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use skills_core::{MaybeSend, MaybeSync};

use crate::config::Agent;
use crate::message::ToolCall;
use crate::model::Model;

/// Resolves a model by the name a skill's `model:` gives.
pub trait ModelHub: MaybeSend + MaybeSync + fmt::Debug {
    /// The model called `name`, if the hub has one.
    fn model(&self, name: &str) -> Option<Arc<dyn Model>>;
}

/// Resolves a sub-agent by the name a skill's `agent:` gives.
pub trait AgentHub: MaybeSend + MaybeSync + fmt::Debug {
    /// The agent called `name`, if the hub has one.
    fn agent(&self, name: &str) -> Option<Agent>;
}

/// A [`ModelHub`] over a fixed map of names.
#[derive(Debug, Default, Clone)]
pub struct ModelMap(BTreeMap<String, Arc<dyn Model>>);

impl ModelMap {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `model` under `name`.
    #[must_use]
    pub fn with(mut self, name: impl Into<String>, model: Arc<dyn Model>) -> Self {
        self.0.insert(name.into(), model);
        self
    }
}

impl ModelHub for ModelMap {
    fn model(&self, name: &str) -> Option<Arc<dyn Model>> {
        self.0.get(name).cloned()
    }
}

/// An [`AgentHub`] over a fixed map of names.
#[derive(Debug, Default, Clone)]
pub struct AgentMap(BTreeMap<String, Agent>);

impl AgentMap {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `agent` under `name`.
    #[must_use]
    pub fn with(mut self, name: impl Into<String>, agent: Agent) -> Self {
        self.0.insert(name.into(), agent);
        self
    }
}

impl AgentHub for AgentMap {
    fn agent(&self, name: &str) -> Option<Agent> {
        self.0.get(name).cloned()
    }
}

/// Asks a person whether a tool call may run (see [`ToolPolicy::PreApprove`]).
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
pub trait Approver: MaybeSend + MaybeSync + fmt::Debug {
    /// Whether `call` may run. `loaded` names the skills loaded right now
    /// (none of which lists the tool in `allowed-tools`).
    async fn approve(&self, call: &ToolCall, loaded: &[String]) -> bool;
}

/// What the `allowed-tools` field of loaded skills does (F-AGT-7). Skill
/// tools (load, read, …) are never affected. Entries are
/// [`ToolPattern`](super::ToolPattern)s: `Bash(git:*)` covers only `Bash`
/// calls whose matched argument (`command` by default, see
/// [`RunnerBuilder::policy_argument`](super::RunnerBuilder::policy_argument))
/// is a `git` command; how long a grant lasts is
/// [`RunnerBuilder::grant_lifetime`](super::RunnerBuilder::grant_lifetime).
///
/// This is a policy, not a sandbox: it decides which tool calls of the model
/// the runner passes on. It cannot stop what a tool itself does once it runs,
/// and it trusts the skill's own `allowed-tools` list.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub enum ToolPolicy {
    /// `allowed-tools` is carried but has no effect (the default).
    #[default]
    Off,
    /// Every non-skill tool call needs the approver's yes, except tools that
    /// a loaded skill's `allowed-tools` patterns cover: those are
    /// pre-approved while the grant lasts.
    PreApprove(Arc<dyn Approver>),
    /// While a loaded skill lists tools in `allowed-tools` (and its grant
    /// lasts), calls no listed pattern covers are refused with a tool error
    /// naming the allowed patterns.
    /// The tool list the model sees does not change (that would break the
    /// prompt cache); the refusal says what is allowed instead.
    Restrict,
}
