//! A conversation that survives restarts: every run of this program resumes
//! the stored session, adds one turn and stores it again.
//!
//! ```text
//! cargo run -p session-resume -- [STORE_URL] [MESSAGE]
//! cargo run -p session-resume -- sqlite://target/demo-sessions.db "hello"
//! cargo run -p session-resume -- sqlite://target/demo-sessions.db "and again"
//! ```
//!
//! The store is `sqlite://PATH` (the default, `target/demo-sessions.db`) or
//! `postgres://USER@HOST/DB`. The model is scripted (it repeats what it was
//! told), so no key is needed; swap in `OpenAiChat` or `Anthropic` for a real
//! one. Each run prints whether its first request extends the last request
//! of the run before it byte for byte: what keeps a provider's prompt cache
//! hitting across restarts.
//!
//! What it must not depend on: anything beyond the public APIs of
//! `skills-fs`, `skills-agent` and `skills-store` (it is what a user would
//! write).

use std::process::ExitCode;
use std::sync::Arc;

use skills_agent::{Agent, ModelResponse, Runner, ScriptedModel, SessionWriter, StoreErrorKind};
use skills_fs::{FsOptions, FsProvider};

type Error = Box<dyn std::error::Error + Send + Sync>;

const SESSION: &str = "demo";

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .unwrap_or_else(|| "sqlite://target/demo-sessions.db".to_owned());
    let message = args.next().unwrap_or_else(|| "hello".to_owned());
    match run(&url, &message).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}

/// `value` as the JSON text a provider would get.
fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

async fn run(url: &str, message: &str) -> Result<(), Error> {
    let provider = Arc::new(FsProvider::open(["examples/skills"], FsOptions::default()).await);
    let agent = Agent::builder("demo", provider)
        .instructions("You are a helpful assistant.")
        .build()?;
    let store = skills_store::open_store(url).await?;

    // Resume the stored session, or start it when the store has none yet.
    let (mut session, mut writer) = match agent.resume_stored(Arc::clone(&store), SESSION).await {
        Ok((mut session, writer)) => {
            // A library change since the pin becomes an appended delta.
            session.refresh_catalog().await?;
            (session, writer)
        }
        Err(err) if err.kind() == StoreErrorKind::NotFound => {
            let mut session = agent.start_session().await?;
            session.set_id(SESSION.parse()?);
            let writer = SessionWriter::create(Arc::clone(&store), &session, None).await?;
            (session, writer)
        }
        Err(err) => return Err(err.into()),
    };
    let model = Arc::new(ScriptedModel::new([ModelResponse::text(format!(
        "You said: {message}"
    ))]));
    // The request as the model gets it (with the cache breakpoints its
    // provider needs: none for this scripted stand-in, four for Anthropic).
    let before = session.build_request_for(model.as_ref());
    let resumed = session.transcript().len();

    let outcome = Runner::builder(model.clone())
        .build()
        .run_to_end(&mut session, message)
        .await?;
    writer.save(&session).await?;
    writer.record_usage(outcome.usage).await?;

    let first = model
        .requests()
        .into_iter()
        .next()
        .ok_or("the model was not called")?;
    // The same system prompt and tools, and the stored messages as the start
    // of the new ones, compared as the JSON the provider gets.
    let extends = json(&first.system) == json(&before.system)
        && json(&first.tools) == json(&before.tools)
        && json(&first.messages).starts_with(json(&before.messages).trim_end_matches(']'));
    println!(
        "session `{SESSION}` in {url}: {resumed} messages before this run, {} after",
        session.transcript().len()
    );
    println!("model: {}", outcome.text);
    println!("first request extends the stored conversation byte for byte: {extends}");
    if extends {
        Ok(())
    } else {
        Err("the resumed session's first request does not extend the stored one".into())
    }
}
