//! Saved outputs (F-EXE-6) through real runs into the filesystem artifact
//! store: the `outputs` manifest (`save`, `name_template`), the request's
//! `artifact_prefix`, versions growing run after run, and forced saving
//! ([`RuntimeBuilder::force_save_artifacts`](skills_exec::RuntimeBuilder::force_save_artifacts)).

use std::path::Path;
use std::sync::Arc;

use skills_exec::{ArtifactService, CommandPolicy, FsArtifacts, LocalRuntime};
use skills_workspace::{OutputSpec, RunRequest, WorkspaceRuntime};

use crate::common::{generated_skill, run, sid};

/// A local runtime saving into `store`, forcing saves when `force`.
fn runtime(dir: &Path, store: &Path, force: bool) -> LocalRuntime {
    LocalRuntime::builder(dir.join("ws"))
        .policy(CommandPolicy::unrestricted())
        .artifacts(Arc::new(FsArtifacts::new(store)))
        .force_save_artifacts(force)
        .build()
        .unwrap()
}

/// The versions stored for `name` in session `session` (the store's
/// folder layout: `<root>/<session>/<percent-encoded name>/<version>`).
fn stored_versions(store: &Path, session: &str, encoded: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(store.join(session).join(encoded))
        .unwrap_or_else(|e| panic!("no folder for {encoded}: {e}"))
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

#[tokio::test(flavor = "multi_thread")]
async fn manifest_save_writes_versions_into_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("artifacts");
    let rt = runtime(dir.path(), &store, false);
    rt.stage_skill(&sid("s"), &generated_skill(dir.path(), "saver"))
        .await
        .unwrap();
    let request = |text: &str| {
        RunRequest::new(
            "saver",
            format!(
                "mkdir -p out/sub && echo {text} > out/sub/report.txt && echo skip > out/x.log"
            ),
        )
        .outputs(
            OutputSpec::new(["out/sub/*.txt"])
                .save(true)
                .name_template("reports/"),
        )
        .artifact_prefix("p-")
    };
    let first = run(&rt, "s", request("one")).await;
    assert!(first.warnings.is_empty(), "{first:?}");
    assert_eq!(first.artifact_files.len(), 1, "{first:?}");
    let saved = &first.artifact_files[0];
    assert_eq!(saved.name, "p-reports/sub/report.txt");
    assert_eq!(saved.version, 1);
    assert_eq!(saved.source, "out/sub/report.txt");
    assert_eq!(saved.size_bytes, 4);
    let second = run(&rt, "s", request("two")).await;
    assert_eq!(second.artifact_files[0].version, 2, "{second:?}");
    // On disk: one folder for the name, a file and its MIME type per version.
    let encoded = "p-reports%2Fsub%2Freport%2Etxt";
    assert_eq!(
        stored_versions(&store, "s", encoded),
        ["1", "1.mime", "2", "2.mime"]
    );
    assert_eq!(
        std::fs::read_to_string(store.join("s").join(encoded).join("1")).unwrap(),
        "one\n"
    );
    assert_eq!(
        std::fs::read_to_string(store.join("s").join(encoded).join("2.mime")).unwrap(),
        "text/plain"
    );
    // The log was not collected, so not saved.
    let names: Vec<_> = std::fs::read_dir(store.join("s"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, [encoded]);
    // A fresh service on the same folder reads what the runs saved.
    let again = FsArtifacts::new(&store);
    let latest = again
        .load("s", "p-reports/sub/report.txt", None)
        .await
        .unwrap();
    assert_eq!((latest.version, latest.bytes), (2, b"two\n".to_vec()));
}

#[tokio::test(flavor = "multi_thread")]
async fn forced_save_persists_outputs_the_request_did_not_ask_to_save() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("artifacts");
    let forced = runtime(dir.path(), &store, true);
    forced
        .stage_skill(&sid("f"), &generated_skill(dir.path(), "forced"))
        .await
        .unwrap();
    let request = RunRequest::new("forced", "echo data > out/a.txt; echo more > out/b.txt")
        .output_file("out/*.txt");
    assert!(!request.io.save_as_artifacts);
    let r = run(&forced, "f", request.clone()).await;
    let mut names: Vec<_> = r.artifact_files.iter().map(|a| a.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["a.txt", "b.txt"], "{r:?}");
    assert!(r.warnings.is_empty(), "{r:?}");
    assert_eq!(stored_versions(&store, "f", "a%2Etxt"), ["1", "1.mime"]);
    // Without forcing, the same request saves nothing.
    let plain_store = dir.path().join("plain");
    let dir2 = tempfile::tempdir().unwrap();
    let plain = runtime(dir2.path(), &plain_store, false);
    plain
        .stage_skill(&sid("f"), &generated_skill(dir2.path(), "forced"))
        .await
        .unwrap();
    let r = run(&plain, "f", request).await;
    assert!(r.artifact_files.is_empty(), "{r:?}");
    assert!(!plain_store.exists());
    // Forced without a service: nothing saved, one warning.
    let none = LocalRuntime::builder(dir2.path().join("ws2"))
        .policy(CommandPolicy::unrestricted())
        .force_save_artifacts(true)
        .build()
        .unwrap();
    none.stage_skill(&sid("n"), &generated_skill(dir2.path(), "none"))
        .await
        .unwrap();
    let r = run(
        &none,
        "n",
        RunRequest::new("none", "echo x > out/a.txt").output_file("out/*"),
    )
    .await;
    assert!(r.artifact_files.is_empty());
    assert!(
        r.warnings.iter().any(|w| w.contains("no artifact service")),
        "{r:?}"
    );
}
