//! The disclosure engine: one agent's conversation with skills.
//!
//! A [`Session`] owns the transcript (append-only: nothing it has written is
//! ever changed), the [`LoadState`] replayed from it, and the catalog pinned
//! when the session started. It builds [`ModelRequest`]s, runs the skill tools
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

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{Value, json};
use skills_core::{
    Catalog, Error, ErrorKind, LineRange, SearchIndex, Skill, SkillInjection, SkillMetadata,
    TokenCounter,
};
use tracing::Instrument as _;
use tracing::field::Empty;

use crate::config::{Agent, CatalogMode, Lifetime, Materialization, PromptContext};
use crate::mention::mentions;
use crate::message::{
    CATALOG_DELTA_KEY, COMPACTION_KEY, DOCS_KEY, MENTION_KEY, Message, Role, TOOLS_KEY, TOUCH_KEY,
    ToolCall,
};
use crate::render;
use crate::request::{ModelRequest, SystemBlock};
use crate::state::{DocSelection, LoadState};
use crate::surface::{
    LoadSkillArgs, NoArgs, Operation, ReadSkillFileArgs, SearchArgs, SelectDocsArgs, SelectMode,
    SelectToolsArgs, SkillArgs, SkillLoadArgs, Surface, expected_args, tool_spec,
};
use crate::tool::{ToolError, ToolErrorKind, ToolSpec, clip, parse_args};

/// Longest skill name, doc name or path accepted from the model before any
/// lookup (longer ones are refused without being echoed in full).
const MAX_NAME_LEN: usize = 256;
/// Most skill names an error lists.
const MAX_NAMES_LISTED: usize = 20;
/// Longest search query accepted.
const MAX_QUERY_LEN: usize = 1_000;
/// Most docs one call may name, and most docs one result shows.
const MAX_DOCS_PER_CALL: usize = 32;
/// Once a result holds this many bytes of docs, further docs are only named.
const MAX_DOC_BYTES_PER_CALL: usize = 256 * 1024;
/// Most search results.
const MAX_SEARCH_LIMIT: usize = 20;

/// Something a UI or a log may want to know about (F-DIS-4's `skill_loaded`).
#[derive(Debug, Clone, PartialEq, Eq)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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
    /// The session answered the call (a skill tool, an executor tool, or an
    /// error for an unknown or hidden tool); the result is in the transcript.
    Handled(Message),
    /// A user tool the caller must run; append its result with
    /// [`Session::push_tool_result`].
    External,
}

/// One agent's conversation with its skills.
#[derive(Debug)]
pub struct Session {
    agent: Agent,
    /// The catalog the prompt was rendered from.
    pinned: Catalog,
    /// The latest catalog (pinned, then refreshed).
    current: Catalog,
    /// What the model has been told: pinned plus announced deltas.
    announced: BTreeMap<String, String>,
    /// Block 0 of the system region, rendered once.
    stable_system: String,
    /// The surface's tool specs, built once (their schemas and descriptions
    /// never change within a session).
    skill_tools: Vec<ToolSpec>,
    transcript: Vec<Message>,
    state: LoadState,
    /// Loaded text per skill (the wrapped body), for the legacy block, the
    /// fallback and compaction.
    loaded_text: BTreeMap<String, String>,
    events: Vec<Event>,
    history_limit: Option<usize>,
    /// `once` loads the last request no longer counted; the release is
    /// recorded on the next message appended.
    pending_release: Vec<String>,
    /// Whether the skill tools are offered (sticky: once on, never off, so
    /// the tool list does not move).
    skills_on: bool,
    /// Transcript index of the last message of the request before the one
    /// being built (where the "previous request" breakpoint goes).
    previous_last: Option<usize>,
    /// Transcript index of the last message of the latest request built. A
    /// build with nothing appended since is the same request again: it gives
    /// the same bytes and does not move `previous_last`.
    last_built: Option<usize>,
    /// The search cache's mark taken just before the session last listed the
    /// provider: a search needs a library check newer than it.
    listed_at: u64,
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
        session.current = current;
        let loaded: Vec<String> = session.state.in_use_order().map(str::to_owned).collect();
        for name in loaded {
            if let Ok(skill) = self.provider().get(&name).await {
                let text = render::loaded_body(&skill, self.surface().read_tool());
                session.loaded_text.insert(name, text);
            }
        }
        Ok(session)
    }
}

impl Session {
    fn new(agent: Agent, pinned: Catalog, transcript: Vec<Message>, listed_at: u64) -> Self {
        let config = agent.config();
        let catalog_text = match &config.catalog {
            CatalogMode::InPrompt(options) => {
                let mut options = options.clone();
                options.load_tool = config.surface.load_tool().to_owned();
                pinned.render(&options)
            }
            CatalogMode::OnDemand => String::new(),
        };
        let catalog_in_tool =
            matches!(&config.surface, Surface::Eino(o) if o.catalog_in_description);
        let prompt_catalog = if catalog_in_tool {
            ""
        } else {
            catalog_text.as_str()
        };
        let stable_system = match &config.prompt_hook {
            Some(hook) => hook(&PromptContext {
                instructions: &config.instructions,
                catalog: prompt_catalog,
                load_tool: config.surface.load_tool(),
            }),
            None => {
                let skills_part = match config.catalog {
                    CatalogMode::OnDemand => render::on_demand_guidance(config.surface.load_tool()),
                    CatalogMode::InPrompt(_) => prompt_catalog.to_owned(),
                };
                join_nonempty(&config.instructions, &skills_part)
            }
        };
        let mut announced: BTreeMap<String, String> = visible(&pinned)
            .map(|m| (m.name.as_str().to_owned(), m.description.clone()))
            .collect();
        let mut state = LoadState::default();
        for (index, message) in transcript.iter().enumerate() {
            state.apply(index, message);
            apply_delta_metadata(&mut announced, message);
        }
        let loaded_text = BTreeMap::new();
        // Skill tools are offered when the model can see a skill or the user
        // can invoke one, from the start (no move later), or from the first
        // announced skill on.
        let skills_on = matches!(config.catalog, CatalogMode::OnDemand)
            || pinned.entries().iter().any(|m| {
                !m.extensions.disable_model_invocation || m.extensions.user_invocable != Some(false)
            })
            || transcript.iter().any(|m| m.has_metadata(CATALOG_DELTA_KEY));
        // The previous request ended just before the last reply.
        let previous_last = transcript
            .iter()
            .rposition(|m| m.role == Role::Assistant)
            .and_then(|i| i.checked_sub(1));
        let surface = &agent.config().surface;
        let skill_tools = surface
            .tools(agent.has_search())
            .into_iter()
            .map(|(name, op)| tool_spec(surface, &name, op, &catalog_text))
            .collect();
        Self {
            skill_tools,
            current: pinned.clone(),
            agent,
            pinned,
            announced,
            stable_system,
            transcript,
            state,
            loaded_text,
            events: Vec::new(),
            history_limit: None,
            pending_release: Vec::new(),
            skills_on,
            previous_last: None,
            last_built: previous_last,
            listed_at,
        }
    }

