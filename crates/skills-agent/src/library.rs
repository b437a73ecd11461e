//! The stateless skill operations: list, load, read a file, list docs and
//! search, as functions over a provider, the catalog the model sees and a
//! tool surface.
//!
//! A [`Session`](crate::Session) runs them with its load state around them
//! (what is loaded, the docs selected, the cap); a server that keeps no
//! conversation — the MCP server's `load_skill` and `read_skill_file` — calls
//! [`Library::call`] directly. Both give the same bytes for the same call on
//! a fresh session, and the same error texts: one code path.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::Value;
use skills_core::{
    Catalog, Error, ErrorKind, LineRange, Skill, SkillMetadata, SkillProvider, Tier,
    VisibilityPolicy, describe_missing,
};
use tracing::Instrument as _;
use tracing::field::Empty;

use skills_workspace::SkillSource;

use crate::render;
use crate::search::SearchCache;
use crate::surface::{
    LoadSkillArgs, NoArgs, Operation, ReadSkillFileArgs, SearchArgs, SkillArgs, SkillLoadArgs,
    Surface, TrpcSkillArgs, expected_args,
};
use crate::tool::{ToolError, ToolErrorKind, clip, parse_args};

/// Longest skill name, doc name or path accepted from the model before any
/// lookup (longer ones are refused without being echoed in full).
pub(crate) const MAX_NAME_LEN: usize = 256;
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

/// The skills one model may use: a provider, the catalog the model sees and
/// the tool surface it calls them through, with the operations that need no
/// conversation state.
///
/// ```
/// use std::sync::Arc;
/// use skills_agent::{Library, Surface};
/// use skills_core::{InCodeProvider, SkillProvider, define_skill};
///
/// # pollster::block_on(async {
/// let skill = define_skill("greeting", "Greets people. Use when someone says hello.")
///     .body("Say hello back.")
///     .build()?;
/// let provider: Arc<dyn SkillProvider> = Arc::new(InCodeProvider::new([skill])?);
/// let catalog = provider.list().await?;
/// let library = Library::new(&provider, &catalog, &Surface::Default);
/// let body = library.load("greeting").await?;
/// assert!(body.contains("Say hello back."));
/// let answer = library
///     .call("load_skill", &serde_json::json!({"name": "nobody"}))
///     .await
///     .expect("load_skill is an operation of the default surface");
/// assert_eq!(answer.unwrap_err().kind(), skills_agent::ToolErrorKind::UnknownSkill);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Library<'a> {
    provider: &'a Arc<dyn SkillProvider>,
    catalog: &'a Catalog,
    surface: &'a Surface,
    on_demand: bool,
    search: Option<(&'a Arc<SearchCache>, u64)>,
    policy: &'a VisibilityPolicy,
}

/// The policy of a library nobody gave one: every skill as it says itself.
static DEFAULT_POLICY: std::sync::LazyLock<VisibilityPolicy> =
    std::sync::LazyLock::new(VisibilityPolicy::default);

impl<'a> Library<'a> {
    /// The skills of `catalog` (as listed by `provider`), called through the
    /// tools of `surface`.
    pub fn new(
        provider: &'a Arc<dyn SkillProvider>,
        catalog: &'a Catalog,
        surface: &'a Surface,
    ) -> Self {
        Self {
            provider,
            catalog,
            surface,
            on_demand: false,
            search: None,
            policy: &DEFAULT_POLICY,
        }
    }

