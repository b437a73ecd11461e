use std::time::Duration;

use skills_exec::{CommandPolicy, LocalRuntime};
use skills_workspace::{
    ExecRequest, ExecStatus, WorkspaceErrorKind, WorkspaceRuntime, WriteStdinRequest,
};

use crate::common::*;

#[tokio::test(flavor = "multi_thread")]
async fn interactive_sessions_on_a_terminal_and_on_pipes() {
    let dir = tempfile::tempdir().unwrap();
    let rt = LocalRuntime::builder(dir.path().join("ws"))
        .policy(CommandPolicy::unrestricted())
        .build()
        .unwrap();
    rt.stage_skill(&sid("s"), &generated_skill(dir.path(), "ia"))
        .await
        .unwrap();
    for tty in [true, false] {
        let cmd =
            "if [ -t 0 ]; then echo tty; else echo pipe; fi; read -p 'Name: ' n; echo \"hello $n\"";
        let first = rt
            .start_exec(
                &sid("s"),
                &ExecRequest::new("ia", cmd).tty(tty).yield_ms(500),
            )
            .await
            .unwrap();
        assert_eq!(first.status, ExecStatus::Running, "{first:?}");
        let mut seen = first.output.clone();
        let mut waiting = first.waiting_for_input();
        for _ in 0..20 {
            if waiting {
                break;
            }
            let p = rt
                .poll_exec(&sid("s"), &first.session_id, Some(300))
                .await
                .unwrap();
            seen.push_str(&p.output);
            waiting = p.waiting_for_input();
        }
        assert!(seen.contains(if tty { "tty" } else { "pipe" }), "{seen:?}");
        if tty {
            // `read -p` prints its prompt only on a terminal.
            assert!(waiting, "no waiting hint: {seen:?}");
        }
        let out = rt
            .write_stdin(
                &sid("s"),
                &WriteStdinRequest::new(&first.session_id, "bob")
                    .submit(true)
                    .yield_ms(500),
            )
            .await
            .unwrap();
        let (rest, last) = finish(&rt, "s", &first.session_id).await;
        let text = format!("{}{rest}", out.output);
        assert!(text.contains("hello bob"), "{text:?}");
        assert_eq!(last.status, ExecStatus::Exited);
        assert_eq!(last.exit_code, Some(0));
    }
    // Kill ends the whole tree.
    let s = rt
        .start_exec(
            &sid("s"),
            &ExecRequest::new("ia", "setsid sleep 47331 & sleep 47332").yield_ms(100),
        )
        .await
        .unwrap();
    let killed = rt.kill_exec(&sid("s"), &s.session_id).await.unwrap();
    assert_eq!(killed.status, ExecStatus::Killed);
    assert_eq!(
        left_after("sleep 4733", Duration::from_millis(500)).await,
        Vec::<String>::new()
    );
    // Timeout.
    let s = rt
        .start_exec(
            &sid("s"),
            &ExecRequest::new("ia", "sleep 47341")
                .timeout_secs(1)
                .yield_ms(10),
        )
        .await
        .unwrap();
    let (_, last) = finish(&rt, "s", &s.session_id).await;
    assert_eq!(last.status, ExecStatus::TimedOut);
    // Cleanup kills sessions.
    let s = rt
        .start_exec(
            &sid("s"),
            &ExecRequest::new("ia", "sleep 47351").yield_ms(10),
        )
        .await
        .unwrap();
    let report = rt.cleanup(&sid("s")).await.unwrap();
    assert_eq!(report.killed_sessions, 1);
    assert_eq!(
        left_after("sleep 4735", Duration::from_millis(500)).await,
        Vec::<String>::new()
    );
    let e = rt
        .poll_exec(&sid("s"), &s.session_id, None)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), WorkspaceErrorKind::NotFound);
}

/// Polls `id` of session `session` until it ends; every answer's output.
async fn finish(
    rt: &dyn WorkspaceRuntime,
    session: &str,
    id: &str,
) -> (String, skills_workspace::ExecOutput) {
    let mut all = String::new();
    for _ in 0..100 {
        let out = rt.poll_exec(&sid(session), id, Some(100)).await.unwrap();
        all.push_str(&out.output);
        if out.status != ExecStatus::Running {
            return (all, out);
        }
        assert!(out.result.is_none(), "a result while running: {out:?}");
    }
    panic!("session did not end: {all}");
}

