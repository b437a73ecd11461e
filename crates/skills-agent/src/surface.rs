//! Tool surfaces: presets of tool names over one set of operations
//! (DESIGN.md §4; F-DIS-4..8, F-DIS-12).
//!
//! | operation | default (Helix) | trpc | Eino |
//! |---|---|---|---|
//! | list | – | `skill_list` | – |
//! | load | `load_skill` | `skill_load` | `skill` (configurable) |
//! | read a file | `read_skill_file` | – | – |
//! | list / select docs | – | `skill_list_docs` / `skill_select_docs` | – |
//! | list / select tools | – | `skill_list_tools` / `skill_select_tools` | – |
//! | search | `search_skills` when enabled, in every preset | | |
//! | run a command | `run_skill_command` | `skill_run` | `run_skill_command` |
//! | interactive commands | `start_skill_session`, `write_skill_session`, `poll_skill_session`, `kill_skill_session` | `skill_exec`, `skill_write_stdin`, `skill_poll_session`, `skill_kill_session` | as default |
//!
//! The run tools exist with a runtime and the `full` profile
//! ([`AgentBuilder::runtime`](crate::AgentBuilder::runtime)).

use std::fmt;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use skills_workspace::tool_schema;

use crate::tool::ToolSpec;

/// Replaces a tool description (Eino's hook). Gets the rendered catalog (""
/// when the catalog is not in the description) and the default description.
pub type DescriptionHook = Arc<dyn Fn(&str, &str) -> String + Send + Sync>;

/// Options of the Eino preset (F-DIS-7).
#[derive(Clone)]
pub struct EinoOptions {
    /// The single tool's name (default `skill`).
    pub tool_name: String,
    /// Whether the catalog goes into the tool's description instead of the
    /// system prompt (default `true`, as in Eino).
    pub catalog_in_description: bool,
    /// Replaces the tool description.
    pub description_hook: Option<DescriptionHook>,
    /// Whether a load result names the skill's folder ("Base directory for
    /// this skill: …", as in Eino) so the model can run its scripts by
    /// absolute path (default `true`). Only skills the provider has in a
    /// local folder have one (the file system provider's); for others (an
    /// in-code skill, a URL) the line is left out.
    pub base_directory: bool,
}

impl Default for EinoOptions {
    fn default() -> Self {
        Self {
            tool_name: "skill".to_owned(),
            catalog_in_description: true,
            description_hook: None,
            base_directory: true,
        }
    }
}

impl fmt::Debug for EinoOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EinoOptions")
            .field("tool_name", &self.tool_name)
            .field("catalog_in_description", &self.catalog_in_description)
            .field("description_hook", &self.description_hook.is_some())
            .field("base_directory", &self.base_directory)
            .finish()
    }
}

impl EinoOptions {
    /// Names the single tool.
    #[must_use]
    pub fn with_tool_name(mut self, name: impl Into<String>) -> Self {
        self.tool_name = name.into();
        self
    }

    /// Puts the catalog into the tool description (`true`) or the system
    /// prompt (`false`).
    #[must_use]
    pub fn with_catalog_in_description(mut self, yes: bool) -> Self {
        self.catalog_in_description = yes;
        self
    }

    /// Names (`true`, the default) or leaves out (`false`) the skill's
    /// folder in load results ([`EinoOptions::base_directory`]).
    #[must_use]
    pub fn with_base_directory(mut self, yes: bool) -> Self {
        self.base_directory = yes;
        self
    }

    /// Replaces the tool description.
    #[must_use]
    pub fn with_description_hook(mut self, hook: DescriptionHook) -> Self {
        self.description_hook = Some(hook);
        self
    }
}

/// A tool-surface preset.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub enum Surface {
    /// `load_skill` and `read_skill_file` (the Helix names).
    #[default]
    Default,
    /// trpc-agent's six tools: `skill_list`, `skill_load`, `skill_list_docs`,
    /// `skill_select_docs`, `skill_list_tools`, `skill_select_tools`.
    Trpc,
    /// Eino's single tool.
    Eino(EinoOptions),
}

/// One skill operation; every preset tool maps to one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Operation {
    List,
    Load,
    Read,
    ListDocs,
    SelectDocs,
    ListTools,
    SelectTools,
    Search,
    /// Run one command (`run_skill_command` / `skill_run`).
    Run,
    /// Start an interactive command (`start_skill_session` / `skill_exec`).
    Exec,
    /// Type into an interactive command.
    WriteStdin,
    /// Read an interactive command's new output.
    Poll,
    /// End an interactive command.
    Kill,
}