    /// The agent this session belongs to.
    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// The catalog pinned when the session started.
    pub fn pinned_catalog(&self) -> &Catalog {
        &self.pinned
    }

    /// The transcript (the source of truth; never rewritten).
    pub fn transcript(&self) -> &[Message] {
        &self.transcript
    }

    /// The load state.
    pub fn state(&self) -> &LoadState {
        &self.state
    }

    /// The loaded skills, sorted.
    pub fn loaded(&self) -> BTreeSet<String> {
        self.state.loaded()
    }

    /// Whether `skill` counts as loaded for the next request and the calls
    /// of its answer (a `once` load the last request retired does not).
    fn is_loaded(&self, skill: &str) -> bool {
        self.state.is_loaded(skill) && !self.pending_release.iter().any(|p| p == skill)
    }

    /// The skills that count as loaded, least recently used first.
    fn loaded_order(&self) -> Vec<&str> {
        self.state
            .in_use_order()
            .filter(|name| !self.pending_release.iter().any(|p| p == name))
            .collect()
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

    fn push(&mut self, mut message: Message) -> usize {
        if !self.pending_release.is_empty() {
            let due = std::mem::take(&mut self.pending_release);
            message.tag(&SkillInjection::released(due.clone()));
            for skill in due {
                self.events.push(Event::SkillReleased {
                    skill,
                    reason: ReleaseReason::Lifetime,
                });
            }
        }
        let index = self.transcript.len();
        self.state.apply(index, &message);
        self.transcript.push(message);
        index
    }

    // ----- turns -------------------------------------------------------

    /// Appends a user message. Ends `turn`-lifetime loads, then injects each
    /// skill the text mentions as `$name` (once; F-DIS-14).
    ///
    /// # Errors
    /// Never for unknown mentions (they are ignored); only a provider failure
    /// while fetching a mentioned skill's body.
    pub async fn push_user(&mut self, text: impl Into<String>) -> Result<(), Error> {
        let mut message = Message::user(text);
        let turn_ends = self.agent.config().lifetime == Lifetime::Turn;
        // Fetch every mentioned body first: a provider failure then leaves
        // the transcript untouched, so the caller can simply retry.
        let mut invoked = Vec::new();
        for name in mentions(&message.content) {
            let Some(meta) = self.current.get(&name) else {
                continue;
            };
            if meta.extensions.user_invocable == Some(false)
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
        if turn_ends {
            self.release_all(&mut message, ReleaseReason::Lifetime);
        }
        self.push(message);
        for (name, skill) in invoked {
            let read_tool = self.agent.surface().read_tool();
            let text = render::loaded_body(&skill, read_tool);
            let injected_text = match self.agent.config().materialization {
                Materialization::ToolResult => render::mention_injection(&skill, read_tool),
                Materialization::SystemMessage => render::mention_stub(&name),
            };
            let mut injected = Message::user(injected_text)
                .with_metadata(MENTION_KEY, Value::String(name.clone()))
                .tagged(&SkillInjection::loaded([name.clone()]));
            self.enforce_cap(&mut injected, &name);
            self.loaded_text.insert(name.clone(), text);
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

    fn release_all(&mut self, message: &mut Message, reason: ReleaseReason) {
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
    fn enforce_cap(&mut self, message: &mut Message, incoming: &str) {
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

    // ----- catalog deltas ------------------------------------------------

    /// Lists the provider again; when the skill set changed, appends one
    /// message announcing only the changes (F-DIS-3). The pinned catalog and
    /// the system prompt never change. In on-demand mode nothing is announced
    /// (the catalog is not in the prompt); search sees the new set.
    ///
    /// # Errors
    /// Whatever the provider's `list` returns.
    pub async fn refresh_catalog(&mut self) -> Result<Option<CatalogDelta>, Error> {
        let span = tracing::debug_span!(
            "skills.refresh_catalog",
            agent = %self.agent.name(),
            skills = Empty,
            changed = Empty,
        );
        let result = self.refresh_catalog_inner().instrument(span.clone()).await;
        if let Ok(delta) = &result {
            span.record("skills", self.current.len());
            span.record("changed", delta.is_some());
        }
        result
    }

    async fn refresh_catalog_inner(&mut self) -> Result<Option<CatalogDelta>, Error> {
        let listed_at = self.agent.search_cache().mark();
        let latest = self.agent.provider().list().await?;
        self.listed_at = listed_at;
        let now: BTreeMap<String, String> = visible(&latest)
            .map(|m| (m.name.as_str().to_owned(), m.description.clone()))
            .collect();
        self.current = latest;
        let mut delta = CatalogDelta::default();
        for (name, description) in &now {
            match self.announced.get(name) {
                None => delta.added.push((name.clone(), description.clone())),
                Some(old) if old != description => {
                    delta.changed.push((name.clone(), description.clone()));
                }
                Some(_) => {}
            }
        }
        delta.removed = self
            .announced
            .keys()
            .filter(|name| !now.contains_key(*name))
            .cloned()
            .collect();
        if delta.is_empty() {
            return Ok(None);
        }
        if matches!(self.agent.config().catalog, CatalogMode::InPrompt(_)) {
            let mut message = delta_message(&delta);
            // A removed skill stops counting as loaded: compaction will not
            // re-attach it and a later load reports it unknown.
            let gone: Vec<String> = delta
                .removed
                .iter()
                .filter(|name| self.is_loaded(name))
                .cloned()
                .collect();
            if !gone.is_empty() {
                message.tag(&SkillInjection::released(gone.clone()));
                for skill in gone {
                    self.loaded_text.remove(&skill);
                    self.events.push(Event::SkillReleased {
                        skill,
                        reason: ReleaseReason::Removed,
                    });
                }
            }
            apply_delta_metadata(&mut self.announced, &message);
            self.skills_on = true;
            self.push(message);
        } else {
            self.announced = now;
        }
        self.events.push(Event::CatalogChanged(delta.clone()));
        Ok(Some(delta))
    }

    /// A notice of everything announced since the catalog was pinned (the
    /// difference between the pinned catalog and what the model was told), or
    /// `None` when nothing changed or the catalog is not in the prompt.
    fn delta_since_pinned(&self) -> Option<Message> {
        if !matches!(self.agent.config().catalog, CatalogMode::InPrompt(_)) {
            return None;
        }
        let pinned: BTreeMap<&str, &str> = visible(&self.pinned)
            .map(|m| (m.name.as_str(), m.description.as_str()))
            .collect();
        let mut delta = CatalogDelta::default();
        for (name, description) in &self.announced {
            match pinned.get(name.as_str()) {
                None => delta.added.push((name.clone(), description.clone())),
                Some(old) if old != description => {
                    delta.changed.push((name.clone(), description.clone()));
                }
                Some(_) => {}
            }
        }
        delta.removed = pinned
            .keys()
            .filter(|name| !self.announced.contains_key(**name))
            .map(|name| (*name).to_owned())
            .collect();
        (!delta.is_empty()).then(|| delta_message(&delta))
    }

    // ----- requests ------------------------------------------------------

    /// The index of the first transcript message in view.
    fn view_start(&self) -> usize {
        let compaction = self
            .transcript
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
            if let Some(offset) = self.transcript[start..]
                .iter()
                .position(|m| matches!(m.role, Role::User | Role::System))
            {
                return start + offset;
            }
        }
        while self
            .transcript
            .get(start)
            .is_some_and(|m| m.role == Role::Tool)
        {
            start += 1;
        }
        start
    }

    /// The names of the agent's pool tools.
    fn pool_names(&self) -> BTreeSet<&str> {
        self.agent
            .config()
            .tool_pool
            .iter()
            .map(|t| t.name.as_str())
            .collect()
    }

    /// The pool tools exposed now: those the loaded skills declare (or had
    /// selected), that exist in the pool.
    fn exposed_pool(&self) -> BTreeSet<String> {
        let pool = self.pool_names();
        let mut out = BTreeSet::new();
        for skill in self.loaded_order() {
            let wanted: Vec<String> = match self.state.selected_tools(skill) {
                Some(selected) => selected.iter().cloned().collect(),
                None => self
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
        let mut tools: Vec<ToolSpec> = if self.skills_on {
            self.skill_tools.clone()
        } else {
            Vec::new()
        };
        tools.extend(config.tools.iter().cloned());
        tools.extend(self.agent.inner.executor_tools.iter().cloned());
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

    /// Builds the next request (F-AGT-1): at most two system blocks (the
    /// stable one first), tools sorted by name, the transcript view, and the
    /// cache breakpoints of the agent's strategy (F-AGT-2).
    ///
    /// Building again with nothing appended in between gives the same request,
    /// byte for byte (a retry after a failed model call, say).
    pub fn build_request(&mut self) -> ModelRequest {
        let span = tracing::debug_span!(
            "skills.build_request",
            agent = %self.agent.name(),
            messages = Empty,
            tools = Empty,
            system_blocks = Empty,
            bytes = Empty,
        );
        let _entered = span.enter();
        let request = self.build_request_inner();
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

    fn build_request_inner(&mut self) -> ModelRequest {
        if self.agent.config().lifetime == Lifetime::Once {
            // A `once` load counts for the requests up to the model's first
            // answer after it (and that answer's tool calls); from the next
            // request on it is retired. The release is recorded on the next
            // message appended.
            let last_answer = self
                .transcript
                .iter()
                .rposition(|m| m.role == Role::Assistant);
            let due: Vec<String> = self
                .loaded_order()
                .into_iter()
                .filter(|name| {
                    let loaded_at = self.state.loaded_at(name);
                    matches!((loaded_at, last_answer), (Some(at), Some(answer)) if at < answer)
                })
                .map(str::to_owned)
                .collect();
            self.pending_release.extend(due);
        }
        let start = self.view_start();
        let mut system = Vec::with_capacity(2);
        if !self.stable_system.is_empty() {
            system.push(SystemBlock {
                text: self.stable_system.clone(),
                stable: true,
            });
        }
        if let Some(dynamic) = self.dynamic_block(start) {
            system.push(SystemBlock {
                text: dynamic,
                stable: false,
            });
        }
        let messages: Vec<Message> = self.transcript[start..].to_vec();
        let mut request = ModelRequest {
            system,
            tools: self.tools(),
            messages,
            cache_breakpoints: Vec::new(),
        };
        let last = self.transcript.len().checked_sub(1);
        if last != self.last_built {
            self.previous_last = self.last_built;
            self.last_built = last;
        }
        let previous = self.previous_last.and_then(|abs| abs.checked_sub(start));
        request.place_breakpoints(self.agent.config().cache, previous);
        request
    }

    /// The dynamic system block: legacy bodies, or the fallback for loaded
    /// skills whose loading message is out of view.
    fn dynamic_block(&self, start: usize) -> Option<String> {
        let skills = self.loaded_block(start);
        // A delta notice that fell out of view (history limit) is restated,
        // so the model never works from a stale catalog.
        // (A compaction restates every change after its summary, so only a
        // notice newer than the last compaction can be missing.)
        let last_compaction = self
            .transcript
            .iter()
            .rposition(|m| m.has_metadata(COMPACTION_KEY));
        let delta_hidden = self
            .transcript
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
    fn loaded_block(&self, start: usize) -> Option<String> {
        let order: Vec<&str> = self.loaded_order();
        match self.agent.config().materialization {
            Materialization::SystemMessage => {
                // Load order, not use order: reading a file must not reshuffle
                // the block (and break the cache behind it).
                let mut order = order;
                order.sort_by_key(|n| self.state.loaded_at(n));
                let bodies: Vec<&str> = order
                    .iter()
                    .filter_map(|n| self.loaded_text.get(*n).map(String::as_str))
                    .collect();
                (!bodies.is_empty()).then(|| render::legacy_block(&bodies))
            }
            Materialization::ToolResult => {
                let bodies: Vec<&str> = order
                    .iter()
                    .filter(|n| self.state.loaded_at(n).is_some_and(|at| at < start))
                    .filter_map(|n| self.loaded_text.get(*n).map(String::as_str))
                    .collect();
                (!bodies.is_empty()).then(|| render::fallback_block(&bodies))
            }
        }
    }

    // ----- compaction ----------------------------------------------------

    /// Compacts the history: appends a summary that starts the request view,
    /// re-announces the catalog changes announced so far (they are out of
    /// view now), then re-attaches the loaded bodies newest first within the agent's
    /// budget (F-DIS-13). Bodies over the per-skill budget are shortened and
    /// released (a new load returns them whole); bodies over the total are
    /// dropped and released. Nothing before the summary is deleted.
    pub fn compact(&mut self, summary: impl Into<String>) -> CompactionReport {
        let span = tracing::debug_span!(
            "skills.compact",
            agent = %self.agent.name(),
            reattached = Empty,
            truncated = Empty,
            dropped = Empty,
            tokens = Empty,
        );
        let _entered = span.enter();
        let report = self.compact_inner(summary.into());
        span.record("reattached", report.reattached.len());
        span.record("truncated", report.truncated.len());
        span.record("dropped", report.dropped.len());
        span.record("tokens", report.tokens);
        report
    }

    fn compact_inner(&mut self, summary: String) -> CompactionReport {
        let config = self.agent.config();
        let budget = config.reattach;
        let counter = Arc::clone(&config.token_counter);
        let count = |text: &str| counter.count(text);
        let mut report = CompactionReport::default();
        let mut bodies = Vec::new();
        // In the legacy mode the bodies are in the system block already.
        let newest_first: Vec<String> = match config.materialization {
            Materialization::ToolResult => self
                .loaded_order()
                .into_iter()
                .rev()
                .map(str::to_owned)
                .collect(),
            Materialization::SystemMessage => Vec::new(),
        };
        for name in newest_first {
            let Some(text) = self.loaded_text.get(&name) else {
                report.dropped.push(name);
                continue;
            };
            let remaining = budget.total_tokens.saturating_sub(report.tokens);
            let tokens = count(text);
            if tokens <= budget.per_skill_tokens && tokens <= remaining {
                report.tokens += tokens;
                bodies.push(text.clone());
                report.reattached.push(name);
                continue;
            }
            let allowance = budget.per_skill_tokens.min(remaining);
            let marker = "\n[shortened: load the skill again for the full text]";
            let cut = prefix_within(text, allowance.saturating_sub(count(marker)), &*counter);
            if cut.is_empty() {
                report.dropped.push(name);
            } else {
                let short = format!("{cut}{marker}");
                report.tokens += count(&short);
                bodies.push(short);
                report.truncated.push(name);
            }
        }
        // Doc selections end with the compaction (their text is behind the
        // summary); say so for the skills that had some.
        let docs_cleared: Vec<String> = self
            .loaded_order()
            .into_iter()
            .filter(|name| self.state.docs(name).is_some())
            .map(str::to_owned)
            .collect();
        let summary_message = Message::system(render::compaction_summary(&summary))
            .with_metadata(COMPACTION_KEY, Value::Bool(true));
        self.push(summary_message);
        // The deltas announced so far are now out of view, while the prompt
        // still shows the pinned catalog: announce the whole difference again.
        if let Some(notice) = self.delta_since_pinned() {
            self.push(notice);
        }
        let released: Vec<String> = report
            .truncated
            .iter()
            .chain(&report.dropped)
            .cloned()
            .collect();
        if !bodies.is_empty() || !released.is_empty() || !docs_cleared.is_empty() {
            let mut message = Message::user(render::reattached(
                &bodies,
                &report.truncated,
                &report.dropped,
                &docs_cleared,
            ));
            if !report.reattached.is_empty() {
                // Oldest first, so the replayed most-recently-used order (which
                // the loaded-skill cap follows) stays as it was.
                message.tag(&SkillInjection::loaded(
                    report.reattached.iter().rev().cloned(),
                ));
            }
            if !released.is_empty() {
                message.tag(&SkillInjection::released(released.clone()));
            }
            self.push(message);
        }
        for skill in released {
            self.loaded_text.remove(&skill);
            self.events.push(Event::SkillReleased {
                skill,
                reason: ReleaseReason::Compaction,
            });
        }
        self.events.push(Event::Compacted(report.clone()));
        report
    }

    // ----- tool dispatch -------------------------------------------------

    /// Handles one tool call from the model. Skill tools and executor tools
    /// run here and their result is appended; a user tool is left to the
    /// caller ([`Dispatch::External`]); a pool tool that no loaded skill
    /// exposes, or an unknown tool, gets an error result that says what is
    /// available. Never panics on any argument value.
    pub async fn handle_tool_call(&mut self, call: &ToolCall) -> Dispatch {
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

    async fn dispatch(&mut self, call: &ToolCall) -> Dispatch {
        let surface = self.agent.surface().clone();
        if let Some(op) = surface.operation(&call.name, self.agent.has_search()) {
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
        let config = self.agent.config();
        if config.tools.iter().any(|t| t.name == call.name) {
            return Dispatch::External;
        }
        if self
            .agent
            .inner
            .executor_tools
            .iter()
            .any(|t| t.name == call.name)
            && let Some(executor) = config.executor.clone()
        {
            let message = match executor.call(&call.name, &call.arguments).await {
                Ok(text) => Message::tool_result(&call.id, &call.name, text),
                Err(err) => Message::tool_error(&call.id, &call.name, format!("Error: {err}")),
            };
            self.push(message.clone());
            return Dispatch::Handled(message);
        }
        let exposed = self.exposed_pool();
        if exposed.contains(&call.name) {
            return Dispatch::External;
        }
        let text = if config.tool_pool.iter().any(|t| t.name == call.name) {
            let declaring: Vec<&str> = visible(&self.current)
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

    async fn run_operation(
        &mut self,
        surface: &Surface,
        op: Operation,
        call: &ToolCall,
    ) -> Result<Message, ToolError> {
        let span = match op {
            Operation::List => tracing::debug_span!("skills.list", bytes = Empty),
            Operation::Load => {
                tracing::debug_span!("skills.load", skill = Empty, docs = Empty, bytes = Empty)
            }
            Operation::Read => {
                tracing::debug_span!(
                    "skills.read_file",
                    skill = Empty,
                    path = Empty,
                    bytes = Empty
                )
            }
            Operation::ListDocs => {
                tracing::debug_span!("skills.list_docs", skill = Empty, bytes = Empty)
            }
            Operation::SelectDocs => {
                tracing::debug_span!(
                    "skills.select_docs",
                    skill = Empty,
                    docs = Empty,
                    bytes = Empty
                )
            }
            Operation::ListTools => {
                tracing::debug_span!("skills.list_tools", skill = Empty, bytes = Empty)
            }
            Operation::SelectTools => {
                tracing::debug_span!("skills.select_tools", skill = Empty, bytes = Empty)
            }
            Operation::Search => tracing::debug_span!(
                "skills.search",
                query_bytes = Empty,
                hits = Empty,
                bytes = Empty
            ),
        };
        let result = self
            .operation(surface, op, call)
            .instrument(span.clone())
            .await;
        if let Ok(message) = &result {
            span.record("bytes", message.content.len());
        }
        result
    }

    async fn operation(
        &mut self,
        surface: &Surface,
        op: Operation,
        call: &ToolCall,
    ) -> Result<Message, ToolError> {
        let expected = expected_args(surface, op);
        let tool = call.name.as_str();
        match op {
            Operation::Load => {
                let (skill, docs, all) = match surface {
                    Surface::Default => {
                        let a: LoadSkillArgs = parse_args(tool, &call.arguments, expected)?;
                        (a.name, None, false)
                    }
                    Surface::Trpc => {
                        let a: SkillLoadArgs = parse_args(tool, &call.arguments, expected)?;
                        (a.skill, a.docs, a.include_all_docs.unwrap_or(false))
                    }
                    Surface::Eino(_) => {
                        let a: SkillArgs = parse_args(tool, &call.arguments, expected)?;
                        (a.skill, None, false)
                    }
                };
                self.op_load(call, &skill, docs, all).await
            }
            Operation::Read => {
                let a: ReadSkillFileArgs = parse_args(tool, &call.arguments, expected)?;
                self.op_read(call, &a).await
            }
            Operation::List => {
                let _: NoArgs = parse_args(tool, &call.arguments, expected)?;
                let text = render::skill_list(
                    visible(&self.current).map(|m| (m.name.as_str(), m.description.as_str())),
                );
                Ok(Message::tool_result(&call.id, tool, text))
            }
            Operation::ListDocs => {
                let a: SkillArgs = parse_args(tool, &call.arguments, expected)?;
                let skill = self.fetch(&a.skill, false).await?;
                record("skill", skill.name());
                let selection = self.state.docs(skill.name());
                let docs: Vec<(String, bool)> = skills_core::list_docs(&skill)
                    .into_iter()
                    .map(|d| {
                        let selected = selection.is_some_and(|s| s.contains(d.as_str()));
                        (d.as_str().to_owned(), selected)
                    })
                    .collect();
                Ok(Message::tool_result(
                    &call.id,
                    tool,
                    render::doc_list(skill.name(), &docs),
                ))
            }
            Operation::SelectDocs => {
                let a: SelectDocsArgs = parse_args(tool, &call.arguments, expected)?;
                self.op_select_docs(call, a).await
            }
            Operation::ListTools => {
                let a: SkillArgs = parse_args(tool, &call.arguments, expected)?;
                let meta = self.meta(&a.skill, false)?;
                record("skill", meta.name.as_str());
                let pool = self.pool_names();
                let selected = self.state.selected_tools(meta.name.as_str());
                let loaded = self.is_loaded(meta.name.as_str());
                let mut tools: Vec<(String, bool, bool)> = meta
                    .declared_tools
                    .iter()
                    .map(|t| {
                        let available = pool.contains(t.as_str());
                        let on = loaded && selected.is_none_or(|s| s.contains(t));
                        (t.clone(), available, on)
                    })
                    .collect();
                // Pool tools selected with `skill_select_tools` that the skill
                // does not declare are selected too; list them after.
                if loaded && let Some(selected) = selected {
                    for extra in selected {
                        if !meta.declared_tools.contains(extra) {
                            tools.push((extra.clone(), pool.contains(extra.as_str()), true));
                        }
                    }
                }
                let name = meta.name.as_str().to_owned();
                Ok(Message::tool_result(
                    &call.id,
                    tool,
                    render::tool_list(&name, &tools),
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
        }
    }

    /// The metadata of a skill the model may use. A `disable-model-invocation`
    /// skill is refused, except for a non-load use (reading its files) once the
    /// user's mention loaded it.
    fn meta(&self, name: &str, for_load: bool) -> Result<SkillMetadata, ToolError> {
        if name.len() > MAX_NAME_LEN {
            return Err(ToolError::new(
                ToolErrorKind::UnknownSkill,
                format!(
                    "no skill is named `{}`: names are at most 64 characters. {}",
                    clip(name),
                    self.available_hint()
                ),
            ));
        }
        match self.current.get(name) {
            Some(meta)
                if meta.extensions.disable_model_invocation
                    && (for_load || !self.is_loaded(name)) =>
            {
                Err(ToolError::new(
                    ToolErrorKind::UnknownSkill,
                    format!(
                        "the skill `{name}` can only be invoked by the user (by writing ${name}). {}",
                        self.available_hint()
                    ),
                ))
            }
            Some(meta) => Ok(meta.clone()),
            None => Err(ToolError::new(
                ToolErrorKind::UnknownSkill,
                format!(
                    "no skill is named `{}`. {}",
                    clip(name),
                    self.available_hint()
                ),
            )),
        }
    }

    /// The metadata and name of a skill that must be loaded already (doc and
    /// tool selection).
    fn loaded_meta(&self, skill: &str) -> Result<(SkillMetadata, String), ToolError> {
        let meta = self.meta(skill, false)?;
        let name = meta.name.as_str().to_owned();
        if !self.is_loaded(&name) {
            return Err(not_loaded(&name, self.agent.surface().load_tool()));
        }
        Ok((meta, name))
    }

    /// Whether bodies live in the system block (legacy materialization).
    fn legacy(&self) -> bool {
        self.agent.config().materialization == Materialization::SystemMessage
    }

    fn available_hint(&self) -> String {
        let names: Vec<&str> = visible(&self.current).map(|m| m.name.as_str()).collect();
        let search = if self.agent.has_search() {
            " Find skills with `search_skills`."
        } else {
            ""
        };
        if names.is_empty() {
            return format!("No skills are available.{search}");
        }
        if matches!(self.agent.config().catalog, CatalogMode::OnDemand) {
            // The library is too large to list: that is why it is on demand.
            return format!("{} skills are available.{search}", names.len());
        }
        if names.len() <= MAX_NAMES_LISTED {
            format!("Available skills: {}.{search}", names.join(", "))
        } else {
            format!(
                "Available skills include: {} (and {} more).{search}",
                names[..MAX_NAMES_LISTED].join(", "),
                names.len() - MAX_NAMES_LISTED
            )
        }
    }

    /// The skill `name`, shared with the provider's cache.
    async fn fetch(&self, name: &str, for_load: bool) -> Result<Arc<Skill>, ToolError> {
        let meta = self.meta(name, for_load)?;
        self.agent
            .provider()
            .get(meta.name.as_str())
            .await
            .map_err(|err| provider_error(&err, &self.available_hint()))
    }

    async fn op_load(
        &mut self,
        call: &ToolCall,
        name: &str,
        docs: Option<Vec<String>>,
        all_docs: bool,
    ) -> Result<Message, ToolError> {
        let wants_docs = all_docs || docs.as_ref().is_some_and(|d| !d.is_empty());
        if self.is_loaded(name) && !wants_docs {
            self.meta(name, false)?;
            // Asking for a loaded skill again is a use: it moves up in the
            // most-recently-used order the cap follows.
            return Ok(Message::tool_result(
                &call.id,
                &call.name,
                render::already_active(name, self.legacy()),
            )
            .with_metadata(TOUCH_KEY, Value::String(name.to_owned())));
        }
        let skill = self.fetch(name, !self.is_loaded(name)).await?;
        let name = skill.name().to_owned();
        record("skill", &name);
        let read_tool = self.agent.surface().read_tool();
        let mut parts = Vec::new();
        let mut message_meta: Option<Value> = None;
        let already = self.is_loaded(&name);
        let body = render::loaded_body(&skill, read_tool);
        if already {
            parts.push(render::already_active(&name, self.legacy()));
        } else {
            match self.agent.config().materialization {
                Materialization::ToolResult => parts.push(body.clone()),
                Materialization::SystemMessage => parts.push(render::legacy_stub(&name)),
            }
        }
        if wants_docs {
            let selection = if all_docs {
                DocSelection::All
            } else {
                DocSelection::Some(self.check_docs(&skill, docs.unwrap_or_default())?)
            };
            let previous = self.state.docs(&name).cloned();
            let new_docs = docs_to_deliver(&skill, previous.as_ref(), &selection);
            tracing::Span::current().record("docs", new_docs.len());
            parts.extend(self.deliver_docs(&name, &new_docs).await?);
            let merged = merge_selection(previous, selection, SelectMode::Add);
            if already {
                parts.push(format!(
                    "Docs selected for the skill \"{name}\": {}.",
                    selection_names(&merged).join(", ")
                ));
            }
            message_meta = Some(json!({"skill": name, "docs": merged.to_value()}));
            self.events.push(Event::DocsSelected {
                skill: name.clone(),
                docs: selection_names(&merged),
            });
        }
        if !already {
            // Say which pool tools this load exposes (F-DIS-11).
            let exposed = self.exposed_pool();
            let pool = self.pool_names();
            let mut new_tools: Vec<&str> = skill
                .metadata
                .declared_tools
                .iter()
                .map(String::as_str)
                .filter(|t| pool.contains(t) && !exposed.contains(*t))
                .collect();
            new_tools.dedup();
            if !new_tools.is_empty() {
                parts.push(format!(
                    "Tools this skill uses are available from your next step: {}.",
                    new_tools.join(", ")
                ));
            }
        }
        let mut message = Message::tool_result(&call.id, &call.name, parts.join("\n"));
        if let Some(value) = message_meta {
            message = message.with_metadata(DOCS_KEY, value);
        }
        if !already {
            message.tag(&SkillInjection::loaded([name.clone()]));
            self.enforce_cap(&mut message, &name);
            self.loaded_text.insert(name.clone(), body);
            self.events.push(Event::SkillLoaded {
                skill: name,
                by_mention: false,
            });
        } else {
            message = message.with_metadata(TOUCH_KEY, Value::String(name));
        }
        Ok(message)
    }

    fn check_docs(&self, skill: &Skill, docs: Vec<String>) -> Result<BTreeSet<String>, ToolError> {
        if docs.len() > MAX_DOCS_PER_CALL {
            return Err(ToolError::new(
                ToolErrorKind::InvalidArguments,
                format!(
                    "at most {MAX_DOCS_PER_CALL} docs per call ({} given)",
                    docs.len()
                ),
            ));
        }
        let mut out = BTreeSet::new();
        for doc in docs {
            let path = skills_core::find_doc(skill, &doc).map_err(|err| {
                let available = err.available().join(", ");
                ToolError::new(
                    ToolErrorKind::UnknownDoc,
                    format!(
                        "the skill `{}` has no doc `{}`. Available docs: {}.",
                        skill.name(),
                        clip(&doc),
                        if available.is_empty() {
                            "none"
                        } else {
                            &available
                        }
                    ),
                )
            })?;
            out.insert(path.as_str().to_owned());
        }
        Ok(out)
    }

    /// The texts of `docs` for a tool result, within a per-call count and
    /// size budget; docs past it are named (selected, not shown) so the model
    /// can ask for them by name.
    async fn deliver_docs(&self, skill: &str, docs: &[String]) -> Result<Vec<String>, ToolError> {
        let mut parts = Vec::new();
        let mut bytes = 0usize;
        let mut held_back = Vec::new();
        for doc in docs {
            if parts.len() >= MAX_DOCS_PER_CALL || bytes >= MAX_DOC_BYTES_PER_CALL {
                held_back.push(doc.as_str());
                continue;
            }
            let text = self.read_doc(skill, doc).await?;
            bytes += text.len();
            parts.push(text);
        }
        if !parts.is_empty() {
            parts.push(render::UNTRUSTED_DOCS.to_owned());
        }
        if !held_back.is_empty() {
            parts.push(format!(
                "Selected but not shown, to keep this result small: {}. Name the ones you need \
                 in another call to read them.",
                held_back.join(", ")
            ));
        }
        Ok(parts)
    }

    async fn read_doc(&self, skill: &str, doc: &str) -> Result<String, ToolError> {
        let content = self
            .agent
            .provider()
            .read_resource(skill, doc, None)
            .await
            .map_err(|err| resource_error(&err, skill, doc))?;
        Ok(render::skill_doc(skill, &content))
    }

    async fn op_read(
        &mut self,
        call: &ToolCall,
        args: &ReadSkillFileArgs,
    ) -> Result<Message, ToolError> {
        let meta = self.meta(&args.skill, false)?;
        let name = meta.name.as_str().to_owned();
        record("skill", &name);
        record("path", &clip(&args.path));
        if args.path.len() > MAX_NAME_LEN * 4 {
            return Err(ToolError::new(
                ToolErrorKind::Resource,
                format!("the path `{}` is too long", clip(&args.path)),
            ));
        }
        let range = match (args.start_line, args.end_line) {
            (None, None) => None,
            (start, end) => Some(LineRange::new(start.unwrap_or(1), end).map_err(|err| {
                ToolError::new(
                    ToolErrorKind::InvalidArguments,
                    format!("bad line range: {}", err.message()),
                )
            })?),
        };
        let content = match self
            .agent
            .provider()
            .read_resource(&name, &args.path, range)
            .await
        {
            Ok(content) => content,
            Err(err) => {
                let mut error = resource_error(&err, &name, &args.path);
                // A missing file or a refused path (`..`, absolute): say
                // which files the skill has, so the model can correct itself.
                if matches!(
                    err.kind(),
                    ErrorKind::ResourceNotFound | ErrorKind::InvalidPath
                ) && err.available().is_empty()
                    && let Ok(skill) = self.agent.provider().get(&name).await
                {
                    let paths = skill.resources.paths();
                    error = ToolError::new(
                        ToolErrorKind::Resource,
                        format!(
                            "{}. Files of `{name}`: {}.",
                            error.message().trim_end_matches('.'),
                            if paths.is_empty() {
                                "none".to_owned()
                            } else {
                                paths.join(", ")
                            }
                        ),
                    );
                }
                return Err(error);
            }
        };
        let mut message =
            Message::tool_result(&call.id, &call.name, render::skill_file(&name, &content));
        if self.is_loaded(&name) {
            message = message.with_metadata(TOUCH_KEY, Value::String(name));
        }
        Ok(message)
    }

    async fn op_select_docs(
        &mut self,
        call: &ToolCall,
        args: SelectDocsArgs,
    ) -> Result<Message, ToolError> {
        let (_, name) = self.loaded_meta(&args.skill)?;
        record("skill", &name);
        let skill = self.fetch(&name, false).await?;
        let mode = args.mode.unwrap_or_default();
        let previous = self.state.docs(&name).cloned();
        let requested = if args.include_all_docs.unwrap_or(false) {
            DocSelection::All
        } else {
            DocSelection::Some(self.check_docs(&skill, args.docs.unwrap_or_default())?)
        };
        let merged = merge_selection(previous.clone(), requested.clone(), mode);
        let new_docs = if mode == SelectMode::Clear {
            Vec::new()
        } else {
            docs_to_deliver(&skill, previous.as_ref(), &requested)
        };
        tracing::Span::current().record("docs", new_docs.len());
        let mut parts = self.deliver_docs(&name, &new_docs).await?;
        let names = selection_names(&merged);
        let summary = if names.is_empty() {
            format!("No docs are selected for the skill \"{name}\" now.")
        } else {
            format!(
                "Docs selected for the skill \"{name}\": {}.",
                names.join(", ")
            )
        };
        parts.insert(0, summary);
        self.events.push(Event::DocsSelected {
            skill: name.clone(),
            docs: names,
        });
        Ok(Message::tool_result(&call.id, &call.name, parts.join("\n"))
            .with_metadata(DOCS_KEY, json!({"skill": name, "docs": merged.to_value()}))
            .with_metadata(TOUCH_KEY, Value::String(name)))
    }

    fn op_select_tools(
        &mut self,
        call: &ToolCall,
        args: SelectToolsArgs,
    ) -> Result<Message, ToolError> {
        let (meta, name) = self.loaded_meta(&args.skill)?;
        record("skill", &name);
        let pool = self.pool_names();
        let requested: BTreeSet<String> = args.tools.unwrap_or_default().into_iter().collect();
        if let Some(unknown) = requested.iter().find(|t| !pool.contains(t.as_str())) {
            let list: Vec<&str> = pool.iter().copied().collect();
            return Err(ToolError::new(
                ToolErrorKind::UnknownTool,
                format!(
                    "there is no selectable tool `{}`. Selectable tools: {}.",
                    clip(unknown),
                    if list.is_empty() {
                        "none".to_owned()
                    } else {
                        list.join(", ")
                    }
                ),
            ));
        }
        let current: BTreeSet<String> = match self.state.selected_tools(&name) {
            Some(selected) => selected.clone(),
            None => meta
                .declared_tools
                .iter()
                .filter(|t| pool.contains(t.as_str()))
                .cloned()
                .collect(),
        };
        let next: BTreeSet<String> = match args.mode.unwrap_or_default() {
            SelectMode::Add => current.union(&requested).cloned().collect(),
            SelectMode::Replace => requested,
            SelectMode::Clear => BTreeSet::new(),
        };
        let list: Vec<String> = next.iter().cloned().collect();
        self.events.push(Event::ToolsSelected {
            skill: name.clone(),
            tools: list.clone(),
        });
        Ok(
            Message::tool_result(&call.id, &call.name, render::tools_selected(&name, &list))
                .with_metadata(TOOLS_KEY, json!({"skill": name, "tools": list}))
                .with_metadata(TOUCH_KEY, Value::String(name)),
        )
    }

    async fn op_search(&mut self, call: &ToolCall, args: SearchArgs) -> Result<Message, ToolError> {
        if args.query.len() > MAX_QUERY_LEN {
            return Err(ToolError::new(
                ToolErrorKind::InvalidArguments,
                format!(
                    "the query is too long ({} bytes; at most {MAX_QUERY_LEN})",
                    args.query.len()
                ),
            ));
        }
        tracing::Span::current().record("query_bytes", args.query.len());
        let limit = args.limit.unwrap_or(5).clamp(1, MAX_SEARCH_LIMIT);
        let index = self.search_index().await;
        let hits: Vec<(String, String, f64)> = index
            .search(&args.query, limit)
            .into_iter()
            .filter_map(|hit| {
                self.current
                    .get(&hit.name)
                    .filter(|m| !m.extensions.disable_model_invocation)
                    .map(|m| (hit.name.clone(), m.description.clone(), hit.score))
            })
            .collect();
        tracing::Span::current().record("hits", hits.len());
        let text = render::search_results(&args.query, &hits, self.agent.surface().load_tool());
        Ok(Message::tool_result(&call.id, &call.name, text))
    }

    /// The search index for the current catalog as of the session's last
    /// look at the library (see [`crate::search`]).
    async fn search_index(&self) -> Arc<SearchIndex> {
        let cache = Arc::clone(self.agent.search_cache());
        cache
            .index(self.agent.provider(), &self.current, self.listed_at)
            .await
    }
}

/// Records `value` in the current span's `field` (a no-op without one).
fn record(field: &str, value: &str) {
    tracing::Span::current().record(field, value);
}

fn visible(catalog: &Catalog) -> impl Iterator<Item = &SkillMetadata> {
    catalog
        .entries()
        .iter()
        .filter(|m| !m.extensions.disable_model_invocation)
}

fn join_nonempty(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_owned(),
        (_, true) => a.to_owned(),
        _ => format!("{a}\n\n{b}"),
    }
}

fn apply_delta_metadata(announced: &mut BTreeMap<String, String>, message: &Message) {
    let Some(Value::Object(map)) = message.metadata.get(CATALOG_DELTA_KEY) else {
        return;
    };
    for key in ["added", "changed"] {
        for pair in map.get(key).and_then(Value::as_array).into_iter().flatten() {
            if let (Some(name), Some(description)) = (
                pair.get(0).and_then(Value::as_str),
                pair.get(1).and_then(Value::as_str),
            ) {
                announced.insert(name.to_owned(), description.to_owned());
            }
        }
    }
    for name in map
        .get("removed")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        announced.remove(name);
    }
}

/// The harness notice announcing `delta` (F-DIS-3), with the metadata that
/// lets a replay know what the model has been told.
fn delta_message(delta: &CatalogDelta) -> Message {
    let text = render::catalog_delta(&delta.added, &delta.changed, &delta.removed);
    let metadata = json!({
        "added": delta.added.iter().map(|(n, d)| json!([n, d])).collect::<Vec<_>>(),
        "changed": delta.changed.iter().map(|(n, d)| json!([n, d])).collect::<Vec<_>>(),
        "removed": delta.removed,
    });
    Message::system(text).with_metadata(CATALOG_DELTA_KEY, metadata)
}

fn not_loaded(name: &str, load_tool: &str) -> ToolError {
    ToolError::new(
        ToolErrorKind::NotLoaded,
        format!("the skill `{name}` is not loaded; call `{load_tool}` with it first."),
    )
}

fn provider_error(err: &Error, hint: &str) -> ToolError {
    match err.kind() {
        ErrorKind::SkillNotFound => ToolError::new(
            ToolErrorKind::UnknownSkill,
            format!("{} {hint}", err.message()),
        ),
        _ => ToolError::new(
            ToolErrorKind::Provider,
            format!("the skill could not be read: {}", err.message()),
        ),
    }
}

fn resource_error(err: &Error, skill: &str, path: &str) -> ToolError {
    let mut message = match err.kind() {
        ErrorKind::InvalidPath => format!(
            "`{}` is not a valid path inside the skill `{skill}`: {}",
            clip(path),
            err.message()
        ),
        ErrorKind::Binary => format!("`{}` is a binary file and cannot be shown", clip(path)),
        ErrorKind::TooLarge => format!("`{}` is too large to read: {}", clip(path), err.message()),
        ErrorKind::InvalidRange => format!("bad line range: {}", err.message()),
        ErrorKind::SkillNotFound => format!("no skill is named `{skill}`"),
        _ => err.message().to_owned(),
    };
    if !err.available().is_empty() {
        if !message.ends_with('.') {
            message.push('.');
        }
        message.push_str(&format!(" Available: {}.", err.available().join(", ")));
    }
    let kind = if err.kind() == ErrorKind::InvalidRange {
        ToolErrorKind::InvalidArguments
    } else {
        ToolErrorKind::Resource
    };
    ToolError::new(kind, message)
}

/// The docs a call delivers, in path order: every doc it names (the model
/// asks because it does not see it; after a compaction or out of the history
/// window it may have been selected before), or for "all docs" the ones not
/// selected before.
fn docs_to_deliver(
    skill: &Skill,
    previous: Option<&DocSelection>,
    requested: &DocSelection,
) -> Vec<String> {
    match requested {
        DocSelection::All => skills_core::list_docs(skill)
            .into_iter()
            .map(|d| d.as_str().to_owned())
            .filter(|d| !previous.is_some_and(|p| p.contains(d)))
            .collect(),
        DocSelection::Some(docs) => docs.iter().cloned().collect(),
    }
}

fn merge_selection(
    previous: Option<DocSelection>,
    requested: DocSelection,
    mode: SelectMode,
) -> DocSelection {
    match (mode, previous, requested) {
        (SelectMode::Clear, _, _) => DocSelection::Some(BTreeSet::new()),
        (SelectMode::Replace, _, requested) => requested,
        (SelectMode::Add, _, DocSelection::All) | (SelectMode::Add, Some(DocSelection::All), _) => {
            DocSelection::All
        }
        (SelectMode::Add, Some(DocSelection::Some(mut old)), DocSelection::Some(new)) => {
            old.extend(new);
            DocSelection::Some(old)
        }
        (SelectMode::Add, None, requested) => requested,
    }
}

fn selection_names(selection: &DocSelection) -> Vec<String> {
    match selection {
        DocSelection::All => vec!["*".to_owned()],
        DocSelection::Some(docs) => docs.iter().cloned().collect(),
    }
}

/// The longest prefix of `text`, cut at a line end when possible, that
/// `count` says fits in `tokens`.
fn prefix_within<'t>(text: &'t str, tokens: usize, counter: &dyn TokenCounter) -> &'t str {
    let count = |text: &str| counter.count(text);
    if count(text) <= tokens {
        return text;
    }
    let (mut lo, mut hi) = (0usize, text.len());
    while lo < hi {
        let mut mid = lo + (hi - lo).div_ceil(2);
        while !text.is_char_boundary(mid) {
            mid -= 1;
        }
        if mid <= lo {
            break;
        }
        if count(&text[..mid]) <= tokens {
            lo = mid;
        } else {
            hi = mid - 1;
            while !text.is_char_boundary(hi) {
                hi -= 1;
            }
        }
    }
    let cut = &text[..lo];
    match cut.rfind('\n') {
        Some(nl) if nl > 0 => &cut[..nl],
        _ => cut,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn prefix_within_cuts_at_line_end() {
        let text = "line one\nline two\nline three";
        assert_eq!(prefix_within(text, 100, &skills_core::EstimateTokens), text);
        assert_eq!(
            prefix_within(text, 4, &skills_core::EstimateTokens),
            "line one"
        );
        assert_eq!(prefix_within(text, 0, &skills_core::EstimateTokens), "");
    }
}
