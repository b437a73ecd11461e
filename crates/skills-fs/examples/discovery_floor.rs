//! Cold discovery against the I/O floor, interleaved (issue 25).
//!
//! ```sh
//! cargo run --profile bench -p skills-fs --example discovery_floor -- DIR [ROUNDS]
//! ```
//!
//! Writes 3 000 marketplace-shaped skills into `DIR` when it does not exist
//! yet, then runs `ROUNDS` rounds (default 30) of, in turn: the floor (a
//! single-threaded `std::fs::read_dir` walk reading every `SKILL.md` whole,
//! what `find DIR -name SKILL.md -exec cat {} +` does), a cold
//! `FsProvider::new` + `list` (`skills list`) and the same plus
//! `Catalog::render` (`skills catalog`). Prints each case's median wall time
//! and, on Linux, its CPU time per round (user + system, all threads, from
//! `/proc/self/stat`), each with its ratio to the floor, and the median
//! time to drop what the case kept (provider, catalog), which is not in the
//! case's wall or CPU time: discovery ends with the catalog in hand.
//! Interleaving the
//! cases makes the ratios hold on a busy machine, where the criterion group
//! `discovery_floor_3000` (one case after the other) drifts with the load.

use std::error::Error;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use skills_core::{Catalog, RenderOptions, SkillProvider};
use skills_fs::{FsOptions, FsProvider};

const SKILLS: usize = 3_000;

/// What one round measures.
#[derive(Clone, Copy)]
enum Case {
    Floor,
    List,
    Catalog,
}

impl Case {
    const ALL: [Case; 3] = [Case::Floor, Case::List, Case::Catalog];

    fn name(self) -> &'static str {
        match self {
            Case::Floor => "floor (find+cat)",
            Case::List => "cold list",
            Case::Catalog => "cold catalog",
        }
    }
}

/// Every `SKILL.md` below `dir`, read whole; returns the bytes read.
fn read_every_skill_md(dir: &Path) -> std::io::Result<usize> {
    let mut total = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            total += read_every_skill_md(&entry.path())?;
        } else if kind.is_file() && entry.file_name() == "SKILL.md" {
            total += std::fs::read(entry.path())?.len();
        }
    }
    Ok(total)
}

/// What a case keeps when it is done: dropped after the clock stops, and
/// timed on its own (the teardown).
type Kept = Option<(FsProvider, Catalog, Option<String>)>;

fn run(case: Case, root: &Path) -> Result<Kept, Box<dyn Error>> {
    match case {
        Case::Floor => {
            black_box(read_every_skill_md(root)?);
            Ok(None)
        }
        Case::List | Case::Catalog => {
            let provider = FsProvider::new([root.to_path_buf()], FsOptions::default());
            let catalog = pollster::block_on(provider.list())?;
            if catalog.len() != SKILLS {
                return Err(format!("listed {} skills, not {SKILLS}", catalog.len()).into());
            }
            let rendered =
                matches!(case, Case::Catalog).then(|| catalog.render(&RenderOptions::default()));
            Ok(Some((provider, catalog, rendered)))
        }
    }
}

/// User + system CPU time of this process so far, in clock ticks (Linux).
fn cpu_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after_name = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = after_name.split(' ').collect();
    // Fields 14 and 15 of the file (utime, stime); the slice starts at 3.
    let user: u64 = fields.get(11)?.parse().ok()?;
    let system: u64 = fields.get(12)?.parse().ok()?;
    Some(user + system)
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let root = PathBuf::from(args.next().ok_or("usage: discovery_floor DIR [ROUNDS]")?);
    let rounds: usize = match args.next() {
        Some(n) => n.parse()?,
        None => 30,
    };
    if !root.exists() {
        skills_testkit::marketplace::write(&root, 25, SKILLS)?;
        // Past the staleness cache's racy window, as for a library written
        // a while ago.
        std::thread::sleep(std::time::Duration::from_millis(2_100));
    }
    let mut wall: [Vec<f64>; 3] = Default::default();
    let mut teardown: [Vec<f64>; 3] = Default::default();
    let mut ticks = [Some(0u64); 3];
    for _ in 0..rounds.max(1) {
        for (i, case) in Case::ALL.into_iter().enumerate() {
            let before = cpu_ticks();
            let start = Instant::now();
            let kept = black_box(run(case, &root)?);
            wall[i].push(start.elapsed().as_secs_f64() * 1e3);
            ticks[i] = match (ticks[i], before, cpu_ticks()) {
                (Some(sum), Some(before), Some(after)) => Some(sum + after.saturating_sub(before)),
                _ => None,
            };
            let start = Instant::now();
            drop(kept);
            teardown[i].push(start.elapsed().as_secs_f64() * 1e3);
        }
    }
    let rounds = rounds.max(1) as f64;
    // `/proc` counts in USER_HZ ticks: 100 per second on Linux.
    let cpu_ms = ticks.map(|t| t.map(|t| t as f64 * 10.0 / rounds));
    let median = |times: &mut Vec<f64>| {
        times.sort_by(f64::total_cmp);
        times[times.len() / 2]
    };
    let medians: Vec<f64> = wall.iter_mut().map(median).collect();
    let teardowns: Vec<f64> = teardown.iter_mut().map(median).collect();
    for (i, case) in Case::ALL.into_iter().enumerate() {
        let cpu = match (cpu_ms[i], cpu_ms[0]) {
            (Some(cpu), Some(floor)) if floor > 0.0 => {
                format!("  cpu {cpu:6.1} ms/round ({:.2}×)", cpu / floor)
            }
            _ => String::new(),
        };
        println!(
            "{:17} median wall {:7.1} ms ({:.2}×){cpu}  teardown {:5.1} ms",
            case.name(),
            medians[i],
            medians[i] / medians[0],
            teardowns[i],
        );
    }
    Ok(())
}
