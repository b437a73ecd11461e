//! `skills`: check Agent Skills and see what a model would see.
//!
//! A thin binary over `skills-core` and `skills-fs`: it parses arguments, calls the
//! libraries and prints; it is also the sandbox's helper (`skills-sandbox`,
//! entered before anything else when bubblewrap starts it as the helper).
//! It depends on nothing but those crates, `clap`,
//! `serde_json`, `pollster`, `tracing-subscriber` (for `-v`) and, on Linux,
//! `rustix` (for `read --raw`), and must not contain skill rules of its own:
//! anything a library user would also want belongs in a library crate.
//!
//! Text output escapes control characters in everything that comes from the
//! file system or a file (see `text`).

mod agent;
mod catalog_report;
mod logging;
mod mcp;
mod report;
mod run;
mod sessions;
mod signal;
mod text;

use std::io::{self, IsTerminal as _, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::{Parser, Subcommand, ValueEnum};
use serde::Serialize;
use skills_core::text_content;
use skills_core::{
    Budget, BudgetLimit, CatalogFormat, Code, Diagnostic, ErrorKind, LayeredProvider, LineRange,
    Mode, RenderOptions, ReservedNames, ResourcePath, Skill, SkillProvider, ValidationOptions,
    is_portable,
};
use skills_fs::remote::{self, RemoteOptions};
use skills_fs::{Discovery, FsOptions, FsProvider, SkillFs, StandardRoots, standard_provider};

const AFTER_HELP: &str = "\
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
struct Cli {
    /// A skills root (repeatable); combined with the PATH arguments.
    #[arg(long = "root", global = true, value_name = "PATH")]
    roots: Vec<PathBuf>,

    /// Also search the standard roots: `.agents/skills` and `.claude/skills` from
    /// here up to the repository root, then `~/.agents/skills`,
    /// `~/.claude/skills` and `$CODEX_HOME/skills`. Given paths take precedence.
    #[arg(long, global = true)]
    standard_roots: bool,

    /// Revalidate cached URL roots with the server (ETag / Last-Modified)
    /// instead of reusing them as they are.
    #[arg(long, global = true)]
    refresh: bool,

    /// Log what the libraries do to standard error: `-v` debug, `-vv` trace
    /// (default: off, or `$RUST_LOG` when set).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Validate skills and print every problem found.
    #[command(after_help = AFTER_HELP)]
    Validate {
        /// Judge by the specification exactly (the verdicts of `skills-ref validate`).
        #[arg(long)]
        strict: bool,
        /// Print a JSON report instead of text.
        #[arg(long)]
        json: bool,
        /// Refuse names containing WORD (repeatable), e.g. `--reserved claude`.
        #[arg(long = "reserved", value_name = "WORD")]
        reserved: Vec<String>,
        /// Skill folders or folders of skills.
        paths: Vec<PathBuf>,
    },
    /// List the skills that load, one per line.
    #[command(after_help = AFTER_HELP)]
    List {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Skill folders or folders of skills.
        paths: Vec<PathBuf>,
    },
    /// Print the catalog a model sees in its system prompt.
    #[command(after_help = AFTER_HELP)]
    Catalog {
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Xml)]
        format: Format,
        /// Size limit: `N` characters or `Nt` (estimated) tokens.
        #[arg(long, value_parser = parse_budget, value_name = "N|Nt")]
        budget: Option<BudgetLimit>,
        /// Longest description shown per skill, in characters.
        #[arg(long, value_name = "N")]
        description_cap: Option<usize>,
        /// Skill folders or folders of skills.
        paths: Vec<PathBuf>,
    },
    /// Print one skill: its metadata, files and body.
    #[command(after_help = AFTER_HELP)]
    Show {
        /// The skill's name.
        name: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Print at most N bytes of the body (cut with a marker).
        #[arg(long, value_name = "N")]
        max_bytes: Option<usize>,
        /// Skill folders or folders of skills.
        paths: Vec<PathBuf>,
    },
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
        /// writable).
        #[arg(long)]
        sandbox: bool,
        /// Kill the command and everything it started after SECS seconds.
        #[arg(long, value_name = "SECS")]
        timeout: Option<u64>,
        /// List the files matching GLOB (relative to the workspace, e.g.
        /// `out/*.csv`; repeatable) instead of everything in `out/`; with
        /// --json their text is included.
        #[arg(long = "output-files", value_name = "GLOB")]
        output_files: Vec<String>,
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
        /// (directly, in a throw-away workspace) or `sandbox` (bubblewrap:
        /// no network, only the workspace writable).
        #[arg(long, value_enum, value_name = "local|sandbox")]
        run: Option<agent::RunMode>,
        /// Keep the conversation in a session store, `sqlite://PATH` or
        /// `postgres://USER@HOST[:PORT]/DB`: running again with the same URL
        /// continues it.
        #[arg(long, value_name = "URL")]
        session: Option<String>,
        /// The stored session to continue or start (with --session).
        #[arg(long, value_name = "ID", requires = "session", default_value = sessions::DEFAULT_SESSION_ID)]
        session_id: String,
        /// Skill folders or folders of skills.
        paths: Vec<PathBuf>,
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
    Report {
        /// Print the report as JSON.
        #[arg(long, conflicts_with = "html")]
        json: bool,
        /// Write the report as one self-contained HTML page to FILE.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
        /// The BPE that counts tokens.
        #[arg(long, value_enum, default_value_t = report::Tokenizer::O200k)]
        tokenizer: report::Tokenizer,
        /// The context window the budgets are computed for: `200k`, `1m`,
        /// or a number of tokens.
        #[arg(long, value_parser = report::parse_context, value_name = "TOKENS", default_value = "200k")]
        context: usize,
        /// Skill folders or folders of skills.
        paths: Vec<PathBuf>,
    },
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
        /// (directly, in a workspace per client) or `sandbox` (bubblewrap:
        /// no network, only the workspace writable).
        #[arg(long, value_enum, value_name = "local|sandbox")]
        run: Option<agent::RunMode>,
        /// Look for changed skills every N milliseconds.
        #[arg(long, value_name = "MS", default_value_t = 2000)]
        poll_ms: u64,
        #[command(flatten)]
        limits: mcp::HttpFlags,
        /// Skill folders or folders of skills.
        paths: Vec<PathBuf>,
    },
    /// Print one file of a skill (a line range of it with --lines).
    #[command(after_help = AFTER_HELP)]
    Read {
        /// The skill's name.
        name: String,
        /// The file, relative to the skill folder (e.g. `references/guide.md`).
        file: String,
        /// Lines to print: `A:B`, `A:` or `A` (1-based, inclusive).
        #[arg(long, value_parser = parse_lines, value_name = "A:B", conflicts_with = "raw")]
        lines: Option<LineRange>,
        /// Print at most N bytes (cut with a marker); files up to N bytes (at
        /// least 16 MiB) are read. With --raw, larger files are refused.
        #[arg(long, value_name = "N")]
        max_bytes: Option<usize>,
        /// Write the file's bytes unchanged, binary files included.
        #[arg(long)]
        raw: bool,
        /// Skill folders or folders of skills.
        paths: Vec<PathBuf>,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Xml,
    Markdown,
    Json,
}

