//! App-declared loads: the skills a session loads before its first model
//! call ([`AgentBuilder::preload`](crate::AgentBuilder::preload) and the
//! `preloaded` tier), written into the transcript as the model's own load
//! calls and their results, so the transcript stays the truth and the
//! prompt prefix only grows.
//!
//! Rules (after trpc-agent-go's caller-declared loads): names are deduplicated;
//! every name is checked before anything is written (unknown and `off` skills
//! are both "unknown", one needing setup names what is missing, more than
//! the agent's cap is refused), and every body is fetched before the
//! transcript changes, so a failure leaves the session as it was and the
//! model is not called. Unlike trpc-agent-go, the loads are visible as an
//! assistant message with one load call per skill and the tool results, the
//! same messages a model's own loads produce.

use std::sync::Arc;

use serde_json::json;
use skills_core::{Error, ErrorKind, Skill, Tier, describe_missing};

use crate::message::{Message, PRELOAD_KEY, ToolCall};

use super::Session;

impl Session {
    /// The skills the app declared for this session that are not loaded
    /// yet: the agent's [`preload`](crate::AgentBuilder::preload) list in
    /// its order, then skills whose tier is `preloaded`, in name order;
    /// each once.
    pub fn pending_preloads(&self) -> Vec<String> {
        let config = self.agent.config();
        let mut names: Vec<String> = Vec::new();
        let tiered = self
            .disclosure
            .policy
            .preloaded(self.disclosure.current.entries());
        for name in config
            .preload
            .iter()
            .map(String::as_str)
            .chain(tiered.into_iter().map(|n| n.as_str()))
        {
            if !names.iter().any(|n| n == name) && !self.is_loaded(name) {
                names.push(name.to_owned());
            }
        }
        names
    }

    /// Turns declared loads off for this session (a forked sub-agent's:
    /// the parent loaded them already).
    pub(crate) fn without_preloads(&mut self) {
        self.disclosure.preloads_off = true;
    }

    /// Checks the declared loads and fetches their skills, without touching
    /// the transcript. `mentioned` skills load with the same message and
    /// count against the cap.
    pub(super) async fn prepare_preloads(
        &self,
        names: &[String],
        mentioned: usize,
    ) -> Result<Vec<(String, Arc<Skill>)>, Error> {
        if let Some(cap) = self.agent.config().max_loaded
            && names.len() + mentioned > cap
        {
            return Err(Error::new(
                ErrorKind::Other,
                format!(
                    "{} skills are declared to load before the first model call ({}){}, \
                     more than the agent keeps loaded ({cap})",
                    names.len() + mentioned,
                    names.join(", "),
                    if mentioned > 0 {
                        format!(" with {mentioned} the message mentions")
                    } else {
                        String::new()
                    }
                ),
            ));
        }
        let policy = &self.disclosure.policy;
        for name in names {
            let meta = self
                .disclosure
                .current
                .get(name)
                .filter(|meta| policy.tier(meta) != Tier::Off)
                .ok_or_else(|| {
                    Error::new(
                        ErrorKind::SkillNotFound,
                        format!("a skill declared to load before the first model call is unknown: `{name}`"),
                    )
                })?;
            if let Some(missing) = policy.missing(meta.name.as_str()) {
                return Err(Error::new(
                    ErrorKind::InvalidSkill,
                    format!(
                        "the skill `{name}`, declared to load before the first model call, \
                         needs setup on this machine: missing {}",
                        describe_missing(missing)
                    ),
                ));
            }
        }
        let mut fetched = Vec::with_capacity(names.len());
        for name in names {
            // The provider's error (unknown, I/O) stops every load.
            fetched.push((name.clone(), self.agent.provider().get(name).await?));
        }
        Ok(fetched)
    }

    /// Writes the prepared loads: one assistant message calling the load
    /// tool once per skill, then each call's result, made by the same code
    /// as a model's own call (events, lifetime and cap included) from the
    /// skills fetched by [`Session::prepare_preloads`], so nothing can fail
    /// half-way. The assistant message is marked ([`PRELOAD_KEY`]): it is
    /// not an answer of the model (lifetimes and cache breakpoints skip it).
    pub(super) async fn write_preloads(&mut self, skills: Vec<(String, Arc<Skill>)>) {
        if skills.is_empty() {
            return;
        }
        let surface = self.agent.surface().clone();
        let base = self.transcript.messages().len();
        let calls: Vec<ToolCall> = skills
            .iter()
            .enumerate()
            .map(|(i, (name, _))| ToolCall {
                id: format!("preload-{base}-{i}"),
                name: surface.load_tool().to_owned(),
                arguments: json!({ surface.load_argument(): name }),
            })
            .collect();
        // The load tool must be offered for the calls to make sense.
        self.disclosure.skills_on = true;
        self.push(
            Message::assistant_with_calls("", calls.clone())
                .with_metadata(PRELOAD_KEY, serde_json::Value::Bool(true)),
        );
        self.disclosure.prefetched = skills.into_iter().collect();
        for call in &calls {
            self.dispatch(call).await;
        }
        self.disclosure.prefetched.clear();
    }
}
