//! Agent configuration: which tool surface, how bodies materialize, how long
//! loads last, which user tools exist (F-DIS-7, F-DIS-8, F-DIS-9, F-DIS-10).
//!
//! [`AgentBuilder::build`] checks everything that can be checked before a
//! conversation starts: a user tool that shadows a skill tool, duplicate or
//! malformed tool names, the `full` profile without a runtime.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;
use skills_core::{
    Catalog, EstimateTokens, Probe, RenderOptions, SkillProvider, TokenCounter, VisibilityPolicy,
};
use skills_workspace::{SessionId, WorkspaceRuntime};

use crate::request::CacheStrategy;
use crate::run_tools::{RunContext, RunTools};
use crate::search::SearchCache;
use crate::surface::{Operation, Surface, surface_tool_names};
use crate::tool::{ToolError, ToolSpec, is_valid_tool_name};

/// Which tools beyond reading knowledge the agent gets (F-DIS-8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Profile {
    /// Load skills and read their files and docs. No execution.
    #[default]
    KnowledgeOnly,
    /// Also the run tools over a [`WorkspaceRuntime`]
    /// ([`AgentBuilder::runtime`]).
    Full,
}

/// Where a loaded body reaches the model (F-DIS-9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Materialization {
    /// In the load tool's result (append-only; the default).
    #[default]
    ToolResult,
    /// Legacy: the tool result is a short stub and the bodies of loaded
    /// skills sit in a second system block, rebuilt on every request. Kept
    /// for compatibility; it moves the prompt prefix whenever the loaded set
    /// changes.
    SystemMessage,
}

/// How long a load counts (F-DIS-10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Lifetime {
    /// For the next model request and the tool calls of the answer to it;
    /// the request after that answer no longer counts it.
    Once,
    /// Until the next user message.
    Turn,
    /// For the whole session (the default: the body stays in the
    /// transcript, so it stays valid).
    #[default]
    Session,
}

/// How the model learns which skills exist.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum CatalogMode {
    /// The rendered catalog sits in the stable system block (the default).
    InPrompt(RenderOptions),
    /// No catalog in the prompt: the model finds skills with `search_skills`
    /// and loads them (F-DIS-12), for libraries too large to list.
    OnDemand,
}

impl Default for CatalogMode {
    fn default() -> Self {
        Self::InPrompt(RenderOptions::default())
    }
}

/// Budget for re-attaching loaded bodies after a compaction (F-DIS-13).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReattachBudget {
    /// Most tokens one skill's body may take.
    pub per_skill_tokens: usize,
    /// Most tokens all re-attached bodies may take together.
    pub total_tokens: usize,
}

impl Default for ReattachBudget {
    fn default() -> Self {
        Self {
            per_skill_tokens: 5_000,
            total_tokens: 25_000,
        }
    }
}

/// Replaces the text around the catalog (Eino's custom prompt hook).
pub type PromptHook = Arc<dyn Fn(&PromptContext<'_>) -> String + Send + Sync>;

/// What a [`PromptHook`] sees.
#[derive(Debug, Clone, Copy)]
pub struct PromptContext<'a> {
    /// The agent's own instructions.
    pub instructions: &'a str,
    /// The rendered catalog ("" in on-demand mode or when the catalog goes
    /// into a tool description instead).
    pub catalog: &'a str,
    /// The name of the load tool.
    pub load_tool: &'a str,
}

/// What kind of configuration problem stopped [`AgentBuilder::build`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BuildErrorKind {
    /// The agent's name is empty.
    EmptyName,
    /// The `full` profile was chosen without a runtime.
    MissingRuntime,
    /// A tool name is not a valid tool name.
    InvalidToolName,
    /// A tool name shadows a skill tool of the surface.
    ReservedToolName,
    /// Two tools have the same name.
    DuplicateTool,
}

/// Why an agent could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError {
    kind: BuildErrorKind,
    message: String,
}

impl BuildError {
    fn new(kind: BuildErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> BuildErrorKind {
        self.kind
    }

    /// The explanation.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BuildError {}

/// The host's probe, with tools answered from the agent's tool table.
struct AgentProbe<'a> {
    probe: &'a (dyn Probe + Send + Sync),
    tools: BTreeSet<&'a str>,
}

impl Probe for AgentProbe<'_> {
    fn has_bin(&self, name: &str) -> bool {
        self.probe.has_bin(name)
    }
    fn has_env(&self, name: &str) -> bool {
        self.probe.has_env(name)
    }
    fn os(&self) -> &str {
        self.probe.os()
    }
    fn has_tool(&self, name: &str) -> Option<bool> {
        Some(self.tools.contains(name) || self.probe.has_tool(name) == Some(true))
    }
}

