//! Bounds the runtime keeps whatever a command or a request does (threat
//! model in docs/exec.md: H7, H8, H9), in both runtimes.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use skills_exec::WorkspaceLimits;
use skills_workspace::{
    ExecRequest, ExecStatus, InputSpec, OutputSpec, RunRequest, WorkspaceErrorKind,
    WorkspaceRuntime,
};

use crate::common::*;

/// The two runtimes with `limits`, their roots in `dir`.
fn runtimes(dir: &Path, limits: WorkspaceLimits) -> Vec<(&'static str, Arc<dyn WorkspaceRuntime>)> {
    both_runtimes(dir, |b| b.workspace_limits(limits))
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// The session folder of `session`.
async fn session_dir(rt: &dyn WorkspaceRuntime, session: &str) -> PathBuf {
    PathBuf::from(rt.create_workspace(&sid(session)).await.unwrap().root)
}

// threat model: H7
#[tokio::test(flavor = "multi_thread")]
async fn the_disk_cap_kills_writers_and_refuses_further_work() {
    let dir = tempfile::tempdir().unwrap();
    let limits = WorkspaceLimits::new().max_bytes(16 << 20).max_files(2_000);
    for (name, rt) in runtimes(dir.path(), limits) {
        let rt = rt.as_ref();
        let skill = generated_skill(dir.path(), "disk");
        // A burst: done before a measurement may see it (then the result
        // warns), or killed by one; either way the session then refuses.
        rt.stage_skill(&sid("burst"), &skill).await.unwrap();
        match rt
            .run(
                &sid("burst"),
                &RunRequest::new("disk", "head -c 32M /dev/zero > out/burst"),
            )
            .await
        {
            Ok(r) => assert!(
                r.warnings.iter().any(|w| w.contains("over its disk cap")),
                "{name}: {r:?}"
            ),
            Err(e) => assert_eq!(e.kind(), WorkspaceErrorKind::LimitExceeded, "{name}: {e}"),
        }
        let e = rt
            .run(&sid("burst"), &RunRequest::new("disk", "true"))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), WorkspaceErrorKind::LimitExceeded, "{name}: {e}");
        assert!(e.message().contains("H7"), "{e}");
        for e in [
            rt.stage_skill(&sid("burst"), &generated_skill(dir.path(), "other"))
                .await
                .unwrap_err(),
            rt.start_exec(&sid("burst"), &ExecRequest::new("disk", "true"))
                .await
                .unwrap_err(),
            rt.stage_inputs(&sid("burst"), &[InputSpec::new("workspace://out/burst")])
                .await
                .unwrap_err(),
        ] {
            assert_eq!(e.kind(), WorkspaceErrorKind::LimitExceeded, "{name}: {e}");
        }
        rt.cleanup(&sid("burst")).await.unwrap();
        // A steady writer is killed while it runs.
        rt.stage_skill(&sid("steady"), &skill).await.unwrap();
        let ws = session_dir(rt, "steady").await;
        let e = rt
            .run(
                &sid("steady"),
                &RunRequest::new(
                    "disk",
                    "for i in $(seq 1 400); do head -c 1M /dev/zero >> out/grow; sleep 0.01; done",
                )
                .timeout_secs(120),
            )
            .await
            .unwrap_err();
        assert_eq!(e.kind(), WorkspaceErrorKind::LimitExceeded, "{name}: {e}");
        assert!(e.message().contains("killed"), "{e}");
        let grown = size(&ws.join("out/grow"));
        assert!(
            (15 << 20..96 << 20).contains(&grown),
            "{name}: {grown} bytes"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(size(&ws.join("out/grow")), grown, "{name}: still writing");
        rt.cleanup(&sid("steady")).await.unwrap();
        // The same in an interactive session: killed, and it says why.
        rt.stage_skill(&sid("term"), &skill).await.unwrap();
        let started = rt
            .start_exec(
                &sid("term"),
                &ExecRequest::new(
                    "disk",
                    "while true; do head -c 1M /dev/zero >> out/t; sleep 0.01; done",
                )
                .tty(false)
                .yield_ms(10),
            )
            .await
            .unwrap();
        let mut seen = String::new();
        let mut last = None;
        for _ in 0..200 {
            let out = rt
                .poll_exec(&sid("term"), &started.session_id, Some(100))
                .await
                .unwrap();
            seen.push_str(&out.output);
            if out.status != ExecStatus::Running {
                last = Some(out.status);
                break;
            }
        }
        assert_eq!(last, Some(ExecStatus::Killed), "{name}: {seen}");
        assert!(seen.contains("disk cap"), "{name}: {seen}");
        rt.cleanup(&sid("term")).await.unwrap();
        // The file cap.
        rt.stage_skill(&sid("files"), &skill).await.unwrap();
        let r = rt
            .run(
                &sid("files"),
                &RunRequest::new(
                    "disk",
                    "mkdir -p out/many && cd out/many && seq 1 3000 | xargs touch",
                ),
            )
            .await;
        if let Ok(r) = &r {
            assert_eq!(r.exit_code, Some(0), "{name}: {r:?}");
        }
        let e = rt
            .run(&sid("files"), &RunRequest::new("disk", "true"))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), WorkspaceErrorKind::LimitExceeded, "{name}: {e}");
        rt.cleanup(&sid("files")).await.unwrap();
    }
}

