//! Discovery and the staleness cache over 3 000 generated skill folders.
//!
//! Run: `cargo bench -p skills-fs --bench discovery -- --warm-up-time 1 --measurement-time 3`.
//! Targets: cold `FsProvider::new` + `list` ≤ 100 ms; warm `list` inside the
//! cooldown ≤ 10 µs; `get` of a cached skill ≤ 50 µs. The staleness check after
//! the cooldown (nothing changed) is reported next to a baseline of the same
//! number of bare `std::fs::metadata` calls. The cold scan and the check are
//! also measured without the search for nested skills
//! (`with_nested_skills(false)`), the cost of that search in the same run.
//!
//! The tree is generated once (1–8 KB bodies, `references/guide.md` and
//! `scripts/run.sh` per skill), then the bench waits 2.1 s so that no stat is
//! "racy" (see `docs/staleness.md`), as for a tree written a while ago.
//!
//! Group `discovery_floor_3000` (issue 25): 3 000 marketplace-shaped skills
//! (`skills_testkit::marketplace`, real-sized `SKILL.md` files with display
//! titles, extension fields and 1–5 KB Markdown bodies), the cold `list` that
//! `skills list` runs and the `list` + `Catalog::render` that `skills catalog`
//! runs, against the I/O floor measured in the same run: a single-threaded
//! walk of the root that reads every `SKILL.md` whole (`std::fs::read_dir`
//! recursion + `std::fs::read`, what `find -name SKILL.md -exec cat {} +`
//! does). Target: within 1.1× of that floor. The provider and catalog are
//! dropped outside the timed part (`cold_list_and_teardown` times the drop
//! too).

use std::fs;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use skills_core::{RenderOptions, SkillProvider};
use skills_fs::{FsEnv, FsOptions, FsProvider, ManualClock};

const SKILLS: usize = 3_000;

fn generate(root: &Path) {
    skills_testkit::library::write_flat(root, 42, SKILLS).expect("write the library");
}

fn provider(root: &Path, options: FsOptions) -> FsProvider {
    let env = FsEnv::default().with_clock(Arc::new(ManualClock::new()));
    FsProvider::with_env([root.to_path_buf()], options, env)
}

fn bench(c: &mut Criterion) {
    let base = tempfile::tempdir().expect("temp dir");
    let root = base.path().join("skills");
    generate(&root);
    std::thread::sleep(Duration::from_millis(2_100));
    let skill_dirs: Vec<PathBuf> = (0..SKILLS)
        .map(|i| root.join(format!("skill-{i:04}")))
        .collect();

    let mut group = c.benchmark_group("discovery_3000");

    group.bench_function("baseline_read_dir_root", |b| {
        b.iter(|| {
            let names: Vec<_> = fs::read_dir(black_box(&root))
                .expect("read_dir")
                .filter_map(Result::ok)
                .map(|e| e.file_name())
                .collect();
            black_box(names)
        });
    });

    group.sample_size(10);
    group.bench_function("cold_new_and_list", |b| {
        b.iter(|| {
            let provider = FsProvider::new([root.clone()], FsOptions::default());
            let catalog = pollster::block_on(provider.list()).expect("list");
            assert_eq!(catalog.len(), SKILLS);
            black_box(catalog)
        });
    });
    group.bench_function("cold_new_and_list_without_nested", |b| {
        let options = FsOptions::default().with_nested_skills(false);
        b.iter(|| {
            let provider = FsProvider::new([root.clone()], options.clone());
            let catalog = pollster::block_on(provider.list()).expect("list");
            assert_eq!(catalog.len(), SKILLS);
            black_box(catalog)
        });
    });
    group.sample_size(100);

    let warm = provider(&root, FsOptions::default());
    group.bench_function("warm_list_in_cooldown", |b| {
        b.iter(|| black_box(pollster::block_on(warm.list()).expect("list")));
    });

    group.bench_function("baseline_stat_each_skill_dir", |b| {
        b.iter(|| {
            let root_meta = fs::metadata(&root).expect("stat");
            let dirs = skill_dirs
                .iter()
                .filter(|d| fs::metadata(d).is_ok_and(|m| m.is_dir()))
                .count();
            black_box((root_meta, dirs))
        });
    });

    // A zero cooldown makes every `list` run the check.
    let checking = provider(&root, FsOptions::default().with_cooldown(Duration::ZERO));
    group.bench_function("staleness_check_unchanged", |b| {
        b.iter(|| black_box(pollster::block_on(checking.list()).expect("list")));
    });
    let flat = provider(
        &root,
        FsOptions::default()
            .with_cooldown(Duration::ZERO)
            .with_nested_skills(false),
    );
    group.bench_function("staleness_check_unchanged_without_nested", |b| {
        b.iter(|| black_box(pollster::block_on(flat.list()).expect("list")));
    });

    let name = "skill-1500";
    let first = pollster::block_on(warm.get(name)).expect("get");
    group.bench_function("baseline_read_skill_md", |b| {
        let md = root.join(name).join("SKILL.md");
        b.iter(|| black_box(fs::read(&md).expect("read")));
    });
    group.bench_function("get_cached", |b| {
        b.iter(|| {
            let skill = pollster::block_on(warm.get(black_box(name))).expect("get");
            debug_assert_eq!(skill, first);
            black_box(skill)
        });
    });
    group.bench_function("get_uncached_load_skill", |b| {
        let dir = root.join(name);
        let skill_fs = skills_fs::SkillFs::new(FsOptions::default());
        b.iter(|| black_box(skill_fs.load_skill(&dir).expect("load")));
    });
    group.finish();
}

