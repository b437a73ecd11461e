//! `skills agent`: one command to try skills with a real model.
//!
//! It builds an agent over the skills found (the same sources as every other
//! command), runs the loop of `skills-agent` against an HTTP adapter chosen
//! by `--model PROVIDER:MODEL`, streams the answer to standard output and
//! reports tool calls, skill loads and each request's tokens (with the share
//! the provider's prompt cache served) on standard error, or every event as
//! a JSON line with `--json`. The cache breakpoints follow the model (the
//! adapter's cache strategy): `cache_control` markers for Anthropic, none for
//! OpenAI's automatic prefix caching. The model's text is printed with its
//! control characters escaped (except newlines and tabs), so an escape
//! sequence in an answer never reaches the terminal.
//!
//! With `--session URL` the conversation is kept in a session store
//! (`sqlite://PATH` or `postgres://…`): the first run creates the session
//! (id `default` unless `--session-id` names another), later runs resume it
//! (the same pinned catalog, so the same prompt prefix) and continue. A
//! library change since the first run is announced to the model by a catalog
//! delta. The transcript is stored after the run, also when it failed.

use std::io::{self, Read as _, Write};
use std::path::Path;
use std::sync::Arc;

use futures_util::StreamExt as _;
use skills_agent::{
    Agent, AgentBuilder, AgentMap, Approver, Attachment, CancelToken, CatalogMode, Event,
    GrantLifetime, Message, Model, ModelError, ModelErrorKind, ModelMap, Profile, RunEvent, Runner,
    RunnerBuilder, Session, SessionStore, SessionWriter, StoreErrorKind, Surface, ToolCall,
    ToolPolicy, Usage,
};
use skills_core::{Budget, RenderOptions, SkillProvider};
use skills_models::{Anthropic, OpenAiChat, OpenAiResponses};
use skills_workspace::{SessionId, WorkspaceRuntime};

use crate::runtime_flags::RuntimeFlags;

use crate::config::Settings;
use crate::failure::Failure;
use crate::text;

/// The providers `--model` accepts, with the variables their adapter reads.
const PROVIDERS: &[(&str, &str)] = &[
    (
        "openai",
        "OPENAI_API_KEY (and OPENAI_BASE_URL for another server)",
    ),
    (
        "openai-responses",
        "OPENAI_API_KEY (and OPENAI_BASE_URL for another server)",
    ),
    (
        "anthropic",
        "ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for another server)",
    ),
];

/// What `skills agent` was asked to do.
#[derive(Debug)]
pub(crate) struct AgentArgs {
    /// `PROVIDER:MODEL`.
    pub(crate) model: String,
    /// The prompt, or `-` for standard input.
    pub(crate) prompt: String,
    /// Every event as a JSON line on standard output.
    pub(crate) json: bool,
    /// The most model calls.
    pub(crate) max_steps: usize,
    /// The most tokens per answer (Anthropic needs a value; OpenAI only when
    /// given).
    pub(crate) max_tokens: Option<u32>,
    /// The trpc-agent tool names instead of the default ones.
    pub(crate) trpc: bool,
    /// `-v` given.
    pub(crate) verbose: bool,
    /// Give the model the run tools on this runtime.
    pub(crate) run: Option<RunMode>,
    /// The run tools' artifacts and host inputs.
    pub(crate) runtime: crate::runtime_flags::RuntimeFlags,
    /// Keep the conversation in this session store.
    pub(crate) session: Option<String>,
    /// The stored session's id.
    pub(crate) session_id: String,
    /// Hubs for forked skills and the allowed-tools policy.
    pub(crate) forks: ForkArgs,
    /// Files attached to the prompt.
    pub(crate) attach: Vec<std::path::PathBuf>,
    /// Skills to load before the first model call.
    pub(crate) preload: Vec<String>,
}

/// The largest file `--attach` takes.
const MAX_ATTACH_BYTES: u64 = 32 << 20;

/// Reads the `--attach` files: their names, a MIME type from the
/// extension, their bytes. A missing, unreadable, non-regular or too large
/// file is a usage error, before anything runs.
fn attachments(paths: &[std::path::PathBuf]) -> Result<Vec<Attachment>, Failure> {
    paths
        .iter()
        .map(|path| {
            let bytes = crate::input::read_file(path, MAX_ATTACH_BYTES, "--attach")?;
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "attachment".to_owned());
            let mime = skills_core::guess_mime(&name);
            Ok(Attachment::new(name, mime, bytes))
        })
        .collect()
}

