//! The `WorkspaceRuntime` conformance suite of `skills-testkit` against the
//! local and the sandbox runtime.

use skills_testkit::runtime;

use crate::common::both_runtimes;

#[tokio::test(flavor = "multi_thread")]
async fn both_runtimes_meet_the_runtime_contract() {
    let dir = tempfile::tempdir().unwrap();
    let source = runtime::skill(&dir.path().join("skills")).unwrap();
    for (name, rt) in both_runtimes(&dir.path().join("workspaces"), |b| b) {
        eprintln!("conformance: {name}");
        runtime::check_all(rt.as_ref(), &source).await;
    }
}
