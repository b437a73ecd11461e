//! Turns: user messages (with `$name` mentions), replies, user tool results,
//! lifetime releases and the loaded-skill cap.

use serde_json::Value;
use skills_core::{Error, ErrorKind, SkillInjection};

use crate::config::{Lifetime, Materialization};
use crate::mention::mentions;
use crate::message::{MENTION_KEY, Message};
use crate::render;

use super::{Event, ReleaseReason, Session};

impl Session {
    /// Appends a user message. Ends `turn`-lifetime loads, then injects each
    /// skill the text mentions as `$name` (once; F-DIS-14).
    ///
    /// # Errors
    /// Never for unknown mentions (they are ignored); only a provider failure
    /// while fetching a mentioned skill's body.
    pub async fn push_user(&mut self, text: impl Into<String>) -> Result<(), Error> {
        self.push_user_message(Message::user(text)).await
    }

    /// [`Session::push_user`] for a whole user message: its text, metadata
    /// and attached files ([`Message::user_with_attachments`]). The model
    /// sees the attachments with the message; the run tools stage them into
    /// `work/inputs/` before the next command runs.
    ///
    /// # Errors
    /// [`ErrorKind::Unsupported`] for a message whose role is not
    /// [`Role::User`](crate::Role::User) (use `push_assistant` or
    /// `push_tool_result`), or tool calls on it; otherwise as
    /// [`Session::push_user`].
    pub async fn push_user_message(&mut self, mut message: Message) -> Result<(), Error> {
        if message.role != crate::Role::User
            || !message.tool_calls.is_empty()
            || message.tool_call_id.is_some()
        {
            return Err(Error::new(
                ErrorKind::Unsupported,
                "push_user_message takes a user message without tool calls",
            ));
        }
        message.is_error = false;
        let turn_ends = self.agent.config().lifetime == Lifetime::Turn;
        // Fetch every mentioned body first: a provider failure then leaves
        // the transcript untouched, so the caller can simply retry.
        let mut invoked = Vec::new();
        for name in mentions(&message.content) {
            let Some(meta) = self.disclosure.current.get(&name) else {
                continue;
            };
            if meta.extensions.user_invocable == Some(false)
                || self.disclosure.policy.tier(meta) == skills_core::Tier::Off
                || (!turn_ends && self.is_loaded(&name))
            {
                continue;
            }
            match self.agent.provider().get(&name).await {
                Ok(skill) => invoked.push((name, skill)),
                Err(err) if err.kind() == ErrorKind::SkillNotFound => {}
                Err(err) => return Err(err),
            }
        }
        // Declared loads happen before the first model call: checked and
        // fetched before anything is written (the mentioned skills load by
        // their mention and count against the cap), written right after the
        // message, before the mentions' injections.
        let first = !self.disclosure.preloads_off
            && self
                .transcript
                .messages()
                .iter()
                .all(|m| m.role != crate::Role::Assistant);
        let preloads = if first {
            let mentioned: Vec<&str> = invoked.iter().map(|(n, _)| n.as_str()).collect();
            let names: Vec<String> = self
                .pending_preloads()
                .into_iter()
                .filter(|n| !mentioned.contains(&n.as_str()))
                .collect();
            self.prepare_preloads(&names, mentioned.len()).await?
        } else {
            Vec::new()
        };
        if turn_ends {
            self.release_all(&mut message, ReleaseReason::Lifetime);
        }
        self.push(message);
        self.write_preloads(preloads).await;
        for (name, skill) in invoked {
            let text = crate::library::loaded_body(self.agent.surface(), &skill);
            let injected_text = match self.agent.config().materialization {
                Materialization::ToolResult => render::mention_injection(&skill, &text),
                Materialization::SystemMessage => render::mention_stub(&name),
            };
            let mut injected = Message::user(injected_text)
                .with_metadata(MENTION_KEY, Value::String(name.clone()))
                .tagged(&SkillInjection::loaded([name.clone()]));
            self.enforce_cap(&mut injected, &name);
            self.disclosure.bodies.insert(name.clone(), text);
            self.push(injected);
            self.events.push(Event::SkillLoaded {
                skill: name,
                by_mention: true,
            });
        }
        Ok(())
    }

    /// Appends the model's reply (call [`Session::handle_tool_call`] for
    /// each of its tool calls afterwards).
    pub fn push_assistant(&mut self, message: Message) {
        self.push(message);
    }

    /// Appends the result of a user tool the caller ran.
    pub fn push_tool_result(
        &mut self,
        call_id: impl Into<String>,
        tool: impl Into<String>,
        content: impl Into<String>,
        is_error: bool,
    ) {
        let message = if is_error {
            Message::tool_error(call_id, tool, content)
        } else {
            Message::tool_result(call_id, tool, content)
        };
        self.push(message);
    }

    pub(super) fn release_all(&mut self, message: &mut Message, reason: ReleaseReason) {
        let all: Vec<String> = self.loaded_order().into_iter().map(str::to_owned).collect();
        if all.is_empty() {
            return;
        }
        message.tag(&SkillInjection::released(all.clone()));
        for skill in all {
            self.events.push(Event::SkillReleased { skill, reason });
        }
    }

    /// Tags `message` with releases that make room for `incoming`.
    pub(super) fn enforce_cap(&mut self, message: &mut Message, incoming: &str) {
        let Some(cap) = self.agent.config().max_loaded else {
            return;
        };
        let others: Vec<&str> = self
            .loaded_order()
            .into_iter()
            .filter(|n| *n != incoming)
            .collect();
        let excess = (others.len() + 1).saturating_sub(cap);
        let evicted: Vec<String> = others.into_iter().take(excess).map(str::to_owned).collect();
        if evicted.is_empty() {
            return;
        }
        message.tag(&SkillInjection::released(evicted.clone()));
        for skill in evicted {
            self.events.push(Event::SkillReleased {
                skill,
                reason: ReleaseReason::Cap,
            });
        }
    }
}
