//! Building requests (F-AGT-1, F-AGT-2): the system blocks, the tool list, the
//! transcript view and the cache breakpoints.

use std::collections::BTreeSet;

use tracing::field::Empty;

use crate::config::{Lifetime, Materialization};
use crate::message::{CATALOG_DELTA_KEY, COMPACTION_KEY, Message, Role};
use crate::render;
use crate::request::{ModelRequest, SystemBlock};
use crate::tool::ToolSpec;

use super::Session;
use crate::model::Model;
use crate::request::CacheStrategy;

impl Session {
    /// The index of the first transcript message in view.
    pub(super) fn view_start(&self) -> usize {
        let compaction = self
            .transcript
            .messages()
            .iter()
            .rposition(|m| m.has_metadata(COMPACTION_KEY))
            .unwrap_or(0);
        let mut start = match self.history_limit {
            Some(n) => compaction.max(self.transcript.len().saturating_sub(n)),
            None => compaction,
        };
        if self.history_limit.is_some() {
            // Cut at a user or system message when the window has one: a tool
            // result whose call fell out of view would be rejected, and some
            // providers want the conversation to open with the user.
            if let Some(offset) = self.transcript.messages()[start..]
                .iter()
                .position(|m| matches!(m.role, Role::User | Role::System))
            {
                return start + offset;
            }
        }
        while self
            .transcript
            .messages()
            .get(start)
            .is_some_and(|m| m.role == Role::Tool)
        {
            start += 1;
        }
        start
    }

    /// The names of the agent's pool tools.
    pub(super) fn pool_names(&self) -> BTreeSet<&str> {
        self.agent
            .config()
            .tool_pool
            .iter()
            .map(|t| t.name.as_str())
            .collect()
    }

    /// The pool tools exposed now: those the loaded skills declare (or had
    /// selected), that exist in the pool.
    pub(super) fn exposed_pool(&self) -> BTreeSet<String> {
        let pool = self.pool_names();
        let mut out = BTreeSet::new();
        for skill in self.loaded_order() {
            let wanted: Vec<String> = match self.transcript.state().selected_tools(skill) {
                Some(selected) => selected.iter().cloned().collect(),
                None => self
                    .disclosure
                    .current
                    .get(skill)
                    .map(|m| m.declared_tools.clone())
                    .unwrap_or_default(),
            };
            out.extend(wanted.into_iter().filter(|t| pool.contains(t.as_str())));
        }
        out
    }

    /// The tools of the next request, sorted by name. Without any skill
    /// (none the model can see, none the user can invoke) the skill tools are
    /// left out; they appear with the first skill a delta announces, and then
    /// stay.
    pub fn tools(&self) -> Vec<ToolSpec> {
        let config = self.agent.config();
        // No skills, no skill tools (F-AGT-1: skills are a no-op when none
        // are configured).
        let mut tools: Vec<ToolSpec> = if self.disclosure.skills_on {
            self.tools.skill_specs().to_vec()
        } else {
            Vec::new()
        };
        tools.extend(config.tools.iter().cloned());
        tools.extend(self.agent.inner.run_specs.iter().cloned());
        let exposed = self.exposed_pool();
        tools.extend(
            config
                .tool_pool
                .iter()
                .filter(|t| exposed.contains(&t.name))
                .cloned(),
        );
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        tools
    }

    /// Builds the next request for `model` (F-AGT-1): at most two system
    /// blocks (the stable one first), tools sorted by name, the transcript
    /// view, and the cache breakpoints `model`'s provider needs (F-AGT-2:
    /// [`Model::cache_strategy`], unless the agent was built with
    /// [`AgentBuilder::cache`](crate::AgentBuilder::cache)). The
    /// [`Runner`](crate::Runner) builds every request this way.
    ///
    /// Building has no side effects: building again with nothing appended in
    /// between gives the same request, byte for byte (a retry after a failed
    /// model call, say). With [`Lifetime::Once`](crate::Lifetime::Once), call
    /// [`Session::retire_once_loads`] before building each request (the
    /// [`Runner`](crate::Runner) does).
    pub fn build_request_for<M: Model + ?Sized>(&self, model: &M) -> ModelRequest {
        self.build_request_with(self.agent.cache_strategy_for(model))
    }

    /// Builds the next request without knowing the model: like
    /// [`Session::build_request_for`], with the breakpoints of the agent's
    /// [`AgentBuilder::cache`](crate::AgentBuilder::cache) strategy, else
    /// none ([`CacheStrategy::AutomaticPrefix`]). Use
    /// [`Session::build_request_for`] when the request goes to a [`Model`]:
    /// an Anthropic model caches only at breakpoints.
    pub fn build_request(&self) -> ModelRequest {
        self.build_request_with(self.agent.cache_override().unwrap_or_default())
    }

    fn build_request_with(&self, cache: CacheStrategy) -> ModelRequest {
        let span = tracing::debug_span!(
            "skills.build_request",
            agent = %self.agent.name(),
            cache = ?cache,
            messages = Empty,
            tools = Empty,
            system_blocks = Empty,
            bytes = Empty,
        );
        let _entered = span.enter();
        let request = self.build_request_inner(cache);
        if !span.is_disabled() {
            let bytes = request.system.iter().map(|b| b.text.len()).sum::<usize>()
                + request
                    .messages
                    .iter()
                    .map(|m| m.content.len())
                    .sum::<usize>();
            span.record("messages", request.messages.len());
            span.record("tools", request.tools.len());
            span.record("system_blocks", request.system.len());
            span.record("bytes", bytes);
        }
        request
    }

