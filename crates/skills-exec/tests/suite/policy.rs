use skills_exec::{CommandPolicy, LocalRuntime};
use skills_testkit::fixture::SkillDir;
use skills_workspace::{RunRequest, WorkspaceErrorKind, WorkspaceRuntime};

use crate::common::*;

#[tokio::test(flavor = "multi_thread")]
async fn policy_mode_refuses_shell_and_risky_env() {
    let dir = tempfile::tempdir().unwrap();
    let rt = LocalRuntime::builder(dir.path().join("ws"))
        .policy(CommandPolicy::unrestricted().allow(["echo", "cat", "env"]))
        .build()
        .unwrap();
    rt.stage_skill(&sid("s"), &generated_skill(dir.path(), "pol"))
        .await
        .unwrap();
    // Allowed, without a shell: quotes are words, nothing expands.
    let r = rt
        .run(&sid("s"), &RunRequest::new("pol", "echo 'a  b' \"c\""))
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
        let e = rt
            .run(&sid("s"), &RunRequest::new("pol", bad))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), WorkspaceErrorKind::PolicyDenied, "{bad:?}: {e}");
    }
    // A fake `echo` in the skill does not pass for the allowed one.
    let unrestricted = LocalRuntime::builder(dir.path().join("ws"))
        .policy(CommandPolicy::unrestricted())
        .build()
        .unwrap();
    unrestricted
        .stage_skill(&sid("s"), &generated_skill(dir.path(), "pol"))
        .await
        .unwrap();
    unrestricted
        .run(&sid("s"), &RunRequest::new("pol", "mkdir -p $WORK_DIR/bin && printf '#!/bin/sh\\necho pwned\\n' > $WORK_DIR/bin/echo && chmod +x $WORK_DIR/bin/echo"))
        .await
        .unwrap();
    for bad in ["../../work/bin/echo hi", "work/bin/echo hi"] {
        let e = rt
            .run(&sid("s"), &RunRequest::new("pol", bad))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), WorkspaceErrorKind::PolicyDenied, "{bad}");
    }
    // Model-supplied risky variables are dropped (with a warning), PATH too.
    let r = rt
        .run(
            &sid("s"),
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
    deny.stage_skill(&sid("s"), &generated_skill(dir.path(), "pol"))
        .await
        .unwrap();
    for bad in ["rm -rf .", "/bin/rm x", "/usr/bin/rm x"] {
        let e = deny
            .run(&sid("s"), &RunRequest::new("pol", bad))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), WorkspaceErrorKind::PolicyDenied, "{bad}");
    }
    assert_eq!(
        deny.run(&sid("s"), &RunRequest::new("pol", "echo ok"))
            .await
            .unwrap()
            .stdout,
        "ok\n"
    );
}

/// A skill with fake multi-call and privilege programs (perl scripts, so
/// they run where perl is) and scripts whose `#!` names a program.
fn launcher_skill(parent: &std::path::Path) -> skills_workspace::SkillSource {
    let fake = "#!/usr/bin/perl\nprint \"fake @ARGV\\n\";\n";
    let dir = SkillDir::new("launch", "Launchers. Use in tests.")
        .executable("fakes/busybox", fake)
        .executable("fakes/sudo", fake)
        .executable("fakes/doas", fake)
        .executable("sh-script", "#!/bin/sh\necho from-sh\n")
        .executable("env-script", "#!/usr/bin/env bash\necho from-bash\n")
        .executable(
            "perl-script",
            "#!/usr/bin/perl -w\nprint \"from-perl\\n\";\n",
        )
        .write_in(parent)
        .unwrap();
    skills_workspace::SkillSource::folder("launch", dir.display().to_string())
}

