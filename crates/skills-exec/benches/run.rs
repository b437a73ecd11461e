//! Run overhead: a `true` run through the runtimes against spawning
//! `bash -c true` directly, and re-staging an unchanged 10 MB skill. The
//! sandbox runs the `skills-sandbox` helper of this crate; as root, runs
//! also get cgroups (see docs/exec.md, "Limits").
//!
//! With a container engine (`DOCKER_HOST`, e.g. from `bash .ci/podman
//! start`, and `SKILLS_CONTAINER_IMAGE`), the group `run_true_container`
//! measures the container runtime (a container per run), the other design
//! (an `exec` per run into a running container, through the engine API
//! directly), and the first run in a fresh workspace (staging included)
//! for the local, sandbox and container runtimes; then the peak resident
//! memory of this process over 100 container runs is printed.
//!
//! `cargo bench -p skills-exec --bench run -- --warm-up-time 1 --measurement-time 4`
//! (`... run_true` for the run group alone).
#![allow(missing_docs, clippy::unwrap_used)]

use std::process::Stdio;

use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::StreamExt as _;
use skills_exec::{
    CommandPolicy, ContainerOptions, ContainerRuntime, LocalRuntime, RunLimits, SandboxOptions,
    SandboxRuntime,
};
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
    container_bench(c, &rt, dir.path(), &small);

    let big = skill(dir.path(), "big", true);
    rt.block_on(local.stage_skill(&session, &big)).unwrap();
    c.bench_function("restage unchanged 10 MB skill", |b| {
        b.to_async(&rt).iter(|| async {
            let s = local.stage_skill(&session, &big).await.unwrap();
            assert!(!s.copied);
        })
    });
}

/// The engine of the container benchmarks, when one is configured.
fn container_options() -> Option<ContainerOptions> {
    let host = skills_exec::default_host()?;
    let image = std::env::var(skills_exec::IMAGE_ENV)
        .unwrap_or_else(|_| skills_exec::DEFAULT_IMAGE.to_owned());
    Some(ContainerOptions::new().host(host).image(image))
}

/// This process's peak resident memory (`VmHWM`), in KiB.
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn container_bench(
    c: &mut Criterion,
    rt: &tokio::runtime::Runtime,
    dir: &std::path::Path,
    small: &SkillSource,
) {
    let Some(options) = container_options() else {
        eprintln!("run_true_container skipped: no container engine (set DOCKER_HOST)");
        return;
    };
    let container = match rt.block_on(
        ContainerRuntime::builder(dir.join("ct"))
            .policy(CommandPolicy::unrestricted())
            .build_container(options.clone()),
    ) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("run_true_container skipped: {e}");
            return;
        }
    };
    let session: SessionId = "b".parse().unwrap();
    rt.block_on(container.stage_skill(&session, small)).unwrap();
    let req = RunRequest::new("small", "true");
    let mut g = c.benchmark_group("run_true_container");
    g.sample_size(10);
    g.bench_function("container runtime (a container per run)", |b| {
        b.to_async(rt).iter(|| async {
            let r = container.run(&session, &req).await.unwrap();
            assert_eq!(r.exit_code, Some(0), "{r:?}");
        })
    });
    // The other design: one container per workspace, an `exec` per run.
    let docker = bollard::Docker::connect_with_host(options.host.as_deref().unwrap()).unwrap();
    let id = rt.block_on(async {
        let body = bollard::models::ContainerCreateBody {
            image: Some(options.image.clone()),
            cmd: Some(vec!["sleep".into(), "3600".into()]),
            network_disabled: Some(true),
            host_config: Some(bollard::models::HostConfig {
                network_mode: Some("none".into()),
                ulimits: Some(vec![
                    bollard::models::ResourcesUlimits {
                        name: Some("nofile".into()),
                        soft: Some(1024),
                        hard: Some(1024),
                    },
                    bollard::models::ResourcesUlimits {
                        name: Some("nproc".into()),
                        soft: Some(512),
                        hard: Some(512),
                    },
                ]),
                ..Default::default()
            }),
            ..Default::default()
        };
        let id = docker.create_container(None, body).await.unwrap().id;
        docker.start_container(&id, None).await.unwrap();
        id
    });
    g.bench_function("exec per run into a running container (engine API)", |b| {
        b.to_async(rt).iter(|| async {
            let exec = docker
                .create_exec(
                    &id,
                    bollard::models::ExecConfig {
                        cmd: Some(vec!["bash".into(), "-c".into(), "true".into()]),
                        attach_stdout: Some(true),
                        attach_stderr: Some(true),
                        ..Default::default()
                    },
                )
                .await
                .unwrap();
            if let bollard::exec::StartExecResults::Attached { mut output, .. } =
                docker.start_exec(&exec.id, None).await.unwrap()
            {
                while output.next().await.is_some() {}
            }
            let code = docker.inspect_exec(&exec.id).await.unwrap().exit_code;
            assert_eq!(code, Some(0));
        })
    });
    rt.block_on(async {
        let opts = bollard::query_parameters::RemoveContainerOptionsBuilder::default()
            .force(true)
            .build();
        docker.remove_container(&id, Some(opts)).await.unwrap();
    });
    // The first run of a session: workspace, staging and the run.
    let local = LocalRuntime::builder(dir.join("first-local"))
        .policy(CommandPolicy::unrestricted())
        .build()
        .unwrap();
    let sandbox = SandboxRuntime::builder(dir.join("first-sb"))
        .policy(CommandPolicy::unrestricted())
        .sandbox_options(SandboxOptions::new().helper(env!("CARGO_BIN_EXE_skills-sandbox")))
        .build_sandbox()
        .ok();
    let mut runtimes: Vec<(&str, &dyn WorkspaceRuntime)> = vec![
        ("first run in a fresh workspace: local", &local),
        ("first run in a fresh workspace: container", &container),
    ];
    if let Some(sb) = &sandbox {
        runtimes.push(("first run in a fresh workspace: sandbox", sb));
    }
    let n = std::sync::atomic::AtomicU64::new(0);
    for (name, runtime) in runtimes {
        g.bench_function(name, |b| {
            b.to_async(rt).iter(|| async {
                let i = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let s: SessionId = format!("first-{i}").parse().unwrap();
                runtime.stage_skill(&s, small).await.unwrap();
                let r = runtime.run(&s, &req).await.unwrap();
                assert_eq!(r.exit_code, Some(0), "{r:?}");
                runtime.cleanup(&s).await.unwrap();
            })
        });
    }
    g.finish();
    let before = peak_rss_kib();
    rt.block_on(async {
        for _ in 0..100 {
            let r = container.run(&session, &req).await.unwrap();
            assert_eq!(r.exit_code, Some(0));
        }
    });
    eprintln!(
        "peak RSS of this process: {} KiB before 100 container runs, {} KiB after",
        before,
        peak_rss_kib()
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