/// Builds an [`Agent`].
#[derive(Clone)]
pub struct AgentBuilder {
    pub(crate) name: String,
    pub(crate) instructions: String,
    pub(crate) provider: Arc<dyn SkillProvider>,
    pub(crate) surface: Surface,
    pub(crate) profile: Profile,
    pub(crate) runtime: Option<RunTools>,
    pub(crate) materialization: Materialization,
    pub(crate) lifetime: Lifetime,
    pub(crate) max_loaded: Option<usize>,
    pub(crate) catalog: CatalogMode,
    pub(crate) search: bool,
    pub(crate) tools: Vec<ToolSpec>,
    pub(crate) tool_pool: Vec<ToolSpec>,
    /// The caller's cache strategy; `None` follows the model.
    pub(crate) cache: Option<CacheStrategy>,
    pub(crate) reattach: ReattachBudget,
    pub(crate) token_counter: Arc<dyn TokenCounter>,
    pub(crate) prompt_hook: Option<PromptHook>,
    pub(crate) search_cache: Option<Arc<SearchCache>>,
    pub(crate) visibility: Arc<VisibilityPolicy>,
    pub(crate) probe: Option<Arc<dyn Probe + Send + Sync>>,
    pub(crate) preload: Vec<String>,
}

impl fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentBuilder")
            .field("name", &self.name)
            .field("surface", &self.surface)
            .field("profile", &self.profile)
            .field("materialization", &self.materialization)
            .field("lifetime", &self.lifetime)
            .field("max_loaded", &self.max_loaded)
            .field("catalog", &self.catalog)
            .field("search", &self.search)
            .field("tools", &self.tools.len())
            .field("tool_pool", &self.tool_pool.len())
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

impl AgentBuilder {
    /// A builder for an agent named `name` over `provider`, with the defaults:
    /// Helix tool names, knowledge-only, bodies in tool results, session
    /// lifetime, no cap, catalog in the prompt, and the cache strategy of
    /// the model each request goes to.
    pub fn new(name: impl Into<String>, provider: Arc<dyn SkillProvider>) -> Self {
        Self {
            name: name.into(),
            instructions: String::new(),
            provider,
            surface: Surface::default(),
            profile: Profile::default(),
            runtime: None,
            materialization: Materialization::default(),
            lifetime: Lifetime::default(),
            max_loaded: None,
            catalog: CatalogMode::default(),
            search: false,
            tools: Vec::new(),
            tool_pool: Vec::new(),
            cache: None,
            reattach: ReattachBudget::default(),
            token_counter: Arc::new(EstimateTokens),
            prompt_hook: None,
            search_cache: None,
            visibility: Arc::new(VisibilityPolicy::default()),
            probe: None,
            preload: Vec::new(),
        }
    }

