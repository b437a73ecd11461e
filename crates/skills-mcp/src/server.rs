//! The MCP handler: the Skills extension, `skill://` resources, the
//! fallback tools and the catalog as instructions, on one [`SkillProvider`].

use std::borrow::Cow;
use std::fmt;

use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use base64::Engine as _;
use base64::prelude::BASE64_STANDARD;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
    GetSkillRequestParams, GetSkillResult, Implementation, ListResourcesResult, ListSkillsResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceDirectoryRequestParams,
    ReadResourceDirectoryResult, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ResourceContents, ServerCapabilities, ServerConfig, SubscriptionFilter,
    Tool, ToolAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use skills_agent::{Agent, Library, Profile, Surface};
use skills_core::{
    Budget, Catalog, ErrorKind, FilteredProvider, Probe, RenderOptions, SkillProvider, Tier,
    VisibilityPolicy,
};
use skills_workspace::{SessionId, WorkspaceRuntime};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use crate::error::{Error, ErrorKind as McpErrorKind};
use crate::index::{Entry, SkillIndex};
use crate::manifest::{Manifest, ManifestError, Manifests};
use crate::resource_cache::ResourceCache;
use crate::uri::{SKILL_MD, SkillUri};

/// Skills per page of `skills/list` and `resources/list` by default.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// How often the catalog is polled for changes by default.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(2);

/// Builds a [`SkillsServer`].
pub struct SkillsServerBuilder {
    provider: Arc<dyn SkillProvider>,
    runtime: Option<Arc<dyn WorkspaceRuntime>>,
    page_size: usize,
    poll_interval: Duration,
    name: String,
    version: String,
    visibility: VisibilityPolicy,
    probe: Option<Arc<dyn Probe + Send + Sync>>,
    budget: Budget,
}

impl std::fmt::Debug for SkillsServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillsServerBuilder")
            .field("provider", &self.provider)
            .field("runtime", &self.runtime)
            .field("page_size", &self.page_size)
            .field("poll_interval", &self.poll_interval)
            .field("name", &self.name)
            .field("version", &self.version)
            .field("visibility", &self.visibility)
            .field("probe", &self.probe.is_some())
            .field("budget", &self.budget)
            .finish()
    }
}

impl SkillsServerBuilder {
    /// What clients and their models see of each skill (tiers, priorities):
    /// `off` skills are served nowhere (not listed, not readable, not
    /// loadable); `manual` ones are listed as resources but left out of the
    /// instructions and refused to `load_skill`; `name-only` ones appear in
    /// the instructions without a description. The server cannot load
    /// anything before a client's model runs, so `preloaded` counts as
    /// `pinned`.
    #[must_use]
    pub fn visibility(mut self, policy: VisibilityPolicy) -> Self {
        self.visibility = policy;
        self
    }

    /// The budget of the catalog in the `instructions` (default: none);
    /// over it, descriptions go and then skills, in the policy's give-way
    /// order (docs/catalog.md).
    #[must_use]
    pub fn catalog_budget(mut self, budget: Budget) -> Self {
        self.budget = budget;
        self
    }

    /// Checks each skill's declared requirements with `probe`: a skill
    /// needing setup is left out of the instructions and `load_skill`
    /// refuses it naming what is missing (see
    /// `AgentBuilder::requirements_probe`).
    #[must_use]
    pub fn requirements_probe(mut self, probe: Arc<dyn Probe + Send + Sync>) -> Self {
        self.probe = Some(probe);
        self
    }

    /// Offers the run tools (`run_skill_command` and the interactive session
    /// tools) on `runtime`; without it only `load_skill` and
    /// `read_skill_file` are offered.
    #[must_use]
    pub fn runtime(mut self, runtime: Arc<dyn WorkspaceRuntime>) -> Self {
        self.runtime = Some(runtime);
        self
    }

    /// Skills per page of `skills/list` and `resources/list` (at least 1;
    /// default [`DEFAULT_PAGE_SIZE`]).
    #[must_use]
    pub fn page_size(mut self, n: usize) -> Self {
        self.page_size = n.max(1);
        self
    }

