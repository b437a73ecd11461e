//! The command line: the global options and the list of commands. Each
//! command's own arguments live in its module (`validate::ValidateArgs`, …)
//! or, for the commands with a runtime behind them, are handed to it here.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::{agent, mcp, sessions};

pub(crate) const AFTER_HELP: &str = "\
Paths: each PATH is a folder of skills (searched recursively), one skill folder,
or an http(s):// or file:// URL of a .zip/.tar/.tar.gz archive or a bare SKILL.md
(downloaded once into the cache: $SKILLS_CACHE_DIR or the platform cache folder).
With no PATH and no --root, the roots in $SKILLS_ROOT are used; without that,
`examples/skills` when it exists here.

Exit codes:
  0  success (validate: every skill is valid)
  1  validate: invalid skills found, or a path holds no skill;
     show/read: skill or file not found, refused or too large
  2  usage error (bad option or value, missing or nonexistent path) or I/O error

Logging: -v shows the libraries' debug events on standard error, -vv trace
events; without -v, $RUST_LOG (a tracing EnvFilter) is used. Off by default.";

/// Check Agent Skills and see what a model would see.
#[derive(Debug, Parser)]
#[command(name = "skills", version, about, after_help = AFTER_HELP)]
pub(crate) struct Cli {
    /// A skills root (repeatable); combined with the PATH arguments.
    #[arg(long = "root", global = true, value_name = "PATH")]
    pub(crate) roots: Vec<PathBuf>,

    /// Also search the standard roots: `.agents/skills`, `.claude/skills`,
    /// `.codex/skills` and `.opencode/skills` from here up to the repository
    /// root, then `~/.agents/skills`, `~/.claude/skills`, `$CODEX_HOME/skills`
    /// and `~/.config/opencode/skills`. Given paths take precedence.
    #[arg(long, global = true)]
    pub(crate) standard_roots: bool,

    /// Revalidate cached URL roots with the server (ETag / Last-Modified)
    /// instead of reusing them as they are.
    #[arg(long, global = true)]
    pub(crate) refresh: bool,

    /// Read tiers, priorities and the catalog budget from this file instead
    /// of `~/.config/skills/config.toml` and the project's `skills.toml`
    /// (also `$SKILLS_CONFIG`; see docs/config.md).
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,

    /// Fail (exit 1, with the differences) when the skills of the given roots
    /// differ from the lockfile (see `skills lock`).
    #[arg(long, global = true)]
    pub(crate) locked: bool,

