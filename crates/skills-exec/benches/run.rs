//! Run overhead: a `true` run through the runtimes against spawning
//! `bash -c true` directly, and re-staging an unchanged 10 MB skill. The
//! sandbox runs the `skills-sandbox` helper of this crate; as root, runs
//! also get cgroups (see docs/exec.md, "Limits").
//!
//! `cargo bench -p skills-exec --bench run -- --warm-up-time 1 --measurement-time 4`
//! (`... run_true` for the run group alone).
#![allow(missing_docs, clippy::unwrap_used)]

use std::process::Stdio;

use criterion::{Criterion, criterion_group, criterion_main};
use skills_exec::{CommandPolicy, LocalRuntime, RunLimits, SandboxOptions, SandboxRuntime};
use skills_workspace::{RunRequest, SessionId, SkillSource, WorkspaceRuntime};

fn skill(dir: &std::path::Path, name: &str, big: bool) -> SkillSource {
    let s = dir.join(name);
    std::fs::create_dir_all(s.join("assets")).unwrap();
    std::fs::write(
        s.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: Bench. Use when benchmarking.\n---\nBody.\n"),
    )
    .unwrap();
    if big {
        for i in 0..10 {
            std::fs::write(
                s.join(format!("assets/blob{i}.bin")),
                vec![i as u8; 1024 * 1024],
            )
            .unwrap();
        }
    }
    SkillSource::folder(name, s.display().to_string())
}

fn bench(c: &mut Criterion) {
    let session: SessionId = "b".parse().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let local = LocalRuntime::builder(dir.path().join("ws"))
        .policy(CommandPolicy::unrestricted())
        .build()
        .unwrap();
    let small = skill(dir.path(), "small", false);
    rt.block_on(local.stage_skill(&session, &small)).unwrap();
    let req = RunRequest::new("small", "true");

    let mut g = c.benchmark_group("run_true");
    // The same shape as a run: a small environment, stdin closed, both
    // outputs read to the end. The other baselines add the variable of the
    // run's overlay that changes what bash does at start (`LC_CTYPE`, the
    // encoding) and, for comparison, `LANG`, which the overlay set before
    // (bash then loads every category of the locale).
    for (name, locale) in [
        ("direct bash -c true", None),
        ("direct bash -c true, LC_CTYPE=C.UTF-8", Some("LC_CTYPE")),
        ("direct bash -c true, LANG=C.UTF-8", Some("LANG")),
    ] {
        g.bench_function(name, |b| {
            b.to_async(&rt).iter(|| async {
                let mut cmd = tokio::process::Command::new("/bin/bash");
                cmd.args(["-c", "true"])
                    .env_clear()
                    .env("PATH", "/usr/local/bin:/usr/bin:/bin")
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                if let Some(var) = locale {
                    cmd.env(var, "C.UTF-8");
                }
                let out = cmd.output().await.unwrap();
                assert!(out.status.success());
            })
        });
    }
    g.bench_function("local runtime", |b| {
        b.to_async(&rt).iter(|| async {
            let r = local.run(&session, &req).await.unwrap();
            assert_eq!(r.exit_code, Some(0));
        })
    });
    // The same without limits: what the run's cgroup and resource limits
    // cost.
    let unlimited = LocalRuntime::builder(dir.path().join("ws-unlimited"))
        .policy(CommandPolicy::unrestricted())
        .limits(RunLimits::unlimited())
        .build()
        .unwrap();
    rt.block_on(unlimited.stage_skill(&session, &small))
        .unwrap();
    g.bench_function("local runtime, no limits", |b| {
        b.to_async(&rt).iter(|| async {
            let r = unlimited.run(&session, &req).await.unwrap();
            assert_eq!(r.exit_code, Some(0));
        })
    });
    for (name, folder, per_run) in [
        ("sandbox runtime", "sb", false),
        ("sandbox runtime, bwrap per run", "sb1", true),
    ] {
        match SandboxRuntime::builder(dir.path().join(folder))
            .policy(CommandPolicy::unrestricted())
            .sandbox_options(
                SandboxOptions::new()
                    .sandbox_per_run(per_run)
                    .helper(env!("CARGO_BIN_EXE_skills-sandbox")),
            )
            .build_sandbox()
        {
            Ok(sandbox) => {
                rt.block_on(sandbox.stage_skill(&session, &small)).unwrap();
                g.bench_function(name, |b| {
                    b.to_async(&rt).iter(|| async {
                        let r = sandbox.run(&session, &req).await.unwrap();
                        assert_eq!(r.exit_code, Some(0), "{r:?}");
                    })
                });
            }
            Err(e) => eprintln!("{name} skipped: {e}"),
        }
    }
    g.finish();

    let big = skill(dir.path(), "big", true);
    rt.block_on(local.stage_skill(&session, &big)).unwrap();
    c.bench_function("restage unchanged 10 MB skill", |b| {
        b.to_async(&rt).iter(|| async {
            let s = local.stage_skill(&session, &big).await.unwrap();
            assert!(!s.copied);
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
