use std::sync::Arc;
use std::time::{Duration, Instant};

use skills_exec::{CommandPolicy, InMemoryArtifacts, LocalRuntime};
use skills_workspace::{
    Attachment, InputSpec, OutputSpec, RunRequest, SessionId, SkillFile, SkillSource,
    WorkspaceErrorKind, WorkspaceRuntime,
};

use crate::common::*;

fn runtime(dir: &std::path::Path) -> LocalRuntime {
    LocalRuntime::builder(dir.join("ws"))
        .policy(CommandPolicy::unrestricted())
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn layout_for_every_example_and_generated_skill() {
    let dir = tempfile::tempdir().unwrap();
    let rt: Arc<dyn WorkspaceRuntime> = Arc::new(runtime(dir.path()));
    let mut skills = example_skills();
    skills.push(generated_skill(dir.path(), "gen-one"));
    skills.push(generated_skill(dir.path(), "gen-two"));
    for (i, skill) in skills.iter().enumerate() {
        // Local processes running as root can write read-only files, so the
        // read-only check is enforced by the sandbox tests only.
        let root = rustix::process::geteuid().is_root();
        check_layout(Arc::clone(&rt), &format!("layout-{i}"), skill, !root).await;
    }
    rt.stage_skill(&sid("meta"), &skills[0]).await.unwrap();
    // threat model: H4 (the runtime's record of a session is never in the
    // workspace, where the command could change it).
    let names: Vec<_> = std::fs::read_dir(dir.path().join("ws/meta"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    let mut names = names;
    names.sort();
    assert_eq!(names, ["out", "runs", "skills", "work"]);
    for sub in ["work/inputs", "out", "runs", "skills"] {
        assert!(dir.path().join("ws/meta").join(sub).is_dir(), "{sub}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn restages_only_on_content_change() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(dir.path());
    let skill = generated_skill(dir.path(), "restage");
    let first = rt.stage_skill(&sid("s"), &skill).await.unwrap();
    assert!(first.copied);
    let again = rt.stage_skill(&sid("s"), &skill).await.unwrap();
    assert!(!again.copied);
    assert_eq!(first.digest, again.digest);
    // Same content, new times: the fingerprint moves, the digest does not.
    let script = dir.path().join("restage/scripts/lib/data.txt");
    std::fs::write(&script, "data\n").unwrap();
    let touched = rt.stage_skill(&sid("s"), &skill).await.unwrap();
    assert!(!touched.copied);
    // The .venv survives a re-staging.
    let r = run(
        &rt,
        "s",
        RunRequest::new("restage", "echo pkg > .venv/marker"),
    )
    .await;
    assert_eq!(r.exit_code, Some(0), "{r:?}");
    std::fs::write(&script, "changed\n").unwrap();
    let changed = rt.stage_skill(&sid("s"), &skill).await.unwrap();
    assert!(changed.copied);
    assert_ne!(changed.digest, first.digest);
    let r = run(
        &rt,
        "s",
        RunRequest::new("restage", "cat scripts/lib/data.txt .venv/marker"),
    )
    .await;
    assert_eq!(r.stdout, "changed\npkg\n");
    // In-memory skills.
    let files = SkillSource::files(
        "mem",
        vec![
            SkillFile::new("SKILL.md", "---\nname: mem\ndescription: d\n---\n"),
            SkillFile::new("bin/run.sh", "echo mem-ok").executable(true),
        ],
    );
    assert!(rt.stage_skill(&sid("s"), &files).await.unwrap().copied);
    assert!(!rt.stage_skill(&sid("s"), &files).await.unwrap().copied);
    let r = run(&rt, "s", RunRequest::new("mem", "./bin/run.sh")).await;
    assert_eq!(r.stdout, "mem-ok\n");
    let bad = SkillSource::files("bad", vec![SkillFile::new("../x", "")]);
    assert_eq!(
        rt.stage_skill(&sid("s"), &bad).await.unwrap_err().kind(),
        WorkspaceErrorKind::PathEscape
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn env_cwd_stdin_editor_and_caps() {
    let dir = tempfile::tempdir().unwrap();
    let rt = LocalRuntime::builder(dir.path().join("ws"))
        .policy(CommandPolicy::unrestricted())
        .output_cap(1000)
        .build()
        .unwrap();
    rt.stage_skill(&sid("s"), &generated_skill(dir.path(), "envs"))
        .await
        .unwrap();
    let ws = rt.root().join("s");
    let r = run(&rt, "s", RunRequest::new("envs", "echo $WORKSPACE_DIR $SKILLS_DIR $WORK_DIR $OUTPUT_DIR $SKILL_NAME $TERM $NO_COLOR $PAGER; pwd; echo $RUN_DIR")).await;
    let mut lines = r.stdout.lines();
    let w = ws.display().to_string();
    assert_eq!(
        lines.next().unwrap(),
        format!("{w} {w}/skills {w}/work {w}/out envs dumb 1 cat")
    );
    assert_eq!(lines.next().unwrap(), format!("{w}/skills/envs"));
    assert_eq!(lines.next().unwrap(), format!("{w}/{}", r.run_dir));
    assert!(r.run_dir.starts_with("runs/run_"));
    // Model-supplied workspace variables are dropped.
    let r = run(
        &rt,
        "s",
        RunRequest::new("envs", "echo $OUTPUT_DIR").env("OUTPUT_DIR", "/etc"),
    )
    .await;
    assert_eq!(r.stdout.trim(), format!("{w}/out"));
    assert!(r.warnings.iter().any(|x| x.contains("OUTPUT_DIR")));
    // UTF-8 by default (`LC_CTYPE`), and a locale the request sets wins.
    let probe =
        "echo \"${LANG-unset}|${LC_CTYPE-unset}|${LC_ALL-unset}\"; printf '\\u00e9' | wc -m";
    let r = run(&rt, "s", RunRequest::new("envs", probe)).await;
    assert_eq!(r.stdout, "unset|C.UTF-8|unset\n1\n");
    let r = run(&rt, "s", RunRequest::new("envs", probe).env("LC_ALL", "C")).await;
    // Under `C`, bash cannot encode é and prints the escape as it is.
    assert_eq!(r.stdout, "unset|C.UTF-8|C\n6\n");
    // A request's `LANG` sets the encoding too: the default steps aside.
    let r = run(&rt, "s", RunRequest::new("envs", probe).env("LANG", "C")).await;
    assert_eq!(r.stdout, "C|unset|unset\n6\n");
    let r = run(
        &rt,
        "s",
        RunRequest::new("envs", probe)
            .env("LANG", "C")
            .env("LC_CTYPE", "C.UTF-8"),
    )
    .await;
    assert_eq!(r.stdout, "C|C.UTF-8|unset\n1\n");
    // cwd rules.
    let r = run(&rt, "s", RunRequest::new("envs", "pwd").cwd("$WORK_DIR")).await;
    assert_eq!(r.stdout.trim(), format!("{w}/work"));
    let r = run(&rt, "s", RunRequest::new("envs", "pwd").cwd("scripts/lib")).await;
    assert_eq!(r.stdout.trim(), format!("{w}/skills/envs/scripts/lib"));
    for bad in ["../../..", "/etc", "$WORK_DIR/../../..", "../../../../tmp"] {
        let e = rt
            .run(&sid("s"), &RunRequest::new("envs", "pwd").cwd(bad))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), WorkspaceErrorKind::PathEscape, "{bad}");
    }
    run(
        &rt,
        "s",
        RunRequest::new("envs", "ln -s / $WORK_DIR/rootlink"),
    )
    .await;
    let e = rt
        .run(
            &sid("s"),
            &RunRequest::new("envs", "pwd").cwd("$WORK_DIR/rootlink"),
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind(), WorkspaceErrorKind::PathEscape);
    // stdin: closed when not given (cat ends at once), fed when given.
    let started = Instant::now();
    let r = run(
        &rt,
        "s",
        RunRequest::new("envs", "cat; echo done").timeout_secs(10),
    )
    .await;
    assert_eq!(r.stdout, "done\n");
    assert!(!r.timed_out && started.elapsed() < Duration::from_secs(5));
    let r = run(
        &rt,
        "s",
        RunRequest::new("envs", "tr a-z A-Z").stdin("shout"),
    )
    .await;
    assert_eq!(r.stdout, "SHOUT");
    // editor_text.
    let r = run(
        &rt,
        "s",
        RunRequest::new("envs", "$EDITOR $WORK_DIR/msg.txt && cat $WORK_DIR/msg.txt")
            .editor_text("from the editor"),
    )
    .await;
    assert_eq!(r.stdout, "from the editor", "{r:?}");
    // Caps: head and tail kept, note, warning; UTF-8 kept whole.
    let r = run(
        &rt,
        "s",
        RunRequest::new(
            "envs",
            "echo START; for i in $(seq 1 2000); do printf 'é'; done; echo; echo END",
        ),
    )
    .await;
    assert!(r.stdout.starts_with("START"), "{}", r.stdout);
    assert!(r.stdout.trim_end().ends_with("END"));
    assert!(r.stdout.contains("bytes of output omitted"));
    assert!(!r.stdout.contains('\u{FFFD}'));
    assert!(r.stdout.len() < 1200);
    assert!(r.warnings.iter().any(|w| w.contains("stdout was longer")));
    // Exit codes and stderr.
    let r = run(&rt, "s", RunRequest::new("envs", "echo oops >&2; exit 3")).await;
    assert_eq!((r.exit_code, r.stderr.as_str()), (Some(3), "oops\n"));
    assert!(!r.success());
}

#[tokio::test(flavor = "multi_thread")]
async fn timeout_kills_every_descendant() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(dir.path());
    rt.stage_skill(&sid("s"), &generated_skill(dir.path(), "forks"))
        .await
        .unwrap();
    let token = "4711";
    // The detector sees a live process (so an empty list below means something).
    let mut probe = std::process::Command::new("sleep")
        .arg("47199")
        .spawn()
        .unwrap();
    // At least one: another run of this suite on the machine may have its own.
    assert!(wait_for_processes("sleep 47199", 1).await >= 1);
    probe.kill().unwrap();
    probe.wait().unwrap();
    let started = Instant::now();
    let r = run(
        &rt,
        "s",
        RunRequest::new("forks", forking_command(token)).timeout_secs(1),
    )
    .await;
    let elapsed = started.elapsed();
    assert!(r.timed_out, "{r:?}");
    assert_eq!(r.exit_code, None);
    assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");
    assert!(
        r.duration_ms >= 1000 && r.duration_ms < 2000,
        "{}",
        r.duration_ms
    );
    assert_eq!(
        left_after(&format!("sleep {token}"), Duration::from_millis(500)).await,
        Vec::<String>::new()
    );
    // A command that exits but leaves children holding its output returns
    // promptly, and the children are gone.
    let started = Instant::now();
    let r = run(
        &rt,
        "s",
        RunRequest::new("forks", "setsid sleep 47121 & echo bye").timeout_secs(20),
    )
    .await;
    assert_eq!(r.stdout, "bye\n");
    assert!(!r.timed_out && started.elapsed() < Duration::from_secs(3));
    assert_eq!(
        left_after("sleep 47121", Duration::from_millis(500)).await,
        Vec::<String>::new()
    );
    // The documented gap: a process that leaves the group with an empty
    // environment can survive the run, and dies with the workspace's cleanup.
    let r = run(
        &rt,
        "s",
        RunRequest::new(
            "forks",
            // The pause lets `setsid` leave the group before the group is
            // killed at exit (without it the test raced the kill).
            "(setsid env -i /bin/sleep 47131 > /dev/null 2>&1 &) ; sleep 0.3 ; echo started",
        )
        .timeout_secs(20),
    )
    .await;
    assert_eq!(r.stdout, "started\n");
    // Whether it survives depends on timing: the run's sweep kills it when
    // it finds it before `env -i` has dropped the run's marker. Either way,
    // cleanup must leave nothing behind.
    tokio::time::sleep(Duration::from_millis(200)).await;
    rt.cleanup(&sid("s")).await.unwrap();
    assert_eq!(
        left_after("sleep 47131", Duration::from_millis(500)).await,
        Vec::<String>::new()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn fifty_concurrent_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let rt = Arc::new(runtime(dir.path()));
    let skill = generated_skill(dir.path(), "many");
    let mut tasks = Vec::new();
    for i in 0..50 {
        let rt = Arc::clone(&rt);
        let skill = skill.clone();
        tasks.push(tokio::spawn(async move {
            let session = sid(&format!("session-{i}"));
            rt.stage_skill(&session, &skill).await.unwrap();
            let r = rt
                .run(
                    &session,
                    &RunRequest::new(
                        "many",
                        format!("echo {session} > $OUTPUT_DIR/{session}.txt; ./scripts/hello.sh"),
                    )
                    .output_file("out/*"),
                )
                .await
                .unwrap();
            assert_eq!(r.exit_code, Some(0), "{r:?}");
            assert_eq!(r.stdout, "hello from many\n");
            assert_eq!(r.output_files.len(), 1, "{session}: {:?}", r.output_files);
            assert_eq!(r.output_files[0].name, format!("out/{session}.txt"));
            assert_eq!(
                r.output_files[0].content.as_deref(),
                Some(format!("{session}\n").as_str())
            );
            session
        }));
    }
    for t in tasks {
        let session = t.await.unwrap();
        let report = rt.cleanup(&session).await.unwrap();
        assert!(report.removed);
    }
    assert_eq!(std::fs::read_dir(rt.root()).unwrap().count(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn outputs_manifest_artifacts_and_links() {
    let dir = tempfile::tempdir().unwrap();
    let artifacts = Arc::new(InMemoryArtifacts::new());
    let rt = LocalRuntime::builder(dir.path().join("ws"))
        .policy(CommandPolicy::unrestricted())
        .artifacts(artifacts.clone())
        .build()
        .unwrap();
    rt.stage_skill(&sid("s"), &generated_skill(dir.path(), "outs"))
        .await
        .unwrap();
    let make = "mkdir -p out/sub; for i in 1 2 3 4 5; do echo file$i > out/f$i.txt; done; \
                printf '\\x89PNG\\r\\n\\x1a\\n\\0\\0\\0\\rIHDR' > out/img.png; head -c 100 /dev/zero | tr '\\0' 'x' > out/sub/big.txt; \
                ln -s /etc/passwd out/passwd.txt; : > out/empty.txt";
    let r = run(
        &rt,
        "s",
        RunRequest::new("outs", make).outputs(OutputSpec::new(["$OUTPUT_DIR/*.txt"]).max_files(3)),
    )
    .await;
    assert_eq!(r.output_files.len(), 3, "{r:?}");
    assert!(r.warnings.iter().any(|w| w.contains("max_files")));
    let r = run(
        &rt,
        "s",
        RunRequest::new("outs", "true")
            .output_file("out/**/*.txt")
            .output_file("out/*.png"),
    )
    .await;
    let names: Vec<_> = r.output_files.iter().map(|f| f.name.as_str()).collect();
    assert!(!names.contains(&"out/passwd.txt"), "{names:?}");
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("refused `out/passwd.txt`")),
        "{:?}",
        r.warnings
    );
    assert!(names.contains(&"out/empty.txt"));
    let png = r
        .output_files
        .iter()
        .find(|f| f.name == "out/img.png")
        .unwrap();
    assert_eq!(png.mime_type, "image/png");
    assert!(png.content.is_none());
    assert_eq!(png.reference, "workspace://out/img.png");
    assert_eq!(r.primary_output.as_ref().unwrap().name, "out/f1.txt");
    // Zero-byte files are dropped when the command failed.
    let r = run(
        &rt,
        "s",
        RunRequest::new("outs", "exit 1").output_file("out/*.txt"),
    )
    .await;
    assert!(r.output_files.iter().all(|f| f.name != "out/empty.txt"));
    // Per-file cap.
    let r = run(
        &rt,
        "s",
        RunRequest::new("outs", "true")
            .outputs(OutputSpec::new(["out/sub/big.txt"]).max_file_bytes(10)),
    )
    .await;
    let big = &r.output_files[0];
    assert!(big.truncated && big.size_bytes == 100 && big.content.as_deref() == Some("xxxxxxxxxx"));
    // Total cap.
    let r = run(
        &rt,
        "s",
        RunRequest::new("outs", "true").outputs(OutputSpec::new(["out/*.txt"]).max_total_bytes(12)),
    )
    .await;
    // empty.txt (0 bytes), f1.txt and f2.txt (6 each); f3.txt would pass 12.
    assert_eq!(r.output_files.len(), 3, "{r:?}");
    // Saved as artifacts, content omitted.
    let r = run(
        &rt,
        "s",
        RunRequest::new("outs", "true")
            .output_file("out/f1.txt")
            .save_as_artifacts(true)
            .omit_inline_content(true)
            .artifact_prefix("run1/"),
    )
    .await;
    assert_eq!(r.output_files[0].content, None);
    assert_eq!(r.artifact_files[0].name, "run1/f1.txt");
    assert_eq!(r.artifact_files[0].version, 1);
    use skills_exec::ArtifactService;
    assert_eq!(
        artifacts
            .load("s", "run1/f1.txt", None)
            .await
            .unwrap()
            .bytes,
        b"file1\n"
    );
    // read_file and workspace:// refs.
    let f = rt
        .read_file(&sid("s"), "workspace://out/f2.txt", 100)
        .await
        .unwrap();
    assert_eq!(f.bytes, b"file2\n");
    assert_eq!(
        rt.read_file(&sid("s"), "out/passwd.txt", 100)
            .await
            .unwrap_err()
            .kind(),
        WorkspaceErrorKind::PathEscape
    );
    assert_eq!(
        rt.read_file(&sid("s"), "../../etc/passwd", 100)
            .await
            .unwrap_err()
            .kind(),
        WorkspaceErrorKind::PathEscape
    );
    // Globs leaving the workspace are refused before running.
    let e = rt
        .run(
            &sid("s"),
            &RunRequest::new("outs", "true").output_file("../*"),
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind(), WorkspaceErrorKind::PathEscape);
    // No artifact service: a warning, not a failure.
    let plain = runtime(dir.path());
    plain
        .stage_skill(&sid("s"), &generated_skill(dir.path(), "outs2"))
        .await
        .unwrap();
    let r = run(
        &plain,
        "s",
        RunRequest::new("outs2", "echo a > out/a.txt")
            .output_file("out/a.txt")
            .save_as_artifacts(true),
    )
    .await;
    assert!(r.warnings.iter().any(|w| w.contains("no artifact service")));
    assert_eq!(r.output_files.len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn inputs_and_attachments() {
    let dir = tempfile::tempdir().unwrap();
    let artifacts = Arc::new(InMemoryArtifacts::new());
    let host_dir = dir.path().join("host");
    std::fs::create_dir_all(&host_dir).unwrap();
    std::fs::write(host_dir.join("in.csv"), "a,b\n").unwrap();
    let rt = LocalRuntime::builder(dir.path().join("ws"))
        .policy(CommandPolicy::unrestricted())
        .artifacts(artifacts.clone())
        .allow_host_inputs(&host_dir)
        .build()
        .unwrap();
    rt.stage_skill(&sid("s"), &generated_skill(dir.path(), "ins"))
        .await
        .unwrap();
    use skills_exec::ArtifactService;
    artifacts
        .save("s", "data.txt", "text/plain", b"v1".to_vec())
        .await
        .unwrap();
    artifacts
        .save("s", "data.txt", "text/plain", b"v2".to_vec())
        .await
        .unwrap();
    let req = RunRequest::new(
        "ins",
        "cat inputs/data.txt work/old.txt work/inputs/in.csv work/copy.txt work/lib.txt",
    )
    .input(InputSpec::new("artifact://data.txt"))
    .input(InputSpec::new("artifact://data.txt@1").to("work/old.txt"))
    .input(InputSpec::new(format!(
        "host://{}",
        host_dir.join("in.csv").display()
    )))
    .input(InputSpec::new("skill://ins/scripts/lib/data.txt").to("work/lib.txt"))
    .input(InputSpec::new("workspace://work/lib.txt").to("work/copy.txt"));
    let r = run(&rt, "s", req).await;
    assert_eq!(r.stdout, "v2v1a,b\ndata\ndata\n", "{r:?}");
    assert_eq!(r.staged_inputs.len(), 5);
    assert_eq!(r.staged_inputs[0].version, Some(2));
    for bad in [
        InputSpec::new("host:///etc/passwd"),
        InputSpec::new("workspace://../../x"),
        InputSpec::new("ftp://x"),
        InputSpec::new("artifact://data.txt").to("skills/ins/SKILL.md"),
        InputSpec::new("artifact://data.txt").to("../outside.txt"),
    ] {
        assert!(
            rt.stage_inputs(&sid("s"), std::slice::from_ref(&bad))
                .await
                .is_err(),
            "{bad:?}"
        );
    }
    // Pinning keeps a version.
    rt.stage_inputs(
        &sid("s"),
        &[InputSpec::new("artifact://data.txt").pin(true)],
    )
    .await
    .unwrap();
    artifacts
        .save("s", "data.txt", "text/plain", b"v3".to_vec())
        .await
        .unwrap();
    let staged = rt
        .stage_inputs(&sid("s"), &[InputSpec::new("artifact://data.txt")])
        .await
        .unwrap();
    assert_eq!(staged[0].version, Some(2));
    // A destination whose folder links out is refused.
    run(
        &rt,
        "s",
        RunRequest::new("ins", "ln -s /tmp $WORK_DIR/evil"),
    )
    .await;
    let e = rt
        .stage_inputs(
            &sid("s"),
            &[InputSpec::new("artifact://data.txt").to("work/evil/x.txt")],
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind(), WorkspaceErrorKind::PathEscape);
    // Attachments: sanitized, de-duplicated.
    let staged = rt
        .stage_attachments(
            &sid("s"),
            &[
                Attachment::new("../../my report.txt", "a"),
                Attachment::new("my report.txt", "b"),
            ],
        )
        .await
        .unwrap();
    assert_eq!(staged[0].path, "work/inputs/my_report.txt");
    assert_eq!(staged[1].path, "work/inputs/my_report-1.txt");
}

#[tokio::test(flavor = "multi_thread")]
async fn not_loaded_on_demand_and_cleanup() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(dir.path());
    let e = rt
        .run(&sid("s"), &RunRequest::new("csv-insights", "true"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), WorkspaceErrorKind::SkillNotLoaded);
    // A bad session id cannot reach a runtime: the type refuses it.
    let e = "../x".parse::<SessionId>().unwrap_err();
    assert_eq!(e.kind(), WorkspaceErrorKind::InvalidRequest);
    let provider = Arc::new(skills_fs::FsProvider::new(
        [examples_dir()],
        skills_fs::FsOptions::default(),
    ));
    let rt2 = LocalRuntime::builder(dir.path().join("ws2"))
        .policy(CommandPolicy::unrestricted())
        .stage_on_demand(provider)
        .build()
        .unwrap();
    let r = run(
        &rt2,
        "s",
        RunRequest::new(
            "csv-insights",
            "python3 scripts/profile_csv.py assets/sample-orders.csv | head -3",
        ),
    )
    .await;
    assert_eq!(r.exit_code, Some(0), "{r:?}");
    assert!(!r.stdout.is_empty());
    // Cleanup removes the workspace only.
    let marker = dir.path().join("keep.txt");
    std::fs::write(&marker, "keep").unwrap();
    run(
        &rt2,
        "s",
        RunRequest::new(
            "csv-insights",
            format!("ln -s {} $WORK_DIR/keep", marker.display()),
        ),
    )
    .await;
    let report = rt2.cleanup(&sid("s")).await.unwrap();
    assert!(report.removed);
    assert!(marker.exists());
    assert!(!rt2.root().join("s").exists());
    assert!(!rt2.cleanup(&sid("s")).await.unwrap().removed);
}

/// A single-file skill (`<root>/<name>.md`) has no folder: staging it
/// through its provider ships its `SKILL.md` alone as `skills/<name>/SKILL.md`,
/// and staging on demand for a run refuses it, saying why.
#[tokio::test(flavor = "multi_thread")]
async fn single_file_skill_stages_its_skill_md_alone() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("skills");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join("notes.md"),
        "---\ndescription: Keeps meeting notes. Use when asked to take notes.\n---\nWrite notes.\n",
    )
    .unwrap();
    std::fs::write(root.join("README.md"), "# Not part of any skill\n").unwrap();
    let provider = Arc::new(skills_fs::FsProvider::new(
        [root],
        skills_fs::FsOptions::default(),
    ));
    let rt = runtime(dir.path());
    rt.stage_from(&sid("s"), provider.as_ref(), "notes")
        .await
        .unwrap();
    let staged = dir.path().join("ws/s/skills/notes");
    let files: Vec<_> = std::fs::read_dir(&staged)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    // The runtime's own links (`out`, `work`, ...) sit beside it; no other
    // file of the root came along.
    assert!(files.contains(&"SKILL.md".to_owned()), "{files:?}");
    assert!(
        !files.iter().any(|f| f.ends_with(".md") && f != "SKILL.md"),
        "{files:?}"
    );
    let text = std::fs::read_to_string(staged.join("SKILL.md")).unwrap();
    assert!(
        text.starts_with("---\ndescription: Keeps meeting notes.")
            && text.ends_with("Write notes.\n"),
        "{text}"
    );

    let on_demand = LocalRuntime::builder(dir.path().join("ws2"))
        .policy(CommandPolicy::unrestricted())
        .stage_on_demand(provider)
        .build()
        .unwrap();
    let e = on_demand
        .run(&sid("s"), &RunRequest::new("notes", "true"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), WorkspaceErrorKind::Unsupported, "{e}");
    assert!(e.to_string().contains("no local folder"), "{e}");
}

/// Every run gets a run folder of its own that exists when it starts (one
/// is made ahead of time in the background), and cleanup right after a run
/// removes the workspace even while the next folder is being made.
#[tokio::test(flavor = "multi_thread")]
async fn run_folders_and_cleanup_right_after_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(dir.path());
    let skill = generated_skill(dir.path(), "rf");
    let mut seen = std::collections::BTreeSet::new();
    for i in 0..20 {
        rt.stage_skill(&sid("s"), &skill).await.unwrap();
        let r = run(
            &rt,
            "s",
            RunRequest::new(
                "rf",
                "test -d \"$RUN_DIR\" && [ -z \"$(ls -A \"$RUN_DIR\")\" ] && echo fresh",
            ),
        )
        .await;
        assert_eq!(r.stdout, "fresh\n", "{r:?}");
        assert!(
            seen.insert(r.run_dir.clone()),
            "run folder reused: {}",
            r.run_dir
        );
        // An empty run folder goes once the run is over; one the command
        // left something in stays.
        let gone = rt.root().join("s").join(&r.run_dir);
        let deadline = Instant::now() + Duration::from_secs(5);
        while gone.exists() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(!gone.exists(), "{} left", r.run_dir);
        let kept = run(&rt, "s", RunRequest::new("rf", "echo x > \"$RUN_DIR/log\"")).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            rt.root()
                .join("s")
                .join(&kept.run_dir)
                .join("log")
                .is_file()
        );
        if i % 2 == 1 {
            rt.cleanup(&sid("s")).await.unwrap();
            assert!(
                !rt.root().join("s").exists(),
                "workspace left after cleanup"
            );
        }
    }
}
