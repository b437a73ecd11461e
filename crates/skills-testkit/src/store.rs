//! The contract of [`SessionStore`] as a conformance suite any store
//! implementor can run (feature `store`).
//!
//! Each check is an async function over a [`StoreFixture`] (a store, and a
//! way to open the same store again);
//! [`session_store_suite!`](crate::session_store_suite) turns them into one
//! `#[tokio::test]` each. A store crate's integration tests run the whole
//! suite with one line, `skills_testkit::session_store_suite!(fixture)`
//! (skills-store's `tests/memory.rs`, `sqlite.rs` and `postgres.rs` do),
//! and need `tokio` with the `macros` and `rt-multi-thread` features among
//! their dev-dependencies. One check, run by hand:
//!
//! ```
//! use std::sync::Arc;
//! use skills_agent::{MemoryStore, SessionStore};
//! use skills_testkit::store::{self, StoreFixture};
//!
//! struct Memory(Arc<dyn SessionStore>);
//!
//! impl StoreFixture for Memory {
//!     fn store(&self) -> &Arc<dyn SessionStore> {
//!         &self.0
//!     }
//!     async fn reopen(&self) -> Arc<dyn SessionStore> {
//!         Arc::clone(&self.0)
//!     }
//! }
//!
//! pollster::block_on(store::ordering(&Memory(Arc::new(MemoryStore::new()))));
//! ```
//!
//! The checks panic (they are test assertions) when the store breaks the
//! contract.

// Test assertions: a failed check is a panic with the store's error.
#![allow(clippy::unwrap_used)]

use std::future::Future;
use std::sync::Arc;

use serde_json::json;
use skills_agent::{
    Agent, Dispatch, ForkPoint, Message, NewSession, SessionEvent, SessionStore, SessionWriter,
    StoreErrorKind, ToolCall, Usage, read_lineage,
};
use skills_core::{InCodeProvider, define_skill};

/// A store under test: the handle the checks write through, and a way to
/// open the same store again (a new connection; for an in-memory store, the
/// same store).
pub trait StoreFixture {
    /// The store the checks write through.
    fn store(&self) -> &Arc<dyn SessionStore>;

    /// Opens the same store again, as a restarted process would.
    fn reopen(&self) -> impl Future<Output = Arc<dyn SessionStore>> + Send;
}

/// One `#[tokio::test]` per conformance check, for the store `$make` builds
/// (an expression giving a [`StoreFixture`]; it may use `.await`). Each test
/// builds its own fixture.
#[macro_export]
macro_rules! session_store_suite {
    ($make:expr) => {
        #[::tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn appends_are_read_back_in_order() {
            $crate::store::ordering(&$make).await;
        }
        #[::tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_stale_expected_seq_is_a_conflict_and_writes_nothing() {
            $crate::store::stale_append(&$make).await;
        }
        #[::tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn of_two_racing_writers_one_wins_and_one_conflicts() {
            $crate::store::racing_writers(&$make).await;
        }
        #[::tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_reopened_store_resumes_the_session() {
            $crate::store::resume(&$make).await;
        }
        #[::tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_fork_names_its_parent_and_fork_point() {
            $crate::store::fork(&$make).await;
        }
        #[::tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn messages_of_several_megabytes_round_trip() {
            $crate::store::large_messages(&$make).await;
        }
        #[::tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn fifty_sessions_written_concurrently_stay_apart() {
            $crate::store::concurrent_sessions(&$make).await;
        }
        #[::tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn bad_ids_missing_sessions_and_duplicates_are_typed_errors() {
            $crate::store::errors(&$make).await;
        }
    };
}

/// A user message event with `text`.
pub fn message(text: impl Into<String>) -> SessionEvent {
    SessionEvent::Message {
        message: Message::user(text),
    }
}

/// Creates the session `id` (agent `tester`) and checks that it starts empty.
pub async fn create(store: &dyn SessionStore, id: &str) {
    let info = store.create(&NewSession::new(id, "tester")).await.unwrap();
    assert_eq!(info.next_seq, 0);
    assert_eq!(info.agent, "tester");
}

/// Each event's text: a message's content, otherwise the event's type name.
pub fn texts(events: &[skills_agent::StoredEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| match &e.event {
            SessionEvent::Message { message } => message.content.clone(),
            other => other.type_name().to_owned(),
        })
        .collect()
}