    /// The agent's own instructions (the start of the stable system block).
    #[must_use]
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = text.into();
        self
    }

    /// The tool surface preset.
    #[must_use]
    pub fn surface(mut self, surface: Surface) -> Self {
        self.surface = surface;
        self
    }

    /// The tool profile; [`Profile::Full`] needs [`AgentBuilder::runtime`].
    #[must_use]
    pub fn profile(mut self, profile: Profile) -> Self {
        self.profile = profile;
        self
    }

    /// The execution runtime the `full` profile's run tools use (see the
    /// surface's names in [`Surface`]): `run_skill_command` / `skill_run`
    /// runs one command, the interactive session tools start, type into,
    /// poll and end a command on a terminal. Each session has its own
    /// workspace (its [`Session::id`](crate::Session::id)); a run or exec
    /// call stages the skill from the agent's provider first
    /// ([`WorkspaceRuntime::stage_from`]). Results are the runtime's result
    /// as JSON.
    #[must_use]
    pub fn runtime(mut self, runtime: Arc<dyn WorkspaceRuntime>) -> Self {
        self.runtime = Some(RunTools {
            runtime,
            require_loaded: true,
            interactive: true,
        });
        self
    }

    /// Whether a command may run only for a skill loaded in the session
    /// (default `true`; a server whose clients read skills without the load
    /// tool turns it off). Needs [`AgentBuilder::runtime`] first.
    #[must_use]
    pub fn runs_require_load(mut self, on: bool) -> Self {
        if let Some(run) = &mut self.runtime {
            run.require_loaded = on;
        }
        self
    }

    /// Whether to offer the interactive session tools (default `true`; turn
    /// off for a batch-only runtime). Needs [`AgentBuilder::runtime`] first.
    #[must_use]
    pub fn interactive_runs(mut self, on: bool) -> Self {
        if let Some(run) = &mut self.runtime {
            run.interactive = on;
        }
        self
    }

    /// Where loaded bodies reach the model.
    #[must_use]
    pub fn materialization(mut self, materialization: Materialization) -> Self {
        self.materialization = materialization;
        self
    }

    /// How long a load counts.
    #[must_use]
    pub fn lifetime(mut self, lifetime: Lifetime) -> Self {
        self.lifetime = lifetime;
        self
    }

    /// Keeps at most `n` skills loaded (the most recently used win).
    #[must_use]
    pub fn max_loaded(mut self, n: usize) -> Self {
        self.max_loaded = Some(n.max(1));
        self
    }

    /// How the model learns which skills exist.
    #[must_use]
    pub fn catalog(mut self, mode: CatalogMode) -> Self {
        self.catalog = mode;
        self
    }

    /// Adds the `search_skills` tool (always on in [`CatalogMode::OnDemand`]).
    #[must_use]
    pub fn search(mut self, enabled: bool) -> Self {
        self.search = enabled;
        self
    }

    /// A user tool that is always exposed.
    #[must_use]
    pub fn tool(mut self, tool: ToolSpec) -> Self {
        self.tools.push(tool);
        self
    }

    /// A pool tool: hidden until a loaded skill declares it in its `Tools:`
    /// section or `skill_select_tools` selects it (F-DIS-11).
    #[must_use]
    pub fn pool_tool(mut self, tool: ToolSpec) -> Self {
        self.tool_pool.push(tool);
        self
    }

    /// Overrides the cache strategy for every model.
    ///
    /// Without it a request gets the strategy of the model it goes to
    /// ([`Model::cache_strategy`](crate::Model::cache_strategy)): explicit
    /// breakpoints for Anthropic, none for OpenAI-style automatic prefix
    /// caching. Set it for a model that does not say what its provider needs
    /// (an Anthropic-compatible server behind your own [`Model`](crate::Model)
    /// type), or to turn markers off. [`Session::build_request`](crate::Session::build_request),
    /// which knows no model, uses it too (else automatic prefix).
    #[must_use]
    pub fn cache(mut self, strategy: CacheStrategy) -> Self {
        self.cache = Some(strategy);
        self
    }

    /// The compaction re-attachment budget.
    #[must_use]
    pub fn reattach_budget(mut self, budget: ReattachBudget) -> Self {
        self.reattach = budget;
        self
    }

    /// How tokens are counted for budgets (default [`EstimateTokens`]:
    /// characters / 4). Any [`TokenCounter`] fits, e.g. a BPE tokenizer built
    /// at run time.
    #[must_use]
    pub fn token_counter(mut self, counter: Arc<dyn TokenCounter>) -> Self {
        self.token_counter = counter;
        self
    }

    /// Replaces the stable system text (Eino's prompt hook). The hook gets the
    /// instructions and the rendered catalog and returns the whole block.
    #[must_use]
    pub fn prompt_hook(mut self, hook: PromptHook) -> Self {
        self.prompt_hook = Some(hook);
        self
    }

    /// The cache of search indexes to use (default: one of the agent's own,
    /// shared by its sessions). Pass one `Arc` to several agents over the same
    /// provider – the per-request agents of a server, say – and they share one
    /// index per library version.
    #[must_use]
    pub fn search_cache(mut self, cache: Arc<SearchCache>) -> Self {
        self.search_cache = Some(cache);
        self
    }

    /// What the model sees of each skill: tiers (`off`, `manual`,
    /// `name-only`, `listed`, `pinned`, `preloaded`) and priorities, set
    /// without touching the skills. It decides the prompt's catalog (and who
    /// gives way to its budget), catalog deltas, search hits and which loads
    /// the model may make; `preloaded` skills load before the first model
    /// call of each session (see [`AgentBuilder::preload`]). Frozen per
    /// session.
    #[must_use]
    pub fn visibility(mut self, policy: VisibilityPolicy) -> Self {
        self.visibility = Arc::new(policy);
        self
    }

    /// Checks each skill's declared requirements (binaries, environment
    /// variables, operating system; tools against this agent's own tools)
    /// with `probe` when a session starts and when new skills appear. A
    /// skill with unmet requirements needs setup: it is left out of the
    /// catalog, a load by the model or the app is refused naming what is
    /// missing; a user's `$name` mention still loads it. Without a probe
    /// (the default) requirements are not checked. `skills_fs::SystemProbe`
    /// probes the machine; the probe is asked synchronously (for
    /// `SystemProbe`, a few `stat` calls per program, cached per process).
    #[must_use]
    pub fn requirements_probe(mut self, probe: Arc<dyn Probe + Send + Sync>) -> Self {
        self.probe = Some(probe);
        self
    }

    /// Skills every session loads before its first model call, as if the
    /// model had called the load tool for them (so the transcript says so
    /// and the prompt prefix only grows), besides those whose tier is
    /// `preloaded`. All load or none: an unknown, `off` or needs-setup
    /// skill fails the first turn before the model is called.
    #[must_use]
    pub fn preload<I, S>(mut self, skills: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.preload.extend(skills.into_iter().map(Into::into));
        self
    }

    /// Checks the configuration and builds the agent.
    pub fn build(self) -> Result<Agent, BuildError> {
        if self.name.trim().is_empty() {
            return Err(BuildError::new(
                BuildErrorKind::EmptyName,
                "the agent needs a non-empty name",
            ));
        }
        let run = match (self.profile, &self.runtime) {
            (Profile::Full, None) => {
                return Err(BuildError::new(
                    BuildErrorKind::MissingRuntime,
                    "the `full` profile needs a runtime (AgentBuilder::runtime); \
                     use Profile::KnowledgeOnly for an agent without run tools",
                ));
            }
            (Profile::Full, Some(run)) => Some(run.clone()),
            (Profile::KnowledgeOnly, _) => None,
        };
        let run_specs = run
            .as_ref()
            .map(|run| run.specs(&self.surface))
            .unwrap_or_default();
        let search = self.search || matches!(self.catalog, CatalogMode::OnDemand);
        let mut surface_names = surface_tool_names(&self.surface, search);
        surface_names.extend(run_specs.iter().map(|t| t.name.clone()));
        surface_names.sort();
        // Only the Eino preset's name is configurable; it must be a valid
        // name and must not collide with `search_skills`.
        if let Some(name) = surface_names.iter().find(|n| !is_valid_tool_name(n)) {
            return Err(BuildError::new(
                BuildErrorKind::InvalidToolName,
                format!(
                    "skill tool name {name:?} is not a valid tool name (1 to 64 of A-Z, a-z, 0-9, `_`, `-`)"
                ),
            ));
        }
        if let Some(pair) = surface_names.windows(2).find(|pair| pair[0] == pair[1]) {
            return Err(BuildError::new(
                BuildErrorKind::DuplicateTool,
                format!(
                    "skill tool `{}` is defined twice; give the Eino tool another name",
                    pair[0]
                ),
            ));
        }
        let reserved: BTreeSet<String> = surface_names.into_iter().collect();
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let groups = [("user tool", &self.tools), ("pool tool", &self.tool_pool)];
        for (what, tools) in groups {
            for tool in tools {
                if !is_valid_tool_name(&tool.name) {
                    return Err(BuildError::new(
                        BuildErrorKind::InvalidToolName,
                        format!(
                            "{what} name {:?} is not a valid tool name (1 to 64 of A-Z, a-z, 0-9, `_`, `-`)",
                            tool.name
                        ),
                    ));
                }
                if reserved.contains(&tool.name) {
                    return Err(BuildError::new(
                        BuildErrorKind::ReservedToolName,
                        format!(
                            "{what} `{}` shadows a skill tool; reserved names for this surface: {}",
                            tool.name,
                            reserved.iter().cloned().collect::<Vec<_>>().join(", ")
                        ),
                    ));
                }
                if !seen.insert(&tool.name) {
                    return Err(BuildError::new(
                        BuildErrorKind::DuplicateTool,
                        format!("tool `{}` is defined twice", tool.name),
                    ));
                }
            }
        }
        let search_cache = self.search_cache.clone().unwrap_or_default();
        Ok(Agent {
            inner: Arc::new(AgentInner {
                config: self,
                run,
                run_specs,
                search,
                search_cache,
            }),
        })
    }
}

