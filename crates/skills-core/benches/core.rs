//! Benchmarks for the hot paths of `skills-core`: parsing and strict validation of
//! a realistic `SKILL.md`, rendering a catalog of 10 000 skills, and building and
//! querying a search index over 10 000 skills.
//!
//! Run: `cargo bench -p skills-core --bench core -- --warm-up-time 1 --measurement-time 3`.
//! Targets: `parse_strict` ≥ 50 MB/s; `render_catalog_10k` < 5 ms per render,
//! with tiers and a budget within 1.5× of the plain render;
//! `search_10k`: build < 200 ms, query < 1 ms (reported, not asserted).

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use skills_core::{
    Budget, Catalog, CatalogFormat, Origin, RenderOptions, SearchDocument, SearchIndex,
    SkillMetadata, Tier, ValidationOptions, VisibilityPolicy, define_skill, parse_skill_md,
};
use skills_testkit::Lcg;

const WORDS: &[&str] = &[
    "extracts",
    "tables",
    "from",
    "documents",
    "and",
    "summarizes",
    "the",
    "results",
    "for",
    "review",
    "use",
    "when",
    "user",
    "asks",
    "about",
    "reports",
    "spreadsheets",
    "charts",
    "invoices",
    "contracts",
    "with",
    "clear",
    "citations",
    "quickly",
];

/// Words until the text is `len` characters long (ASCII, so bytes = chars).
fn words(rng: &mut Lcg, len: usize) -> String {
    let mut out = skills_testkit::words(rng, WORDS, len);
    out.truncate(len);
    out.truncate(out.trim_end().len());
    out.push('.');
    out
}

/// A realistic `SKILL.md`: every spec field, a ~300-character description and a
/// Markdown body of at least `body_bytes` bytes with a `Tools:` section.
fn skill_md(body_bytes: usize) -> String {
    let mut rng = Lcg::new(7);
    let mut src = String::from("---\nname: report-analyst\ndescription: >-\n");
    let description = words(&mut rng, 300);
    for chunk in description
        .split_inclusive(". ")
        .collect::<String>()
        .as_bytes()
        .chunks(76)
    {
        src.push_str("  ");
        src.push_str(std::str::from_utf8(chunk).unwrap_or_default().trim());
        src.push('\n');
    }
    src.push_str(concat!(
        "license: Apache-2.0\n",
        "metadata:\n",
        "  author: analytics-team\n",
        "  version: \"1.4.2\"\n",
        "  homepage: https://example.com/skills/report-analyst\n",
        "allowed-tools: Read Grep Bash(python:*) WebFetch\n",
        "---\n",
        "# Report analyst\n\n",
        "Read the report end to end before answering.\n\n",
        "Tools:\n",
        "- read_pdf\n",
        "- extract_table   # tables come back as CSV\n",
        "- plot_chart\n\n",
    ));
    let mut section = 1;
    while src.len() < body_bytes {
        src.push_str(&format!("## Step {section}\n\n"));
        src.push_str(&words(&mut rng, 400));
        src.push_str("\n\n- ");
        src.push_str(&words(&mut rng, 60));
        src.push_str("\n- ");
        src.push_str(&words(&mut rng, 60));
        src.push_str("\n\n```python\nimport csv\nrows = list(csv.reader(open(\"table.csv\")))\nprint(len(rows))\n```\n\n");
        section += 1;
    }
    src
}

fn parse_strict(c: &mut Criterion) {
    let options = ValidationOptions::strict();
    let origin = Origin::new(
        Some("skills/report-analyst/SKILL.md"),
        Some("report-analyst"),
    );
    let mut group = c.benchmark_group("parse_strict");
    for (label, body) in [("body_4k", 4 * 1024), ("body_32k", 32 * 1024)] {
        let src = skill_md(body);
        let check = parse_skill_md(&src, origin, &options);
        assert!(check.diagnostics.is_empty(), "{:?}", check.diagnostics);
        assert_eq!(
            check.document.map(|d| d.metadata.declared_tools.len()),
            Some(3)
        );
        group.throughput(Throughput::Bytes(src.len() as u64));
        group.bench_function(label, |b| {
            b.iter(|| parse_skill_md(black_box(&src), origin, &options));
        });
        // Baseline in the same run: one pass over the same bytes that allocates
        // the copy a parser must make (memory bandwidth of this machine).
        group.bench_function(format!("baseline_copy_{label}"), |b| {
            b.iter(|| black_box(&src).lines().count() + black_box(&src).to_owned().len());
        });
    }
    group.finish();
}