fn parse_budget(text: &str) -> Result<BudgetLimit, String> {
    let bad = || {
        format!("invalid budget `{text}`: use N (characters) or Nt (tokens), e.g. 8000 or 2000t")
    };
    match text.strip_suffix('t') {
        Some(n) => n.parse().map(BudgetLimit::Tokens).map_err(|_| bad()),
        None => text.parse().map(BudgetLimit::Chars).map_err(|_| bad()),
    }
}

fn parse_lines(text: &str) -> Result<LineRange, String> {
    LineRange::parse(text).map_err(|e| e.to_string())
}

/// A failure that ends the command with a message and an exit code.
struct Failure {
    code: u8,
    message: String,
    broken_pipe: bool,
}

impl Failure {
    fn usage(message: impl Into<String>) -> Self {
        Self {
            code: 2,
            message: message.into(),
            broken_pipe: false,
        }
    }
}

impl From<io::Error> for Failure {
    fn from(err: io::Error) -> Self {
        Self {
            code: 2,
            message: format!("cannot write output: {err}"),
            broken_pipe: err.kind() == io::ErrorKind::BrokenPipe,
        }
    }
}

impl From<skills_core::Error> for Failure {
    fn from(err: skills_core::Error) -> Self {
        let code = match err.kind() {
            ErrorKind::Io | ErrorKind::InvalidRange | ErrorKind::Other => 2,
            _ => 1,
        };
        Self {
            code,
            message: err.to_string(),
            broken_pipe: false,
        }
    }
}

/// A failed JSON write: a closed pipe ends quietly like any other write.
fn json_failure(err: serde_json::Error) -> Failure {
    match err.io_error_kind() {
        Some(kind) => Failure::from(io::Error::from(kind)),
        None => Failure::usage(format!("cannot write JSON: {err}")),
    }
}