/// Where `--run` runs the model's commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum RunMode {
    /// Directly on this machine, in a workspace per session.
    Local,
    /// Inside the bubblewrap sandbox (no network, only the workspace writable).
    Sandbox,
    /// In a container per command, on the engine at `DOCKER_HOST` (or a
    /// default socket), from `--container-image`.
    Container,
}

impl RunMode {
    /// The runtime for this mode with `flags` (artifacts, host inputs),
    /// keeping its workspaces under `root`.
    pub(crate) async fn runtime(
        self,
        root: &Path,
        flags: &RuntimeFlags,
    ) -> Result<Arc<dyn WorkspaceRuntime>, Failure> {
        // A missing bubblewrap or engine, an unusable root or a missing
        // `--allow-input` folder is the user's to fix.
        flags.check().map_err(Failure::usage)?;
        flags
            .runtime(root, self)
            .await
            .map_err(|err| Failure::usage(err.to_string()))
    }
}

/// Builds the model `PROVIDER:MODEL` names, from the environment (also
/// `skills eval`'s `--model` and `--grader`).
pub(crate) fn model(spec: &str, max_tokens: Option<u32>) -> Result<Arc<dyn Model>, Failure> {
    let known = || {
        PROVIDERS
            .iter()
            .map(|(name, _)| *name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some((provider, name)) = spec
        .split_once(':')
        .filter(|(p, m)| !p.is_empty() && !m.is_empty())
    else {
        return Err(Failure::usage(format!(
            "--model takes PROVIDER:MODEL (for example `openai:gpt-4.1` or \
             `anthropic:claude-sonnet-4-5`); PROVIDER is one of {}",
            known()
        )));
    };
    let configured = |result: Result<Arc<dyn Model>, ModelError>| {
        result.map_err(|err| {
            let needs = PROVIDERS
                .iter()
                .find(|(p, _)| *p == provider)
                .map_or("", |(_, vars)| *vars);
            Failure::usage(if err.kind() == ModelErrorKind::Config {
                // The adapter's message names the variable to set.
                err.message().to_owned()
            } else {
                format!("{err} (`--model {provider}:…` reads {needs})")
            })
        })
    };
    match provider {
        "openai" => configured(OpenAiChat::from_env(name).map(|m| {
            let m = match max_tokens {
                Some(n) => m.with_max_completion_tokens(n),
                None => m,
            };
            Arc::new(m) as Arc<dyn Model>
        })),
        "openai-responses" => configured(OpenAiResponses::from_env(name).map(|m| {
            let m = match max_tokens {
                Some(n) => m.with_max_output_tokens(n),
                None => m,
            };
            Arc::new(m) as Arc<dyn Model>
        })),
        "anthropic" => configured(Anthropic::from_env(name).map(|m| {
            let m = match max_tokens {
                Some(n) => m.with_max_tokens(n),
                None => m,
            };
            Arc::new(m) as Arc<dyn Model>
        })),
        other => Err(Failure::usage(format!(
            "unknown model provider `{}`; use one of {}",
            text::line(other),
            known()
        ))),
    }
}

/// The prompt text (`-` reads standard input).
fn prompt(arg: &str) -> Result<String, Failure> {
    let text = if arg == "-" {
        let mut text = String::new();
        io::stdin()
            .read_to_string(&mut text)
            .map_err(|err| Failure::usage(format!("cannot read the prompt from stdin: {err}")))?;
        text
    } else {
        arg.to_owned()
    };
    if text.trim().is_empty() {
        return Err(Failure::usage("the prompt is empty"));
    }
    Ok(text)
}

/// Runs `skills agent`; returns the exit code.
pub(crate) fn run<W: Write>(
    args: AgentArgs,
    provider: Arc<dyn SkillProvider>,
    settings: Settings,
    out: &mut W,
) -> Result<u8, Failure> {
    // Everything that can be refused is refused before the runtime starts.
    let model = model(&args.model, args.max_tokens)?;
    let models = model_hub(&args.forks.model_aliases, args.max_tokens)?;
    let prompt = Message::user_with_attachments(prompt(&args.prompt)?, attachments(&args.attach)?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|err| Failure::usage(format!("cannot start the async runtime: {err}")))?;
    runtime.block_on(drive(
        args,
        (provider, settings),
        (model, models),
        prompt,
        out,
    ))
}

async fn drive<W: Write>(
    args: AgentArgs,
    (provider, settings): (Arc<dyn SkillProvider>, Settings),
    (model, models): (Arc<dyn Model>, Option<ModelMap>),
    prompt: Message,
    out: &mut W,
) -> Result<u8, Failure> {
    let mut builder =
        agent_builder(provider, &settings, args.trpc).preload(args.preload.iter().cloned());
    let root = skills_exec::private_root("skills-agent");
    let runtime = match args.run {
        Some(mode) => Some(mode.runtime(&root, &args.runtime).await?),
        None => None,
    };
    if let Some(runtime) = &runtime {
        builder = builder.profile(Profile::Full).runtime(Arc::clone(runtime));
    }
    let agents = agent_hub(&args.forks.subagents, &builder)?;
    let agent = builder
        .build()
        .map_err(|err| Failure::usage(err.to_string()))?;
    let hubs = Hubs { models, agents };
    let (mut session, mut writer) = match &args.session {
        Some(url) => {
            let (session, writer) = open_session(&agent, url, &args.session_id).await?;
            (session, Some(writer))
        }
        None => (agent.start_session().await?, None),
    };
    let mut usage = None;
    let result = stream_run(
        &args,
        (model, hubs),
        &mut session,
        writer.as_mut(),
        prompt,
        out,
        &mut usage,
    )
    .await;
    let result = match writer {
        Some(writer) => save(writer, &session, usage, result).await,
        None => result,
    };
    if let Some(runtime) = &runtime {
        // The workspace is this run's only: remove it, and the root with it.
        let _ = runtime.cleanup(session.id()).await;
        let _ = std::fs::remove_dir(&root);
    }
    result
}

/// The agent `skills agent` runs, before its per-run options (preloads,
/// runtime, sub-agents): its instructions, the tool surface (`--trpc`), the
/// config's visibility policy and catalog budget, and the requirements
/// probe. `skills eval` builds on the same, so an eval sees exactly the
/// catalog and tools an agent would.
pub(crate) fn agent_builder(
    provider: Arc<dyn SkillProvider>,
    settings: &Settings,
    trpc: bool,
) -> AgentBuilder {
    let surface = if trpc {
        Surface::Trpc
    } else {
        Surface::Default
    };
    let mut builder = Agent::builder("skills", provider)
        .instructions(
            "You are a helpful assistant. When a skill in the list fits the task, load it and \
             follow it.",
        )
        .surface(surface)
        .visibility(settings.policy.clone())
        .requirements_probe(Arc::new(skills_fs::SystemProbe::new()));
    if settings.budget.is_some() || settings.description_cap.is_some() {
        builder = builder
            .catalog(CatalogMode::InPrompt(RenderOptions::default().with_budget(
                Budget::new(settings.budget, settings.description_cap),
            )));
    }
    builder
}

async fn stream_run<W: Write>(
    args: &AgentArgs,
    (model, hubs): (Arc<dyn Model>, Hubs),
    session: &mut skills_agent::Session,
    writer: Option<&mut SessionWriter>,
    prompt: Message,
    out: &mut W,
    usage: &mut Option<Usage>,
) -> Result<u8, Failure> {
    let cancel = CancelToken::new();
    // SIGTERM/SIGINT stop the run before its next model request (crate::signal).
    let stop = crate::signal::GracefulStop::install(cancel.clone());
    let runner = Runner::builder(stop.wrap(model)).max_steps(args.max_steps);
    let runner = configure_forks(runner, hubs, &args.forks, args.trpc).build();
    // A stored session is appended to after every step, forked sub-agents
    // stored as forks of it.
    let mut events = match writer {
        Some(writer) => runner.run_stored(session, writer, prompt, cancel),
        None => runner.run_with_cancel(session, prompt, cancel),
    };
    // Never `lock()`ed: this loop awaits, and a held lock would stop every
    // other thread that writes to stderr (tokio workers logging with -v).
    let mut err = io::stderr();
    let mut code = 1;
    let mut ended_line = true;
    while let Some(event) = events.next().await {
        if args.json {
            serde_json::to_writer(&mut *out, &event).map_err(crate::failure::json_failure)?;
            writeln!(out)?;
            out.flush()?;
        }
        match event {
            RunEvent::TextDelta { text } if !args.json => {
                write!(out, "{}", text::terminal_safe(&text))?;
                out.flush()?;
                ended_line = text.ends_with('\n');
            }
            RunEvent::ToolCall { call } if !args.json => {
                // OpenAI sends arguments as a JSON string: show it as is.
                let args_text = match &call.arguments {
                    serde_json::Value::String(raw) => raw.clone(),
                    other => other.to_string(),
                };
                writeln!(
                    err,
                    "[tool] {} {}",
                    text::line(&call.name),
                    text::line(&clip(&args_text, 200))
                )?;
            }
            RunEvent::ToolResult {
                tool,
                is_error,
                content,
                ..
            } if !args.json && (args.verbose || is_error) => {
                let first = content.lines().next().unwrap_or_default();
                writeln!(
                    err,
                    "[{}] {}: {}",
                    if is_error {
                        "tool error"
                    } else {
                        "tool result"
                    },
                    text::line(&tool),
                    text::line(&clip(first, 200))
                )?;
            }
            RunEvent::Skill { event } if !args.json => match event {
                Event::SkillLoaded { skill, .. } => {
                    writeln!(err, "[skill] loaded {}", text::line(&skill))?
                }
                Event::SkillReleased { skill, .. } if args.verbose => {
                    writeln!(err, "[skill] released {}", text::line(&skill))?
                }
                _ => {}
            },
            RunEvent::Retry { retry } if !args.json => writeln!(
                err,
                "[retry {}] in {:.1} s: {}",
                retry.attempt,
                retry.wait.as_secs_f64(),
                text::line(&retry.reason)
            )?,
            RunEvent::Usage { step, usage, .. } if !args.json => writeln!(
                err,
                "[usage] {}",
                usage_line(&format!("request {step}"), &usage)
            )?,
            RunEvent::SubAgent { skill, event } if !args.json => {
                if let RunEvent::Usage { step, usage, .. } = *event {
                    let label = format!("{} request {step}", text::line(&skill));
                    writeln!(err, "[usage] {}", usage_line(&label, &usage))?
                }
            }
            RunEvent::Notice { message } if !args.json => {
                writeln!(err, "[notice] {}", text::line(&message))?
            }
            RunEvent::ModelSwitched { skill, to, .. } if !args.json => writeln!(
                err,
                "[model] {} switched the model to {}",
                text::line(&skill),
                text::line(&to)
            )?,
            RunEvent::Finished { outcome } => {
                *usage = Some(outcome.usage);
                if !args.json {
                    if !ended_line {
                        writeln!(out)?;
                    }
                    if args.verbose {
                        writeln!(
                            err,
                            "[done] {} steps: {}",
                            outcome.steps,
                            usage_line("all requests", &outcome.usage)
                        )?;
                    }
                }
                code = 0;
            }
            RunEvent::Failed { error } => {
                if !args.json && !ended_line {
                    writeln!(out)?;
                }
                out.flush()?;
                if stop.stopped(&error) {
                    eprintln!("[signal] stopped at a step boundary");
                    return Ok(0);
                }
                return Err(Failure {
                    code: 1,
                    message: error.to_string(),
                    broken_pipe: false,
                });
            }
            _ => {}
        }
    }
    Ok(code)
}

/// Resumes the stored session `id` from the store `url`, or starts it there
/// when the store does not have it. A resumed session announces what changed
/// in the library since it was pinned.
async fn open_session(
    agent: &Agent,
    url: &str,
    id: &str,
) -> Result<(Session, SessionWriter), Failure> {
    skills_agent::validate_session_id(id)?;
    let store = crate::sessions::open(url).await?;
    match store.info(id).await {
        // An empty log is a session whose first run died before storing
        // anything: start it (again).
        Ok(info) if info.next_seq > 0 => {
            let (mut session, writer) = agent.resume_stored(store, id).await?;
            session.refresh_catalog().await?;
            Ok((session, writer))
        }
        Ok(_) => start_stored(agent, store, id).await,
        Err(err) if err.kind() == StoreErrorKind::NotFound => start_stored(agent, store, id).await,
        Err(err) => Err(err.into()),
    }
}

/// Starts the session `id` and stores it.
async fn start_stored(
    agent: &Agent,
    store: Arc<dyn SessionStore>,
    id: &str,
) -> Result<(Session, SessionWriter), Failure> {
    let mut session = agent.start_session().await?;
    session.set_id(SessionId::new(id).map_err(|err| Failure::usage(err.message()))?);
    let writer = SessionWriter::create(store, &session, None).await?;
    Ok((session, writer))
}

/// Stores what the run added (also after a failed run: the next one
/// continues from there), then returns the run's result. A store failure
/// after a successful run is the command's failure.
async fn save(
    mut writer: SessionWriter,
    session: &Session,
    usage: Option<Usage>,
    result: Result<u8, Failure>,
) -> Result<u8, Failure> {
    let mut stored = writer.save(session).await;
    if let (Ok(_), Some(usage)) = (&stored, usage) {
        stored = writer.record_usage(usage).await;
    }
    match (result, stored) {
        (Err(failure), _) => Err(failure),
        (Ok(_), Err(err)) if err.kind() == StoreErrorKind::Conflict => Err(Failure {
            code: 1,
            message: format!(
                "{err}; the session was continued elsewhere meanwhile: run again to continue \
                 from what the store holds"
            ),
            broken_pipe: false,
        }),
        (Ok(_), Err(err)) => Err(err.into()),
        (Ok(code), Ok(_)) => Ok(code),
    }
}

/// One request's tokens for standard error, with the share the provider's
/// cache served: `request 3: 12 345 input tokens, 11 800 cached (95.6 %),
/// 52 output` (and `, 700 written to the cache` when the provider reports
/// cache writes, as Anthropic does).
fn usage_line(label: &str, usage: &Usage) -> String {
    if usage.input_tokens == 0 && usage.output_tokens == 0 {
        return format!("{label}: the provider reported no token counts");
    }
    let mut line = format!(
        "{label}: {} input tokens, {} cached ({:.1} %)",
        grouped(usage.input_tokens),
        grouped(usage.cache_read_tokens),
        100.0 * usage.cache_hit_ratio()
    );
    if usage.cache_creation_tokens > 0 {
        line.push_str(&format!(
            ", {} written to the cache",
            grouped(usage.cache_creation_tokens)
        ));
    }
    line.push_str(&format!(", {} output", grouped(usage.output_tokens)));
    line
}

/// `n` with its digits in groups of three: `12 345`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(digit);
    }
    out
}

