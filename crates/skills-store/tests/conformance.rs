//! Checks of the stores in this crate beyond the shared conformance suite
//! (`skills_testkit::store`, which [`skills_testkit::session_store_suite!`]
//! runs): an aborted writer, and a PostgreSQL transaction whose connection
//! dies.

use std::sync::Arc;

use skills_agent::{SessionEvent, SessionStore};
use skills_testkit::store::{StoreFixture, create, message, texts};

use crate::fixture::Fixture;

impl StoreFixture for Fixture {
    fn store(&self) -> &Arc<dyn SessionStore> {
        &self.store
    }

    async fn reopen(&self) -> Arc<dyn SessionStore> {
        Fixture::reopen(self).await
    }
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