fn main() -> ExitCode {
    // `skills` is also the sandbox's helper: when bubblewrap starts it as
    // the helper, this runs the helper and exits (before any thread
    // starts, as the helper forks).
    skills_sandbox::run_if_helper();
    let cli = Cli::parse();
    logging::init(cli.verbose);
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(failure) if failure.broken_pipe => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("error: {}", text::line(&failure.message));
            ExitCode::from(failure.code)
        }
    }
}

/// Runs the command with standard output buffered (a few large writes instead
/// of one per line), flushed before the exit code is known, so a failed flush
/// (a closed pipe) is handled like any other write.
///
/// Standard output and standard error are never locked for longer than one
/// write: commands that run async work (`run`, `agent`) wait on other threads,
/// and a lock held across that wait stops any of them that writes there.
fn run(cli: Cli) -> Result<u8, Failure> {
    if matches!(cli.command, Command::Mcp { .. }) {
        // Standard output carries the MCP messages: it must stay unlocked
        // and unbuffered here.
        return run_to(cli, &mut io::sink());
    }
    let mut out = io::BufWriter::with_capacity(64 * 1024, io::stdout());
    let result = run_to(cli, &mut out);
    let flushed = out.flush();
    let code = result?;
    flushed?;
    Ok(code)
}

fn run_to<W: Write>(cli: Cli, mut out: &mut W) -> Result<u8, Failure> {
    let Cli {
        roots,
        standard_roots,
        refresh,
        verbose,
        command,
    } = cli;
    let sources = Sources {
        roots,
        standard: standard_roots,
        refresh,
    };
    match command {
        Command::Validate {
            strict,
            json,
            reserved,
            paths,
        } => {
            let explicit = sources.resolve(paths)?;
            let mut roots = explicit.clone();
            if sources.standard {
                roots.extend(
                    StandardRoots::new()
                        .discover()
                        .roots
                        .into_iter()
                        .map(|r| r.path),
                );
            }
            let validation = if strict {
                ValidationOptions::strict()
            } else {
                ValidationOptions::lenient()
            }
            .with_reserved(ReservedNames::words(reserved))
            .with_portability_warnings(true);
            let options = FsOptions::default().with_validation(validation);
            let report = validate(&roots, &explicit, &options);
            if json {
                serde_json::to_writer_pretty(&mut out, &report.to_json()).map_err(json_failure)?;
                writeln!(out)?;
            } else {
                report.write_text(&mut out)?;
            }
            Ok(
                if report.discovery.is_valid() && report.missing.is_empty() {
                    0
                } else {
                    1
                },
            )
        }
        Command::List { json, paths } => {
            let provider = sources.provider(paths)?;
            let catalog = block_on(provider.list())?;
            if json {
                serde_json::to_writer_pretty(&mut out, catalog.entries()).map_err(json_failure)?;
                writeln!(out)?;
            } else {
                let width = catalog.names().map(str::len).max().unwrap_or(0);
                for m in catalog.entries() {
                    let desc: Vec<&str> = m.description.split_whitespace().collect();
                    writeln!(
                        out,
                        "{:width$}  {}",
                        text::line(m.name.as_str()),
                        text::line(&desc.join(" "))
                    )?;
                }
            }
            warn_skipped(provider.as_ref());
            Ok(0)
        }
        Command::Catalog {
            format,
            budget,
            description_cap,
            paths,
        } => {
            let provider = sources.provider(paths)?;
            let catalog = block_on(provider.list())?;
            let format = match format {
                Format::Xml => CatalogFormat::Xml,
                Format::Markdown => CatalogFormat::Markdown,
                Format::Json => CatalogFormat::Json,
            };
            let limit = budget;
            let budget = Budget::new(limit, description_cap);
            let mut rendered = catalog.render(
                &RenderOptions::default()
                    .with_format(format)
                    .with_budget(budget),
            );
            if rendered.is_empty() && format == CatalogFormat::Json {
                // JSON output is always a JSON document.
                rendered = EMPTY_JSON_CATALOG.to_owned();
            }
            // The catalog is exactly what a model sees, but never drives a
            // terminal (the renderer drops control characters already).
            let shown = text::for_terminal(&rendered, io::stdout().is_terminal());
            out.write_all(shown.as_bytes())?;
            for warning in catalog_report::warnings(&catalog, format, limit, &rendered) {
                eprintln!("warning: {warning}");
            }
            warn_skipped(provider.as_ref());
            Ok(0)
        }
        Command::Show {
            name,
            json,
            max_bytes,
            paths,
        } => {
            let provider = sources.provider(paths)?;
            let mut skill = Arc::unwrap_or_clone(block_on(provider.get(&name))?);
            if let Some(max) = max_bytes {
                skill.body = cut_body(&skill.body, max);
            }
            if json {
                serde_json::to_writer_pretty(&mut out, &skill).map_err(json_failure)?;
                writeln!(out)?;
                return Ok(0);
            }
            write_show_text(&mut out, &skill)?;
            Ok(0)
        }
        Command::Run {
            sandbox,
            timeout,
            output_files,
            json,
            name,
            paths,
            command,
        } => {
            let provider = sources.provider(paths)?;
            let args = run::RunArgs {
                name,
                command,
                sandbox,
                timeout,
                output_files,
                json,
                stdout_terminal: io::stdout().is_terminal(),
                stderr_terminal: io::stderr().is_terminal(),
            };
            out.flush()?;
            run::run(provider, args, &mut out, &mut io::stderr())
                .map_err(|run::RunFailure(message)| Failure::usage(message))
        }
        Command::Agent {
            model,
            prompt,
            json,
            max_steps,
            max_tokens,
            trpc,
            run,
            session,
            session_id,
            paths,
        } => {
            let provider = sources.provider(paths)?;
            out.flush()?;
            agent::run(
                agent::AgentArgs {
                    model,
                    prompt,
                    json,
                    max_steps,
                    max_tokens,
                    trpc,
                    verbose: verbose > 0,
                    run,
                    session,
                    session_id,
                },
                provider,
                &mut out,
            )
        }
        Command::Sessions { command } => sessions::run(command, &mut out),
        Command::Report {
            json,
            html,
            tokenizer,
            context,
            paths,
        } => {
            // The tables load while discovery runs.
            let loader = std::thread::spawn(move || report::Bpe::load(tokenizer));
            let defaults =
                paths.is_empty() && sources.roots.is_empty() && remote::roots_from_env().is_empty();
            let (mut roots, explicit) = if defaults {
                (report::default_roots(), Vec::new())
            } else {
                let explicit = sources.resolve(paths)?;
                (explicit.clone(), explicit)
            };
            if sources.standard && !defaults {
                roots.extend(
                    StandardRoots::new()
                        .discover()
                        .roots
                        .into_iter()
                        .map(|r| r.path),
                );
            }
            let validation = ValidationOptions::lenient().with_portability_warnings(true);
            let options = FsOptions::default().with_validation(validation);
            let checked = validate(&roots, &explicit, &options);
            let counter = loader
                .join()
                .map_err(|_| Failure::usage("the tokenizer failed to load"))?;
            let report = report::build(
                &checked.discovery,
                &checked.missing,
                &roots,
                &options,
                &counter,
                context,
            );
            if let Some(file) = html {
                let mut page = Vec::new();
                report::write_html(&mut page, &report)?;
                std::fs::write(&file, page).map_err(|e| {
                    Failure::usage(format!("cannot write `{}`: {e}", file.display()))
                })?;
                eprintln!("wrote {}", text::line(&file.display().to_string()));
            } else if json {
                serde_json::to_writer_pretty(&mut out, &report).map_err(json_failure)?;
                writeln!(out)?;
            } else {
                let style = report::Style::detect(io::stdout().is_terminal());
                report::write_text(&mut out, &report, style)?;
            }
            Ok(0)
        }
        Command::Mcp {
            http,
            run,
            poll_ms,
            limits,
            paths,
        } => {
            let provider = sources.provider(paths)?;
            out.flush()?;
            mcp::run(
                mcp::McpArgs {
                    http,
                    run,
                    poll: std::time::Duration::from_millis(poll_ms),
                    limits,
                },
                provider,
            )
        }
        Command::Read {
            name,
            file,
            lines,
            max_bytes,
            raw,
            paths,
        } => {
            if raw {
                // Raw bytes cannot be cut with a marker: over the cap is refused.
                let mut options = FsOptions::default();
                if let Some(max) = max_bytes {
                    options = options.with_max_resource_bytes(max as u64);
                }
                let provider = sources.provider_with(paths, options)?;
                let bytes = block_on(provider.read_resource_bytes(&name, &file))?;
                out.write_all(&bytes.bytes)?;
                return Ok(0);
            }
            let provider = sources.provider_with(paths, read_options(max_bytes))?;
            let content = block_on(provider.read_resource(&name, &file, lines)).map_err(|err| {
                let binary = err.kind() == ErrorKind::Binary;
                let mut failure = Failure::from(err);
                if binary {
                    failure.message.push_str("; use --raw to write its bytes");
                }
                failure
            })?;
            // Unchanged into a pipe or a file; escaped on a terminal, where a
            // hostile file could set the title or write the clipboard.
            let shown = text::for_terminal(&content.text, io::stdout().is_terminal());
            out.write_all(shown.as_bytes())?;
            Ok(0)
        }
    }
}

