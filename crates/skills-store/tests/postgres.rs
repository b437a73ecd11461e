//! The conformance suite against [`skills_store::PostgresStore`] (needs
//! `SKILLS_TEST_POSTGRES_URL`).

use crate::conformance;
use crate::fixture;

skills_testkit::session_store_suite!(fixture::postgres().await);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_writer_process_leaves_the_log_readable() {
    crate::killed::killed_writer(&fixture::postgres().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_one_database_see_each_others_appends() {
    let fixture = fixture::postgres().await;
    let other = fixture.reopen().await;
    skills_testkit::store::two_handles(&fixture.store, &other).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_terminated_mid_transaction_writes_nothing() {
    let fixture = fixture::postgres().await;
    let crate::fixture::Location::Postgres { url, schema } = &fixture.location else {
        unreachable!("a PostgreSQL fixture")
    };
    conformance::terminated_transaction(&fixture.store, url, schema).await;
}
