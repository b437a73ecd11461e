//! `skills`: check Agent Skills and see what a model would see.
//!
//! A thin binary over the library crates: `main` parses the arguments
//! (`cli`) and hands each command to its own module (`validate`, `list`,
//! `catalog`, `index`, `show`, `read`, `report`, `run`, `agent`, `eval`,
//! `sessions`, `mcp`), which calls the libraries and prints. Shared by the commands: where
//! skills come from (`sources`), how a command fails (`failure`), escaping
//! for the terminal (`text`), `-v` logging (`logging`) and stopping on a
//! signal (`signal`). It is also the sandbox's helper (`skills-sandbox`,
//! entered before anything else when bubblewrap starts it as the helper).
//! It must not contain skill rules of its own: anything a library user
//! would also want belongs in a library crate.
//!
//! Text output escapes control characters in everything that comes from the
//! file system or a file (see `text`).

mod agent;
mod catalog;
mod cli;
mod config;
mod eval;
mod failure;
mod index;
mod input;
mod list;
mod lock;
mod logging;
mod mcp;
mod read;
mod report;
mod requirements;
mod run;
mod runtime_flags;
mod sessions;
mod show;
mod signal;
mod sources;
mod text;
mod validate;

use std::io::{self, IsTerminal as _, Write};
use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::failure::Failure;
use crate::sources::Sources;

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
        // A long-running server: before the provider or the runtime starts
        // a thread.
        mcp::tune_memory();
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

/// Dispatches to the command's module.
fn run_to<W: Write>(cli: Cli, mut out: &mut W) -> Result<u8, Failure> {
    let Cli {
        roots,
        standard_roots,
        refresh,
        config,
        locked,
        lockfile,
        verbose,
        command,
    } = cli;
    let sources = Sources {
        roots,
        standard: standard_roots,
        refresh,
        config,
        locked,
        lockfile,
        cache_dir: None,
    };
    match command {
        Command::Lock(args) => lock::lock(args, &sources, out),
        Command::Verify(args) => lock::verify(args, &sources, out),
        Command::Validate(args) => validate::run(args, &sources, out),
        Command::List(args) => list::run(args, &sources, out),
        Command::Catalog(args) => catalog::run(args, &sources, out),
        Command::Index(args) => index::run(args, out),
        Command::Show(args) => show::run(args, &sources, out),
        Command::Read(args) => read::run(args, &sources, out),
        Command::Report(args) => report::run(args, &sources, out),
        Command::Run {
            sandbox,
            runtime_mode,
            timeout,
            output_files,
            inputs,
            runtime,
            json,
            name,
            paths,
            command,
        } => {
            let mode = if sandbox {
                agent::RunMode::Sandbox
            } else {
                runtime_mode.unwrap_or(agent::RunMode::Local)
            };
            runtime.require_container(Some(mode))?;
            let provider = sources.provider(paths)?;
            let args = run::RunArgs {
                name,
                command,
                mode,
                timeout,
                output_files,
                inputs,
                runtime,
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
            attach,
            json,
            max_steps,
            max_tokens,
            trpc,
            run,
            runtime,
            session,
            session_id,
            model_aliases,
            subagents,
            allowed_tools,
            grant_lifetime,
            preload,
            paths,
        } => {
            runtime.require_run(run.is_some())?;
            runtime.require_container(run)?;
            let settings = sources.settings()?;
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
                    runtime,
                    session,
                    session_id,
                    forks: agent::ForkArgs {
                        model_aliases,
                        subagents,
                        allowed_tools,
                        grant_lifetime,
                    },
                    attach,
                    preload,
                },
                provider,
                settings,
                &mut out,
            )
        }
        Command::Eval { command } => {
            out.flush()?;
            eval::run(command, &sources, &mut out)
        }
        Command::Sessions { command } => sessions::run(command, &mut out),
        Command::Mcp {
            http,
            run,
            runtime,
            poll_ms,
            limits,
            paths,
        } => {
            runtime.require_run(run.is_some())?;
            runtime.require_container(run)?;
            let settings = sources.settings()?;
            let provider = sources.provider(paths)?;
            out.flush()?;
            mcp::run(
                mcp::McpArgs {
                    http,
                    run,
                    runtime,
                    poll: std::time::Duration::from_millis(poll_ms),
                    limits,
                },
                provider,
                settings,
            )
        }
    }
}
