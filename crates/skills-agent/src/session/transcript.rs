//! The append-only transcript and the load state replayed from it.
//!
//! Nothing written here is ever changed: a release is a tag on the next
//! message appended, so replaying the messages gives the same [`LoadState`]
//! after a restart.

use skills_core::SkillInjection;

use crate::message::Message;
use crate::state::LoadState;

/// The session's messages and what they say is loaded.
#[derive(Debug, Default)]
pub(super) struct Transcript {
    messages: Vec<Message>,
    state: LoadState,
    /// `once` loads retired by a request; their release is recorded on the
    /// next message appended.
    pending_release: Vec<String>,
}

impl Transcript {
    /// The transcript of `messages`, with the load state replayed from them.
    pub(super) fn replay(messages: Vec<Message>) -> Self {
        let mut state = LoadState::default();
        for (index, message) in messages.iter().enumerate() {
            state.apply(index, message);
        }
        Self {
            messages,
            state,
            pending_release: Vec::new(),
        }
    }

    /// Every message, oldest first.
    pub(super) fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// How many messages there are.
    pub(super) fn len(&self) -> usize {
        self.messages.len()
    }

    /// The load state (releases not yet recorded included).
    pub(super) fn state(&self) -> &LoadState {
        &self.state
    }

    /// Whether `skill` counts as loaded for the next request and the calls
    /// of its answer (a `once` load the last request retired does not).
    pub(super) fn is_loaded(&self, skill: &str) -> bool {
        self.state.is_loaded(skill) && !self.pending_release.iter().any(|p| p == skill)
    }

    /// The skills that count as loaded, least recently used first.
    pub(super) fn loaded_order(&self) -> Vec<&str> {
        self.state
            .in_use_order()
            .filter(|name| !self.pending_release.iter().any(|p| p == name))
            .collect()
    }

    /// Retires `skills`: they stop counting as loaded now, and the next
    /// message appended records their release.
    pub(super) fn retire(&mut self, skills: &[String]) {
        self.pending_release.extend(skills.iter().cloned());
    }

    /// Appends `message`, tagged with the releases due; its index and the
    /// skills it released.
    pub(super) fn push(&mut self, mut message: Message) -> (usize, Vec<String>) {
        let due = std::mem::take(&mut self.pending_release);
        if !due.is_empty() {
            message.tag(&SkillInjection::released(due.clone()));
        }
        let index = self.messages.len();
        self.state.apply(index, &message);
        self.messages.push(message);
        (index, due)
    }
}