    /// Decides visibility with `policy`: `off` skills are unknown, `manual`
    /// ones load only after the user's mention, skills needing setup are
    /// refused naming what is missing, and only listed ones are named in
    /// hints and search hits.
    #[must_use]
    pub fn visibility(mut self, policy: &'a VisibilityPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Says the catalog is not in the prompt (errors then give the number of
    /// skills instead of their names: the library is too large to list).
    #[must_use]
    pub fn on_demand(mut self, yes: bool) -> Self {
        self.on_demand = yes;
        self
    }

    /// Offers `search_skills`, answered from `cache` with indexes built after
    /// the library check `listed_at` ([`SearchCache::mark`], taken just
    /// before `catalog` was listed).
    #[must_use]
    pub fn search(mut self, cache: &'a Arc<SearchCache>, listed_at: u64) -> Self {
        self.search = Some((cache, listed_at));
        self
    }

    /// The provider.
    pub fn provider(&self) -> &'a Arc<dyn SkillProvider> {
        self.provider
    }

    /// Runs the tool `tool` of the surface with the model's `arguments`,
    /// when it is a stateless operation (list, load, read a file, list docs,
    /// search): the result text, or the error to show the model (as
    /// `Error: {err}`). `None` for any other tool (doc and tool selection
    /// need a session; run tools belong to a runtime).
    ///
    /// A load answers as it would on a fresh session: the body, then the
    /// docs it asks for. Nothing is remembered between calls.
    pub async fn call(&self, tool: &str, arguments: &Value) -> Option<Result<String, ToolError>> {
        let op = self.surface.operation(tool, self.search.is_some())?;
        if matches!(
            op,
            Operation::SelectDocs | Operation::ListTools | Operation::SelectTools
        ) {
            return None;
        }
        let span = operation_span(op);
        let result = self
            .stateless(op, tool, arguments)
            .instrument(span.clone())
            .await;
        if let Ok(text) = &result {
            span.record("bytes", text.len());
        }
        Some(result)
    }

    async fn stateless(
        &self,
        op: Operation,
        tool: &str,
        arguments: &Value,
    ) -> Result<String, ToolError> {
        let expected = expected_args(self.surface, op);
        match op {
            Operation::List => {
                let _: NoArgs = parse_args(tool, arguments, expected)?;
                Ok(self.list())
            }
            Operation::Load => {
                let (name, docs, all_docs) = self.load_args(tool, arguments)?;
                let skill = self.fetch(&name, true, false).await?;
                record("skill", skill.name());
                let mut parts = vec![self.loaded_body(&skill)];
                if all_docs || docs.as_ref().is_some_and(|d| !d.is_empty()) {
                    let docs: Vec<String> = if all_docs {
                        skills_core::list_docs(&skill)
                            .into_iter()
                            .map(|d| d.as_str().to_owned())
                            .collect()
                    } else {
                        self.check_docs(&skill, docs.unwrap_or_default())?
                            .into_iter()
                            .collect()
                    };
                    tracing::Span::current().record("docs", docs.len());
                    parts.extend(self.deliver_docs(skill.name(), &docs).await?);
                }
                Ok(parts.join("\n"))
            }
            Operation::Read => {
                let args: ReadSkillFileArgs = parse_args(tool, arguments, expected)?;
                Ok(self.read_args(&args, false).await?.1)
            }
            Operation::ListDocs => {
                let args: TrpcSkillArgs = parse_args(tool, arguments, expected)?;
                self.list_docs_for(&args.skill, false).await
            }
            Operation::Search => {
                let args: SearchArgs = parse_args(tool, arguments, expected)?;
                self.search_with(&args).await
            }
            Operation::SelectDocs
            | Operation::ListTools
            | Operation::SelectTools
            | Operation::Run
            | Operation::Exec
            | Operation::WriteStdin
            | Operation::Poll
            | Operation::Kill => Err(ToolError::new(
                ToolErrorKind::InvalidArguments,
                format!("`{tool}` needs a session"),
            )),
        }
    }

    /// The skill list (`skill_list`), as trpc-agent returns it: a JSON array
    /// of the names of the skills the model may invoke, in catalog order,
    /// e.g. `["pdf-tools","weather"]`.
    pub fn list(&self) -> String {
        render::json_names(visible(self.catalog, self.policy).map(|m| m.name.as_str()))
    }

