//! Benchmarks for provider composition over 10 000 in-code skills: a filtered
//! view's `get` against the inner provider's `get`, and a layered provider's
//! `list` against one inner `list`. Both views cache the catalog they derive and
//! rebuild it only when an inner catalog changes, so the targets are ratios
//! within one run: filtered `get` within 2× of the inner `get`, layered `list`
//! within 2× of one inner `list`.
//!
//! Run: `cargo bench -p skills-core --bench providers -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use skills_core::{FilteredProvider, InCodeProvider, LayeredProvider, SkillProvider, define_skill};

fn provider(prefix: &str, count: usize) -> Arc<dyn SkillProvider> {
    let skills = (0..count).map(|i| {
        define_skill(
            format!("{prefix}-{i:05}"),
            format!("Skill number {i}. Use when the task needs step {i}."),
        )
        .body("Do the thing.")
        .build()
        .expect("valid skill")
    });
    Arc::new(InCodeProvider::new(skills).expect("provider"))
}

fn composition(c: &mut Criterion) {
    let inner = provider("skill", 10_000);
    let filtered = FilteredProvider::new(inner.clone(), |m| !m.name.as_str().ends_with('7'));
    let second = provider("extra", 100);
    let layered = LayeredProvider::new()
        .with_layer("project", inner.clone())
        .with_layer("user", second.clone());
    let name = "skill-04242";
    let mut group = c.benchmark_group("providers_10k");
    group.bench_function("inner_get", |b| {
        b.iter(|| pollster::block_on(inner.get(black_box(name))).expect("get"));
    });
    group.bench_function("filtered_get", |b| {
        b.iter(|| pollster::block_on(filtered.get(black_box(name))).expect("get"));
    });
    group.bench_function("inner_list", |b| {
        b.iter(|| pollster::block_on(inner.list()).expect("list"));
    });
    group.bench_function("inner_list_both_layers", |b| {
        b.iter(|| {
            (
                pollster::block_on(inner.list()).expect("list"),
                pollster::block_on(second.list()).expect("list"),
            )
        });
    });
    let single = LayeredProvider::new().with_layer("only", inner.clone());
    group.bench_function("layered_one_layer_list", |b| {
        b.iter(|| pollster::block_on(single.list()).expect("list"));
    });
    group.bench_function("layered_list", |b| {
        b.iter(|| pollster::block_on(layered.list()).expect("list"));
    });
    group.bench_function("layered_get", |b| {
        b.iter(|| pollster::block_on(layered.get(black_box(name))).expect("get"));
    });
    group.finish();
}

criterion_group!(benches, composition);
criterion_main!(benches);
