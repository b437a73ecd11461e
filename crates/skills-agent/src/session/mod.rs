//! The disclosure engine: one agent's conversation with skills.
//!
//! A [`Session`] is three parts with one job each: the transcript
//! (`transcript.rs`: append-only, nothing it has written is ever changed,
//! with the [`LoadState`] replayed from it), the disclosure state
//! (`disclosure.rs`: the catalog pinned when the session started, the stable
//! system block rendered from it once, the deltas announced since, the
//! loaded bodies) and the tool table (`tool_table.rs`). The stateless skill
//! operations it runs are [`Library`]'s. It builds [`ModelRequest`]s, runs the skill tools
//! the model calls, announces catalog changes with an appended delta
//! (F-DIS-3), injects skills the user mentions (F-DIS-14), enforces load
//! lifetimes and the cap (F-DIS-10) with release tags, exposes pool tools
//! the loaded skills declare (F-DIS-11), and re-attaches loaded bodies after a
//! compaction (F-DIS-13).
//!
//! The rule that keeps the prompt cache hitting: in the default mode a new
//! request is the previous one plus new messages. The stable system block is
//! rendered once; bodies, files, deltas and injections are appended; the tool
//! list changes only when pool tools are configured and a load exposes one.

use std::collections::BTreeSet;

use skills_core::{Catalog, Error};
use skills_workspace::SessionId;
use tracing::Instrument as _;
use tracing::field::Empty;

use crate::config::Agent;
use crate::message::Message;
use crate::state::LoadState;

mod compaction;
mod deltas;
mod disclosure;
mod dispatch;
mod docs;
mod load;
mod loop_support;
mod preload;
mod read;
mod requests;
mod search;
mod tool_table;
mod tools;
mod transcript;
mod turns;

use disclosure::Disclosure;
use tool_table::ToolTable;
use transcript::Transcript;

pub use loop_support::ForkRequest;

/// Something a UI or a log may want to know about (F-DIS-4's `skill_loaded`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// A skill was loaded.
    SkillLoaded {
        /// The skill.
        skill: String,
        /// Whether the user's `$name` mention loaded it (else a tool call).
        by_mention: bool,
    },
    /// A skill stopped counting as loaded.
    SkillReleased {
        /// The skill.
        skill: String,
        /// Why.
        reason: ReleaseReason,
    },
    /// The docs selected for a skill changed.
    DocsSelected {
        /// The skill.
        skill: String,
        /// The docs now selected (`["*"]` for all).
        docs: Vec<String>,
    },
    /// The tools selected for a skill changed.
    ToolsSelected {
        /// The skill.
        skill: String,
        /// The tools now selected.
        tools: Vec<String>,
    },
    /// The skill set changed and a delta was announced.
    CatalogChanged(CatalogDelta),
    /// The history was compacted.
    Compacted(CompactionReport),
}

/// Why a skill was released.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ReleaseReason {
    /// Its lifetime (`once` or `turn`) ended.
    Lifetime,
    /// The loaded-skill cap evicted it.
    Cap,
    /// A compaction dropped or shortened its body.
    Compaction,
    /// The skill was removed from the library (announced by a delta).
    Removed,
}

/// What changed in the skill set since the catalog was pinned.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CatalogDelta {
    /// New skills (name, description), sorted.
    pub added: Vec<(String, String)>,
    /// Skills whose description changed (name, new description), sorted.
    pub changed: Vec<(String, String)>,
    /// Skills no longer available, sorted.
    pub removed: Vec<String>,
}

impl CatalogDelta {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.changed.is_empty() && self.removed.is_empty()
    }
}

/// What a compaction kept.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CompactionReport {
    /// Skills re-attached whole, newest first.
    pub reattached: Vec<String>,
    /// Skills re-attached shortened to the per-skill budget (released, so a
    /// new load returns the full body).
    pub truncated: Vec<String>,
    /// Skills that did not fit the total budget (released).
    pub dropped: Vec<String>,
    /// Tokens the re-attached bodies take, by the agent's counter.
    pub tokens: usize,
}

/// What [`Session::handle_tool_call`] did with a call.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Dispatch {
    /// The session answered the call (a skill tool, a run tool, or an
    /// error for an unknown or hidden tool); the result is in the transcript.
    Handled(Message),
    /// A user tool the caller must run; append its result with
    /// [`Session::push_tool_result`].
    External,
}

/// One agent's conversation with its skills.
///
/// It is made of three parts with one job each: the transcript
/// (append-only, with the load state replayed from it), the disclosure
/// state (the pinned catalog and stable system block, the deltas announced,
/// the loaded bodies) and the tool table (the skill tools, built once).
#[derive(Debug)]
pub struct Session {
    /// The session's id (workspaces of execution runtimes are per id).
    id: SessionId,
    agent: Agent,
    transcript: Transcript,
    disclosure: Disclosure,
    tools: ToolTable,
    events: Vec<Event>,
    history_limit: Option<usize>,
}

impl Agent {
    /// Starts a session: lists the provider once and pins that catalog.
    ///
    /// # Errors
    /// Whatever the provider's `list` returns.
    pub async fn start_session(&self) -> Result<Session, Error> {
        let span =
            tracing::debug_span!("skills.start_session", agent = %self.name(), skills = Empty);
        async {
            let listed_at = self.search_cache().mark();
            let catalog = self.list().await?;
            tracing::Span::current().record("skills", catalog.len());
            Ok(Session::new(self.clone(), catalog, Vec::new(), listed_at))
        }
        .instrument(span)
        .await
    }

