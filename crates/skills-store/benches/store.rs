//! Benchmarks for the session stores: append latency and resume time.
//!
//! Run: `cargo bench -p skills-store --bench store -- --warm-up-time 1 --measurement-time 3`
//! with `SKILLS_TEST_POSTGRES_URL` set for the PostgreSQL figures (without
//! it they are skipped, with a note).
//!
//! - Append latency: before the criterion groups, each store gets
//!   [`LATENCY_APPENDS`] appends of one ~1 KB message to one session, each
//!   timed on its own; the median and p99 are printed, with the in-memory
//!   store as the baseline of the same run. The `append` group measures the
//!   same append with criterion.
//! - Resume: `Agent::resume_stored` of a session of 1 000 messages (events
//!   read, parsed, state replayed), against resuming from the in-memory
//!   store (no I/O, no JSON) as the baseline.

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use skills_agent::{
    Agent, MemoryStore, Message, NewSession, SessionEvent, SessionStore, SessionWriter,
};
use skills_core::{InCodeProvider, define_skill};
use skills_store::{PostgresStore, SqliteStore};
use tempfile::TempDir;

/// Appends timed one by one for the latency figures.
const LATENCY_APPENDS: usize = 2_000;
/// Messages in the resumed session.
const RESUME_MESSAGES: usize = 1_000;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// A fresh id for every session a run creates (PostgreSQL keeps them).
fn fresh_id(prefix: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{prefix}-{}-{nanos}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

fn message(n: usize) -> SessionEvent {
    SessionEvent::Message {
        message: Message::user(format!("message {n}: {}", "lorem ipsum dolor ".repeat(56))),
    }
}

/// The stores under test, each with its name; the first is the baseline.
struct Stores {
    stores: Vec<(&'static str, Arc<dyn SessionStore>)>,
    _dir: TempDir,
}

fn stores(rt: &tokio::runtime::Runtime) -> Stores {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("bench.db");
    let mut stores: Vec<(&'static str, Arc<dyn SessionStore>)> = vec![
        ("memory", Arc::new(MemoryStore::new())),
        (
            "sqlite",
            Arc::new(rt.block_on(SqliteStore::open(&path)).expect("SQLite opens")),
        ),
    ];
    match std::env::var("SKILLS_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => stores.push((
            "postgres",
            Arc::new(
                rt.block_on(PostgresStore::connect_in_schema(&url, "bench"))
                    .expect("PostgreSQL connects"),
            ),
        )),
        _ => eprintln!(
            "note: SKILLS_TEST_POSTGRES_URL is not set: no PostgreSQL figures \
             (`bash .ci/postgres start` prints a URL)"
        ),
    }
    Stores { stores, _dir: dir }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// Times appends one by one and prints the median and p99 per store.
fn latency_report(rt: &tokio::runtime::Runtime, stores: &Stores) {
    let mut baseline = None;
    println!("append latency, {LATENCY_APPENDS} appends of one ~1 KB message each:");
    for (name, store) in &stores.stores {
        let mut times = rt.block_on(async {
            let id = fresh_id("latency");
            store
                .create(&NewSession::new(&id, "bench"))
                .await
                .expect("created");
            let mut times = Vec::with_capacity(LATENCY_APPENDS);
            for n in 0..LATENCY_APPENDS {
                let event = [message(n)];
                let start = Instant::now();
                store.append(&id, n as u64, &event).await.expect("appended");
                times.push(start.elapsed());
            }
            times
        });
        times.sort();
        let (median, p99) = (percentile(&times, 0.5), percentile(&times, 0.99));
        let base = *baseline.get_or_insert(median);
        println!(
            "  {name:<8} median {median:>10.1?}  p99 {p99:>10.1?}  ({:.0}x the memory median)",
            median.as_secs_f64() / base.as_secs_f64()
        );
    }
}

fn append(c: &mut Criterion) {
    let rt = runtime();
    let stores = stores(&rt);
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs each
    // benchmark once as a smoke test, without the latency loop.
    if std::env::args().any(|a| a == "--bench") {
        latency_report(&rt, &stores);
    }
    let mut group = c.benchmark_group("append");
    for (name, store) in &stores.stores {
        let id = fresh_id("append");
        rt.block_on(store.create(&NewSession::new(&id, "bench")))
            .expect("created");
        let mut next = 0u64;
        group.bench_function(*name, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        let event = [message(next as usize)];
                        next = store.append(&id, next, &event).await.expect("appended");
                    }
                    start.elapsed()
                })
            })
        });
    }
    group.finish();
}

fn agent() -> Agent {
    let skills = (0..20).map(|n| {
        define_skill(
            format!("skill-{n:02}"),
            format!("Does task {n}. Use when asked about {n}."),
        )
        .body("Steps.")
        .build()
        .expect("a skill")
    });
    let provider = Arc::new(InCodeProvider::new(skills).expect("a provider"));
    Agent::builder("bench", provider).build().expect("an agent")
}

fn resume(c: &mut Criterion) {
    let rt = runtime();
    let stores = stores(&rt);
    let agent = agent();
    let mut group = c.benchmark_group("resume_1000_messages");
    for (name, store) in &stores.stores {
        let id = fresh_id("resume");
        rt.block_on(async {
            let mut session = agent.start_session().await.expect("a session");
            session.set_id(id.parse().expect("a valid id"));
            for n in 0..RESUME_MESSAGES / 2 {
                session
                    .push_user(format!("question {n}: {}", "words ".repeat(40)))
                    .await
                    .expect("pushed");
                session.push_assistant(Message::assistant(format!(
                    "answer {n}: {}",
                    "more words ".repeat(40)
                )));
            }
            SessionWriter::create(Arc::clone(store), &session, None)
                .await
                .expect("stored");
        });
        group.bench_function(*name, |b| {
            b.iter(|| {
                let resumed = rt
                    .block_on(agent.resume_stored(Arc::clone(store), &id))
                    .expect("resumed");
                assert_eq!(resumed.0.transcript().len(), RESUME_MESSAGES);
                black_box(resumed)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, append, resume);
criterion_main!(benches);