/// Every `SKILL.md` below `dir`, read whole, single-threaded: the walk
/// `find DIR -name SKILL.md -exec cat {} +` makes (entries' kinds from the
/// listing, no links followed). Returns the bytes read and the files found.
fn read_every_skill_md(dir: &Path, total: &mut (usize, usize)) {
    for entry in fs::read_dir(dir).expect("read_dir") {
        let entry = entry.expect("entry");
        let kind = entry.file_type().expect("file type");
        if kind.is_dir() {
            read_every_skill_md(&entry.path(), total);
        } else if kind.is_file() && entry.file_name() == "SKILL.md" {
            let bytes = fs::read(entry.path()).expect("read");
            total.0 += bytes.len();
            total.1 += 1;
        }
    }
}

fn floor(c: &mut Criterion) {
    let base = tempfile::tempdir().expect("temp dir");
    let root = base.path().join("market");
    let stats = skills_testkit::marketplace::write(&root, 25, SKILLS).expect("write the library");
    assert_eq!(stats.skills, SKILLS);
    std::thread::sleep(Duration::from_millis(2_100));

    let mut group = c.benchmark_group("discovery_floor_3000");
    group.sample_size(20);
    group.bench_function("baseline_find_cat", |b| {
        b.iter(|| {
            let mut total = (0, 0);
            read_every_skill_md(black_box(&root), &mut total);
            assert_eq!(total.1, SKILLS);
            black_box(total)
        });
    });
    // Discovery ends with the catalog in hand: the provider and catalog are
    // dropped after the clock stops (`iter_with_large_drop`), as a program
    // keeps them while it runs. The same with the teardown timed follows.
    group.bench_function("cold_list", |b| {
        b.iter_with_large_drop(|| {
            let provider = FsProvider::new([root.clone()], FsOptions::default());
            let catalog = pollster::block_on(provider.list()).expect("list");
            assert_eq!(catalog.len(), SKILLS);
            (provider, catalog)
        });
    });
    group.bench_function("cold_catalog", |b| {
        let options = RenderOptions::default();
        b.iter_with_large_drop(|| {
            let provider = FsProvider::new([root.clone()], FsOptions::default());
            let catalog = pollster::block_on(provider.list()).expect("list");
            assert_eq!(catalog.len(), SKILLS);
            let rendered = catalog.render(&options);
            (provider, catalog, rendered)
        });
    });
    group.bench_function("cold_list_and_teardown", |b| {
        b.iter(|| {
            let provider = FsProvider::new([root.clone()], FsOptions::default());
            let catalog = pollster::block_on(provider.list()).expect("list");
            assert_eq!(catalog.len(), SKILLS);
            black_box(catalog)
        });
    });
    group.finish();
}

criterion_group!(benches, bench, floor);
criterion_main!(benches);