/// Writes one diagnostic as text: its `file:line:col: severity[code]: message`
/// line with control characters escaped (a file name may hold a newline), then
/// its source excerpt, if any, line by line; every line starts with `indent`.
fn write_diagnostic(out: &mut impl Write, indent: &str, d: &Diagnostic) -> io::Result<()> {
    let mut header = d.clone();
    let excerpt = header.excerpt.take();
    writeln!(out, "{indent}{}", text::line(&header.to_string()))?;
    if let Some(excerpt) = excerpt {
        for line in excerpt.to_string().lines() {
            writeln!(out, "{indent}{}", text::line(line))?;
        }
    }
    Ok(())
}

/// The catalog `--format json` prints when no skill is listed: still a JSON
/// document, of the same shape as a non-empty one.
const EMPTY_JSON_CATALOG: &str = "{\"skills\":[]}\n";

/// `FsOptions` for `read`: `--max-bytes N` caps the text returned at `N` bytes
/// and lets files of up to `N` bytes (never less than the default 16 MiB) be
/// read at all.
fn read_options(max_bytes: Option<usize>) -> FsOptions {
    let options = FsOptions::default();
    match max_bytes {
        None => options,
        Some(max) => {
            let limit = options.max_resource_bytes.max(max as u64);
            options
                .with_max_read_bytes(max)
                .with_max_resource_bytes(limit)
        }
    }
}