// threat model: H10
#[tokio::test(flavor = "multi_thread")]
async fn a_deny_list_holds_through_launchers_interpreters_and_scripts() {
    // `time rm x` below runs the program `time`, which Debian's minimal
    // systems lack: without it the case would be refused for another
    // reason and check nothing.
    assert!(
        std::path::Path::new("/usr/bin/time").exists(),
        "no /usr/bin/time to follow: install Debian's `time` package (bash .ci/test does)"
    );
    let dir = tempfile::tempdir().unwrap();
    let policy = CommandPolicy::unrestricted().deny(["rm", "bash", "sh"]);
    let local = LocalRuntime::builder(dir.path().join("local"))
        .policy(policy.clone())
        .build()
        .unwrap();
    let sandbox = skills_exec::SandboxRuntime::builder(dir.path().join("sandbox"))
        .policy(policy)
        .sandbox_options(crate::sandbox::options(false))
        .build_sandbox()
        .unwrap_or_else(|e| panic!("the sandbox cannot run on this machine: {e}"));
    let runtimes: [(&str, &dyn WorkspaceRuntime); 2] = [("local", &local), ("sandbox", &sandbox)];
    let skill = launcher_skill(dir.path());
    // Each command, and a word the refusal must give as its reason.
    let refused = [
        // The four.
        ("env bash -c id", "denied"),
        ("xargs rm", "denied"),
        ("perl -e 'print 1'", "code"),
        ("python3 -c 'import os'", "code"),
        // Every launcher, to a denied program.
        ("env -i A=1 rm x", "denied"),
        ("nice rm x", "denied"),
        ("nice -n 5 rm x", "denied"),
        ("timeout 5 rm x", "denied"),
        ("timeout -s KILL 5 rm x", "denied"),
        ("nohup rm x", "denied"),
        ("setsid rm x", "denied"),
        ("setsid -f rm x", "denied"),
        ("stdbuf -oL rm x", "denied"),
        ("ionice -c 3 rm x", "denied"),
        ("chrt -o 0 rm x", "denied"),
        ("taskset 1 rm x", "denied"),
        ("flock /tmp/skills-policy-lock rm x", "denied"),
        ("time rm x", "denied"),
        ("watch -x rm x", "denied"),
        ("find . -exec rm '{}' ';'", "denied"),
        ("find . -execdir rm '{}' +", "denied"),
        ("xargs -0 -n 1 rm", "denied"),
        ("env nice timeout 5 xargs rm", "denied"),
        ("./fakes/busybox rm x", "denied"),
        ("./fakes/busybox sh", "denied"),
        ("/usr/bin/env /usr/bin/rm x", "denied"),
        ("env dash script", "denied"),
        // Code the policy cannot see.
        // dash is the file /bin/sh names: denied as `sh`.
        ("dash -c id", "denied"),
        ("perl -lane 'print 1'", "code"),
        ("perl -de 0", "code"),
        ("python3", "code"),
        ("python3 -", "code"),
        ("node -e 1", "code"),
        ("node --eval=1", "code"),
        ("awk 'BEGIN{print 1}'", "code"),
        ("mawk -v x=1 'BEGIN{print x}'", "code"),
        ("flock /tmp/skills-policy-lock -c id", "code"),
        ("watch id", "code"),
        ("xargs perl -e 1", "code"),
        ("find . -exec perl -e 1 ';'", "code"),
        // Refused outright, or options that move the program.
        ("./fakes/sudo rm x", "another user"),
        ("./fakes/doas id", "another user"),
        ("/usr/sbin/chroot / id", "refused"),
        ("script -c id", "refused"),
        ("./fakes/busybox awk 1", "starts other programs"),
        ("env PATH=/tmp ls", "PATH"),
        ("env LD_PRELOAD=/x.so ls", "LD_PRELOAD"),
        ("env -S 'rm x'", "split"),
        ("env --chdir=/usr/bin ./rm x", "folder"),
        ("ionice -p 1", "other processes"),
        ("timeout --bogus 5 ls", "understands"),
        // Scripts run directly start their #! interpreter.
        ("./sh-script", "denied"),
        ("./env-script", "denied"),
    ];
    for (name, rt) in runtimes {
        rt.stage_skill(&sid("s"), &skill).await.unwrap();
        for (command, why) in refused {
            let e = rt
                .run(&sid("s"), &RunRequest::new("launch", command))
                .await
                .unwrap_err();
            assert_eq!(
                e.kind(),
                WorkspaceErrorKind::PolicyDenied,
                "{name}: {command}: {e}"
            );
            assert!(
                e.message().contains(why),
                "{name}: {command}: refused, but not for `{why}`: {e}"
            );
        }
        // What passes runs, through its launchers.
        for (command, stdin, want) in [
            ("env echo hi", None, "hi\n"),
            ("env -i A=1 echo hi", None, "hi\n"),
            ("nice -n 5 echo hi", None, "hi\n"),
            ("timeout 5 echo hi", None, "hi\n"),
            ("env nice timeout 5 echo chained", None, "chained\n"),
            ("xargs echo", Some("a b"), "a b\n"),
            ("xargs", Some("c d"), "c d\n"),
            (
                "find SKILL.md -exec echo found '{}' ';'",
                None,
                "found SKILL.md\n",
            ),
            ("perl -w perl-script", None, "from-perl\n"),
            ("./perl-script", None, "from-perl\n"),
            ("./fakes/busybox ls", None, "fake ls\n"),
            ("python3 -m json.tool --help", None, ""),
        ] {
            let mut req = RunRequest::new("launch", command);
            if let Some(s) = stdin {
                req = req.stdin(s);
            }
            let r = rt
                .run(&sid("s"), &req)
                .await
                .unwrap_or_else(|e| panic!("{name}: {command}: {e}"));
            assert_eq!(r.exit_code, Some(0), "{name}: {command}: {r:?}");
            if !want.is_empty() {
                assert_eq!(r.stdout, want, "{name}: {command}");
            }
        }
        rt.cleanup(&sid("s")).await.unwrap();
    }
}