    /// The lockfile of `skills lock`, `skills verify` and --locked.
    #[arg(
        long,
        global = true,
        value_name = "PATH",
        default_value = "skills.lock.json"
    )]
    pub(crate) lockfile: PathBuf,

    /// Log what the libraries do to standard error: `-v` debug, `-vv` trace
    /// (default: off, or `$RUST_LOG` when set).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,

    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Validate skills and print every problem found.
    #[command(after_help = AFTER_HELP)]
    Validate(crate::validate::ValidateArgs),
    /// List the skills that load, one per line.
    #[command(after_help = AFTER_HELP)]
    List(crate::list::ListArgs),
    /// Print the catalog a model sees in its system prompt.
    #[command(after_help = AFTER_HELP)]
    Catalog(crate::catalog::CatalogArgs),
    /// Publish the skills under DIR as a well-known skills index (schema
    /// 0.2.0): writes OUT/.well-known/agent-skills/index.json, each skill's
    /// SKILL.md (a skill that is only that file) or a .tar.gz of its folder,
    /// with SHA-256 digests. The same skills always give the same bytes.
    Index(crate::index::IndexArgs),
    /// Print one skill: its metadata, files and body.
    #[command(after_help = AFTER_HELP)]
    Show(crate::show::ShowArgs),
    /// Run a command in a skill's folder (a throw-away workspace), then list
    /// the files it produced.
    ///
    /// After the command's output, a `--- files` line and one line per file
    /// the run left in `out/` ($OUTPUT_DIR, subfolders included): its path,
    /// size in bytes and MIME type, separated by tabs. Nothing when `out/`
    /// is empty.
    ///
    /// Exit code: the command's own; 124 when it timed out; 125 when a signal
    /// killed it; 2 when it could not be run.
    #[command(after_help = AFTER_HELP)]
    Run {
        /// Run inside the bubblewrap sandbox (no network, only the workspace
        /// writable); the same as `--runtime sandbox`.
        #[arg(long, conflicts_with = "runtime_mode")]
        sandbox: bool,
        /// Where the command runs: `local` (the default), `sandbox`
        /// (bubblewrap) or `container` (a container of its own on the engine
        /// at DOCKER_HOST or a default socket; see --container-image).
        #[arg(
            long = "runtime",
            id = "runtime_mode",
            value_enum,
            value_name = "local|sandbox|container"
        )]
        runtime_mode: Option<agent::RunMode>,
        /// Kill the command and everything it started after SECS seconds.
        #[arg(long, value_name = "SECS")]
        timeout: Option<u64>,
        /// List the files matching GLOB (relative to the workspace, e.g.
        /// `out/*.csv`; repeatable) instead of everything in `out/`; with
        /// --json their text is included.
        #[arg(long = "output-files", value_name = "GLOB")]
        output_files: Vec<String>,
        /// Stage FROM into the workspace before the command (repeatable):
        /// `host:///abs/path` (below an --allow-input folder),
        /// `artifact://name[@version]`, `workspace://rel` or
        /// `skill://name/rel`; at TO, relative to the workspace (default
        /// `work/inputs/<basename>`, `$WORK_DIR/inputs`).
        #[arg(long = "input", value_name = "FROM[=TO]")]
        inputs: Vec<String>,
        #[command(flatten)]
        runtime: crate::runtime_flags::RuntimeFlags,
        /// Print the run result as JSON.
        #[arg(long)]
        json: bool,
        /// The skill's name.
        name: String,
        /// Skill folders or folders of skills.
        paths: Vec<PathBuf>,
        /// The command, after `--` (run with `bash -c` in the skill's folder).
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Try the skills with a model: run an agent on PROMPT, stream its
    /// answer to standard output and show tool calls and skill loads on
    /// standard error.
    ///
    /// The endpoint and key come from the environment: OPENAI_API_KEY and
    /// OPENAI_BASE_URL (openai, openai-responses), ANTHROPIC_API_KEY and
    /// ANTHROPIC_BASE_URL (anthropic).
    ///
    /// SIGTERM or Ctrl-C stops the run before its next model request: the
    /// request in flight finishes and the tools it asked for run. A second
    /// signal exits at once.
    ///
    /// Exit code: 0 when the model finished or a signal stopped the run
    /// that way; 1 when the run failed (HTTP error after retries, step
    /// limit, no step boundary within 8 s of the signal); 130 after a second
    /// signal; 2 for a usage error (no key, bad --model).
    #[command(after_help = AFTER_HELP)]
    Agent {
        /// PROVIDER:MODEL, where PROVIDER is `openai`, `openai-responses` or
        /// `anthropic` (e.g. `anthropic:claude-sonnet-4-5`).
        #[arg(long, value_name = "PROVIDER:MODEL")]
        model: String,
        /// What to ask; `-` reads it from standard input.
        #[arg(long, value_name = "TEXT")]
        prompt: String,
        /// Attach FILE to the prompt (repeatable; at most 32 MiB each): the
        /// model sees it (text inline, images and PDFs as the provider's
        /// parts), and with --run the first command finds it in
        /// `$WORK_DIR/inputs/`.
        #[arg(long, value_name = "FILE")]
        attach: Vec<PathBuf>,
        /// Print every event of the run as one JSON object per line.
        #[arg(long)]
        json: bool,
        /// The most model calls before giving up.
        #[arg(long, value_name = "N", default_value_t = 25)]
        max_steps: usize,
        /// The most tokens per answer (Anthropic: 4096 when not given).
        #[arg(long, value_name = "N")]
        max_tokens: Option<u32>,
        /// Offer the trpc-agent tool names (`skill_load`, …) instead of
        /// `load_skill` and `read_skill_file`.
        #[arg(long)]
        trpc: bool,
        /// Give the model tools that run the skills' commands: `local`
        /// (directly, in a throw-away workspace), `sandbox` (bubblewrap:
        /// no network, only the workspace writable) or `container` (a
        /// container per command on the engine at DOCKER_HOST).
        #[arg(long, value_enum, value_name = "local|sandbox|container")]
        run: Option<agent::RunMode>,
        /// With --run: artifacts and host inputs.
        #[command(flatten)]
        runtime: crate::runtime_flags::RuntimeFlags,
        /// Keep the conversation in a session store, `sqlite://PATH` or
        /// `postgres://USER@HOST[:PORT]/DB`: running again with the same URL
        /// continues it.
        #[arg(long, value_name = "URL")]
        session: Option<String>,
        /// The stored session to continue or start (with --session).
        #[arg(long, value_name = "ID", requires = "session", default_value = sessions::DEFAULT_SESSION_ID)]
        session_id: String,
        /// Name a model for the `model:` of skills, NAME=PROVIDER:MODEL
        /// (repeatable; e.g. `haiku=anthropic:claude-haiku-4-5`): a forked
        /// skill runs on it, an inline skill switches to it once loaded.
        /// `model: inherit`, or none, always means --model.
        #[arg(long = "model-alias", value_name = "NAME=PROVIDER:MODEL")]
        model_aliases: Vec<String>,
        /// Name a sub-agent for the `agent:` of forked skills, NAME or
        /// NAME=INSTRUCTIONS (repeatable): the same skills and tools as the
        /// main agent, with INSTRUCTIONS as its system instructions (the
        /// main agent's when not given).
        #[arg(long = "subagent", value_name = "NAME[=INSTRUCTIONS]")]
        subagents: Vec<String>,
        /// What the `allowed-tools` of loaded skills does: `off` (no
        /// effect), `restrict` (while a loaded skill lists tools, calls its
        /// entries do not cover are refused) or `pre-approve` (only calls a
        /// loaded skill's entries cover run: nobody is asked, so the rest are
        /// refused). `Bash(git:*)` covers the run tools' `command`.
        #[arg(long, value_enum, value_name = "MODE", default_value = "off")]
        allowed_tools: agent::AllowedToolsMode,
        /// How long a loaded skill's allowed-tools grant lasts: `load`
        /// (while it is loaded) or `turn` (until the next user message, as
        /// in Claude Code; with --session, the next `skills agent`).
        #[arg(long, value_enum, value_name = "LIFETIME", default_value = "load")]
        grant_lifetime: agent::GrantMode,
        /// Load this skill before the first model call, as if the model had
        /// (repeatable; with the config's `preloaded` skills). All load or
        /// the run stops before the model is called.
        #[arg(long = "preload", value_name = "SKILL")]
        preload: Vec<String>,
        /// Skill folders or folders of skills.
        paths: Vec<PathBuf>,
    },
    /// Evaluate skills with a model: do they trigger on the right queries
    /// (`skills eval triggers`), and do they do the job once loaded
    /// (`skills eval outputs`)?
    Eval {
        #[command(subcommand)]
        command: crate::eval::EvalCommand,
    },
    /// Show what a session store holds (see `skills agent --session`).
    Sessions {
        #[command(subcommand)]
        command: sessions::SessionsCommand,
    },
    /// Report on skills: validity, what each costs in the prompt (catalog,
    /// body, documents, counted by a BPE tokenizer) and whether the catalog
    /// fits the budgets of coding agents.
    ///
    /// With no PATH (and no --root or $SKILLS_ROOT): the standard roots that
    /// exist and `examples/skills` when it is here. Exit code 0 when the report
    /// was written, invalid skills included; 2 for a usage or I/O error.
    #[command(after_help = AFTER_HELP)]
    Report(crate::report::ReportArgs),
    /// Serve the skills to MCP clients (Claude, Cursor, VS Code, Codex, …):
    /// the MCP Skills extension (`skills/list`, `skills/get`, `skill://`
    /// resources), the tools `load_skill` and `read_skill_file` for clients
    /// without it, and the catalog as the server's instructions.
    ///
    /// Over standard input and output by default; over Streamable HTTP at
    /// http://ADDR/mcp with --http. An address that is not loopback, and the
    /// run tools (--run) on any address, need a bearer token in
    /// $SKILLS_MCP_TOKEN (requests without it get 401). Changed skills are
    /// picked up while serving and announced with
    /// `notifications/resources/list_changed`. SIGTERM or SIGINT (Ctrl-C)
    /// end the server after the requests in flight (for at most 10 s). Exit
    /// code 0 when the client went away (stdio) or on SIGTERM/SIGINT; 1 when
    /// the MCP handshake failed; 2 for a usage or I/O error.
    #[command(after_help = AFTER_HELP)]
    Mcp {
        /// Serve Streamable HTTP on ADDR (`HOST:PORT`, or a port on
        /// 127.0.0.1; port 0 picks a free one, printed on standard error).
        #[arg(long, value_parser = mcp::parse_addr, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
        /// Also offer tools that run the skills' commands: `local`
        /// (directly, in a workspace per client), `sandbox` (bubblewrap:
        /// no network, only the workspace writable) or `container` (a
        /// container per command on the engine at DOCKER_HOST).
        #[arg(long, value_enum, value_name = "local|sandbox|container")]
        run: Option<agent::RunMode>,
        /// With --run: artifacts and host inputs.
        #[command(flatten)]
        runtime: crate::runtime_flags::RuntimeFlags,
        /// Look for changed skills every N milliseconds.
        #[arg(long, value_name = "MS", default_value_t = 2000)]
        poll_ms: u64,
        #[command(flatten)]
        limits: mcp::HttpFlags,
        /// Skill folders or folders of skills.
        paths: Vec<PathBuf>,
    },
    /// Record every skill of the roots with its digest in the lockfile
    /// (`skills.lock.json`, or --lockfile).
    #[command(after_help = crate::lock::AFTER_HELP)]
    Lock(crate::lock::LockArgs),
    /// Download the roots again (nothing cached is trusted) and compare them
    /// with the lockfile.
    #[command(after_help = crate::lock::AFTER_HELP)]
    Verify(crate::lock::LockArgs),
    /// Print one file of a skill (a line range of it with --lines).
    #[command(after_help = AFTER_HELP)]
    Read(crate::read::ReadArgs),
}