/// Polls until the command seems to wait; that answer.
async fn until_waiting(
    rt: &dyn WorkspaceRuntime,
    session: &str,
    first: skills_workspace::ExecOutput,
) -> (String, skills_workspace::ExecOutput) {
    let mut seen = first.output.clone();
    let mut last = first;
    for _ in 0..50 {
        if last.interaction.is_some() || last.status != ExecStatus::Running {
            break;
        }
        last = rt
            .poll_exec(&sid(session), &last.session_id, Some(300))
            .await
            .unwrap();
        seen.push_str(&last.output);
    }
    (seen, last)
}

/// trpc's skill_exec: stdin typed at the start, the interaction hint of a
/// numbered menu, then the final result with the collected file, saved as
/// an artifact under its prefix, content left out, on a real PTY.
#[tokio::test(flavor = "multi_thread")]
async fn exec_session_ends_with_a_run_result() {
    use skills_exec::{ArtifactService, InMemoryArtifacts};
    use skills_workspace::{InteractionKind, OutputSpec};
    let dir = tempfile::tempdir().unwrap();
    let artifacts = std::sync::Arc::new(InMemoryArtifacts::new());
    let rt = LocalRuntime::builder(dir.path().join("ws"))
        .policy(CommandPolicy::unrestricted())
        .artifacts(artifacts.clone())
        .build()
        .unwrap();
    rt.stage_skill(&sid("r"), &generated_skill(dir.path(), "menu"))
        .await
        .unwrap();
    // The first line comes from `stdin`; then a menu on the terminal.
    let cmd = "read -r name; [ -t 0 ] && echo on-a-tty; \
               printf 'Formats:\\n  1) csv\\n  2) json\\n'; read -r -p 'Choose: ' n; \
               echo \"$name chose $n\" > out/choice.txt; echo finished";
    let first = rt
        .start_exec(
            &sid("r"),
            &ExecRequest::new("menu", cmd)
                .stdin("ann\n")
                .outputs(OutputSpec::new(["out/*.txt"]).save(true))
                .artifact_prefix("exec/")
                .omit_inline_content(true)
                .yield_ms(500),
        )
        .await
        .unwrap();
    assert!(first.result.is_none(), "{first:?}");
    let (seen, waiting) = until_waiting(&rt, "r", first).await;
    assert!(seen.contains("on-a-tty"), "{seen:?}");
    let hint = waiting
        .interaction
        .clone()
        .unwrap_or_else(|| panic!("no interaction hint: {waiting:?} after {seen:?}"));
    assert_eq!(hint.kind, InteractionKind::Choice, "{hint:?}");
    assert_eq!(hint.prompt, "Choose:");
    assert_eq!(hint.options, ["1) csv", "2) json"]);
    let json = serde_json::to_value(&waiting).unwrap();
    assert_eq!(json["interaction"]["waiting"], true, "{json}");
    assert_eq!(json["interaction"]["kind"], "choice", "{json}");
    rt.write_stdin(
        &sid("r"),
        &WriteStdinRequest::new(&waiting.session_id, "2").submit(true),
    )
    .await
    .unwrap();
    let (_, last) = finish(&rt, "r", &waiting.session_id).await;
    assert_eq!(last.status, ExecStatus::Exited);
    assert!(last.interaction.is_none());
    let result = last
        .result
        .clone()
        .unwrap_or_else(|| panic!("no result: {last:?}"));
    assert_eq!(result.exit_code, Some(0));
    assert!(result.stdout.contains("on-a-tty"), "{result:?}");
    assert!(result.stdout.contains("finished"), "{result:?}");
    assert!(result.run_dir.starts_with("runs/"), "{result:?}");
    assert_eq!(result.output_files.len(), 1, "{result:?}");
    assert_eq!(result.output_files[0].name, "out/choice.txt");
    assert_eq!(result.output_files[0].content, None);
    assert_eq!(result.artifact_files.len(), 1, "{result:?}");
    assert_eq!(result.artifact_files[0].name, "exec/choice.txt");
    let saved = artifacts.load("r", "exec/choice.txt", None).await.unwrap();
    assert_eq!(saved.bytes, b"ann chose 2\n");
    // Asked again: the same result, saved once.
    let again = rt
        .poll_exec(&sid("r"), &last.session_id, Some(0))
        .await
        .unwrap();
    assert_eq!(again.result, last.result);
    assert_eq!(
        artifacts.versions("r", "exec/choice.txt").await.unwrap(),
        [1]
    );
    let json = serde_json::to_value(&again).unwrap();
    assert_eq!(json["result"]["artifact_files"][0]["version"], 1, "{json}");
}

