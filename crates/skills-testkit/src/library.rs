//! A flat library of realistic generated skills on disk, the one the
//! file-system benchmarks measure: `skill-0000/` … with a `SKILL.md` (80–200
//! character description, 1–8 KB body), `references/guide.md` (1 KB) and
//! `scripts/run.sh` each.

use std::fs;
use std::io;
use std::path::Path;

use crate::Lcg;

const WORDS: &[&str] = &[
    "extracts",
    "tables",
    "from",
    "documents",
    "and",
    "summarizes",
    "results",
    "for",
    "review",
    "when",
    "the",
    "user",
    "asks",
    "about",
    "reports",
];

/// Words (with a line break now and then) until the text is at least `len`
/// bytes long.
fn text(rng: &mut Lcg, len: usize) -> String {
    let mut out = String::with_capacity(len + 16);
    while out.len() < len {
        out.push_str(WORDS[rng.below(WORDS.len())]);
        out.push(if rng.below(12) == 0 { '\n' } else { ' ' });
    }
    out
}

/// Writes `count` skills `skill-0000` … under `root` (created if missing), the
/// same bytes for the same `seed`.
///
/// # Errors
/// The first I/O error.
pub fn write_flat(root: &Path, seed: u64, count: usize) -> io::Result<()> {
    let mut rng = Lcg::new(seed);
    for i in 0..count {
        let name = format!("skill-{i:04}");
        let dir = root.join(&name);
        fs::create_dir_all(dir.join("references"))?;
        fs::create_dir_all(dir.join("scripts"))?;
        let description_len = 80 + rng.below(120);
        let description = text(&mut rng, description_len).replace('\n', " ");
        let body_len = 1024 + rng.below(7 * 1024);
        let body = text(&mut rng, body_len);
        fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: {}. Use it for tests.\nlicense: MIT\n---\n# {name}\n\n{body}\n",
                description.trim()
            ),
        )?;
        fs::write(dir.join("references/guide.md"), text(&mut rng, 1024))?;
        fs::write(dir.join("scripts/run.sh"), "#!/bin/sh\necho run\n")?;
    }
    Ok(())
}