pub(crate) struct AgentInner {
    pub(crate) config: AgentBuilder,
    /// The run tools, with the `full` profile.
    pub(crate) run: Option<RunTools>,
    /// Their specs, built once.
    pub(crate) run_specs: Vec<ToolSpec>,
    pub(crate) search: bool,
    /// The search indexes (shared by the sessions, and by other agents when
    /// configured so).
    pub(crate) search_cache: Arc<SearchCache>,
}

/// A configured agent: cheap to clone, shared by all its sessions.
#[derive(Clone)]
pub struct Agent {
    pub(crate) inner: Arc<AgentInner>,
}

impl fmt::Debug for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// A builder.
    pub fn builder(name: impl Into<String>, provider: Arc<dyn SkillProvider>) -> AgentBuilder {
        AgentBuilder::new(name, provider)
    }

    /// The agent's name.
    pub fn name(&self) -> &str {
        &self.inner.config.name
    }

    /// The skill provider.
    pub fn provider(&self) -> &Arc<dyn SkillProvider> {
        &self.inner.config.provider
    }

    /// The tool surface.
    pub fn surface(&self) -> &Surface {
        &self.inner.config.surface
    }

    /// The cache strategy set with [`AgentBuilder::cache`], if any (it wins
    /// over the model's own).
    pub fn cache_override(&self) -> Option<CacheStrategy> {
        self.inner.config.cache
    }

    /// The cache strategy this agent's requests to `model` use: the
    /// builder's override, else the model's own
    /// ([`Model::cache_strategy`](crate::Model::cache_strategy)).
    pub fn cache_strategy_for<M: crate::Model + ?Sized>(&self, model: &M) -> CacheStrategy {
        self.inner
            .config
            .cache
            .unwrap_or_else(|| model.cache_strategy())
    }

    /// Whether `search_skills` is offered.
    pub fn has_search(&self) -> bool {
        self.inner.search
    }

    /// The runtime the run tools use (with the `full` profile).
    pub fn runtime(&self) -> Option<&Arc<dyn WorkspaceRuntime>> {
        self.inner.run.as_ref().map(|run| &run.runtime)
    }

    /// Runs the run tool `tool` (the `full` profile's `run_skill_command`,
    /// `skill_run`, the interactive session tools) outside a session, in the
    /// workspace of `session_id`, with no skill counted as loaded (so only
    /// for an agent built with
    /// [`runs_require_load(false)`](AgentBuilder::runs_require_load)): the
    /// result text, or the error to show. `None` when `tool` is not one of
    /// this agent's run tools. A server that keeps no conversation (the MCP
    /// server) calls this; a [`Session`](crate::Session) dispatches its own.
    pub async fn call_run_tool(
        &self,
        session_id: &SessionId,
        tool: &str,
        arguments: &Value,
    ) -> Option<Result<String, ToolError>> {
        let op = self.run_operation(tool)?;
        let run = self.inner.run.as_ref()?;
        let loaded = BTreeSet::new();
        let context = RunContext {
            session_id,
            loaded: &loaded,
            provider: self.provider(),
            surface: self.surface(),
            attachments: &[],
        };
        Some(run.call(&context, op, tool, arguments).await.result)
    }

    /// The run operation behind `tool`, when this agent offers run tools
    /// and `tool` is one of them.
    pub(crate) fn run_operation(&self, tool: &str) -> Option<Operation> {
        let run = self.inner.run.as_ref()?;
        self.surface().run_operation(tool, run.interactive)
    }

    /// The cache of search indexes this agent uses.
    pub fn search_cache(&self) -> &Arc<SearchCache> {
        &self.inner.search_cache
    }

    /// The names of the skill tools this agent reserves.
    pub fn reserved_tool_names(&self) -> Vec<String> {
        surface_tool_names(&self.inner.config.surface, self.inner.search)
    }

    pub(crate) fn config(&self) -> &AgentBuilder {
        &self.inner.config
    }

    /// `base` with the requirements of `catalog`'s skills checked by the
    /// agent's probe (tools against the agent's own tools); `base` as it is
    /// without a probe.
    pub(crate) fn session_policy(
        &self,
        catalog: &Catalog,
        base: &VisibilityPolicy,
    ) -> VisibilityPolicy {
        let mut policy = base.clone();
        if let Some(probe) = &self.inner.config.probe {
            let config = &self.inner.config;
            let mut tools: BTreeSet<&str> = config
                .tools
                .iter()
                .chain(&config.tool_pool)
                .map(|t| t.name.as_str())
                .collect();
            let reserved = self.reserved_tool_names();
            tools.extend(reserved.iter().map(String::as_str));
            let probe = AgentProbe {
                probe: probe.as_ref(),
                tools,
            };
            policy.check_requirements(catalog.entries(), &probe);
        }
        policy
    }

    /// Lists the provider's catalog (one async call).
    pub(crate) async fn list(&self) -> skills_core::Result<Catalog> {
        self.inner.config.provider.list().await
    }
}
