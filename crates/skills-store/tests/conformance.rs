//! The contract of [`SessionStore`], as functions any store's tests call.
//! [`suite!`] turns them into one `#[tokio::test]` each.

use std::sync::Arc;

use serde_json::json;
use skills_agent::{
    Agent, Dispatch, ForkPoint, Message, NewSession, SessionEvent, SessionStore, SessionWriter,
    StoreErrorKind, ToolCall, Usage, read_lineage,
};
use skills_core::{InCodeProvider, define_skill};

use crate::fixture::Fixture;

/// One test per conformance check, for the store `$make` builds (an
/// expression giving a [`Fixture`], may use `.await`).
macro_rules! suite {
    ($make:expr) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn appends_are_read_back_in_order() {
            $crate::conformance::ordering(&$make).await;
        }
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_stale_expected_seq_is_a_conflict_and_writes_nothing() {
            $crate::conformance::stale_append(&$make).await;
        }
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn of_two_racing_writers_one_wins_and_one_conflicts() {
            $crate::conformance::racing_writers(&$make).await;
        }
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_reopened_store_resumes_the_session() {
            $crate::conformance::resume(&$make).await;
        }
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_fork_names_its_parent_and_fork_point() {
            $crate::conformance::fork(&$make).await;
        }
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn messages_of_several_megabytes_round_trip() {
            $crate::conformance::large_messages(&$make).await;
        }
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn fifty_sessions_written_concurrently_stay_apart() {
            $crate::conformance::concurrent_sessions(&$make).await;
        }
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn bad_ids_missing_sessions_and_duplicates_are_typed_errors() {
            $crate::conformance::errors(&$make).await;
        }
    };
}
pub(crate) use suite;

pub(crate) fn message(text: impl Into<String>) -> SessionEvent {
    SessionEvent::Message {
        message: Message::user(text),
    }
}

async fn create(store: &dyn SessionStore, id: &str) {
    let info = store.create(&NewSession::new(id, "tester")).await.unwrap();
    assert_eq!(info.next_seq, 0);
    assert_eq!(info.agent, "tester");
}

fn texts(events: &[skills_agent::StoredEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| match &e.event {
            SessionEvent::Message { message } => message.content.clone(),
            other => other.type_name().to_owned(),
        })
        .collect()
}

pub(crate) async fn ordering(fixture: &Fixture) {
    let store = &*fixture.store;
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

pub(crate) async fn stale_append(fixture: &Fixture) {
    let store = &*fixture.store;
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

pub(crate) async fn racing_writers(fixture: &Fixture) {
    let store = Arc::clone(&fixture.store);
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

pub(crate) async fn resume(fixture: &Fixture) {
    let agent = agent();
    let mut session = agent.start_session().await.unwrap();
    session.set_id("resumed-1".parse().expect("a valid id"));
    session.push_user("please fill the form").await.unwrap();
    let mut writer = SessionWriter::create(Arc::clone(&fixture.store), &session, None)
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

pub(crate) async fn fork(fixture: &Fixture) {
    let store = &*fixture.store;
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

pub(crate) async fn large_messages(fixture: &Fixture) {
    let store = &*fixture.store;
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

pub(crate) async fn concurrent_sessions(fixture: &Fixture) {
    const SESSIONS: usize = 50;
    const EVENTS: u64 = 20;
    let tasks: Vec<_> = (0..SESSIONS)
        .map(|n| {
            let store = Arc::clone(&fixture.store);
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
    let listed = fixture.store.list().await.unwrap();
    let ids: Vec<&str> = listed.iter().map(|i| i.id.as_str()).collect();
    let expected: Vec<String> = (0..SESSIONS).map(|n| format!("c{n:02}")).collect();
    assert_eq!(ids, expected, "sorted by id");
    for info in &listed {
        assert_eq!(info.next_seq, EVENTS);
        let events = fixture.store.read(&info.id, 0).await.unwrap();
        let want: Vec<String> = (0..EVENTS).map(|s| format!("{}:{s}", info.id)).collect();
        assert_eq!(texts(&events), want);
    }
}

pub(crate) async fn errors(fixture: &Fixture) {
    let store = &*fixture.store;
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
        .resume_stored(Arc::clone(&fixture.store), "one")
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
pub(crate) async fn two_handles(a: &Arc<dyn SessionStore>, b: &Arc<dyn SessionStore>) {
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

/// A writer task aborted at an arbitrary point of its loop of appends.
pub(crate) async fn aborted_writer(fixture: &Fixture) {
    create(&*fixture.store, "w").await;
    let store = Arc::clone(&fixture.store);
    let writer = tokio::spawn(async move {
        let mut seq = 0;
        loop {
            let batch: Vec<SessionEvent> = (0..crate::killed::BATCH)
                .map(|i| message(format!("{seq}.{i}")))
                .collect();
            seq = store.append("w", seq, &batch).await.unwrap();
            tokio::task::yield_now().await;
        }
    });
    while fixture.store.info("w").await.unwrap().next_seq < 10 * crate::killed::BATCH as u64 {
        tokio::task::yield_now().await;
    }
    writer.abort();
    assert!(writer.await.unwrap_err().is_cancelled());
    crate::killed::check_log(&fixture.store, "w").await;
}

/// A transaction holding the session's row lock and a half-written append,
/// whose connection the server terminates: nothing of it is visible, and
/// the next append goes through.
pub(crate) async fn terminated_transaction(store: &Arc<dyn SessionStore>, url: &str, schema: &str) {
    create(&**store, "t").await;
    store.append("t", 0, &[message("kept")]).await.unwrap();
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let driver = tokio::spawn(connection);
    client.batch_execute("BEGIN").await.unwrap();
    client
        .execute(
            &format!("SELECT next_seq FROM \"{schema}\".skills_sessions WHERE id = 't' FOR UPDATE"),
            &[],
        )
        .await
        .unwrap();
    client
        .execute(
            &format!(
                "INSERT INTO \"{schema}\".skills_events (session_id, seq, kind, body) \
                 VALUES ('t', 1, 'message', '{{\"type\":\"message\"')"
            ),
            &[],
        )
        .await
        .unwrap();
    let pid: i32 = client
        .query_one("SELECT pg_backend_pid()", &[])
        .await
        .unwrap()
        .get(0);
    let (killer, killer_connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(killer_connection);
    let killed: bool = killer
        .query_one("SELECT pg_terminate_backend($1)", &[&pid])
        .await
        .unwrap()
        .get(0);
    assert!(killed);
    let _ = driver.await;
    assert!(client.is_closed());
    assert_eq!(texts(&store.read("t", 0).await.unwrap()), ["kept"]);
    assert_eq!(store.append("t", 1, &[message("next")]).await.unwrap(), 2);
    assert_eq!(texts(&store.read("t", 0).await.unwrap()), ["kept", "next"]);
}