/// Appends come back in order, numbered from 0, batches included; reads
/// from a sequence number return the tail.
pub async fn ordering(fixture: &impl StoreFixture) {
    let store = &**fixture.store();
    create(store, "s1").await;
    assert_eq!(store.append("s1", 0, &[message("a")]).await.unwrap(), 1);
    let batch = [
        message("b"),
        SessionEvent::Usage {
            usage: Usage::new(10, 2, 5, 0),
        },
        message("c"),
    ];
    assert_eq!(store.append("s1", 1, &batch).await.unwrap(), 4);
    assert_eq!(store.append("s1", 4, &[]).await.unwrap(), 4);
    let all = store.read("s1", 0).await.unwrap();
    assert_eq!(all.iter().map(|e| e.seq).collect::<Vec<_>>(), [0, 1, 2, 3]);
    assert_eq!(texts(&all), ["a", "b", "usage", "c"]);
    assert_eq!(all[2].event, batch[1]);
    let tail = store.read("s1", 2).await.unwrap();
    assert_eq!(texts(&tail), ["usage", "c"]);
    assert_eq!(tail[0].seq, 2);
    assert!(store.read("s1", 9).await.unwrap().is_empty());
    assert_eq!(store.info("s1").await.unwrap().next_seq, 4);
}

/// An append whose expected sequence number is not the log's end is a
/// [`StoreErrorKind::Conflict`] naming both numbers, and writes nothing.
pub async fn stale_append(fixture: &impl StoreFixture) {
    let store = &**fixture.store();
    create(store, "s1").await;
    store
        .append("s1", 0, &[message("a"), message("b")])
        .await
        .unwrap();
    for expected in [0, 1, 3, 100] {
        let err = store
            .append("s1", expected, &[message("late")])
            .await
            .unwrap_err();
        assert_eq!(err.kind(), StoreErrorKind::Conflict, "{err}");
        assert_eq!(err.expected_seq(), Some(expected));
        assert_eq!(err.actual_seq(), Some(2));
    }
    assert_eq!(texts(&store.read("s1", 0).await.unwrap()), ["a", "b"]);
}

/// Of two writers racing to append at the same sequence number, exactly one
/// wins each round and the other conflicts.
pub async fn racing_writers(fixture: &impl StoreFixture) {
    let store = Arc::clone(fixture.store());
    create(&*store, "race").await;
    let mut expected = 0;
    for round in 0..20 {
        let writers: Vec<_> = ["x", "y"]
            .into_iter()
            .map(|who| {
                let store = Arc::clone(&store);
                tokio::spawn(async move {
                    let batch = [
                        message(format!("{who}{round}a")),
                        message(format!("{who}{round}b")),
                    ];
                    (who, store.append("race", expected, &batch).await)
                })
            })
            .collect();
        let mut winners = Vec::new();
        for writer in writers {
            let (who, result) = writer.await.unwrap();
            match result {
                Ok(next) => {
                    assert_eq!(next, expected + 2);
                    winners.push(who);
                }
                Err(err) => {
                    assert_eq!(err.kind(), StoreErrorKind::Conflict, "{err}");
                    assert_eq!(err.actual_seq(), Some(expected + 2));
                }
            }
        }
        assert_eq!(winners.len(), 1, "round {round}: exactly one writer wins");
        let tail = store.read("race", expected).await.unwrap();
        let w = winners[0];
        assert_eq!(
            texts(&tail),
            [format!("{w}{round}a"), format!("{w}{round}b")]
        );
        expected += 2;
    }
    assert_eq!(store.info("race").await.unwrap().next_seq, 40);
}

fn agent() -> Agent {
    let pdf = define_skill("pdf-forms", "Fills PDF forms. Use for any PDF form.")
        .body("Read the fields first, then fill them.")
        .build()
        .unwrap();
    let csv = define_skill("csv-report", "Builds CSV reports.")
        .body("One row per record.")
        .build()
        .unwrap();
    let provider = Arc::new(InCodeProvider::new([pdf, csv]).unwrap());
    Agent::builder("assistant", provider)
        .instructions("You help with documents.")
        .build()
        .unwrap()
}