// threat model: H7 (writing 2 GiB to out/ is not possible with the defaults)
#[tokio::test(flavor = "multi_thread")]
async fn two_gib_cannot_be_written_with_the_default_cap() {
    let dir = tempfile::tempdir().unwrap();
    for (name, rt) in runtimes(dir.path(), WorkspaceLimits::default()) {
        let rt = rt.as_ref();
        rt.stage_skill(&sid("s"), &generated_skill(dir.path(), "big"))
            .await
            .unwrap();
        let ws = session_dir(rt, "s").await;
        let outcome = rt
            .run(
                &sid("s"),
                &RunRequest::new(
                    "big",
                    "for i in $(seq 1 64); do head -c 32M /dev/zero >> out/big || exit 9; done; echo wrote-all",
                )
                .timeout_secs(600),
            )
            .await;
        // Either the watcher kills the run (an error), or the write stops at
        // the file-size limit set from what is left of the cap (S6) and the
        // run ends with the over-cap warning.
        match outcome {
            Err(e) => assert_eq!(e.kind(), WorkspaceErrorKind::LimitExceeded, "{name}: {e}"),
            Ok(r) => {
                assert_eq!(r.exit_code, Some(9), "{name}: {r:?}");
                assert!(!r.stdout.contains("wrote-all"), "{name}: {r:?}");
                assert!(
                    r.warnings.iter().any(|w| w.contains("disk cap")),
                    "{name}: {r:?}"
                );
            }
        }
        let written = size(&ws.join("out/big"));
        assert!(written < 2 << 30, "{name}: {written} bytes");
        rt.cleanup(&sid("s")).await.unwrap();
    }
}