/// The body cut at `max` bytes with the same marker `read` uses.
fn cut_body(body: &str, max: usize) -> String {
    let Ok(path) = ResourcePath::parse("SKILL.md") else {
        return body.to_owned();
    };
    match text_content(path, body.as_bytes(), None, max) {
        Ok(content) => content.text.trim_end().to_owned(),
        Err(_) => body.to_owned(),
    }
}

/// `skills show` in text form; every field from the skill is escaped.
fn write_show_text(out: &mut impl Write, skill: &Skill) -> io::Result<()> {
    let m = &skill.metadata;
    writeln!(out, "name:        {}", text::line(m.name.as_str()))?;
    writeln!(out, "description: {}", text::line(&m.description))?;
    if let Some(location) = &skill.location {
        writeln!(out, "location:    {}", text::line(location))?;
    }
    if let Some(license) = &m.license {
        writeln!(out, "license:     {}", text::line(license))?;
    }
    if !m.declared_tools.is_empty() {
        writeln!(
            out,
            "tools:       {}",
            text::line(&m.declared_tools.join(", "))
        )?;
    }
    if !skill.resources.is_empty() {
        writeln!(out, "files:")?;
        for e in &skill.resources.entries {
            let size = e.size.map(|s| format!(" ({s} bytes)")).unwrap_or_default();
            writeln!(out, "  {}{size}", text::line(e.path.as_str()))?;
        }
        if let Some(note) = skill.resources.omitted_note() {
            writeln!(out, "  … {note}")?;
        }
    }
    writeln!(out, "---")?;
    writeln!(out, "{}", text::block(&skill.body))
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    pollster::block_on(future)
}

/// Where skills come from: `--root` values, PATH arguments, `$SKILLS_ROOT`, the
/// standard roots, or `examples/skills`.
struct Sources {
    roots: Vec<PathBuf>,
    standard: bool,
    /// Revalidate URL roots instead of reusing the cache as it is.
    refresh: bool,
}

impl Sources {
    /// The explicit roots as local folders: `--root` and PATH arguments, else
    /// `$SKILLS_ROOT`, else `examples/skills` (unless standard roots are used).
    /// URLs are downloaded (or taken from the cache).
    fn resolve(&self, paths: Vec<PathBuf>) -> Result<Vec<PathBuf>, Failure> {
        let mut specs: Vec<PathBuf> = self.roots.iter().cloned().chain(paths).collect();
        if specs.is_empty() {
            specs = remote::roots_from_env()
                .into_iter()
                .map(PathBuf::from)
                .collect();
        }
        if specs.is_empty() && !self.standard {
            let default = PathBuf::from("examples/skills");
            if !default.is_dir() {
                return Err(Failure::usage(
                    "no skills path given, $SKILLS_ROOT is empty and there is no `examples/skills` here; pass a PATH, --root or --standard-roots",
                ));
            }
            specs.push(default);
        }
        let mut local = Vec::with_capacity(specs.len());
        for spec in specs {
            // A path that is not UTF-8 cannot be a URL; `ftp://…` is a URL the
            // library refuses by name.
            match spec
                .to_str()
                .filter(|text| remote::is_url(text) || remote::url_scheme(text).is_some())
            {
                Some(url) => local.push(download(url, self.refresh)?),
                None => local.push(spec),
            }
        }
        check_paths(local)
    }

