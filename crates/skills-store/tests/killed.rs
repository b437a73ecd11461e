//! A writer process killed with SIGKILL while it appends in a loop leaves a
//! log that reads back whole: every append is there completely or not at
//! all.
//!
//! The test re-executes its own test binary, running only [`child_writer`]
//! with the store's location in environment variables; that child appends
//! batches of [`BATCH`] events (of about 32 KB each, so each append takes a
//! while) until it is killed. The kill lands wherever the child is: between
//! appends or in the middle of one.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use skills_agent::{SessionEvent, SessionStore};
use skills_store::{PostgresStore, SqliteStore};

use crate::fixture::{Fixture, Location};
use skills_testkit::store::message;

/// Events per append of the child writer.
pub(crate) const BATCH: usize = 8;
/// Appends the parent waits for before it kills the child.
const APPENDS_BEFORE_KILL: u64 = 15;

const KIND_VAR: &str = "SKILLS_STORE_CHILD_KIND";
const TARGET_VAR: &str = "SKILLS_STORE_CHILD_TARGET";
const SCHEMA_VAR: &str = "SKILLS_STORE_CHILD_SCHEMA";
const SESSION_VAR: &str = "SKILLS_STORE_CHILD_SESSION";

/// Reads the log back and checks it: no gaps, every event parses, only whole
/// batches, and the next append at its end goes through.
pub(crate) async fn check_log(store: &Arc<dyn SessionStore>, id: &str) {
    let events = store.read(id, 0).await.unwrap();
    let info = store.info(id).await.unwrap();
    assert_eq!(events.len() as u64, info.next_seq);
    assert_eq!(
        events.len() % BATCH,
        0,
        "a torn append: {} events is not a whole number of batches of {BATCH}",
        events.len()
    );
    for (n, event) in events.iter().enumerate() {
        let SessionEvent::Message { message } = &event.event else {
            panic!("event {n} is not a message");
        };
        let batch_start = n - n % BATCH;
        let prefix = format!("{batch_start}.{}", n % BATCH);
        assert_eq!(
            message.content.split(' ').next(),
            Some(prefix.as_str()),
            "event {n}"
        );
    }
    let next = store
        .append(id, info.next_seq, &[message("after the kill")])
        .await
        .unwrap();
    assert_eq!(next, info.next_seq + 1);
}

pub(crate) async fn killed_writer(fixture: &Fixture) {
    let id = "killed";
    fixture
        .store
        .create(&skills_agent::NewSession::new(id, "child"))
        .await
        .unwrap();
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            "killed::child_writer",
            "--ignored",
            "--nocapture",
        ])
        .env(SESSION_VAR, id)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    match &fixture.location {
        Location::Sqlite(path) => command.env(KIND_VAR, "sqlite").env(TARGET_VAR, path),
        Location::Postgres { url, schema } => command
            .env(KIND_VAR, "postgres")
            .env(TARGET_VAR, url)
            .env(SCHEMA_VAR, schema),
        Location::Memory => panic!("a memory store cannot be shared with a child process"),
    };
    let mut child = command.spawn().unwrap();
    // Wait (without a time limit on the check itself: the loop ends when the
    // child has written enough, or fails when the child dies first).
    loop {
        let next = fixture.store.info(id).await.unwrap().next_seq;
        if next >= APPENDS_BEFORE_KILL * BATCH as u64 {
            break;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the child writer stopped by itself ({status}) after {next} events");
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // `kill` sends SIGKILL on Unix: no destructor, no rollback by the child.
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "{status}");
    let reopened = fixture.reopen().await;
    check_log(&reopened, id).await;
}

/// The child process of [`killed_writer`]: appends until it is killed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by the killed-writer tests as a child process"]
async fn child_writer() {
    let kind =
        std::env::var(KIND_VAR).expect("run by killed_writer, which sets SKILLS_STORE_CHILD_KIND");
    let target = std::env::var(TARGET_VAR).unwrap();
    let id = std::env::var(SESSION_VAR).unwrap();
    let store: Arc<dyn SessionStore> = match kind.as_str() {
        "sqlite" => Arc::new(SqliteStore::open(&target).await.unwrap()),
        _ => {
            let schema = std::env::var(SCHEMA_VAR).unwrap();
            Arc::new(
                PostgresStore::connect_in_schema(&target, &schema)
                    .await
                    .unwrap(),
            )
        }
    };
    let filler = "x".repeat(32 * 1024);
    let mut seq = store.info(&id).await.unwrap().next_seq;
    loop {
        let batch: Vec<SessionEvent> = (0..BATCH)
            .map(|i| message(format!("{seq}.{i} {filler}")))
            .collect();
        seq = store.append(&id, seq, &batch).await.unwrap();
    }
}