/// `text` cut to `max` characters with an ellipsis.
fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// `--model-alias`, `--subagent`, `--allowed-tools` and `--grant-lifetime`:
/// what forked skills run on and what `allowed-tools` does (F-AGT-5,
/// F-AGT-7).
#[derive(Debug)]
pub(crate) struct ForkArgs {
    /// `NAME=PROVIDER:MODEL` entries of the model hub.
    pub(crate) model_aliases: Vec<String>,
    /// `NAME[=INSTRUCTIONS]` entries of the agent hub.
    pub(crate) subagents: Vec<String>,
    /// The allowed-tools policy.
    pub(crate) allowed_tools: AllowedToolsMode,
    /// How long an allowed-tools grant lasts.
    pub(crate) grant_lifetime: GrantMode,
}

/// What `--allowed-tools` makes of the skills' `allowed-tools`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum AllowedToolsMode {
    /// Carried, no effect.
    Off,
    /// While a loaded skill lists tools, other calls are refused.
    Restrict,
    /// Only calls a loaded skill's entries cover run (nobody is asked).
    PreApprove,
}

/// `--grant-lifetime`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum GrantMode {
    /// While the skill is loaded.
    Load,
    /// Until the next user message.
    Turn,
}

/// The hubs built from `--model-alias` and `--subagent`.
struct Hubs {
    models: Option<ModelMap>,
    agents: Option<AgentMap>,
}

