//! Resume across a process restart: a session run by the [`Runner`] with a
//! scripted model is stored in a SQLite file; everything is dropped; a new
//! store on the same file and a new agent (over a provider built anew, as a
//! restarted server would) resume it. The first request after the restart
//! extends the last request before it byte for byte (in the OpenAI Chat wire
//! form), and a skill added to the library meanwhile is announced by a
//! catalog delta appended after the history, never by a changed prefix.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use skills_agent::{
    Agent, ModelRequest, ModelResponse, Runner, ScriptedModel, SessionEvent, SessionStore,
    SessionWriter, ToolCall, Usage,
};
use skills_core::{InCodeProvider, InCodeSkill, define_skill};
use skills_models::wire;
use skills_store::SqliteStore;

fn skill(name: &str, description: &str, body: &str) -> InCodeSkill {
    define_skill(name, description).body(body).build().unwrap()
}

fn library(with_weather: bool) -> Vec<InCodeSkill> {
    let mut skills = vec![
        skill(
            "pdf-forms",
            "Fills PDF forms. Use for any PDF form.",
            "Read the fields first.",
        ),
        skill(
            "csv-report",
            "Builds CSV reports from records.",
            "One row per record.",
        ),
    ];
    if with_weather {
        skills.push(skill(
            "weather",
            "Looks up the weather.",
            "Ask for the city.",
        ));
    }
    skills
}

/// A new agent over a provider built from scratch, as after a restart.
fn agent(with_weather: bool) -> Agent {
    let provider = Arc::new(InCodeProvider::new(library(with_weather)).unwrap());
    Agent::builder("assistant", provider)
        .instructions("You help with documents.")
        .build()
        .unwrap()
}

/// The request as sent on the wire, without its closing `]}`: what a later
/// request must start with for the provider's prompt cache to hit.
fn open_prefix(request: &ModelRequest) -> String {
    let body = wire::openai_chat(request, "model");
    body.strip_suffix("]}")
        .expect("a chat body ends with the messages")
        .to_owned()
}

/// The first life of the process: a run with a skill load, stored as it
/// goes. Returns the last request the model was sent.
async fn first_life(path: &Path) -> ModelRequest {
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(path).await.unwrap());
    let agent = agent(false);
    let mut session = agent.start_session().await.unwrap();
    session.set_id("restart-1".parse().expect("a valid id"));
    let mut writer = SessionWriter::create(Arc::clone(&store), &session, None)
        .await
        .unwrap();
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::tool_calls(
            "Loading the form skill.",
            vec![ToolCall::new(
                "c1",
                "load_skill",
                json!({"name": "pdf-forms"}),
            )],
        )
        .with_usage(Usage::new(120, 10, 0, 0)),
        ModelResponse::text("The form is filled.").with_usage(Usage::new(200, 8, 120, 0)),
    ]));
    let runner = Runner::builder(model.clone()).build();
    let outcome = runner
        .run_to_end(&mut session, "please fill the form")
        .await
        .unwrap();
    writer.save(&session).await.unwrap();
    writer.record_usage(outcome.usage).await.unwrap();
    assert!(session.loaded().contains("pdf-forms"));
    model.requests().pop().unwrap()
}

/// The second life: resume from a new store on the same file, optionally
/// with a library that gained a skill. Returns the first request sent and
/// the stored log.
async fn second_life(path: &Path, library_changed: bool) -> (ModelRequest, Vec<SessionEvent>) {
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(path).await.unwrap());
    let agent = agent(library_changed);
    let (mut session, mut writer) = agent
        .resume_stored(Arc::clone(&store), "restart-1")
        .await
        .unwrap();
    assert!(
        session.loaded().contains("pdf-forms"),
        "the load state came back"
    );
    let delta = session.refresh_catalog().await.unwrap();
    assert_eq!(delta.is_some(), library_changed);
    let model = Arc::new(ScriptedModel::new([ModelResponse::text(
        "Here is the CSV.",
    )]));
    let runner = Runner::builder(model.clone()).build();
    runner
        .run_to_end(&mut session, "now the CSV")
        .await
        .unwrap();
    writer.save(&session).await.unwrap();
    let events = store.read("restart-1", 0).await.unwrap();
    (
        model.requests().remove(0),
        events.into_iter().map(|e| e.event).collect(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_request_after_a_restart_extends_the_last_one_before() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let before = first_life(&path).await;
    let (after, events) = second_life(&path, false).await;
    let prefix = open_prefix(&before);
    let body = wire::openai_chat(&after, "model");
    assert!(
        body.starts_with(&prefix),
        "the resumed request does not extend the last one:\nbefore: {prefix}\nafter:  {body}"
    );
    assert_eq!(after.system, before.system);
    assert_eq!(after.tools, before.tools);
    assert_eq!(
        after.messages.len(),
        before.messages.len() + 2,
        "the reply and the new question"
    );
    assert!(matches!(events[0], SessionEvent::Started { .. }));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, SessionEvent::LoadState { loaded } if loaded == &["pdf-forms"]))
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, SessionEvent::Usage { .. }))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_library_change_since_the_pin_is_announced_by_a_delta() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let before = first_life(&path).await;
    let (after, events) = second_life(&path, true).await;
    let body = wire::openai_chat(&after, "model");
    assert!(
        body.starts_with(&open_prefix(&before)),
        "the prefix was rewritten"
    );
    let system = &after.system[0].text;
    assert!(
        system.contains("pdf-forms") && !system.contains("weather"),
        "{system}"
    );
    // The delta comes after the old history, before the new question.
    let tail = &after.messages[before.messages.len()..];
    let delta = tail
        .iter()
        .find(|m| m.content.contains("weather"))
        .expect("a delta announces the new skill");
    assert!(
        delta.content.contains("Looks up the weather."),
        "{}",
        delta.content
    );
    assert_eq!(tail.last().unwrap().content, "now the CSV");
    // The delta is stored too: a second restart will not announce it again.
    assert!(events.iter().any(
        |e| matches!(e, SessionEvent::Message { message } if message.content.contains("weather"))
    ));
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&path).await.unwrap());
    let (mut third, _) = agent(true).resume_stored(store, "restart-1").await.unwrap();
    assert_eq!(third.refresh_catalog().await.unwrap(), None);
}
