//! The conformance suite against [`skills_agent::MemoryStore`].

use crate::conformance;
use crate::fixture;

skills_testkit::session_store_suite!(fixture::memory());

/// The memory store's "killed writer": a writer task aborted at an arbitrary
/// point of its append loop (a process kill takes the store with it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aborted_writer_leaves_the_log_readable() {
    conformance::aborted_writer(&fixture::memory()).await;
}