/// The model hub of `--model-alias NAME=PROVIDER:MODEL` (`None` without
/// any), every model built (and refused) before the run starts.
fn model_hub(aliases: &[String], max_tokens: Option<u32>) -> Result<Option<ModelMap>, Failure> {
    if aliases.is_empty() {
        return Ok(None);
    }
    let mut hub = ModelMap::new();
    for alias in aliases {
        let Some((name, spec)) = alias
            .split_once('=')
            .map(|(n, s)| (n.trim(), s.trim()))
            .filter(|(n, _)| !n.is_empty())
        else {
            return Err(Failure::usage(format!(
                "--model-alias takes NAME=PROVIDER:MODEL (for example \
                 `haiku=anthropic:claude-haiku-4-5`), not `{}`",
                text::line(alias)
            )));
        };
        if name == skills_agent::INHERIT_MODEL {
            return Err(Failure::usage(
                "--model-alias cannot name `inherit`: `model: inherit` always means --model",
            ));
        }
        hub = hub.with(name, model(spec, max_tokens)?);
    }
    Ok(Some(hub))
}

/// The agent hub of `--subagent NAME[=INSTRUCTIONS]` (`None` without any):
/// the main agent's skills and tools, with other instructions when given.
fn agent_hub(specs: &[String], main: &AgentBuilder) -> Result<Option<AgentMap>, Failure> {
    if specs.is_empty() {
        return Ok(None);
    }
    let mut hub = AgentMap::new();
    for spec in specs {
        let (name, instructions) = match spec.split_once('=') {
            Some((name, text)) => (name.trim(), Some(text)),
            None => (spec.trim(), None),
        };
        if name.is_empty() || instructions.is_some_and(|t| t.trim().is_empty()) {
            return Err(Failure::usage(format!(
                "--subagent takes NAME or NAME=INSTRUCTIONS (for example \
                 `reviewer=Review the change; list problems only.`), not `{}`",
                text::line(spec)
            )));
        }
        let builder = match instructions {
            Some(text) => main.clone().instructions(text),
            None => main.clone(),
        };
        let agent = builder
            .build()
            .map_err(|err| Failure::usage(err.to_string()))?;
        hub = hub.with(name, agent);
    }
    Ok(Some(hub))
}