    /// The body of the skill `name`, as a load returns it.
    ///
    /// # Errors
    /// [`ToolErrorKind::UnknownSkill`] for a name the model may not load
    /// (unknown, or `disable-model-invocation`), with the skills available;
    /// [`ToolErrorKind::Provider`] when the skill cannot be read.
    pub async fn load(&self, name: &str) -> Result<String, ToolError> {
        let skill = self.fetch(name, true, false).await?;
        Ok(self.loaded_body(&skill))
    }

    /// What a load shows of `skill`: its body and files, after the skill's
    /// folder on the Eino surface ([`EinoOptions::base_directory`]).
    ///
    /// [`EinoOptions::base_directory`]: crate::EinoOptions::base_directory
    pub(crate) fn loaded_body(&self, skill: &Skill) -> String {
        loaded_body(self.surface, skill)
    }

    /// One file of the skill `skill` (lines `start..=end` when given, from
    /// 1), as `read_skill_file` returns it.
    ///
    /// # Errors
    /// [`ToolErrorKind::UnknownSkill`] as for [`Library::load`];
    /// [`ToolErrorKind::Resource`] for a missing, refused, binary or too
    /// large file (naming the skill's files);
    /// [`ToolErrorKind::InvalidArguments`] for a bad line range.
    pub async fn read(
        &self,
        skill: &str,
        path: &str,
        start_line: Option<usize>,
        end_line: Option<usize>,
    ) -> Result<String, ToolError> {
        let args = ReadSkillFileArgs {
            skill: skill.to_owned(),
            path: path.to_owned(),
            start_line,
            end_line,
        };
        Ok(self.read_args(&args, false).await?.1)
    }

    /// The docs of the skill `skill` (`skill_list_docs`), as trpc-agent
    /// returns them: a JSON array of doc file names in path order, e.g.
    /// `["references/faq.txt","references/guide.md"]`.
    ///
    /// # Errors
    /// As for [`Library::load`].
    pub async fn list_docs(&self, skill: &str) -> Result<String, ToolError> {
        self.list_docs_for(skill, false).await
    }