    /// Retires the `once` loads whose answer came (F-DIS-10): a `once` load
    /// counts for the requests up to the model's first answer after it (and
    /// that answer's tool calls), and stops counting from the next request
    /// on. Call it before building each request; it returns the skills it
    /// retired (none when the lifetime is not `once`). The release is
    /// recorded on the next message appended, so a replay of the transcript
    /// reaches the same state. Calling it again changes nothing.
    pub fn retire_once_loads(&mut self) -> Vec<String> {
        if self.agent.config().lifetime != Lifetime::Once {
            return Vec::new();
        }
        let last_answer = self.transcript.messages().iter().rposition(is_answer);
        let due: Vec<String> = self
            .loaded_order()
            .into_iter()
            .filter(|name| {
                let loaded_at = self.transcript.state().loaded_at(name);
                matches!((loaded_at, last_answer), (Some(at), Some(answer)) if at < answer)
            })
            .map(str::to_owned)
            .collect();
        self.transcript.retire(&due);
        due
    }

    pub(super) fn build_request_inner(&self, cache: CacheStrategy) -> ModelRequest {
        let start = self.view_start();
        let mut system = Vec::with_capacity(2);
        if !self.disclosure.stable_system.is_empty() {
            system.push(SystemBlock {
                text: self.disclosure.stable_system.clone(),
                stable: true,
            });
        }
        if let Some(dynamic) = self.dynamic_block(start) {
            system.push(SystemBlock {
                text: dynamic,
                stable: false,
            });
        }
        let messages: Vec<Message> = self.transcript.messages()[start..].to_vec();
        let mut request = ModelRequest {
            system,
            tools: self.tools(),
            messages,
            cache_breakpoints: Vec::new(),
        };
        // The previous request is the one the latest answer replied to: it
        // ended just before that answer (derived from the transcript, so a
        // rebuild, a resume or a replay places the same breakpoint).
        let previous = self
            .previous_request_end()
            .and_then(|abs| abs.checked_sub(start));
        request.place_breakpoints(cache, previous);
        request
    }

    /// The dynamic system block: legacy bodies, or the fallback for loaded
    /// skills whose loading message is out of view.
    pub(super) fn dynamic_block(&self, start: usize) -> Option<String> {
        let skills = self.loaded_block(start);
        // A delta notice that fell out of view (history limit) is restated,
        // so the model never works from a stale catalog.
        // (A compaction restates every change after its summary, so only a
        // notice newer than the last compaction can be missing.)
        let last_compaction = self
            .transcript
            .messages()
            .iter()
            .rposition(|m| m.has_metadata(COMPACTION_KEY));
        let delta_hidden = self
            .transcript
            .messages()
            .get(..start)
            .and_then(|hidden| {
                hidden
                    .iter()
                    .rposition(|m| m.has_metadata(CATALOG_DELTA_KEY))
            })
            .is_some_and(|at| last_compaction.is_none_or(|c| c < at));
        let delta = if delta_hidden {
            self.delta_since_pinned().map(|m| m.content)
        } else {
            None
        };
        match (skills, delta) {
            (None, None) => None,
            (Some(text), None) | (None, Some(text)) => Some(text),
            (Some(skills), Some(delta)) => Some(format!("{skills}\n\n{delta}")),
        }
    }

    /// Legacy bodies, or the fallback for loaded skills whose loading message
    /// is out of view.
    pub(super) fn loaded_block(&self, start: usize) -> Option<String> {
        let order: Vec<&str> = self.loaded_order();
        match self.agent.config().materialization {
            Materialization::SystemMessage => {
                // Load order, not use order: reading a file must not reshuffle
                // the block (and break the cache behind it).
                let mut order = order;
                order.sort_by_key(|n| self.transcript.state().loaded_at(n));
                let bodies: Vec<&str> = order
                    .iter()
                    .filter_map(|n| self.disclosure.bodies.get(*n).map(String::as_str))
                    .collect();
                (!bodies.is_empty()).then(|| render::legacy_block(&bodies))
            }
            Materialization::ToolResult => {
                let bodies: Vec<&str> = order
                    .iter()
                    .filter(|n| {
                        self.transcript
                            .state()
                            .loaded_at(n)
                            .is_some_and(|at| at < start)
                    })
                    .filter_map(|n| self.disclosure.bodies.get(*n).map(String::as_str))
                    .collect();
                (!bodies.is_empty()).then(|| render::fallback_block(&bodies))
            }
        }
    }

    /// Transcript index of the last message of the request the latest answer
    /// replied to.
    fn previous_request_end(&self) -> Option<usize> {
        self.transcript
            .messages()
            .iter()
            .rposition(is_answer)
            .and_then(|i| i.checked_sub(1))
    }
}

/// Whether `message` is an answer of the model (not the app's declared
/// loads, which are written as an assistant message).
fn is_answer(message: &crate::message::Message) -> bool {
    message.role == Role::Assistant && !message.has_metadata(crate::message::PRELOAD_KEY)
}