/// A session written through a [`SessionWriter`] resumes from the reopened
/// store ([`StoreFixture::reopen`]) with the same transcript, load state and
/// request; the writer left behind conflicts; a fork points at the parent's
/// end.
pub async fn resume(fixture: &impl StoreFixture) {
    let agent = agent();
    let mut session = agent.start_session().await.unwrap();
    session.set_id("resumed-1".parse().expect("a valid id"));
    session.push_user("please fill the form").await.unwrap();
    let mut writer = SessionWriter::create(Arc::clone(fixture.store()), &session, None)
        .await
        .unwrap();
    let call = ToolCall::new("c1", "load_skill", json!({"name": "pdf-forms"}));
    session.push_assistant(Message::assistant_with_calls("", vec![call.clone()]));
    assert!(matches!(
        session.handle_tool_call(&call).await,
        Dispatch::Handled(_)
    ));
    writer.save(&session).await.unwrap();
    writer
        .record_usage(Usage::new(100, 10, 0, 0))
        .await
        .unwrap();
    let before = session.build_request();

    let store = fixture.reopen().await;
    let (mut resumed, mut writer2) = agent
        .resume_stored(Arc::clone(&store), "resumed-1")
        .await
        .unwrap();
    assert_eq!(resumed.id(), "resumed-1");
    assert_eq!(resumed.transcript(), session.transcript());
    assert_eq!(resumed.loaded(), session.loaded());
    assert_eq!(resumed.build_request(), before);
    assert_eq!(writer2.next_seq(), writer.next_seq());

    resumed.push_assistant(Message::assistant("Filled."));
    let next = writer2.save(&resumed).await.unwrap();
    // The first writer is now behind: its next append conflicts.
    session.push_assistant(Message::assistant("Other."));
    let err = writer.save(&session).await.unwrap_err();
    assert_eq!(err.kind(), StoreErrorKind::Conflict);
    assert_eq!(err.actual_seq(), Some(next));
    let last = store.read("resumed-1", next - 1).await.unwrap();
    assert_eq!(texts(&last), ["Filled."]);

    // A sub-agent forked now: its log points at the parent's current end.
    let mut sub = agent.start_session().await.unwrap();
    sub.set_id("resumed-1.fork".parse().expect("a valid id"));
    let point = writer2.fork_point();
    let sub_writer = SessionWriter::create(Arc::clone(&store), &sub, Some(point.clone()))
        .await
        .unwrap();
    assert_eq!(
        store.info(sub_writer.id()).await.unwrap().parent,
        Some(point)
    );
    assert_eq!(
        read_lineage(&*store, "resumed-1.fork").await.unwrap().len() as u64,
        next + 1
    );
}

/// Forks name their parent and fork point; the lineage reads through them;
/// forks past the parent's end or of a missing parent are typed errors.
pub async fn fork(fixture: &impl StoreFixture) {
    let store = &**fixture.store();
    create(store, "parent").await;
    store
        .append(
            "parent",
            0,
            &[message("p0"), message("p1"), message("p2"), message("p3")],
        )
        .await
        .unwrap();
    let child = store
        .create(&NewSession::new("child", "sub").forked_from("parent", 2))
        .await
        .unwrap();
    let point = ForkPoint {
        session: "parent".into(),
        seq: 2,
    };
    assert_eq!(child.parent.as_ref(), Some(&point));
    assert_eq!(store.info("child").await.unwrap().parent, Some(point));
    store.append("child", 0, &[message("c0")]).await.unwrap();
    let grandchild = NewSession::new("grandchild", "sub").forked_from("child", 1);
    store.create(&grandchild).await.unwrap();
    store
        .append("grandchild", 0, &[message("g0")])
        .await
        .unwrap();
    let lineage: Vec<String> = read_lineage(store, "grandchild")
        .await
        .unwrap()
        .into_iter()
        .map(|e| match e {
            SessionEvent::Message { message } => message.content,
            other => other.type_name().to_owned(),
        })
        .collect();
    assert_eq!(lineage, ["p0", "p1", "c0", "g0"]);
    // The parent goes on untouched.
    assert_eq!(store.info("parent").await.unwrap().next_seq, 4);
    assert_eq!(store.info("parent").await.unwrap().parent, None);

    let past = store
        .create(&NewSession::new("late", "sub").forked_from("parent", 5))
        .await
        .unwrap_err();
    assert_eq!(past.kind(), StoreErrorKind::Invalid, "{past}");
    let orphan = store
        .create(&NewSession::new("orphan", "sub").forked_from("nobody", 0))
        .await
        .unwrap_err();
    assert_eq!(orphan.kind(), StoreErrorKind::NotFound, "{orphan}");
    assert_eq!(
        store.info("orphan").await.unwrap_err().kind(),
        StoreErrorKind::NotFound
    );
}