/// `editor_text` and inline outputs of an exec session; a killed session
/// still answers with a result; bad output globs are refused before the
/// command starts.
#[tokio::test(flavor = "multi_thread")]
async fn exec_session_editor_text_and_killed_result() {
    let dir = tempfile::tempdir().unwrap();
    let rt = LocalRuntime::builder(dir.path().join("ws"))
        .policy(CommandPolicy::unrestricted())
        .build()
        .unwrap();
    rt.stage_skill(&sid("e"), &generated_skill(dir.path(), "ed"))
        .await
        .unwrap();
    let first = rt
        .start_exec(
            &sid("e"),
            &ExecRequest::new("ed", "$EDITOR out/msg.txt && cat out/msg.txt")
                .editor_text("from the editor\n")
                .output_file("out/msg.txt")
                .yield_ms(200),
        )
        .await
        .unwrap();
    let (_, last) = finish(&rt, "e", &first.session_id).await;
    let result = last.result.unwrap_or_else(|| panic!("no result"));
    assert_eq!(result.exit_code, Some(0), "{result:?}");
    assert_eq!(
        result.output_files[0].content.as_deref(),
        Some("from the editor\n")
    );
    assert_eq!(
        result.primary_output.map(|p| p.name).as_deref(),
        Some("out/msg.txt")
    );
    // Killed: the result comes with the kill's answer.
    let s = rt
        .start_exec(
            &sid("e"),
            &ExecRequest::new("ed", "echo partial > out/p.txt; sleep 47361")
                .output_file("out/p.txt")
                .yield_ms(300),
        )
        .await
        .unwrap();
    let killed = rt.kill_exec(&sid("e"), &s.session_id).await.unwrap();
    assert_eq!(killed.status, ExecStatus::Killed);
    let result = killed.result.unwrap_or_else(|| panic!("no result"));
    assert_eq!(result.output_files[0].content.as_deref(), Some("partial\n"));
    // A glob leaving the workspace: refused, nothing started.
    let e = rt
        .start_exec(
            &sid("e"),
            &ExecRequest::new("ed", "touch out/never").output_file("../*"),
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind(), WorkspaceErrorKind::PathEscape);
}

/// An exec's `stdin` is typed beside the first answer: a program that
/// never reads it (1 MiB, far more than a pipe holds) still gets a running
/// session back, and one that ended before reading gets its session and
/// result, not an error.
#[tokio::test(flavor = "multi_thread")]
async fn exec_stdin_never_holds_the_first_answer() {
    let dir = tempfile::tempdir().unwrap();
    let rt = LocalRuntime::builder(dir.path().join("ws"))
        .policy(CommandPolicy::unrestricted())
        .build()
        .unwrap();
    rt.stage_skill(&sid("i"), &generated_skill(dir.path(), "in"))
        .await
        .unwrap();
    let big = "x".repeat(1 << 20);
    let first = rt
        .start_exec(
            &sid("i"),
            &ExecRequest::new("in", "sleep 30")
                .tty(false)
                .stdin(big)
                .timeout_secs(20)
                .yield_ms(100),
        )
        .await
        .unwrap();
    assert_eq!(first.status, ExecStatus::Running, "{first:?}");
    rt.kill_exec(&sid("i"), &first.session_id).await.unwrap();
    let quick = rt
        .start_exec(
            &sid("i"),
            &ExecRequest::new("in", "true")
                .tty(false)
                .stdin("unread")
                .yield_ms(300),
        )
        .await
        .unwrap();
    let (_, last) = finish(&rt, "i", &quick.session_id).await;
    assert_eq!(last.result.map(|r| r.exit_code), Some(Some(0)));
}
