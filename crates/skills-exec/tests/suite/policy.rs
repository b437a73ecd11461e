use skills_core::{RunRequest, WorkspaceErrorKind, WorkspaceRuntime};
use skills_exec::{CommandPolicy, LocalRuntime};

use crate::common::*;

#[tokio::test(flavor = "multi_thread")]
async fn policy_mode_refuses_shell_and_risky_env() {
    let dir = tempfile::tempdir().unwrap();
    let rt = LocalRuntime::builder(dir.path().join("ws"))
        .policy(CommandPolicy::unrestricted().allow(["echo", "cat", "env"]))
        .build()
        .unwrap();
    rt.stage_skill("s", &generated_skill(dir.path(), "pol"))
        .await
        .unwrap();
    // Allowed, without a shell: quotes are words, nothing expands.
    let r = rt
        .run("s", &RunRequest::new("pol", "echo 'a  b' \"c\""))
        .await
        .unwrap();
    assert_eq!(r.stdout, "a  b c\n");
    for bad in [
        "PATH=./bin echo hi",
        "LD_PRELOAD=/tmp/x.so echo hi",
        "echo a; id",
        "echo a | cat",
        "echo $(id)",
        "echo `id`",
        "echo a\nid",
        "echo a && id",
        "id",
        "./scripts/hello.sh",
        "bash -c id",
    ] {
        let e = rt.run("s", &RunRequest::new("pol", bad)).await.unwrap_err();
        assert_eq!(e.kind(), WorkspaceErrorKind::PolicyDenied, "{bad:?}: {e}");
    }
    // A fake `echo` in the skill does not pass for the allowed one.
    let unrestricted = LocalRuntime::builder(dir.path().join("ws"))
        .policy(CommandPolicy::unrestricted())
        .build()
        .unwrap();
    unrestricted
        .stage_skill("s", &generated_skill(dir.path(), "pol"))
        .await
        .unwrap();
    unrestricted
        .run("s", &RunRequest::new("pol", "mkdir -p $WORK_DIR/bin && printf '#!/bin/sh\\necho pwned\\n' > $WORK_DIR/bin/echo && chmod +x $WORK_DIR/bin/echo"))
        .await
        .unwrap();
    for bad in ["../../work/bin/echo hi", "work/bin/echo hi"] {
        let e = rt.run("s", &RunRequest::new("pol", bad)).await.unwrap_err();
        assert_eq!(e.kind(), WorkspaceErrorKind::PolicyDenied, "{bad}");
    }
    // Model-supplied risky variables are dropped (with a warning), PATH too.
    let r = rt
        .run(
            "s",
            &RunRequest::new("pol", "env")
                .env("PATH", "./bin")
                .env("LD_PRELOAD", "/tmp/x.so")
                .env("BASH_ENV", "/tmp/x")
                .env("IFS", "x")
                .env("SAFE", "yes"),
        )
        .await
        .unwrap();
    assert!(!r.stdout.contains("LD_PRELOAD"), "{}", r.stdout);
    assert!(!r.stdout.contains("BASH_ENV"));
    assert!(!r.stdout.contains("PATH=./bin"));
    assert!(r.stdout.contains("SAFE=yes"));
    assert_eq!(
        r.warnings
            .iter()
            .filter(|w| w.contains("command policy"))
            .count(),
        4,
        "{:?}",
        r.warnings
    );
    // The deny list.
    let deny = LocalRuntime::builder(dir.path().join("ws3"))
        .policy(CommandPolicy::unrestricted().deny(["rm"]))
        .build()
        .unwrap();
    deny.stage_skill("s", &generated_skill(dir.path(), "pol"))
        .await
        .unwrap();
    for bad in ["rm -rf .", "/bin/rm x", "/usr/bin/rm x"] {
        let e = deny
            .run("s", &RunRequest::new("pol", bad))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), WorkspaceErrorKind::PolicyDenied, "{bad}");
    }
    assert_eq!(
        deny.run("s", &RunRequest::new("pol", "echo ok"))
            .await
            .unwrap()
            .stdout,
        "ok\n"
    );
}