/// Messages of several megabytes, and JSON numbers, round-trip byte for
/// byte.
pub async fn large_messages(fixture: &impl StoreFixture) {
    let store = &**fixture.store();
    create(store, "big").await;
    // 6 MB of mixed text: ASCII, multi-byte characters, quotes, newlines
    // and control characters that JSON escapes.
    let unit = "Zeile ✓ \"quoted\" \\ tab\t nul\u{1} 😀\n";
    let big = unit.repeat(6 * 1024 * 1024 / unit.len());
    // Numbers a model may send, which must come back as the same bytes.
    let numbers = json!([
        0.1,
        0.30000000000000004,
        1e-7,
        123456.789e3,
        2.5e300,
        -0.0,
        17,
        u64::MAX,
        i64::MIN
    ]);
    let call = ToolCall::new(
        "c1",
        "write_file",
        json!({"content": big.clone(), "numbers": numbers}),
    );
    let events = [
        message(big.clone()),
        SessionEvent::Message {
            message: Message::assistant_with_calls("", vec![call]),
        },
    ];
    store.append("big", 0, &events).await.unwrap();
    let back = store.read("big", 0).await.unwrap();
    assert_eq!(back.len(), 2);
    assert_eq!(back[0].event, events[0]);
    assert_eq!(back[1].event, events[1]);
    for (back, sent) in back.iter().zip(&events) {
        assert_eq!(
            serde_json::to_string(&back.event).unwrap(),
            serde_json::to_string(sent).unwrap()
        );
    }
}

/// Fifty sessions written concurrently stay apart; `list` is sorted by id.
pub async fn concurrent_sessions(fixture: &impl StoreFixture) {
    const SESSIONS: usize = 50;
    const EVENTS: u64 = 20;
    let tasks: Vec<_> = (0..SESSIONS)
        .map(|n| {
            let store = Arc::clone(fixture.store());
            tokio::spawn(async move {
                let id = format!("c{n:02}");
                store.create(&NewSession::new(&id, "many")).await.unwrap();
                for seq in 0..EVENTS {
                    let next = store
                        .append(&id, seq, &[message(format!("{id}:{seq}"))])
                        .await
                        .unwrap();
                    assert_eq!(next, seq + 1);
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let listed = fixture.store().list().await.unwrap();
    let ids: Vec<&str> = listed.iter().map(|i| i.id.as_str()).collect();
    let expected: Vec<String> = (0..SESSIONS).map(|n| format!("c{n:02}")).collect();
    assert_eq!(ids, expected, "sorted by id");
    for info in &listed {
        assert_eq!(info.next_seq, EVENTS);
        let events = fixture.store().read(&info.id, 0).await.unwrap();
        let want: Vec<String> = (0..EVENTS).map(|s| format!("{}:{s}", info.id)).collect();
        assert_eq!(texts(&events), want);
    }
}

/// Bad ids, duplicates and missing sessions are typed errors; resuming an
/// empty log is [`StoreErrorKind::Corrupt`].
pub async fn errors(fixture: &impl StoreFixture) {
    let store = &**fixture.store();
    for bad in ["", "a/b", "with space", "../x", &"x".repeat(129)] {
        let err = store.create(&NewSession::new(bad, "a")).await.unwrap_err();
        assert_eq!(err.kind(), StoreErrorKind::Invalid, "{bad:?}: {err}");
    }
    create(store, "one").await;
    let dup = store
        .create(&NewSession::new("one", "a"))
        .await
        .unwrap_err();
    assert_eq!(dup.kind(), StoreErrorKind::AlreadyExists, "{dup}");
    for err in [
        store.append("none", 0, &[message("x")]).await.unwrap_err(),
        store.read("none", 0).await.unwrap_err(),
        store.info("none").await.unwrap_err(),
    ] {
        assert_eq!(err.kind(), StoreErrorKind::NotFound, "{err}");
    }
    let resumed = agent()
        .resume_stored(Arc::clone(fixture.store()), "one")
        .await
        .unwrap_err();
    assert_eq!(
        resumed.kind(),
        StoreErrorKind::Corrupt,
        "an empty log has no `started`"
    );
}

/// Appends through one handle are seen by another on the same database, and
/// a stale append through the second conflicts.
pub async fn two_handles(a: &Arc<dyn SessionStore>, b: &Arc<dyn SessionStore>) {
    create(&**a, "shared").await;
    a.append("shared", 0, &[message("from a")]).await.unwrap();
    assert_eq!(texts(&b.read("shared", 0).await.unwrap()), ["from a"]);
    b.append("shared", 1, &[message("from b")]).await.unwrap();
    let err = a
        .append("shared", 1, &[message("stale")])
        .await
        .unwrap_err();
    assert_eq!(err.kind(), StoreErrorKind::Conflict);
    assert_eq!(
        texts(&a.read("shared", 0).await.unwrap()),
        ["from a", "from b"]
    );
}
