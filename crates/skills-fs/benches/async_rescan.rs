//! How long a rescan of 3 000 skills stalls a tokio runtime: the worst lateness
//! of a 1 ms ticker task while `FsProvider` rescans, with file work on the
//! blocking pool (the default) and inline on the runtime's thread (the behaviour
//! before async support, reproduced with `FsProvider::set_inline_io`, feature
//! `testing`).
//!
//! Run: `cargo bench -p skills-fs --bench async_rescan`.
//!
//! Not a criterion bench: the figure is a maximum over a run, not a mean per
//! iteration. For each runtime (current-thread, and multi-thread with 2
//! workers) and each mode, a ticker task awaits `tokio::time::interval(1 ms)`
//! and records how late each tick is; meanwhile the main task runs `ROUNDS`
//! times (a) `rescan().await` and (b) `list().await` after the cooldown with a
//! skill folder added, which makes the staleness check re-scan. Printed: the
//! worst tick lateness, the median of the per-round worsts, and the mean time
//! of one operation.
//!
//! The tree is generated once (the same generator and seed as
//! `benches/discovery.rs`), then the bench waits 2.1 s so that no stat is
//! "racy" (see `docs/staleness.md`).

use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use skills_core::SkillProvider;
use skills_fs::{FsEnv, FsOptions, FsProvider, ManualClock};
use tokio::runtime::{Builder, Runtime};
use tokio::time::MissedTickBehavior;

const SKILLS: usize = 3_000;
const ROUNDS: usize = 10;

fn generate(root: &Path) {
    skills_testkit::library::write_flat(root, 42, SKILLS).expect("write the library");
}

/// What one measured run found.
#[derive(Debug)]
struct Figures {
    worst: Duration,
    median_round_worst: Duration,
    mean_op: Duration,
}

fn runtime(workers: usize) -> Runtime {
    let mut builder = if workers == 0 {
        Builder::new_current_thread()
    } else {
        let mut b = Builder::new_multi_thread();
        b.worker_threads(workers);
        b
    };
    builder.enable_all().build().expect("runtime")
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Runs `ROUNDS` rescans and `ROUNDS` checked lists on `rt` while a ticker
/// measures lateness.
fn measure(rt: &Runtime, root: &Path, inline: bool) -> Figures {
    rt.block_on(async {
        let clock = Arc::new(ManualClock::new());
        let env = FsEnv::default().with_clock(clock.clone());
        let provider = FsProvider::open_with_env([root], FsOptions::default(), env).await;
        provider.set_inline_io(inline);
        assert_eq!(provider.list().await.expect("list").len(), SKILLS);

        let worst = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let ticker = {
            let worst = Arc::clone(&worst);
            let stop = Arc::clone(&stop);
            tokio::spawn(async move {
                let mut interval = tokio::time::interval(Duration::from_millis(1));
                interval.set_missed_tick_behavior(MissedTickBehavior::Burst);
                while !stop.load(Ordering::Relaxed) {
                    let due = interval.tick().await;
                    let late = tokio::time::Instant::now().saturating_duration_since(due);
                    worst.fetch_max(nanos(late), Ordering::Relaxed);
                }
            })
        };
        // Let the ticker settle.
        tokio::time::sleep(Duration::from_millis(50)).await;

        let mut round_worsts = Vec::new();
        let mut ops = Duration::ZERO;
        let mut count = 0_u32;
        let extra = root.join("zz-extra");
        for round in 0..ROUNDS {
            worst.store(0, Ordering::Relaxed);
            let started = Instant::now();
            let discovery = provider.rescan().await;
            assert_eq!(discovery.skills.len(), SKILLS);
            ops += started.elapsed();
            count += 1;
            tokio::time::sleep(Duration::from_millis(20)).await;

            // A change under the root, then the cooldown passes: `list` checks
            // and re-scans.
            if round % 2 == 0 {
                fs::create_dir_all(&extra).expect("mkdir");
            } else {
                fs::remove_dir_all(&extra).expect("rmdir");
            }
            clock.advance(FsOptions::default().cooldown);
            let started = Instant::now();
            provider.list().await.expect("list");
            ops += started.elapsed();
            count += 1;
            tokio::time::sleep(Duration::from_millis(20)).await;
            round_worsts.push(Duration::from_nanos(worst.load(Ordering::Relaxed)));
        }
        stop.store(true, Ordering::Relaxed);
        ticker.await.expect("ticker");
        if extra.exists() {
            fs::remove_dir_all(&extra).expect("rmdir");
        }
        round_worsts.sort();
        Figures {
            worst: round_worsts.last().copied().unwrap_or_default(),
            median_round_worst: round_worsts[round_worsts.len() / 2],
            mean_op: ops / count,
        }
    })
}

fn main() {
    let base = tempfile::tempdir().expect("temp dir");
    let root = base.path().join("skills");
    generate(&root);
    std::thread::sleep(Duration::from_millis(2_100));

    println!(
        "worst lateness of a 1 ms ticker during {ROUNDS} rescans + {ROUNDS} checked lists of {SKILLS} skills"
    );
    println!(
        "{:<24} {:<28} {:>12} {:>16} {:>12}",
        "runtime", "file work", "worst", "median round", "mean op"
    );
    for (label, workers) in [("current_thread", 0), ("multi_thread(2)", 2)] {
        let rt = runtime(workers);
        for (mode, inline) in [
            ("blocking pool (default)", false),
            ("inline (before)", true),
        ] {
            let f = measure(&rt, &root, inline);
            println!(
                "{label:<24} {mode:<28} {:>9.1} ms {:>13.1} ms {:>9.1} ms",
                f.worst.as_secs_f64() * 1e3,
                f.median_round_worst.as_secs_f64() * 1e3,
                f.mean_op.as_secs_f64() * 1e3,
            );
        }
    }
}
