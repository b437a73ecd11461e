//! CPU per run, which wall time on a busy machine hides: blocks of `true`
//! runs, a direct `bash -c true`, then the local runtime with and without
//! limits, interleaved; CPU of this process and its children from
//! `/proc/self/stat`. The `run` bench measures wall time; this measures
//! what the runtime costs the machine.
//!
//! `cargo run --release -p skills-exec --example run_cpu -- [RUNS_PER_BLOCK] [ROUNDS]`
//! (300 and 8 by default). Prints, per kind, the median wall and CPU per
//! run and the wall ratio to the direct spawn's block of the same round.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;
use std::time::Instant;

use skills_exec::{CommandPolicy, LocalRuntime, RunLimits};
use skills_workspace::{RunRequest, SessionId, SkillSource, WorkspaceRuntime};

/// User and system CPU of this process and its waited-for children, in
/// seconds (fields 14 to 17 of `/proc/self/stat`, in clock ticks of
/// 1/100 s).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    let after_name = &stat[stat.rfind(')').expect("a stat line") + 2..];
    let fields: Vec<&str> = after_name.split(' ').collect();
    (11..15)
        .map(|i| fields[i].parse::<f64>().expect("a tick count"))
        .sum::<f64>()
        / 100.0
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: usize = args
        .next()
        .map_or(300, |a| a.parse().expect("runs per block"));
    let rounds: usize = args.next().map_or(8, |a| a.parse().expect("rounds"));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("small");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("SKILL.md"),
        "---\nname: small\ndescription: Bench. Use when benchmarking.\n---\nBody.\n",
    )
    .unwrap();
    let skill = SkillSource::folder("small", folder.display().to_string());
    let session: SessionId = "b".parse().unwrap();
    let runtime = |name: &str, limits: RunLimits| {
        let r = LocalRuntime::builder(dir.path().join(name))
            .policy(CommandPolicy::unrestricted())
            .limits(limits)
            .build()
            .unwrap();
        rt.block_on(r.stage_skill(&session, &skill)).unwrap();
        r
    };
    let limited = runtime("limited", RunLimits::new());
    let unlimited = runtime("unlimited", RunLimits::unlimited());
    let request = RunRequest::new("small", "true");
    let kinds = [
        "direct bash -c true",
        "local runtime",
        "local runtime, no limits",
    ];
    // (wall ms, CPU ms) per run, per kind, per round.
    let mut blocks: Vec<Vec<(f64, f64)>> = vec![Vec::new(); kinds.len()];
    for _ in 0..rounds {
        for (kind, out) in blocks.iter_mut().enumerate() {
            let (wall, cpu) = (Instant::now(), cpu_seconds());
            rt.block_on(async {
                for _ in 0..runs {
                    match kind {
                        0 => {
                            let out = tokio::process::Command::new("/bin/bash")
                                .args(["-c", "true"])
                                .env_clear()
                                .env("PATH", "/usr/local/bin:/usr/bin:/bin")
                                .stdin(Stdio::null())
                                .stdout(Stdio::piped())
                                .stderr(Stdio::piped())
                                .output()
                                .await
                                .unwrap();
                            assert!(out.status.success());
                        }
                        1 => {
                            let r = limited.run(&session, &request).await.unwrap();
                            assert_eq!(r.exit_code, Some(0), "{r:?}");
                        }
                        _ => {
                            let r = unlimited.run(&session, &request).await.unwrap();
                            assert_eq!(r.exit_code, Some(0), "{r:?}");
                        }
                    }
                }
            });
            #[allow(clippy::cast_precision_loss)]
            let n = runs as f64;
            out.push((
                wall.elapsed().as_secs_f64() * 1e3 / n,
                (cpu_seconds() - cpu) * 1e3 / n,
            ));
        }
    }
    println!("{runs} runs per block, {rounds} rounds (medians per run)");
    for (kind, name) in kinds.iter().enumerate() {
        let wall = median(blocks[kind].iter().map(|b| b.0).collect());
        let cpu = median(blocks[kind].iter().map(|b| b.1).collect());
        let ratio = median(
            blocks[kind]
                .iter()
                .zip(&blocks[0])
                .map(|(b, direct)| b.0 / direct.0)
                .collect(),
        );
        println!("{name:26} wall {wall:.3} ms ({ratio:.2}x)  CPU {cpu:.3} ms");
    }
}
