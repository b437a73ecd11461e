//! `skills-agent`: how Agent Skills reach a model.
//!
//! This crate is the disclosure engine and the agent loop. Given a
//! [`skills_core::SkillProvider`] it renders the catalog once per session into
//! a stable system block, offers the skill tools of a preset surface (the Helix
//! names `load_skill` / `read_skill_file` by default, the trpc-agent six, or
//! Eino's single tool), runs the calls the model makes, keeps per-agent load
//! state that is always re-derivable from the transcript, and builds
//! provider-neutral [`ModelRequest`]s whose prefix only ever grows. The
//! [`Runner`] drives a [`Model`] through all of it (tool calls, forked
//! sub-agents, the allowed-tools policy), emitting [`RunEvent`]s. Sessions
//! persist through the [`SessionStore`] trait (an append-only event log with
//! the pinned catalog; [`SessionWriter`], [`Agent::resume_stored`],
//! [`MemoryStore`]); the SQLite and PostgreSQL stores are in `skills-store`
//! (see `docs/sessions.md`).
//!
//! ```
//! use std::sync::Arc;
//! use skills_agent::{Agent, ToolCall, Dispatch};
//! use skills_core::{InCodeProvider, define_skill};
//!
//! # pollster::block_on(async {
//! let skill = define_skill("greeting", "Greets people warmly. Use when someone says hello.")
//!     .body("Say hello back and ask how you can help.")
//!     .build()?;
//! let provider = Arc::new(InCodeProvider::new([skill])?);
//! let agent = Agent::builder("assistant", provider).instructions("You are helpful.").build()?;
//! let mut session = agent.start_session().await?;
//! session.push_user("hello!").await?;
//! let request = session.build_request();
//! assert!(request.system[0].text.contains("<skill name=\"greeting\">"));
//! let call = ToolCall::new("c1", "load_skill", serde_json::json!({"name": "greeting"}));
//! match session.handle_tool_call(&call).await {
//!     Dispatch::Handled(result) => assert!(result.content.contains("Say hello back")),
//!     Dispatch::External => unreachable!("load_skill is a skill tool"),
//!     // `Dispatch` is non-exhaustive: keep a catch-all arm.
//!     _ => {}
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! Feature `testing` (off by default) adds test support that is not part of
//! the production API: `ScriptedModel`, a [`Model`] that answers from a
//! script and records every request, its `ScriptStep`s, and the error kind
//! `ModelErrorKind::Script` it fails with when the script runs out. Tests,
//! demos and examples turn it on in their `Cargo.toml`:
//! `skills-agent = { workspace = true, features = ["testing"] }`.
//!
//! Boundaries: no I/O and no HTTP here (the model adapters for OpenAI and
//! Anthropic, and their wire encoders, are in `skills-models`; see
//! `docs/models.md`); the crate builds for `wasm32-unknown-unknown`. It
//! depends on `skills-core` and `skills-workspace` only, never on
//! `skills-fs` or `skills-exec`: those plug in through
//! [`skills_core::SkillProvider`] and [`skills_workspace::WorkspaceRuntime`].

mod attachment;
mod config;
mod library;
mod mention;
mod message;
mod model;
mod render;
mod request;
mod run_tools;
mod runner;
#[cfg(feature = "testing")]
mod scripted;
mod search;
mod session;
mod state;
mod store;
mod surface;
mod tool;

pub use attachment::{Attachment, MAX_ATTACHMENT_NAME_LEN};
pub use config::{
    Agent, AgentBuilder, BuildError, BuildErrorKind, CatalogMode, Lifetime, Materialization,
    Profile, PromptContext, PromptHook, ReattachBudget,
};
pub use library::Library;
pub use mention::MAX_MENTIONS;
pub use message::{Message, Role, ToolCall, UserInput};
pub use model::{
    Model, ModelError, ModelErrorKind, ModelEvent, ModelResponse, ModelStream, Retry, StopReason,
    Usage, completed_events,
};
pub use render::{WRAPPER_TAGS, neutralize};
pub use request::{CacheBreakpoint, CacheStrategy, MAX_BREAKPOINTS, ModelRequest, SystemBlock};
pub use runner::{
    AgentHub, AgentMap, Approver, CancelToken, Cancelled, DEFAULT_MAX_STEPS,
    DEFAULT_POLICY_ARGUMENT, DEFAULT_TOOL_CONCURRENCY, FnTool, GrantLifetime, INHERIT_MODEL,
    MAX_FORK_DEPTH, ModelHub, ModelMap, RequestStats, RunError, RunErrorKind, RunEvent, RunOutcome,
    RunStream, Runner, RunnerBuilder, ToolHandler, ToolPattern, ToolPolicy, tool_fn,
};
#[cfg(feature = "testing")]
pub use scripted::{ScriptStep, ScriptedModel};
pub use search::{FETCH_CONCURRENCY, SEARCH_REFERENCE_BYTES, SearchCache};
pub use session::{
    CatalogDelta, CompactionReport, Dispatch, Event, ForkRequest, ReleaseReason, Session,
};
pub use state::{DocSelection, LoadState};
pub use store::{
    ForkPoint, MAX_LINEAGE_DEPTH, MAX_SESSION_ID_LEN, MemoryStore, NewSession, SessionEvent,
    SessionInfo, SessionStore, SessionWriter, StoreError, StoreErrorKind, StoredEvent,
    check_new_session, check_sequence, read_lineage, validate_session_id,
};
pub use surface::{DescriptionHook, EinoOptions, SEARCH_TOOL, SelectMode, Surface};
pub use tool::{ToolError, ToolErrorKind, ToolSpec};

#[cfg(doctest)]
#[doc = include_str!("../../../docs/agent.md")]
struct AgentGuide;

#[cfg(doctest)]
#[doc = include_str!("../../../docs/tiers.md")]
struct TiersGuide;