/// 10 000 skills `skill-00001`…, descriptions of 80–200 characters, in a shuffled
/// (but deterministic) discovery order.
fn ten_thousand() -> Vec<SkillMetadata> {
    let mut rng = Lcg::new(42);
    let mut skills: Vec<SkillMetadata> = (1..=10_000)
        .map(|i| {
            let len = 80 + rng.below(121);
            define_skill(format!("skill-{i:05}"), words(&mut rng, len))
                .build()
                .expect("valid")
                .skill()
                .metadata
                .clone()
        })
        .collect();
    for i in (1..skills.len()).rev() {
        let j = rng.below(i + 1);
        skills.swap(i, j);
    }
    skills
}

/// A policy touching every tenth skill: some off, manual, name-only, pinned
/// or with a priority, the rest as they are.
fn tiers(skills: &[SkillMetadata]) -> VisibilityPolicy {
    let mut policy = VisibilityPolicy::new();
    for (i, skill) in skills.iter().enumerate().filter(|(i, _)| i % 10 == 0) {
        let name = skill.name.as_str();
        match (i / 10) % 6 {
            0 => policy.set_tier(name, Tier::Off),
            1 => policy.set_tier(name, Tier::Manual),
            2 => policy.set_tier(name, Tier::NameOnly),
            3 if i % 1_000 == 30 => policy.set_tier(name, Tier::Pinned),
            _ => policy.set_priority(name, (i % 7) as i32 - 3),
        }
    }
    policy
}

fn render_catalog_10k(c: &mut Criterion) {
    let skills = ten_thousand();
    let catalog = Catalog::new(skills.clone());
    assert_eq!(catalog.len(), 10_000);
    let cases = [
        ("xml", RenderOptions::default()),
        (
            "markdown",
            RenderOptions::default().with_format(CatalogFormat::Markdown),
        ),
        (
            "json",
            RenderOptions::default().with_format(CatalogFormat::Json),
        ),
        (
            "xml_budget_8000_chars",
            RenderOptions::default().with_budget(Budget::chars(8_000)),
        ),
        (
            "xml_tiers_budget_8000_chars",
            RenderOptions::default()
                .with_budget(Budget::chars(8_000))
                .with_visibility(tiers(&skills)),
        ),
        (
            "xml_tiers_budget_400000_chars",
            RenderOptions::default()
                .with_budget(Budget::chars(400_000))
                .with_visibility(tiers(&skills)),
        ),
    ];
    let mut group = c.benchmark_group("render_catalog_10k");
    // Baseline in the same run: concatenating every name and description into
    // one string, with no framing or escaping.
    group.bench_function("baseline_concat", |b| {
        b.iter(|| {
            let mut out = String::new();
            for m in black_box(&catalog).entries() {
                out.push_str(m.name.as_str());
                out.push_str(&m.description);
                out.push('\n');
            }
            out
        });
    });
    for (label, options) in &cases {
        group.bench_function(*label, |b| b.iter(|| black_box(&catalog).render(options)));
    }
    group.finish();

    let mut group = c.benchmark_group("catalog_new_10k");
    group.bench_function("shuffled", |b| {
        b.iter_batched(
            || skills.clone(),
            |input| Catalog::new(black_box(input)),
            BatchSize::LargeInput,
        );
    });
    group.finish();
}

criterion_group!(benches, parse_strict, render_catalog_10k, search_10k);

/// 10 000 search documents: the `ten_thousand` metadata plus a ~2 KB body each
/// (deterministic words, with a few distinctive terms sprinkled in).
fn search_documents() -> Vec<SearchDocument> {
    let mut rng = Lcg::new(1_234);
    ten_thousand()
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let mut body = words(&mut rng, 2_000);
            if i % 97 == 0 {
                body.push_str(" Handles zettelkasten backlinks.");
            }
            SearchDocument::from_metadata(m).with_body(body)
        })
        .collect()
}

fn search_10k(c: &mut Criterion) {
    let docs = search_documents();
    let index = SearchIndex::build(docs.clone());
    assert_eq!(index.len(), 10_000);
    let queries = [
        ("rare_term", "zettelkasten backlinks"),
        (
            "common_terms",
            "extract tables from invoices and summarize reports",
        ),
        ("name", "skill-04242"),
        ("no_match", "kubernetes helm chart rollout"),
    ];
    assert!(!index.search("zettelkasten", 10).is_empty());
    let mut group = c.benchmark_group("search_10k");
    group.sample_size(20);
    group.bench_function("build", |b| {
        b.iter_batched(
            || docs.clone(),
            |input| SearchIndex::build(black_box(input)),
            BatchSize::LargeInput,
        );
    });
    for (label, query) in queries {
        group.bench_function(format!("query_{label}"), |b| {
            b.iter(|| black_box(&index).search(black_box(query), 10));
        });
    }
    group.finish();
}

criterion_main!(benches);