    /// The skill's metadata, when the model may use it. An `off` skill is
    /// unknown; a `manual` one (`disable-model-invocation`) is refused,
    /// except for a non-load use (reading its files) once the user's mention
    /// loaded it (`loaded`); one needing setup is refused for a load, naming
    /// what is missing.
    pub(crate) fn meta(
        &self,
        name: &str,
        for_load: bool,
        loaded: bool,
    ) -> Result<SkillMetadata, ToolError> {
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
        let found = self
            .catalog
            .get(name)
            .filter(|meta| self.policy.tier(meta) != Tier::Off);
        match found {
            Some(_) if for_load && !loaded && self.policy.missing(name).is_some() => {
                let missing = self.policy.missing(name).unwrap_or_default();
                Err(ToolError::new(
                    ToolErrorKind::UnknownSkill,
                    format!(
                        "the skill `{name}` needs setup on this machine before it can work: \
                         missing {}. Tell the user what is missing; do not try it. {}",
                        describe_missing(missing),
                        self.available_hint()
                    ),
                ))
            }
            Some(meta) if self.policy.tier(meta) == Tier::Manual && (for_load || !loaded) => {
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

    /// What an error about an unknown skill adds: the skills available.
    pub(crate) fn available_hint(&self) -> String {
        let names: Vec<&str> = visible(self.catalog, self.policy)
            .map(|m| m.name.as_str())
            .collect();
        let search = if self.search.is_some() {
            " Find skills with `search_skills`."
        } else {
            ""
        };
        if names.is_empty() {
            return format!("No skills are available.{search}");
        }
        if self.on_demand {
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

    /// The skill `name`, shared with the provider's cache (see
    /// [`Library::meta`] for `for_load` and `loaded`).
    pub(crate) async fn fetch(
        &self,
        name: &str,
        for_load: bool,
        loaded: bool,
    ) -> Result<Arc<Skill>, ToolError> {
        let meta = self.meta(name, for_load, loaded)?;
        self.provider
            .get(meta.name.as_str())
            .await
            .map_err(|err| provider_error(&err, &self.available_hint()))
    }

    /// The load arguments of the surface's load tool: the skill, the docs it
    /// names, whether it asks for all docs.
    pub(crate) fn load_args(
        &self,
        tool: &str,
        arguments: &Value,
    ) -> Result<(String, Option<Vec<String>>, bool), ToolError> {
        let expected = expected_args(self.surface, Operation::Load);
        Ok(match self.surface {
            Surface::Default => {
                let a: LoadSkillArgs = parse_args(tool, arguments, expected)?;
                (a.name, None, false)
            }
            Surface::Trpc => {
                let a: SkillLoadArgs = parse_args(tool, arguments, expected)?;
                (a.skill, a.docs, a.include_all_docs.unwrap_or(false))
            }
            Surface::Eino(_) => {
                let a: SkillArgs = parse_args(tool, arguments, expected)?;
                (a.skill, None, false)
            }
        })
    }

    /// Reads a file for `read_skill_file`: the skill's name and the result
    /// text. `loaded` as for [`Library::meta`].
    pub(crate) async fn read_args(
        &self,
        args: &ReadSkillFileArgs,
        loaded: bool,
    ) -> Result<(String, String), ToolError> {
        let meta = self.meta(&args.skill, false, loaded)?;
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
        match self.provider.read_resource(&name, &args.path, range).await {
            Ok(content) => {
                let text = render::skill_file(&name, &content);
                Ok((name, text))
            }
            Err(err) => {
                let mut error = resource_error(&err, &name, &args.path);
                // A missing file or a refused path (`..`, absolute): say
                // which files the skill has, so the model can correct itself.
                if matches!(
                    err.kind(),
                    ErrorKind::ResourceNotFound | ErrorKind::InvalidPath
                ) && err.available().is_empty()
                    && let Ok(skill) = self.provider.get(&name).await
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
                Err(error)
            }
        }
    }

    /// The doc list of `skill` (`loaded` as for [`Library::meta`]).
    pub(crate) async fn list_docs_for(
        &self,
        skill: &str,
        loaded: bool,
    ) -> Result<String, ToolError> {
        let skill = self.fetch(skill, false, loaded).await?;
        record("skill", skill.name());
        Ok(render::json_names(
            skills_core::list_docs(&skill)
                .iter()
                .map(skills_core::ResourcePath::as_str),
        ))
    }

    /// Checks the docs a call names against the skill's docs: their paths,
    /// sorted.
    pub(crate) fn check_docs(
        &self,
        skill: &Skill,
        docs: Vec<String>,
    ) -> Result<BTreeSet<String>, ToolError> {
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
    pub(crate) async fn deliver_docs(
        &self,
        skill: &str,
        docs: &[String],
    ) -> Result<Vec<String>, ToolError> {
        let mut parts = Vec::new();
        let mut bytes = 0usize;
        let mut held_back = Vec::new();
        for doc in docs {
            if parts.len() >= MAX_DOCS_PER_CALL || bytes >= MAX_DOC_BYTES_PER_CALL {
                held_back.push(doc.as_str());
                continue;
            }
            let content = self
                .provider
                .read_resource(skill, doc, None)
                .await
                .map_err(|err| resource_error(&err, skill, doc))?;
            let text = render::skill_doc(skill, &content);
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

    /// Answers `search_skills` from the search index of the catalog.
    pub(crate) async fn search_with(&self, args: &SearchArgs) -> Result<String, ToolError> {
        if args.query.len() > MAX_QUERY_LEN {
            return Err(ToolError::new(
                ToolErrorKind::InvalidArguments,
                format!(
                    "the query is too long ({} bytes; at most {MAX_QUERY_LEN})",
                    args.query.len()
                ),
            ));
        }
        let Some((cache, listed_at)) = self.search else {
            return Err(ToolError::new(
                ToolErrorKind::UnknownTool,
                "search is not enabled for this agent",
            ));
        };
        tracing::Span::current().record("query_bytes", args.query.len());
        let limit = args.limit.unwrap_or(5).clamp(1, MAX_SEARCH_LIMIT);
        let index = cache.index(self.provider, self.catalog, listed_at).await;
        let hits: Vec<(String, String, f64)> = index
            .search(&args.query, limit)
            .into_iter()
            .filter_map(|hit| {
                self.catalog
                    .get(&hit.name)
                    .filter(|m| self.policy.is_listed(m))
                    .map(|m| {
                        // A name-only skill's description stays unseen.
                        let description = if self.policy.tier(m) == Tier::NameOnly {
                            String::new()
                        } else {
                            m.description.clone()
                        };
                        (hit.name.clone(), description, hit.score)
                    })
            })
            .collect();
        tracing::Span::current().record("hits", hits.len());
        Ok(render::search_results(
            &args.query,
            &hits,
            self.surface.load_tool(),
        ))
    }
}

/// The span of one skill operation (`skills.load`, `skills.read_file`, …);
/// its `bytes` field is recorded when the result is known.
pub(crate) fn operation_span(op: Operation) -> tracing::Span {
    match op {
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
        // The runtime's own `workspace.*` spans cover the run tools.
        Operation::Run
        | Operation::Exec
        | Operation::WriteStdin
        | Operation::Poll
        | Operation::Kill => tracing::Span::none(),
    }
}

/// Records `value` in the current span's `field` (a no-op without one).
pub(crate) fn record(field: &str, value: &str) {
    tracing::Span::current().record(field, value);
}

/// The skills of `catalog` the model is told about (`policy` lists them).
pub(crate) fn visible<'a>(
    catalog: &'a Catalog,
    policy: &'a VisibilityPolicy,
) -> impl Iterator<Item = &'a SkillMetadata> {
    catalog.entries().iter().filter(|m| policy.is_listed(m))
}

/// What the model is told about each skill of `catalog`: its description, or
/// nothing for a `name-only` one. Catalog deltas compare these.
pub(crate) fn announced(catalog: &Catalog, policy: &VisibilityPolicy) -> BTreeMap<String, String> {
    visible(catalog, policy)
        .map(|m| {
            let description = if policy.tier(m) == Tier::NameOnly {
                String::new()
            } else {
                m.description.clone()
            };
            (m.name.as_str().to_owned(), description)
        })
        .collect()
}

/// The folder of a skill the provider has in a local folder (the file system
/// provider reports its `SKILL.md` as the [`Skill::location`]), made
/// absolute against the working directory; `None` for an in-code skill or a
/// URL.
fn base_directory(skill: &Skill) -> Option<String> {
    match SkillSource::from_skill_location(skill)? {
        SkillSource::Folder { path, .. } => {
            Some(std::path::absolute(&path).map_or(path, |absolute| absolute.display().to_string()))
        }
        _ => None,
    }
}

/// The tool error for a provider error while fetching a skill.
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

/// The tool error for a provider error while reading one of a skill's files.
pub(crate) fn resource_error(err: &Error, skill: &str, path: &str) -> ToolError {
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

/// The body of `skill` as `surface` delivers it, wherever it is delivered
/// (a load, a `$name` mention, a fork's input, a resumed session): with the
/// base-directory line on the Eino surface.
pub(crate) fn loaded_body(surface: &Surface, skill: &Skill) -> String {
    let body = render::loaded_body(skill, surface.read_tool());
    match surface {
        Surface::Eino(options) if options.base_directory => match base_directory(skill) {
            Some(dir) => format!("{}\n{body}", render::base_directory(&dir)),
            None => body,
        },
        _ => body,
    }
}