    /// One provider over the explicit roots and, when asked, the standard roots
    /// (explicit roots take precedence).
    fn provider(&self, paths: Vec<PathBuf>) -> Result<Arc<dyn SkillProvider>, Failure> {
        self.provider_with(paths, FsOptions::default())
    }

    /// [`Sources::provider`] with `options`.
    fn provider_with(
        &self,
        paths: Vec<PathBuf>,
        options: FsOptions,
    ) -> Result<Arc<dyn SkillProvider>, Failure> {
        let roots = self.resolve(paths)?;
        tracing::debug!(roots = ?roots, standard = self.standard, "skill roots");
        let explicit: Option<Arc<dyn SkillProvider>> = (!roots.is_empty() || !self.standard)
            .then(|| Arc::new(FsProvider::new(roots, options.clone())) as _);
        let standard: Option<Arc<dyn SkillProvider>> = self
            .standard
            .then(|| Arc::new(standard_provider(options.clone())) as _);
        Ok(match (explicit, standard) {
            (Some(explicit), Some(standard)) => Arc::new(
                LayeredProvider::new()
                    .with_layer("given paths", explicit)
                    .with_layer("standard roots", standard),
            ),
            (Some(only), None) | (None, Some(only)) => only,
            // Not reached (no standard roots means explicit roots), but an empty
            // provider is the honest answer if it were.
            (None, None) => Arc::new(FsProvider::new(Vec::<PathBuf>::new(), options)),
        })
    }
}

/// Fetches a URL root into the cache, with a progress line on a terminal.
fn download(url: &str, refresh: bool) -> Result<PathBuf, Failure> {
    let mut options = RemoteOptions::default().with_refresh(refresh);
    let drew = Arc::new(AtomicBool::new(false));
    if io::stderr().is_terminal() {
        let drew = Arc::clone(&drew);
        let label = url.to_owned();
        let progress: remote::ProgressFn = Arc::new(move |done, total| {
            drew.store(true, Ordering::Relaxed);
            let mib = |n: u64| n as f64 / (1024.0 * 1024.0);
            match total {
                Some(total) if total > 0 => eprint!(
                    "\rdownloading {label}: {:.1} / {:.1} MiB ({:>3}%)",
                    mib(done),
                    mib(total),
                    done.saturating_mul(100) / total
                ),
                _ => eprint!("\rdownloading {label}: {:.1} MiB", mib(done)),
            }
        });
        options = options.with_on_progress(progress);
    }
    let result = remote::resolve_root_detailed(url, &options);
    if drew.load(Ordering::Relaxed) {
        eprintln!();
    }
    let resolved = result.map_err(|e| Failure {
        code: 2,
        message: e.to_string(),
        broken_pipe: false,
    })?;
    if let remote::Source::Stale(copy) = &resolved.source {
        eprintln!(
            "warning: cannot refresh: {}; using the cached copy from {}",
            copy.error,
            copy.fetched_utc()
        );
    }
    Ok(resolved.path)
}

/// Shows files inside cached URL roots as `url!/path/in/archive` instead of
/// their cache path.
fn relabel_remote(discovery: &mut Discovery) {
    let options = RemoteOptions::default();
    let diagnostics = discovery
        .diagnostics
        .iter_mut()
        .chain(discovery.skills.iter_mut().flat_map(|s| &mut s.diagnostics));
    for d in diagnostics {
        if let Some(file) = &d.file
            && let Some(shown) = remote::remote_location(Path::new(file), &options)
        {
            d.file = Some(shown);
        }
    }
}

/// Checks local roots exist; a path to a `SKILL.md` means its folder.
fn check_paths(mut all: Vec<PathBuf>) -> Result<Vec<PathBuf>, Failure> {
    for path in &mut all {
        if !path.exists() {
            return Err(Failure::usage(format!(
                "`{}` does not exist",
                path.display()
            )));
        }
        // Like the reference validator, a path to SKILL.md means its folder.
        let is_skill_md = path
            .file_name()
            .is_some_and(|n| n.eq_ignore_ascii_case("skill.md"));
        if path.is_file() && !is_skill_md {
            return Err(Failure::usage(format!(
                "`{}` is a file; give a skill folder, a folder of skills or a SKILL.md",
                path.display()
            )));
        }
        if path.is_file() {
            let parent = path.parent().map(Path::to_path_buf).unwrap_or_default();
            *path = if parent.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                parent
            };
        }
    }
    Ok(all)
}