    /// How often the provider is asked for its catalog, to announce changes
    /// (default [`DEFAULT_POLL_INTERVAL`]). The filesystem provider answers
    /// from its staleness cache, so polling is cheap.
    #[must_use]
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval.max(Duration::from_millis(10));
        self
    }

    /// The name and version the server reports in `serverInfo` (default
    /// `skills` and this crate's version).
    #[must_use]
    pub fn server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.name = name.into();
        self.version = version.into();
        self
    }

    /// Reads the catalog once, starts the reload task (on the current tokio
    /// runtime) and returns the server.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Provider`](crate::ErrorKind::Provider) when the first
    /// catalog cannot be read, [`ErrorKind::Config`](crate::ErrorKind::Config)
    /// when the fallback tools cannot be set up.
    pub async fn build(mut self) -> Result<SkillsServer, Error> {
        let policy = Arc::new(self.visibility.clone());
        if self
            .visibility
            .skills
            .values()
            .any(|rule| rule.tier == Some(Tier::Off))
            || self.visibility.default_tier == Tier::Off
        {
            let keep = Arc::clone(&policy);
            self.provider = Arc::new(FilteredProvider::new(self.provider, move |m| {
                keep.tier(m) != Tier::Off
            }));
        }
        let catalog = self.provider.list().await.map_err(|err| {
            Error::new(
                McpErrorKind::Provider,
                format!("cannot list the skills: {err}"),
            )
        })?;
        let mut agent = Agent::builder("skills-mcp", Arc::clone(&self.provider))
            .surface(Surface::Default)
            .visibility(self.visibility.clone());
        if let Some(probe) = &self.probe {
            agent = agent.requirements_probe(Arc::clone(probe));
        }
        if let Some(runtime) = &self.runtime {
            // A client that read SKILL.md through the extension has "loaded"
            // it without calling `load_skill`: runs are not gated on loads.
            agent = agent
                .profile(Profile::Full)
                .runtime(Arc::clone(runtime))
                .runs_require_load(false);
        }
        let agent = agent
            .build()
            .map_err(|err| Error::new(McpErrorKind::Config, err.to_string()))?;
        // The tool list a session of this agent offers, built once.
        let tools = agent
            .start_session()
            .await
            .map_err(|err| Error::new(McpErrorKind::Provider, err.to_string()))?
            .tools()
            .into_iter()
            .map(|spec| {
                let schema = match spec.parameters {
                    serde_json::Value::Object(map) => map,
                    _ => serde_json::Map::new(),
                };
                annotate(Tool::new(spec.name, spec.description, schema))
            })
            .collect();
        let checked_policy = checked(&catalog, &policy, self.probe.as_deref());
        let (changes, _) = watch::channel(0u64);
        let shared = Arc::new(Shared {
            instructions: RwLock::new(instructions(&catalog, &checked_policy, self.budget)),
            checked: RwLock::new(checked_policy),
            index: RwLock::new(Arc::new(SkillIndex::new(catalog.clone()))),
            catalog: RwLock::new(catalog),
            provider: self.provider,
            runtime: self.runtime,
            agent,
            tools,
            manifests: Manifests::default(),
            policy,
            probe: self.probe,
            budget: self.budget,
            files: ResourceCache::default(),
            page_size: self.page_size,
            poll_interval: self.poll_interval,
            changes,
            info: Implementation::new(self.name, self.version),
            stop: CancellationToken::new(),
        });
        tokio::spawn(reload(Arc::downgrade(&shared), shared.stop.clone()));
        Ok(SkillsServer {
            shared,
            connection: Arc::new(Connection::new(None)),
        })
    }
}

/// An MCP server for the skills of one [`SkillProvider`].
///
/// It implements rmcp's [`ServerHandler`]:
/// * the Skills extension (`io.modelcontextprotocol/skills`, SEP-2640),
///   declared with directory reads: `skills/list` (paginated, in URI order),
///   `skills/get`, `resources/directory/read`;
/// * every file of every skill as a `skill://SKILL-PATH/FILE-PATH` resource,
///   the skill's path being its path below its root (`acme/billing`; see
///   [`skill_path`](crate::skill_path)), (`resources/read`: text, or a base64
///   blob for binary files), the `SKILL.md` of each skill in
///   `resources/list`; a skill that cannot be listed is left out with a
///   warning, never failing the listing;
/// * the tools `load_skill` and `read_skill_file` (and the run tools with a
///   [`runtime`](SkillsServerBuilder::runtime)) for clients without the
///   extension, answered by `skills-agent`'s tool logic, each with its MCP
///   annotations (the read tools read-only, idempotent, closed-world; the run
///   tools not read-only);
/// * the catalog (sorted, byte-stable) as the server's instructions;
/// * `notifications/resources/list_changed` when the catalog changes.
///
/// Clone it per connection with [`SkillsServer::connection`]: the clones
/// share the catalog, the manifest cache and the reload task; each
/// connection has its own workspace for the run tools.
#[derive(Clone)]
pub struct SkillsServer {
    shared: Arc<Shared>,
    connection: Arc<Connection>,
}