    /// Resumes a session from its transcript and the catalog it pinned when it
    /// started ([`Session::pinned_catalog`]; after a restart, the provider's
    /// list gives the same prompt bytes as long as the library is unchanged).
    /// The load state is replayed from the transcript; the bodies of loaded
    /// skills are fetched again for the legacy mode and the fallback.
    ///
    /// # Errors
    /// Whatever the provider's `list` returns.
    pub async fn resume_session(
        &self,
        pinned: Catalog,
        transcript: Vec<Message>,
    ) -> Result<Session, Error> {
        let listed_at = self.search_cache().mark();
        let current = self.list().await?;
        let mut session = Session::new(self.clone(), pinned, transcript, listed_at);
        session.disclosure.current = current;
        let loaded: Vec<String> = session
            .transcript
            .state()
            .in_use_order()
            .map(str::to_owned)
            .collect();
        for name in loaded {
            if let Ok(skill) = self.provider().get(&name).await {
                let text = crate::library::loaded_body(self.surface(), &skill);
                session.disclosure.bodies.insert(name, text);
            }
        }
        Ok(session)
    }
}

impl Session {
    fn new(agent: Agent, pinned: Catalog, transcript: Vec<Message>, listed_at: u64) -> Self {
        let (disclosure, catalog_text) = Disclosure::new(&agent, pinned, &transcript, listed_at);
        Self {
            id: SessionId::generate(agent.name()),
            tools: ToolTable::new(&agent, &catalog_text),
            transcript: Transcript::replay(transcript),
            disclosure,
            agent,
            events: Vec::new(),
            history_limit: None,
        }
    }

    /// The session's id: the agent's name (letters, digits, `-`, `_` and `.`
    /// kept, anything else as `_`), a dash and a number unique in this
    /// process ([`SessionId::generate`]). Execution runtimes keep one
    /// workspace per id.
    pub fn id(&self) -> &SessionId {
        &self.id
    }

    /// Replaces the session's id (a stored session resumed after a restart
    /// keeps its old one).
    pub fn set_id(&mut self, id: SessionId) {
        self.id = id;
    }

    /// The agent this session belongs to.
    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// The catalog pinned when the session started: every skill the
    /// provider had, whether the model is told about it or not (see
    /// [`listed_skills`](Self::listed_skills)).
    pub fn pinned_catalog(&self) -> &Catalog {
        &self.disclosure.pinned
    }

    /// The skills of the pinned catalog the model is told about, by name:
    /// those the session's visibility policy lists (`off` and `manual`
    /// skills, and skills that need setup, are not among them). A catalog
    /// budget may still show some of them by name only, or leave them out
    /// of the rendered text.
    pub fn listed_skills(&self) -> impl Iterator<Item = &str> {
        crate::library::visible(&self.disclosure.pinned, &self.disclosure.pinned_policy)
            .map(|m| m.name.as_str())
    }

    /// The transcript (the source of truth; never rewritten).
    pub fn transcript(&self) -> &[Message] {
        self.transcript.messages()
    }

    /// The load state.
    pub fn state(&self) -> &LoadState {
        self.transcript.state()
    }

    /// The loaded skills, sorted.
    pub fn loaded(&self) -> BTreeSet<String> {
        self.transcript.state().loaded()
    }

    /// Whether `skill` counts as loaded for the next request and the calls
    /// of its answer (a `once` load the last request retired does not).
    pub(super) fn is_loaded(&self, skill: &str) -> bool {
        self.transcript.is_loaded(skill)
    }

    /// The skills that count as loaded, least recently used first.
    pub(super) fn loaded_order(&self) -> Vec<&str> {
        self.transcript.loaded_order()
    }

    /// Takes the events emitted since the last call.
    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    /// Keeps only the last `n` messages in requests (`None`: all). Loaded
    /// skills whose loading message falls out of view reach the model through
    /// the fallback system block (F-DIS-9).
    pub fn set_history_limit(&mut self, n: Option<usize>) {
        self.history_limit = n;
    }

    pub(super) fn push(&mut self, message: Message) -> usize {
        let (index, released) = self.transcript.push(message);
        for skill in released {
            self.events.push(Event::SkillReleased {
                skill,
                reason: ReleaseReason::Lifetime,
            });
        }
        index
    }
}

pub(super) fn join_nonempty(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_owned(),
        (_, true) => a.to_owned(),
        _ => format!("{a}\n\n{b}"),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::Value;

    use super::*;
    use crate::message::ToolCall;

    fn assert_send<T: Send>(_: &T) {}

    /// Servers run sessions on multi-threaded runtimes: every async method's
    /// future must be `Send`.
    #[test]
    fn futures_are_send() {
        let provider = Arc::new(skills_core::InCodeProvider::new([]).expect("empty"));
        let agent = Agent::builder("a", provider).build().expect("builds");
        let call = ToolCall::new("1", "load_skill", Value::Null);
        let start = agent.start_session();
        assert_send(&start);
        let mut session = pollster::block_on(start).expect("session");
        assert_send(&session.handle_tool_call(&call));
        assert_send(&session.push_user("hi"));
        assert_send(&session.refresh_catalog());
    }
}
