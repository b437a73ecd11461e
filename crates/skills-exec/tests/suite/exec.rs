use std::time::Duration;

use skills_exec::{CommandPolicy, LocalRuntime};
use skills_workspace::{
    ExecRequest, ExecStatus, WorkspaceErrorKind, WorkspaceRuntime, WriteStdinRequest,
};

use crate::common::*;

async fn until_done(rt: &dyn WorkspaceRuntime, id: &str) -> (String, skills_workspace::ExecOutput) {
    let mut all = String::new();
    for _ in 0..100 {
        let out = rt.poll_exec(&sid("s"), id, Some(100)).await.unwrap();
        all.push_str(&out.output);
        if out.status != ExecStatus::Running {
            return (all, out);
        }
    }
    panic!("session did not end: {all}");
}

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
        let mut waiting = first.waiting_for_input;
        for _ in 0..20 {
            if waiting {
                break;
            }
            let p = rt
                .poll_exec(&sid("s"), &first.session_id, Some(300))
                .await
                .unwrap();
            seen.push_str(&p.output);
            waiting = p.waiting_for_input;
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
        let (rest, last) = until_done(&rt, &first.session_id).await;
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
    let (_, last) = until_done(&rt, &s.session_id).await;
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