impl fmt::Debug for SkillsServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkillsServer")
            .field("provider", &self.shared.provider)
            .field("tools", &self.shared.tools.len())
            .field("connection", &self.connection.id)
            .finish()
    }
}

struct Shared {
    provider: Arc<dyn SkillProvider>,
    runtime: Option<Arc<dyn WorkspaceRuntime>>,
    /// The agent whose run tools answer, with a runtime.
    agent: Agent,
    tools: Vec<Tool>,
    /// The catalog the reload task last announced.
    catalog: RwLock<Catalog>,
    /// Skill URIs for the provider's latest catalog.
    index: RwLock<Arc<SkillIndex>>,
    instructions: RwLock<String>,
    manifests: Manifests,
    /// Tiers and priorities.
    policy: Arc<VisibilityPolicy>,
    /// `policy` with the latest catalog's requirements checked.
    checked: RwLock<Arc<VisibilityPolicy>>,
    /// The instructions' catalog budget.
    budget: Budget,
    /// Checks requirements for the instructions, when set.
    probe: Option<Arc<dyn Probe + Send + Sync>>,
    /// Small files, per skill snapshot, for `resources/read`.
    files: ResourceCache,
    page_size: usize,
    poll_interval: Duration,
    /// Bumped on every catalog change.
    changes: watch::Sender<u64>,
    info: Implementation,
    stop: CancellationToken,
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// One client connection: its workspace id, and a token that stops its
/// notification task when the connection's handler goes away.
struct Connection {
    id: SessionId,
    closed: CancellationToken,
    runtime: Option<Arc<dyn WorkspaceRuntime>>,
}

impl Connection {
    fn new(runtime: Option<Arc<dyn WorkspaceRuntime>>) -> Self {
        Self {
            // `mcp-PID-N`: unique in the process, and across servers on
            // one machine sharing a runtime root.
            id: SessionId::generate(&format!("mcp-{}", std::process::id())),
            closed: CancellationToken::new(),
            runtime,
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.closed.cancel();
        // The workspace of a closed connection is removed.
        if let Some(runtime) = self.runtime.take()
            && let Ok(handle) = tokio::runtime::Handle::try_current()
        {
            let id = self.id.clone();
            handle.spawn(async move {
                let _ = runtime.cleanup(&id).await;
            });
        }
    }
}

impl SkillsServer {
    /// A builder serving `provider`.
    pub fn builder(provider: Arc<dyn SkillProvider>) -> SkillsServerBuilder {
        SkillsServerBuilder {
            provider,
            runtime: None,
            page_size: DEFAULT_PAGE_SIZE,
            poll_interval: DEFAULT_POLL_INTERVAL,
            name: "skills".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            visibility: VisibilityPolicy::default(),
            probe: None,
            budget: Budget::unlimited(),
        }
    }

    /// A handler for a new connection: same skills, its own workspace.
    pub fn connection(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            connection: Arc::new(Connection::new(self.shared.runtime.clone())),
        }
    }