/// Refuses every call it is asked about: `skills agent` asks nobody, so
/// `--allowed-tools pre-approve` runs only what a loaded skill pre-approves.
#[derive(Debug)]
struct NobodyToAsk;

#[async_trait::async_trait]
impl Approver for NobodyToAsk {
    async fn approve(&self, _call: &ToolCall, _loaded: &[String]) -> bool {
        false
    }
}

/// The runner with the hubs, the allowed-tools policy and its lifetime;
/// `Bash(…)` entries cover the run tools (their `command` argument).
fn configure_forks(
    mut runner: RunnerBuilder,
    hubs: Hubs,
    forks: &ForkArgs,
    trpc: bool,
) -> RunnerBuilder {
    if let Some(models) = hubs.models {
        runner = runner.model_hub(Arc::new(models));
    }
    if let Some(agents) = hubs.agents {
        runner = runner.agent_hub(Arc::new(agents));
    }
    let policy = match forks.allowed_tools {
        AllowedToolsMode::Off => ToolPolicy::Off,
        AllowedToolsMode::Restrict => ToolPolicy::Restrict,
        AllowedToolsMode::PreApprove => ToolPolicy::PreApprove(Arc::new(NobodyToAsk)),
    };
    let lifetime = match forks.grant_lifetime {
        GrantMode::Load => GrantLifetime::Load,
        GrantMode::Turn => GrantLifetime::Turn,
    };
    let command_tools: [&str; 2] = if trpc {
        ["skill_run", "skill_exec"]
    } else {
        ["run_skill_command", "start_skill_session"]
    };
    for tool in command_tools {
        runner = runner.policy_alias("Bash", tool);
    }
    runner.policy(policy).grant_lifetime(lifetime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_lines_show_the_cache_share() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(12_345), "12 345");
        assert_eq!(grouped(1_234_567), "1 234 567");
        assert_eq!(
            usage_line("request 3", &Usage::new(12_345, 52, 11_800, 0)),
            "request 3: 12 345 input tokens, 11 800 cached (95.6 %), 52 output"
        );
        assert_eq!(
            usage_line("request 1", &Usage::new(750, 5, 0, 700)),
            "request 1: 750 input tokens, 0 cached (0.0 %), 700 written to the cache, 5 output"
        );
        assert_eq!(
            usage_line("request 1", &Usage::default()),
            "request 1: the provider reported no token counts"
        );
    }
}
