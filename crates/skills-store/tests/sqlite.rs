//! The conformance suite against [`skills_store::SqliteStore`].

use crate::fixture;

skills_testkit::session_store_suite!(fixture::sqlite().await);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_writer_process_leaves_the_log_readable() {
    crate::killed::killed_writer(&fixture::sqlite().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_handles_on_one_file_see_each_others_appends() {
    let fixture = fixture::sqlite().await;
    let other = fixture.reopen().await;
    skills_testkit::store::two_handles(&fixture.store, &other).await;
}