    /// The server's instructions now: the catalog rendered as XML, sorted by
    /// name and byte-stable for a given catalog.
    pub fn instructions(&self) -> String {
        self.shared
            .instructions
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The names of the tools offered, sorted.
    pub fn tool_names(&self) -> Vec<String> {
        self.shared
            .tools
            .iter()
            .map(|t| t.name.to_string())
            .collect()
    }

    /// Whether the run tools are offered (a [`runtime`](SkillsServerBuilder::runtime)
    /// was given): then a client can run commands on this machine.
    pub fn runs_commands(&self) -> bool {
        self.shared.runtime.is_some()
    }

    /// A receiver that sees a new value each time the catalog changes.
    pub fn catalog_changes(&self) -> watch::Receiver<u64> {
        self.shared.changes.subscribe()
    }

    /// The URIs of the provider's catalog now: its cached catalog when it
    /// has one (no waiting), the index rebuilt only when the catalog changed.
    async fn index(&self) -> Arc<SkillIndex> {
        let current = Arc::clone(
            &self
                .shared
                .index
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        );
        let catalog = match self.shared.provider.list_cached() {
            Some(catalog) => catalog,
            None => match self.shared.provider.list().await {
                Ok(catalog) => catalog,
                Err(err) => {
                    tracing::warn!(error = %err, "cannot list the skills; serving the last catalog");
                    return current;
                }
            },
        };
        if current.catalog().same_entries(&catalog) {
            return current;
        }
        let fresh = Arc::new(SkillIndex::new(catalog));
        *self
            .shared
            .index
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::clone(&fresh);
        fresh
    }

    /// The manifest of every skill of one page that can be listed (the
    /// others are left out, with a warning the first time), and the next
    /// cursor.
    async fn page(
        &self,
        request: Option<&PaginatedRequestParams>,
    ) -> (Vec<Arc<Manifest>>, Option<String>) {
        let index = self.index().await;
        let after = request.and_then(|r| r.cursor.as_deref());
        let (entries, next) = index.page(after, self.shared.page_size);
        let mut manifests = Vec::with_capacity(entries.len());
        for entry in entries {
            // A skill that went away since the listing, is over the limits or
            // breaks a rule of the extension is left out of the page.
            if let Ok(manifest) = self.manifest(&index, entry).await {
                manifests.push(manifest);
            }
        }
        (manifests, next)
    }

    async fn manifest(
        &self,
        index: &SkillIndex,
        entry: &Entry,
    ) -> Result<Arc<Manifest>, ManifestError> {
        self.shared
            .manifests
            .get(self.shared.provider.as_ref(), index, entry)
            .await
    }

    /// The cache hints of SEP-2549, for peers on 2026-07-28 or later only.
    fn cache_hints(&self, context: &RequestContext<RoleServer>) -> Option<(u64, CacheScope)> {
        let modern = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        modern.then(|| {
            (
                u64::try_from(self.shared.poll_interval.as_millis()).unwrap_or(u64::MAX),
                // Skills come from this user's folders: no shared caches.
                CacheScope::Private,
            )
        })
    }
}

/// `policy` with the requirements `probe` finds unmet in `catalog`.
fn checked(
    catalog: &Catalog,
    policy: &VisibilityPolicy,
    probe: Option<&(dyn Probe + Send + Sync)>,
) -> Arc<VisibilityPolicy> {
    let mut policy = policy.clone();
    if let Some(probe) = probe {
        policy.check_requirements(catalog.entries(), probe);
    }
    Arc::new(policy)
}

/// The catalog for the `instructions` of `initialize`, as `policy` shows it
/// within `budget`.
fn instructions(catalog: &Catalog, policy: &Arc<VisibilityPolicy>, budget: Budget) -> String {
    catalog.render(
        &RenderOptions::default()
            .with_budget(budget)
            .with_visibility(Arc::clone(policy)),
    )
}

fn manifest_error(err: ManifestError) -> McpError {
    match err {
        ManifestError::NotFound(m)
        | ManifestError::OverLimit(m)
        | ManifestError::NotListable(m) => McpError::invalid_params(m, None),
        ManifestError::Unreadable(m) => McpError::internal_error(m, None),
    }
}

/// What a tool does to its environment, for its MCP annotations.
#[derive(Clone, Copy)]
enum Effect {
    /// Reads skills: read-only, idempotent, closed-world.
    Read,
    /// Runs a command or feeds a running one: anything can happen.
    Run,
    /// Reads a session's new output (which it consumes).
    Poll,
    /// Stops a session.
    Kill,
}

/// The tool with its title and MCP annotations (`readOnlyHint`,
/// `destructiveHint`, `idempotentHint`, `openWorldHint`). Clients decide on
/// them whether a call needs the user's approval: Codex CLI refuses tools
/// without them under its default policy. A tool not known here gets the
/// most careful hints.
fn annotate(tool: Tool) -> Tool {
    let (title, effect) = match tool.name.as_ref() {
        "load_skill" | "skill_load" | "skill" => ("Load skill", Effect::Read),
        "read_skill_file" => ("Read skill file", Effect::Read),
        "search_skills" => ("Search skills", Effect::Read),
        "run_skill_command" | "skill_run" => ("Run skill command", Effect::Run),
        "start_skill_session" | "skill_exec" => ("Start skill session", Effect::Run),
        "write_skill_session" | "skill_write_stdin" => ("Write to skill session", Effect::Run),
        "poll_skill_session" | "skill_poll_session" => ("Poll skill session", Effect::Poll),
        "kill_skill_session" | "skill_kill_session" => ("Kill skill session", Effect::Kill),
        other => (other, Effect::Run),
    };
    // (read only, destructive, idempotent, open world)
    let (read_only, destructive, idempotent, open_world) = match effect {
        Effect::Read => (true, false, true, false),
        // A command may do anything the runtime lets it: write files, reach
        // the network (`--run local`), run for a long time.
        Effect::Run => (false, true, false, true),
        Effect::Poll => (false, false, false, false),
        Effect::Kill => (false, true, true, false),
    };
    let title = title.to_owned();
    let annotations = ToolAnnotations::with_title(title.clone())
        .read_only(read_only)
        .destructive(destructive)
        .idempotent(idempotent)
        .open_world(open_world);
    tool.with_title(title).with_annotations(annotations)
}

/// Polls the provider and announces catalog changes until `stop`.
async fn reload(shared: std::sync::Weak<Shared>, stop: CancellationToken) {
    loop {
        let Some(interval) = shared.upgrade().map(|s| s.poll_interval) else {
            return;
        };
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(interval) => {}
        }
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let catalog = match shared
            .provider
            .list()
            .instrument(tracing::debug_span!("skills_mcp.reload"))
            .await
        {
            Ok(catalog) => catalog,
            Err(err) => {
                tracing::warn!(error = %err, "cannot list the skills");
                continue;
            }
        };
        let changed = {
            let mut current = shared
                .catalog
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            let changed = !current.same_entries(&catalog);
            *current = catalog.clone();
            changed
        };
        // A changed body or file keeps the catalog but is a new skill
        // snapshot: the manifest cache notices that by itself.
        if changed {
            tracing::info!(skills = catalog.len(), "the catalog changed");
            let policy = checked(&catalog, &shared.policy, shared.probe.as_deref());
            let text = instructions(&catalog, &policy, shared.budget);
            *shared
                .checked
                .write()
                .unwrap_or_else(PoisonError::into_inner) = policy;
            *shared
                .instructions
                .write()
                .unwrap_or_else(PoisonError::into_inner) = text;
            shared.manifests.retain(catalog.names());
            shared.changes.send_modify(|n| *n += 1);
        }
    }
}

impl ServerHandler for SkillsServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_tools()
            .enable_skills_with_directory_read()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(self.shared.info.clone())
            .with_instructions(self.instructions())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // Legacy sessions: announce catalog changes on the session's stream.
        let mut changes = self.shared.changes.subscribe();
        let closed = self.connection.closed.clone();
        let peer = context.peer;
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = closed.cancelled() => return,
                    changed = changes.changed() => {
                        if changed.is_err() || peer.notify_resource_list_changed().await.is_err() {
                            return;
                        }
                    }
                }
            }
        });
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(
            requested.intersection(
                &SubscriptionFilter::builder()
                    .resources_list_changed()
                    .build(),
            ),
        )
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let mut changes = self.shared.changes.subscribe();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                changed = changes.changed() => {
                    if changed.is_err() || context.sink().notify_resource_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, McpError> {
        let (manifests, next) = self.page(request.as_ref()).await;
        let skills = manifests.iter().map(|m| m.entry.clone()).collect();
        let mut result = ListSkillsResult::with_all_items(skills);
        result.next_cursor = next;
        if let Some((ttl, scope)) = self.cache_hints(&context) {
            result = result.with_ttl_ms(ttl).with_cache_scope(scope);
        }
        Ok(result)
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, McpError> {
        let unknown = || McpError::invalid_params(format!("unknown skill {}", request.uri), None);
        let uri = SkillUri::parse(&request.uri).ok_or_else(unknown)?;
        let index = self.index().await;
        let entry = index.by_skill_md(&uri).ok_or_else(unknown)?;
        let manifest = self.manifest(&index, entry).await.map_err(manifest_error)?;
        if manifest.entry.uri != request.uri {
            // Another spelling of the URI: answer only the advertised one.
            return Err(McpError::invalid_params(
                format!("unknown skill {}; use {}", request.uri, manifest.entry.uri),
                None,
            ));
        }
        let mut result = GetSkillResult::new(manifest.entry.clone());
        if let Some((ttl, scope)) = self.cache_hints(&context) {
            result = result.with_ttl_ms(ttl).with_cache_scope(scope);
        }
        Ok(result)
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, McpError> {
        let not_a_directory =
            || McpError::invalid_params(format!("not a directory: {}", request.uri), None);
        let uri = SkillUri::parse(&request.uri).ok_or_else(not_a_directory)?;
        let index = self.index().await;
        let (entry, dir) = index.resolve(&uri).ok_or_else(not_a_directory)?;
        let manifest = self
            .manifest(&index, entry)
            .await
            .map_err(|err| match err {
                ManifestError::NotFound(_) => not_a_directory(),
                other => manifest_error(other),
            })?;
        let children = manifest.directory(dir).ok_or_else(not_a_directory)?;
        Ok(ReadResourceDirectoryResult::with_all_items(children))
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let (manifests, next) = self.page(request.as_ref()).await;
        let resources = manifests.iter().map(|m| m.listed.clone()).collect();
        let mut result = ListResourcesResult::with_all_items(resources);
        result.next_cursor = next;
        Ok(result)
    }

    #[tracing::instrument(name = "skills_mcp.read_resource", skip_all, fields(uri = %request.uri))]
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let not_found =
            |why: &str| McpError::resource_not_found(format!("{}: {why}", request.uri), None);
        let uri =
            SkillUri::parse(&request.uri).ok_or_else(|| not_found("not a skill:// file URI"))?;
        let index = self.index().await;
        let (entry, path) = index
            .resolve(&uri)
            .ok_or_else(|| not_found("no skill has this path"))?;
        if path.is_empty() {
            return Err(not_found("a skill folder; use resources/directory/read"));
        }
        let provider = self.shared.provider.as_ref();
        let (bytes, mime) = if path == SKILL_MD {
            // The bytes the manifest's digest was computed from.
            let bytes = match self.manifest(&index, entry).await {
                Ok(manifest) => manifest.skill_md.clone(),
                Err(ManifestError::NotFound(m)) => return Err(not_found(&m)),
                Err(_) => {
                    let skill = provider
                        .get(&entry.name)
                        .await
                        .map_err(|err| not_found(err.message()))?;
                    crate::manifest::skill_md_bytes(provider, &skill).await
                }
            };
            (bytes, "text/markdown".to_owned())
        } else {
            let file = self
                .shared
                .files
                .read(provider, &entry.name, path)
                .await
                .map_err(|err| match err.kind() {
                    ErrorKind::SkillNotFound
                    | ErrorKind::ResourceNotFound
                    | ErrorKind::InvalidPath => not_found(err.message()),
                    _ => McpError::internal_error(err.to_string(), None),
                })?;
            return Ok(ReadResourceResult::new(vec![file.contents(request.uri.clone())]).into());
        };
        let contents = match std::str::from_utf8(&bytes) {
            Ok(text) if !skills_core::looks_binary(&bytes) => {
                ResourceContents::text(text, request.uri.clone())
            }
            _ => ResourceContents::blob(BASE64_STANDARD.encode(&bytes), request.uri.clone()),
        }
        .with_mime_type(mime);
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.shared.tools.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.shared.tools.iter().find(|t| t.name == name).cloned()
    }

    #[tracing::instrument(name = "skills_mcp.call_tool", skip_all, fields(tool = %request.name))]
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name: Cow<'_, str> = request.name;
        if !self.shared.tools.iter().any(|t| t.name == name) {
            return Err(McpError::invalid_params(
                format!("unknown tool `{name}`"),
                None,
            ));
        }
        let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default());
        // Tool calls are independent: the skill tools are answered from the
        // provider's current catalog, as on a fresh session; the run tools
        // keep one workspace per connection.
        let provider = &self.shared.provider;
        let catalog = provider
            .list()
            .await
            .map_err(|err| McpError::internal_error(err.to_string(), None))?;
        let policy = Arc::clone(
            &self
                .shared
                .checked
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        );
        let library =
            Library::new(provider, &catalog, self.shared.agent.surface()).visibility(&policy);
        let result = match library.call(&name, &arguments).await {
            Some(result) => result,
            None => match self
                .shared
                .agent
                .call_run_tool(&self.connection.id, &name, &arguments)
                .await
            {
                Some(result) => result,
                None => {
                    return Err(McpError::invalid_params(
                        format!("unknown tool `{name}`"),
                        None,
                    ));
                }
            },
        };
        Ok(match result {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(err) => {
                tracing::debug!(kind = err.kind().as_str(), "tool call refused");
                CallToolResult::error(vec![ContentBlock::text(format!("Error: {err}"))])
            }
        }
        .into())
    }
}
