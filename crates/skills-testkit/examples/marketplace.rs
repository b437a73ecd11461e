//! Writes a generated skill library shaped like a public marketplace (display
//! titles as `name`, slug folders, a fifth of them longer than 64 characters,
//! a few folders that are not names, about 4 % empty or missing descriptions,
//! some bodies without a paragraph, extension fields) to a folder, for trying
//! the `skills` command on realistic input. Every folder should load in
//! lenient mode (`skills list DIR` prints COUNT lines).
//!
//! Run: `cargo run -p skills-testkit --example marketplace -- DIR [COUNT] [SEED]`
//! (defaults: 2 900 skills, seed 2026).

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next().map(PathBuf::from) else {
        eprintln!("usage: marketplace DIR [COUNT] [SEED]");
        return ExitCode::from(2);
    };
    let count = args.next().and_then(|a| a.parse().ok()).unwrap_or(2_900);
    let seed = args.next().and_then(|a| a.parse().ok()).unwrap_or(2_026);
    match skills_testkit::marketplace::write(&dir, seed, count) {
        Ok(stats) => {
            println!("{stats:?}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("cannot write {}: {err}", dir.display());
            ExitCode::FAILURE
        }
    }
}