/// Prints on stderr one line per reason skills were skipped ("91 skills skipped:
/// empty description; run `skills validate`") and one line for the warnings.
fn warn_skipped(provider: &dyn SkillProvider) {
    let diagnostics = block_on(provider.diagnostics());
    for line in skipped_summary(&diagnostics) {
        eprintln!("warning: {line}");
    }
}

/// The stderr summary of loading diagnostics: a skipped skill is counted once,
/// under its first error.
fn skipped_summary(diagnostics: &[Diagnostic]) -> Vec<String> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut first_error: BTreeMap<&str, Code> = BTreeMap::new();
    let mut unlocated: Vec<Code> = Vec::new();
    let mut warned: BTreeSet<&str> = BTreeSet::new();
    let mut warnings = 0usize;
    for d in diagnostics {
        match (d.is_error(), d.file.as_deref()) {
            (true, Some(file)) => {
                first_error.entry(file).or_insert(d.code);
            }
            (true, None) => unlocated.push(d.code),
            (false, file) => {
                warnings += 1;
                if let Some(file) = file {
                    warned.insert(file);
                }
            }
        }
    }
    let mut by_reason: BTreeMap<&'static str, usize> = BTreeMap::new();
    for code in first_error.values().chain(&unlocated) {
        *by_reason.entry(skip_reason(*code)).or_default() += 1;
    }
    let mut lines: Vec<String> = by_reason
        .into_iter()
        .map(|(reason, n)| {
            let noun = if n == 1 { "skill" } else { "skills" };
            format!("{n} {noun} skipped: {reason}; run `skills validate`")
        })
        .collect();
    if warnings > 0 {
        let files = warned.len();
        lines.push(format!(
            "{warnings} warning(s) in {files} file(s) while loading skills; run `skills validate` for details"
        ));
    }
    lines
}

/// Why a skill with this error is skipped, in words.
fn skip_reason(code: Code) -> &'static str {
    match code {
        Code::DescriptionEmpty => "empty description",
        Code::DescriptionMissing => "no description",
        Code::NameMissing | Code::NameEmpty => "no name",
        Code::NameNotLowercase
        | Code::NameHyphenEdge
        | Code::NameConsecutiveHyphens
        | Code::NameInvalidChars => "invalid name",
        Code::NameReserved => "reserved name",
        Code::FrontmatterMissing | Code::FrontmatterUnclosed | Code::FrontmatterNotMapping => {
            "no frontmatter"
        }
        Code::YamlInvalid
        | Code::YamlTooDeep
        | Code::YamlAliasBudget
        | Code::FrontmatterTooLarge => "unreadable YAML frontmatter",
        Code::NotUtf8 => "not UTF-8",
        Code::SkillMdMissing | Code::SkillMdNotFile | Code::SkillMdTooLarge => "no usable SKILL.md",
        Code::IoError => "could not be read",
        Code::PathOutsideSkill => "SKILL.md leads outside the skill",
        other => other.as_str(),
    }
}

/// The result of `skills validate`.
struct ValidateReport {
    discovery: Discovery,
    /// Root-level errors for paths under which no skill was found.
    missing: Vec<Diagnostic>,
    /// Whether strict mode ran.
    strict: bool,
}

/// Validates every skill under `roots`; a path in `explicit` (given by the user)
/// under which no skill is found is an error.
fn validate(roots: &[PathBuf], explicit: &[PathBuf], options: &FsOptions) -> ValidateReport {
    let mut discovery = SkillFs::new(options.clone()).discover(roots);
    // The first skill of a name wins; later ones get a `skill-duplicate` warning.
    discovery.index_by_name();
    // Lint warnings (never errors) for every skill that parsed.
    skills_fs::lint_discovery(&mut discovery);
    // Last, so lint's diagnostics name URL roots too, not their cache paths.
    relabel_remote(&mut discovery);
    let mut missing = Vec::new();
    for root in explicit {
        // `check_paths` made sure every root is an existing folder.
        let found = discovery.skills.iter().any(|s| s.dir.starts_with(root));
        if !found {
            missing.push(Diagnostic::error(
                Code::SkillMdMissing,
                format!(
                    "no skill found in `{}`: a skill folder needs a SKILL.md",
                    root.display()
                ),
            ));
        }
    }
    ValidateReport {
        discovery,
        missing,
        strict: options.validation.mode == Mode::Strict,
    }
}