/// The `search_skills` tool name (every preset).
pub const SEARCH_TOOL: &str = "search_skills";

impl Surface {
    /// The tools of this preset with their operations, sorted by name.
    pub(crate) fn tools(&self, search: bool) -> Vec<(String, Operation)> {
        let mut out: Vec<(String, Operation)> = match self {
            Self::Default => vec![
                ("load_skill".to_owned(), Operation::Load),
                ("read_skill_file".to_owned(), Operation::Read),
            ],
            Self::Trpc => vec![
                ("skill_list".to_owned(), Operation::List),
                ("skill_list_docs".to_owned(), Operation::ListDocs),
                ("skill_list_tools".to_owned(), Operation::ListTools),
                ("skill_load".to_owned(), Operation::Load),
                ("skill_select_docs".to_owned(), Operation::SelectDocs),
                ("skill_select_tools".to_owned(), Operation::SelectTools),
            ],
            Self::Eino(options) => vec![(options.tool_name.clone(), Operation::Load)],
        };
        if search {
            out.push((SEARCH_TOOL.to_owned(), Operation::Search));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// The run tools of this preset with their operations, in the order
    /// they are described: trpc-agent's names on the trpc preset, names in
    /// the style of `load_skill` otherwise. Without `interactive`, only the
    /// run tool.
    pub(crate) fn run_tools(&self, interactive: bool) -> Vec<(&'static str, Operation)> {
        let names = if matches!(self, Self::Trpc) {
            [
                ("skill_run", Operation::Run),
                ("skill_exec", Operation::Exec),
                ("skill_write_stdin", Operation::WriteStdin),
                ("skill_poll_session", Operation::Poll),
                ("skill_kill_session", Operation::Kill),
            ]
        } else {
            [
                ("run_skill_command", Operation::Run),
                ("start_skill_session", Operation::Exec),
                ("write_skill_session", Operation::WriteStdin),
                ("poll_skill_session", Operation::Poll),
                ("kill_skill_session", Operation::Kill),
            ]
        };
        names
            .into_iter()
            .filter(|(_, op)| interactive || *op == Operation::Run)
            .collect()
    }

    /// The run operation behind `tool`, if it is one of this preset's run
    /// tools.
    pub(crate) fn run_operation(&self, tool: &str, interactive: bool) -> Option<Operation> {
        self.run_tools(interactive)
            .into_iter()
            .find(|(name, _)| *name == tool)
            .map(|(_, op)| op)
    }

    /// The operation behind `tool`, if it is one of this preset's tools.
    pub(crate) fn operation(&self, tool: &str, search: bool) -> Option<Operation> {
        self.tools(search)
            .into_iter()
            .find(|(name, _)| name == tool)
            .map(|(_, op)| op)
    }

    /// The name of the load tool.
    pub fn load_tool(&self) -> &str {
        match self {
            Self::Default => "load_skill",
            Self::Trpc => "skill_load",
            Self::Eino(options) => &options.tool_name,
        }
    }

    /// The name of the argument that names the skill in the load tool.
    pub fn load_argument(&self) -> &'static str {
        match self {
            Self::Default => "name",
            Self::Trpc | Self::Eino(_) => "skill",
        }
    }

    /// The name of the tool that reads files or docs, if the preset has one.
    pub fn read_tool(&self) -> Option<&'static str> {
        match self {
            Self::Default => Some("read_skill_file"),
            Self::Trpc => Some("skill_select_docs"),
            Self::Eino(_) => None,
        }
    }
}

/// Every tool name a surface reserves (sorted).
pub(crate) fn surface_tool_names(surface: &Surface, search: bool) -> Vec<String> {
    surface.tools(search).into_iter().map(|(n, _)| n).collect()
}

/// Arguments of `load_skill`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct LoadSkillArgs {
    /// The skill's name, exactly as listed.
    pub name: String,
}

/// Arguments of `read_skill_file`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ReadSkillFileArgs {
    /// The skill's name.
    pub skill: String,
    /// The file's path relative to the skill folder, e.g. `references/api.md`.
    pub path: String,
    /// First line to return (1-based).
    #[serde(default)]
    #[schemars(schema_with = "line_number")]
    pub start_line: Option<usize>,
    /// Last line to return (inclusive).
    #[serde(default)]
    #[schemars(schema_with = "line_number")]
    pub end_line: Option<usize>,
}

/// A 1-based line number: a plain positive integer (the derived schema for
/// `Option<usize>` would say "integer or null, minimum 0", which is wrong for
/// line numbers and costs tokens).
fn line_number(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "integer", "minimum": 1})
}