// threat model: H8
#[tokio::test(flavor = "multi_thread")]
async fn output_caps_a_request_sets_are_clamped_to_the_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let limits = WorkspaceLimits::new().max_outputs(3, 1000, 2500);
    for (name, rt) in runtimes(dir.path(), limits) {
        let rt = rt.as_ref();
        rt.stage_skill(&sid("s"), &generated_skill(dir.path(), "outs"))
            .await
            .unwrap();
        let make = "for i in 1 2 3 4 5; do head -c 1500 /dev/zero | tr '\\0' a > out/f$i.txt; done";
        let r = run(
            rt,
            "s",
            RunRequest::new("outs", make).outputs(
                OutputSpec::new(["out/*.txt"])
                    .max_files(100)
                    .max_file_bytes(1 << 30)
                    .max_total_bytes(u64::MAX),
            ),
        )
        .await;
        assert!(r.output_files.len() <= 3, "{name}: {r:?}");
        let total: usize = r
            .output_files
            .iter()
            .map(|f| f.content.as_deref().map_or(0, str::len))
            .sum();
        assert!(total <= 2500, "{name}: {total}");
        assert!(
            r.output_files
                .iter()
                .all(|f| f.truncated && f.size_bytes == 1500)
        );
        for field in ["max_files", "max_file_bytes", "max_total_bytes"] {
            assert!(
                r.warnings
                    .iter()
                    .any(|w| w.contains(field) && w.contains("lowered")),
                "{name}: {field}: {:?}",
                r.warnings
            );
        }
        let f = rt
            .read_file(&sid("s"), "out/f1.txt", u64::MAX)
            .await
            .unwrap();
        assert_eq!(f.bytes.len(), 1000, "{name}");
        rt.cleanup(&sid("s")).await.unwrap();
    }
    // The defaults: a request asking for a whole 16 MiB file gets 4 MiB.
    for (name, rt) in runtimes(&dir.path().join("defaults"), WorkspaceLimits::default()) {
        let rt = rt.as_ref();
        rt.stage_skill(&sid("s"), &generated_skill(dir.path(), "huge"))
            .await
            .unwrap();
        let r = run(
            rt,
            "s",
            RunRequest::new("huge", "head -c 16M /dev/zero | tr '\\0' a > out/huge.txt")
                .outputs(OutputSpec::new(["out/huge.txt"]).max_file_bytes(1 << 30)),
        )
        .await;
        let huge = &r.output_files[0];
        assert_eq!(huge.size_bytes, 16 << 20, "{name}");
        assert_eq!(
            huge.content.as_deref().map(str::len),
            Some(skills_workspace::DEFAULT_MAX_FILE_BYTES as usize),
            "{name}"
        );
        rt.cleanup(&sid("s")).await.unwrap();
    }
}

// threat model: H9
#[tokio::test(flavor = "multi_thread")]
async fn interactive_sessions_are_capped_and_end_at_their_lifetime() {
    let dir = tempfile::tempdir().unwrap();
    let limits = WorkspaceLimits::new()
        .max_exec_sessions(2)
        .max_exec_sessions_total(3)
        .max_exec_lifetime(Duration::from_secs(2));
    for (name, rt) in runtimes(dir.path(), limits) {
        let rt = rt.as_ref();
        let skill = generated_skill(dir.path(), "terms");
        rt.stage_skill(&sid("s"), &skill).await.unwrap();
        rt.stage_skill(&sid("t"), &skill).await.unwrap();
        let start = |session: &'static str, secs: u32| async move {
            rt.start_exec(
                &sid(session),
                &ExecRequest::new("terms", format!("sleep 476{secs:02}"))
                    .timeout_secs(3600)
                    .yield_ms(10),
            )
            .await
        };
        let a = start("s", 1).await.unwrap();
        let b = start("s", 2).await.unwrap();
        let e = start("s", 3).await.unwrap_err();
        assert_eq!(e.kind(), WorkspaceErrorKind::LimitExceeded, "{name}: {e}");
        rt.kill_exec(&sid("s"), &a.session_id).await.unwrap();
        let _c = start("s", 4).await.unwrap();
        // The runtime's total: two in `s`, one in `t`, then no more.
        let _d = start("t", 5).await.unwrap();
        let e = start("t", 6).await.unwrap_err();
        assert_eq!(e.kind(), WorkspaceErrorKind::LimitExceeded, "{name}: {e}");
        assert!(e.message().contains("runtime"), "{e}");
        // Asked for an hour, ended at the runtime's two seconds.
        let mut status = ExecStatus::Running;
        for _ in 0..100 {
            status = rt
                .poll_exec(&sid("s"), &b.session_id, Some(100))
                .await
                .unwrap()
                .status;
            if status != ExecStatus::Running {
                break;
            }
        }
        assert_eq!(status, ExecStatus::TimedOut, "{name}");
        // Ended sessions give their places back.
        for session in ["s", "t"] {
            rt.cleanup(&sid(session)).await.unwrap();
        }
        rt.stage_skill(&sid("s"), &skill).await.unwrap();
        for i in 7..9 {
            start("s", i).await.unwrap();
        }
        rt.cleanup(&sid("s")).await.unwrap();
    }
}
