//! What the trigger eval harness costs on top of the model.
//!
//! - `trigger_overhead/model_only_1000`: the baseline, the model's own cost:
//!   1 000 calls of the instant model with a request built once per call
//!   from a fresh session, at concurrency 8, as the harness makes them.
//! - `trigger_overhead/eval_1000_queries_c8`: the whole trigger eval of
//!   1 000 queries, one run each, at concurrency 8, with the same model.
//!
//! The harness's cost per query is (eval − model only) / 1 000.
//!
//! Before the groups run, the bench prints the peak resident memory of an
//! eval
//! of 100 queries at 10 and at 100 runs each (1 000 and 10 000 runs), and
//! of 10 000 distinct queries at one run: per-run state is dropped as runs
//! finish, so the first two peaks match.

use std::sync::Arc;

use async_trait::async_trait;
use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::StreamExt as _;
use serde_json::json;
use skills_agent::{Agent, Model, ModelError, ModelRequest, ModelResponse, Role, ToolCall, Usage};
use skills_core::{InCodeProvider, define_skill};
use skills_eval::{QuerySet, Split, TriggerEval, TriggerQuery};

/// A field of `/proc/self/status`, in KiB.
fn status_kib(field: &str) -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status.lines().find_map(|line| {
                line.strip_prefix(field)?
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse()
                    .ok()
            })
        })
        .unwrap_or(0)
}

/// Answers at once: loads the skill the query names after `load:`.
#[derive(Debug)]
struct Instant;

#[async_trait]
impl Model for Instant {
    fn name(&self) -> &str {
        "instant"
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let text = request
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::User)
            .map_or("", |m| m.content.as_str());
        let usage = Usage::new(1200, 20, 1000, 0);
        Ok(match text.split("load:").nth(1) {
            Some(name) => ModelResponse::tool_calls(
                "",
                vec![ToolCall::new(
                    "c1",
                    "load_skill",
                    json!({ "name": name.trim() }),
                )],
            )
            .with_usage(usage),
            None => ModelResponse::text("No skill.").with_usage(usage),
        })
    }
}

fn agent() -> Agent {
    let skills = (0..50).map(|i| {
        define_skill(
            format!("skill-{i:02}"),
            format!("Does task number {i} of the catalog. Use when the user asks for task {i}."),
        )
        .body(format!("# Skill {i}\n\nStep one. Step two. Step three.\n"))
        .build()
        .expect("skill")
    });
    Agent::builder(
        "bench",
        Arc::new(InCodeProvider::new(skills).expect("provider")),
    )
    .build()
    .expect("agent")
}

fn queries(n: usize) -> QuerySet {
    QuerySet::new(
        (0..n)
            .map(|i| {
                let skill = format!("skill-{:02}", i % 50);
                let query = if i % 5 == 0 {
                    format!("query {i}: nothing to do")
                } else {
                    format!("query {i}: load:{skill}")
                };
                TriggerQuery {
                    query,
                    skill: Some(skill),
                    should_trigger: i % 5 != 0,
                    split: Split::Train,
                }
            })
            .collect(),
    )
    .expect("set")
}

/// The peak resident memory of an eval above the resident memory before
/// it, in KiB (writing 5 to `clear_refs` resets the peak; Linux 4.0+).
fn peak_of(runtime: &tokio::runtime::Runtime, set: &QuerySet, runs: u32) -> usize {
    let eval = TriggerEval::new(agent(), Arc::new(Instant))
        .runs(runs)
        .concurrency(8);
    let before = status_kib("VmRSS:");
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let report = runtime.block_on(eval.run(set)).expect("eval");
    std::hint::black_box(&report);
    status_kib("VmHWM:").saturating_sub(before)
}

fn memory(runtime: &tokio::runtime::Runtime) {
    let small = queries(100);
    let k1 = peak_of(runtime, &small, 10);
    let k10 = peak_of(runtime, &small, 100);
    let distinct = queries(10_000);
    let d10 = peak_of(runtime, &distinct, 1);
    eprintln!(
        "peak resident memory above the start: 100 queries x 10 runs: {k1} KiB; \
         100 queries x 100 runs: {k10} KiB; 10 000 queries x 1 run: {d10} KiB"
    );
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    memory(&runtime);
    let set = queries(1000);
    let agent = agent();
    let model: Arc<dyn Model> = Arc::new(Instant);
    let mut group = c.benchmark_group("trigger_overhead");
    group.sample_size(20);
    group.bench_function("model_only_1000", |b| {
        b.to_async(&runtime).iter(|| {
            let agent = agent.clone();
            let model = Arc::clone(&model);
            let set = &set;
            async move {
                let session = agent.start_session().await.expect("session");
                let request = session.build_request_for(model.as_ref());
                futures_util::stream::iter(set.queries())
                    .map(|_| {
                        let model = Arc::clone(&model);
                        let request = &request;
                        async move { model.complete(request).await.expect("answer") }
                    })
                    .buffer_unordered(8)
                    .count()
                    .await
            }
        });
    });
    group.bench_function("eval_1000_queries_c8", |b| {
        let eval = TriggerEval::new(agent.clone(), Arc::clone(&model))
            .runs(1)
            .concurrency(8);
        b.to_async(&runtime)
            .iter(|| async { eval.run(&set).await.expect("eval") });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