/// Arguments of `skill_load`. trpc-agent-python names the skill
/// `skill_name`; it is accepted on every trpc tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct SkillLoadArgs {
    /// The skill's name.
    #[serde(alias = "skill_name")]
    pub skill: String,
    /// Docs to include with the body (file names as `skill_list_docs` shows them).
    #[serde(default)]
    pub docs: Option<Vec<String>>,
    /// Include every doc (prefer naming the ones you need).
    #[serde(default)]
    pub include_all_docs: Option<bool>,
}

/// Arguments naming one skill (Eino's tool).
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct SkillArgs {
    /// The skill's name.
    pub skill: String,
}

/// Arguments naming one skill on the trpc surface (`skill_list_docs`,
/// `skill_list_tools`): `skill`, or `skill_name` as trpc-agent-python
/// calls it.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct TrpcSkillArgs {
    /// The skill's name.
    #[serde(alias = "skill_name")]
    pub skill: String,
}

/// How a selection changes (`skill_select_docs`, `skill_select_tools`).
///
/// As in trpc-agent, the mode defaults to `replace`, is read without regard
/// to case and surrounding spaces, and an unknown mode means `replace`
/// ([`SelectMode::parse`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SelectMode {
    /// Add to the current selection.
    Add,
    /// Replace the current selection (the default).
    #[default]
    Replace,
    /// Clear the selection.
    Clear,
}

impl SelectMode {
    /// The mode a model's `mode` argument names: `add`, `replace` or
    /// `clear` in any case; anything else (or nothing) is `replace`.
    #[must_use]
    pub fn parse(mode: Option<&str>) -> Self {
        match mode.map(|m| m.trim().to_ascii_lowercase()).as_deref() {
            Some("add") => Self::Add,
            Some("clear") => Self::Clear,
            _ => Self::Replace,
        }
    }

    /// The mode's name as the result reports it (`add`, `replace`, `clear`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Add => "add",
            Self::Replace => "replace",
            Self::Clear => "clear",
        }
    }
}

/// The schema of a `mode` argument: one of the three names. Any string is
/// accepted (see [`SelectMode::parse`]); the schema names the ones that mean
/// something.
fn mode_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["replace", "add", "clear"]
    })
}

/// Arguments of `skill_select_docs`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct SelectDocsArgs {
    /// The skill's name.
    #[serde(alias = "skill_name")]
    pub skill: String,
    /// Doc names to select (added to or replacing the selection).
    #[serde(default)]
    pub docs: Option<Vec<String>>,
    /// Select every doc.
    #[serde(default)]
    pub include_all_docs: Option<bool>,
    /// `replace` (default), `add` or `clear`.
    #[serde(default)]
    #[schemars(schema_with = "mode_schema")]
    pub mode: Option<String>,
}

/// Arguments of `skill_select_tools`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct SelectToolsArgs {
    /// The skill's name.
    #[serde(alias = "skill_name")]
    pub skill: String,
    /// Tool names to select (added to or replacing the selection).
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// Select every tool the skill declares.
    #[serde(default)]
    pub include_all_tools: Option<bool>,
    /// `replace` (default), `add` or `clear`.
    #[serde(default)]
    #[schemars(schema_with = "mode_schema")]
    pub mode: Option<String>,
}

/// Arguments of `skill_list` (none).
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct NoArgs {}

/// Arguments of `search_skills`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct SearchArgs {
    /// Words describing the task.
    pub query: String,
    /// Most results to return (default 5, at most 20).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// The spec of one preset tool. `catalog` is the rendered catalog for an Eino