#[derive(Serialize)]
struct JsonReport<'a> {
    valid: bool,
    /// `"strict"` or `"lenient"`.
    mode: &'static str,
    errors: usize,
    warnings: usize,
    /// Skills checked, valid, and portable (valid with no portability warning).
    counts: JsonCounts,
    diagnostics: Vec<&'a Diagnostic>,
    skills: Vec<JsonSkill<'a>>,
}

#[derive(Serialize)]
struct JsonCounts {
    skills: usize,
    valid: usize,
    portable: usize,
}

#[derive(Serialize)]
struct JsonSkill<'a> {
    dir: String,
    name: Option<&'a str>,
    valid: bool,
    portable: bool,
    diagnostics: &'a [Diagnostic],
}

impl ValidateReport {
    fn all_diagnostics(&self) -> impl Iterator<Item = &Diagnostic> {
        self.missing
            .iter()
            .chain(&self.discovery.diagnostics)
            .chain(self.discovery.skills.iter().flat_map(|s| &s.diagnostics))
    }

    fn counts(&self) -> (usize, usize) {
        let errors = self.all_diagnostics().filter(|d| d.is_error()).count();
        let warnings = self.all_diagnostics().count() - errors;
        (errors, warnings)
    }

    fn mode(&self) -> &'static str {
        if self.strict { "strict" } else { "lenient" }
    }

    /// Skills checked, valid, portable.
    fn skill_counts(&self) -> JsonCounts {
        let skills = &self.discovery.skills;
        JsonCounts {
            skills: skills.len(),
            valid: skills.iter().filter(|s| s.is_valid()).count(),
            portable: skills
                .iter()
                .filter(|s| is_portable(&s.diagnostics))
                .count(),
        }
    }

    fn to_json(&self) -> JsonReport<'_> {
        let (errors, warnings) = self.counts();
        JsonReport {
            valid: errors == 0,
            mode: self.mode(),
            errors,
            warnings,
            counts: self.skill_counts(),
            diagnostics: self
                .missing
                .iter()
                .chain(&self.discovery.diagnostics)
                .collect(),
            skills: self
                .discovery
                .skills
                .iter()
                .map(|s| JsonSkill {
                    dir: s.dir.display().to_string(),
                    name: s.name(),
                    valid: s.is_valid(),
                    portable: is_portable(&s.diagnostics),
                    diagnostics: &s.diagnostics,
                })
                .collect(),
        }
    }

    fn write_text(&self, out: &mut impl Write) -> io::Result<()> {
        for d in self.missing.iter().chain(&self.discovery.diagnostics) {
            write_diagnostic(out, "", d)?;
        }
        let mut valid = 0;
        for s in &self.discovery.skills {
            let label = s.name().map_or_else(
                || {
                    s.dir
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default()
                },
                str::to_owned,
            );
            let label = text::line(&label);
            let dir = s.dir.display().to_string();
            let dir = text::line(&dir);
            if s.is_valid() {
                valid += 1;
                writeln!(out, "ok       {label}  ({dir})")?;
            } else {
                writeln!(out, "INVALID  {label}  ({dir})")?;
            }
            for d in &s.diagnostics {
                write_diagnostic(out, "    ", d)?;
            }
        }
        let (errors, warnings) = self.counts();
        let total = self.discovery.skills.len();
        writeln!(
            out,
            "{total} skill(s) checked: {valid} valid, {} invalid; {errors} error(s), {warnings} warning(s)",
            total - valid
        )?;
        writeln!(out, "{}", self.mode_line())
    }

    /// Which mode ran and how many skills are portable, e.g. `lenient mode: 5
    /// skills, 5 valid, 4 portable (1 uses fields or names other clients reject;
    /// --strict checks the specification)`.
    fn mode_line(&self) -> String {
        let c = self.skill_counts();
        let noun = if c.skills == 1 { "skill" } else { "skills" };
        if self.strict {
            return format!(
                "strict mode: {} {noun}, {} valid by the specification (the verdicts of skills-ref)",
                c.skills, c.valid
            );
        }
        let unportable = c.valid.saturating_sub(c.portable);
        let why = match unportable {
            0 => String::new(),
            1 => "1 uses fields or names other clients reject; ".to_owned(),
            n => format!("{n} use fields or names other clients reject; "),
        };
        format!(
            "lenient mode: {} {noun}, {} valid, {} portable ({why}--strict checks the specification)",
            c.skills, c.valid, c.portable
        )
    }
}
