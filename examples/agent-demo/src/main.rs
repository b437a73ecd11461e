//! An agent with the skills of a folder, in about sixty lines.
//!
//! ```text
//! cargo run -p agent-demo -- [SKILLS_DIR] [PROMPT]
//! ```
//!
//! With `ANTHROPIC_API_KEY` set it asks Anthropic, else with `OPENAI_API_KEY`
//! set it asks OpenAI (or the compatible server at `OPENAI_BASE_URL`); the
//! model is `SKILLS_DEMO_MODEL` or a default. Without a key it says what to
//! set and exits 0, so CI can run it. It streams the answer and shows each
//! tool call, skill load and request's cache share, as `skills agent` does.
//! Nothing here names a cache strategy: each request gets the breakpoints
//! its model's provider needs (`cache_control` markers for Anthropic, none
//! for OpenAI's automatic prefix caching).
//!
//! What it must not depend on: anything beyond the public APIs of
//! `skills-fs` and `skills-agent` (it is what a user would write).

use std::process::ExitCode;
use std::sync::Arc;

use futures_util::StreamExt as _;
use skills_agent::{Agent, Event, Model, RunEvent, Runner};
use skills_fs::{FsOptions, FsProvider};
use skills_models::{Anthropic, OpenAiChat};

/// The model from the environment, or `None` when no key is set.
fn model() -> Option<Result<Arc<dyn Model>, skills_agent::ModelError>> {
    let name = std::env::var("SKILLS_DEMO_MODEL").ok();
    if std::env::var_os("ANTHROPIC_API_KEY").is_some() {
        let name = name.unwrap_or_else(|| "claude-sonnet-4-5".to_owned());
        return Some(Anthropic::from_env(&name).map(|m| Arc::new(m) as Arc<dyn Model>));
    }
    if std::env::var_os("OPENAI_API_KEY").is_some() {
        let name = name.unwrap_or_else(|| "gpt-4.1".to_owned());
        return Some(OpenAiChat::from_env(&name).map(|m| Arc::new(m) as Arc<dyn Model>));
    }
    None
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| "examples/skills".to_owned());
    let prompt = args.next().unwrap_or_else(|| {
        "Write a commit message for a change that fixes a crash on empty input.".to_owned()
    });
    let model = match model() {
        None => {
            println!(
                "agent-demo runs an agent with the skills in `{dir}` against a real model.\n\
                 Set ANTHROPIC_API_KEY, or OPENAI_API_KEY (and OPENAI_BASE_URL for a compatible \
                 server), and optionally SKILLS_DEMO_MODEL, then run it again:\n\n    \
                 cargo run -p agent-demo -- {dir} \"{prompt}\"\n\nNo key is set: nothing to do."
            );
            return ExitCode::SUCCESS;
        }
        Some(Err(err)) => {
            eprintln!("error: {err}");
            return ExitCode::from(2);
        }
        Some(Ok(model)) => model,
    };
    let provider = Arc::new(FsProvider::open([dir], FsOptions::default()).await);
    let agent = match Agent::builder("demo", provider)
        .instructions("You are a helpful assistant. Load a skill when one fits the task.")
        .build()
    {
        Ok(agent) => agent,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::from(2);
        }
    };
    let mut session = match agent.start_session().await {
        Ok(session) => session,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::from(2);
        }
    };
    let runner = Runner::builder(model).build();
    let mut events = runner.run(&mut session, prompt);
    while let Some(event) = events.next().await {
        match event {
            RunEvent::TextDelta { text } => print!("{text}"),
            RunEvent::ToolCall { call } => eprintln!("[tool] {}", call.name),
            RunEvent::Usage { step, usage, .. } => eprintln!(
                "[usage] request {step}: {} input tokens, {} cached ({:.1} %)",
                usage.input_tokens,
                usage.cache_read_tokens,
                100.0 * usage.cache_hit_ratio()
            ),
            RunEvent::Skill {
                event: Event::SkillLoaded { skill, .. },
            } => eprintln!("[skill] loaded {skill}"),
            RunEvent::Finished { outcome } => {
                println!();
                eprintln!(
                    "[done] {} steps, {} prompt tokens ({} from the cache)",
                    outcome.steps, outcome.usage.input_tokens, outcome.usage.cache_read_tokens
                );
                return ExitCode::SUCCESS;
            }
            RunEvent::Failed { error } => {
                eprintln!("\nerror: {error}");
                return ExitCode::FAILURE;
            }
            _ => {}
        }
    }
    ExitCode::FAILURE
}