/// tool that carries it in its description; `runtime` the runtime's name for
/// the run tool's.
pub(crate) fn tool_spec(
    surface: &Surface,
    name: &str,
    op: Operation,
    catalog: &str,
    runtime: &str,
) -> ToolSpec {
    match (surface, op) {
        (Surface::Eino(options), Operation::Load) => {
            // With `catalog_in_description: false` the catalog is in the
            // system prompt already; repeating it here would send it twice.
            let catalog = if options.catalog_in_description {
                catalog
            } else {
                ""
            };
            let default = if catalog.is_empty() {
                // The catalog is in the system prompt, or there is none
                // (on-demand mode): say nothing about where skills are listed.
                "Loads a skill's instructions by name.".to_owned()
            } else {
                // The rendered catalog starts with its own guidance on when
                // to call this tool.
                format!("Loads a skill's instructions by name.\n{catalog}")
            };
            let description = match &options.description_hook {
                Some(hook) => hook(catalog, &default),
                None => default,
            };
            ToolSpec::for_args::<SkillArgs>(name, description)
        }
        (Surface::Trpc, Operation::Load) => ToolSpec::for_args::<SkillLoadArgs>(
            name,
            "Loads a skill's instructions, optionally with some of its docs.",
        ),
        (_, Operation::Load) => {
            ToolSpec::for_args::<LoadSkillArgs>(name, "Loads a skill's full instructions by name.")
        }
        (_, Operation::Read) => ToolSpec::for_args::<ReadSkillFileArgs>(
            name,
            "Reads a file bundled with a skill (as listed when it loads), optionally a line range.",
        ),
        (_, Operation::List) => ToolSpec::for_args::<NoArgs>(
            name,
            "Lists the available skills (a JSON array of names).",
        ),
        (_, Operation::ListDocs) => ToolSpec::for_args::<TrpcSkillArgs>(
            name,
            "Lists the docs a skill bundles (a JSON array of file names).",
        ),
        (_, Operation::SelectDocs) => ToolSpec::for_args::<SelectDocsArgs>(
            name,
            "Replaces (default), adds to or clears the docs selected for a loaded skill; \
             returns the selection as JSON, then the newly selected docs.",
        ),
        (_, Operation::ListTools) => ToolSpec::for_args::<TrpcSkillArgs>(
            name,
            "Lists the tools a skill declares (a JSON array of tool names).",
        ),
        (_, Operation::SelectTools) => ToolSpec::for_args::<SelectToolsArgs>(
            name,
            "Replaces (default), adds to or clears the tools selected for a loaded skill; \
             returns the selection as JSON.",
        ),
        (_, Operation::Search) => ToolSpec::for_args::<SearchArgs>(
            name,
            "Searches the skill library by keywords; returns matching skills to load.",
        ),
        (_, Operation::Run) => ToolSpec::new(
            name,
            format!(
                "Runs one shell command for a loaded skill in its workspace ({runtime} \
                 runtime): the skill's folder is the working directory, $OUTPUT_DIR \
                 collects files. Returns the exit code, stdout, stderr and the files \
                 matched by output_files."
            ),
            tool_schema::run_request(),
        ),
        (_, Operation::Exec) => ToolSpec::new(
            name,
            "Starts an interactive command for a loaded skill on a terminal and returns its \
             first output and a session_id for the other session tools.",
            tool_schema::exec_request(),
        ),
        (_, Operation::WriteStdin) => ToolSpec::new(
            name,
            "Types into an interactive session (submit: true presses Enter) and returns the \
             new output.",
            tool_schema::write_stdin_request(),
        ),
        (_, Operation::Poll) => ToolSpec::new(
            name,
            "Returns the new output of an interactive session and whether it is still running.",
            tool_schema::poll_request(),
        ),
        (_, Operation::Kill) => ToolSpec::new(
            name,
            "Ends an interactive session and everything it started.",
            tool_schema::kill_request(),
        ),
    }
}

/// A short description of the arguments of `op`, for error messages.
pub(crate) fn expected_args(surface: &Surface, op: Operation) -> &'static str {
    match (surface, op) {
        (Surface::Default, Operation::Load) => r#"{"name": string}"#,
        (Surface::Trpc, Operation::Load) => {
            r#"{"skill" (or "skill_name"): string, "docs"?: [string], "include_all_docs"?: bool}"#
        }
        (_, Operation::Load) => r#"{"skill": string}"#,
        (_, Operation::ListDocs) | (_, Operation::ListTools) => {
            r#"{"skill" (or "skill_name"): string}"#
        }
        (_, Operation::Read) => {
            r#"{"skill": string, "path": string, "start_line"?: integer, "end_line"?: integer}"#
        }
        (_, Operation::List) => "{}",
        (_, Operation::SelectDocs) => {
            r#"{"skill" (or "skill_name"): string, "docs"?: [string], "include_all_docs"?: bool, "mode"?: "replace"|"add"|"clear"}"#
        }
        (_, Operation::SelectTools) => {
            r#"{"skill" (or "skill_name"): string, "tools"?: [string], "include_all_tools"?: bool, "mode"?: "replace"|"add"|"clear"}"#
        }
        (_, Operation::Search) => r#"{"query": string, "limit"?: integer}"#,
        // The run tools' requests explain themselves (see `tool_schema`).
        (_, Operation::Run | Operation::Exec) => r#"{"skill": string, "command": string, …}"#,
        (_, Operation::WriteStdin) => r#"{"session_id": string, "chars"?: string, …}"#,
        (_, Operation::Poll) => r#"{"session_id": string, "yield_ms"?: integer}"#,
        (_, Operation::Kill) => r#"{"session_id": string}"#,
    }
}
