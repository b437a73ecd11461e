//! Whole-process benchmark: `skills validate` over 3 000 generated skill folders.
//!
//! The baseline is `skills --version` (process start-up alone), measured in the
//! same run, so the figure can be read as "start-up + N × start-up".

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use criterion::{Criterion, criterion_group, criterion_main};

const SKILLS: usize = 3_000;

/// Writes `count` realistic skills: 1–8 KB bodies, a few resources each.
fn generate(root: &Path, count: usize) {
    for i in 0..count {
        let name = format!("skill-{i:05}");
        let dir = root.join(&name);
        std::fs::create_dir_all(dir.join("references")).expect("mkdir");
        std::fs::create_dir_all(dir.join("scripts")).expect("mkdir");
        let mut body = String::new();
        let target = 1024 + (i * 7919) % (7 * 1024);
        let mut n = 0;
        while body.len() < target {
            n += 1;
            let _ = writeln!(
                body,
                "## Step {n}\n\nRead the input carefully, check the constraints, and write the result to `out/`. Use `scripts/run.sh` when the data is large.\n"
            );
        }
        let md = format!(
            "---\nname: {name}\ndescription: Handles task number {i} of the benchmark corpus. Use when the user asks about item {i} or anything similar to it.\nlicense: MIT\nmetadata:\n  author: bench\n  version: \"1.0\"\n---\n# {name}\n\n{body}"
        );
        std::fs::write(dir.join("SKILL.md"), md).expect("write");
        std::fs::write(dir.join("references/guide.md"), "# Guide\n\nDetails.\n").expect("write");
        std::fs::write(dir.join("scripts/run.sh"), "#!/bin/sh\necho ok\n").expect("write");
    }
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().expect("tempdir");
    generate(tmp.path(), SKILLS);
    let bin = env!("CARGO_BIN_EXE_skills");
    let status = Command::new(bin)
        .arg("validate")
        .arg(tmp.path())
        .output()
        .expect("run skills");
    assert!(status.status.success(), "generated corpus must validate");

    let mut group = c.benchmark_group("cli");
    group.sample_size(20);
    group.bench_function("baseline_version", |b| {
        b.iter(|| Command::new(bin).arg("--version").output().expect("run"));
    });
    group.bench_function("validate_3000", |b| {
        b.iter(|| {
            Command::new(bin)
                .arg("validate")
                .arg(tmp.path())
                .output()
                .expect("run")
        });
    });
    group.bench_function("validate_strict_json_3000", |b| {
        b.iter(|| {
            Command::new(bin)
                .args(["validate", "--strict", "--json"])
                .arg(tmp.path())
                .output()
                .expect("run")
        });
    });
    group.bench_function("catalog_3000", |b| {
        b.iter(|| {
            Command::new(bin)
                .arg("catalog")
                .arg(tmp.path())
                .output()
                .expect("run")
        });
    });
    group.bench_function("report_3000", |b| {
        b.iter(|| {
            Command::new(bin)
                .arg("report")
                .arg(tmp.path())
                .output()
                .expect("run")
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
